"""Vector-ingestion runner (benchmarks/README.md): classic driver vs turbocql vs Rust.

For each input format (``--inputs list,numpy``) it runs ``clients/vectors.py`` with the classic
driver and with turbocql, each in its own subprocess, then the pure-Rust reference
(``rust_ref --workload vector``, the same rows inserted with the same concurrency), one after
the other. Every client loads its rows into memory before timing, inserts ``--warmup-rows``
untimed, then does ``--runs`` timed runs (TRUNCATE before each) of ALL rows through ONE
``execute_concurrent_with_args`` call (Rust: ``buffer_unordered`` over all rows). The table
shows best / average / worst rows/s, client and server CPU µs per row, the client's peak RSS
(``VmHWM``, whole process life) and its RSS once the rows were loaded, with ratios against
the classic driver on the same input and against the Rust reference's CPU.

Example::

    python3 benchmarks/run_vectors.py --rows 20000 --out
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up, timing and reporting)
    add_client_arguments,
    add_run_arguments,
    add_server_arguments,
    check_pin_client,
    client_cmd,
    ensure_rust_bin,
    find_server_pid,
    fmt_num,
    load_note,
    pin_note,
    require_server,
    run_client,
    run_meta,
    server_args,
    warm_up_server,
    with_unavailable,
    write_json,
)

CLIENT_PY = HERE / "clients" / "vectors.py"
TABLE_CLIENTS = ("classic", "scylla", "turbocql")
INPUT_LABELS = {
    "list": "Python lists",
    "numpy": "numpy float32 rows",
    "columns": "dict of columns (2-D float32 array)",
    "vec": "Rust Vec<f32>",
}


def markdown_table(results: list[dict]) -> str:
    """One row per (client, input): best/avg/worst rows/s, CPU, RSS, ratios."""
    head = (
        "| client | vectors from | rows/s best | rows/s avg | rows/s worst "
        "| client CPU µs/row | server CPU µs/row | RSS with rows loaded MB | peak RSS MB "
        "| avg rows/s vs classic | CPU vs rust |"
    )
    lines = [head, "| " + " | ".join(["---"] * 11) + " |"]
    by = {(r["label"], r.get("input")): r for r in results}
    rust = next((r for r in results if r["label"] == "rust" and "failed" not in r), None)
    for r in results:
        name = r["label"]
        inp = INPUT_LABELS.get(r.get("input"), r.get("input") or "")
        if "failed" in r:
            lines.append(f"| {name} | {inp} | failed: {r['failed'].replace('|', '/')} | | | | | | | | |")
            continue
        classic = by.get(("classic", r.get("input")))
        if name == "rust":  # compare with the classic driver's best input format
            classic = max(
                (c for c in results if c["label"] == "classic" and "failed" not in c),
                key=lambda c: c["avg_ops_per_s"],
                default=None,
            )
        vs_classic = vs_rust = ""
        if classic and "failed" not in classic and classic is not r:
            vs_classic = f"{r['avg_ops_per_s'] / classic['avg_ops_per_s']:.2f}×"
            if name == "rust":
                vs_classic += f" (classic, {classic.get('input')})"
        if rust and rust["cpu_us_per_op"]:
            vs_rust = f"{r['cpu_us_per_op'] / rust['cpu_us_per_op']:.2f}×"
        errs = f" ({r['errors']} errors)" if r.get("errors") else ""
        rss = r.get("process_max_rss_mb", r.get("max_rss_mb"))
        lines.append(
            f"| {name}{errs} | {inp} | {fmt_num(r['best_ops_per_s'])} "
            f"| {fmt_num(r['avg_ops_per_s'])} | {fmt_num(r['worst_ops_per_s'])} "
            f"| {fmt_num(r['cpu_us_per_op'], 1)} | {fmt_num(r.get('server_cpu_us_per_op'), 1)} "
            f"| {fmt_num(r.get('rss_after_load_mb'), 0)} | {fmt_num(rss, 0)} "
            f"| {vs_classic} | {vs_rust} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument("--rows", type=int, default=None, help="rows per timed run (default 100000; --quick: 5000)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--warmup-rows", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument(
        "--inputs", default="list,numpy", help="comma-separated: list,numpy,columns (columns: turbocql only)"
    )
    ap.add_argument(
        "--clients",
        default="classic,turbocql,rust",
        help="comma-separated subset of classic,scylla,turbocql,rust (acsylla "
        "has no execute_concurrent and is skipped)",
    )
    ap.add_argument("--quick", action="store_true", help="5,000 rows per run")
    ap.add_argument(
        "--server-warmup-ops",
        type=int,
        default=0,
        help="Rust writes and reads before anything (default 0: the vector "
        "warm-up rows of each client warm the write path)",
    )
    add_client_arguments(ap, per="row")
    peers.add_arguments(ap)
    add_run_arguments(ap, "vectors", 3600)
    args = ap.parse_args(argv)

    rows = args.rows or (5_000 if args.quick else 100_000)
    inputs = [i for i in args.inputs.split(",") if i]
    try:
        clients = peers.parse_clients(args.clients)
    except ValueError as e:
        ap.error(str(e))
    if "acsylla" in clients:
        print("acsylla has no execute_concurrent: not run by the vectors scenario", file=sys.stderr)
        clients.remove("acsylla")
    for i in inputs:
        if i not in ("list", "numpy", "columns"):
            ap.error(f"unknown input {i!r}")
    check_pin_client(ap, args.pin_client)

    if not require_server(args.host, args.port, args.wait):
        return 2
    server_pid = args.server_pid or find_server_pid(args.port, args.host)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build) if "rust" in clients else None
    pyclients = peers.from_args(args, clients)
    common = server_args(args.host, args.port, args.keyspace, server_pid)
    warm_up_server(rust_bin, common, args.server_warmup_ops, args.pin_client, args.timeout)

    shape = ["--dim", str(args.dim), "--runs", str(args.runs), "--concurrency", str(args.concurrency)]
    load_start = os.getloadavg()[0]
    results: list[dict] = []

    def record(label: str, inp: str, cmd: list[str] | None, missing: str = "") -> None:
        print(f"vector {inp:6} {label:>8} ...", end=" ", file=sys.stderr, flush=True)
        r = {"failed": missing} if cmd is None else run_client(cmd, args.pin_client, args.timeout)
        r.update(label=label, input=r.get("input", inp), spec="vectors", workload="vector")
        if label in pyclients:
            r["interpreter"] = pyclients[label].python
        print(
            r.get("failed")
            or f"best {r['best_ops_per_s']:,.0f} / avg "
            f"{r['avg_ops_per_s']:,.0f} / worst {r['worst_ops_per_s']:,.0f} rows/s, "
            f"{r['cpu_us_per_op']:.1f} µs CPU/row",
            file=sys.stderr,
            flush=True,
        )
        results.append(r)

    for inp in inputs:
        for label in TABLE_CLIENTS:
            if label in clients and pyclients[label].available and not (label != "turbocql" and inp == "columns"):
                record(
                    label,
                    inp,
                    client_cmd(
                        pyclients[label],
                        CLIENT_PY,
                        [*common, *shape, "--input", inp, "--rows", str(rows), "--warmup-rows", str(args.warmup_rows)],
                    ),
                )
    if "rust" in clients:
        record(
            "rust",
            "vec",
            None
            if rust_bin is None
            else [
                str(rust_bin),
                *common,
                *shape,
                "--workload",
                "vector",
                "--ops",
                str(rows),
                "--warmup",
                str(args.warmup_rows),
                "--pattern",
                "concurrent",
            ],
            "Rust reference not built",
        )

    pin = pin_note(args.pin_client)
    heading = (
        f"{rows:,} rows of vector<float, {args.dim}> per timed run, {args.runs} runs "
        f"(TRUNCATE before each), {args.warmup_rows:,} warm-up rows, prepared INSERT at "
        f"CL ONE, all rows in one execute_concurrent_with_args call with concurrency "
        f"{args.concurrency}; single node, {os.cpu_count()} CPUs{pin}; server pid "
        f"{server_pid or 'unknown'}; " + load_note(load_start)
    )
    table = with_unavailable(markdown_table(results), pyclients)
    print(f"\n{heading}\n\n{table}")

    if args.out is not None:
        meta = run_meta(
            sys.argv[1:] if argv is None else argv,
            load_start,
            server_pid,
            heading,
            pyclients,
            rows=rows,
            dim=args.dim,
            runs=args.runs,
            warmup_rows=args.warmup_rows,
            concurrency=args.concurrency,
        )
        write_json(args.out, "vectors", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
