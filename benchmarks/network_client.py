"""The client of the slow-network run (``run_network.py --client DRIVER``): one driver through
one scenario, in its own process, driven by the runner over stdin / stdout (READY, GO, RESULT,
EXIT). It connects through the proxy of the first node, runs an open-loop load of prepared
one-row writes and reads (:class:`Load`) and reports its figures: ops/s, latency percentiles,
errors by class, requests never resolved, CPU per request, RSS, its TCP connections.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import sys
import time
from array import array
from collections import Counter

FIRST_ADDRESS = "127.0.0.11"
TABLE = "t"
DRAIN_MARGIN_S = 10.0  # beyond the request timeout, the bound on waiting for every request


# ---------------------------------------------------------------------------------------------
# Figures of this process


def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of an ascending list (None if empty)."""
    if not sorted_values:
        return None
    idx = round(p / 100 * (len(sorted_values) - 1))
    return sorted_values[min(idx, len(sorted_values) - 1)]


def latency_summary(latencies_s: list[float]) -> dict:
    """p50 / p95 / p99 / max in ms of a list of latencies in seconds."""
    v = sorted(latencies_s)
    out = {}
    for name, p in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100)):
        x = percentile(v, p)
        out[name] = None if x is None else round(x * 1000, 2)
    return out


def tcp_peers() -> dict[str, int]:
    """This process's established TCP connections (IPv4), counted by remote ``ip:port``: the
    inodes of its socket descriptors looked up in /proc/net/tcp."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    peers: Counter = Counter()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "01" or fields[9] not in inodes:
                continue
            ip_hex, port_hex = fields[2].split(":")
            ip = socket.inet_ntoa(int(ip_hex, 16).to_bytes(4, "little"))
            peers[f"{ip}:{int(port_hex, 16)}"] += 1
    return dict(sorted(peers.items()))


def process_cpu_s() -> float:
    """User + system CPU seconds of this process, all threads (``getrusage``: microsecond
    resolution, where ``os.times`` counts 10 ms clock ticks)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB, from /proc/self/status."""
    cur = peak = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return round(cur, 1), round(peak, 1)


def _connect(driver: str, args):
    """(cluster, session, driver version) through the proxy at FIRST_ADDRESS:proxy_port."""
    timeout = args.request_timeout
    if driver == "classic":
        import warnings

        warnings.simplefilter("ignore", DeprecationWarning)
        import cassandra  # type: ignore[import-untyped]
        from cassandra import ConsistencyLevel as CL
        from cassandra.cluster import EXEC_PROFILE_DEFAULT as DEFAULT  # type: ignore[import-untyped]
        from cassandra.cluster import Cluster as ClassicCluster
        from cassandra.cluster import ExecutionProfile as Profile
        from cassandra.connection import DefaultEndPoint, DefaultEndPointFactory  # type: ignore[import-untyped]

        class ClusterPortEndPoints(DefaultEndPointFactory):
            """Peers at their address and the cluster's port (the proxies'), not the
            ``native_port`` of system.peers_v2."""

            def create(self, row):
                return DefaultEndPoint(super().create(row).address, self.port)

        cluster = ClassicCluster(
            [FIRST_ADDRESS],
            port=args.proxy_port,
            protocol_version=4,
            compression=False,
            endpoint_factory=ClusterPortEndPoints(args.proxy_port),
            execution_profiles={DEFAULT: Profile(consistency_level=CL.LOCAL_QUORUM, request_timeout=timeout)},
        )
        version = cassandra.__version__
    else:
        import turbocql
        from turbocql import ConsistencyLevel as TCL
        from turbocql.cluster import EXEC_PROFILE_DEFAULT as TDEFAULT
        from turbocql.cluster import Cluster as TurboCluster
        from turbocql.cluster import ExecutionProfile as TProfile

        cluster = TurboCluster(
            [FIRST_ADDRESS],
            port=args.proxy_port,
            compression=False,
            execution_profiles={TDEFAULT: TProfile(consistency_level=TCL.LOCAL_QUORUM, request_timeout=timeout)},
        )
        version = turbocql.__version__
    return cluster, cluster.connect(args.keyspace), version


class Load:
    """One open-loop run: ``count`` requests, request ``i`` due at ``t0 + i / rate``; even ``i``
    write a distinct key, odd ``i`` read one of the ``rows`` rows written before. Each
    request's due time, issue lag and end time are kept in arrays (0.0: not resolved), its
    error class name (if any) in a dict, filled by the drivers' callbacks."""

    def __init__(self, session, insert, select, rate: float, count: int, prefix: str, rows: int, timeout: float):
        self.session, self.insert, self.select = session, insert, select
        self.rate, self.count, self.prefix, self.rows, self.timeout = rate, count, prefix, rows, timeout
        self.due = array("d", bytes(8 * count))
        self.end = array("d", bytes(8 * count))
        self.errors: dict[int, str] = {}
        self.lag_max = 0.0

    def _ok(self, rows, i):
        if i % 2 and not rows:
            self.errors[i] = "EmptyRead"  # the row was written before the run
        self.end[i] = time.monotonic()

    def _err(self, exc, i):
        self.errors[i] = type(exc).__name__
        self.end[i] = time.monotonic()

    def run(self) -> None:
        """Issues every request on schedule (sleeping until each is due; late ones at once)."""
        session, insert, select, timeout = self.session, self.insert, self.select, self.timeout
        t0 = time.monotonic()
        step = 1.0 / self.rate
        for i in range(self.count):
            due = t0 + i * step
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            else:
                self.lag_max = max(self.lag_max, now - due)
            self.due[i] = due
            try:
                if i % 2 == 0:
                    f = session.execute_async(insert, (f"{self.prefix}-{i}", i), timeout=timeout)
                else:
                    f = session.execute_async(select, (f"r{(i * 7919) % self.rows}",), timeout=timeout)
            except Exception as e:  # noqa: BLE001 (a refusal at send is counted like any error)
                self._err(e, i)
                continue
            f.add_callbacks(self._ok, self._err, callback_args=(i,), errback_args=(i,))

    def wait(self, bound: float) -> int:
        """Waits (at most ``bound`` s) until every request resolved; returns how many did not."""
        deadline = time.monotonic() + bound
        while True:
            left = self.end.count(0.0)
            if left == 0 or time.monotonic() >= deadline:
                return left
            time.sleep(0.01)

    def figures(self) -> dict:
        """Requests, successes, errors by class, unresolved, ops/s and latency (successes only)."""
        ok_lat: dict[str, list[float]] = {"write": [], "read": []}
        for i in range(self.count):
            if self.end[i] and i not in self.errors:
                ok_lat["read" if i % 2 else "write"].append(self.end[i] - self.due[i])
        ends = [e for e in self.end if e]
        succeeded = len(ok_lat["write"]) + len(ok_lat["read"])
        span = (max(ends) - self.due[0]) if ends else 0.0
        return {
            "requests": self.count,
            "succeeded": succeeded,
            "failed": dict(Counter(self.errors.values())),
            "hung": self.end.count(0.0),
            "ops_per_s": round(succeeded / span, 1) if span > 0 else None,
            "latency_ms": latency_summary(ok_lat["write"] + ok_lat["read"]),
            "write_latency_ms": latency_summary(ok_lat["write"]),
            "read_latency_ms": latency_summary(ok_lat["read"]),
            "issue_lag_max_ms": round(self.lag_max * 1000, 2),
        }


