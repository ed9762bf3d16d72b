"""``pipeline_tuning`` runner (benchmarks/README.md): the best pipeline parameters on this server.

Runs ``clients/pipeline_tuning.py`` on turbocql for ``WritePipeline`` and ``ReadPipeline``
(``--pipelines write,read``), each in its own subprocess, over a grid of in-flight requests ×
buffer sizes (``max_unsent_write_requests`` / ``max_unconsumed_read_responses``), and reports,
as the original ``pipeline_tuning.py`` did (benchmarks/README.md), the average of the
parameters of the 10 fastest grid points, next to the fastest point, the default parameters'
point and the spread.

Grids (values inside the original's ranges: in-flight 100..4900, buffer 100..49900):

* default (coarse): in-flight 100, 200, 500, 1000, 2500, 4900 × buffer 100, 400, 2000,
  10000, 40000, 49900 (36 points per pipeline);
* ``--quick``: in-flight 100, 500, 2500, 4900 × buffer 100, 400, 10000, 40000 (16 points);
* ``--fine``: in-flight 100..4900 in steps of 400 × buffer 100, 200, 400, ..., 25600, 40000,
  49900 (143 points);
* ``--in-flight-grid`` / ``--buffer-grid``: any list or ``start:stop:step`` range
  (``100:4900:100`` and ``100:49900:100`` is the original's full grid, 24,451 points).

Example::

    python3 benchmarks/run_tuning.py --quick --out
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up, timing and reporting)
    add_client_arguments,
    add_run_arguments,
    add_server_arguments,
    check_pin_client,
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
    write_json,
)

CLIENT_PY = HERE / "clients" / "pipeline_tuning.py"
GRIDS = {
    "coarse": ("100,200,500,1000,2500,4900", "100,400,2000,10000,40000,49900"),
    "quick": ("100,500,2500,4900", "100,400,10000,40000"),
    "fine": ("100:4900:400", "100,200,400,800,1600,3200,6400,12800,25600,40000,49900"),
}
DEFAULTS = {"write": (100, 40000), "read": (100, 400)}  # the objects' default parameters
NAMES = {"write": "WritePipeline", "read": "ReadPipeline"}
BUFFER_NAMES = {"write": "max_unsent_write_requests", "read": "max_unconsumed_read_responses"}
TOP = 10  # the original pipeline_tuning averaged the parameters of the 10 fastest runs


def summarize(r: dict, top: int = TOP) -> dict:
    """Best parameters of one pipeline's grid: the average of the ``top`` fastest points."""
    pts = [p for p in r.get("points", []) if not p.get("errors")]
    if not pts:
        return {}
    fastest = sorted(pts, key=lambda p: p["ops_per_s"], reverse=True)
    best = fastest[:top]
    default = next((p for p in pts if (p["in_flight"], p["buffer"]) == DEFAULTS[r["pipeline"]]), None)
    rates = [p["ops_per_s"] for p in pts]
    return {
        "top": len(best),
        "best_in_flight": round(statistics.mean(p["in_flight"] for p in best)),
        "best_buffer": round(statistics.mean(p["buffer"] for p in best)),
        "top_ops_per_s": round(statistics.mean(p["ops_per_s"] for p in best), 1),
        "fastest": fastest[0],
        "slowest": fastest[-1],
        "median_ops_per_s": statistics.median(rates),
        "default": default,
        "points_with_errors": len(r.get("points", [])) - len(pts),
    }


