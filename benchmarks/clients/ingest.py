"""Ingestion client of document 003 ("Big Data Demo": is ingestion from Python IO-bound or
CPU-bound? threads vs gevent vs asyncio, by pool size), on Cassandra; scenario ``ingest``.

One ``--driver`` and one ``--model`` per process, ``--pool N`` workers:

* ``--model threads`` (``--driver cassandra`` or ``turbocql``): N Python threads, each taking
  work items from one ``queue.Queue`` and running them with the blocking
  ``session.execute`` (the document's threaded pool; not ``execute_async``);
* ``--model gevent`` (``--driver cassandra``, in a venv with gevent):
  ``gevent.monkey.patch_all()`` first, then the classic driver with
  ``connection_class=GeventConnection`` and N greenlets on a ``gevent.queue.Queue``, each
  calling the blocking ``session.execute``;
* ``--model asyncio``: N coroutines on an ``asyncio.Queue``, each awaiting one request at a
  time: ``turbocql.aio`` (``--driver turbocql``: ``await session.execute(prepared, params)``)
  or acsylla (``--driver acsylla``: ``prepared.bind()``, ``bind_list(params)``, ``await
  session.execute(statement)``);
* ``--model bulk``: ``execute_concurrent``, ``--pool`` = requests in flight. Phase 1: ONE
  ``execute_concurrent_with_args(session, insert, geo_rows, concurrency=N)``, both drivers.
  Phase 2, turbocql: ONE ``execute_concurrent`` of every chunk's two SELECTs (streamed back
  in order, ``results_generator=True``, N in flight) feeding ONE
  ``execute_concurrent_with_args`` of the inserts (N in flight), whose parameter generator
  builds each chunk's rows from its SELECTs' results as they arrive. Phase 2, the classic
  driver (``--driver cassandra``): the same two calls per window of ``BULK_WINDOW`` chunks,
  the SELECTs' results first, then the window's inserts. Its executor takes the next
  parameters on its event-loop thread, so a parameter generator that waits for another
  executor's results (whose callbacks need that thread) would deadlock it.

The workload, the document's SQL strategy on Cassandra (keyspace ``bench_ingest``, created with
the dictionary by ``benchmarks/run_ingest.py``, which must have run once):

* ``geo (logrecno int PRIMARY KEY, fileid, stusab, sumlev, geocomp, chariter, cifsn, region,
  division, state, county, name text, pop100 int, hu100 int)`` with two SAI indexes (``state``,
  ``county``): the document's geo table had two indexes, which made its inserts slower;
* ``dictionary (segment int, position int, key text, PRIMARY KEY (segment, position))``: the
  data dictionary, 40 segments of 180 to 220 keys named like the census's (``P0010001``);
* ``elements (logrecno int, segment int, key text, value int, PRIMARY KEY ((logrecno,
  segment), key))``.

Phase 1 ("geo"): G = max(1000, records / 25) geo records, one prepared INSERT each. Phase 2
("elements"): ``--records`` data-element records in chunks, one chunk per data line, i.e. one
(logrecno, segment) pair with one value per key of the segment (about 200). For each chunk the
worker runs ``SELECT key FROM dictionary WHERE segment = ?`` (the ~200 keys that name the
chunk's values) and ``SELECT logrecno, name FROM geo WHERE logrecno = ?`` (the geo row the line
belongs to), then one prepared INSERT per value, ``(logrecno, segment, key, value)``, the key
taken from the first SELECT's rows. Records counted = rows inserted without error.

The data (the census files cannot be fetched here) is generated, deterministically, from
seeded ``random.Random`` generators (:func:`dictionary`, :func:`geo_rows`,
:func:`element_chunks`): segment sizes from ``Random(seed)``, geo rows from ``Random(seed +
1)`` (New York: state ``36``, odd county codes 001-123, summary levels of SF1, populations),
values from ``Random(seed + 2)`` (ints below 100,000). Line ``i`` is segment ``1 + i % 40`` of
geo record ``1 + (i // 40) % G`` (every segment of one record, then the next record); the last
chunk is cut so that the chunks hold exactly ``--records`` values.

The work is generated, and put on the workers' queue, BEFORE timing (the document's producer
was a separate process feeding a queue while the workers ran; its third figure, "after the
queue is done being filled", is the one this reproduces). Before phase 1, an untimed warm-up
runs the same model on a few geo rows and chunks; then ``geo`` and ``elements`` are
TRUNCATEd (untimed), phase 1 runs, ``elements`` is truncated again, phase 2 runs.

Measured per phase: records, seconds, records/s, client CPU (``getrusage(RUSAGE_SELF)``, all
threads, user and system separately) per record, the user and system shares, the client's
CPU seconds per wall second (``cpu_cores``: about 1 or more = the client is CPU-bound), and the
server's CPU (``/proc/PID/stat`` of ``--server-pid``). Every failed request (and every chunk
whose SELECTs did not find its dictionary keys or geo row) is counted in ``errors``, the first
one kept in ``first_error``. Prints ONE JSON line; exits 3 if the driver lacks the model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))

KEYSPACE = "bench_ingest"
SEED = 20030
SEGMENTS = 40
KEYS_MIN, KEYS_MAX = 180, 220
MIN_GEO = 1000
GEO_PER_RECORDS = 25  # 1,500,000 records -> 60,000 geo rows, as the document's files
EXIT_NO_MODEL = 3
WARMUP_GEO, WARMUP_CHUNKS = 200, 4
MODELS = {
    "cassandra": ("threads", "gevent", "bulk"),
    "turbocql": ("threads", "asyncio", "bulk"),
    "acsylla": ("asyncio",),
}
CLIENT_NAMES = {"cassandra": "classic", "turbocql": "turbocql", "acsylla": "acsylla"}

GEO_COLUMNS = (
    "logrecno",
    "fileid",
    "stusab",
    "sumlev",
    "geocomp",
    "chariter",
    "cifsn",
    "region",
    "division",
    "state",
    "county",
    "name",
    "pop100",
    "hu100",
)
SCHEMA = (
    "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.geo (logrecno int PRIMARY KEY, fileid text, stusab text, sumlev text, "
    "geocomp text, chariter text, cifsn text, region text, division text, state text, county text, name text, "
    "pop100 int, hu100 int)" % KEYSPACE,
    "CREATE CUSTOM INDEX IF NOT EXISTS geo_state ON %s.geo (state) USING 'StorageAttachedIndex'" % KEYSPACE,
    "CREATE CUSTOM INDEX IF NOT EXISTS geo_county ON %s.geo (county) USING 'StorageAttachedIndex'" % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.dictionary (segment int, position int, key text, PRIMARY KEY (segment, position))"
    % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.elements (logrecno int, segment int, key text, value int, "
    "PRIMARY KEY ((logrecno, segment), key))" % KEYSPACE,
)
INSERT_GEO = "INSERT INTO geo (%s) VALUES (%s)" % (", ".join(GEO_COLUMNS), ", ".join("?" * len(GEO_COLUMNS)))
INSERT_DICTIONARY = "INSERT INTO dictionary (segment, position, key) VALUES (?, ?, ?)"
SELECT_DICTIONARY = "SELECT key FROM dictionary WHERE segment = ?"
SELECT_GEO = "SELECT logrecno, name FROM geo WHERE logrecno = ?"
INSERT_ELEMENT = "INSERT INTO elements (logrecno, segment, key, value) VALUES (?, ?, ?, ?)"
SUMLEVS = ("040", "050", "060", "140", "150", "160", "500", "871")


# ------------------------------------------------------------------------------------ data


def geo_count(records: int) -> int:
    """Phase 1's geo records for ``records`` phase-2 records: records / 25, at least 1,000."""
    return max(MIN_GEO, records // GEO_PER_RECORDS)


def dictionary(seed: int = SEED, segments: int = SEGMENTS) -> list[list[str]]:
    """The data dictionary: for segment ``s`` (1-based, item ``s - 1``) its keys in position
    order, 180 to 220 of them, named like SF1's (``P0010001``: table ``P`` + 3-digit segment
    + 4-digit item)."""
    rnd = random.Random(seed)
    return [
        ["P%03d%04d" % (s, p) for p in range(1, rnd.randint(KEYS_MIN, KEYS_MAX) + 1)] for s in range(1, segments + 1)
    ]


def dictionary_rows(seed: int = SEED) -> list[tuple[int, int, str]]:
    """``(segment, position, key)`` of every dictionary entry (what the runner preloads)."""
    return [(s, p, k) for s, keys in enumerate(dictionary(seed), 1) for p, k in enumerate(keys)]


def geo_rows(n: int, seed: int = SEED) -> list[tuple]:
    """``n`` geo records, logrecno 1..n, in the column order of :data:`GEO_COLUMNS`."""
    rnd = random.Random(seed + 1)
    out = []
    for logrecno in range(1, n + 1):
        county = "%03d" % rnd.randrange(1, 124, 2)
        sumlev = rnd.choice(SUMLEVS)
        name = "Block Group %d, Census Tract %d, County %s" % (rnd.randrange(1, 10), rnd.randrange(1, 9999), county)
        out.append(
            (
                logrecno,
                "uSF1",
                "NY",
                sumlev,
                "00",
                "000",
                "01",
                "1",
                "2",
                "36",
                county,
                name,
                rnd.randrange(0, 5000),
                rnd.randrange(0, 2000),
            )
        )
    return out


def element_chunks(records: int, n_geo: int, seed: int = SEED) -> list[tuple[int, int, list[int]]]:
    """The data lines: ``(logrecno, segment, values)``, one value per key of the segment
    (fewer in the last line), ``records`` values in all."""
    sizes = [len(keys) for keys in dictionary(seed)]
    rnd = random.Random(seed + 2)
    values = rnd.randrange
    out = []
    left, i = records, 0
    while left > 0:
        segment = 1 + i % SEGMENTS
        logrecno = 1 + (i // SEGMENTS) % n_geo
        n = min(sizes[segment - 1], left)
        out.append((logrecno, segment, [values(100_000) for _ in range(n)]))
        left -= n
        i += 1
    return out


# ------------------------------------------------------------------------------------ measuring


def proc_cpu_s(pid: int | None) -> float | None:
    """utime + stime of another process (the server) in seconds, from /proc/PID/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def peak_rss_mb() -> float | None:
    """``VmHWM`` of this process (not ``ru_maxrss``: it carries the parent's RSS over exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


class Errors:
    """Failed requests, and the first one's message."""

    def __init__(self):
        self.first: str | None = None

    def note(self, exc: BaseException | str) -> None:
        if self.first is None:
            self.first = (exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}")[:300]


class Meter:
    """Wall time, this process's user and system CPU, and the server's CPU, of one phase."""

    def __init__(self, server_pid: int | None):
        self.server_pid = server_pid

    def start(self) -> None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        self.u0, self.s0 = ru.ru_utime, ru.ru_stime
        self.srv0 = proc_cpu_s(self.server_pid)
        self.t0 = time.perf_counter()

    def stop(self, records: int, requests: int, errors: int) -> dict:
        seconds = time.perf_counter() - self.t0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        srv1 = proc_cpu_s(self.server_pid)
        return phase_result(
            records,
            requests,
            errors,
            seconds,
            ru.ru_utime - self.u0,
            ru.ru_stime - self.s0,
            None if self.srv0 is None or srv1 is None else srv1 - self.srv0,
        )


def phase_result(
    records: int, requests: int, errors: int, seconds: float, user_s: float, system_s: float, server_s: float | None
) -> dict:
    """One phase's figures (pure: unit-tested)."""
    cpu = user_s + system_s
    r = {
        "records": records,
        "requests": requests,
        "errors": errors,
        "seconds": round(seconds, 4),
        "records_per_s": round(records / seconds, 1) if seconds > 0 else None,
        "cpu_s": round(cpu, 4),
        "user_s": round(user_s, 4),
        "system_s": round(system_s, 4),
        "cpu_us_per_record": round(cpu / records * 1e6, 2) if records else None,
        "user_share": round(user_s / cpu, 3) if cpu > 0 else None,
        "system_share": round(system_s / cpu, 3) if cpu > 0 else None,
        "cpu_cores": round(cpu / seconds, 3) if seconds > 0 else None,
    }
    if server_s is not None:
        r["server_cpu_s"] = round(server_s, 3)
        r["server_cpu_us_per_record"] = round(server_s / records * 1e6, 2) if records else None
        r["server_cores"] = round(server_s / seconds, 3) if seconds > 0 else None
    return r


def chunk_problem(line, keys: list, geo_row) -> str | None:
    """Why a chunk cannot be inserted after its SELECTs (None: it can): its geo row is
    missing, or the dictionary has fewer keys than the chunk has values."""
    logrecno, segment, values = line
    if geo_row is None:
        return f"chunk ({logrecno}, {segment}): no geo row {logrecno}"
    if len(keys) < len(values):
        return f"chunk ({logrecno}, {segment}): {len(keys)} dictionary keys for {len(values)} values"
    return None


def chunk_requests(chunks) -> int:
    """Requests of phase 2: two SELECTs per chunk and one INSERT per value."""
    return sum(2 + len(values) for _, _, values in chunks)


# ------------------------------------------------------------------------------------ models


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


def check_dictionary(keys_of) -> None:
    """The dictionary must be there (``run_ingest.py`` preloads it): segment 1's keys."""
    want = dictionary()[0]
    got = keys_of(1)
    if list(got) != want:
        raise RuntimeError(
            f"{KEYSPACE}.dictionary holds {len(got)} keys for segment 1 where {len(want)} were expected: "
            "run benchmarks/run_ingest.py once (it creates the schema and loads the dictionary)"
        )


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


STATEMENTS = {
    "insert_geo": INSERT_GEO,
    "select_dictionary": SELECT_DICTIONARY,
    "select_geo": SELECT_GEO,
    "insert_element": INSERT_ELEMENT,
}


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


# ------------------------------------------------------------------------------------ main


def driver_version(driver: str) -> str | None:
    import importlib
    import importlib.metadata as md

    try:
        v = getattr(importlib.import_module(driver), "__version__", None)
    except ImportError:
        return None
    if v is None:
        try:
            v = md.version(driver)
        except md.PackageNotFoundError:
            pass
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted(MODELS), required=True)
    ap.add_argument("--model", choices=("threads", "gevent", "asyncio", "bulk"), required=True)
    ap.add_argument("--pool", type=int, default=15, help="workers (threads, greenlets, coroutines) or bulk concurrency")
    ap.add_argument("--records", type=int, default=150_000, help="phase-2 records (phase 1: records / 25, >= 1,000)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default=KEYSPACE)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false", help="no untimed warm-up")
    ap.add_argument("--client-name", default=None, help="name in the output (default from --driver)")
    args = ap.parse_args(argv)
    if args.pool <= 0 or args.records <= 0:
        ap.error("--pool and --records must be > 0")
    client = args.client_name or CLIENT_NAMES[args.driver]
    if args.model not in MODELS[args.driver]:
        print(f"{client} has no {args.model} model here (it has {', '.join(MODELS[args.driver])})", file=sys.stderr)
        return EXIT_NO_MODEL
    if args.model == "gevent":
        try:
            from gevent import monkey
        except ImportError as e:
            print(f"gevent is not installed: {e}", file=sys.stderr)
            return EXIT_NO_MODEL
        monkey.patch_all()  # before the driver (and threading users) are imported

    n_geo = geo_count(args.records)
    geo = geo_rows(n_geo, args.seed)
    chunks = element_chunks(args.records, n_geo, args.seed)
    errors = Errors()
    try:
        if args.driver == "acsylla":
            phases = run_acsylla(args, (geo, chunks), errors)
        elif args.model == "asyncio":
            phases = run_turbocql_aio(args, (geo, chunks), errors)
        else:
            phases = run_sync_api(args, (geo, chunks), errors)
    except NoModel as e:
        print(f"{client} cannot run {args.model}: {e}", file=sys.stderr)
        return EXIT_NO_MODEL
    except Exception as e:  # setup failures: one clear last line for the runner's table
        import traceback

        traceback.print_exc()
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    from benchmarks.clients.sync_threads import classic_driver_state  # the clients' shared helper

    out = {
        "client": client,
        "driver": args.driver,
        "model": args.model,
        "pool": args.pool,
        "records": args.records,
        "geo_records": n_geo,
        "chunks": len(chunks),
        "phases": phases,
    }
    out.update(totals(phases))
    out.update(
        first_error=errors.first,
        max_rss_mb=peak_rss_mb(),
        driver_version=driver_version(args.driver),
        classic_driver=classic_driver_state(args.driver, getattr(args, "connection_class", None)),
        python_version=sys.version.split()[0],
    )
    print(json.dumps(out), flush=True)
    return 0


def totals(phases: dict) -> dict:
    """Both phases together: records, seconds, records/s, CPU µs per record, shares, cores."""
    ps = list(phases.values())
    records = sum(p["records"] for p in ps)
    seconds = sum(p["seconds"] for p in ps)
    user = sum(p["user_s"] for p in ps)
    system = sum(p["system_s"] for p in ps)
    server = [p.get("server_cpu_s") for p in ps]
    r = phase_result(
        records,
        sum(p["requests"] for p in ps),
        sum(p["errors"] for p in ps),
        seconds,
        user,
        system,
        None if None in server else sum(server),  # type: ignore[arg-type]
    )
    return {k: v for k, v in r.items() if k not in ("records", "requests")} | {"records_total": records}


if __name__ == "__main__":
    sys.exit(main())
