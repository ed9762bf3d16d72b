"""Sync-execute benchmark runner: classic driver vs turbocql vs the pure-Rust reference.

In one run, after warming the server up with the Rust client, it runs for each workload
(``--workloads write,read``) and each thread count (``--threads 1,16``) each client in its
own subprocess, one after the other:

* ``classic``  — ``clients/sync_threads.py --driver cassandra`` (cassandra-driver, in its own
  virtualenv: ``peers.py``),
* ``scylla``   — the same client on scylla-driver (optional, its own virtualenv),
* ``turbocql`` — ``clients/sync_threads.py --driver turbocql``,
* ``rust``     — ``rust_ref`` with ``--pattern sync --threads N`` (N tokio tasks),

(acsylla has no sync API: it is not run here),

plus, unless ``--no-concurrent-ref``, the Rust reference with 120 requests in flight
(the ceiling of any pattern). It prints a Markdown table with ratios (ops/s vs classic,
client CPU vs rust at the same thread count) and, with ``--out``, writes the raw JSON lines
to ``benchmarks/results/sync-<date>.json``. A client that fails is reported as failed.

Example::

    python3 benchmarks/run_sync.py --ops 20000 --pin-client 1 --out
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up, timing and reporting)
    DEFAULT_RUST_BIN,
    add_client_arguments,
    add_repeat_argument,
    add_reset_argument,
    add_run_arguments,
    add_server_arguments,
    check_pin_client,
    client_cmd,
    clients_meta,
    ensure_rust_bin,
    find_server_pid,
    fmt_num,
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
    vm_hwm_kb,
    wait_for_port,
    warm_up_server,
    with_unavailable,
    write_json,
)

# Re-exported for the scripts that took these helpers from this runner before common.py.
__all__ = [
    "DEFAULT_RUST_BIN",
    "client_cmd",
    "clients_meta",
    "ensure_rust_bin",
    "find_server_pid",
    "fmt_num",
    "median_runs",
    "run_client",
    "unavailable_lines",
    "vm_hwm_kb",
    "wait_for_port",
    "warm_up_server",
    "RUST_OS_LABEL",
    "markdown_table",
    "main",
]
CLIENT_PY = HERE / "clients" / "sync_threads.py"

RUST_OS_LABEL = "rust, OS threads"
"""The Rust reference with N blocking OS threads (``--pattern sync-threads``), beside the
``rust`` row's N tokio tasks on one worker thread."""


