"""The server and the reference client: start the local Cassandra if needed, pin its threads
to a CPU for the run, and build the Rust reference when it is missing or stale.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .discover import LOCAL_HOSTS, BenchError


def ensure_server(host: str, port: int, start: bool, wait: float) -> None:
    from turbocql import localdb

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
