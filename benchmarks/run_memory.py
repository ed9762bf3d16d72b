"""Peak memory of two turbocql builds, measured alternately: many futures in flight, and a
large table read into Arrow and into numpy.

Three rows, each a client process of its own whose peak RSS (``VmHWM``, polled by
``common.run_client``) is the figure:

* ``futures``: ``--futures`` prepared writes by ``execute_async``, every one submitted before
  any ``result()`` is asked for (``clients/patterns.py --pattern unthrottled_futures``, no
  warm-up), so that all of them can be in flight at once;
* ``arrow``: every row of the bulk benchmark's table (``bench_bulk.mixed``, ``--rows`` rows
  of mixed types) by one paged ``SELECT *`` into one ``pyarrow.Table`` (``clients/scan.py
  --shape arrow``: ``arrow_factory`` and ``ResultSet.to_arrow()``);
* ``numpy``: the same rows as ``numpy_factory`` pages (``clients/scan.py --shape numpy``).

The builds are interpreters that import them (``--a``, ``--b``, as for ``run_ab.py``). Each
round runs every row with both builds, the order flipping every round; the table gives each
build's median peak RSS, B/A of the medians and each build's spread (min–max). The client's
CPU per request or row is kept beside it in the JSON (a peak that drops because the run got
slower is not a gain).

    python benchmarks/run_memory.py --a /tmp/venv-old/bin/python --b .venv/bin/python \\
        --label-a before --label-b after --rounds 3 --out benchmarks/results/memory-<date>.json

Needs a node on ``--port`` and the Rust reference (``target/release/turbocql-rust-ref``,
built if missing) to reset the futures' table; the bulk table is made and loaded (``turbocql
load`` by build B, from ``run_bulk.generate``'s CSV) when it does not hold ``--rows`` rows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import run_bulk  # noqa: E402
from benchmarks.common import (  # noqa: E402
    DEFAULT_RUST_BIN,
    ensure_rust_bin,
    fmt_num,
    require_server,
    reset_table,
    run_client,
    run_meta,
    server_args,
    write_json,
)

PATTERNS_PY = HERE / "clients" / "patterns.py"
SCAN_PY = HERE / "clients" / "scan.py"
FUTURES_KEYSPACE = "bench_patterns"
ROWS = ("futures", "arrow", "numpy")


def row_command(row: str, python: str, a: argparse.Namespace) -> list[str]:
    """The client command of one row for one build."""
    if row == "futures":
        cmd = [python, str(PATTERNS_PY), "--driver", "turbocql", "--pattern", "unthrottled_futures"]
        where = server_args(a.host, a.port, FUTURES_KEYSPACE, None)
        return [*cmd, *where, "--workload", "write", "--ops", str(a.futures), "--warmup", "0"]
    return [python, str(SCAN_PY), "--driver", "turbocql", "--shape", row, "--host", a.host, "--port", str(a.port)]


def ensure_bulk_table(a: argparse.Namespace) -> None:
    """``bench_bulk.mixed`` with ``--rows`` rows (loaded by build B when it has not)."""
    setup = run_bulk.Setup(a.host, a.port)
    try:
        if setup.count() == a.rows:
            return
        csv_path, _ = run_bulk.generate(a.rows, Path(a.data_dir))
        setup.truncate()
        print(f"loading {a.rows:,} rows into {run_bulk.KEYSPACE}.{run_bulk.TABLE}...", file=sys.stderr, flush=True)
        cmd = [a.b, "-m", "turbocql", "load", "-k", run_bulk.KEYSPACE, "-t", run_bulk.TABLE, "-f", str(csv_path)]
        cmd += ["--host", a.host, "--port", str(a.port), "--quiet", "--max-errors", "0"]
        subprocess.run(cmd, check=True)
        if setup.count() != a.rows:
            raise SystemExit(f"{run_bulk.KEYSPACE}.{run_bulk.TABLE} does not hold {a.rows} rows after the load")
    finally:
        setup.close()


def summary(results: list[dict], labels: tuple[str, str]) -> list[dict]:
    """Per row: each build's median peak RSS and spread, and B/A of the medians."""
    out = []
    for row in ROWS:
        line: dict = {"row": row}
        for side, label in zip(("a", "b"), labels):
            mine = [r for r in results if r["row"] == row and r["build"] == side and "failed" not in r]
            peaks = [r["process_max_rss_mb"] for r in mine]
            line[side] = {"label": label, "median_mb": statistics.median(peaks) if peaks else None, "runs_mb": peaks}
        ma, mb = line["a"]["median_mb"], line["b"]["median_mb"]
        line["b_over_a"] = round(mb / ma, 3) if ma and mb else None
        out.append(line)
    return out


def markdown(lines: list[dict], a: argparse.Namespace) -> str:
    what = {
        "futures": f"{a.futures:,} execute_async in flight, then every result()",
        "arrow": f"{a.rows:,} rows into one pyarrow.Table",
        "numpy": f"{a.rows:,} rows as numpy_factory pages",
    }
    head = f"| row | {a.label_a}: peak RSS MB (min–max) | {a.label_b}: peak RSS MB (min–max) | B/A |"
    rows = [head, "| --- | --- | --- | --- |"]
    for line in lines:
        cells = []
        for side in ("a", "b"):
            s = line[side]
            runs = s["runs_mb"]
            spread = f"{fmt_num(min(runs), 1)}–{fmt_num(max(runs), 1)}" if runs else ""
            cells.append(f"{fmt_num(s['median_mb'], 1)} ({spread})" if runs else "failed")
        ratio = "" if line["b_over_a"] is None else f"{line['b_over_a']:.3f}"
        rows.append(f"| {what[line['row']]} | {cells[0]} | {cells[1]} | {ratio} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="interpreter of build A (before)")
    ap.add_argument("--b", required=True, help="interpreter of build B (after)")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--futures", type=int, default=100_000)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--rust-bin", type=Path, default=DEFAULT_RUST_BIN)
    ap.add_argument("--data-dir", default=str(HERE / ".data"))
    ap.add_argument("--timeout", type=float, default=900.0, help="per client process")
    ap.add_argument(
        "--out", nargs="?", const="", default=None, help="write the JSON (default results/memory-DATE.json)"
    )
    a = ap.parse_args(argv)
    if not require_server(a.host, a.port, 30.0):
        return 2
    load_start = os.getloadavg()[0]
    rust = ensure_rust_bin(a.rust_bin, False)
    ensure_bulk_table(a)
    results: list[dict] = []
    for rnd in range(a.rounds):
        order = (("a", a.a), ("b", a.b)) if rnd % 2 == 0 else (("b", a.b), ("a", a.a))
        for row in ROWS:
            for side, python in order:
                if row == "futures":
                    reset_table(rust, server_args(a.host, a.port, FUTURES_KEYSPACE, None), None, a.timeout)
                r = run_client(row_command(row, python, a), None, a.timeout)
                r.update(row=row, build=side, round=rnd)
                results.append(r)
                peak = r.get("process_max_rss_mb")
                print(f"round {rnd + 1} {row} {side}: {r.get('failed') or f'{peak} MB'}", file=sys.stderr, flush=True)
    lines = summary(results, (a.label_a, a.label_b))
    print(markdown(lines, a))
    if a.out is not None:
        meta = run_meta(
            sys.argv, load_start, None, "peak RSS of two builds", a=a.a, b=a.b, rounds=a.rounds, futures=a.futures
        )
        meta.update(labels=[a.label_a, a.label_b], rows=a.rows, summary=lines)
        write_json(a.out, "memory", meta, results)
    return 0 if all("failed" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
