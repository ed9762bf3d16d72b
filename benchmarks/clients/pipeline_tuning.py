"""``pipeline_tuning`` (seed document 001): a grid search over the pipelines' two parameters.

Document 001's ``benchmarks/pipeline_tuning.py`` ran the ``WritePipeline`` / ``ReadPipeline``
benchmark again and again with increasing parameter values (in-flight requests 100..4900,
buffer 100..49900, steps of 100) and averaged the parameters of the 10 fastest runs as a
starting point for that cluster. This client does the same for one pipeline per process on
turbocql (``--driver turbocql``; a driver without the objects exits 3):

* ``--pipeline write``: ``WritePipeline(session, max_in_flight_requests=F,
  max_unsent_write_requests=B)``, ``execute`` ``--ops`` distinct-key inserts, ``confirm()``;
* ``--pipeline read``: ``ReadPipeline(session, max_in_flight_requests=F,
  max_unconsumed_read_responses=B)``, ``execute`` ``--ops`` one-row reads and consume
  ``results()`` in order (``--read-consume``, as ``clients/patterns.py``).

The grid is ``--in-flight-grid`` × ``--buffer-grid`` (comma-separated values or
``start:stop:step`` ranges, stop included). One connection serves every point; after
``--warmup`` untimed requests (default parameters), the points run in a shuffled order
(``--seed``; ``--no-shuffle`` keeps grid order) so that a server drifting during the search does
not favour one corner of the grid. The pattern code is ``clients/patterns.py``'s. Prints one
JSON line with every point (ops/s, client CPU µs/op, server CPU µs/op, errors).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.patterns_base import EXIT_NO_API, MissingAPI, measure, need, take_row  # noqa: E402
from benchmarks.clients.patterns_threads import run_read_pipeline, run_write_pipeline  # noqa: E402
from benchmarks.clients.sync_threads import CLIENT_NAMES, peak_rss_mb, read_key  # noqa: E402


def parse_grid(text: str) -> list[int]:
    """``"100,400,2000"`` or ``"100:4900:100"`` (stop included), or a mix of both."""
    out: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if ":" in part:
            start, stop, step = (int(x) for x in part.split(":"))
            if step <= 0:
                raise ValueError(f"bad step in {part!r}")
            out += list(range(start, stop + 1, step))
        else:
            out.append(int(part))
    if not out or min(out) <= 0:
        raise ValueError(f"grid {text!r} must hold positive values")
    return sorted(set(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted(CLIENT_NAMES), default="turbocql")
    ap.add_argument("--pipeline", choices=["write", "read"], required=True)
    ap.add_argument("--in-flight-grid", default="100,500,1000,2500,4900")
    ap.add_argument("--buffer-grid", default="100,400,2000,10000,40000")
    ap.add_argument("--ops", type=int, default=5000, help="requests per grid point")
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--read-consume", choices=["sliding", "end"], default="sliding")
    ap.add_argument("--rows", type=int, default=10000, help="read keys row0..row<rows-1>")
    ap.add_argument("--seed", type=int, default=1, help="shuffle seed for the grid order")
    ap.add_argument("--no-shuffle", action="store_true", help="run the grid in order")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    args = ap.parse_args(argv)
    try:
        in_flight_grid = parse_grid(args.in_flight_grid)
        buffer_grid = parse_grid(args.buffer_grid)
    except ValueError as e:
        ap.error(str(e))
    if args.ops <= 0:
        ap.error("--ops must be > 0")
    client = CLIENT_NAMES[args.driver]
    points = [(f, b) for f in in_flight_grid for b in buffer_grid]
    if not args.no_shuffle:
        random.Random(args.seed).shuffle(points)

    cluster_mod = importlib.import_module(f"{args.driver}.cluster")
    concurrent_mod = importlib.import_module(f"{args.driver}.concurrent")
    try:
        need(
            concurrent_mod, "WritePipeline" if args.pipeline == "write" else "ReadPipeline", "document 001's pipelines"
        )
    except MissingAPI as e:
        print(f"{client} lacks the API for pipeline_tuning: {e}", file=sys.stderr)
        return EXIT_NO_API
    body = run_write_pipeline if args.pipeline == "write" else run_read_pipeline

    cluster = cluster_mod.Cluster([args.host], port=args.port, compression=False)
    session = cluster.connect()
    results = []
    try:
        ks = args.keyspace
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)")
        insert = session.prepare(f"INSERT INTO {ks}.t (thekey, col0, col1) VALUES (?, ?, ?)")
        select = session.prepare(f"SELECT * FROM {ks}.t WHERE thekey = ?")
        prefix = f"{client}-tuning-{os.getpid()}-"
        if args.pipeline == "read":
            stmt, finish = select, take_row
            if session.execute(select, (read_key(args.rows - 1),)).one() is None:
                opts = argparse.Namespace(in_flight=100, buffer=40000)
                rows = [(read_key(i), "a", "b") for i in range(args.rows)]
                if run_write_pipeline(session, insert, rows, opts, None, concurrent_mod)[1]:
                    raise RuntimeError(f"populating {args.rows} rows failed")

            def params_for(tag: str, n: int):
                return [(read_key(i * 7919 % args.rows),) for i in range(n)]
        else:
            stmt, finish = insert, (lambda result: None)

            def params_for(tag: str, n: int):
                return [(f"{prefix}{tag}-{i}", "a", "b") for i in range(n)]

        def run_point(in_flight: int, buffer: int, params):
            opts = argparse.Namespace(in_flight=in_flight, buffer=buffer, read_consume=args.read_consume)
            return measure(lambda p: body(session, stmt, p, opts, finish, concurrent_mod), params, args.server_pid)

        if args.warmup:
            run_point(100, 40000 if args.pipeline == "write" else 400, params_for("w", args.warmup))
        for n, (in_flight, buffer) in enumerate(points):
            _, errors, seconds, cpu, srv = run_point(in_flight, buffer, params_for(f"p{n}", args.ops))
            point = {
                "in_flight": in_flight,
                "buffer": buffer,
                "seconds": round(seconds, 4),
                "ops_per_s": round(args.ops / seconds, 1),
                "cpu_us_per_op": round(cpu / args.ops, 2),
            }
            if srv is not None:
                point["server_cpu_us_per_op"] = round(srv / args.ops, 2)
            point["errors"] = errors
            results.append(point)
            print(
                f"[{n + 1}/{len(points)}] in-flight {in_flight}, buffer {buffer}: {point['ops_per_s']:,.0f} ops/s",
                file=sys.stderr,
                flush=True,
            )
    except Exception as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        cluster.shutdown()

    out = {
        "client": client,
        "pattern": "pipeline_tuning",
        "pipeline": args.pipeline,
        "workload": args.pipeline,
        "ops": args.ops,
        "warmup": args.warmup,
        "in_flight_grid": in_flight_grid,
        "buffer_grid": buffer_grid,
        "shuffled": not args.no_shuffle,
        "points": results,
        "errors": sum(p["errors"] for p in results),
        "max_rss_mb": peak_rss_mb(),
    }
    if args.pipeline == "read":
        out["read_consume"] = args.read_consume
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
