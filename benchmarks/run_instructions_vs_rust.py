"""turbocql against the Rust reference by instructions per request: every row of the
request-pattern table (``run_patterns.py``) and of the sync table (``run_sync.py``), counted
by callgrind as ``run_ab_instructions.py`` counts two builds, beside the ``scylla`` crate
doing the same requests (``rust_ref``), the two measured alternately in rounds.

The timed tables give client CPU per request against the Rust reference, whose spread on a
shared 2-core machine (±20% from run to run, rows of the same code apart by more than the
gap they are to show) hides what the code costs. Instructions do not move with the machine's
load: this gives, for each row, how much more code turbocql executes per request than the
floor does, to set beside the CPU ratio of the timed tables (a row whose CPU ratio is well
above its instruction ratio loses its time elsewhere: waiting, waking, caches).

The reference for each row, as in the timed tables: for a pattern row, ``rust_ref --pattern
concurrent --concurrency 120`` (the "rust, 120 in flight" row every pattern is compared
with); for the sync table's N threads, ``rust_ref --pattern sync-threads --threads N`` (N OS
threads blocking on one request at a time, as N Python threads calling ``execute`` do). Both
clients run with ``--ops N1`` and ``--ops N2`` and the same ``--warmup``, each under
``valgrind --tool=callgrind --dump-before=<its getrusage>`` (CPython's
``resource_getrusage`` for the Python client, libc's ``getrusage`` for the Rust one: each
calls it just before and just after its timed section), and the figure is ::

    (timed(N2) - timed(N1)) / (N2 - N1)   instructions per request

The limits are ``run_ab_instructions.py``'s (instructions retired in user space, threads run
one at a time under valgrind while the server runs at full speed); the Rust reference's
tokio runtime runs one worker thread here as in the timed tables.

    python benchmarks/run_instructions_vs_rust.py --rounds 3 \\
        --out benchmarks/results/instructions-vs-rust-<date>.json

Needs valgrind, a node on ``--port`` with the read keys (``run_ab_instructions.py``'s server
warm-up writes them), and the Rust reference (built if missing).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.common import ensure_rust_bin, require_server, rust_command, server_args  # noqa: E402
from benchmarks.run_ab_instructions import (  # noqa: E402
    Build,
    Case,
    callgrind_command,
    callgrind_run,
    git_state,
    parse_run_arguments,
    run_rounds,
    save,
    spread,
    valgrind_version,
    warm_up,
)

RUST_DUMP_AT = "getrusage"  # libc's: rust_ref's cpu module calls it around the timed section
RUST_BIN = HERE.parent / "target" / "release" / "turbocql-rust-ref"
PATTERN_DEPTH = 120


def rust_args(case: Case) -> list[str]:
    """The Rust reference's pattern for a row (see the module doc)."""
    if case.scenario == "sync":
        return ["--pattern", "sync-threads", "--threads", case.row.split()[0]]
    return ["--pattern", "concurrent", "--concurrency", str(PATTERN_DEPTH)]


def rust_label(case: Case) -> str:
    if case.scenario == "sync":
        return f"rust, {case.row.split()[0]} OS threads"
    return f"rust, {PATTERN_DEPTH} in flight"


def sample(args, who: str, build: Build, rust_bin: Path, case: Case, rnd: int) -> dict:
    """One round's figure for turbocql (``who`` = turbocql) or the reference, one row."""
    runs = []
    for ops in (args.n1, args.n2):
        if who == "turbocql":
            runs.append(callgrind_run(args, build, case, ops))
        else:
            common = server_args(args.host, args.port, args.keyspace, None, args.rows)
            extra = [*rust_args(case), "--warmup", str(args.warmup)]
            cmd = rust_command(rust_bin, common, case.workload, ops, extra)
            runs.append(callgrind_command(args, cmd, RUST_DUMP_AT, ops))
    failed = [r["failed"] for r in runs if "failed" in r]
    if failed:
        return {"round": rnd, "failed": failed[0]}
    n = args.n2 - args.n1
    return {
        "round": rnd,
        "ir": round((runs[1]["timed"] - runs[0]["timed"]) / n, 1),
        "errors": runs[0]["errors"] + runs[1]["errors"],
        "seconds": round(runs[0]["seconds"] + runs[1]["seconds"], 1),
        "runs": runs,
    }


