"""``turbocql load``, ``turbocql unload`` and ``turbocql count``: the command line of
``turbocql.bulk``. Imports the engine only when a command runs."""

from __future__ import annotations

import argparse
import json
import sys


def _connection_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connection")
    g.add_argument("--host", default="127.0.0.1", help="contact points, comma-separated (default 127.0.0.1)")
    g.add_argument("--port", type=int, default=9042)
    g.add_argument("-u", "--username")
    g.add_argument("-p", "--password")
    g.add_argument("--local-dc", help="the local datacenter (DCAwareRoundRobinPolicy); default: any")
    g.add_argument("--ssl-ca", metavar="PEM", help="verify the nodes' certificates with this CA (enables TLS)")
    g.add_argument("--ssl-cert", metavar="PEM", help="client certificate (mutual TLS)")
    g.add_argument("--ssl-key", metavar="PEM", help="client certificate's key")
    g.add_argument(
        "--consistency", default=None, help="consistency level, e.g. LOCAL_QUORUM (default: the driver's, LOCAL_ONE)"
    )
    p.add_argument("-k", "--keyspace", required=True)
    p.add_argument("-t", "--table", required=True)
    p.add_argument("--summary-json", metavar="PATH", help="write the summary as JSON to PATH ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_parser(subparsers) -> None:
    load = subparsers.add_parser("load", help="load rows from CSV, JSON lines, Parquet or Arrow IPC into a table")
    _connection_args(load)
    load.add_argument("-f", "--file", default="-", help="a file, a directory, a glob or - (stdin; the default)")
    load.add_argument(
        "--format", choices=("csv", "json", "parquet", "arrow"), help="default: from the file name, else csv"
    )
    load.add_argument(
        "--no-header",
        action="store_true",
        help="CSV without a header line: the table's columns in order (or --mapping's)",
    )
    load.add_argument("--delimiter", default=",")
    load.add_argument("--quote", default='"')
    load.add_argument("--escape", default=None, help="CSV escape character (default: none; quotes are doubled)")
    load.add_argument("--null", default="", help="CSV text that means null (default: an empty unquoted field)")
    load.add_argument("--skip-rows", type=int, default=0, help="lines to skip before the header")
    load.add_argument("-m", "--mapping", help="input_column=table_column,... (other input columns are ignored)")
    load.add_argument("--concurrency", type=int, default=256, help="writes in flight (default 256)")
    load.add_argument("--ttl", type=int)
    load.add_argument("--timestamp", type=int, help="write time in microseconds since the epoch")
    load.add_argument(
        "--max-errors",
        type=int,
        default=100,
        help="rejected and failed rows before the load stops (-1: no limit; default 100)",
    )
    load.add_argument("--bad-rows", default=None, help="where bad rows go (JSON lines; default TABLE.bad.jsonl)")
    load.add_argument("--dry-run", action="store_true", help="read and convert every value, write nothing")
    load.add_argument(
        "--batch-rows",
        type=int,
        default=32,
        help="rows with the same replicas written together, in UNLOGGED batches of up to N rows "
        "(default 32; 1: a request per row)",
    )
    load.add_argument(
        "--batch-bytes",
        type=int,
        default=3584,
        help="a batch's size at most, as the server counts it (default 3584; it warns past 5 KiB)",
    )
    load.add_argument("--chunk-rows", type=int, default=20_000, help=argparse.SUPPRESS)
    load.set_defaults(func=_load)

    unload = subparsers.add_parser("unload", help="unload a table to CSV, JSON lines, Parquet or Arrow IPC")
    _connection_args(unload)
    unload.add_argument("-o", "--output", default="-", help="output file (default -: stdout)")
    unload.add_argument(
        "--format", choices=("csv", "json", "parquet", "arrow"), help="default: from the file name, else csv"
    )
    unload.add_argument("-c", "--columns", help="columns, comma-separated (default all)")
    unload.add_argument("--where", help='more conditions, e.g. "v > 3 ALLOW FILTERING"')
    unload.add_argument("-q", "--query", help="a SELECT of your own, read as one paged query (no ring split)")
    unload.add_argument(
        "--split", metavar="I/N", help="only share I of N of the token ring (N processes unload one table together)"
    )
    unload.add_argument(
        "--ranges",
        type=int,
        help="token ranges to cut the ring (or the share) into (default 8 x concurrency, at least 64)",
    )
    unload.add_argument("--concurrency", type=int, default=4, help="token ranges read at once (default 4)")
    unload.add_argument("--page-size", type=int, default=5000)
    unload.add_argument("--no-header", action="store_true", help="CSV without a header line")
    unload.add_argument("--delimiter", default=",")
    unload.set_defaults(func=_unload)

    count = subparsers.add_parser("count", help="count a table's rows by token range, in parallel")
    _connection_args(count)
    count.add_argument("--where", help="more conditions (with ALLOW FILTERING where needed)")
    count.add_argument("--split", metavar="I/N", help="only share I of N of the token ring")
    count.add_argument("--ranges", type=int, help="token ranges (default 8 x concurrency, at least 64)")
    count.add_argument("--concurrency", type=int, default=16)
    count.set_defaults(func=_count)


def _connect(args):
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import DCAwareRoundRobinPolicy, RoundRobinPolicy, TokenAwarePolicy

    kwargs: dict = {"port": args.port}
    policy = DCAwareRoundRobinPolicy(local_dc=args.local_dc) if args.local_dc else RoundRobinPolicy()
    kwargs["execution_profiles"] = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(load_balancing_policy=TokenAwarePolicy(policy))
    }
    if args.username:
        from turbocql.auth import PlainTextAuthProvider

        kwargs["auth_provider"] = PlainTextAuthProvider(args.username, args.password or "")
    if args.ssl_ca or args.ssl_cert:
        import ssl

        ctx = ssl.create_default_context(cafile=args.ssl_ca)
        if args.ssl_cert:
            ctx.load_cert_chain(args.ssl_cert, args.ssl_key)
        kwargs["ssl_context"] = ctx
    cluster = Cluster([h.strip() for h in args.host.split(",") if h.strip()], **kwargs)
    return cluster, cluster.connect()


