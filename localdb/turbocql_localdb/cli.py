"""``turbocql localdb start|stop|status|kill``: the command line (registered by turbocql.__main__;
``python -m turbocql_localdb`` runs it without the driver).

:func:`add_parser` registers the subcommand and its options; the ``_cmd_*`` functions
run the actions and turn :class:`LocalDBError` into a message and an exit code. One node
by default; a cluster (cluster.py) with ``--nodes N`` (N > 1), ``--dcs``, ``--racks``,
``--first-address`` or ``--node K``, or when ``--dir`` holds a ``cluster.json``.
"""

from __future__ import annotations

import argparse
import ssl
import sys
from pathlib import Path

from .cluster import (
    DEFAULT_CLUSTER_HEAP,
    DEFAULT_CLUSTER_NODES,
    DEFAULT_FIRST_ADDRESS,
    STOPPED,
    UP,
    LocalCluster,
    cluster_dir,
    find_cluster,
    start_cluster,
)
from .node import (
    _HEAP_RE,
    CLUSTER_FILE,
    DEFAULT_ADDRESS,
    DEFAULT_HEAP,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    EXIT_FAILED,
    EXIT_NOT_RUNNING,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    TLSFiles,
    _load_node,
    parse_setting,
)
from .probe import cql_answers
from .process import settings_words, start, status, stop


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