def markdown_tables(results: list[dict]) -> str:
    head = (
        "| pipeline | grid points | requests per point | best parameters (average of the "
        "10 fastest) | their ops/s | fastest point | default parameters | median ops/s "
        "| slowest point |"
    )
    lines = [head, "| " + " | ".join(["---"] * 9) + " |"]
    tops = []
    for r in results:
        name = NAMES.get(r.get("pipeline"), r.get("pipeline"))
        if "failed" in r:
            lines.append(f"| {name} | failed: {r['failed'].replace('|', '/')} | | | | | | | |")
            continue
        s = r.get("summary") or summarize(r)
        if not s:
            lines.append(f"| {name} | every point failed | | | | | | | |")
            continue
        f, d, w = s["fastest"], s["default"], s["slowest"]

        def pt(p):
            return (
                f"{p['in_flight']:,} / {p['buffer']:,}: {fmt_num(p['ops_per_s'])} ops/s, "
                f"{fmt_num(p['cpu_us_per_op'], 1)} µs CPU/op"
            )

        grid = f"{len(r['in_flight_grid'])} in-flight × {len(r['buffer_grid'])} buffer = {len(r['points'])}"
        if s["points_with_errors"]:
            grid += f" ({s['points_with_errors']} with errors, left out)"
        lines.append(
            f"| {name} | {grid} | {r['ops']:,} | max_in_flight_requests={s['best_in_flight']:,}, "
            f"{BUFFER_NAMES[r['pipeline']]}={s['best_buffer']:,} (top {s['top']}) "
            f"| {fmt_num(s['top_ops_per_s'])} | {pt(f)} | {pt(d) if d else 'not in grid'} "
            f"| {fmt_num(s['median_ops_per_s'])} | {pt(w)} |"
        )
        fastest = sorted((p for p in r["points"] if not p.get("errors")), key=lambda p: p["ops_per_s"], reverse=True)[
            :TOP
        ]
        rows = [
            "| rank | max_in_flight_requests | "
            + BUFFER_NAMES[r["pipeline"]]
            + " | ops/s | client CPU µs/op | server CPU µs/op |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        rows += [
            f"| {i + 1} | {p['in_flight']:,} | {p['buffer']:,} | {fmt_num(p['ops_per_s'])} "
            f"| {fmt_num(p['cpu_us_per_op'], 1)} "
            f"| {fmt_num(p.get('server_cpu_us_per_op'), 1)} |"
            for i, p in enumerate(fastest)
        ]
        tops.append(f"{TOP} fastest {name} points (turbocql):\n\n" + "\n".join(rows))
    return "\n\n".join(["\n".join(lines), *tops])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument("--pipelines", default="write,read", help="comma-separated: write,read")
    ap.add_argument("--ops", type=int, default=None, help="requests per grid point (default 10000; --quick: 3000)")
    ap.add_argument("--warmup", type=int, default=2000, help="untimed requests before the grid")
    ap.add_argument("--quick", action="store_true", help="4 × 4 grid, 3,000 requests per point")
    ap.add_argument("--fine", action="store_true", help="13 × 11 grid")
    ap.add_argument(
        "--in-flight-grid", default=None, help="values or start:stop:step (overrides the grid's in-flight values)"
    )
    ap.add_argument(
        "--buffer-grid", default=None, help="values or start:stop:step (overrides the grid's buffer values)"
    )
    ap.add_argument("--read-consume", choices=["sliding", "end"], default="sliding")
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument("--seed", type=int, default=1, help="shuffle seed of the grid order")
    ap.add_argument(
        "--server-warmup-ops",
        type=int,
        default=0,
        help="Rust writes and reads (120 in flight) before anything (default 0)",
    )
    add_client_arguments(ap, build=False)
    ap.add_argument("--python", default=sys.executable, help="interpreter for the client")
    add_run_arguments(ap, "tuning", 7200, "per pipeline, seconds")
    args = ap.parse_args(argv)

    grid_name = "fine" if args.fine else "quick" if args.quick else "coarse"
    in_flight_grid = args.in_flight_grid or GRIDS[grid_name][0]
    buffer_grid = args.buffer_grid or GRIDS[grid_name][1]
    ops = args.ops or (3000 if args.quick else 10000)
    pipelines = [p for p in args.pipelines.split(",") if p]
    for p in pipelines:
        if p not in NAMES:
            ap.error(f"unknown pipeline {p!r}")
    check_pin_client(ap, args.pin_client)

    if not require_server(args.host, args.port, args.wait):
        return 2
    server_pid = args.server_pid or find_server_pid(args.port, args.host)
    common = server_args(args.host, args.port, args.keyspace, server_pid)
    if args.server_warmup_ops > 0:
        warm_up_server(
            ensure_rust_bin(args.rust_bin, False),
            common + ["--rows", str(args.rows)],
            args.server_warmup_ops,
            args.pin_client,
            args.timeout,
        )

    load_start = os.getloadavg()[0]
    results = []
    for p in pipelines:
        print(
            f"pipeline_tuning {NAMES[p]} (turbocql), grid {in_flight_grid} × {buffer_grid}, "
            f"{ops} requests per point ...",
            file=sys.stderr,
            flush=True,
        )
        cmd = [
            args.python,
            str(CLIENT_PY),
            "--driver",
            "turbocql",
            *common,
            "--pipeline",
            p,
            "--in-flight-grid",
            in_flight_grid,
            "--buffer-grid",
            buffer_grid,
            "--ops",
            str(ops),
            "--warmup",
            str(args.warmup),
            "--rows",
            str(args.rows),
            "--read-consume",
            args.read_consume,
            "--seed",
            str(args.seed),
        ]
        r = run_client(cmd, args.pin_client, args.timeout)
        r.update(label="turbocql", spec="pipeline_tuning", pipeline=p, workload=p, grid=grid_name)
        if "failed" not in r:
            r["summary"] = summarize(r)
            s = r["summary"]
            if s:
                print(
                    f"  best (average of the {s['top']} fastest): in-flight "
                    f"{s['best_in_flight']}, buffer {s['best_buffer']}",
                    file=sys.stderr,
                )
        else:
            print(f"  failed: {r['failed']}", file=sys.stderr)
        results.append(r)

    pin = pin_note(args.pin_client)
    heading = (
        f"pipeline_tuning on turbocql: {ops:,} requests per grid point (+{args.warmup:,} "
        f"warm-up), grid points in shuffled order; single node, {os.cpu_count()} CPUs"
        f"{pin}; server pid {server_pid or 'unknown'}; " + load_note(load_start)
    )
    print(f"\n{heading}\n\n{markdown_tables(results)}")

    if args.out is not None:
        meta = run_meta(
            sys.argv[1:] if argv is None else argv,
            load_start,
            server_pid,
            heading,
            ops=ops,
            grid=grid_name,
            in_flight_grid=in_flight_grid,
            buffer_grid=buffer_grid,
        )
        write_json(args.out, "tuning", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
