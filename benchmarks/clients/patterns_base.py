"""What every pattern of the request-pattern client shares (``patterns.py``): the errors
(:class:`MissingAPI`, :class:`Stalled`, the first request error), the API lookups, taking a
read's row, the connection options (TLS, protocol version), the parameters of a run and the
timed section's measurement.
"""

from __future__ import annotations

import time

from benchmarks.clients.sync_threads import (
    proc_cpu_us,
    read_key,
    self_cpu_us,
)

EXIT_NO_API = 3
STALL_SECONDS = 60.0  # no completion for this long = the run is stuck


class MissingAPI(Exception):
    """The driver does not offer what the pattern needs."""


class Stalled(Exception):
    """No request completed for STALL_SECONDS."""


FIRST_ERROR: list[str] = []


def note(exc: BaseException) -> None:
    """Remember the first request error (reported if a whole warm-up fails)."""
    if not FIRST_ERROR:
        FIRST_ERROR.append(f"{type(exc).__name__}: {exc}"[:300])


def need(module, name: str, what: str):
    try:
        return getattr(module, name)
    except AttributeError:
        raise MissingAPI(f"{module.__name__} has no {name} ({what})") from None


def take_row(result):
    """Touch the first row of a read result (decoding it if the driver is lazy)."""
    one = getattr(result, "one", None)
    if one is not None:
        return one()
    return next(iter(result), None)


def connection_options(args, aio: bool = False) -> dict:
    """Extra ``Cluster(...)`` arguments of ``--tls-ca`` (``ssl_context``) and, on the classic
    (thread) API, ``--protocol-version``."""
    opts: dict = {}
    if args.tls_ca:
        import ssl

        opts["ssl_context"] = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.tls_ca)
    if args.protocol_version and not aio:
        opts["protocol_version"] = args.protocol_version
    return opts


def acsylla_tls_options(args) -> dict:
    """acsylla's TLS arguments for ``--tls-ca``: the CA as PEM text (its default verification:
    the peer's certificate)."""
    if not args.tls_ca:
        return {}
    with open(args.tls_ca) as f:
        return {"ssl_enabled": True, "ssl_trusted_cert": f.read()}


def params_factory(args, prefix: str):
    if args.workload == "read":
        return lambda tag, n: [(read_key(i * 7919 % args.rows),) for i in range(n)]
    return lambda tag, n: [(f"{prefix}{tag}{i}", "a", "b") for i in range(n)]


def measure(run, params, server_pid):
    """Run ``run(params)`` as the timed section; return the measurement dict."""
    srv0 = proc_cpu_us(server_pid)
    cpu0 = self_cpu_us()
    t0 = time.perf_counter()
    lat, errors = run(params)
    seconds = time.perf_counter() - t0
    cpu = self_cpu_us() - cpu0
    srv1 = proc_cpu_us(server_pid)
    return lat, errors, seconds, cpu, (None if srv0 is None or srv1 is None else srv1 - srv0)
