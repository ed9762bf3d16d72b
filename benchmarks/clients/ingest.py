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

This module is the script (its options and ``main``); the workload is ``ingest_data``, the
figures ``ingest_measure``, the models ``ingest_sync`` (threads, gevent, bulk) and
``ingest_async`` (asyncio), whose names it re-exports.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))

from benchmarks.clients.ingest_async import (  # noqa: E402, F401 - names of ingest, moved
    async_phases,
    async_pool,
    run_acsylla,
    run_turbocql_aio,
)
from benchmarks.clients.ingest_data import (  # noqa: E402, F401 - names of ingest, moved
    GEO_COLUMNS,
    GEO_PER_RECORDS,
    INSERT_DICTIONARY,
    INSERT_ELEMENT,
    INSERT_GEO,
    KEYS_MAX,
    KEYS_MIN,
    KEYSPACE,
    MIN_GEO,
    SCHEMA,
    SEED,
    SEGMENTS,
    SELECT_DICTIONARY,
    SELECT_GEO,
    STATEMENTS,
    SUMLEVS,
    check_dictionary,
    chunk_problem,
    chunk_requests,
    dictionary,
    dictionary_rows,
    element_chunks,
    geo_count,
    geo_rows,
)
from benchmarks.clients.ingest_measure import (  # noqa: E402, F401 - names of ingest, moved
    Errors,
    Meter,
    peak_rss_mb,
    phase_result,
    proc_cpu_s,
    totals,
)
from benchmarks.clients.ingest_sync import (  # noqa: E402, F401 - names of ingest, moved
    BULK_WINDOW,
    WARMUP_CHUNKS,
    WARMUP_GEO,
    NoModel,
    bulk_chunks,
    bulk_chunks_windowed,
    bulk_geo,
    check_warmup,
    chunk_rows,
    run_phases,
    run_pool,
    run_sync_api,
    sync_work,
)

EXIT_NO_MODEL = 3
MODELS = {
    "cassandra": ("threads", "gevent", "bulk"),
    "turbocql": ("threads", "asyncio", "bulk"),
    "acsylla": ("asyncio",),
}
CLIENT_NAMES = {"cassandra": "classic", "turbocql": "turbocql", "acsylla": "acsylla"}


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


if __name__ == "__main__":
    sys.exit(main())
