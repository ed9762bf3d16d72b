"""turbocql's side of ``run_spark.py`` (benchmarks/README.md, "Spark"): one local[2]
SparkSession (pyspark 4) with ``turbocql.spark``, one phase per process.

* ``write``: ``spark.range(N)`` with the computed columns of :data:`COLUMNS` appended to the
  table with ``format("turbocql")``;
* ``read``: the whole table loaded with ``format("turbocql")`` and materialized through the
  ``noop`` sink, its rows counted by an ``Observation`` on the way.

Before the timed phase, a warm-up: the same write of ``--warmup-rows`` rows into the warm-up
table, then the same read of it. The timed phase is framed by the lines
``TURBOCQL-SPARK-BENCH start`` and ``TURBOCQL-SPARK-BENCH end`` on stdout; with
``--sync-stdin`` the client waits after each for a line on stdin (the runner samples the CPU of
the client's process tree and of the server in between). Last line: one JSON object.

The same columns, expressions and materialization as the connector's side,
``benchmarks/spark_ref`` (``SparkRef.java``; tests/unit/test_bench_spark.py checks that the
expressions match).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

MARKER = "TURBOCQL-SPARK-BENCH"
FORMAT = "turbocql"

# The table's columns from spark.range's id (the same strings as SparkRef.java's COLUMNS).
COLUMNS = (
    "id",
    "CAST(id % 100000 AS INT) AS i",
    "concat('name-', CAST(id AS STRING), '-', repeat('x', CAST(id % 20 AS INT))) AS t",
    "CAST(id AS DOUBLE) / 7 AS d",
    "timestamp_millis(1704067200000 + id * 1000) AS ts",
)


def marker(what: str, sync_stdin: bool) -> None:
    print(f"{MARKER} {what}", flush=True)
    if sync_stdin:
        sys.stdin.readline()  # the runner's sample is taken; EOF is fine too


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("phase", choices=("write", "read"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="spark_bench")
    ap.add_argument("--table", default="rows")
    ap.add_argument("--warmup-table", default="warmup")
    ap.add_argument("--warmup-rows", type=int, default=20_000)
    ap.add_argument("--sync-stdin", action="store_true")
    a = ap.parse_args(argv)

    import pyspark
    from pyspark.sql import Observation, SparkSession
    from pyspark.sql import functions as F

    import turbocql
    from turbocql import spark as tspark

    # The executors' Python workers import turbocql: they run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("turbocql-bench-spark-turbocql")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    tspark.register(spark)
    options = {"contact_points": a.host, "port": str(a.port), "keyspace": a.keyspace}

    def table(name):
        return spark.read.format(FORMAT).options(**options, table=name).load()

    def write(name: str, rows: int) -> None:
        spark.range(rows).selectExpr(*COLUMNS).write.format(FORMAT).options(**options, table=name).mode("append").save()

    def read(name: str) -> int:
        obs = Observation("rows")
        table(name).observe(obs, F.count(F.lit(1)).alias("rows")).write.format("noop").mode("overwrite").save()
        return int(obs.get["rows"])

    try:
        t0 = time.perf_counter()
        write(a.warmup_table, a.warmup_rows)
        warm = read(a.warmup_table)
        warmup_seconds = time.perf_counter() - t0
        partitions = (spark.range(a.rows) if a.phase == "write" else table(a.table)).rdd.getNumPartitions()

        marker("start", a.sync_stdin)
        start = time.perf_counter()
        if a.phase == "write":
            write(a.table, a.rows)
            done = a.rows
        else:
            done = read(a.table)
        seconds = time.perf_counter() - start
        marker("end", a.sync_stdin)

        jvm = spark.sparkContext._jvm.System
        print(
            json.dumps(
                {
                    "client": "turbocql",
                    "phase": a.phase,
                    "rows": done,
                    "seconds": seconds,
                    "partitions": partitions,
                    "warmup_rows": warm,
                    "warmup_seconds": warmup_seconds,
                    "materialization": "observe(count) + noop sink" if a.phase == "read" else "append",
                    "spark_version": spark.version,
                    "pyspark_version": pyspark.__version__,
                    "turbocql_version": turbocql.__version__,
                    "python_version": sys.version.split()[0],
                    "java_version": jvm.getProperty("java.version"),
                    "jvm": "%s %s" % (jvm.getProperty("java.vm.name"), jvm.getProperty("java.vm.version")),
                }
            ),
            flush=True,
        )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
