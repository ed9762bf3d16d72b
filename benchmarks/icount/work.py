"""One request path, N requests, for instruction counts under callgrind (benchmarks/icount/icount.sh).

Usage: work.py PATH WORKLOAD N, PATH one of sync, futures (120 callback chains), unthrottled
(execute_async of every request, then every result), concurrent
(execute_concurrent_with_args, 120 in flight), pipeline (WritePipeline / ReadPipeline), asyncio
(120 coroutines); WORKLOAD write (prepared INSERT of 3 text columns) or read (one-row SELECT).

With TURBOCQL_BENCH_PROFILE=dc-token the session's default execution profile is
TokenAwarePolicy(DCAwareRoundRobinPolicy("datacenter1")) (a build without execution
profiles accepts the argument and runs its own routing, which is the "before" of this case).
With TURBOCQL_BENCH_METRICS=on the cluster counts metrics (``metrics_enabled=True``).
With TURBOCQL_BENCH_TRACING=on it is instrumented (``turbocql.tracing.instrument``, an SDK
tracer provider with no span processor: the spans are made and dropped).
"""

import asyncio
import os
import sys

from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.concurrent import ReadPipeline, WritePipeline, execute_concurrent_with_args
from turbocql.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

path, workload, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
profiles = None
if os.environ.get("TURBOCQL_BENCH_PROFILE") == "dc-token":
    lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy("datacenter1"))
    profiles = {EXEC_PROFILE_DEFAULT: ExecutionProfile(load_balancing_policy=lbp)}
extra = {"unresponsive_node_threshold": None} if os.environ.get("TURBOCQL_BENCH_UNRESPONSIVE") == "off" else {}
if os.environ.get("TURBOCQL_BENCH_METRICS") == "on":
    extra["metrics_enabled"] = True
c = Cluster(["127.0.0.1"], execution_profiles=profiles, **extra)
if os.environ.get("TURBOCQL_BENCH_TRACING") == "on":
    from opentelemetry.sdk.trace import TracerProvider

    import turbocql.tracing

    turbocql.tracing.instrument(c, tracer_provider=TracerProvider())
s = c.connect()
s.execute("CREATE KEYSPACE IF NOT EXISTS abk WITH replication = {'class':'SimpleStrategy','replication_factor':1}")
s.execute("CREATE TABLE IF NOT EXISTS abk.t (k text PRIMARY KEY, a text, b text)")
ins = s.prepare("INSERT INTO abk.t (k, a, b) VALUES (?, ?, ?)")
sel = s.prepare("SELECT k, a, b FROM abk.t WHERE k = ?")
stmt = ins if workload == "write" else sel
params = [("k%d" % (i % 1000), "a", "b") if workload == "write" else ("k%d" % (i % 1000),) for i in range(n)]
if path == "sync":
    for p in params:
        s.execute(stmt, p).one()
elif path == "futures":
    import threading

    done = threading.Event()
    left = [n]
    it = iter(params)
    lock = threading.Lock()

    def nxt():
        # Called by the dispatcher thread only (from fin), after the first 120.
        p = next(it, None)
        if p is not None:
            s.execute_async(stmt, p).add_callbacks(fin, fin)

    def fin(_):
        with lock:
            left[0] -= 1
            if left[0] == 0:
                done.set()
        nxt()

    for _ in range(120):
        nxt()
    done.wait()
elif path == "unthrottled":
    # Every request submitted before any result is awaited (future_full_throttle.py).
    futures = [s.execute_async(stmt, p) for p in params]
    for f in futures:
        f.result().one()
elif path == "concurrent":
    execute_concurrent_with_args(s, stmt, params, concurrency=120)
elif path == "pipeline":
    if workload == "write":
        with WritePipeline(s) as wp:
            for p in params:
                wp.execute(stmt, p)
    else:
        rp = ReadPipeline(s)
        for p in params:
            rp.execute(stmt, p)
        for r in rp.results():
            r.one()
elif path == "asyncio":
    from turbocql.aio import Session

    async def main():
        a = Session(s)
        it = iter(params)

        async def worker():
            for p in it:
                (await a.execute(stmt, p)).one()

        await asyncio.gather(*(worker() for _ in range(120)))

    asyncio.run(main())
c.shutdown()
