"""TLS benchmark runner: the same requests over TLS and in plain text, in one run (benchmarks/README.md).

Two nodes: the plain-text one (``--host``/``--port``, the suite's node) and a TLS one
(``--tls-port``, default 9044, a node started with ``turbocql localdb start --tls``; its CA
certificate is ``--tls-ca``, by default ``tls/ca.pem`` in ``turbocql localdb``'s directory for
that port). For each workload (``--workloads write,read``) and each pattern
(``--patterns execute_concurrent,asyncio``), every client that has the pattern's API runs
once against the plain node and once against the TLS node (``clients/patterns.py``, with
``--tls-ca`` for the second), one process each, one after the other; the Rust reference
(``rust_ref --pattern concurrent --concurrency 120``, with ``--tls-ca``) runs both ways once per
workload. The classic driver and scylla-driver run with ``protocol_version=4`` both ways (the
protocol the ``scylla`` crate, hence turbocql, speaks). Before each group of runs both
nodes' tables are reset (``--no-reset``: not).

It prints one Markdown table (:func:`markdown_table`): per workload, pattern and client the
plain row and the TLS row, with ops/s, client CPU µs/op, server CPU µs/op (each row's own
node), latency percentiles, peak RSS, and on the TLS row the TLS overhead: client CPU TLS /
plain, TLS - plain in µs per request, and ops/s TLS / plain.

Example::

    python3 benchmarks/run_tls.py --quick --clients classic,turbocql,rust
    python3 benchmarks/run_tls.py --ops 20000 --tls-port 9044 --out
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up, timing and reporting)
    add_client_arguments,
    add_repeat_argument,
    add_reset_argument,
    add_run_arguments,
    add_server_arguments,
    check_pin_client,
    client_cmd,
    ensure_rust_bin,
    find_server_pid,
    fmt_num,
    load_note,
    median_runs,
    ops_line,
    pin_note,
    require_server,
    reset_table,
    run_client,
    run_meta,
    rust_command,
    server_args,
    unavailable_lines,
    warm_up_server,
    write_json,
)
from benchmarks.run_patterns import CLIENT_PY, SPEC_BY_NAME, TABLE_CLIENTS  # noqa: E402

DEFAULT_TLS_PORT = 9044
PATTERNS = ("execute_concurrent", "asyncio")
TRANSPORTS = ("plain", "tls")
TRANSPORT_NAMES = {"plain": "plain text", "tls": "TLS"}
CLASSIC_PROTOCOL = 4  # the classic API clients' protocol_version, both ways
RUST_PATTERN = "rust_concurrent"
RUST_TITLE = "reference: `scylla` crate, 120 in flight"
HEADER = (
    "| workload | pattern | client | transport | ops/s | client CPU µs/op | server CPU µs/op "
    "| p50 µs | p95 µs | p99 µs | peak RSS MB | TLS/plain client CPU | TLS − plain CPU µs/op | TLS/plain ops/s |"
)
COLUMNS = 14


def default_tls_ca(port: int) -> str | None:
    """``tls/ca.pem`` of ``turbocql localdb``'s node for ``port`` (None if it has no TLS files
    or turbocql is not importable here)."""
    try:
        import turbocql_localdb as localdb
    except ImportError:
        return None
    files = localdb.status(port=port).tls_files()
    return str(files.ca) if files is not None and files.ca.is_file() else None


def select_patterns(text: str) -> list[str]:
    """``--patterns``: a comma-separated subset of :data:`PATTERNS` (``all``: both)."""
    if text == "all":
        return list(PATTERNS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in PATTERNS:
            raise ValueError(f"unknown pattern {n!r} (known: {', '.join(PATTERNS)})")
    return [n for n in PATTERNS if n in names]


def transport_order(round_no: int) -> tuple[str, ...]:
    """Plain first in even rounds, TLS first in odd ones (``--repeat``), so that neither
    transport always meets the server right after the other's run."""
    return TRANSPORTS if round_no % 2 == 0 else TRANSPORTS[::-1]


def python_args(label: str, transport: str, tls_ca: str) -> list[str]:
    """A Python client's extra arguments for one transport."""
    extra = ["--protocol-version", str(CLASSIC_PROTOCOL)] if label in ("classic", "scylla") else []
    return extra + (["--tls-ca", tls_ca] if transport == "tls" else [])


