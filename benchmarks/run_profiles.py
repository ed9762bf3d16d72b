"""Client CPU per request of the classic profile idioms on the sync path: a plain
``execute``, one with a named profile, and the clone-per-request idiom
(``execute(..., execution_profile=session.execution_profile_clone_update(...))`` on every
request), measured alternately in rounds, compared by medians.

Client CPU is the process's CPU time (every thread: the application's, the engine's I/O
threads) per request. The clone idiom makes a new profile on each request, so this shows
what one costs the engine beside the plain request.

    python benchmarks/run_profiles.py --requests 20000 --rounds 5 \\
        --out benchmarks/results/profiles-<date>.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from turbocql import ConsistencyLevel
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()

    profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(TokenAwarePolicy(DCAwareRoundRobinPolicy())),
        "other": ExecutionProfile(TokenAwarePolicy(DCAwareRoundRobinPolicy()), consistency_level=ConsistencyLevel.ONE),
    }
    cluster = Cluster([args.host], port=args.port, execution_profiles=profiles)
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS bench_profiles WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS bench_profiles.kv (k int PRIMARY KEY, v int)")
    read = session.prepare("SELECT v FROM bench_profiles.kv WHERE k = ?")
    session.execute("INSERT INTO bench_profiles.kv (k, v) VALUES (1, 1)")

    def plain(n):
        for _ in range(n):
            session.execute(read, (1,))

    def named(n):
        for _ in range(n):
            session.execute(read, (1,), execution_profile="other")

    def clone(n):
        for _ in range(n):
            ep = session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, consistency_level=ConsistencyLevel.ONE)
            session.execute(read, (1,), execution_profile=ep)

    patterns = {"plain": plain, "named profile": named, "clone per request": clone}
    for run in patterns.values():
        run(2000)  # warm-up
    rounds = {name: [] for name in patterns}
    for r in range(args.rounds):
        order = list(patterns) if r % 2 == 0 else list(reversed(patterns))
        for name in order:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            patterns[name](args.requests)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            rounds[name].append({"cpu_us": cpu / args.requests * 1e6, "ops": args.requests / wall})
    cluster.shutdown()

    base = statistics.median(x["cpu_us"] for x in rounds["plain"])
    rows = []
    print("%-18s %12s %10s %10s %14s" % ("pattern", "CPU µs/req", "vs plain", "ops/s", "CPU spread"))
    for name, runs in rounds.items():
        cpu = statistics.median(x["cpu_us"] for x in runs)
        ops = statistics.median(x["ops"] for x in runs)
        spread = "%.1f–%.1f" % (min(x["cpu_us"] for x in runs), max(x["cpu_us"] for x in runs))
        rows.append({"pattern": name, "cpu_us": cpu, "ratio": cpu / base, "ops": ops, "rounds": runs})
        print("%-18s %12.1f %9.2f× %10.0f %14s" % (name, cpu, cpu / base, ops, spread))
    if args.out:
        report = {"requests": args.requests, "rounds": args.rounds, "results": rows}
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
