"""The connections scenario's CQL table, the drivers (issue 17, section 2): turbocql and the
classic driver holding N connections to ``cql-responder``, N requests in flight (runner
``benchmarks/run_cql_connections.py``).

One ``--client`` and ``--model`` per process:

* ``turbocql``: ``Cluster(connections_per_host=N)``, one node (the responder), N connections
  in its pool; models ``execute_concurrent`` (``execute_concurrent_with_args(session,
  prepared, [(1,)] * chunk, concurrency=N)`` called back to back, each chunk about a quarter
  of the window; the engine hands no per-request times back, so the latency given is the mean,
  N / rate, by Little's law), ``asyncio`` (``turbocql.aio``, N coroutines each awaiting
  ``session.execute``) and ``futures`` (N callback chains: ``execute_async`` +
  ``add_callbacks``, the callback submits the next request);
* ``classic`` (the cassandra-driver): with protocol v4 it holds ONE connection per host,
  whatever the pool settings, so the responder plays N nodes (``--nodes N``, one per
  127.0.0.x address, each listed in the others' ``system.peers``) and the driver holds N
  connections, one per host, requests spread round robin (``RoundRobinPolicy``); models
  ``default`` (the driver's default reactor, libev where its extension is built) and
  ``asyncio`` (``AsyncioConnection``), both driven by N callback chains as ``futures``.

Every client first waits until the server counts N + 1 open connections (the pool and the
control connection; ``--count-query``, one row of one bigint: the responder's ``SELECT
connections FROM responder.stats`` by default, ``SELECT COUNT(*) FROM system_views.clients``
against a Cassandra node, 4.0 or later), since pools fill in the background, then prepares
``SELECT k, v FROM bench.kv WHERE k = ?`` and runs. Requests that
complete within the window (after ``--warmup`` s, for ``--seconds``) are counted and timed
(submit → result, ``perf_counter_ns``), ``getrusage`` taken at the window's ends (user and
system time of all the process's threads: the engine's too). Prints one JSON line (the keys
of ``pingpong.py``'s), or ``{"failed": ...}`` when the connections cannot be opened or held
(the runner's "FF").

``--setup`` (no ``--client``): against a real node, create keyspace ``bench`` and table
``kv (k int PRIMARY KEY, v text)`` holding the one row the clients read (k = 1, the
responder's 16-character value), check that the count query answers, and print the node's
``release_version`` as one JSON line (``{"failed": ...}`` if the node cannot be reached).
"""

from __future__ import annotations

import argparse
import array
import os
import resource
import sys
import threading
import time

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.pingpong_common import (  # noqa: E402
    Failed,
    exit_without_teardown,
    now_ns,
    percentile,
    print_outcome,
    raise_nofile,
)

QUERY = "SELECT k, v FROM bench.kv WHERE k = ?"
# The responder's count of open connections; a Cassandra node's is the runner's
# CASSANDRA_COUNT (run_cql_connections.py passes --count-query).
RESPONDER_COUNT = "SELECT connections FROM responder.stats"
# The row the responder answers for bench.kv (benchmarks/pingpong/src/cql.rs, BENCH_VALUE);
# --setup writes the same into a real node.
VALUE = "0123456789abcdef"
MODELS = {"turbocql": ("execute_concurrent", "asyncio", "futures"), "classic": ("default", "asyncio")}
STOP_GRACE = 30.0


def result_line(a, messages: int, window: float, lat, ru0, ru1, errors: list[str], **extra) -> dict:
    """The JSON line of a run (``lat``: per-request times in ns, or None)."""
    lats = sorted(lat) if lat is not None else []
    user, sys_ = ru1.ru_utime - ru0.ru_utime, ru1.ru_stime - ru0.ru_stime
    cpu = user + sys_
    us = lambda v: None if v is None else round(v / 1000, 1)  # noqa: E731
    rate = messages / window if window > 0 else 0.0
    return {
        "client": a.client,
        "model": a.model,
        "connections": a.connections,
        "seconds": round(window, 3),
        "warmup": a.warmup,
        "messages": messages,
        "msgs_per_s": round(rate, 1),
        "p50_us": us(percentile(lats, 0.5)),
        "p95_us": us(percentile(lats, 0.95)),
        "p99_us": us(percentile(lats, 0.99)),
        "mean_latency_us": round(a.connections / rate * 1e6, 1) if rate > 0 else None,
        "user_s": round(user, 4),
        "sys_s": round(sys_, 4),
        "user_share": round(user / cpu, 3) if cpu > 0 else None,
        "cpu_cores": round(cpu / window, 3) if window > 0 else None,
        "cpu_us_per_request": round(cpu * 1e6 / messages, 2) if messages else None,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "rlimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "python_version": sys.version.split()[0],
        **extra,
    }


