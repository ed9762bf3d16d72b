"""Request-pattern benchmark client: one (driver, pattern, workload) run per process.

Reproduces the request patterns of seed documents 000 (the classic driver's "Performance
Notes": batched / queued / unthrottled futures, callback chains, ``execute_concurrent``) and
001 (the same patterns in read mode, plus the ``WritePipeline`` / ``ReadPipeline`` objects),
and adds turbocql's native asyncio API. The same code runs on the classic driver
(``--driver cassandra``) and on turbocql (``--driver turbocql``); only the imported modules
(``{driver}.cluster``, ``{driver}.query``, ``{driver}.concurrent``) differ.

Patterns (``--pattern``), each with ``--concurrency`` (default 120) requests in flight:

* ``batched_futures``   ``execute_async`` 120 requests, ``.result()`` all of them, repeat
  (``future_batches.py``).
* ``queued_futures``    a FIFO of up to 120 futures; when it is full, ``.result()`` the oldest
  before submitting the next (``future_full_pipeline.py``).
* ``unthrottled_futures``  ``execute_async`` every request, then ``.result()`` every future in
  submission order (``future_full_throttle.py``); memory grows with ``--ops``.
* ``callback_chain``    ``--chains`` chains (120, 250, 500 in document 000); each request's
  ``add_callbacks(callback, errback)`` submits the next one until ``--ops`` are done; the main
  thread waits on a ``threading.Event`` (``callback_full_pipeline.py``).
* ``execute_concurrent``  ``execute_concurrent_with_args(session, prepared, params,
  concurrency=120)`` with all params in one list built before timing.
* ``execute_concurrent_gen``  the same with a generator of params and
  ``results_generator=True``, consumed fully.
* ``write_pipeline`` / ``read_pipeline`` (document 001's objects, turbocql only):
  ``WritePipeline(session, max_in_flight_requests=--in-flight,
  max_unsent_write_requests=--buffer)``, ``execute`` each, ``confirm()``;
  ``ReadPipeline(session, max_in_flight_requests=--in-flight,
  max_unconsumed_read_responses=--buffer)``, ``execute`` each and consume ``results()`` in
  submission order (``--read-consume``).
* ``asyncio`` (turbocql and acsylla): ``turbocql.aio.Cluster``; 120 worker coroutines each
  awaiting ``session.execute(prepared, params)`` until the shared count is done; ``--uvloop``
  runs it on uvloop. With ``--driver acsylla`` the same workers run on acsylla
  (``acsylla.create_cluster``, ``await cluster.create_session(keyspace=...)``, ``await
  session.create_prepared(...)``, ``prepared.bind()`` + ``bind_list(params)`` per request,
  reads decoded with ``result.first().as_tuple()``).

Workloads (same as ``sync_threads.py`` and ``rust_ref``): ``write`` = prepared ``INSERT INTO t
(thekey, col0, col1) VALUES (?, ?, ?)`` with distinct keys; ``read`` = prepared ``SELECT * FROM t
WHERE thekey = ?`` of one row by key over ``row0..row<rows-1>`` (written before timing if
missing). For reads every result's first row is taken (``ResultSet.one()``), as the Rust
reference decodes it, so a driver that decodes lazily pays for decoding too.

Transport: plain text by default; ``--tls-ca PATH`` connects over TLS, trusting the CA
certificate in PATH (``ssl.create_default_context(cafile=PATH)``, hostname checked, no client
certificate) and handing the context to ``Cluster(ssl_context=...)`` (turbocql, its asyncio
API, the classic driver, scylla-driver), or, on acsylla, ``create_cluster(ssl_enabled=True,
ssl_trusted_cert=<the PEM>)``. ``--protocol-version N`` pins the classic API's
``Cluster(protocol_version=N)`` (the ``tls`` scenario runs the classic driver on v4, the
protocol the ``scylla`` crate, hence turbocql, speaks).

Client CPU is ``getrusage(RUSAGE_SELF)`` (user + system, all threads) around the timed section
only; setup and ``--warmup`` requests (same pattern) are outside it. Latency is per request where
the pattern shows it: futures = submit → ``.result()`` returned, callbacks = submit → callback
ran, asyncio = around the ``await``; bulk patterns (``execute_concurrent*``, pipelines) report
none. Failed requests are counted in ``errors``. Prints one JSON line on stdout; exits 3 with a
message on stderr if the driver lacks the pattern's API.

This module is the script (options, the JSON line, ``main``); the patterns are
``patterns_threads`` (the classic API's) and ``patterns_async`` (asyncio, acsylla), what they
share ``patterns_base``; it re-exports their names.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.patterns_async import (  # noqa: E402, F401 - names of patterns, moved
    _run_loop,
    _timed_async,
    _uvloop_factory,
    acsylla_take_row,
    run_acsylla,
    run_asyncio,
)
from benchmarks.clients.patterns_base import (  # noqa: E402, F401 - names of patterns, moved
    EXIT_NO_API,
    FIRST_ERROR,
    STALL_SECONDS,
    MissingAPI,
    Stalled,
    acsylla_tls_options,
    connection_options,
    measure,
    need,
    note,
    params_factory,
    take_row,
)
from benchmarks.clients.patterns_threads import (  # noqa: E402, F401 - names of patterns, moved
    CONCURRENT_PATTERNS,
    SYNC_API_PATTERNS,
    _pipeline,
    run_batched_futures,
    run_callback_chain,
    run_execute_concurrent,
    run_execute_concurrent_gen,
    run_queued_futures,
    run_read_pipeline,
    run_thread_api,
    run_unthrottled_futures,
    run_write_pipeline,
)
from benchmarks.clients.sync_threads import (  # noqa: E402  (shared helpers of the sync client)
    CLIENT_NAMES,
    add_client_name,
    classic_driver_state,
    driver_version,
    peak_rss_mb,
    percentile_us,
)

PATTERNS = [
    "batched_futures",
    "queued_futures",
    "unthrottled_futures",
    "callback_chain",
    "execute_concurrent",
    "execute_concurrent_gen",
    "write_pipeline",
    "read_pipeline",
    "asyncio",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted([*CLIENT_NAMES, "acsylla"]), default="cassandra")
    ap.add_argument("--pattern", choices=PATTERNS, required=True)
    ap.add_argument("--workload", choices=["write", "read"], default="write")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=120,
        help="requests in flight: futures batch/queue size, execute_concurrent concurrency, asyncio workers",
    )
    ap.add_argument("--chains", type=int, default=120, help="callback_chain: number of chains")
    ap.add_argument("--in-flight", type=int, default=100, help="pipelines: max_in_flight_requests")
    ap.add_argument(
        "--buffer",
        type=int,
        default=None,
        help="pipelines: max_unsent_write_requests (default 40000) or max_unconsumed_read_responses (default 400)",
    )
    ap.add_argument(
        "--read-consume",
        choices=["sliding", "end"],
        default="sliding",
        help="read_pipeline: consume while executing (sliding) or after (end)",
    )
    ap.add_argument("--uvloop", action="store_true", help="asyncio: run on uvloop")
    ap.add_argument("--warmup", type=int, default=2000, help="untimed requests (same pattern) before timing")
    ap.add_argument("--rows", type=int, default=10000, help="read keys row0..row<rows-1>")
    ap.add_argument("--key-prefix", default=None, help="write key prefix (default: per process)")
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    ap.add_argument(
        "--tls-ca", metavar="PATH", default=None, help="connect over TLS, trusting the CA certificate in PATH (PEM)"
    )
    ap.add_argument(
        "--protocol-version",
        type=int,
        default=None,
        help="classic API: Cluster(protocol_version=N) (default: negotiated)",
    )
    add_client_name(ap)
    args = ap.parse_args(argv)
    if args.pattern == "write_pipeline" and args.workload != "write":
        ap.error("write_pipeline is a write pattern (--workload write)")
    if args.pattern == "read_pipeline" and args.workload != "read":
        ap.error("read_pipeline is a read pattern (--workload read)")
    if args.buffer is None:
        args.buffer = 40000 if args.pattern == "write_pipeline" else 400
    if min(args.ops, args.concurrency, args.chains, args.in_flight, args.buffer) <= 0:
        ap.error("--ops, --concurrency, --chains, --in-flight and --buffer must be > 0")
    client = args.client_name or CLIENT_NAMES.get(args.driver, args.driver)
    prefix = args.key_prefix or f"{client}-{args.pattern}-{os.getpid()}-"

    try:
        if args.driver == "acsylla":
            lat, errors, seconds, cpu, srv = run_acsylla(args, prefix)
        elif args.pattern == "asyncio":
            lat, errors, seconds, cpu, srv = run_asyncio(args, prefix)
        else:
            lat, errors, seconds, cpu, srv = run_thread_api(args, prefix)
    except MissingAPI as e:
        print(f"{client} lacks the API for {args.pattern}: {e}", file=sys.stderr)
        return EXIT_NO_API
    except Stalled as e:
        print(f"stalled: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # setup failures: one clear line for the runner's table
        import traceback

        traceback.print_exc()
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1

    lat.sort()
    out = {
        "client": client,
        "pattern": args.pattern,
        "workload": args.workload,
        "ops": args.ops,
    }
    if args.pattern == "callback_chain":
        out["chains"] = args.chains
    elif args.pattern in ("write_pipeline", "read_pipeline"):
        out.update(in_flight=args.in_flight, buffer=args.buffer)
        if args.pattern == "read_pipeline":
            out["read_consume"] = args.read_consume
    elif args.pattern != "unthrottled_futures":
        out["concurrency"] = args.concurrency
    if args.pattern == "asyncio":
        out["loop"] = "uvloop" if args.uvloop else "asyncio"
    out["tls"] = bool(args.tls_ca)
    out.update(
        seconds=round(seconds, 4),
        ops_per_s=round(args.ops / seconds, 1),
        cpu_us_per_op=round(cpu / args.ops, 2),
    )
    if srv is not None:
        out["server_cpu_us_per_op"] = round(srv / args.ops, 2)
    has_lat = bool(lat)
    out.update(
        p50_us=round(percentile_us(lat, 50), 1) if has_lat else None,
        p95_us=round(percentile_us(lat, 95), 1) if has_lat else None,
        p99_us=round(percentile_us(lat, 99), 1) if has_lat else None,
        max_rss_mb=peak_rss_mb(),
        errors=errors,
    )
    out["driver_version"] = driver_version(args.driver)
    out["classic_driver"] = classic_driver_state(args.driver)
    out["python_version"] = sys.version.split()[0]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