def markdown_table(results: list[dict]) -> str:
    head = (
        "| client | workload | threads | ops/s | client CPU µs/op | server CPU µs/op "
        "| p50 µs | p95 µs | p99 µs | peak RSS MB | ops/s vs classic | CPU vs rust "
        "| CPU vs rust, OS threads |"
    )
    lines = [head, "| " + " | ".join(["---"] * 13) + " |"]
    by = {(r["label"], r["workload"], r["threads"]): r for r in results}

    def cpu_vs(r: dict, ref: dict | None) -> str:
        if not ref or "failed" in ref:
            return ""
        return f"{r['cpu_us_per_op'] / ref['cpu_us_per_op']:.2f}×"

    for r in results:
        name, wl, th = r["label"], r["workload"], r["threads"]
        if "failed" in r:
            lines.append(f"| {name} | {wl} | {th} | failed: {r['failed'].replace('|', '/')} | | | | | | | | | |")
            continue
        classic = by.get(("classic", wl, th))
        vs_classic = ""
        if classic and "failed" not in classic:
            vs_classic = f"{r['ops_per_s'] / classic['ops_per_s']:.2f}×"
        vs_rust = cpu_vs(r, by.get(("rust", wl, th)))
        vs_rust_os = cpu_vs(r, by.get((RUST_OS_LABEL, wl, th)))
        errs = f" ({r['errors']} errors)" if r.get("errors") else ""
        lines.append(
            f"| {name}{errs} | {wl} | {th} | {fmt_num(r['ops_per_s'])} "
            f"| {fmt_num(r['cpu_us_per_op'], 1)} | {fmt_num(r.get('server_cpu_us_per_op'), 1)} "
            f"| {fmt_num(r.get('p50_us'))} | {fmt_num(r.get('p95_us'))} "
            f"| {fmt_num(r.get('p99_us'))} "
            f"| {fmt_num(r.get('process_max_rss_mb', r.get('max_rss_mb')), 0)} "
            f"| {vs_classic} | {vs_rust} | {vs_rust_os} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument("--ops", type=int, default=20000, help="timed operations per client run")
    ap.add_argument("--threads", default="1,16", help="comma-separated thread counts")
    ap.add_argument("--workloads", default="write,read", help="comma-separated: write,read")
    ap.add_argument(
        "--clients",
        default="classic,turbocql,rust",
        help="comma-separated subset of classic,scylla,turbocql,rust (acsylla has no sync API and is skipped)",
    )
    ap.add_argument(
        "--no-concurrent-ref", action="store_true", help="skip the Rust reference with 120 requests in flight"
    )
    ap.add_argument("--warmup", type=int, default=2000, help="client warm-up requests")
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument(
        "--server-warmup-ops",
        type=int,
        default=100000,
        help="writes and reads by the Rust client (120 in flight) before anything",
    )
    add_client_arguments(ap)
    peers.add_arguments(ap)
    add_repeat_argument(ap)
    add_reset_argument(ap)
    add_run_arguments(ap, "sync", 1800)
    ap.add_argument(
        "--report",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="write the Markdown report (default path benchmarks/results/sync-latest.md)",
    )
    args = ap.parse_args(argv)

    threads = [int(t) for t in args.threads.split(",") if t]
    workloads = [w for w in args.workloads.split(",") if w]
    try:
        clients = peers.parse_clients(args.clients)
    except ValueError as e:
        ap.error(str(e))
    check_pin_client(ap, args.pin_client)
    if "acsylla" in clients:
        print("acsylla has no sync API: not run by the sync scenario", file=sys.stderr)
        clients.remove("acsylla")

    if not require_server(args.host, args.port, args.wait, hint=False):
        return 2
    server_pid = args.server_pid or find_server_pid(args.port, args.host)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build) if "rust" in clients else None
    pyclients = peers.from_args(args, clients)
    reset_bin = rust_bin or (ensure_rust_bin(args.rust_bin, args.build) if args.reset else None)

    common = server_args(args.host, args.port, args.keyspace, server_pid, args.rows)

    def rust_cmd(workload: str, ops: int, extra: list[str]) -> list[str]:
        return rust_command(rust_bin, common, workload, ops, extra)

    if args.server_warmup_ops > 0:
        warm_up_server(
            rust_bin or ensure_rust_bin(args.rust_bin, args.build),
            common,
            args.server_warmup_ops,
            args.pin_client,
            args.timeout,
        )

    results: list[dict] = []
    for wl in workloads:
        runs: list[tuple[str, int, list[str] | None]] = []
        for th in threads:
            for c in clients:
                if c == "rust":
                    cmd = (
                        None
                        if rust_bin is None
                        else rust_cmd(
                            wl, args.ops, ["--pattern", "sync", "--threads", str(th), "--warmup", str(args.warmup)]
                        )
                    )
                elif pyclients[c].available:
                    cmd = client_cmd(
                        pyclients[c],
                        CLIENT_PY,
                        [
                            *common,
                            "--workload",
                            wl,
                            "--ops",
                            str(args.ops),
                            "--threads",
                            str(th),
                            "--warmup",
                            str(args.warmup),
                        ],
                    )
                else:
                    continue  # not available: said once under the table
                runs.append((c, th, cmd))
                if c == "rust":
                    runs.append(
                        (
                            RUST_OS_LABEL,
                            th,
                            None
                            if rust_bin is None
                            else rust_cmd(
                                wl,
                                args.ops,
                                ["--pattern", "sync-threads", "--threads", str(th), "--warmup", str(args.warmup)],
                            ),
                        )
                    )
        if "rust" in clients and not args.no_concurrent_ref:
            runs.append(
                (
                    "rust, 120 in flight",
                    120,
                    None
                    if rust_bin is None
                    else rust_cmd(
                        wl, args.ops, ["--pattern", "concurrent", "--concurrency", "120", "--warmup", str(args.warmup)]
                    ),
                )
            )
        group = None
        for i, (label, th, cmd) in enumerate(runs * max(1, args.repeat)):
            if args.reset and (th, i // len(runs)) != group:  # each thread count, each round
                reset_table(reset_bin, common, args.pin_client, args.timeout)
            group = (th, i // len(runs))
            print(f"{wl:5} {label:>20} threads={th:<3} ...", end=" ", file=sys.stderr, flush=True)
            r = (
                {"failed": "Rust reference not built"}
                if cmd is None
                else run_client(cmd, args.pin_client, args.timeout)
            )
            r.update(label=label, workload=wl, threads=th)
            if label in pyclients:
                r["interpreter"] = pyclients[label].python
            print(ops_line(r), file=sys.stderr, flush=True)
            results.append(r)

    results = median_runs(results, lambda r: (r["label"], r["workload"], r["threads"]))
    cpu_info = f"{os.cpu_count()} CPUs"
    if args.repeat > 1:
        cpu_info += f"; each client run {args.repeat} times, the median run (client CPU) shown"
    if args.reset:
        cpu_info += "; table truncated and read rows rewritten before each thread count's runs"
    heading = (
        f"Sync execute, {args.ops:,} ops per run, prepared statements; {cpu_info}"
        f"{pin_note(args.pin_client)}; "
        f"server pid {server_pid or 'unknown'}."
    )
    table = with_unavailable(markdown_table(results), pyclients)
    print(f"\n{heading}\n")
    print(table)
    if args.report is not None:
        rpath = Path(args.report) if args.report else HERE / "results" / "sync-latest.md"
        rpath.parent.mkdir(parents=True, exist_ok=True)
        command = "python benchmarks/run_sync.py " + " ".join(sys.argv[1:])
        rpath.write_text(
            f"# Sync execute: classic driver vs turbocql vs Rust\n\n"
            f"{dt.datetime.now():%Y-%m-%d %H:%M}, `{command}`\n\n{heading}\n\n{table}\n"
        )
        print(f"report: {rpath}", file=sys.stderr)

    if args.out is not None:
        meta = run_meta(sys.argv[1:], None, server_pid, heading, pyclients)
        write_json(args.out, "sync", meta, results, lead="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
