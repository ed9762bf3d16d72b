"""Run a real local Apache Cassandra 5.0.x node for development and tests.

This module (pure standard library, importable without the Rust engine) holds
the ``turbocql localdb start|stop|status`` command and the small Python API
that test fixtures use.  Cassandra itself is not bundled: ``cassandra-all``
and its dependencies are resolved from Maven Central with ``mvn`` once, the
resulting classpath is cached, and the daemon runs straight from the jars in
``~/.m2`` with ``java`` (Java 11 or 17).

Python API::

    from turbocql import localdb

    node = localdb.start(dir=None, port=9042, heap="2G", auth=False, timeout=180)
    node.pid, node.port, node.address, node.log_path, node.dir
    localdb.is_running(dir=None, port=9042)        # -> bool
    localdb.stop(dir=None, port=9042, timeout=30)  # -> bool (True if it stopped one)
    localdb.wait_for_cql(host, port, timeout)       # -> bool
    localdb.cql_answers(host, port)                 # one probe -> bool

Failures raise ``localdb.LocalDBError`` whose ``exit_code`` is what the CLI
exits with (2: a missing tool, a taken port or a bad option; 1: the daemon
died or did not answer in time).

Layout: a node lives in one directory (``--dir``; by default
``$TURBOCQL_LOCALDB_DIR``, else ``$XDG_CACHE_HOME/turbocql/localdb/node1``
(``~/.cache`` when XDG_CACHE_HOME is unset), or ``.../node-<port>`` for a
native port other than 9042).  It holds ``conf/`` (the generated
``cassandra.yaml`` and ``logback.xml``), ``data/``, ``commitlog/`` ...,
``logs/system.log`` (Cassandra's log), ``logs/output.log`` (the JVM's
stdout/stderr), ``cassandra.pid`` and ``node.json`` (the settings it was
started with).  The classpath is cached per Cassandra version in
``$XDG_CACHE_HOME/turbocql/localdb/classpath-<version>.txt``.

The code is organised around :class:`Node` so that a cluster of several nodes
(127.0.0.1-3) can later be a loop over nodes; only one node is supported now.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_HEAP",
    "DEFAULT_PORT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_VERSION",
    "LocalDBError",
    "Node",
    "add_parser",
    "cql_answers",
    "default_dir",
    "is_running",
    "make_node",
    "start",
    "status",
    "stop",
    "wait_for_cql",
]

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

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_RUNNING = 3

# The JPMS flags of Cassandra 5.0's conf/jvm17-server.options (also fine on 11).
JPMS_FLAGS = [
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports", "java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports", "jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens", "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens", "java.base/java.net=ALL-UNNAMED",
]

GC_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:G1RSetUpdatingPauseTimePercent=5",
    "-XX:MaxGCPauseMillis=300",
    "-XX:InitiatingHeapOccupancyPercent=70",
]

_HEAP_RE = re.compile(r"^[1-9][0-9]*[MmGg]$")
_VERSION_RE = re.compile(r"^5\.0\.[0-9]+$")


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
    seeds: tuple[str, ...] = ()
    pid: int | None = None
    already_running: bool = False
    start_seconds: float | None = None

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
    def marker(self) -> str:
        return DIR_MARKER + str(self.dir)

    def settings(self) -> dict:
        return {
            "address": self.address,
            "port": self.port,
            "storage_port": self.storage_port,
            "heap": self.heap,
            "auth": self.auth,
            "version": self.version,
            "commitlog": self.commitlog,
        }


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
) -> Node:
    """Validate options and build a :class:`Node` (nothing is started)."""
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
    )


def _load_node(dir: str | os.PathLike | None, port: int | None) -> Node:
    """The node in ``dir`` with the settings it was last started with."""
    path = Path(dir) if dir is not None else default_dir(port if port is not None else DEFAULT_PORT)
    node = Node(dir=path)
    try:
        saved = json.loads(node.settings_file.read_text())
    except (OSError, ValueError):
        saved = {}
    for key in ("address", "port", "storage_port", "heap", "auth", "version"):
        if key in saved:
            setattr(node, key, saved[key])
    if "port" not in saved and port is not None:
        node.port = port
    node.seeds = (f"{node.address}:{node.storage_port}",)
    return node


# --------------------------------------------------------------------------
# Configuration files


def _q(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(str(value))


def render_yaml(node: Node) -> str:
    """The ``cassandra.yaml`` for ``node`` (Cassandra 5.0 option names)."""
    d = node.dir
    if node.auth:
        auth_lines = [
            "authenticator: PasswordAuthenticator",
            "authorizer: CassandraAuthorizer",
            "role_manager: CassandraRoleManager",
            # No caching, so that GRANT/ALTER ROLE take effect at once in tests.
            "roles_validity: 0ms",
            "permissions_validity: 0ms",
            "credentials_validity: 0ms",
        ]
    else:
        auth_lines = [
            "authenticator: AllowAllAuthenticator",
            "authorizer: AllowAllAuthorizer",
            "role_manager: CassandraRoleManager",
        ]
    lines = [
        "# Generated by `turbocql localdb start`; rewritten on every start.",
        f"cluster_name: {_q(CLUSTER_NAME)}",
        "num_tokens: 16",
        "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
        "endpoint_snitch: SimpleSnitch",
        "storage_compatibility_mode: NONE",
        "data_file_directories:",
        f"  - {_q(d / 'data')}",
        f"commitlog_directory: {_q(d / 'commitlog')}",
        f"hints_directory: {_q(d / 'hints')}",
        f"saved_caches_directory: {_q(d / 'saved_caches')}",
        f"cdc_raw_directory: {_q(d / 'cdc_raw')}",
        "cdc_enabled: false",
        # periodic (Cassandra's default): the commit log is fsynced every 10 s.
        # batch: a write is acknowledged only after the commit log is fsynced, so
        # acknowledged writes survive kill -9 (slower writes).
        *(["commitlog_sync: batch"] if node.commitlog == "batch"
          else ["commitlog_sync: periodic", "commitlog_sync_period: 10000ms"]),
        "seed_provider:",
        "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider",
        "    parameters:",
        f"      - seeds: {_q(','.join(node.seeds))}",
        f"listen_address: {node.address}",
        f"rpc_address: {node.address}",
        f"storage_port: {node.storage_port}",
        "start_native_transport: true",
        f"native_transport_port: {node.port}",
        *auth_lines,
        "auto_snapshot: false",
        "snapshot_before_compaction: false",
        "incremental_backups: false",
        "materialized_views_enabled: true",
        "hinted_handoff_enabled: true",
        "disk_failure_policy: stop",
        "commit_failure_policy: stop",
        "",
    ]
    return "\n".join(lines)


def render_logback(node: Node) -> str:
    """A logback config: INFO to ``logs/system.log`` (rolled), WARN to stdout."""
    log = str(node.log_path).replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    return f"""<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.rolling.RollingFileAppender">
    <file>{log}</file>
    <rollingPolicy class="ch.qos.logback.core.rolling.FixedWindowRollingPolicy">
      <fileNamePattern>{log}.%i</fileNamePattern>
      <minIndex>1</minIndex>
      <maxIndex>3</maxIndex>
    </rollingPolicy>
    <triggeringPolicy class="ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy">
      <maxFileSize>50MB</maxFileSize>
    </triggeringPolicy>
    <encoder>
      <pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter">
      <level>WARN</level>
    </filter>
    <encoder>
      <pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="SYSTEMLOG"/>
    <appender-ref ref="STDOUT"/>
  </root>
  <logger name="org.apache.cassandra" level="INFO"/>
