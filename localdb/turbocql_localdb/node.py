"""A localdb node's settings and where its files live.

The constants (default port, heap, version, exit codes), :class:`LocalDBError`, the
:class:`Node` dataclass (directory layout: ``conf/``, ``logs/``, ``cassandra.pid``,
``node.json``), option validation (:func:`make_node`), the default directories and
the small file helpers (atomic write, advisory lock, log tail) the other modules share.
Pure standard library; imports nothing of turbocql.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import socket
import ssl
from collections.abc import Mapping
from pathlib import Path

DEFAULT_VERSION = "5.0.6"
DEFAULT_PORT = 9042
DEFAULT_STORAGE_PORT = 7000
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_HEAP = "2G"
DEFAULT_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0
CLUSTER_NAME = "turbocql-localdb"
DAEMON_CLASS = "org.apache.cassandra.service.CassandraDaemon"
# A system property naming the node's directory, so that a process can be
# recognised as "our" daemon for that directory from its command line.
DIR_MARKER = "-Dturbocql.localdb.dir="
# A cluster's settings, in its base directory (cluster.py); its nodes are node1/, node2/, ...
CLUSTER_FILE = "cluster.json"

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_RUNNING = 3

_HEAP_RE = re.compile(r"^[1-9][0-9]*[MmGg]$")
_VERSION_RE = re.compile(r"^5\.0\.[0-9]+$")
_SETTING_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# The cassandra.yaml keys localdb writes from its own options (addresses, ports, directories,
# --auth, --tls, --commitlog) or needs to find and run the node: not overridable by a setting.
OWN_YAML_KEYS = frozenset(
    {
        "cluster_name",
        "data_file_directories",
        "commitlog_directory",
        "hints_directory",
        "saved_caches_directory",
        "cdc_raw_directory",
        "commitlog_sync",
        "commitlog_sync_period",
        "seed_provider",
        "listen_address",
        "rpc_address",
        "storage_port",
        "start_native_transport",
        "native_transport_port",
        "authenticator",
        "authorizer",
        "role_manager",
        "client_encryption_options",
    }
)


class LocalDBError(Exception):
    """A localdb failure with a message meant for a person and a CLI exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED):
        super().__init__(message)
        self.exit_code = exit_code


# --------------------------------------------------------------------------
# Where things live


def cache_base() -> Path:
    """``$XDG_CACHE_HOME/turbocql/localdb`` (``~/.cache/...`` by default)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "turbocql" / "localdb"


def default_dir(port: int = DEFAULT_PORT) -> Path:
    """The node directory used when none is given.

    ``$TURBOCQL_LOCALDB_DIR`` if set; otherwise ``<cache>/node1`` for the
    default port and ``<cache>/node-<port>`` for any other port, so that
    ``--port 9043`` alone never reuses the default node's data.
    """
    env = os.environ.get("TURBOCQL_LOCALDB_DIR")
    if env:
        return Path(env).expanduser().absolute()
    base = cache_base()
    return base / "node1" if port == DEFAULT_PORT else base / f"node-{port}"


def derive_storage_port(port: int) -> int:
    """Inter-node port derived from the native port: 7000 + (port - 9042)."""
    storage = DEFAULT_STORAGE_PORT + (port - DEFAULT_PORT)
    if not 1024 <= storage <= 65535 or storage == port:
        raise LocalDBError(
            f"cannot derive a storage port from native port {port}; pass --storage-port",
            EXIT_USAGE,
        )
    return storage


@dataclasses.dataclass(frozen=True)
class TLSFiles:
    """The TLS files of a node started with ``tls=True``, all in its ``tls/`` directory.

    ``ca`` (``ca.pem``, the CA certificate: the truststore of the node and of clients),
    ``ca_key`` (``ca-key.pem``), ``node_keystore`` (``node.pem``: the node's PKCS#8 key, its
    certificate for its IP address and ``localhost``, and the CA), ``client_cert``
    (``client.pem``, CN ``turbocql-client``, then the CA) and ``client_key``
    (``client-key.pem``, PKCS#8). They are made by ``tls.ensure_tls_files``."""

    dir: Path

    @property
    def ca(self) -> Path:
        return self.dir / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.dir / "ca-key.pem"

    @property
    def node_keystore(self) -> Path:
        return self.dir / "node.pem"

    @property
    def client_cert(self) -> Path:
        return self.dir / "client.pem"

    @property
    def client_key(self) -> Path:
        return self.dir / "client-key.pem"

    def ssl_context(self, client_cert: bool = True) -> ssl.SSLContext:
        """A client-side :class:`ssl.SSLContext` that trusts ``ca`` (hostnames checked: connect
        by the node's IP address or ``localhost``) and, with ``client_cert``, presents the
        client certificate (needed when the node requires client auth)."""
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))
        if client_cert:
            ctx.load_cert_chain(str(self.client_cert), str(self.client_key))
        return ctx


