"""The ingestion client's models on the classic API (``ingest.py``): ``threads`` and ``gevent``
(a pool of workers calling the blocking ``session.execute``, :func:`run_pool`) and ``bulk``
(``execute_concurrent``: one run per phase for turbocql, windows of chunks for the classic
driver), with the phases they share with the asyncio models (warm-up, TRUNCATE, phase 1,
phase 2: :func:`run_phases`) and :class:`NoModel`.
"""

from __future__ import annotations

from benchmarks.clients.ingest_data import STATEMENTS, check_dictionary, chunk_problem, chunk_requests
from benchmarks.clients.ingest_measure import Errors, Meter

WARMUP_GEO, WARMUP_CHUNKS = 200, 4


class NoModel(Exception):
    """This driver (or its environment) has no such model."""


def sync_work(session, stmts: dict, errors: Errors):
    """The two work functions of the blocking APIs: ``geo(row)`` and ``chunk(line)``, each
    returning (rows inserted, errors)."""
    execute = session.execute
    insert_geo, select_dict, select_geo, insert_element = (
        stmts["insert_geo"],
        stmts["select_dictionary"],
        stmts["select_geo"],
        stmts["insert_element"],
    )

    def geo(row):
        try:
            execute(insert_geo, row)
        except Exception as e:
            errors.note(e)
            return 0, 1
        return 1, 0

    def chunk(line):
        logrecno, segment, values = line
        try:
            keys = [r[0] for r in execute(select_dict, (segment,))]
            found = execute(select_geo, (logrecno,)).one()
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
                execute(insert_element, (logrecno, segment, key, value))
                ok += 1
            except Exception as e:
                errors.note(e)
                bad += 1
        return ok, bad

    return geo, chunk


def run_pool(model: str, pool: int, items: list, work, meter: Meter, requests: int) -> dict:
    """``pool`` threads (or greenlets) take ``items`` from one queue, filled before timing,
    and ``work`` each; the clock starts when every worker is ready."""
    n = min(pool, max(len(items), 1))
    counts = [[0, 0] for _ in range(n)]
    if model == "gevent":
        import gevent
        import gevent.queue

        q = gevent.queue.Queue()
    else:
        import queue
        import threading

        q = queue.Queue()
        barrier = threading.Barrier(n + 1)
    for it in items:
        q.put(it)
    for _ in range(n):
        q.put(None)  # one stop mark per worker

    def worker(i: int) -> None:
        get, c = q.get, counts[i]
        if model != "gevent":
            barrier.wait()
        while True:
            item = get()
            if item is None:
                return
            ok, bad = work(item)
            c[0] += ok
            c[1] += bad

    if model == "gevent":
        meter.start()  # greenlets start running only once this one waits
        gevent.joinall([gevent.spawn(worker, i) for i in range(n)])
    else:
        threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        barrier.wait()
        meter.start()
        for t in threads:
            t.join()
    return meter.stop(sum(c[0] for c in counts), requests, sum(c[1] for c in counts))


def run_sync_api(args, data, errors: Errors) -> dict:
    """``threads`` and ``gevent`` (blocking ``session.execute``), and ``bulk`` (turbocql)."""
    import importlib

    cluster_mod = importlib.import_module(args.driver + ".cluster")
    policies = importlib.import_module(args.driver + ".policies")
    options: dict = {}
    if args.model == "gevent":
        try:
            from cassandra.io.geventreactor import GeventConnection
        except ImportError as e:
            raise NoModel(f"no gevent reactor: {e}") from None
        options["connection_class"] = GeventConnection
    args.connection_class = options.get("connection_class")
    profile = cluster_mod.ExecutionProfile(load_balancing_policy=policies.RoundRobinPolicy())
    cluster = cluster_mod.Cluster(
        [args.host],
        port=args.port,
        compression=False,
        execution_profiles={cluster_mod.EXEC_PROFILE_DEFAULT: profile},
        **options,
    )
    session = cluster.connect(args.keyspace)
    try:
        stmts = {name: session.prepare(cql) for name, cql in STATEMENTS.items()}
        check_dictionary(lambda seg: [r[0] for r in session.execute(stmts["select_dictionary"], (seg,))])
        truncate = lambda table: session.execute("TRUNCATE %s" % table, timeout=120)  # noqa: E731
        meter = Meter(args.server_pid)
        if args.model == "bulk":
            concurrent = importlib.import_module(args.driver + ".concurrent")
            geo_phase = lambda rows: bulk_geo(session, concurrent, stmts, rows, args.pool, meter, errors)  # noqa: E731
            phase2 = bulk_chunks_windowed if args.driver == "cassandra" else bulk_chunks
            chunk_phase = lambda chunks: phase2(session, concurrent, stmts, chunks, args.pool, meter, errors)  # noqa: E731
        else:
            geo, chunk = sync_work(session, stmts, errors)
            geo_phase = lambda rows: run_pool(args.model, args.pool, rows, geo, meter, len(rows))  # noqa: E731
            chunk_phase = lambda chunks: run_pool(  # noqa: E731
                args.model, args.pool, chunks, chunk, meter, chunk_requests(chunks)
            )
        return run_phases(args, data, truncate, geo_phase, chunk_phase)
    finally:
        cluster.shutdown()


