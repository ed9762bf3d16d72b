"""Full-table read client (issue "Bulk data", benchmark ``bulk``): one (driver, shape) per
process. Reads every row of ``<keyspace>.<table>`` with ONE paged ``SELECT *`` (fetch size
``--page-size``) and keeps the rows in the shape asked for:

* ``--shape named``: the default row factory's named tuples (classic driver: ``--driver
  cassandra``; turbocql: ``--driver turbocql``), all pages into one list;
* ``--shape numpy`` (turbocql): ``numpy_factory`` pages, a dict of column arrays each;
* ``--shape arrow`` (turbocql): ``arrow_factory`` and ``ResultSet.to_arrow()``, one
  ``pyarrow.Table``.

Client CPU is ``getrusage(RUSAGE_SELF)`` (user + system, all threads) around the read only
(connecting is outside it). Prints one JSON line: rows, seconds, rows/s, CPU µs per row.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import time


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=("cassandra", "turbocql"), required=True)
    ap.add_argument("--client-name", default=None)
    ap.add_argument("--shape", choices=("named", "numpy", "arrow"), default="named")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="bench_bulk")
    ap.add_argument("--table", default="mixed")
    ap.add_argument("--page-size", type=int, default=5000)
    a = ap.parse_args(argv)
    cluster_mod = importlib.import_module(a.driver + ".cluster")
    query_mod = importlib.import_module(a.driver + ".query")
    policies = importlib.import_module(a.driver + ".policies")
    profile = cluster_mod.ExecutionProfile(load_balancing_policy=policies.RoundRobinPolicy())
    if a.shape != "named":
        if a.driver != "turbocql":
            print(json.dumps({"failed": "shape %s is turbocql's" % a.shape}))
            return 3
        profile.row_factory = query_mod.numpy_factory if a.shape == "numpy" else query_mod.arrow_factory
    cluster = cluster_mod.Cluster(
        [a.host], port=a.port, protocol_version=4, execution_profiles={cluster_mod.EXEC_PROFILE_DEFAULT: profile}
    )
    session = cluster.connect(a.keyspace)
    stmt = query_mod.SimpleStatement("SELECT * FROM %s" % a.table, fetch_size=a.page_size)
    c0, t0 = cpu(), time.perf_counter()
    rs = session.execute(stmt)
    if a.shape == "arrow":
        rows = rs.to_arrow().num_rows
    elif a.shape == "numpy":
        rows = sum(len(next(iter(page.values()))) for page in rs if page)
    else:
        rows = len(list(rs))
    seconds, cpu_s = time.perf_counter() - t0, cpu() - c0
    cluster.shutdown()
    print(
        json.dumps(
            {
                "client": a.client_name or a.driver,
                "shape": a.shape,
                "rows": rows,
                "seconds": round(seconds, 3),
                "rows_per_s": round(rows / seconds, 1),
                "cpu_s": round(cpu_s, 3),
                "cpu_us_per_row": round(cpu_s / rows * 1e6, 3) if rows else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