class PoolWait:
    """The wait for the server's count of open connections (``--count-query``) to reach
    ``want``, shared by the clients' polling loops (sync and asyncio): :meth:`done` with each
    count read; :attr:`fill_s`, the seconds it took (the pool's fill, ``pool_fill_s``)."""

    POLL = 0.05
    # A pool that has not grown for this long will not fill: the classic driver at 10,000
    # hosts stopped at 9,994 of 10,001 connections and would have held the run for its whole
    # timeout (260 s) for nothing.
    STALL = 30.0

    def __init__(self, want: int, timeout: float) -> None:
        self.want, self.timeout = want, timeout
        self.start = self.grew = time.monotonic()
        self.have = -1
        self.fill_s = None

    def done(self, have: int) -> bool:
        """True once ``have`` reaches ``want``; :class:`Failed` past the timeout, or when the
        count has not grown for :attr:`STALL` seconds."""
        now = time.monotonic()
        if have >= self.want:
            self.fill_s = round(now - self.start, 2)
            return True
        if have > self.have:
            self.have, self.grew = have, now
        if now - self.start >= self.timeout:
            raise Failed(f"only {have} of {self.want} connections (pool + control) open after {self.timeout:.0f} s")
        if now - self.grew >= self.STALL:
            raise Failed(
                f"only {have} of {self.want} connections (pool + control) open after {now - self.start:.0f} s, "
                f"none more for {self.STALL:.0f} s"
            )
        return False


def wait_for_connections(execute, count_query: str, want: int, timeout: float) -> float:
    """Polls ``count_query`` until it counts ``want`` open connections; the seconds it took."""
    w = PoolWait(want, timeout)
    while not w.done(execute(count_query).one()[0]):
        time.sleep(w.POLL)
    return w.fill_s


def connect_timeout(n: int) -> float:
    return 60.0 + n / 50


# ---------------------------------------------------------------------------------------------
# Callback chains (turbocql futures, and the classic driver's two reactors)


def run_chains(a, session, stmt, **extra) -> dict:
    lat = array.array("q")
    errors: list[str] = []
    count = [0]
    clock = [now_ns() + int(a.warmup * 1e9), 0]
    clock[1] = clock[0] + int(a.seconds * 1e9)
    running = [a.connections]
    lock = threading.Lock()
    done = threading.Event()
    params = (1,)
    execute_async = session.execute_async

    def finish() -> None:
        with lock:
            running[0] -= 1
            if running[0] == 0:
                done.set()

    def submit() -> None:
        t0 = now_ns()
        try:
            fut = execute_async(stmt, params)
        except Exception as e:
            errors.append(f"{type(e).__name__}: {e}")
            finish()
            return
        fut.add_callbacks(on_result, on_error, callback_args=(t0,), errback_args=(t0,))

    def on_result(rows, t0) -> None:
        # The callback gets the first page's rows (a list in the classic driver): take the row.
        next(iter(rows), None)
        n = now_ns()
        if n >= clock[1]:
            return finish()
        if n >= clock[0]:
            lat.append(n - t0)
        submit()

    def on_error(exc, t0) -> None:
        errors.append(f"{type(exc).__name__}: {exc}")
        if now_ns() >= clock[1]:
            return finish()
        submit()

    for _ in range(a.connections):
        submit()
    time.sleep(max(0, clock[0] - now_ns()) / 1e9)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    time.sleep(max(0, clock[1] - now_ns()) / 1e9)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    count[0] = len(lat)
    if not done.wait(STOP_GRACE):
        errors.append(f"{running[0]} chains still running {STOP_GRACE:.0f} s after the end")
    return result_line(a, count[0], a.seconds, lat, ru0, ru1, errors, **extra)


# ---------------------------------------------------------------------------------------------
# turbocql


def turbocql_cluster(a, module: str = "turbocql.cluster"):
    import importlib

    Cluster = importlib.import_module(module).Cluster
    return Cluster(
        [a.host],
        port=a.port,
        compression=False,
        connections_per_host=a.connections,
        connect_timeout=connect_timeout(a.connections),
    )


