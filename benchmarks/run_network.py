"""Row 13 of the faults matrix (issue 15): a slow network, through toxiproxy, turbocql beside the classic driver.

What it measures: for each network scenario and each driver, a fixed-rate (open-loop) load of
prepared one-row writes and reads at LOCAL_QUORUM through ``execute_async`` on the local 3-node
cluster (127.0.0.11-13, ``turbocql localdb cluster``; dc1: node1, node2, dc2: node3), with every
client connection going through a toxiproxy proxy: ops/s achieved, latency p50 / p95 / p99 / max
(from each request's scheduled send time to its callback, so a late send counts), errors by
class, requests never resolved, and the client's CPU µs per request (``getrusage`` of the client
process around the timed section; each driver runs in its own process).

Scenarios (``--scenarios``, default all four, in this order):

* ``baseline``: the proxies, no toxic.
* ``latency-20ms``: a ``latency`` toxic of 20 ms ± 10 ms (uniform jitter) on both directions of
  every node's proxy (so about 40 ms more per round trip).
* ``latency-50ms``: the same with 50 ms ± 40 ms.
* ``stalls``: intermittent stalls of one connection direction, as TCP's retransmission timeout
  after a lost segment causes them (packet loss itself cannot be injected here: the kernel has no
  ``sch_netem``). One stall at a time, an exponential gap of mean ``--stall-gap-ms`` (750 ms)
  between them: the proxy of node1 or node2 (dc1, the coordinators of every LOCAL_QUORUM
  request: node3, in dc2, is sent none) and a random direction (requests or responses) hold all
  their data for ``--stall-ms`` (uniform 200-300 ms: Linux's minimum RTO of 200 ms plus the
  time to notice), then deliver it at once, in order. It is made with a ``latency`` toxic of
  that length, added for exactly that long (toxiproxy releases what it holds when a toxic is
  removed). Not toxiproxy's ``toxicity``: that is a per-connection probability drawn once when a
  toxic is added, so ``latency 200 ms, toxicity 0.01`` would slow 1% of the connections all the
  time, not 1% of the segments.

How: the runner creates one proxy per node on the node's own address at ``--proxy-port`` (19042)
-> the node's 9042 (``Toxiproxy.proxy_nodes``) on the toxiproxy server at 127.0.0.1:8475 (found
running, or built and started here, and then stopped). Each client connects to
127.0.0.11:19042: turbocql's engine reaches every peer at its IP with the contact point's port;
the classic driver (cassandra-driver, ``protocol_version=4``) would use the port that
``system.peers_v2`` gives (9042), so it gets an ``endpoint_factory`` that keeps the cluster's
port. After connecting, each client checks its own TCP connections (``/proc``) and reports
them; the report flags a client with a connection that is not to a proxy. Before the first run
the runner warms the nodes up with ``--server-warmup`` s (10) of the same load (turbocql, untimed),
so that the first run is not the only one to meet cold servers. Each client warms up
(``--warmup`` s of the same load, no toxic), says READY; the runner adds the scenario's toxics
and says GO; the client runs ``--rate`` requests/s (writes and reads alternately; writes of
distinct keys, reads of rows written before) for ``--duration`` s, waits for every request
(at most ``--request-timeout`` + 10 s) and reports; the runner removes the toxics while the
client's connections are still open (toxiproxy 2.5.0 wedges when a data-holding toxic is
removed from a connection the client already closed), then lets the client shut down. The two
drivers alternate which runs first from one scenario to the next. ``--repeat N`` runs everything
N times in rounds (the order flipping each round) and reports, per scenario and driver, the run
with the median p99, every run's p99 beside it, and the errors of every run.

Run (the cluster must be running, every node UP; about 4 minutes with the defaults)::

    turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11     # if it is not running
    .venv/bin/python benchmarks/run_network.py
    .venv/bin/python benchmarks/run_network.py --scenarios baseline,stalls --rate 200 --duration 5

Writes benchmarks/results/network-<date>.json and .md (``--out PATH``: the JSON's path, the
Markdown beside it) and, when ``$TURBOCQL_RELIABILITY_OUT`` names a file, one record per scenario
per driver in the reliability report's format (row "13").
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import platform
import queue
import random
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package

FIRST_ADDRESS = "127.0.0.11"
DRIVERS = ("turbocql", "classic")
SCENARIOS = ("baseline", "latency-20ms", "latency-50ms", "stalls")
LATENCY = {"latency-20ms": (20, 10), "latency-50ms": (50, 40)}  # ms, jitter ms (each direction)
PROXY_PREFIX = "turbocql_network"
LOCAL_DC = "dc1"  # the contact point's, hence the clients' local DC
STREAMS = ("upstream", "downstream")
STREAM_NAMES = {"upstream": "requests", "downstream": "responses"}
TABLE = "t"
DRAIN_MARGIN_S = 10.0  # beyond the request timeout, the bound on waiting for every request


# ---------------------------------------------------------------------------------------------
# Figures (shared by the client and the report)


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


# ---------------------------------------------------------------------------------------------
# The client (one driver, one scenario, in its own process: ``--client DRIVER``)


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


# ---------------------------------------------------------------------------------------------
# The runner


class ClientProcess:
    """A client subprocess and its tagged stdout lines (READY / RESULT)."""

    def __init__(self, cmd: list[str]):
        self.stderr = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, cwd=ROOT
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, tag: str, timeout: float) -> dict:
        """The payload of the next ``tag`` line; RuntimeError on exit, timeout or bad line."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no {tag} from the client within {timeout:.0f} s") from None
            if line is None:
                raise RuntimeError(f"the client exited before {tag}: {self.error_tail()}")
            if line.startswith(tag + " "):
                return json.loads(line[len(tag) + 1 :])

    def send(self, word: str) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(word + "\n")
            self.proc.stdin.flush()

    def error_tail(self) -> str:
        self.stderr.seek(0)
        lines = [ln for ln in self.stderr.read().strip().splitlines() if ln.strip()]
        return (lines[-1] if lines else f"exit code {self.proc.poll()}")[:300]

    def finish(self, timeout: float) -> int | None:
        """Says EXIT and waits for the process (killed after ``timeout``)."""
        self.send("EXIT")
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.stderr.close()
        return rc


