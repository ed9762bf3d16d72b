"""``turbocql localdb start|stop|status``: the command line (registered by turbocql.__main__).

:func:`add_parser` registers the subcommand and its options; the ``_cmd_*`` functions
run the actions and turn :class:`LocalDBError` into a message and an exit code.
"""

from __future__ import annotations

import argparse
import sys

from .node import (
    _HEAP_RE,
    DEFAULT_ADDRESS,
    DEFAULT_HEAP,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    EXIT_NOT_RUNNING,
    STOP_TIMEOUT,
    LocalDBError,
    _load_node,
)
from .probe import cql_answers
from .process import start, status, stop


def _heap_arg(value: str) -> str:
    if not _HEAP_RE.match(value):
        raise argparse.ArgumentTypeError(f"invalid heap size {value!r} (use e.g. 1G, 2G, 512M)")
    return value.upper()


def _port_arg(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}")
    return port


def _nodes_arg(value: str) -> int:
    if value != "1":
        raise argparse.ArgumentTypeError("only --nodes 1 is supported for now")
    return 1


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``localdb {start,stop,status}`` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "localdb",
        help="start/stop/status a local Apache Cassandra 5.0 node",
        description="Run a local Apache Cassandra 5.0.x node from Maven Central jars "
        "(needs java 11/17 and, the first time, mvn).",
    )
    actions = parser.add_subparsers(dest="localdb_action", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--dir",
            default=None,
            help="node directory (default: $TURBOCQL_LOCALDB_DIR or "
            "~/.cache/turbocql/localdb/node1; node-<port> for other ports)",
        )
        p.add_argument("--port", type=_port_arg, default=None, help=f"native CQL port (default {DEFAULT_PORT})")

    p_start = actions.add_parser("start", help="start the node (no-op if it runs) and wait for CQL")
    common(p_start)
    p_start.add_argument("--address", default=DEFAULT_ADDRESS, help=f"listen/rpc address (default {DEFAULT_ADDRESS})")
    p_start.add_argument(
        "--storage-port", type=_port_arg, default=None, help="inter-node port (default 7000 + (port - 9042))"
    )
    p_start.add_argument(
        "--heap", type=_heap_arg, default=DEFAULT_HEAP, help=f"JVM heap, -Xms/-Xmx (default {DEFAULT_HEAP})"
    )
    p_start.add_argument(
        "--commitlog",
        choices=("periodic", "batch"),
        default="periodic",
        help="commit log sync: periodic (Cassandra's default, every 10 s) or batch "
        "(fsync before each acknowledgement: acknowledged writes survive kill -9)",
    )
    p_start.add_argument(
        "--auth",
        action="store_true",
        help="PasswordAuthenticator + CassandraAuthorizer (superuser cassandra/cassandra)",
    )
    p_start.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for CQL (default {DEFAULT_TIMEOUT:.0f})",
    )
    p_start.add_argument(
        "--version", default=DEFAULT_VERSION, help=f"cassandra-all version, 5.0.x (default {DEFAULT_VERSION})"
    )
    p_start.add_argument("--nodes", type=_nodes_arg, default=1, help="number of nodes (only 1 for now)")
    p_start.set_defaults(func=_cmd_start)

    p_stop = actions.add_parser("stop", help="stop the node started in --dir")
    common(p_stop)
    p_stop.add_argument(
        "--timeout",
        type=float,
        default=STOP_TIMEOUT,
        help=f"seconds to wait after SIGTERM before SIGKILL (default {STOP_TIMEOUT:.0f})",
    )
    p_stop.set_defaults(func=_cmd_stop)

    p_status = actions.add_parser("status", help="running or not (exit 0 if running, 3 if not)")
    common(p_status)
    p_status.set_defaults(func=_cmd_status)
    return parser


def _print_err(msg: str) -> None:
    print(f"turbocql localdb: {msg}", file=sys.stderr)


def _cmd_start(args: argparse.Namespace) -> int:
    port = args.port if args.port is not None else DEFAULT_PORT
    try:
        node = start(
            args.dir,
            port,
            args.heap,
            args.auth,
            args.timeout,
            address=args.address,
            storage_port=args.storage_port,
            version=args.version,
            commitlog=args.commitlog,
            out=lambda msg: print(msg, flush=True),
        )
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    if node.already_running:
        print(f"already running: Cassandra {node.version} at {node.address}:{node.port} (pid {node.pid})")
    else:
        print(
            f"Cassandra {node.version} is up at {node.address}:{node.port} "
            f"(pid {node.pid}, started in {node.start_seconds:.1f} s)"
        )
    print(f"  dir:    {node.dir}")
    print(f"  log:    {node.log_path}")
    print(f"  output: {node.output_path}")
    if node.auth:
        print("  auth:   on (superuser cassandra/cassandra)")
    return 0


def _cmd_stop(args: argparse.Namespace) -> int:
    node = _load_node(args.dir, args.port)
    try:
        stopped = stop(args.dir, args.port, timeout=args.timeout)
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    if stopped:
        print(f"stopped the Cassandra node in {node.dir}")
    else:
        print(f"not running: no localdb node runs in {node.dir}")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    node = status(args.dir, args.port)
    if node.pid is None:
        print(f"not running (dir {node.dir})")
        return EXIT_NOT_RUNNING
    cql = "CQL answers" if cql_answers(node.address, node.port) else "CQL does not answer (yet)"
    print(f"running: pid {node.pid}, {node.address}:{node.port}, {cql}")
    print(f"  dir: {node.dir}")
    print(f"  log: {node.log_path}")
    return 0