def run_turbocql(a) -> dict:
    import turbocql

    if a.model == "asyncio":
        return run_turbocql_asyncio(a)
    cluster = turbocql_cluster(a)
    try:
        session = cluster.connect()
        fill = wait_for_connections(session.execute, a.count_query, a.connections + 1, connect_timeout(a.connections))
        stmt = session.prepare(QUERY)
        extra = {
            "turbocql_version": turbocql.__version__,
            "pool": f"connections_per_host={a.connections}",
            "pool_fill_s": fill,
        }
        if a.model == "futures":
            return run_chains(a, session, stmt, **extra)
        return run_execute_concurrent(a, session, stmt, **extra)
    finally:
        cluster.shutdown()


def run_execute_concurrent(a, session, stmt, **extra) -> dict:
    from turbocql.concurrent import execute_concurrent_with_args

    errors: list[str] = []

    def call(n: int) -> int:
        ok = 0
        for success, result in execute_concurrent_with_args(
            session, stmt, [(1,)] * n, concurrency=a.connections, raise_on_first_error=False
        ):
            if success:
                result.one()
                ok += 1
            elif len(errors) < 10:
                errors.append(f"{type(result).__name__}: {result}")
        return ok

    # Warm-up: calls of 2N for --warmup seconds; their rate sizes the measured calls (about a
    # quarter of the window each, so that each call's ramp-down is a small part of it).
    t0, rate = time.perf_counter(), 0.0
    while True:
        t = time.perf_counter()
        n = call(2 * a.connections)
        rate = n / max(time.perf_counter() - t, 1e-6)
        if time.perf_counter() - t0 >= a.warmup:
            break
    chunk = max(2 * a.connections, int(rate * a.seconds / 4))
    messages = 0
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    while time.perf_counter() - start < a.seconds:
        messages += call(chunk)
    window = time.perf_counter() - start
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    return result_line(a, messages, window, None, ru0, ru1, errors, chunk=chunk, latency="mean only: N / rate", **extra)


def run_turbocql_asyncio(a) -> dict:
    import asyncio

    import turbocql
    from turbocql import aio

    async def amain() -> dict:
        async with aio.Cluster(
            [a.host],
            port=a.port,
            compression=False,
            connections_per_host=a.connections,
            connect_timeout=connect_timeout(a.connections),
        ) as cluster:
            session = await cluster.connect()
            w = PoolWait(a.connections + 1, connect_timeout(a.connections))
            while not w.done((await session.execute(a.count_query)).one()[0]):
                await asyncio.sleep(w.POLL)
            fill = w.fill_s
            stmt = await session.prepare(QUERY)
            lat = array.array("q")
            errors: list[str] = []
            warm_end = now_ns() + int(a.warmup * 1e9)
            end = warm_end + int(a.seconds * 1e9)
            execute, record, params = session.execute, lat.append, (1,)

            async def worker() -> None:
                while True:
                    t0 = now_ns()
                    try:
                        (await execute(stmt, params)).one()
                    except Exception as e:
                        errors.append(f"{type(e).__name__}: {e}")
                    n = now_ns()
                    if n >= end:
                        return
                    if n >= warm_end:
                        record(n - t0)

            tasks = [asyncio.ensure_future(worker()) for _ in range(a.connections)]
            await asyncio.sleep(max(0, warm_end - now_ns()) / 1e9)
            ru0 = resource.getrusage(resource.RUSAGE_SELF)
            await asyncio.sleep(max(0, end - now_ns()) / 1e9)
            ru1 = resource.getrusage(resource.RUSAGE_SELF)
            _, pending = await asyncio.wait(tasks, timeout=STOP_GRACE)
            for t in pending:
                t.cancel()
            extra = {
                "turbocql_version": turbocql.__version__,
                "pool": f"connections_per_host={a.connections}",
                "pool_fill_s": fill,
            }
            return result_line(a, len(lat), a.seconds, lat, ru0, ru1, errors, **extra)

    return asyncio.run(amain())


# ---------------------------------------------------------------------------------------------
# The classic driver