class Stalls:
    """The ``stalls`` scenario's injector: one stall at a time, an exponential gap between
    them; each holds one direction of one node's proxy for a uniform length (a ``latency``
    toxic of that length, added for that long). Keeps every stall's proxy, direction, planned
    length and measured window."""

    def __init__(self, proxies, gap_ms: float, stall_ms: tuple[int, int], seed: int):
        self.proxies, self.gap_ms, self.stall_ms = proxies, gap_ms, stall_ms
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.done: list[dict] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(self.rng.expovariate(1000.0 / self.gap_ms)):
            proxy = self.rng.choice(self.proxies)
            stream = self.rng.choice(STREAMS)
            length = self.rng.randint(*self.stall_ms)
            a0 = time.monotonic()
            try:
                proxy.add_toxic("latency", stream, 1.0, name="stall", latency=length, jitter=0)
            except Exception as e:  # noqa: BLE001 (reported, and the stalls stop)
                self.errors.append(f"add: {e}")
                return
            a1 = time.monotonic()
            time.sleep(max(0.0, length / 1000 - (a1 - a0)))
            r0 = time.monotonic()
            try:
                proxy.remove_toxic("stall", missing_ok=True)
            except Exception as e:  # noqa: BLE001
                self.errors.append(f"remove: {e}")
                return
            r1 = time.monotonic()
            self.done.append(
                {
                    "node": proxy.upstream.rsplit(":", 1)[0],
                    "direction": STREAM_NAMES[stream],
                    "at_s": round(a0 - t0, 3),
                    "planned_ms": length,
                    # The toxic took effect during the add call and ended during the remove call.
                    "window_ms": [round((r0 - a1) * 1000, 1), round((r1 - a0) * 1000, 1)],
                }
            )

    def finish(self) -> dict:
        self.stop.set()
        self.thread.join(30)
        n = len(self.done)
        span = sum((s["window_ms"][0] + s["window_ms"][1]) / 2 for s in self.done)
        return {
            "stalls": n,
            "stall_ms_mean": round(span / n, 1) if n else None,
            "stalled_ms_total": round(span, 1),
            "by_direction": dict(Counter(s["direction"] for s in self.done)),
            "by_node": dict(Counter(s["node"] for s in self.done)),
            "errors": self.errors,
            "each": self.done,
        }


