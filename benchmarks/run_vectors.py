"""Vector-ingestion runner (seed document 004): classic driver vs turbocql vs Rust.

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
import datetime as dt
import json
import os
import platform
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import peers  # noqa: E402
from run_sync import (  # noqa: E402  (shared helpers of the sync runner)
    DEFAULT_RUST_BIN,
    client_cmd,
    clients_meta,
    ensure_rust_bin,
    find_server_pid,
    fmt_num,
    run_client,
    unavailable_lines,
    wait_for_port,
    warm_up_server,
)

CLIENT_PY = HERE / "clients" / "vectors.py"
TABLE_CLIENTS = ("classic", "scylla", "turbocql")
INPUT_LABELS = {"list": "Python lists", "numpy": "numpy float32 rows",
                "columns": "dict of columns (2-D float32 array)",
                "vec": "Rust Vec<f32>"}


def markdown_table(results: list[dict]) -> str:
    """One row per (client, input): best/avg/worst rows/s, CPU, RSS, ratios."""
    head = ("| client | vectors from | rows/s best | rows/s avg | rows/s worst "
            "| client CPU µs/row | server CPU µs/row | RSS with rows loaded MB | peak RSS MB "
            "| avg rows/s vs classic | CPU vs rust |")
    lines = [head, "| " + " | ".join(["---"] * 11) + " |"]
    by = {(r["label"], r.get("input")): r for r in results}
    rust = next((r for r in results if r["label"] == "rust" and "failed" not in r), None)
    for r in results:
        name = r["label"]
        inp = INPUT_LABELS.get(r.get("input"), r.get("input") or "")
        if "failed" in r:
            lines.append(f"| {name} | {inp} | failed: {r['failed'].replace('|', '/')} "
                         "| | | | | | | | |")
            continue
        classic = by.get(("classic", r.get("input")))
        if name == "rust":  # compare with the classic driver's best input format
            classic = max((c for c in results if c["label"] == "classic" and "failed" not in c),
                          key=lambda c: c["avg_ops_per_s"], default=None)
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
            f"| {vs_classic} | {vs_rust} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--rows", type=int, default=None,
                    help="rows per timed run (default 100000; --quick: 5000)")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--warmup-rows", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--inputs", default="list,numpy", help="comma-separated: list,numpy,columns "
                    "(columns: turbocql only)")
    ap.add_argument("--clients", default="classic,turbocql,rust",
                    help="comma-separated subset of classic,scylla,turbocql,rust (acsylla "
                         "has no execute_concurrent and is skipped)")
    ap.add_argument("--quick", action="store_true", help="5,000 rows per run")
    ap.add_argument("--server-warmup-ops", type=int, default=0,
                    help="Rust writes and reads before anything (default 0: the vector "
                         "warm-up rows of each client warm the write path)")
    ap.add_argument("--pin-client", metavar="CPU", default=None,
                    help="run each client under taskset -c CPU")
    ap.add_argument("--server-pid", type=int, default=None,
                    help="server pid for server CPU µs/row (default: found from the port)")
    ap.add_argument("--rust-bin", type=Path, default=DEFAULT_RUST_BIN)
    ap.add_argument("--build", action="store_true", help="cargo build the Rust reference first")
    peers.add_arguments(ap)
    ap.add_argument("--wait", type=float, default=0, help="seconds to wait for the server port")
    ap.add_argument("--timeout", type=float, default=3600, help="per client run, seconds")
    ap.add_argument("--out", nargs="?", const="", default=None, metavar="PATH",
                    help="write raw JSON (default path benchmarks/results/vectors-<date>.json)")
    args = ap.parse_args(argv)

    rows = args.rows or (5_000 if args.quick else 100_000)
    inputs = [i for i in args.inputs.split(",") if i]
    try:
        clients = peers.parse_clients(args.clients)
    except ValueError as e:
        ap.error(str(e))
    if "acsylla" in clients:
        print("acsylla has no execute_concurrent: not run by the vectors scenario",
              file=sys.stderr)
        clients.remove("acsylla")
    for i in inputs:
        if i not in ("list", "numpy", "columns"):
            ap.error(f"unknown input {i!r}")
    if args.pin_client is not None and not shutil.which("taskset"):
        ap.error("--pin-client needs taskset (util-linux)")

    if not wait_for_port(args.host, args.port, args.wait):
        print(f"no server at {args.host}:{args.port} "
              "(start one with: turbocql localdb start)", file=sys.stderr)
        return 2
    server_pid = args.server_pid or find_server_pid(args.port)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build) if "rust" in clients else None
    pyclients = peers.from_args(args, clients)
    common = ["--host", args.host, "--port", str(args.port), "--keyspace", args.keyspace]
    if server_pid:
        common += ["--server-pid", str(server_pid)]
    warm_up_server(rust_bin, common, args.server_warmup_ops, args.pin_client, args.timeout)

    shape = ["--dim", str(args.dim), "--runs", str(args.runs),
             "--concurrency", str(args.concurrency)]
    load_start = os.getloadavg()[0]
    results: list[dict] = []

    def record(label: str, inp: str, cmd: list[str] | None, missing: str = "") -> None:
        print(f"vector {inp:6} {label:>8} ...", end=" ", file=sys.stderr, flush=True)
        r = {"failed": missing} if cmd is None else run_client(cmd, args.pin_client,
                                                               args.timeout)
        r.update(label=label, input=r.get("input", inp), spec="vectors", workload="vector")
        if label in pyclients:
            r["interpreter"] = pyclients[label].python
        print(r.get("failed") or f"best {r['best_ops_per_s']:,.0f} / avg "
              f"{r['avg_ops_per_s']:,.0f} / worst {r['worst_ops_per_s']:,.0f} rows/s, "
              f"{r['cpu_us_per_op']:.1f} µs CPU/row", file=sys.stderr, flush=True)
        results.append(r)

    for inp in inputs:
        for label in TABLE_CLIENTS:
            if label in clients and pyclients[label].available and not (label != "turbocql" and inp == "columns"):
                record(label, inp, client_cmd(pyclients[label], CLIENT_PY, [
                    *common, *shape, "--input", inp, "--rows", str(rows),
                    "--warmup-rows", str(args.warmup_rows)]))
    if "rust" in clients:
        record("rust", "vec", None if rust_bin is None else [
            str(rust_bin), *common, *shape, "--workload", "vector", "--ops", str(rows),
            "--warmup", str(args.warmup_rows), "--pattern", "concurrent"],
            "Rust reference not built")

    pin = f", client pinned to CPU {args.pin_client}" if args.pin_client else ""
    heading = (f"{rows:,} rows of vector<float, {args.dim}> per timed run, {args.runs} runs "
               f"(TRUNCATE before each), {args.warmup_rows:,} warm-up rows, prepared INSERT at "
               f"CL ONE, all rows in one execute_concurrent_with_args call with concurrency "
               f"{args.concurrency}; single node, {os.cpu_count()} CPUs{pin}; server pid "
               f"{server_pid or 'unknown'}; 1-min load average {load_start:.1f} at the start, "
               f"{os.getloadavg()[0]:.1f} at the end.")
    table = markdown_table(results)
    missing = unavailable_lines(pyclients)
    if missing:
        table += "\n\n" + missing
    print(f"\n{heading}\n\n{table}")

    if args.out is not None:
        path = Path(args.out) if args.out else (
            HERE / "results" / f"vectors-{dt.datetime.now():%Y-%m-%d-%H%M%S}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"date": dt.datetime.now().isoformat(timespec="seconds"),
                "loadavg_start": load_start, "loadavg_end": os.getloadavg()[0],
                "host": platform.node(), "cpus": os.cpu_count(),
                "argv": sys.argv[1:] if argv is None else argv, "rows": rows, "dim": args.dim,
                "runs": args.runs, "warmup_rows": args.warmup_rows,
                "concurrency": args.concurrency, "server_pid": server_pid,
                "python": platform.python_version(), "clients": clients_meta(pyclients),
                "heading": heading}
        path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"raw results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
