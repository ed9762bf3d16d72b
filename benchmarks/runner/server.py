"""The server and the reference client: start the local Cassandra if needed, pin its threads
to a CPU for the run, and build the Rust reference when it is missing or stale; the ``tls``
scenario's TLS node, started for the scenario if none answers and stopped after it then.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .discover import LOCAL_HOSTS, TLS_HEAP, BenchError


def ensure_server(host: str, port: int, start: bool, wait: float) -> None:
    import turbocql_localdb as localdb

    if localdb.wait_for_cql(host, port, timeout=max(wait, 0.1)):
        return
    if not start or host not in LOCAL_HOSTS:
        raise BenchError(
            f"no Cassandra answers at {host}:{port}"
            + ("" if host not in LOCAL_HOSTS else " (start one with: turbocql localdb start)")
        )
    print(
        f"no Cassandra at {host}:{port}: starting the local one (turbocql localdb start)...",
        file=sys.stderr,
        flush=True,
    )
    try:
        node = localdb.start(port=port, out=lambda msg: print(msg, file=sys.stderr, flush=True))
    except localdb.LocalDBError as e:
        raise BenchError(f"could not start the local Cassandra: {e}") from None
    print(f"Cassandra {node.version} is up (pid {node.pid})", file=sys.stderr, flush=True)


@dataclasses.dataclass
class TLSNode:
    """The TLS node of the ``tls`` scenario: where it is, its CA certificate, whether the
    scenario started it (and so stops it)."""

    host: str
    port: int
    ca: Path
    started: bool = False

    def ssl_context(self):
        import ssl

        return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))

    def to_json(self) -> dict:
        return {"host": self.host, "port": self.port, "ca": str(self.ca), "started": self.started}


def _localdb_ca(port: int) -> Path | None:
    import turbocql_localdb as localdb

    files = localdb.status(port=port).tls_files()
    return files.ca if files is not None and files.ca.is_file() else None


@contextlib.contextmanager
def tls_server(host: str, port: int, start: bool, wait: float, ca: str | None = None, heap: str = TLS_HEAP):
    """The TLS node for the ``tls`` scenario (a :class:`TLSNode`), as :func:`ensure_server` and
    ``scripts/bench.sh`` handle the main one: a node that answers CQL over TLS on ``port`` is
    used and left running; otherwise, on a local address, ``turbocql localdb start --tls
    --port PORT --heap HEAP`` (no client certificates), stopped when the block ends. The CA is
    ``ca``, else ``tls/ca.pem`` of localdb's node directory for ``port``."""
    import turbocql_localdb as localdb

    ca_path = Path(ca).expanduser() if ca else _localdb_ca(port)
    if ca_path is not None:
        if not ca_path.is_file():
            raise BenchError(f"--tls-ca {ca_path}: no such file")
        node = TLSNode(host, port, ca_path)
        if localdb.wait_for_cql(host, port, timeout=min(max(wait, 0.1), 5), ssl_context=node.ssl_context()):
            yield node
            return
    if not start or host not in LOCAL_HOSTS:
        raise BenchError(
            f"no Cassandra answers over TLS at {host}:{port}"
            + (f" (start one with: turbocql localdb start --tls --port {port})" if host in LOCAL_HOSTS else "")
            + ("" if ca_path is not None else "; its CA certificate is unknown (--tls-ca)")
        )
    print(
        f"no TLS node at {host}:{port}: starting one (turbocql localdb start --tls --port {port} --heap {heap})...",
        file=sys.stderr,
        flush=True,
    )
    try:
        started = localdb.start(
            port=port,
            heap=heap,
            tls=True,
            require_client_auth=False,
            timeout=300,
            out=lambda msg: print(msg, file=sys.stderr, flush=True),
        )
    except localdb.LocalDBError as e:
        raise BenchError(f"could not start the TLS node: {e}") from None
    files = started.tls_files()
    if files is None:
        raise BenchError(f"the node on port {port} runs without TLS")
    node = TLSNode(host, port, Path(ca) if ca else files.ca, started=not getattr(started, "already_running", False))
    print(f"TLS node Cassandra {started.version} is up (pid {started.pid})", file=sys.stderr, flush=True)
    try:
        yield node
    finally:
        if node.started:
            print(f"stopping the TLS node on port {port} (started by this run)", file=sys.stderr, flush=True)
            try:
                localdb.stop(port=port)
            except localdb.LocalDBError as e:
                print(f"could not stop the TLS node: {e}", file=sys.stderr)


@contextlib.contextmanager
def pinned_server(pid: int | None, cpu: str | None):
    """``taskset -a -p -c CPU PID`` (every thread of the server) for the run; restored after."""
    if cpu is None:
        yield
        return
    if pid is None:
        raise BenchError("--pin-server: the server's pid is unknown (not a local process?)")
    if not shutil.which("taskset"):
        raise BenchError("--pin-server needs taskset (util-linux)")
    before = ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
    r = subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError(f"taskset -a -p -c {cpu} {pid}: {r.stderr.strip()}")
    print(f"server (pid {pid}) pinned to CPU {cpu} (was {before})", file=sys.stderr)
    try:
        yield
    finally:
        subprocess.run(["taskset", "-a", "-p", "-c", before, str(pid)], capture_output=True)
        print(f"server (pid {pid}) affinity restored to {before}", file=sys.stderr)


def _rust_bin(common, bdir: Path, build: bool) -> Path | None:
    """The Rust reference, (re)built if missing, asked for, or older than its sources.

    ``common`` is the benchmarks' ``common.py`` (the runners' shared helpers)."""
    binary = Path(common.DEFAULT_RUST_BIN)
    src = bdir / "rust_ref"
    if binary.exists() and not build:
        newest = max(
            (p.stat().st_mtime for p in src.rglob("*") if p.is_file() and p.suffix in (".rs", ".toml")), default=0
        )
        build = newest > binary.stat().st_mtime
    if build and not shutil.which("cargo"):
        print("cargo not found: the Rust reference cannot be built", file=sys.stderr)
        return binary if binary.exists() else None
    return common.ensure_rust_bin(binary, build)