def scenario_text(name: str, args) -> str:
    """What a scenario injects, in words (the report's and the records' ``injected``)."""
    if name == "baseline":
        return "no toxic: every connection through its node's toxiproxy proxy"
    if name in LATENCY:
        lat, jit = LATENCY[name]
        return (
            f"latency toxic {lat} ms ± {jit} ms (uniform) on both directions of every node's proxy "
            f"(round trip +{2 * lat} ms on average)"
        )
    lo, hi = args.stall_ms
    return (
        f"intermittent stalls as a TCP retransmission timeout after a lost segment causes them: one at a "
        f"time, exponential gaps of mean {args.stall_gap_ms:.0f} ms, each holding ALL data of one direction "
        f"of the proxy of node1 or node2 (dc1, the coordinators) for {lo}-{hi} ms (uniform) and then "
        f"delivering it at once, in order "
        f"(a latency toxic of that length added for that long); no packet is lost (no sch_netem here)"
    )


def apply_toxics(name: str, proxies) -> None:
    if name in LATENCY:
        lat, jit = LATENCY[name]
        for p in proxies:
            for stream in STREAMS:
                p.latency(lat, jitter=jit, stream=stream)


def run_one(args, driver: str, scenario: str, proxies, stall_proxies) -> dict:
    """One client process through one scenario; its RESULT (or ``{"run_failed": why}``).
    ``stall_proxies``: the proxies the ``stalls`` scenario stalls (the local DC's)."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--client",
        driver,
        "--scenario",
        scenario,
        "--keyspace",
        args.keyspace,
        "--proxy-port",
        str(args.proxy_port),
        "--rate",
        str(args.rate),
        "--duration",
        str(args.duration),
        "--warmup",
        str(args.warmup),
        "--rows",
        str(args.rows),
        "--request-timeout",
        str(args.request_timeout),
    ]
    client = ClientProcess(cmd)
    stalls = None
    result: dict
    try:
        ready = client.expect("READY", 120 + args.warmup)
        apply_toxics(scenario, proxies)
        if scenario == "stalls":
            stalls = Stalls(stall_proxies, args.stall_gap_ms, args.stall_ms, args.seed)
            stalls.start()
        client.send("GO")
        result = client.expect("RESULT", args.duration + args.request_timeout + DRAIN_MARGIN_S + 120)
        result["connections"] = ready["connections"]
    except RuntimeError as e:
        result = {"run_failed": str(e)}
    finally:
        # Toxics off while the client's connections are still open (see the docstring).
        if stalls is not None:
            stall_figures = stalls.finish()
        for p in proxies:
            with contextlib.suppress(Exception):
                p.reset()
        rc = client.finish(60)
    if stalls is not None:
        result["stalls"] = stall_figures
    if rc not in (0, None) and "run_failed" not in result:
        result["exit_code"] = rc
    result.update(driver=driver, scenario=scenario)
    return result


def unproxied(result: dict, proxy_port: int) -> list[str]:
    """The remote addresses of a client's connections that are not to a proxy."""
    return [a for a in result.get("connections", {}) if not a.endswith(f":{proxy_port}")]


