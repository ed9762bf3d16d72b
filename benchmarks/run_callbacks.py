"""Latency of requests beside a user's slow Python: a retry policy that sleeps, and a
CPU-bound Python thread.

1. ``retry``: 10,000 reads through ``execute_async`` (at most ``--in-flight`` at once),
   with, in one run, a single failing request (consistency THREE on a one-node cluster:
   Unavailable) whose retry-policy subclass sleeps 200 ms before giving the error back.
   The p99 latency of the 10,000 is compared with a run without it. The policy runs off
   the engine's I/O thread, so only its own request waits.
2. ``spinner``: one thread runs sync reads at a steady rate while another Python thread
   spins (pure Python, never releasing the GIL of its own accord); p50/p99 per driver,
   turbocql and the classic driver in the same run, with and without the spinner. Both
   drivers hand the GIL back and forth with the spinning thread at the interpreter's
   switch interval (``sys.getswitchinterval()``, 5 ms): that bounds the added latency.

    .venv/bin/python benchmarks/run_callbacks.py --out benchmarks/results/callbacks-<date>.json

The classic driver is the one installed in the interpreter running this (the test venv
has it); ``--no-classic`` leaves it out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

QUERY = "SELECT key FROM system.local"


def percentiles(latencies):
    xs = sorted(latencies)

    def at(p):
        return xs[min(len(xs) - 1, int(p * len(xs)))] * 1e3

    return {"p50_ms": at(0.50), "p99_ms": at(0.99), "max_ms": xs[-1] * 1e3, "n": len(xs)}


def async_latencies(session, n, in_flight):
    """Latency of each of ``n`` reads, at most ``in_flight`` at once."""
    slots = threading.Semaphore(in_flight)
    done = threading.Event()
    latencies = []
    lock = threading.Lock()

    def finished(t0):
        with lock:
            latencies.append(time.perf_counter() - t0)
            if len(latencies) == n:
                done.set()
        slots.release()

    for _ in range(n):
        slots.acquire()
        t0 = time.perf_counter()
        f = session.execute_async(QUERY)
        f.add_callbacks(lambda _r, t0=t0: finished(t0), lambda _e, t0=t0: finished(t0))
    assert done.wait(120)
    return latencies


def retry_scenario(host, port, n, in_flight, sleep_s):
    from turbocql import ConsistencyLevel
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import RetryPolicy, RoundRobinPolicy

    class SleepingRetryPolicy(RetryPolicy):
        def on_unavailable(self, *args, **kwargs):
            time.sleep(sleep_s)
            return self.RETHROW, None

    profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(RoundRobinPolicy()),
        "three": ExecutionProfile(RoundRobinPolicy(), SleepingRetryPolicy(), consistency_level=ConsistencyLevel.THREE),
    }
    out = {}
    with Cluster([host], port=port, execution_profiles=profiles) as cluster:
        session = cluster.connect()
        async_latencies(session, 2000, in_flight)  # warm-up
        for label in ("without", "with", "without", "with"):
            failing = None
            if label == "with":
                failing = session.execute_async(QUERY, execution_profile="three")
                time.sleep(0.001)  # the failure reaches the policy while the reads run
            lat = async_latencies(session, n, in_flight)
            if failing is not None:
                try:
                    failing.result()
                except Exception:
                    pass
            out.setdefault(label, []).append(percentiles(lat))
    return out


def steady_sync(execute, n, rate):
    latencies = []
    t_start = time.perf_counter()
    for i in range(n):
        delay = t_start + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        t0 = time.perf_counter()
        execute()
        latencies.append(time.perf_counter() - t0)
    return latencies


def _sync_run(session, n, rate, spinning):
    """Steady sync reads, with a pure-Python thread spinning beside them if ``spinning``."""
    stop = threading.Event()

    def spin():
        x = 0
        while not stop.is_set():
            x += 1

    spinner = threading.Thread(target=spin, daemon=True)
    if spinning:
        spinner.start()
    try:
        return steady_sync(lambda: session.execute(QUERY), n, rate)
    finally:
        stop.set()
        if spinning:
            spinner.join()


def spinner_scenario(host, port, n, rate, classic):
    from turbocql.cluster import Cluster
    from turbocql.policies import RoundRobinPolicy

    drivers = {"turbocql": lambda: Cluster([host], port=port, load_balancing_policy=RoundRobinPolicy())}
    if classic:
        from cassandra.cluster import Cluster as ClassicCluster
        from cassandra.policies import RoundRobinPolicy as ClassicRoundRobin

        drivers["classic"] = lambda: ClassicCluster(
            [host], port=port, protocol_version=4, load_balancing_policy=ClassicRoundRobin()
        )
    out = {}
    for name, make in drivers.items():
        cluster = make()
        session = cluster.connect()
        for _ in range(500):
            session.execute(QUERY)
        for spinning in (False, True, False, True):
            lat = _sync_run(session, n, rate, spinning)
            out.setdefault(name, {}).setdefault("with spinner" if spinning else "alone", []).append(percentiles(lat))
        cluster.shutdown()
    return out


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--sleep", type=float, default=0.2, help="how long the retry policy sleeps (s)")
    ap.add_argument("--sync-requests", type=int, default=3000)
    ap.add_argument("--rate", type=float, default=500.0, help="sync reads per second")
    ap.add_argument("--no-classic", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()

    retry = retry_scenario(args.host, args.port, args.requests, args.in_flight, args.sleep)
    print("retry policy sleeping %.0f ms on one request, beside %d reads:" % (args.sleep * 1e3, args.requests))
    for label, runs in retry.items():
        print(
            "  %-8s p50 %.2f ms  p99 %.2f ms  max %.1f ms"
            % (label, median_of(runs, "p50_ms"), median_of(runs, "p99_ms"), median_of(runs, "max_ms"))
        )
    ratio = median_of(retry["with"], "p99_ms") / median_of(retry["without"], "p99_ms")
    print("  p99 with / without: %.2f" % ratio)

    spinner = spinner_scenario(args.host, args.port, args.sync_requests, args.rate, not args.no_classic)
    print(
        "sync reads at %.0f/s, beside a CPU-bound Python thread (switch interval %.1f ms):"
        % (args.rate, sys.getswitchinterval() * 1e3)
    )
    for driver, cases in spinner.items():
        for label, runs in cases.items():
            print(
                "  %-9s %-13s p50 %.2f ms  p99 %.2f ms"
                % (driver, label, median_of(runs, "p50_ms"), median_of(runs, "p99_ms"))
            )
    if args.out:
        report = {"args": vars(args), "retry": retry, "retry_p99_ratio": ratio, "spinner": spinner}
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
