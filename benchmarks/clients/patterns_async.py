"""The request-pattern client's ``asyncio`` pattern (``patterns.py``): worker coroutines on
``turbocql.aio`` (or on uvloop), and the same workers on acsylla.
"""

from __future__ import annotations

import importlib
import itertools
import time

from benchmarks.clients.patterns_base import (
    FIRST_ERROR,
    MissingAPI,
    acsylla_tls_options,
    connection_options,
    need,
    note,
    params_factory,
    take_row,
)
from benchmarks.clients.sync_threads import (
    cluster_options,
    proc_cpu_us,
    read_key,
    self_cpu_us,
)


def run_asyncio(args, prefix: str):
    """``asyncio``: ``turbocql.aio``; N worker coroutines awaiting ``session.execute``."""
    import asyncio

    try:
        aio = importlib.import_module(f"{args.driver}.aio")
    except ImportError as e:
        raise MissingAPI(str(e)) from None
    AioCluster = need(aio, "Cluster", "the asyncio API")
    loop_factory = _uvloop_factory(args)

    ks = args.keyspace
    params_for = params_factory(args, prefix)

    async def workers(session, stmt, params_list, finish):
        n = len(params_list)
        counter = itertools.count()
        lat: list[int] = []
        errors = [0]
        clock = time.perf_counter_ns

        async def worker():
            execute = session.execute
            record = lat.append
            while True:
                i = next(counter)
                if i >= n:
                    return
                t0 = clock()
                try:
                    finish(await execute(stmt, params_list[i]))
                except Exception as e:
                    note(e)
                    errors[0] += 1
                record(clock() - t0)

        await asyncio.gather(*(worker() for _ in range(min(args.concurrency, n))))
        return lat, errors[0]

    async def amain():
        async with AioCluster(
            [args.host],
            port=args.port,
            compression=False,
            **cluster_options("turbocql"),
            **connection_options(args, aio=True),
        ) as cluster:
            try:
                session = await cluster.connect(ks)
            except Exception:
                # Keyspace missing (the runner's warm-up normally created it).
                session = await cluster.connect()
                await session.execute(
                    f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}"
                )
                session = await cluster.connect(ks)
            await session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)")
            insert = await session.prepare("INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)")
            select = await session.prepare("SELECT * FROM t WHERE thekey = ?")
            nothing = lambda result: None  # noqa: E731
            if args.workload == "read":
                stmt, finish = select, take_row
                if take_row(await session.execute(select, (read_key(args.rows - 1),))) is None:
                    rows = [(read_key(i), "a", "b") for i in range(args.rows)]
                    _, errs = await workers(session, insert, rows, nothing)
                    if errs:
                        raise RuntimeError(f"populating {args.rows} rows: {errs} errors")
            else:
                stmt, finish = insert, nothing
            return await _timed_async(args, workers, session, stmt, finish, params_for)

    return _run_loop(amain, loop_factory)


async def _timed_async(args, workers, session, stmt, finish, params_for):
    """The asyncio clients' warm-up, then their timed section: ``(latencies, errors,
    seconds, client CPU µs, server CPU µs or None)``."""
    if args.warmup:
        _, werr = await workers(session, stmt, params_for("w", args.warmup), finish)
        if werr >= args.warmup:
            raise RuntimeError(f"every warm-up request failed, first: {FIRST_ERROR[:1]}")
    params = params_for("", args.ops)
    srv0 = proc_cpu_us(args.server_pid)
    cpu0 = self_cpu_us()
    t0 = time.perf_counter()
    lat, errors = await workers(session, stmt, params, finish)
    seconds = time.perf_counter() - t0
    cpu = self_cpu_us() - cpu0
    srv1 = proc_cpu_us(args.server_pid)
    return lat, errors, seconds, cpu, (None if srv0 is None or srv1 is None else srv1 - srv0)


def _run_loop(amain, loop_factory):
    import asyncio

    if loop_factory is None:
        return asyncio.run(amain())
    loop = loop_factory()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(amain())
    finally:
        loop.close()


def _uvloop_factory(args):
    if not args.uvloop:
        return None
    try:
        import uvloop
    except ImportError:
        raise MissingAPI("uvloop is not installed (pip install uvloop)") from None
    return uvloop.new_event_loop


def acsylla_take_row(result):
    """The first row of an acsylla result, decoded into a tuple (acsylla decodes a column only
    when asked, so this makes it pay for the row as the other clients do)."""
    row = result.first()
    return None if row is None else row.as_tuple()


def run_acsylla(args, prefix: str):
    """``asyncio`` on acsylla (asyncio over the C++ driver): the same 120 worker coroutines,
    each ``statement = prepared.bind(); statement.bind_list(params); await
    session.execute(statement)``. acsylla has only this API, so only this pattern."""
    import asyncio

    if args.pattern != "asyncio":
        raise MissingAPI("acsylla has only an asyncio API (pattern asyncio)")
    try:
        acsylla = importlib.import_module("acsylla")
    except ImportError as e:
        raise MissingAPI(str(e)) from None
    loop_factory = _uvloop_factory(args)
    ks = args.keyspace
    tuples_for = params_factory(args, prefix)

    def params_for(tag: str, n: int):
        # bind_list takes a list, not a tuple: built before timing, as the others' tuples are.
        return [list(p) for p in tuples_for(tag, n)]

    async def workers(session, prepared, params_list, finish):
        n = len(params_list)
        counter = itertools.count()
        lat: list[int] = []
        errors = [0]
        clock = time.perf_counter_ns
        bind = prepared.bind

        async def worker():
            execute = session.execute
            record = lat.append
            while True:
                i = next(counter)
                if i >= n:
                    return
                t0 = clock()
                try:
                    statement = bind()
                    statement.bind_list(params_list[i])
                    finish(await execute(statement))
                except Exception as e:
                    note(e)
                    errors[0] += 1
                record(clock() - t0)

        await asyncio.gather(*(worker() for _ in range(min(args.concurrency, n))))
        return lat, errors[0]

    async def amain():
        cluster = acsylla.create_cluster([args.host], port=args.port, **acsylla_tls_options(args))
        setup = await cluster.create_session()
        try:
            for cql in (
                f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)",
            ):
                await setup.execute(acsylla.create_statement(cql))
        finally:
            await setup.close()
        session = await cluster.create_session(keyspace=ks)
        try:
            insert = await session.create_prepared("INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)")
            select = await session.create_prepared("SELECT * FROM t WHERE thekey = ?")
            nothing = lambda result: None  # noqa: E731
            if args.workload == "read":
                stmt, finish = select, acsylla_take_row
                probe = select.bind()
                probe.bind_list([read_key(args.rows - 1)])
                if acsylla_take_row(await session.execute(probe)) is None:
                    rows = [[read_key(i), "a", "b"] for i in range(args.rows)]
                    _, errs = await workers(session, insert, rows, nothing)
                    if errs:
                        raise RuntimeError(f"populating {args.rows} rows: {errs} errors")
            else:
                stmt, finish = insert, nothing
            return await _timed_async(args, workers, session, stmt, finish, params_for)
        finally:
            await session.close()

    return _run_loop(amain, loop_factory)