def _say(tag: str, payload: dict) -> None:
    print(f"{tag} {json.dumps(payload)}", flush=True)


def _expect_stdin(word: str) -> None:
    line = sys.stdin.readline().strip()
    if line != word:
        raise SystemExit(f"client: expected {word!r} from the runner, got {line!r}")


def client_main(args) -> int:
    """One driver's run of one scenario; the runner drives it through stdin/stdout (READY, GO,
    RESULT, EXIT)."""
    driver = args.client
    cluster, session, version = _connect(driver, args)
    try:
        insert = session.prepare(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)")
        select = session.prepare(f"SELECT v FROM {TABLE} WHERE k = ?")
        prefix = f"{driver}-{args.scenario}-{os.getpid()}"
        timeout = args.request_timeout
        if args.warmup > 0:
            n = max(2, int(args.rate * args.warmup))
            warm = Load(session, insert, select, args.rate, n, prefix + "-warm", args.rows, timeout)
            warm.run()
            warm.wait(timeout + DRAIN_MARGIN_S)
        _say("READY", {"connections": tcp_peers(), "version": version})
        _expect_stdin("GO")

        count = max(2, int(args.rate * args.duration))
        load = Load(session, insert, select, args.rate, count, prefix, args.rows, timeout)
        cpu0, t0 = process_cpu_s(), time.monotonic()
        load.run()
        hung = load.wait(timeout + DRAIN_MARGIN_S)
        cpu1, t1 = process_cpu_s(), time.monotonic()
        cpu_s = cpu1 - cpu0
        result = load.figures()
        cur, peak = rss_mb()
        result.update(
            driver=driver,
            version=version,
            scenario=args.scenario,
            rate=args.rate,
            duration_s=args.duration,
            hung=hung,
            wall_s=round(t1 - t0, 2),
            cpu_s=round(cpu_s, 3),
            cpu_us_per_request=round(cpu_s * 1e6 / count, 1),
            rss_mb=cur,
            peak_rss_mb=peak,
            connections_after=tcp_peers(),
        )
        _say("RESULT", result)
        _expect_stdin("EXIT")
    finally:
        cluster.shutdown()
    return 0