def run_classic(a) -> dict:
    import cassandra
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy

    kwargs = {}
    if a.model == "asyncio":
        from cassandra.io.asyncioreactor import AsyncioConnection

        kwargs["connection_class"] = AsyncioConnection
    cluster = Cluster(
        [a.host],
        port=a.port,
        protocol_version=4,
        compression=False,
        connect_timeout=connect_timeout(a.connections),
        control_connection_timeout=connect_timeout(a.connections),
        execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(load_balancing_policy=RoundRobinPolicy())},
        **kwargs,
    )
    try:
        try:
            session = cluster.connect()
        except Exception as e:
            raise Failed(f"connect: {type(e).__name__}: {str(e)[:300]}") from None
        hosts = len(cluster.metadata.all_hosts())
        if hosts < a.connections:
            raise Failed(f"the driver sees {hosts} of {a.connections} hosts")
        fill = wait_for_connections(session.execute, a.count_query, a.connections + 1, connect_timeout(a.connections))
        stmt = session.prepare(QUERY)
        reactor = (
            type(cluster.connection_class).__name__
            if not isinstance(cluster.connection_class, type)
            else cluster.connection_class.__name__
        )
        from benchmarks.clients.sync_threads import classic_driver_state

        return run_chains(
            a,
            session,
            stmt,
            classic_version=cassandra.__version__,
            reactor=reactor,
            classic_driver=classic_driver_state("cassandra", kwargs.get("connection_class")),
            hosts=hosts,
            pool="one per host",
            pool_fill_s=fill,
        )
    finally:
        cluster.shutdown()


def setup_node(a) -> dict:
    """``--setup``: the benchmark's keyspace, table and row on a real node (idempotent), read
    back; the node's release version and its count of open connections (this one's included),
    which checks that ``--count-query`` answers there."""
    from turbocql.cluster import Cluster

    cluster = Cluster([a.host], port=a.port, compression=False, connect_timeout=10)
    try:
        try:
            session = cluster.connect()
        except Exception as e:
            raise Failed(f"no CQL node at {a.host}:{a.port}: {type(e).__name__}: {str(e)[:300]}") from None
        session.execute(
            "CREATE KEYSPACE IF NOT EXISTS bench "
            "WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            timeout=60,
        )
        session.execute("CREATE TABLE IF NOT EXISTS bench.kv (k int PRIMARY KEY, v text)", timeout=60)
        session.execute(session.prepare("INSERT INTO bench.kv (k, v) VALUES (?, ?)"), (1, VALUE))
        rows = list(session.execute(session.prepare(QUERY), (1,)))
        if len(rows) != 1 or tuple(rows[0]) != (1, VALUE):
            raise Failed(f"bench.kv: {QUERY} with k = 1 gave {rows!r}, not one row (1, {VALUE!r})")
        version = session.execute("SELECT release_version FROM system.local").one()[0]
        try:
            count = session.execute(a.count_query).one()[0]
        except Exception as e:
            raise Failed(
                f"the count query {a.count_query!r} failed on Cassandra {version} (system_views needs 4.0+): "
                f"{type(e).__name__}: {str(e)[:300]}"
            ) from None
        return {"setup": "ok", "release_version": version, "row": list(rows[0]), "open_connections": count}
    finally:
        cluster.shutdown()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", choices=sorted(MODELS))
    ap.add_argument("--model")
    ap.add_argument(
        "--connect", required=True, metavar="HOST:PORT", help="the responder (its first node) or a Cassandra node"
    )
    ap.add_argument("--connections", type=int)
    ap.add_argument("--seconds", type=float, help="measured window")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before the window (default 1)")
    ap.add_argument(
        "--count-query",
        default=RESPONDER_COUNT,
        help=f"one row, one bigint: the server's open connections (default {RESPONDER_COUNT!r})",
    )
    ap.add_argument("--setup", action="store_true", help="create bench.kv and its row on a real node, and stop")
    a = ap.parse_args(argv)
    host, _, port = a.connect.rpartition(":")
    if not host or not port.isdigit():
        ap.error(f"--connect: HOST:PORT, not {a.connect!r}")
    a.host, a.port = host, int(port)
    if a.setup:
        return a
    if a.client is None or a.model is None or a.connections is None or a.seconds is None:
        ap.error("--client, --model, --connections and --seconds are required (or --setup)")
    if a.model not in MODELS[a.client]:
        ap.error(f"--model for {a.client}: one of {', '.join(MODELS[a.client])}")
    # --seconds 0: connect, fill the pool, prepare, warm up and stop (the runner's system-call
    # sample subtracts such a run from a timed one).
    if a.connections <= 0 or a.seconds < 0 or a.warmup < 0:
        ap.error("--connections must be positive, --seconds and --warmup not negative")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.setup:
        return print_outcome(lambda: setup_node(a), lambda why: {"failed": why}, errors=(Exception,))
    raise_nofile()
    base = {"client": a.client, "model": a.model, "connections": a.connections, "seconds": a.seconds}
    return print_outcome(
        lambda: (run_turbocql if a.client == "turbocql" else run_classic)(a),
        lambda why: {**base, "failed": why},
        errors=(Exception,),  # NoHostAvailable, OperationTimedOut, EMFILE...
    )


if __name__ == "__main__":
    exit_without_teardown(main())