def _setting_arg(value: str) -> tuple[str, str]:
    try:
        return parse_setting(value)
    except LocalDBError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _int_arg(value: str) -> int:
    """An integer; its range is checked by the API (a LocalDBError with exit code 2)."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {value!r}") from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``localdb {start,stop,status,kill}`` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "localdb",
        help="start/stop/status a local Apache Cassandra 5.0 node or cluster",
        description="Run a local Apache Cassandra 5.0.x node, or a cluster of several nodes on "
        "127.0.0.X addresses (--nodes N), from Maven Central jars (needs java 11/17 and, the "
        "first time, mvn).",
    )
    actions = parser.add_subparsers(dest="localdb_action", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser, node_help: str) -> None:
        p.add_argument(
            "--dir",
            default=None,
            help="node directory (default: $TURBOCQL_LOCALDB_DIR or "
            "~/.cache/turbocql/localdb/node1; node-<port> for other ports), or a cluster's "
            "base directory (default ~/.cache/turbocql/localdb/cluster-<first address>)",
        )
        p.add_argument("--port", type=_port_arg, default=None, help=f"native CQL port (default {DEFAULT_PORT})")
        p.add_argument(
            "--first-address",
            default=None,
            help=f"a cluster's first node address (default {DEFAULT_FIRST_ADDRESS}); "
            "names the cluster's default directory",
        )
        p.add_argument("--node", type=_int_arg, default=None, metavar="K", help=node_help)

    p_start = actions.add_parser("start", help="start the node or cluster (no-op if it runs) and wait for CQL")
    common(p_start, "start only node K of an existing cluster, with its saved settings (it rejoins the ring)")
    p_start.add_argument("--address", default=DEFAULT_ADDRESS, help=f"listen/rpc address (default {DEFAULT_ADDRESS})")
    p_start.add_argument(
        "--storage-port", type=_port_arg, default=None, help="inter-node port (default 7000 + (port - 9042))"
    )
    p_start.add_argument(
        "--heap",
        type=_heap_arg,
        default=None,
        help=f"JVM heap, -Xms/-Xmx (default {DEFAULT_HEAP}; {DEFAULT_CLUSTER_HEAP} per node for a cluster)",
    )
    p_start.add_argument(
        "--commitlog",
        choices=("periodic", "batch"),
        default=None,
        help="commit log sync: periodic (Cassandra's default, every 10 s) or batch "
        "(fsync before each acknowledgement: acknowledged writes survive kill -9)",
    )
    p_start.add_argument(
        "--auth",
        action="store_true",
        help="PasswordAuthenticator + CassandraAuthorizer (superuser cassandra/cassandra)",
    )
    p_start.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="TLS only on the native port: a private CA and certificates are made in the node's "
        "tls/ (ca.pem, ca-key.pem, node.pem, client.pem, client-key.pem; kept across restarts, one CA "
        "per cluster); connect with an SSLContext trusting tls/ca.pem. Default: as the node was "
        "last started (off for a new node); --no-tls turns it off",
    )
    p_start.add_argument(
        "--require-client-auth",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with TLS (implies --tls): clients must present a certificate signed by the CA, e.g. "
        "tls/client.pem with tls/client-key.pem. Default: as the node was last started",
    )
    settings = p_start.add_mutually_exclusive_group()
    settings.add_argument(
        "--setting",
        type=_setting_arg,
        action="append",
        default=None,
        metavar="NAME=VALUE",
        help="a single node: a top-level cassandra.yaml setting, replacing localdb's value or added "
        "(repeatable), e.g. --setting materialized_views_enabled=false for a node configured as "
        "Cassandra's stock cassandra.yaml; saved in node.json. Default: as the node was last "
        "started (none for a new node)",
    )
    settings.add_argument(
        "--no-settings",
        action="store_true",
        help="drop the --setting values the node was last started with",
    )
    p_start.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for CQL, per node (default {DEFAULT_TIMEOUT:.0f})",
    )
    p_start.add_argument(
        "--version", default=DEFAULT_VERSION, help=f"cassandra-all version, 5.0.x (default {DEFAULT_VERSION})"
    )
    p_start.add_argument(
        "--nodes",
        type=_int_arg,
        default=None,
        metavar="N",
        help=f"number of nodes: 1 (default) or a cluster of N on consecutive addresses "
        f"({DEFAULT_CLUSTER_NODES} when only --dcs/--racks/--first-address is given)",
    )
    p_start.add_argument(
        "--dcs",
        type=_int_arg,
        default=None,
        metavar="D",
        help="a cluster's datacenters dc1..dcD, contiguous blocks of nodes (default 1)",
    )
    p_start.add_argument(
        "--racks",
        type=_int_arg,
        default=None,
        metavar="R",
        help="racks rack1..rackR per datacenter, round-robin (default 1)",
    )
    p_start.set_defaults(func=_cmd_start)

    p_stop = actions.add_parser("stop", help="stop the node or every node of the cluster in --dir")
    common(p_stop, "stop only node K of the cluster (SIGTERM, then wait)")
    p_stop.add_argument(
        "--timeout",
        type=float,
        default=STOP_TIMEOUT,
        help=f"seconds to wait after SIGTERM before SIGKILL (default {STOP_TIMEOUT:.0f})",
    )
    p_stop.set_defaults(func=_cmd_stop)

    p_status = actions.add_parser(
        "status",
        help="running or not (exit 0 if running, 3 if not); for a cluster, every node "
        "(exit 0 if all are UP, 1 if some are not, 3 if none runs)",
    )
    common(p_status, "show only node K of the cluster")
    p_status.set_defaults(func=_cmd_status)

    p_kill = actions.add_parser("kill", help="SIGKILL node K of a cluster (a crash, for failover tests)")
    common(p_kill, "the node to kill (required)")
    p_kill.set_defaults(func=_cmd_kill)
    return parser


def _print_err(msg: str) -> None:
    print(f"turbocql localdb: {msg}", file=sys.stderr)


def _cluster_wanted(args: argparse.Namespace) -> bool:
    """Whether the command is about a cluster rather than a single node."""
    if args.node is not None or args.first_address is not None:
        return True
    if getattr(args, "nodes", None) not in (None, 1):
        return True
    if getattr(args, "dcs", None) is not None or getattr(args, "racks", None) is not None:
        return True
    return args.dir is not None and (Path(args.dir).expanduser() / CLUSTER_FILE).is_file()


def _cluster_base(args: argparse.Namespace) -> Path:
    if args.dir is not None:
        return Path(args.dir).expanduser().absolute()
    return cluster_dir(args.first_address or DEFAULT_FIRST_ADDRESS, args.port or DEFAULT_PORT)


def _load_cluster(args: argparse.Namespace) -> LocalCluster:
    cluster = find_cluster(args.dir, args.first_address, args.port or DEFAULT_PORT)
    if cluster is None:
        raise LocalDBError(
            f"no localdb cluster in {_cluster_base(args)} (no {CLUSTER_FILE}); start one with "
            "`turbocql localdb start --nodes N`",
            EXIT_NOT_RUNNING,
        )
    return cluster


def _say(msg: str) -> None:
    print(msg, flush=True)


def _cmd_start(args: argparse.Namespace) -> int:
    try:
        if _cluster_wanted(args):
            return _start_cluster(args)
        node = start(
            args.dir,
            args.port if args.port is not None else DEFAULT_PORT,
            args.heap or DEFAULT_HEAP,
            args.auth,
            args.timeout,
            address=args.address,
            storage_port=args.storage_port,
            version=args.version,
            commitlog=args.commitlog or "periodic",
            tls=args.tls,
            require_client_auth=args.require_client_auth,
            yaml_settings=_settings_choice(args),
            out=_say,
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
    _print_settings(node)
    _print_tls(node.tls_files(), node.require_client_auth, "  ")
    return 0


def _settings_choice(args: argparse.Namespace) -> dict[str, str] | None:
    """``start``'s yaml_settings: those of --setting, none with --no-settings, else None (as saved)."""
    if args.setting:
        return dict(args.setting)
    return {} if args.no_settings else None