def run_phases(args, data, truncate, geo_phase, chunk_phase) -> dict:
    """Warm-up, TRUNCATE, phase 1, TRUNCATE elements, phase 2 (blocking APIs)."""
    geo, chunks = data
    if args.warmup:
        w1 = geo_phase(geo[:WARMUP_GEO])
        w2 = chunk_phase(chunks[:WARMUP_CHUNKS])
        check_warmup(w1, w2)
    truncate("geo")
    truncate("elements")
    p1 = geo_phase(geo)
    truncate("elements")
    p2 = chunk_phase(chunks)
    return {"geo": p1, "elements": p2}


def check_warmup(w1: dict, w2: dict) -> None:
    if w1["errors"] and not w1["records"] or w2["errors"] and not w2["records"]:
        raise RuntimeError("every warm-up request failed")


def bulk_geo(session, concurrent, stmts, rows, pool, meter: Meter, errors: Errors) -> dict:
    meter.start()
    results = concurrent.execute_concurrent_with_args(
        session, stmts["insert_geo"], rows, concurrency=pool, raise_on_first_error=False
    )
    bad = 0
    for ok, res in results:
        if not ok:
            bad += 1
            errors.note(res)
    return meter.stop(len(rows) - bad, len(rows), bad)


def chunk_rows(line, keys_result, geo_result, errors: Errors):
    """The bulk models' inserts of one chunk from its two SELECTs' ``(success, result)``
    (``execute_concurrent``'s items): its ``(logrecno, segment, key, value)`` rows, or None
    (noted in ``errors``) when a SELECT failed or the chunk cannot be inserted."""
    (ok1, keys_rs), (ok2, geo_rs) = keys_result, geo_result
    if not (ok1 and ok2):
        errors.note(keys_rs if not ok1 else geo_rs)
        return None
    keys = [r[0] for r in keys_rs]
    problem = chunk_problem(line, keys, geo_rs.one())
    if problem:
        errors.note(problem)
        return None
    logrecno, segment, values = line
    return [(logrecno, segment, key, value) for key, value in zip(keys, values)]


BULK_WINDOW = 100  # chunks per window of the classic driver's bulk phase 2 (about 20,000 inserts)


def bulk_chunks_windowed(session, concurrent, stmts, chunks, pool, meter: Meter, errors: Errors) -> dict:
    """The classic driver's bulk phase 2: per window of ``BULK_WINDOW`` chunks, one
    ``execute_concurrent`` of their SELECTs, then one ``execute_concurrent_with_args`` of
    their inserts (see the module's docstring for why not one generator-fed run)."""
    select_dict, select_geo, insert = stmts["select_dictionary"], stmts["select_geo"], stmts["insert_element"]
    meter.start()
    ok = bad = 0
    for start in range(0, len(chunks), BULK_WINDOW):
        window = chunks[start : start + BULK_WINDOW]
        selects = []
        for logrecno, segment, _ in window:
            selects.append((select_dict, (segment,)))
            selects.append((select_geo, (logrecno,)))
        results = concurrent.execute_concurrent(session, selects, concurrency=pool, raise_on_first_error=False)
        params = []
        for i, line in enumerate(window):
            rows = chunk_rows(line, results[2 * i], results[2 * i + 1], errors)
            if rows is None:
                bad += 1
            else:
                params.extend(rows)
        for success, res in concurrent.execute_concurrent_with_args(
            session, insert, params, concurrency=pool, raise_on_first_error=False
        ):
            if success:
                ok += 1
            else:
                bad += 1
                errors.note(res)
    return meter.stop(ok, chunk_requests(chunks), bad)


def bulk_chunks(session, concurrent, stmts, chunks, pool, meter: Meter, errors: Errors) -> dict:
    """Every chunk's two SELECTs through one ``execute_concurrent`` (results streamed back in
    order), and every insert through one ``execute_concurrent_with_args`` whose parameters
    are generated from those results as they arrive (both runs in flight at once)."""
    select_dict, select_geo = stmts["select_dictionary"], stmts["select_geo"]
    meter.start()
    selects = []
    for logrecno, segment, _ in chunks:
        selects.append((select_dict, (segment,)))
        selects.append((select_geo, (logrecno,)))
    results = concurrent.execute_concurrent(
        session, selects, concurrency=pool, raise_on_first_error=False, results_generator=True
    )
    bad = [0]

    def params():
        for line in chunks:
            rows = chunk_rows(line, next(results), next(results), errors)
            if rows is None:
                bad[0] += 1
            else:
                yield from rows

    inserted = concurrent.execute_concurrent_with_args(
        session, stmts["insert_element"], params(), concurrency=pool, raise_on_first_error=False
    )
    ok = failed = 0
    for success, res in inserted:
        if success:
            ok += 1
        else:
            failed += 1
            errors.note(res)
    return meter.stop(ok, chunk_requests(chunks), bad[0] + failed)