def setup_keyspace(keyspace: str, rows: int) -> None:
    """The keyspace (dc1: 2, dc2: 1), its table and the rows the reads go over, written at ALL
    straight to the nodes (not through the proxies)."""
    from turbocql import ConsistencyLevel
    from turbocql.cluster import Cluster
    from turbocql.concurrent import execute_concurrent_with_args

    cluster = Cluster([FIRST_ADDRESS])
    try:
        s = cluster.connect()
        s.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}",
            timeout=60,
        )
        s.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{TABLE} (k text PRIMARY KEY, v int)", timeout=60)
        insert = s.prepare(f"INSERT INTO {keyspace}.{TABLE} (k, v) VALUES (?, ?)")
        insert.consistency_level = ConsistencyLevel.ALL
        results = execute_concurrent_with_args(
            s, insert, [(f"r{i}", i) for i in range(rows)], concurrency=50, raise_on_first_error=True
        )
        assert all(r.success for r in results)
    finally:
        cluster.shutdown()


def drop_keyspace(keyspace: str) -> None:
    from turbocql.cluster import Cluster

    cluster = Cluster([FIRST_ADDRESS])
    try:
        cluster.connect().execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    finally:
        cluster.shutdown()


def median_runs(runs: list[dict]) -> list[dict]:
    """Repeated runs (``--repeat``) collapsed per (scenario, driver), in first-seen order: the
    run with the median p99 (the lower middle one for an even count), carrying ``runs`` (each
    run's round, ops/s, latency, CPU, errors) and ``all_runs`` (requests, successes, errors by
    class and unresolved requests summed over every run); a pair whose runs all failed keeps its
    first failure. One run per pair: unchanged."""
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["scenario"], r["driver"]), []).append(r)
    out = []
    for group in groups.values():
        ok = sorted((r for r in group if "run_failed" not in r), key=lambda r: r["latency_ms"]["p99"] or 0.0)
        if not ok:
            out.append(group[0])
            continue
        chosen = dict(ok[(len(ok) - 1) // 2])
        if len(group) > 1:
            failed: Counter = Counter()
            for r in ok:
                failed.update(r["failed"])
            chosen["runs"] = [
                {k: r.get(k) for k in ("round", "ops_per_s", "latency_ms", "cpu_us_per_request", "failed", "hung")}
                for r in group
            ]
            chosen["all_runs"] = {
                "runs": len(group),
                "failed_runs": len(group) - len(ok),
                "requests": sum(r["requests"] for r in ok),
                "succeeded": sum(r["succeeded"] for r in ok),
                "failed": dict(failed),
                "hung": sum(r["hung"] for r in ok),
            }
        out.append(chosen)
    return out


def fmt(x, digits: int = 1) -> str:
    return "" if x is None else f"{x:,.{digits}f}"


def markdown(results: list[dict], meta: dict, args) -> str:
    lines = [
        "# Row 13: a slow network (toxiproxy), turbocql and the classic driver",
        "",
        f"{meta['date']}, `{meta['command']}`",
        "",
        meta["heading"],
        "",
        "| scenario | driver | requests | ops/s | p50 ms | p95 ms | p99 ms | max ms | errors | never resolved "
        "| client CPU µs/req | late sends max ms | peak RSS MiB | p99 ms of each run |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        name = r["driver"] + (f" {r['version']}" if r.get("version") else "")
        if "run_failed" in r:
            lines.append(f"| {r['scenario']} | {name} | failed: {r['run_failed'].replace('|', '/')} |" + " |" * 11)
            continue
        lat = r["latency_ms"]
        every = r.get("all_runs", r)  # errors and unresolved requests: every run's
        errors = ", ".join(f"{k} {v}" for k, v in sorted(every["failed"].items())) or "0"
        p99s = (
            ", ".join(fmt(x["latency_ms"]["p99"], 1) for x in r["runs"] if x.get("latency_ms")) if "runs" in r else ""
        )
        lines.append(
            f"| {r['scenario']} | {name} | {r['requests']:,} | {fmt(r['ops_per_s'])} | {fmt(lat['p50'], 2)} "
            f"| {fmt(lat['p95'], 2)} | {fmt(lat['p99'], 2)} | {fmt(lat['max'], 1)} | {errors} | {every['hung']} "
            f"| {fmt(r['cpu_us_per_request'])} | {fmt(r['issue_lag_max_ms'], 1)} | {fmt(r['peak_rss_mb'])} | {p99s} |"
        )
    lines += ["", "Scenarios:", ""]
    for name in meta["scenarios"]:
        lines.append(f"* `{name}`: {scenario_text(name, args)}.")
    stall_runs = [r for r in results if r.get("stalls")]
    if stall_runs:
        lines += ["", "Stalls injected during each `stalls` run:", ""]
        for r in stall_runs:
            s = r["stalls"]
            lines.append(
                f"* {r['driver']}: {s['stalls']} stalls, mean {fmt(s['stall_ms_mean'])} ms, "
                f"{fmt(s['stalled_ms_total'] / 1000, 2)} s in all over {args.duration:g} s of load "
                f"(by direction {s['by_direction']}, by node {s['by_node']})"
                + (f"; injector errors: {s['errors']}" if s["errors"] else "")
            )
    lines += ["", "Connections of each client after its warm-up (remote address: count):", ""]
    for r in results:
        if "connections" in r:
            bad = unproxied(r, args.proxy_port)
            flag = f" **NOT THROUGH A PROXY: {bad}**" if bad else ""
            lines.append(f"* {r['scenario']}, {r['driver']}: {r['connections']}{flag}")
    lines += [
        "",
        "Latency is from each request's scheduled send time to its callback, over the requests that "
        "succeeded; ops/s are successes over the time from the first scheduled send to the last callback. "
        "Client CPU is user + system time of the client process (all its threads) from the start of the "
        "load until every request resolved, divided by the requests issued. Late sends: how far behind "
        "its schedule the load's thread sent a request (the client itself falling behind).",
    ]
    return "\n".join(lines) + "\n"


def reliability_records(results: list[dict], args) -> None:
    from benchmarks.harness import reliability

    for r in results:
        figures: dict = {"injected": scenario_text(r["scenario"], args), "driver": r["driver"]}
        if "run_failed" in r:
            figures["notes"] = "the run failed: " + r["run_failed"]
        else:
            lat = r["latency_ms"]
            every = r.get("all_runs", r)  # the correctness figures of every run
            figures.update(
                requests=every["requests"],
                succeeded=every["succeeded"],
                failed=every["failed"],
                hung=every["hung"],
                peak_rss_mb=r["peak_rss_mb"],
                ops_per_s=r["ops_per_s"],
                latency_ms=lat,
                cpu_us_per_request=r["cpu_us_per_request"],
                notes=(
                    f"{r['driver']} {r.get('version', '')}: {args.rate:g} req/s open loop for {args.duration:g} s, "
                    f"LOCAL_QUORUM one-row writes and reads; {r['ops_per_s']} ops/s, p50 {lat['p50']} ms, "
                    f"p99 {lat['p99']} ms, max {lat['max']} ms, {r['cpu_us_per_request']} µs CPU/request"
                    + (
                        f" (the run with the median p99 of {len(r['runs'])}; p99 of each: "
                        f"{[x['latency_ms']['p99'] for x in r['runs'] if x.get('latency_ms')]} ms)"
                        if "runs" in r
                        else ""
                    )
                ),
            )
        reliability.record("13", f"slow network, {r['scenario']}: {r['driver']}", **figures)


def parse_stall_ms(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition(":")
    a, b = int(lo), int(hi or lo)
    if not 0 < a <= b:
        raise argparse.ArgumentTypeError(f"--stall-ms is MIN:MAX in ms with 0 < MIN <= MAX, not {text!r}")
    return a, b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"comma-separated: {', '.join(SCENARIOS)}")
    ap.add_argument("--drivers", default=",".join(DRIVERS), help="comma-separated: turbocql,classic")
    ap.add_argument("--rate", type=float, default=500.0, help="requests per second, open loop (default 500)")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of timed load per run (default 20)")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of the same load before timing (default 3)")
    ap.add_argument("--rows", type=int, default=1000, help="rows the reads go over (default 1000)")
    ap.add_argument(
        "--server-warmup", type=float, default=10.0, help="seconds of untimed load before the first run (default 10)"
    )
    ap.add_argument("--request-timeout", type=float, default=5.0, help="each request's timeout, s (default 5)")
    ap.add_argument("--keyspace", default="turbocql_network")
    ap.add_argument("--keep-keyspace", action="store_true", help="do not drop the keyspace at the end")
    ap.add_argument("--proxy-port", type=int, default=19042, help="the proxies' port on each node's address")
    ap.add_argument("--api-port", type=int, default=8475, help="toxiproxy's API port on 127.0.0.1")
    ap.add_argument("--stall-gap-ms", type=float, default=750.0, help="stalls: mean gap between stalls (ms)")
    ap.add_argument(
        "--stall-ms", type=parse_stall_ms, default=(200, 300), help="stalls: MIN:MAX length in ms (default 200:300)"
    )
    ap.add_argument("--seed", type=int, default=13, help="the stalls' random seed")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every (scenario, driver) N times in interleaved rounds and report the run with the median p99",
    )
    ap.add_argument("--out", default=None, metavar="PATH", help="the JSON (default results/network-<date>.json)")
    # The client's own mode (run by the runner): one driver through one scenario.
    ap.add_argument("--client", choices=DRIVERS, help=argparse.SUPPRESS)
    ap.add_argument("--scenario", default="baseline", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.client:
        return client_main(args)

    scenarios = [s for s in args.scenarios.split(",") if s]
    drivers = [d for d in args.drivers.split(",") if d]
    for s in scenarios:
        if s not in SCENARIOS:
            ap.error(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)})")
    for d in drivers:
        if d not in DRIVERS:
            ap.error(f"unknown driver {d!r} (known: {', '.join(DRIVERS)})")

    import turbocql_localdb as localdb
    from turbocql_localdb import toxiproxy

    # The runner's own sessions (keyspace set-up) name no load-balancing policy: no warning.
    logging.getLogger("turbocql.cluster").setLevel(logging.ERROR)
    cluster = localdb.find_cluster(first_address=FIRST_ADDRESS)
    if cluster is None or not cluster.is_up():
        print(f"the 3-node cluster at {FIRST_ADDRESS} is not running with every node UP", file=sys.stderr)
        print("  (start it with: turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11)", file=sys.stderr)
        return 2
    api = toxiproxy.find_server(port=args.api_port)
    server = None
    if api is None:
        print("starting toxiproxy ...", file=sys.stderr)
        server = toxiproxy.start_server(port=args.api_port, out=lambda *a, **k: print(*a, file=sys.stderr))
        api = server.client()
    proxies = []
    load_start = os.getloadavg()[0]
    results: list[dict] = []
    try:
        try:
            proxies = api.proxy_nodes(cluster.contact_points, listen_port=args.proxy_port, prefix=PROXY_PREFIX)
            local = [p for p, n in zip(proxies, cluster.nodes) if n.datacenter == LOCAL_DC]
        except toxiproxy.ToxiproxyError as e:
            print(f"cannot create the proxies on port {args.proxy_port} ({e}); try --proxy-port", file=sys.stderr)
            return 2
        setup_keyspace(args.keyspace, args.rows)
        if args.server_warmup > 0:
            # The nodes warm up (JIT, caches) before anything is timed, so the first run is not
            # the only one to meet cold servers; the client is turbocql, its figures dropped.
            print(f"warming the cluster up ({args.server_warmup:g} s, untimed) ...", file=sys.stderr)
            warm = run_one(
                argparse.Namespace(**{**vars(args), "duration": args.server_warmup}),
                "turbocql",
                "baseline",
                proxies,
                [],
            )
            if "run_failed" in warm:
                print(f"  warm-up failed: {warm['run_failed']}", file=sys.stderr)
        for rnd, (n, scenario) in ((i, s) for i in range(max(1, args.repeat)) for s in enumerate(scenarios)):
            for driver in drivers if (n + rnd) % 2 == 0 else drivers[::-1]:
                print(f"{scenario:>13} {driver:>8} ...", end=" ", file=sys.stderr, flush=True)
                r = run_one(args, driver, scenario, proxies, local)
                r["round"] = rnd
                results.append(r)
                if "run_failed" in r:
                    print(r["run_failed"], file=sys.stderr)
                else:
                    lat = r["latency_ms"]
                    print(
                        f"{r['ops_per_s']} ops/s, p50 {lat['p50']} p99 {lat['p99']} max {lat['max']} ms, "
                        f"errors {r['failed'] or 0}, hung {r['hung']}, {r['cpu_us_per_request']} µs CPU/req",
                        file=sys.stderr,
                    )
                    bad = unproxied(r, args.proxy_port)
                    if bad:
                        print(f"  WARNING: connections not through a proxy: {bad}", file=sys.stderr)
    finally:
        for p in proxies:
            with contextlib.suppress(Exception):
                p.reset()
                p.delete()
        if server is not None:
            server.stop()
    if not args.keep_keyspace:
        with contextlib.suppress(Exception):
            drop_keyspace(args.keyspace)

    all_runs = results
    results = median_runs(all_runs)
    order = {s: i for i, s in enumerate(scenarios)}
    results.sort(key=lambda r: (order[r["scenario"]], DRIVERS.index(r["driver"])))
    command = "python benchmarks/run_network.py " + " ".join(sys.argv[1:] if argv is None else argv)
    heading = (
        f"{args.rate:g} requests/s open loop for {args.duration:g} s per run (after {args.warmup:g} s of warm-up), "
        f"prepared one-row writes (distinct keys) and reads (over {args.rows:,} rows) alternately at LOCAL_QUORUM "
        f"(the cluster warmed up by {args.server_warmup:g} s of the same load first) "
        f"through execute_async, request timeout {args.request_timeout:g} s; keyspace replicated dc1: 2, dc2: 1 "
        f"on the local 3-node cluster ({', '.join(cluster.contact_points)}), every client connection through "
        f"toxiproxy {toxiproxy.TOXIPROXY_VERSION} ({', '.join(p.listen + ' -> ' + p.upstream for p in proxies)}); "
        f"each driver in its own process, the classic driver on protocol v4; "
        + (
            f"every (scenario, driver) run {args.repeat} times in interleaved rounds (which driver runs first "
            "flips each round), the run with the median p99 shown, errors and unresolved requests of every run; "
            if args.repeat > 1
            else ""
        )
        + f"{os.cpu_count()} CPUs shared with "
        f"the nodes and the proxy; 1-min load average {load_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end."
    )
    meta = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": command.strip(),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "scenarios": scenarios,
        "scenario_text": {s: scenario_text(s, args) for s in scenarios},
        "rate": args.rate,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "server_warmup_s": args.server_warmup,
        "repeat": args.repeat,
        "request_timeout_s": args.request_timeout,
        "proxy_port": args.proxy_port,
        "toxiproxy": toxiproxy.TOXIPROXY_VERSION,
        "heading": heading,
    }
    path = Path(args.out) if args.out else HERE / "results" / f"network-{dt.datetime.now():%Y-%m-%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "results": results, "runs": all_runs}, indent=1) + "\n")
    md = path.with_suffix(".md")
    md.write_text(markdown(results, meta, args))
    print(f"results: {path}, {md}", file=sys.stderr)
    reliability_records(results, args)
    failed = [r for r in results if "run_failed" in r or unproxied(r, args.proxy_port)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