def _print_settings(node: Node) -> None:
    """The ``settings:`` line of start and status (the node's --setting values), if any."""
    if node.yaml_settings:
        print(f"  settings: {settings_words(node.yaml_settings)}")


def _print_tls(files: TLSFiles | None, require_client_auth: bool, indent: str, cluster: bool = False) -> None:
    """The ``tls:`` lines of start and status: on/off and the files a client needs."""
    if files is None:
        return
    print(f"{indent}tls:    on{' (client auth required)' if require_client_auth else ''}")
    print(f"{indent}  ca:          {files.ca}")
    print(f"{indent}  client cert: {files.client_cert}")
    print(f"{indent}  client key:  {files.client_key}")
    if cluster:  # one CA and one client certificate for all; a keystore per node
        keystore = files.dir.parent.parent / "nodeK" / files.dir.name / files.node_keystore.name
        print(f"{indent}  keystores:   {keystore} (one per node)")
    else:
        print(f"{indent}  keystore:    {files.node_keystore}")


def _start_cluster(args: argparse.Namespace) -> int:
    if args.address != DEFAULT_ADDRESS:
        raise LocalDBError(
            "--address is for a single node: a cluster's nodes take consecutive addresses from --first-address",
            EXIT_USAGE,
        )
    if args.setting or args.no_settings:
        raise LocalDBError("--setting and --no-settings are for a single node, not a cluster", EXIT_USAGE)
    if args.node is not None:
        if (args.nodes, args.dcs, args.racks, args.tls, args.require_client_auth) != (None,) * 5:
            raise LocalDBError(
                "--node K starts one node of an existing cluster with its saved settings: "
                "drop --nodes/--dcs/--racks/--tls/--require-client-auth",
                EXIT_USAGE,
            )
        cluster = _load_cluster(args)
        cluster.start_node(args.node, args.timeout, out=_say)
        _print_table(cluster, args.node)
        return 0
    cluster = start_cluster(
        args.nodes,
        args.dcs,
        args.racks,
        args.first_address,
        args.heap,
        args.dir,
        args.timeout,
        port=args.port,
        storage_port=args.storage_port,
        auth=True if args.auth else None,
        tls=args.tls,
        require_client_auth=args.require_client_auth,
        version=args.version,
        commitlog=args.commitlog,
        out=_say,
    )
    count = len(cluster.nodes)
    if cluster.already_running:
        print(f"already running: a cluster of {count} node(s), Cassandra {cluster.version}")
    else:
        print(
            f"a cluster of {count} node(s), Cassandra {cluster.version}, is up "
            f"(started {', '.join(cluster.started)} in {cluster.start_seconds:.1f} s)"
        )
    _print_table(cluster)
    print(f"  dir:    {cluster.dir}")
    print(f"  logs:   {cluster.dir}/nodeK/logs/system.log")
    if cluster.auth:
        print("  auth:   on (superuser cassandra/cassandra)")
    _print_tls(cluster.tls_files(), cluster.require_client_auth, "  ", cluster=True)
    return 0


