"""The real Cassandra node of the CQL connections table (``run_cql_connections.py --server
cassandra``): its sockets of client connections (``/proc/net/tcp``), the wait for the previous
client's to close, its CPU per run (``/proc/PID/stat``, sampled in a thread), its JVM pinned to
one CPU for the runs. Linux only; pure functions apart from the /proc reads and ``taskset``."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

TCP_ESTABLISHED, TCP_CLOSE_WAIT = "01", "08"  # /proc/net/tcp's st column


def node_sockets(tables: list[str], port: int) -> int:
    """The node's own sockets of client connections in ``/proc/net/tcp``/``tcp6`` texts: local
    port ``port``, open (ESTABLISHED) or closed by the client but not yet by the node
    (CLOSE_WAIT). The clients' sockets have ephemeral local ports, so they do not count."""
    n = 0
    for text in tables:
        for line in text.splitlines()[1:]:
            parts = line.split()
            if len(parts) > 3 and parts[3] in (TCP_ESTABLISHED, TCP_CLOSE_WAIT):
                if int(parts[1].rpartition(":")[2], 16) == port:
                    n += 1
    return n


def _tcp_tables() -> list[str]:
    out = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            out.append(Path(name).read_text())
    return out


def open_sockets(port: int) -> int:
    """:func:`node_sockets` of this machine's TCP tables now."""
    return node_sockets(_tcp_tables(), port)


def settle(port: int, baseline: int, timeout: float) -> tuple[int, float]:
    """Waits until the node holds no more client sockets on ``port`` than ``baseline`` (the
    previous client's connections closed on its side too), at most ``timeout`` s: the drivers
    wait for "at least N + 1" in ``system_views.clients``, which the previous run's
    connections, still listed, would satisfy early. (sockets left, seconds waited)"""
    start = time.monotonic()
    while (have := open_sockets(port)) > baseline and time.monotonic() - start < timeout:
        time.sleep(0.1)
    return have, round(time.monotonic() - start, 2)


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (all its threads), from /proc/PID/stat."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # fields from the 3rd (state) on: utime is the 14th
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busiest_rate(samples: list[tuple[float, float]], seconds: float) -> float | None:
    """CPU cores over the busiest stretch of ``seconds`` of ``(time, cpu seconds)`` samples
    (the whole span if shorter). A run is connect, pool fill, warm-up, window, teardown: the
    node's steady load is that of the warm-up and the window, the stretch of ``seconds`` it
    spends the most CPU in (a fill's burst can raise it a little)."""
    best, j = None, 0
    for i, (t0, c0) in enumerate(samples):
        j = max(j, i)
        while j < len(samples) and samples[j][0] - t0 < seconds:
            j += 1
        if j == len(samples):
            break
        t1, c1 = samples[j]
        rate = (c1 - c0) / (t1 - t0)
        best = rate if best is None else max(best, rate)
    if best is None and len(samples) > 1 and samples[-1][0] > samples[0][0]:
        (t0, c0), (t1, c1) = samples[0], samples[-1]
        best = (c1 - c0) / (t1 - t0)
    return best


class CpuSampler:
    """Samples a process's CPU seconds every ``period`` s in a thread, for the block."""

    def __init__(self, pid: int | None, period: float = 0.1) -> None:
        self.pid, self.period = pid, period
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            cpu = proc_cpu_s(self.pid) if self.pid else None
            if cpu is not None:
                self.samples.append((time.monotonic(), cpu))
            if self._stop.wait(self.period):
                return

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        cpu = proc_cpu_s(self.pid) if self.pid else None
        if cpu is not None:
            self.samples.append((time.monotonic(), cpu))

    def figures(self, seconds: float, msgs_per_s: float | None) -> dict:
        """``node_cpu_s`` over the whole run, ``node_cpu_cores`` over its busiest ``seconds``
        and, with the client's rate, ``node_cpu_us_per_request``."""
        if len(self.samples) < 2:
            return {}
        cores = busiest_rate(self.samples, seconds)
        out = {"node_cpu_s": round(self.samples[-1][1] - self.samples[0][1], 3)}
        if cores is not None:
            out["node_cpu_cores"] = round(cores, 3)
            if msgs_per_s:
                out["node_cpu_us_per_request"] = round(cores / msgs_per_s * 1e6, 2)
        return out


@contextlib.contextmanager
def pinned_node(pid: int | None, cpu: str | None):
    """Every thread of the node's JVM on ``cpu`` (``taskset -a -p -c``; the threads it starts
    later inherit it) for the block, its affinity before put back after. Yields what was done,
    for the meta: pid, cpu, before, restored, or reason where it was not pinned."""
    rec: dict = {"pid": pid, "cpu": cpu}
    if cpu is None or pid is None:
        rec["reason"] = "no pinning asked" if cpu is None else "the node's pid is unknown (not a local process?)"
        yield rec
        return
    rec["before"] = ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
    r = subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], capture_output=True, text=True)
    if r.returncode != 0:
        rec["reason"] = f"taskset -a -p -c {cpu} {pid}: {r.stderr.strip()}"
        yield rec
        return
    print(f"the node (pid {pid}) pinned to CPU {cpu} (was {rec['before']})", file=sys.stderr)
    try:
        yield rec
    finally:
        r = subprocess.run(["taskset", "-a", "-p", "-c", rec["before"], str(pid)], capture_output=True, text=True)
        rec["restored"] = rec["before"] if r.returncode == 0 else f"failed: {r.stderr.strip()}"
        print(f"the node (pid {pid}) affinity restored to {rec['restored']}", file=sys.stderr)


def node_reachable(host: str, port: int) -> str | None:
    """None if something accepts TCP connections at ``host:port``, else why not."""
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as e:
        return f"{type(e).__name__}: {e.strerror or e}"
    return None
