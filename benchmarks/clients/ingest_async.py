"""The ingestion client's asyncio models (``ingest.py --model asyncio``): coroutines on an
``asyncio.Queue``, each awaiting one request at a time, through ``turbocql.aio`` or acsylla.
"""

from __future__ import annotations

from benchmarks.clients.ingest_data import STATEMENTS, check_dictionary, chunk_problem, chunk_requests
from benchmarks.clients.ingest_measure import Errors, Meter
from benchmarks.clients.ingest_sync import WARMUP_CHUNKS, WARMUP_GEO, NoModel, check_warmup


async def async_pool(pool: int, items: list, work, meter: Meter, requests: int) -> dict:
    """``pool`` coroutines take ``items`` from one ``asyncio.Queue`` (filled before timing)."""
    import asyncio

    n = min(pool, max(len(items), 1))
    q: asyncio.Queue = asyncio.Queue()
    for it in items:
        q.put_nowait(it)
    for _ in range(n):
        q.put_nowait(None)
    counts = [[0, 0] for _ in range(n)]

    async def worker(i: int) -> None:
        get, c = q.get, counts[i]
        while True:
            item = await get()
            if item is None:
                return
            ok, bad = await work(item)
            c[0] += ok
            c[1] += bad

    meter.start()
    await asyncio.gather(*(worker(i) for i in range(n)))
    return meter.stop(sum(c[0] for c in counts), requests, sum(c[1] for c in counts))


async def async_phases(args, data, truncate, geo, chunk) -> dict:
    geo_rows_, chunks = data
    meter = Meter(args.server_pid)
    if args.warmup:
        w1 = await async_pool(args.pool, geo_rows_[:WARMUP_GEO], geo, meter, WARMUP_GEO)
        w2 = await async_pool(args.pool, chunks[:WARMUP_CHUNKS], chunk, meter, 0)
        check_warmup(w1, w2)
    await truncate("geo")
    await truncate("elements")
    p1 = await async_pool(args.pool, geo_rows_, geo, meter, len(geo_rows_))
    await truncate("elements")
    p2 = await async_pool(args.pool, chunks, chunk, meter, chunk_requests(chunks))
    return {"geo": p1, "elements": p2}


def run_turbocql_aio(args, data, errors: Errors) -> dict:
    import asyncio

    from turbocql import aio
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from turbocql.policies import RoundRobinPolicy

    async def amain():
        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
        async with aio.Cluster(
            [args.host], port=args.port, compression=False, execution_profiles={EXEC_PROFILE_DEFAULT: profile}
        ) as cluster:
            session = await cluster.connect(args.keyspace)
            stmts = {name: await session.prepare(cql) for name, cql in STATEMENTS.items()}
            execute = session.execute
            first = [r[0] for r in await (await execute(stmts["select_dictionary"], (1,))).all_pages()]
            check_dictionary(lambda seg: first)
            insert_geo, select_dict, select_geo, insert_element = (stmts[k] for k in STATEMENTS)

            async def geo(row):
                try:
                    await execute(insert_geo, row)
                except Exception as e:
                    errors.note(e)
                    return 0, 1
                return 1, 0

            async def chunk(line):
                logrecno, segment, values = line
                try:
                    keys = [r[0] for r in await (await execute(select_dict, (segment,))).all_pages()]
                    found = (await execute(select_geo, (logrecno,))).one()
                except Exception as e:
                    errors.note(e)
                    return 0, 1
                problem = chunk_problem(line, keys, found)
                if problem:
                    errors.note(problem)
                    return 0, 1
                ok = bad = 0
                for key, value in zip(keys, values):
                    try:
                        await execute(insert_element, (logrecno, segment, key, value))
                        ok += 1
                    except Exception as e:
                        errors.note(e)
                        bad += 1
                return ok, bad

            async def truncate(table):
                await execute("TRUNCATE %s" % table, timeout=120)

            return await async_phases(args, data, truncate, geo, chunk)

    return asyncio.run(amain())


def run_acsylla(args, data, errors: Errors) -> dict:
    import asyncio
    import importlib

    try:
        acsylla = importlib.import_module("acsylla")
    except ImportError as e:
        raise NoModel(str(e)) from None

    async def amain():
        cluster = acsylla.create_cluster([args.host], port=args.port)
        session = await cluster.create_session(keyspace=args.keyspace)
        try:
            stmts = {name: await session.create_prepared(cql) for name, cql in STATEMENTS.items()}
            execute = session.execute
            insert_geo, select_dict, select_geo, insert_element = (stmts[k].bind for k in STATEMENTS)

            async def run(bind, params):
                statement = bind()
                statement.bind_list(params)
                return await execute(statement)

            first = [row.column_value_by_index(0) for row in await run(select_dict, [1])]
            check_dictionary(lambda seg: first)

            async def geo(row):
                try:
                    await run(insert_geo, list(row))
                except Exception as e:
                    errors.note(e)
                    return 0, 1
                return 1, 0

            async def chunk(line):
                logrecno, segment, values = line
                try:
                    keys = [row.column_value_by_index(0) for row in await run(select_dict, [segment])]
                    found = (await run(select_geo, [logrecno])).first()
                except Exception as e:
                    errors.note(e)
                    return 0, 1
                problem = chunk_problem(line, keys, found)
                if problem:
                    errors.note(problem)
                    return 0, 1
                found.as_tuple()  # decode the row, as the other drivers do
                ok = bad = 0
                for key, value in zip(keys, values):
                    try:
                        await run(insert_element, [logrecno, segment, key, value])
                        ok += 1
                    except Exception as e:
                        errors.note(e)
                        bad += 1
                return ok, bad

            async def truncate(table):
                await execute(acsylla.create_statement("TRUNCATE %s" % table, timeout=120))

            return await async_phases(args, data, truncate, geo, chunk)
        finally:
            await session.close()

    return asyncio.run(amain())
