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

This module is the runner (the proxies, the keyspace, one client process per run, ``main``);
the client is ``network_client`` (run as ``run_network.py --client DRIVER``), the scenarios
and their injection ``network_faults``, the report and the records ``network_report``.
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
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.network_client import (  # noqa: E402, F401 - Load ... tcp_peers: names of run_network, moved
    DRAIN_MARGIN_S,
    FIRST_ADDRESS,
    TABLE,
    Load,
    client_main,
    latency_summary,
    percentile,
    process_cpu_s,
    rss_mb,
    tcp_peers,
)
from benchmarks.network_faults import (  # noqa: E402, F401 - LATENCY, STREAMS, STREAM_NAMES: idem
    LATENCY,
    SCENARIOS,
    STREAM_NAMES,
    STREAMS,
    Stalls,
    apply_toxics,
    scenario_text,
)
from benchmarks.network_report import fmt, markdown, median_runs, reliability_records, unproxied  # noqa: E402, F401

DRIVERS = ("turbocql", "classic")
PROXY_PREFIX = "turbocql_network"
LOCAL_DC = "dc1"  # the contact point's, hence the clients' local DC


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
