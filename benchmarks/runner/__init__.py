"""``turbocql bench``: the benchmark suite, in one run, with a report.

``python -m benchmarks.runner`` from the checkout's root (or ``python -m turbocql bench``
there): this package of the checkout, not of the driver, holds the command only; the
scenarios are the scripts of the ``benchmarks/`` directory it is in (or one in the current
directory or its parents, or given with ``--benchmarks-dir``), imported and run in this
order (what each measures, and why: benchmarks/README.md):

* ``sync``     ``run_sync.py``: sync execute with 1, 2, 4, 8, 16 threads, writes and reads;
* ``patterns`` ``run_patterns.py``: futures, callback chains, ``execute_concurrent``, the
  pipelines and the asyncio API, writes and reads;
* ``tuning``   ``run_tuning.py``: the pipelines' ``pipeline_tuning`` grid search;
* ``vectors``  ``run_vectors.py``: vector ingestion;
* ``tls``      ``run_tls.py``: ``execute_concurrent`` and asyncio, writes and reads, over TLS
  (a TLS node, ``--tls-port`` 9044, started for the scenario if none answers and then
  stopped) beside the same runs in plain text;
* ``bulk``     ``run_bulk.py``: ``turbocql load`` / ``unload`` beside ``cqlsh COPY`` and the Rust
  reference, and full-table reads into Python (named tuples, numpy, Arrow);
* ``ingest``   ``run_ingest.py``: document 003's ingestion (geo rows, then element rows with two
  SELECTs per chunk) by threads, gevent, asyncio and turbocql's bulk path, by pool size;
* ``connections`` ``run_connections.py``: document 002's 64-byte ping-pong by connection count
  (``--connections``, 10 to 10,000) for Python's I/O models (asyncio, uvloop, selectors,
  threads, gevent) and a Rust tokio client as the limit, against its own Rust echo server (no
  Cassandra: run alone, it neither needs nor starts one);
* ``spark``    ``run_spark.py`` (optional: not in ``all``; needs Maven, Java 17 and pyspark):
  ``turbocql.spark`` against the Spark Cassandra Connector (``benchmarks/spark_ref``, Spark
  3.5), each a local[2] SparkSession, writing and reading ``--spark-rows`` rows.

Every client runs in its own process (classic driver, turbocql, the Rust reference, and on
request scylla-driver and acsylla) against one Cassandra. The Python peers run in their own
virtualenvs (``benchmarks/.venvs/<client>``, created on first use by ``benchmarks/peers.py``;
``--classic-python`` etc. to use another interpreter), turbocql with ``--python``. The server
is by default the local one at 127.0.0.1:9042 (``$TURBOCQL_PORT``), started with
:mod:`turbocql_localdb` if it does not answer. The server is warmed up once, first. The run
writes, in ``--out-dir`` (default ``benchmarks/results``): ``<name>.json`` (machine
description, versions, every result), ``<name>.md`` (the report's tables, turbocql and the
Rust reference beside the classic driver, with ratios) and ``<name>-*.png`` plots.

Modules: ``discover`` (the benchmarks directory, the runners), ``describe`` (machine and
server description), ``server`` (starting, pinning the server; the Rust reference), ``run``
(the run itself) and ``cli`` (the options). Like every subcommand module of ``turbocql`` it
imports nothing of the engine at import time.
"""

from __future__ import annotations

from .cli import add_parser, main
from .describe import describe_machine, describe_server
from .discover import (
    DEFAULT_CLIENTS,
    LOCAL_HOSTS,
    OPTIONAL_SCENARIOS,
    REQUIRED_FILES,
    SCENARIOS,
    SYNC_THREADS,
    TLS_HEAP,
    TLS_PORT,
    BenchError,
    find_benchmarks_dir,
)
from .run import run
from .server import TLSNode, ensure_server, pinned_server, tls_server

__all__ = [
    "DEFAULT_CLIENTS",
    "LOCAL_HOSTS",
    "OPTIONAL_SCENARIOS",
    "REQUIRED_FILES",
    "SCENARIOS",
    "SYNC_THREADS",
    "TLS_HEAP",
    "TLS_PORT",
    "BenchError",
    "TLSNode",
    "add_parser",
    "describe_machine",
    "describe_server",
    "ensure_server",
    "find_benchmarks_dir",
    "main",
    "pinned_server",
    "run",
    "tls_server",
]