@dataclasses.dataclass
class Node:
    """One Cassandra node: its directory, addresses and settings.

    ``pid`` is filled in by :func:`start` (and by :func:`status`).
    """

    dir: Path
    address: str = DEFAULT_ADDRESS
    port: int = DEFAULT_PORT
    storage_port: int = DEFAULT_STORAGE_PORT
    heap: str = DEFAULT_HEAP
    auth: bool = False
    version: str = DEFAULT_VERSION
    commitlog: str = "periodic"
    # TLS on the native port (client_encryption_options; the files in tls/, see TLSFiles).
    tls: bool = False
    require_client_auth: bool = False
    seeds: tuple[str, ...] = ()
    pid: int | None = None
    already_running: bool = False
    start_seconds: float | None = None
    # Set for the nodes of a cluster (cluster.py): the node's name (node1, node2, ...), its
    # datacenter and rack (GossipingPropertyFileSnitch) and its JMX port (on 127.0.0.1).
    name: str | None = None
    datacenter: str | None = None
    rack: str | None = None
    jmx_port: int | None = None
    # Top-level cassandra.yaml settings given by the user (``start --setting NAME=VALUE``): each
    # replaces localdb's own value of that key, or is added (see config.render_yaml).
    yaml_settings: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.dir = Path(self.dir).expanduser().absolute()
        if not self.seeds:
            self.seeds = (f"{self.address}:{self.storage_port}",)

    @property
    def conf_dir(self) -> Path:
        return self.dir / "conf"

    @property
    def yaml_path(self) -> Path:
        return self.conf_dir / "cassandra.yaml"

    @property
    def logback_path(self) -> Path:
        return self.conf_dir / "logback.xml"

    @property
    def logs_dir(self) -> Path:
        return self.dir / "logs"

    @property
    def log_path(self) -> Path:
        """Cassandra's own log (logback)."""
        return self.logs_dir / "system.log"

    @property
    def output_path(self) -> Path:
        """The JVM's stdout/stderr (startup errors, warnings)."""
        return self.logs_dir / "output.log"

    @property
    def pid_file(self) -> Path:
        return self.dir / "cassandra.pid"

    @property
    def settings_file(self) -> Path:
        return self.dir / "node.json"

    @property
    def rackdc_path(self) -> Path:
        """``cassandra-rackdc.properties`` (a cluster's nodes only)."""
        return self.conf_dir / "cassandra-rackdc.properties"

    @property
    def tls_dir(self) -> Path:
        return self.dir / "tls"

    def tls_files(self) -> TLSFiles | None:
        """The node's TLS files (:class:`TLSFiles`) if it runs with TLS, else None."""
        return TLSFiles(self.tls_dir) if self.tls else None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The context the readiness probe speaks CQL with (None: clear text). It presents
        the client certificate, so it also works when client auth is required."""
        files = self.tls_files()
        return files.ssl_context() if files is not None else None

    @property
    def marker(self) -> str:
        return DIR_MARKER + str(self.dir)

    @property
    def in_cluster(self) -> bool:
        """True for a node of a multi-node cluster (it has a datacenter)."""
        return self.datacenter is not None

    def settings(self) -> dict:
        saved: dict = {
            "address": self.address,
            "port": self.port,
            "storage_port": self.storage_port,
            "heap": self.heap,
            "auth": self.auth,
            "version": self.version,
            "commitlog": self.commitlog,
            "tls": self.tls,
            "require_client_auth": self.require_client_auth,
        }
        if self.yaml_settings:
            saved["yaml_settings"] = dict(self.yaml_settings)
        if self.in_cluster:
            saved.update(
                name=self.name,
                datacenter=self.datacenter,
                rack=self.rack,
                jmx_port=self.jmx_port,
                seeds=list(self.seeds),
            )
        return saved


def make_node(
    dir: str | os.PathLike | None = None,
    port: int = DEFAULT_PORT,
    heap: str = DEFAULT_HEAP,
    auth: bool = False,
    *,
    address: str = DEFAULT_ADDRESS,
    storage_port: int | None = None,
    version: str = DEFAULT_VERSION,
    commitlog: str = "periodic",
    tls: bool = False,
    require_client_auth: bool = False,
    yaml_settings: Mapping[str, str] | None = None,
) -> Node:
    """Validate options and build a :class:`Node` (nothing is started).

    ``require_client_auth`` implies ``tls``. ``yaml_settings``: top-level cassandra.yaml
    settings, name to value (:func:`check_yaml_settings`)."""
    if commitlog not in ("periodic", "batch"):
        raise LocalDBError(f"invalid commitlog mode {commitlog!r}; use periodic or batch", EXIT_USAGE)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise LocalDBError(f"invalid port {port!r}", EXIT_USAGE)
    if not _HEAP_RE.match(str(heap)):
        raise LocalDBError(f"invalid heap size {heap!r}; use e.g. 1G, 2G or 512M", EXIT_USAGE)
    if not _VERSION_RE.match(str(version)):
        raise LocalDBError(
            f"unsupported Cassandra version {version!r}; localdb runs 5.0.x (e.g. {DEFAULT_VERSION})",
            EXIT_USAGE,
        )
    try:
        socket.inet_aton(address)
    except OSError:
        raise LocalDBError(f"invalid IPv4 address {address!r}", EXIT_USAGE) from None
    if storage_port is None:
        storage_port = derive_storage_port(port)
    elif not 1 <= storage_port <= 65535 or storage_port == port:
        raise LocalDBError(f"invalid storage port {storage_port!r}", EXIT_USAGE)
    return Node(
        dir=Path(dir) if dir is not None else default_dir(port),
        address=address,
        port=port,
        storage_port=storage_port,
        heap=str(heap).upper(),
        auth=bool(auth),
        commitlog=commitlog,
        version=version,
        tls=bool(tls or require_client_auth),
        require_client_auth=bool(require_client_auth),
        yaml_settings=check_yaml_settings(yaml_settings or {}),
    )


def check_yaml_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """``settings`` checked, as a new dict: each name a top-level cassandra.yaml key in lower
    case (``materialized_views_enabled``) that is not one of :data:`OWN_YAML_KEYS`, each value
    one line of text, written as a YAML scalar (``false``, ``CASSANDRA_4``, ``10ms``).
    Raises :class:`LocalDBError` (usage) otherwise."""
    checked = {}
    for name, value in settings.items():
        name, value = str(name), str(value)
        if not _SETTING_NAME_RE.match(name):
            raise LocalDBError(
                f"invalid cassandra.yaml setting name {name!r}: a top-level key such as materialized_views_enabled",
                EXIT_USAGE,
            )
        if name in OWN_YAML_KEYS:
            raise LocalDBError(
                f"{name} is written by localdb from its own options (--port, --address, --storage-port, "
                "--dir, --auth, --tls, --commitlog): it cannot be given as a setting",
                EXIT_USAGE,
            )
        if not value.strip() or "\n" in value or "\r" in value:
            raise LocalDBError(f"invalid value {value!r} for setting {name}: one line, not empty", EXIT_USAGE)
        checked[name] = value.strip()
    return checked


def parse_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (the ``--setting`` option) as ``(NAME, VALUE)``; checked as by
    :func:`check_yaml_settings`."""
    name, sep, value = text.partition("=")
    if not sep:
        raise LocalDBError(
            f"invalid setting {text!r}: use NAME=VALUE, e.g. materialized_views_enabled=false", EXIT_USAGE
        )
    ((name, value),) = check_yaml_settings({name.strip(): value}).items()
    return name, value