def summarise(cases: list[Case], samples: dict) -> list[dict]:
    rows = []
    for case in cases:
        by = samples.get(case.key, {})
        ok = {who: [s for s in by.get(who, []) if "ir" in s and not s.get("errors")] for who in ("turbocql", "rust")}
        row: dict = {"key": list(case.key), "reference": rust_label(case), "n": [len(ok["turbocql"]), len(ok["rust"])]}
        failed = [s["failed"] for ss in by.values() for s in ss if "failed" in s]
        if failed:
            row["failed"] = failed[0]
        if ok["turbocql"] and ok["rust"]:
            t = statistics.median(s["ir"] for s in ok["turbocql"])
            r = statistics.median(s["ir"] for s in ok["rust"])
            row.update(
                turbocql=t,
                rust=r,
                ratio=round(t / r, 3),
                spread_turbocql=spread([s["ir"] for s in ok["turbocql"]]),
                spread_rust=spread([s["ir"] for s in ok["rust"]]),
            )
        rows.append(row)
    return rows


def table(rows: list[dict]) -> list[str]:
    lines = [
        "| scenario | row | workload | reference | turbocql instr/req | rust instr/req | turbocql / rust "
        "| turbocql spread | rust spread | samples |",
        "| " + " | ".join(["---"] * 10) + " |",
    ]
    for r in rows:
        head = "| %s | %s | %s | %s " % (*r["key"], r["reference"])
        if "ratio" not in r:
            lines.append(head + "| failed: %s | | | | | %d/%d |" % (r.get("failed", "no sample"), *r["n"]))
            continue
        lines.append(
            head + f"| {r['turbocql']:,.0f} | {r['rust']:,.0f} | {r['ratio']:.2f}× "
            f"| {r['spread_turbocql']} | {r['spread_rust']} | {r['n'][0]}/{r['n'][1]} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter of the turbocql build (default: this one)")
    ap.add_argument("--rust-bin", type=Path, default=RUST_BIN, help="the Rust reference (built if missing)")
    ap.add_argument("--rounds", type=int, default=3)
    args, cases = parse_run_arguments(ap, argv, n2=8000, threads="1,16")
    if not require_server(args.host, args.port, 0, hint=False):
        return 2
    rust_bin = ensure_rust_bin(args.rust_bin, False)
    if rust_bin is None:
        print("the Rust reference could not be built", file=sys.stderr)
        return 2
    build = Build.probe("turbocql", args.python)
    command = " ".join(
        ["python", "benchmarks/run_instructions_vs_rust.py", *(argv if argv is not None else sys.argv[1:])]
    )
    meta: dict = {
        "command": command,
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "python": args.python,
        "build": build.state(),
        "checkout": git_state(),
        "valgrind": valgrind_version(args.valgrind),
        "n1": args.n1,
        "n2": args.n2,
        "warmup": args.warmup,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
    }
    print(f"{len(cases)} rows × (turbocql, rust) × {args.rounds} rounds, N1={args.n1}, N2={args.n2}", file=sys.stderr)
    warm_up(args, build)
    samples = run_rounds(
        args, cases, ["turbocql", "rust"], lambda who, case, rnd: sample(args, who, build, rust_bin, case, rnd), meta
    )
    meta.update(build_end=build.state())
    rows = summarise(cases, samples)
    lines = table(rows)
    print("\n".join(lines))
    if args.out:
        save(args.out, meta, samples, rows=rows, table=lines)
        print(f"raw results: {args.out}", file=sys.stderr)
    md = args.md or (args.out.with_suffix(".md") if args.out else None)
    if md:
        md.write_text(
            f"# Instructions per request: turbocql vs the Rust reference\n\n"
            f"{meta['date'][:16].replace('T', ' ')}, `{meta['command']}`, checkout "
            f"{meta['checkout']['head']}, engine md5 `{meta['build']['engine_md5']}`\n\n"
            f"callgrind's instruction count of each client's timed section (every thread), run with "
            f"{args.n2:,} requests minus run with {args.n1:,}, over {args.n2 - args.n1:,}; {args.warmup:,} "
            f"warm-up requests before each; {args.rounds} rounds, the order alternating; medians; "
            f"{meta['cpus']} CPUs, {meta['valgrind']}; {meta['seconds'] // 60} min in all. The method and "
            f"its limits: `benchmarks/run_instructions_vs_rust.py`.\n\n" + "\n".join(lines) + "\n"
        )
        print(f"report: {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
