"""Reading vectors back: rows of Python lists vs ``numpy_factory`` columns (turbocql only).

Fills ``<keyspace>.vector_reads_<dim> (p int, k int, vec vector<float, <dim>>, PRIMARY KEY
(p, k))`` with ``--rows`` rows in one partition (through ``execute_concurrent_with_args`` with
a dict of columns), then reads them all ``--runs`` times with ``SELECT k, vec ... WHERE p = 0``
(``--fetch-size`` rows a page) for each row factory: ``named_tuple_factory`` (the default:
each vector a list of Python floats) and ``numpy_factory`` (each page one dict of numpy
arrays, the vectors one 2-D float32 array). Reports the best run's rows/s and client CPU µs
per row (``os.times``), and checks that both read back the inserted matrix. Usage::

    python benchmarks/run_vector_reads.py --port 9042 --rows 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# Run as a script: the checkout's root, for the benchmarks package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.common import add_server_arguments  # noqa: E402  (the runners' shared options)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--fetch-size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)

    import numpy as np

    from turbocql.cluster import Cluster
    from turbocql.concurrent import execute_concurrent_with_args
    from turbocql.query import named_tuple_factory, numpy_factory

    table = f"{args.keyspace}.vector_reads_{args.dim}"
    matrix = np.random.default_rng(4).random((args.rows, args.dim), dtype=np.float32)
    cluster = Cluster([args.host], port=args.port)
    session = cluster.connect()
    try:
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {args.keyspace} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}",
            timeout=60,
        )
        session.execute(f"DROP TABLE IF EXISTS {table}", timeout=60)
        session.execute(
            f"CREATE TABLE {table} (p int, k int, vec vector<float, {args.dim}>, PRIMARY KEY (p, k))", timeout=60
        )
        insert = session.prepare(f"INSERT INTO {table} (p, k, vec) VALUES (0, ?, ?)")
        execute_concurrent_with_args(session, insert, {"k": np.arange(args.rows, dtype=np.int32), "vec": matrix})
        select = session.prepare(f"SELECT k, vec FROM {table} WHERE p = 0")
        select.fetch_size = args.fetch_size

        def read_tuples():
            return [(r.k, r.vec) for r in session.execute(select)]

        def read_numpy():
            return list(session.execute(select))

        out = {}
        for name, factory, read in (
            ("named tuples (lists of floats)", named_tuple_factory, read_tuples),
            ("numpy_factory (2-D float32 per page)", numpy_factory, read_numpy),
        ):
            session.row_factory = factory
            got = read()  # warm-up, and the check
            if factory is numpy_factory:
                vecs = np.concatenate([p["vec"] for p in got])
            else:
                vecs = np.array([v for _, v in got], dtype=np.float32)
            assert np.array_equal(vecs, matrix), "read back differs"
            best = None
            for _ in range(args.runs):
                c0, t0 = os.times(), time.perf_counter()
                read()
                secs, c1 = time.perf_counter() - t0, os.times()
                cpu = (c1.user - c0.user) + (c1.system - c0.system)
                run = (args.rows / secs, cpu * 1e6 / args.rows)
                best = run if best is None or run[0] > best[0] else best
            out[name] = best
            print(f"{name}: {best[0]:,.0f} rows/s, {best[1]:.1f} µs CPU/row", file=sys.stderr, flush=True)
        session.execute(f"DROP TABLE IF EXISTS {table}", timeout=60)
    finally:
        cluster.shutdown()
    print(f"\n{args.rows:,} rows of vector<float, {args.dim}>, {args.fetch_size} rows a page, best of {args.runs}\n")
    print("| row factory | rows/s | client CPU µs/row |\n| --- | --- | --- |")
    for name, (rate, cpu) in out.items():
        print(f"| {name} | {rate:,.0f} | {cpu:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