def rust_supports_tls(rust_bin: Path | None) -> bool:
    """True if this build of the Rust reference has ``--tls-ca`` (its usage says so)."""
    if rust_bin is None:
        return False
    try:
        r = subprocess.run([str(rust_bin), "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--tls-ca" in r.stdout


def key(r: dict) -> tuple[str, str, str, str]:
    return (r["label"], r["spec"], r["workload"], r["transport"])


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a is not None and b else ""


def row_line(wl: str, pattern: str, r: dict | None, plain: dict | None) -> str:
    """One row; ``plain`` (the same client's plain row) gives the TLS row its ratios."""
    if r is None:
        return ""
    name = r["label"]
    transport = TRANSPORT_NAMES[r["transport"]]
    if "failed" in r:
        reason = r["failed"].replace("|", "/")
        return f"| {wl} | {pattern} | {name} | {transport} | failed: {reason} |" + " |" * (COLUMNS - 5)
    cpu_ratio = delta = ops_ratio = ""
    if r["transport"] == "tls" and plain is not None and "failed" not in plain:
        cpu_ratio = _ratio(r["cpu_us_per_op"], plain["cpu_us_per_op"])
        delta = f"{r['cpu_us_per_op'] - plain['cpu_us_per_op']:+,.1f}"
        ops_ratio = _ratio(r["ops_per_s"], plain["ops_per_s"])
    errs = f" ({r['errors']} errors)" if r.get("errors") else ""
    rss = r.get("process_max_rss_mb", r.get("max_rss_mb"))
    return (
        f"| {wl} | {pattern} | {name}{errs} | {transport} | {fmt_num(r['ops_per_s'])} "
        f"| {fmt_num(r['cpu_us_per_op'], 1)} | {fmt_num(r.get('server_cpu_us_per_op'), 1)} "
        f"| {fmt_num(r.get('p50_us'))} | {fmt_num(r.get('p95_us'))} | {fmt_num(r.get('p99_us'))} "
        f"| {fmt_num(rss, 0)} | {cpu_ratio} | {delta} | {ops_ratio} |"
    )


def markdown_table(results: list[dict], workloads=("write", "read"), patterns=PATTERNS) -> str:
    """The "TLS" table: per workload the Rust reference's pair, then per pattern and client
    its plain row and its TLS row (with the TLS overhead); "" if there is nothing to show."""
    by = {key(r): r for r in results}
    lines = [HEADER, "| " + " | ".join(["---"] * COLUMNS) + " |"]
    groups = [("rust", RUST_PATTERN, RUST_TITLE)] + [
        (label, p, SPEC_BY_NAME[p].label) for p in patterns for label in TABLE_CLIENTS
    ]
    for wl in workloads:
        for label, spec, title in groups:
            plain = by.get((label, spec, wl, "plain"))
            tls = by.get((label, spec, wl, "tls"))
            lines += [ln for ln in (row_line(wl, title, plain, None), row_line(wl, title, tls, plain)) if ln]
    return "\n".join(lines) if len(lines) > 2 else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument(
        "--tls-host", default=None, help="address of the TLS node (default: --host; its certificate must name it)"
    )
    ap.add_argument("--tls-port", type=int, default=DEFAULT_TLS_PORT, help="CQL port of the TLS node (default 9044)")
    ap.add_argument(
        "--tls-ca",
        metavar="PATH",
        default=None,
        help="the TLS node's CA certificate (default: tls/ca.pem of turbocql localdb's node for --tls-port)",
    )
    ap.add_argument(
        "--tls-server-pid", type=int, default=None, help="TLS node's pid for its server CPU (default: from the port)"
    )
    ap.add_argument(
        "--ops", type=int, default=None, help="timed operations per client run (default 20000; --quick: 5000)"
    )
    ap.add_argument("--patterns", default="all", help=f"comma-separated: {', '.join(PATTERNS)}; or all (default)")
    ap.add_argument("--workloads", default="write,read", help="comma-separated: write,read")
    ap.add_argument(
        "--clients",
        default="classic,turbocql,rust",
        help="comma-separated subset of classic,scylla,turbocql,acsylla,rust (acsylla runs asyncio only)",
    )
    ap.add_argument("--quick", action="store_true", help="small runs: 5,000 ops, 1,000 warm-up, 50,000 server warm-up")
    ap.add_argument(
        "--warmup", type=int, default=None, help="client warm-up requests, same pattern (default 2000; --quick: 1000)"
    )
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument(
        "--server-warmup-ops",
        type=int,
        default=None,
        help="plain node: Rust writes and reads (120 in flight) before anything (default 100000; --quick: 50000)",
    )
    ap.add_argument(
        "--tls-server-warmup-ops",
        type=int,
        default=None,
        help="TLS node: the same over TLS (default: as --server-warmup-ops)",
    )
    add_client_arguments(ap)
    peers.add_arguments(ap)
    add_repeat_argument(ap)
    add_reset_argument(ap)
    add_run_arguments(ap, "tls", None, "per client run, seconds (default 900; --quick: 300)")
    ap.add_argument(
        "--report",
        default=str(HERE / "results" / "tls-latest.md"),
        metavar="PATH",
        help="Markdown report (default %(default)s)",
    )
    ap.add_argument("--no-report", action="store_true", help="do not write the report")
    args = ap.parse_args(argv)

    q = args.quick
    ops = args.ops or (5000 if q else 20000)
    warmup = args.warmup if args.warmup is not None else (1000 if q else 2000)
    server_warmup = args.server_warmup_ops if args.server_warmup_ops is not None else (50000 if q else 100000)
    tls_warmup = args.tls_server_warmup_ops if args.tls_server_warmup_ops is not None else server_warmup
    timeout = args.timeout or (300 if q else 900)
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in ("write", "read"):
            ap.error(f"unknown workload {w!r}")
    try:
        clients = peers.parse_clients(args.clients)
        patterns = select_patterns(args.patterns)
    except ValueError as e:
        ap.error(str(e))
    check_pin_client(ap, args.pin_client)
    tls_host = args.tls_host or args.host
    tls_ca = args.tls_ca or default_tls_ca(args.tls_port)
    if tls_ca is None:
        ap.error(f"--tls-ca: no CA certificate found for the TLS node on port {args.tls_port}")
    tls_ca = str(Path(tls_ca).resolve())

    if not require_server(args.host, args.port, args.wait):
        return 2
    if not require_server(tls_host, args.tls_port, args.wait, hint=False):
        print("  (start one with: turbocql localdb start --tls --port PORT --heap 768M)", file=sys.stderr)
        return 2
    server_pid = args.server_pid or find_server_pid(args.port, args.host)
    tls_pid = args.tls_server_pid or find_server_pid(args.tls_port, args.host)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build)
    rust_tls = rust_supports_tls(rust_bin)
    pyclients = peers.from_args(args, clients)

    server_node_args = {  # the Python clients' (their TLS option is python_args')
        "plain": server_args(args.host, args.port, args.keyspace, server_pid, args.rows),
        "tls": server_args(tls_host, args.tls_port, args.keyspace, tls_pid, args.rows),
    }
    node_args = {"plain": server_node_args["plain"], "tls": [*server_node_args["tls"], "--tls-ca", tls_ca]}
    rust_for = {"plain": rust_bin, "tls": rust_bin if rust_tls else None}
    if rust_bin is not None and not rust_tls:
        print("the Rust reference was built without TLS (--tls-ca): no TLS warm-up, reset or row", file=sys.stderr)

    warm_up_server(rust_for["plain"], node_args["plain"], server_warmup, args.pin_client, timeout)
    if tls_warmup > 0:
        print("TLS node:", end=" ", file=sys.stderr)
        warm_up_server(rust_for["tls"], node_args["tls"], tls_warmup, args.pin_client, timeout)

    load_start = os.getloadavg()[0]
    results: list[dict] = []

    def record(label: str, spec: str, wl: str, transport: str, cmd: list[str] | None, missing: str = "") -> None:
        print(f"{wl:5} {spec:>18} {label:>8} {transport:>5} ...", end=" ", file=sys.stderr, flush=True)
        r = {"failed": missing} if cmd is None else run_client(cmd, args.pin_client, timeout)
        r.update(label=label, spec=spec, workload=wl, transport=transport)
        if label in pyclients:
            r["interpreter"] = pyclients[label].python
        print(ops_line(r), file=sys.stderr, flush=True)
        results.append(r)

    def reset() -> None:
        if args.reset:
            for t in TRANSPORTS:
                reset_table(rust_for[t], node_args[t], args.pin_client, timeout)

    specs = [SPEC_BY_NAME[p] for p in patterns]
    for round_no, wl in ((i, wl) for i in range(max(1, args.repeat)) for wl in workloads):
        order = transport_order(round_no)
        reset()
        if "rust" in clients:
            for t in order:
                missing = "Rust reference not built" if rust_bin is None else "Rust reference built without TLS"
                cmd = (
                    None
                    if rust_for[t] is None
                    else rust_command(
                        rust_for[t],
                        node_args[t],
                        wl,
                        ops,
                        ["--pattern", "concurrent", "--concurrency", "120", "--warmup", str(warmup)],
                    )
                )
                record("rust", RUST_PATTERN, wl, t, cmd, missing)
        for spec in specs:
            reset()
            for label in TABLE_CLIENTS:
                if label not in clients or not spec.runs_on(label) or not pyclients[label].available:
                    continue
                for t in order:
                    cmd = client_cmd(
                        pyclients[label],
                        CLIENT_PY,
                        [
                            *server_node_args[t],
                            *spec.args,
                            "--workload",
                            wl,
                            "--ops",
                            str(ops),
                            "--warmup",
                            str(warmup),
                            *python_args(label, t, tls_ca),
                        ],
                    )
                    record(label, spec.name, wl, t, cmd)

    results = median_runs(results, key)
    pin = pin_note(args.pin_client)
    heading = (
        f"{ops:,} ops per client run (+{warmup:,} warm-up), prepared statements, "
        f"distinct keys for writes, one-row reads over {args.rows:,} keys; "
        f"plain text: node {args.host}:{args.port} (pid {server_pid or 'unknown'}); "
        f"TLS: node {tls_host}:{args.tls_port} (pid {tls_pid or 'unknown'}), CA {tls_ca}, "
        "server certificate verified, no client certificate; "
        f"classic API clients on protocol v{CLASSIC_PROTOCOL}; {os.cpu_count()} CPUs{pin}; "
        + (
            f"each client run {args.repeat} times in interleaved rounds (plain and TLS first in turn), "
            "the median run (client CPU) shown; "
            if args.repeat > 1
            else ""
        )
        + (
            f"plain node warmed with {server_warmup:,} Rust writes and reads; "
            if server_warmup > 0
            else "plain node: no warm-up by this runner; "
        )
        + (
            f"TLS node warmed with {tls_warmup:,} Rust writes and reads over TLS; "
            if tls_warmup > 0 and rust_tls
            else "TLS node: no warm-up by this runner; "
        )
        + ("both tables truncated and read rows rewritten before each pattern's runs; " if args.reset else "")
        + load_note(load_start)
    )
    table = markdown_table(results, workloads, patterns)
    body = f"## TLS: execute_concurrent and asyncio over TLS beside plain text\n\n{table}"
    missing = unavailable_lines(pyclients)
    if missing:
        body += f"\n\n{missing}"
    print(f"\n{heading}\n\n{body}")

    if not args.no_report:
        rpath = Path(args.report)
        rpath.parent.mkdir(parents=True, exist_ok=True)
        command = "python benchmarks/run_tls.py " + " ".join(sys.argv[1:] if argv is None else argv)
        rpath.write_text(
            "# TLS vs plain text: classic driver vs turbocql vs Rust\n\n"
            f"{dt.datetime.now():%Y-%m-%d %H:%M}, `{command.strip()}`\n\n{heading}\n\n{body}\n"
        )
        print(f"report: {rpath}", file=sys.stderr)

    if args.out is not None:
        meta = run_meta(
            sys.argv[1:] if argv is None else argv,
            load_start,
            server_pid,
            heading,
            pyclients,
            ops=ops,
            warmup=warmup,
            server_warmup_ops=server_warmup,
            tls_server_warmup_ops=tls_warmup,
            tls_host=tls_host,
            tls_port=args.tls_port,
            tls_ca=tls_ca,
            tls_server_pid=tls_pid,
            rust_tls=rust_tls,
        )
        write_json(args.out, "tls", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