</configuration>
"""


def java_command(node: Node, java: str, classpath: str) -> list[str]:
    """The full ``java ... CassandraDaemon`` command line for ``node``."""
    cmd = [
        java,
        f"-Xms{node.heap}",
        f"-Xmx{node.heap}",
        "-Xss256k",
        *GC_FLAGS,
        "-XX:+PerfDisableSharedMem",
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:+UseTLAB",
        "-XX:+ResizeTLAB",
        "-Djava.net.preferIPv4Stack=true",
        "-Djdk.attach.allowAttachSelf=true",
        *JPMS_FLAGS,
        "-Dio.netty.tryReflectionSetAccessible=true",
        "-Dio.netty.allocator.useCacheForAllThreads=true",
        "-Dio.netty.allocator.maxOrder=11",
        f"-Dcassandra.config={node.yaml_path.as_uri()}",
        f"-Dcassandra.storagedir={node.dir}",
        f"-Dcassandra.logdir={node.logs_dir}",
        f"-Dcassandra.triggers_dir={node.dir / 'triggers'}",
        f"-Dlogback.configurationFile={node.logback_path.as_uri()}",
        "-Dcassandra-foreground=yes",
        # A single local node has no gossip to wait for.
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        # Create the default superuser (cassandra/cassandra) at once, not after 10 s.
        "-Dcassandra.superuser_setup_delay_ms=0",
        node.marker,
    ]
    jamm = next((p for p in classpath.split(os.pathsep) if re.search(r"jamm-[0-9.]+\.jar$", p)), None)
    if jamm:
        cmd.append(f"-javaagent:{jamm}")
    cmd += ["-cp", f"{node.conf_dir}{os.pathsep}{classpath}", DAEMON_CLASS]
    return cmd


def write_config(node: Node) -> None:
    """Create the node's directories and (re)write its configuration files."""
    for sub in ("conf", "data", "commitlog", "hints", "saved_caches", "cdc_raw", "logs",
                "triggers"):
        (node.dir / sub).mkdir(parents=True, exist_ok=True)
    _write_atomic(node.yaml_path, render_yaml(node))
    _write_atomic(node.logback_path, render_logback(node))
    _write_atomic(node.settings_file, json.dumps(node.settings(), indent=2) + "\n")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# Tools and the classpath


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` if present, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    java = shutil.which("java")
    if not java:
        raise LocalDBError(
            "java not found: localdb needs a Java 11 or 17 runtime on PATH (or JAVA_HOME) "
            "to run Cassandra, e.g. `apt-get install openjdk-17-jre-headless`",
            EXIT_USAGE,
        )
    return java


def find_mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise LocalDBError(
            "mvn not found: localdb needs Maven on PATH to fetch Cassandra from Maven Central "
            "(needed once per version), e.g. `apt-get install maven`",
            EXIT_USAGE,
        )
    return mvn


def classpath_file(version: str = DEFAULT_VERSION) -> Path:
    return cache_base() / f"classpath-{version}.txt"


def _read_classpath(path: Path) -> str | None:
    """The cached classpath if every jar in it still exists."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    entries = [e for e in text.split(os.pathsep) if e]
    if not entries or not all(os.path.isfile(e) for e in entries):
        return None
    if not any("cassandra-all" in os.path.basename(e) for e in entries):
        return None
    return os.pathsep.join(entries)


def _pom(version: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>turbocql.localdb</groupId>
  <artifactId>cassandra-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def resolve_classpath(version: str = DEFAULT_VERSION, out=print) -> str:
    """The classpath of ``cassandra-all:<version>``, resolved with mvn once and cached."""
    cached_file = classpath_file(version)
    cp = _read_classpath(cached_file)
    if cp:
        return cp
    base = cache_base()
    base.mkdir(parents=True, exist_ok=True)
    with _locked(base / ".mvn.lock"):
        cp = _read_classpath(cached_file)  # another process may have resolved it meanwhile
        if cp:
            return cp
        mvn = find_mvn()
        work = base / f"maven-{version}"
        work.mkdir(parents=True, exist_ok=True)
        (work / "pom.xml").write_text(_pom(version))
        tmp_out = work / "classpath.txt"
        with contextlib.suppress(FileNotFoundError):
            tmp_out.unlink()
        out(f"resolving org.apache.cassandra:cassandra-all:{version} with Maven (once)...")
        log_file = work / "mvn.log"
        with open(log_file, "wb") as log:
            rc = subprocess.call(
                [mvn, "-B", "-q", "-f", str(work / "pom.xml"), "dependency:build-classpath",
                 f"-Dmdep.outputFile={tmp_out}", "-Dmdep.includeScope=runtime"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=work,
            )
        cp = _read_classpath(tmp_out) if rc == 0 else None
        if not cp:
            raise LocalDBError(
                f"mvn could not resolve org.apache.cassandra:cassandra-all:{version} "
                f"(exit {rc}); see {log_file}:\n{_tail(log_file, 20)}",
                EXIT_FAILED,
            )
        _write_atomic(cached_file, cp + "\n")
        return cp


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


# --------------------------------------------------------------------------
# Processes


def _cmdline(pid: int) -> list[str] | None:
    """The argv of a live (non-zombie) process, or None if it is gone."""
    proc = Path(f"/proc/{pid}")
    if Path("/proc/self").exists():
        try:
            stat = (proc / "stat").read_text()
            if stat[stat.rindex(")") + 2:].startswith(("Z", "X")):
                return None
            raw = (proc / "cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    try:  # pragma: no cover - non-Linux fallback
        res = subprocess.run(["ps", "-o", "stat=,command=", "-p", str(pid)],
                             capture_output=True, text=True)
    except OSError:  # pragma: no cover
        return None
    line = res.stdout.strip()  # pragma: no cover
    if res.returncode != 0 or not line or line.split(None, 1)[0].startswith("Z"):  # pragma: no cover
        return None
    return line.split(None, 1)[1].split() if " " in line else []  # pragma: no cover


def _is_our_daemon(pid: int, node: Node) -> bool:
    args = _cmdline(pid)
    return bool(args) and DAEMON_CLASS in args and node.marker in args


def _read_pid(node: Node) -> int | None:
    try:
        text = node.pid_file.read_text().strip()
    except OSError:
        return None
    try:
        pid = int(text)
    except ValueError:
        return None
    return pid if pid > 0 else None


def _scan_for_daemon(node: Node) -> int | None:
    """Find our daemon by its command line when the pid file is missing or stale."""
    proc = Path("/proc")
    if not (proc / "self").exists():
        return None
    for entry in proc.iterdir():
        if entry.name.isdigit() and _is_our_daemon(int(entry.name), node):
            return int(entry.name)
    return None


def running_pid(node: Node) -> int | None:
    """The pid of this node's daemon if it runs; cleans up a stale pid file."""
    pid = _read_pid(node)
    if pid is not None and _is_our_daemon(pid, node):
        return pid
    if node.pid_file.exists():
        with contextlib.suppress(OSError):
            node.pid_file.unlink()
    found = _scan_for_daemon(node)
    if found is not None:
        with contextlib.suppress(OSError):
            _write_atomic(node.pid_file, f"{found}\n")
    return found


def _spawn(cmd: list[str], output: Path, cwd: Path) -> int:
    """Start ``cmd`` detached (own session, reparented to init); return its pid.

    A throwaway ``sh`` starts it in the background and exits, so the daemon
    is not our child: no zombie and no ResourceWarning from an unwaited Popen.
    """
    script = 'out="$1"; shift; "$@" </dev/null >>"$out" 2>&1 & echo $!'
    res = subprocess.run(
        ["sh", "-c", script, "sh", str(output), *cmd],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=cwd,
        start_new_session=True,
    )
    try:
        return int(res.stdout.strip())
    except ValueError:
        raise LocalDBError(f"could not start java: {res.stderr.strip() or res.stdout.strip()}") from None


def _wait_gone(pid: int, node: Node, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_our_daemon(pid, node):
            return True
        time.sleep(0.2)
    return not _is_our_daemon(pid, node)


def _terminate(pid: int, node: Node, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, wait up to ``timeout``, then SIGKILL; only if ``pid`` is our daemon."""
    if not _is_our_daemon(pid, node):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, node, timeout):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait_gone(pid, node, 10.0)


# --------------------------------------------------------------------------
# The CQL native protocol probe

_OPCODE_ERROR = 0x00
_OPCODE_STARTUP = 0x01
_OPCODE_READY = 0x02
_OPCODE_AUTHENTICATE = 0x03
_OPCODE_OPTIONS = 0x05
_OPCODE_SUPPORTED = 0x06
_OPCODE_AUTH_RESPONSE = 0x0F
_OPCODE_AUTH_SUCCESS = 0x10


def _frame(opcode: int, body: bytes = b"", stream: int = 0) -> bytes:
    return struct.pack(">BBhBi", 0x04, 0, stream, opcode, len(body)) + body


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return buf


def _request(sock: socket.socket, opcode: int, body: bytes = b"") -> tuple[int, bytes]:
    sock.sendall(_frame(opcode, body))
    header = _recv_exact(sock, 9)
    version, _flags, _stream, op, length = struct.unpack(">BBhBi", header)
    if not version & 0x80 or length < 0 or length > 1 << 20:
        raise ConnectionError("not a CQL response")
    return op, _recv_exact(sock, length)


def cql_answers(host: str, port: int, timeout: float = 2.0) -> bool:
    """True if a CQL server at host:port answers OPTIONS (v4) with SUPPORTED."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            op, _ = _request(sock, _OPCODE_OPTIONS)
            return op == _OPCODE_SUPPORTED
    except (OSError, ConnectionError, struct.error):
        return False


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def cql_login_ok(host: str, port: int, user: str = "cassandra", password: str = "cassandra",
                 timeout: float = 5.0) -> bool:
    """True if STARTUP + PasswordAuthenticator login with user/password succeeds."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            startup = struct.pack(">H", 1) + _string("CQL_VERSION") + _string("3.0.0")
            op, _ = _request(sock, _OPCODE_STARTUP, startup)
            if op == _OPCODE_READY:
                return True
            if op != _OPCODE_AUTHENTICATE:
                return False
            token = b"\0" + user.encode() + b"\0" + password.encode()
            op, _ = _request(sock, _OPCODE_AUTH_RESPONSE, struct.pack(">i", len(token)) + token)
            return op == _OPCODE_AUTH_SUCCESS
    except (OSError, ConnectionError, struct.error):
        return False


def wait_for_cql(host: str, port: int, timeout: float = DEFAULT_TIMEOUT, *, alive=None) -> bool:
    """Poll until CQL answers at host:port (True); False after ``timeout`` seconds.

    ``alive``, if given, is a callable polled meanwhile: once it returns False
    (e.g. the server process died) the wait ends with False.
    """
    deadline = time.monotonic() + timeout
    while True:
        if cql_answers(host, port, timeout=min(2.0, max(0.1, deadline - time.monotonic()))):
            return True
        if alive is not None and not alive():
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


# --------------------------------------------------------------------------
# Ports


def port_in_use(address: str, port: int) -> bool:
    """True if ``address:port`` cannot be bound (something listens there)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise LocalDBError(f"cannot use {address}:{port}: {e}", EXIT_USAGE) from None
    return False


def check_ports_free(node: Node) -> None:
    """Raise a LocalDBError naming the port if a port of ``node`` is taken."""
    for what, port in (("native CQL port", node.port), ("storage port", node.storage_port)):
        if port_in_use(node.address, port):
            raise LocalDBError(
                f"port {port} on {node.address} ({what}) is already in use by another process "
                f"(not the localdb node in {node.dir}); stop it or pick another "
                f"{'--port' if port == node.port else '--storage-port'}",
                EXIT_USAGE,
            )


# --------------------------------------------------------------------------
# Public API


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


def _death_report(node: Node) -> str:
    parts = []
    out = _tail(node.output_path, 20)
    if out.strip():
        parts.append(f"--- last lines of {node.output_path} ---\n{out}")
    log = _tail(node.log_path, 40)
    if log.strip():
        parts.append(f"--- last lines of {node.log_path} ---\n{log}")
    return "\n".join(parts) or f"(no log output in {node.logs_dir})"


def start(
    dir: str | os.PathLike | None = None,
    port: int = DEFAULT_PORT,
    heap: str = DEFAULT_HEAP,
    auth: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    address: str = DEFAULT_ADDRESS,
    storage_port: int | None = None,
    version: str = DEFAULT_VERSION,
    commitlog: str = "periodic",
    out=None,
) -> Node:
    """Start a node (or find it already running) and wait until CQL answers.

    Returns the :class:`Node` with ``pid`` set (``already_running`` tells
    whether it was started by this call).  Raises :class:`LocalDBError`.
    ``out`` is a ``print``-like callable for progress messages (default: none).
    """
    say = out or (lambda *a, **k: None)
    node = make_node(dir, port, heap, auth, address=address, storage_port=storage_port,
                     version=version, commitlog=commitlog)
    node.dir.mkdir(parents=True, exist_ok=True)
    with _locked(node.dir / ".lock"):
        pid = running_pid(node)
        if pid is not None:
            return _attach(node, pid, timeout, say)
        java = find_java()
        classpath = resolve_classpath(node.version, out=say)
        check_ports_free(node)
        write_config(node)
        cmd = java_command(node, java, classpath)
        with open(node.output_path, "ab") as fh:
            fh.write(f"\n=== turbocql localdb start {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n"
                     .encode())
        t0 = time.monotonic()
        pid = _spawn(cmd, node.output_path, node.dir)
        _write_atomic(node.pid_file, f"{pid}\n")
        node.pid = pid
        say(f"started Cassandra {node.version} (pid {pid}), waiting for CQL on "
            f"{node.address}:{node.port} (up to {timeout:.0f} s)...")
        up = wait_for_cql(node.address, node.port, timeout, alive=lambda: _is_our_daemon(pid, node))
        if not up:
            if not _is_our_daemon(pid, node):
                with contextlib.suppress(OSError):
                    node.pid_file.unlink()
                raise LocalDBError(
                    f"Cassandra (pid {pid}) exited during startup.\n{_death_report(node)}",
                    EXIT_FAILED,
                )
            _terminate(pid, node, timeout=10.0)
            with contextlib.suppress(OSError):
                node.pid_file.unlink()
            raise LocalDBError(
                f"Cassandra did not answer CQL on {node.address}:{node.port} within "
                f"{timeout:.0f} s; killed it (pid {pid}). See {node.log_path}",
                EXIT_FAILED,
            )
        if node.auth:
            _wait_for_superuser(node, min(30.0, timeout))
        node.start_seconds = time.monotonic() - t0
        return node


def _attach(node: Node, pid: int, timeout: float, say) -> Node:
    """``start`` on a running node: report it, wait for CQL, use its saved settings."""
    saved = _load_node(node.dir, node.port)
    if saved.port != node.port or saved.address != node.address:
        raise LocalDBError(
            f"the localdb node in {node.dir} already runs on {saved.address}:{saved.port} "
            f"(pid {pid}), not {node.address}:{node.port}; stop it first or use another --dir",
            EXIT_USAGE,
        )
    saved.pid = pid
    saved.already_running = True
    if not cql_answers(saved.address, saved.port):
        say(f"Cassandra (pid {pid}) is already starting; waiting for CQL...")
        if not wait_for_cql(saved.address, saved.port, timeout,
                            alive=lambda: _is_our_daemon(pid, saved)):
            raise LocalDBError(
                f"Cassandra (pid {pid}) runs but CQL does not answer on "
                f"{saved.address}:{saved.port}; see {saved.log_path}",
                EXIT_FAILED,
            )
    return saved


def _wait_for_superuser(node: Node, timeout: float) -> None:
    """With auth on, wait until the default superuser cassandra/cassandra can log in."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cql_login_ok(node.address, node.port):
            return
        time.sleep(0.5)
    # The password may have been changed on purpose: not an error.


def stop(dir: str | os.PathLike | None = None, port: int | None = None,
         timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the node in ``dir`` (default: the default dir for ``port``).

    Only the daemon started there (found through its pid file) is signalled:
    SIGTERM, up to ``timeout`` seconds, then SIGKILL.  Returns True if a
    process was stopped, False if nothing was running.
    """
    node = _load_node(dir, port)
    if not node.dir.exists():
        return False
    with _locked(node.dir / ".lock"):
        pid = running_pid(node)
        if pid is None:
            return False
        _terminate(pid, node, timeout)
        if _is_our_daemon(pid, node):
            raise LocalDBError(f"could not stop Cassandra (pid {pid})", EXIT_FAILED)
        with contextlib.suppress(OSError):
            node.pid_file.unlink()
        return True


def status(dir: str | os.PathLike | None = None, port: int | None = None) -> Node:
    """The node in ``dir`` with ``pid`` set if it runs (None if not)."""
    node = _load_node(dir, port)
    node.pid = running_pid(node) if node.dir.exists() else None
    return node


def is_running(dir: str | os.PathLike | None = None, port: int | None = None) -> bool:
    """True if the daemon of the node in ``dir`` (or the default dir for ``port``) runs."""
    return status(dir, port).pid is not None


# --------------------------------------------------------------------------
# Command line (registered by turbocql.__main__)


def _heap_arg(value: str) -> str:
    if not _HEAP_RE.match(value):
        raise argparse.ArgumentTypeError(f"invalid heap size {value!r} (use e.g. 1G, 2G, 512M)")
    return value.upper()


def _port_arg(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}")
    return port


def _nodes_arg(value: str) -> int:
    if value != "1":
        raise argparse.ArgumentTypeError("only --nodes 1 is supported for now")
    return 1


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``localdb {start,stop,status}`` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "localdb",
        help="start/stop/status a local Apache Cassandra 5.0 node",
        description="Run a local Apache Cassandra 5.0.x node from Maven Central jars "
                    "(needs java 11/17 and, the first time, mvn).",
    )
    actions = parser.add_subparsers(dest="localdb_action", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dir", default=None,
                       help="node directory (default: $TURBOCQL_LOCALDB_DIR or "
                            "~/.cache/turbocql/localdb/node1; node-<port> for other ports)")
        p.add_argument("--port", type=_port_arg, default=None,
                       help=f"native CQL port (default {DEFAULT_PORT})")

    p_start = actions.add_parser("start", help="start the node (no-op if it runs) and wait for CQL")
    common(p_start)
    p_start.add_argument("--address", default=DEFAULT_ADDRESS,
                         help=f"listen/rpc address (default {DEFAULT_ADDRESS})")
    p_start.add_argument("--storage-port", type=_port_arg, default=None,
                         help="inter-node port (default 7000 + (port - 9042))")
    p_start.add_argument("--heap", type=_heap_arg, default=DEFAULT_HEAP,
                         help=f"JVM heap, -Xms/-Xmx (default {DEFAULT_HEAP})")
    p_start.add_argument("--commitlog", choices=("periodic", "batch"), default="periodic",
                         help="commit log sync: periodic (Cassandra's default, every 10 s) or batch "
                              "(fsync before each acknowledgement: acknowledged writes survive kill -9)")
    p_start.add_argument("--auth", action="store_true",
                         help="PasswordAuthenticator + CassandraAuthorizer "
                              "(superuser cassandra/cassandra)")
    p_start.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                         help=f"seconds to wait for CQL (default {DEFAULT_TIMEOUT:.0f})")
    p_start.add_argument("--version", default=DEFAULT_VERSION,
                         help=f"cassandra-all version, 5.0.x (default {DEFAULT_VERSION})")
    p_start.add_argument("--nodes", type=_nodes_arg, default=1,
                         help="number of nodes (only 1 for now)")
    p_start.set_defaults(func=_cmd_start)

    p_stop = actions.add_parser("stop", help="stop the node started in --dir")
    common(p_stop)
    p_stop.add_argument("--timeout", type=float, default=STOP_TIMEOUT,
                        help=f"seconds to wait after SIGTERM before SIGKILL (default {STOP_TIMEOUT:.0f})")
    p_stop.set_defaults(func=_cmd_stop)

    p_status = actions.add_parser("status", help="running or not (exit 0 if running, 3 if not)")
    common(p_status)
    p_status.set_defaults(func=_cmd_status)
    return parser


def _print_err(msg: str) -> None:
    print(f"turbocql localdb: {msg}", file=sys.stderr)


def _cmd_start(args: argparse.Namespace) -> int:
    port = args.port if args.port is not None else DEFAULT_PORT
    try:
        node = start(args.dir, port, args.heap, args.auth, args.timeout, address=args.address,
                     storage_port=args.storage_port, version=args.version,
                     commitlog=args.commitlog, out=lambda msg: print(msg, flush=True))
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    if node.already_running:
        print(f"already running: Cassandra {node.version} at {node.address}:{node.port} "
              f"(pid {node.pid})")
    else:
        print(f"Cassandra {node.version} is up at {node.address}:{node.port} "
              f"(pid {node.pid}, started in {node.start_seconds:.1f} s)")
    print(f"  dir:    {node.dir}")
    print(f"  log:    {node.log_path}")
    print(f"  output: {node.output_path}")
    if node.auth:
        print("  auth:   on (superuser cassandra/cassandra)")
    return 0


def _cmd_stop(args: argparse.Namespace) -> int:
    node = _load_node(args.dir, args.port)
    try:
        stopped = stop(args.dir, args.port, timeout=args.timeout)
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    if stopped:
        print(f"stopped the Cassandra node in {node.dir}")
    else:
        print(f"not running: no localdb node runs in {node.dir}")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    node = status(args.dir, args.port)
    if node.pid is None:
        print(f"not running (dir {node.dir})")
        return EXIT_NOT_RUNNING
    cql = "CQL answers" if cql_answers(node.address, node.port) else "CQL does not answer (yet)"
    print(f"running: pid {node.pid}, {node.address}:{node.port}, {cql}")
    print(f"  dir: {node.dir}")
    print(f"  log: {node.log_path}")
    return 0