def _print_table(cluster: LocalCluster, only: int | None = None) -> list[str]:
    """Print the cluster's nodes, one a line; returns their states."""
    rows = cluster.status()
    if only is not None:
        name = cluster.node(only).name
        rows = [r for r in rows if r.name == name]
    table = [("NODE", "ADDRESS", "DC", "RACK", "PID", "STATE")]
    table += [(r.name, r.address, r.datacenter, r.rack, str(r.pid or "-"), r.state) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return [r.state for r in rows]


def _cmd_stop(args: argparse.Namespace) -> int:
    try:
        if _cluster_wanted(args):
            return _stop_cluster(args)
        node = _load_node(args.dir, args.port)
        stopped = stop(args.dir, args.port, timeout=args.timeout)
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    if stopped:
        print(f"stopped the Cassandra node in {node.dir}")
    else:
        print(f"not running: no localdb node runs in {node.dir}")
    return 0


def _stop_cluster(args: argparse.Namespace) -> int:
    if args.node is not None:
        cluster = _load_cluster(args)
        n = cluster.node(args.node)
        if cluster.stop_node(args.node, args.timeout):
            print(f"stopped {n.name} ({n.address}) of the cluster in {cluster.dir}")
        else:
            print(f"not running: {n.name} ({n.address}) of the cluster in {cluster.dir}")
        return 0
    found = find_cluster(args.dir, args.first_address, args.port or DEFAULT_PORT)
    if found is None:
        print(f"not running: no localdb cluster in {_cluster_base(args)}")
        return 0
    stopped = found.stop(args.timeout)
    if stopped:
        print(f"stopped {', '.join(stopped)} of the cluster in {found.dir}")
    else:
        print(f"not running: no node of the cluster in {found.dir} runs")
    return 0


def _cmd_kill(args: argparse.Namespace) -> int:
    try:
        if args.node is None:
            raise LocalDBError("kill needs --node K (the node of a cluster to SIGKILL)", EXIT_USAGE)
        cluster = _load_cluster(args)
        n = cluster.node(args.node)
        killed = cluster.kill_node(args.node)
    except LocalDBError as e:
        _print_err(str(e))
        return e.exit_code
    print(f"{'killed' if killed else 'not running:'} {n.name} ({n.address}) of the cluster in {cluster.dir}")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    if _cluster_wanted(args):
        try:
            cluster = _load_cluster(args)
            print(
                f"cluster in {cluster.dir}: {len(cluster.nodes)} node(s), {cluster.dcs} DC(s), "
                f"Cassandra {cluster.version}, CQL port {cluster.port}"
            )
            states = _print_table(cluster, args.node)
            _print_tls(cluster.tls_files(), cluster.require_client_auth, "  ", cluster=True)
        except LocalDBError as e:
            if e.exit_code == EXIT_NOT_RUNNING:
                print(f"not running ({e})")
            else:
                _print_err(str(e))
            return e.exit_code
        if all(s == UP for s in states):
            return 0
        return EXIT_NOT_RUNNING if all(s == STOPPED for s in states) else EXIT_FAILED
    node = status(args.dir, args.port)
    if node.pid is None:
        print(f"not running (dir {node.dir})")
        return EXIT_NOT_RUNNING
    answers = cql_answers(node.address, node.port, ssl_context=_probe_context(node))
    cql = "CQL answers" if answers else "CQL does not answer (yet)"
    print(f"running: pid {node.pid}, {node.address}:{node.port}, {cql}")
    print(f"  dir:    {node.dir}")
    print(f"  log:    {node.log_path}")
    _print_settings(node)
    _print_tls(node.tls_files(), node.require_client_auth, "  ")
    return 0


def _probe_context(node: Node) -> ssl.SSLContext | None:
    """The node's probe context; None (a clear-text probe, which fails) if its files are unreadable."""
    try:
        return node.ssl_context()
    except (OSError, ValueError):
        return None