def _consistency(args):
    if args.consistency is None:
        return None
    from turbocql import ConsistencyLevel

    try:
        return ConsistencyLevel.name_to_value[args.consistency.upper()]
    except KeyError:
        raise SystemExit(
            "unknown consistency level %r (one of %s)" % (args.consistency, ", ".join(ConsistencyLevel.name_to_value))
        ) from None


def _summary(args, result) -> None:
    data = result.as_dict() if hasattr(result, "as_dict") else result
    if args.summary_json:
        text = json.dumps(data, indent=1, sort_keys=True)
        if args.summary_json == "-":
            print(text)
        else:
            with open(args.summary_json, "w") as f:
                f.write(text + "\n")


def _run(args, command: str, work):
    """Connects, runs ``work(session)`` and shuts down: ``(result, stopped)``, where a load
    stopped by ``BulkError`` gives its counts so far; None (exit status 2) when it could not
    run (bad arguments or input, said on stderr)."""
    from turbocql.bulk import BulkError

    cluster, session = _connect(args)
    try:
        return work(session), False
    except BulkError as e:
        print("turbocql %s: %s" % (command, e), file=sys.stderr)
        return None if e.result is None else (e.result, True)
    except (ValueError, FileNotFoundError, ImportError) as e:
        print("turbocql %s: %s" % (command, e), file=sys.stderr)
        return None
    finally:
        cluster.shutdown()


def _load(args) -> int:
    from turbocql.bulk import load

    ran = _run(
        args,
        "load",
        lambda session: load(
            session,
            args.keyspace,
            args.table,
            args.file,
            format=args.format,
            header=not args.no_header,
            delimiter=args.delimiter,
            quote=args.quote,
            escape=args.escape,
            null=args.null,
            skip_rows=args.skip_rows,
            mapping=args.mapping,
            concurrency=args.concurrency,
            consistency_level=_consistency(args),
            ttl=args.ttl,
            timestamp=args.timestamp,
            max_errors=args.max_errors,
            bad_rows=args.bad_rows or "%s.bad.jsonl" % args.table,
            dry_run=args.dry_run,
            progress=False if args.quiet else None,
            batch_rows=args.batch_rows,
            batch_bytes=args.batch_bytes,
            chunk_rows=args.chunk_rows,
        ),
    )
    if ran is None:
        return 2
    result, stopped = ran
    print(str(result), file=sys.stderr)
    _summary(args, result)
    return 1 if stopped or result.rejected or result.failed else 0


def _unload(args) -> int:
    from turbocql.bulk import unload

    ran = _run(
        args,
        "unload",
        lambda session: unload(
            session,
            args.keyspace,
            args.table,
            args.output,
            format=args.format,
            columns=[c.strip() for c in args.columns.split(",")] if args.columns else None,
            where=args.where,
            query=args.query,
            split=args.split,
            ranges=args.ranges,
            concurrency=args.concurrency,
            page_size=args.page_size,
            consistency_level=_consistency(args),
            header=not args.no_header,
            delimiter=args.delimiter,
            progress=False if args.quiet else None,
        ),
    )
    if ran is None:
        return 2
    print(str(ran[0]), file=sys.stderr)
    _summary(args, ran[0])
    return 0


def _count(args) -> int:
    from turbocql.bulk import count

    ran = _run(
        args,
        "count",
        lambda session: count(
            session,
            args.keyspace,
            args.table,
            where=args.where,
            split=args.split,
            ranges=args.ranges,
            concurrency=args.concurrency,
            consistency_level=_consistency(args),
        ),
    )
    if ran is None:
        return 2
    print(ran[0])
    _summary(args, {"rows": ran[0], "keyspace": args.keyspace, "table": args.table, "split": args.split})
    return 0
