"""Vector-ingestion benchmark client (seed document 004): one (driver, input) per process.

Document 004 (a pull request to the ScyllaDB Python driver) measured how fast a Python
program inserts embeddings: 100,000 rows of 768-dimension float32 vectors, about 7,500
rows/s with the stock driver. This client repeats that method on the classic driver
(``--driver cassandra``) and on turbocql (``--driver turbocql``); only the imported modules
differ:

* table ``<keyspace>.vectors_<dim> (id int PRIMARY KEY, vector vector<float, <dim>>)``;
* prepared ``INSERT INTO ... (id, vector) VALUES (?, ?)`` at consistency ONE;
* ``--rows`` rows (default 100,000) built in memory before anything is timed, each vector
  either a Python ``list`` of floats (``--input list``) or a 1-D numpy float32 array (a row of
  one 2-D array, ``--input numpy``), from a seeded generator so every client sends the same
  values; ``--input columns`` (turbocql only) passes ``{"id": ids, "vector": matrix}``, the
  2-D array itself, instead of rows;
* ``--warmup-rows`` rows (default 1,000) inserted untimed first (ids after the timed ones);
* ``--runs`` timed runs (default 3), each after an untimed ``TRUNCATE``: ALL rows are passed
  to ONE ``execute_concurrent_with_args(session, insert, rows, concurrency=--concurrency,
  raise_on_first_error=False)`` call (the original chunked them by the concurrency);
* best / average / worst rows/s over the runs; the table is truncated again at the end.

Client CPU is ``getrusage(RUSAGE_SELF)`` (user + system, all threads) around each timed
call; with ``--server-pid`` the server's CPU (``/proc/PID/stat``) is measured over the same
interval. ``rss_after_load_mb`` is the process's RSS once the rows are in memory (what the
input format costs), ``max_rss_mb`` its peak. Prints one JSON line with every run; exits 3 if
the driver (or numpy, for ``--input numpy``) lacks what the run needs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import time

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.sync_threads import (  # noqa: E402
    CLIENT_NAMES,
    add_client_name,
    classic_driver_state,
    peak_rss_mb,
    proc_cpu_us,
    self_cpu_us,
)

EXIT_NO_API = 3
SEED = 4  # document 004


def current_rss_mb() -> float | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return None


def make_rows(first_id: int, n: int, dim: int, kind: str, seed: int) -> list[tuple] | dict:
    """``n`` rows ``(id, vector)``: vectors of float32 values in [0, 1) (for ``columns``, a
    dict of an id array and the 2-D array of vectors)."""
    try:
        import numpy as np
    except ImportError:
        if kind != "list":
            raise
        rnd = random.Random(seed)
        return [(first_id + i, [rnd.random() for _ in range(dim)]) for i in range(n)]
    data = np.random.default_rng(seed).random((n, dim), dtype=np.float32)
    if kind == "numpy":
        return [(first_id + i, data[i]) for i in range(n)]
    if kind == "columns":
        return {"id": np.arange(first_id, first_id + n, dtype=np.int32), "vector": data}
    return [(first_id + i, row) for i, row in enumerate(data.tolist())]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted(CLIENT_NAMES), default="turbocql")
    ap.add_argument(
        "--input",
        choices=["list", "numpy", "columns"],
        default="list",
        help="vectors as Python lists of floats, numpy float32 rows, or (turbocql) "
        "a dict of columns with the 2-D array",
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--table", default=None, help="default vectors_<dim>")
    ap.add_argument("--rows", type=int, default=100_000, help="rows per timed run")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--warmup-rows", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--concurrency", type=int, default=100, help="execute_concurrent_with_args concurrency (its default, 100)"
    )
    ap.add_argument("--truncate-timeout", type=float, default=300.0)
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    add_client_name(ap)
    args = ap.parse_args(argv)
    if min(args.rows, args.dim, args.runs, args.concurrency) <= 0 or args.warmup_rows < 0:
        ap.error("--rows, --dim, --runs, --concurrency must be > 0 (--warmup-rows >= 0)")
    client = args.client_name or CLIENT_NAMES[args.driver]
    table = f"{args.keyspace}.{args.table or f'vectors_{args.dim}'}"

    try:
        top = importlib.import_module(args.driver)
        cluster_mod = importlib.import_module(f"{args.driver}.cluster")
        concurrent_mod = importlib.import_module(f"{args.driver}.concurrent")
        ecwa = concurrent_mod.execute_concurrent_with_args
        if args.input != "list":
            import numpy  # noqa: F401
        if args.input == "columns" and args.driver != "turbocql":
            raise ImportError("only turbocql takes parameters as columns")
    except (ImportError, AttributeError) as e:
        print(f"{client} cannot run --input {args.input}: {e}", file=sys.stderr)
        return EXIT_NO_API

    # All rows in memory before the cluster is even connected.
    rows = make_rows(0, args.rows, args.dim, args.input, SEED)
    warm = make_rows(args.rows, args.warmup_rows, args.dim, args.input, SEED + 1)
    rss_loaded = current_rss_mb()

    cluster = cluster_mod.Cluster([args.host], port=args.port, compression=False)
    session = cluster.connect()
    runs = []
    try:
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {args.keyspace} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}",
            timeout=60,
        )
        session.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, vector vector<float, {args.dim}>)", timeout=60
        )
        insert = session.prepare(f"INSERT INTO {table} (id, vector) VALUES (?, ?)")
        insert.consistency_level = top.ConsistencyLevel.ONE

        def ingest(params) -> int:
            results = ecwa(session, insert, params, concurrency=args.concurrency, raise_on_first_error=False)
            errors = 0
            first = None
            for ok, res in results:
                if not ok:
                    errors += 1
                    first = first or f"{type(res).__name__}: {res}"[:300]
            if errors:
                print(f"{errors} failed inserts, first: {first}", file=sys.stderr)
            return errors

        if warm and ingest(warm) == len(warm):
            raise RuntimeError("every warm-up insert failed")
        for _ in range(args.runs):
            session.execute(f"TRUNCATE {table}", timeout=args.truncate_timeout)
            srv0 = proc_cpu_us(args.server_pid)
            cpu0 = self_cpu_us()
            t0 = time.perf_counter()
            errors = ingest(rows)
            seconds = time.perf_counter() - t0
            cpu = self_cpu_us() - cpu0
            srv1 = proc_cpu_us(args.server_pid)
            run = {
                "seconds": round(seconds, 4),
                "ops_per_s": round(args.rows / seconds, 1),
                "cpu_us_per_op": round(cpu / args.rows, 2),
            }
            if srv0 is not None and srv1 is not None:
                run["server_cpu_us_per_op"] = round((srv1 - srv0) / args.rows, 2)
            run["errors"] = errors
            runs.append(run)
            print(f"run {len(runs)}: {run['ops_per_s']:,.0f} rows/s", file=sys.stderr, flush=True)
        session.execute(f"TRUNCATE {table}", timeout=args.truncate_timeout)
    except Exception as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        cluster.shutdown()

    rates = [r["ops_per_s"] for r in runs]

    def avg(xs):
        return sum(xs) / len(xs)

    out = {
        "client": client,
        "pattern": "execute_concurrent",
        "workload": "vector",
        "input": args.input,
        "rows": args.rows,
        "dim": args.dim,
        "concurrency": args.concurrency,
        "warmup_rows": args.warmup_rows,
        "ops": args.rows,
        "runs": runs,
        "best_ops_per_s": max(rates),
        "avg_ops_per_s": round(avg(rates), 1),
        "worst_ops_per_s": min(rates),
        "ops_per_s": round(avg(rates), 1),
        "cpu_us_per_op": round(avg([r["cpu_us_per_op"] for r in runs]), 2),
    }
    if all("server_cpu_us_per_op" in r for r in runs):
        out["server_cpu_us_per_op"] = round(avg([r["server_cpu_us_per_op"] for r in runs]), 2)
    out.update(
        errors=sum(r["errors"] for r in runs),
        rss_after_load_mb=None if rss_loaded is None else round(rss_loaded, 1),
        max_rss_mb=peak_rss_mb(),
    )
    out["driver_version"] = getattr(top, "__version__", None)
    out["classic_driver"] = classic_driver_state(args.driver)
    out["python_version"] = sys.version.split()[0]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
