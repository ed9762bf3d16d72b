"""``turbocql bench``'s options (registered by turbocql.__main__) and ``python -m benchmarks.runner``."""

from __future__ import annotations

import argparse
import os
import sys

from .discover import (
    CONNECTIONS,
    DEFAULT_CLIENTS,
    OPTIONAL_SCENARIOS,
    QUICK_CONNECTIONS,
    SCENARIOS,
    SYNC_THREADS,
    TLS_HEAP,
    TLS_PORT,
)
from .run import _cmd_bench


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``bench`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "bench",
        help="run the benchmark suite (benchmarks/README.md) and write a report",
        description="Run the benchmark scenarios of the source checkout's benchmarks/ "
        "directory (classic driver, turbocql and the pure-Rust reference, each in "
        "its own process) and write a JSON, a Markdown report and PNG plots.",
    )
    p.add_argument(
        "--scenarios",
        default="all",
        help=f"comma-separated: {', '.join(SCENARIOS)}; or all (default: every one but the optional "
        f"{', '.join(OPTIONAL_SCENARIOS)}, which needs Maven, Java 17 and pyspark)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small runs (5,000 ops, a 4×4 tuning grid, 5,000 vector rows): a few minutes per scenario",
    )
    p.add_argument(
        "--ops",
        type=int,
        default=None,
        help="timed requests per client run for sync, patterns and tls (default 20000; --quick: 5000)",
    )
    p.add_argument("--threads", default=SYNC_THREADS, help=f"sync thread counts (default {SYNC_THREADS})")
    p.add_argument(
        "--clients",
        default=DEFAULT_CLIENTS,
        help="comma-separated: classic, scylla, turbocql, acsylla, rust (default "
        f"{DEFAULT_CLIENTS}); scylla-driver and acsylla get their own "
        "virtualenvs, and one that cannot be installed is reported as not "
        "available while the run goes on",
    )
    p.add_argument("--peers", action="store_true", help="add the optional peers scylla-driver and acsylla to --clients")
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="sync and patterns: run every client N times in interleaved rounds and "
        "report each one's median run by client CPU (default 1; spark: 3, --quick 1)",
    )
    p.add_argument("--fine", action="store_true", help="tuning: the fine grid (13 × 11)")
    p.add_argument(
        "--tuning-ops", type=int, default=None, help="tuning: requests per grid point (default 10000; --quick: 3000)"
    )
    p.add_argument(
        "--in-flight-grid", default=None, help="tuning: in-flight values or start:stop:step (e.g. 100:4900:100)"
    )
    p.add_argument("--buffer-grid", default=None, help="tuning: buffer values or start:stop:step (e.g. 100:49900:100)")
    p.add_argument(
        "--vector-rows", type=int, default=None, help="vectors: rows per timed run (default 100000; --quick: 5000)"
    )
    p.add_argument(
        "--bulk-rows", type=int, default=None, help="bulk: rows of the table (default 1000000; --quick: 200000)"
    )
    p.add_argument(
        "--spark-rows",
        type=int,
        default=None,
        help="spark: rows written and read per client run (default 1000000; --quick: 100000)",
    )
    p.add_argument(
        "--ingest-records",
        type=int,
        default=None,
        help="ingest: element records per run (default 1440000, + 1/25 as many geo records; --quick: 144000)",
    )
    p.add_argument(
        "--ingest-pools", default=None, help="ingest: pool sizes, comma-separated (default 15,150,350; --quick: 15,150)"
    )
    p.add_argument(
        "--connections",
        default=None,
        help=f"connections: connection counts, comma-separated (default {CONNECTIONS}; --quick: {QUICK_CONNECTIONS})",
    )
    p.add_argument(
        "--tune-sysctls",
        action="store_true",
        help="connections: for its runs, widen net.ipv4.ip_local_port_range to 10240-65535 and cap "
        "net.ipv4.tcp_max_tw_buckets at 1024, put back after (needs root); by default nothing is changed",
    )
    p.add_argument("--pin-client", metavar="CPU", default=None, help="run every client under taskset -c CPU")
    p.add_argument(
        "--pin-server",
        metavar="CPU",
        default=None,
        help="pin every thread of the server process to CPU for the run (taskset -a -p; restored afterwards)",
    )
    p.add_argument(
        "--out-dir", default=None, help="where to write the JSON, report and plots (default benchmarks/results)"
    )
    p.add_argument("--name", default=None, help="file name stem of the outputs (default bench-<date>-<time>)")
    p.add_argument(
        "--benchmarks-dir",
        default=None,
        help="the checkout's benchmarks/ directory (default: found from the package or the current directory)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("TURBOCQL_PORT") or 9042),
        help="CQL port (default $TURBOCQL_PORT or 9042)",
    )
    p.add_argument(
        "--tls-port",
        type=int,
        default=int(os.environ.get("TURBOCQL_TLS_PORT") or TLS_PORT),
        help=f"tls: CQL port of the TLS node (default $TURBOCQL_TLS_PORT or {TLS_PORT}); "
        "started with turbocql localdb start --tls if nothing answers there, and then stopped after the scenario",
    )
    p.add_argument(
        "--tls-ca",
        metavar="PATH",
        default=None,
        help="tls: the TLS node's CA certificate (default: tls/ca.pem of turbocql localdb's node for --tls-port)",
    )
    p.add_argument("--tls-heap", default=TLS_HEAP, help=f"tls: heap of a TLS node the run starts (default {TLS_HEAP})")
    p.add_argument(
        "--no-start", action="store_true", help="do not start the local Cassandra (nor the TLS node) if nothing answers"
    )
    p.add_argument("--wait", type=float, default=60, help="seconds to wait for the server to answer (default 60)")
    p.add_argument(
        "--server-pid", type=int, default=None, help="server pid for server CPU µs/op (default: found from the port)"
    )
    p.add_argument(
        "--server-warmup-ops",
        type=int,
        default=None,
        help="Rust writes and reads before anything (default 100000; --quick: 50000)",
    )
    p.add_argument("--python", default=sys.executable, help="interpreter of the turbocql clients (default: this one)")
    for name, title in (("classic", "classic driver"), ("scylla", "scylla-driver"), ("acsylla", "acsylla")):
        p.add_argument(
            f"--{name}-python",
            metavar="PATH",
            default=None,
            help=f"interpreter of the {title} clients (default: the virtualenv "
            f"benchmarks/.venvs/{name}, created on first use)",
        )
    p.add_argument("--venvs-dir", default=None, help="where the peers' virtualenvs are (default benchmarks/.venvs)")
    p.add_argument(
        "--no-install",
        action="store_true",
        help="do not create or update the peers' virtualenvs (a missing one makes its client unavailable)",
    )
    p.add_argument(
        "--build",
        action="store_true",
        help="cargo build the Rust reference first (it is rebuilt anyway when missing or older than its sources)",
    )
    p.add_argument("--no-plots", action="store_true", help="no PNG plots")
    p.add_argument(
        "--latest",
        action="store_true",
        help="also write the report as <out-dir>/bench-latest.md (its plots stay <name>-*.png beside it)",
    )
    p.set_defaults(func=_cmd_bench, argv=None)
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.runner ...``: the same as ``turbocql bench ...``."""
    parser = argparse.ArgumentParser(prog="turbocql")
    add_parser(parser.add_subparsers(dest="command", required=True))
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(["bench", *argv])
    args.argv = argv
    return args.func(args)