def _resolve_tls(
    tls: bool | None, require_client_auth: bool | None, saved_tls: bool, saved_require_client_auth: bool
) -> tuple[bool, bool]:
    """``(tls, require_client_auth)`` where None means "as saved"; client auth implies TLS."""
    if tls is False and require_client_auth:
        raise LocalDBError("client auth needs TLS: drop tls=False (--no-tls)", EXIT_USAGE)
    if require_client_auth is None:
        require_client_auth = bool(saved_require_client_auth) if tls is not False else False
    if tls is None:
        tls = bool(saved_tls)
    return bool(tls or require_client_auth), bool(require_client_auth)


def _load_node(dir: str | os.PathLike | None, port: int | None) -> Node:
    """The node in ``dir`` with the settings it was last started with."""
    path = Path(dir) if dir is not None else default_dir(port if port is not None else DEFAULT_PORT)
    node = Node(dir=path)
    try:
        saved = json.loads(node.settings_file.read_text())
    except (OSError, ValueError):
        saved = {}
    keys = ("address", "port", "storage_port", "heap", "auth", "version", "commitlog", "tls", "require_client_auth")
    for key in keys + ("name", "datacenter", "rack", "jmx_port"):
        if key in saved:
            setattr(node, key, saved[key])
    if "port" not in saved and port is not None:
        node.port = port
    yaml_settings = saved.get("yaml_settings")
    if isinstance(yaml_settings, dict):
        node.yaml_settings = {str(k): str(v) for k, v in yaml_settings.items()}
    seeds = saved.get("seeds")
    if isinstance(seeds, list) and seeds:
        node.seeds = tuple(str(s) for s in seeds)
    else:
        node.seeds = (f"{node.address}:{node.storage_port}",)
    return node


# --------------------------------------------------------------------------
# Files


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive advisory lock on ``path`` (no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tail(path: Path, lines: int) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 256 * 1024))
            data = fh.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
