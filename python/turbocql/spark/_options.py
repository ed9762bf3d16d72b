"""The options of the ``turbocql`` Spark data source, checked: each known option parsed
into :class:`Options` (picklable, sent to the executors), an unknown option or a bad value
refused with a ``ValueError`` naming it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from turbocql.bulk._workers import Connection
from turbocql.bulk._workers import connection as _connection

_COMMON = {
    "keyspace",
    "table",
    "contact_points",
    "port",
    "local_dc",
    "consistency",
    "ssl_ca",
    "ssl_cert",
    "ssl_key",
    "ssl_check_hostname",
    "username",
    "password",
}
_READ = {"split", "ranges_per_split", "page_size", "allow_filtering", "pushdown"}
_WRITE = {"confirm_truncate", "concurrency"}
# Set by Spark itself for some writes (a streaming query's checkpoint), not by the user.
_SPARK_OWN = {"path", "checkpointlocation"}


@dataclass(frozen=True)
class Options:
    keyspace: str
    table: str
    connection: Connection
    consistency: int | None = None
    split: int = 16
    ranges_per_split: int = 4
    page_size: int = 5000
    allow_filtering: bool = False
    pushdown: bool = True
    confirm_truncate: bool = False
    concurrency: int = 256


def _bool(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise ValueError("turbocql option %s must be true or false, got %r" % (name, text))


def _int(name: str, text: str, low: int = 1) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError("turbocql option %s must be an integer, got %r" % (name, text)) from None
    if value < low:
        raise ValueError("turbocql option %s must be at least %d, got %r" % (name, low, text))
    return value


def parse(options: Mapping[str, str], mode: str) -> Options:
    """``options`` (Spark's, keys in any case) for a ``mode`` ("read" or "write")."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    known = _COMMON | (_READ if mode == "read" else _WRITE)
    unknown = sorted(k for k in opts if k not in known and k not in _SPARK_OWN)
    if unknown:
        other = _WRITE if mode == "read" else _READ
        hint = [k for k in unknown if k in other]
        raise ValueError(
            "unknown turbocql option%s %s%s (known for a %s: %s)"
            % (
                "s" if len(unknown) > 1 else "",
                ", ".join(unknown),
                " (%s only for a %s)" % (", ".join(hint), "write" if mode == "read" else "read") if hint else "",
                mode,
                ", ".join(sorted(known)),
            )
        )
    for name in ("keyspace", "table"):
        if not opts.get(name, "").strip():
            raise ValueError("turbocql option %s is required" % name)
    points = tuple(p.strip() for p in opts.get("contact_points", "127.0.0.1").split(",") if p.strip())
    if not points:
        raise ValueError("turbocql option contact_points is empty")
    consistency = None
    if "consistency" in opts:
        from turbocql import ConsistencyLevel

        level = opts["consistency"].strip().upper()
        if level not in ConsistencyLevel.name_to_value:
            raise ValueError(
                "turbocql option consistency must be a consistency level (%s), got %r"
                % (", ".join(ConsistencyLevel.name_to_value), opts["consistency"])
            )
        consistency = ConsistencyLevel.name_to_value[level]
    ssl: dict[str, object] = {}
    if "ssl_ca" in opts:
        import ssl as _ssl

        ssl["ca_certs"] = opts["ssl_ca"]
        ssl["cert_reqs"] = _ssl.CERT_REQUIRED
    if ("ssl_cert" in opts) != ("ssl_key" in opts):
        raise ValueError("turbocql options ssl_cert and ssl_key go together (a client certificate and its key)")
    if "ssl_cert" in opts:
        ssl["certfile"] = opts["ssl_cert"]
        ssl["keyfile"] = opts["ssl_key"]
    if "ssl_check_hostname" in opts:
        if not ssl:
            raise ValueError("turbocql option ssl_check_hostname needs ssl_ca (or ssl_cert and ssl_key)")
        ssl["check_hostname"] = _bool("ssl_check_hostname", opts["ssl_check_hostname"])
    if "password" in opts and "username" not in opts:
        raise ValueError("turbocql option password needs username")
    conn = _connection(
        points,
        _int("port", opts.get("port", "9042")),
        opts.get("username"),
        opts.get("password"),
        opts.get("local_dc") or None,
        None,
        ssl or None,
    )
    return Options(
        keyspace=opts["keyspace"].strip(),
        table=opts["table"].strip(),
        connection=conn,
        consistency=consistency,
        split=_int("split", opts.get("split", "16")),
        ranges_per_split=_int("ranges_per_split", opts.get("ranges_per_split", "4")),
        page_size=_int("page_size", opts.get("page_size", "5000")),
        allow_filtering=_bool("allow_filtering", opts.get("allow_filtering", "false")),
        pushdown=_bool("pushdown", opts.get("pushdown", "true")),
        confirm_truncate=_bool("confirm_truncate", opts.get("confirm_truncate", "false")),
        concurrency=_int("concurrency", opts.get("concurrency", "256")),
    )
