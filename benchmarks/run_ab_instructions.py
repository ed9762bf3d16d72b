"""A/B comparison of two turbocql builds by instructions per request: every row of the
request-pattern table (``run_patterns.py``) and of the sync table (``run_sync.py``), counted by
callgrind, the builds measured alternately in rounds and compared by medians.

``run_ab.py`` compares client CPU time, whose run-to-run spread on a shared 2-core machine
(±20%) hides a 3% change. callgrind counts the instructions a process executes (every
thread of it) whatever else the machine is doing, so the same build on the same inputs
gives nearly the same count, and two builds can be told apart to about a percent.

Method. A build is an interpreter that imports it (``--a``, ``--b``, as for ``run_ab.py``).
For each build and each row (a request pattern and workload of the pattern table, or a
thread count and workload of the sync table), the benchmark's own client runs unchanged,
with the arguments its runner gives it (``clients/patterns.py`` with the pattern's
arguments from ``run_patterns.SPECS``, ``clients/sync_threads.py --threads N``; ``--warmup``
requests of the same pattern first), under ``valgrind --tool=callgrind
--dump-before=resource_getrusage``, twice: with ``--ops N1`` and with ``--ops N2``. The
client calls ``resource.getrusage`` just before and just after its timed section and nowhere
else, so callgrind's second dump holds the timed section's instructions, all threads. The
figure is ::

    (timed(N2) - timed(N1)) / (N2 - N1)   instructions per request

so that start-up, imports, connecting, the warm-up and the timed section's fixed costs
(threads started, the first requests' ramp-up, the last ones' drain) cancel out. The same
difference over the whole process (``whole``: it adds building and freeing the parameter
list, the same code in both builds) is kept beside it as a cross-check. The order of the
builds alternates row by row (A then B in even rounds, B then A in odd ones) over
``--rounds`` rounds; the table gives per row each build's median, B/A of the medians, each
build's spread (min–max over its rounds, and (max − min) / median) and whether B/A is within
``--tolerance``. Each build's ``_engine`` and its package's Python files are hashed (md5)
before and after every pair of runs: a sample of another state of the build than the one at
the end of the run, or during which the build changed (someone rebuilt it), is kept in the
JSON but left out of the table, and the notes under the table say so.

What the figure means, and its limits:

* Instructions retired in user space, not time: cache misses, branch mispredictions, the
  kernel's work in system calls, lock contention and waiting cost nothing here. A change
  that trades instructions for system calls or for cache misses does not show; the figure
  answers "does B execute more code per request than A", which is what a change of the
  request path's code changes.
* Under valgrind the client runs some 50 times slower and its threads run one at a time
  (valgrind serialises them), while the server runs at full speed: each wake-up of the
  client finds more responses waiting than it would natively, so the timing-dependent parts
  of the engine (how many completions one wake-up delivers, how many requests one write
  carries, whether a waiter parks or finds its result ready, how often the GIL changes
  hands) behave as for a slow client, and still vary a little from run to run. That
  variation is the spread the table shows: a row whose spread is wider than the gap between
  the builds cannot tell them apart.
* Counts are of this machine's CPU, libraries and Python for these two builds: compare the
  ratios, not the absolute counts across machines.

    python benchmarks/run_ab_instructions.py --a /tmp/venv-old/bin/python --b .venv/bin/python \\
        --label-a old --label-b new --rounds 5 --out benchmarks/results/ab-instructions-<date>.json

The JSON (``--out``) is written after every sample, marked ``partial`` until the run ends:
a run stopped early keeps its samples, and ``--resume <that JSON>`` goes on from them (a
sample of a build that has changed since is still left out of the table, as above).

Needs valgrind and a node on ``--port``. The rows read need the read keys: the server
warm-up (``--server-warmup-ops``, execute_concurrent writes and reads by build B's client,
not under valgrind) writes them if missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import client_cmd, require_server, run_client, server_args  # noqa: E402
from benchmarks.run_patterns import CLIENT_PY as PATTERNS_PY  # noqa: E402
from benchmarks.run_patterns import select_specs  # noqa: E402
from benchmarks.run_sync import CLIENT_PY as SYNC_PY  # noqa: E402

DUMP_AT = "resource_getrusage"  # CPython's resource.getrusage: the clients' timed-section bounds
PROBE = "import os, turbocql, turbocql._engine as e; print(e.__file__); print(os.path.dirname(turbocql.__file__))"


@dataclasses.dataclass(frozen=True)
class Case:
    """One row: a client script and its arguments (all but ``--ops`` and ``--warmup``)."""

    scenario: str  # patterns or sync
    row: str  # the pattern's name in run_patterns (e.g. callback_chain:250), or "N threads"
    workload: str
    script: Path
    args: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.scenario, self.row, self.workload)


def make_cases(patterns: str, workloads: list[str], threads: list[int], read_consume: str) -> list[Case]:
    """The pattern table's rows (``run_patterns.SPECS``, each workload it has), then the sync
    table's (each thread count, each workload)."""
    out: list[Case] = []
    for spec in select_specs(patterns) if patterns else []:
        for wl in spec.workloads:
            if wl in workloads:
                extra = ("--read-consume", read_consume) if spec.name == "read_pipeline" else ()
                out.append(Case("patterns", spec.name, wl, PATTERNS_PY, (*spec.args, "--workload", wl, *extra)))
    for th in threads:
        for wl in workloads:
            out.append(Case("sync", f"{th} threads", wl, SYNC_PY, ("--threads", str(th), "--workload", wl)))
    return out


# ---------------------------------------------------------------------------------------------
# The builds' files


@dataclasses.dataclass(frozen=True)
class Build:
    label: str
    python: str
    engine: Path  # the _engine extension the interpreter imports
    package: Path  # the turbocql package directory

    @classmethod
    def probe(cls, label: str, python: str) -> Build:
        out = subprocess.run([python, "-c", PROBE], check=True, capture_output=True, text=True).stdout.split("\n")
        return cls(label, python, Path(out[0]), Path(out[1]))

    def engine_md5(self) -> str:
        return hashlib.md5(self.engine.read_bytes()).hexdigest()

    def python_md5(self) -> str:
        """One md5 over the package's Python files (relative path and content, sorted)."""
        h = hashlib.md5()
        for f in sorted(self.package.rglob("*.py")):
            h.update(str(f.relative_to(self.package)).encode() + b"\0" + f.read_bytes())
        return h.hexdigest()

    def state(self) -> dict:
        return {"engine": str(self.engine), "engine_md5": self.engine_md5(), "python_md5": self.python_md5()}


# ---------------------------------------------------------------------------------------------
# One run under callgrind, and one sample (two runs)


def callgrind_total(path: Path) -> int:
    """The ``totals:`` (or ``summary:``) line of one callgrind output file: instructions."""
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise ValueError(f"{path}: no totals line")


def callgrind_run(args, build: Build, case: Case, ops: int) -> dict:
    """The client for ``ops`` requests under callgrind: ``timed`` (the dump between the two
    ``getrusage`` calls), ``whole`` (every dump), the client's errors and the wall time."""
    common = server_args(args.host, args.port, args.keyspace, None, args.rows)
    client = client_cmd(
        peers.Client("turbocql", build.python),
        case.script,
        [*common, *case.args, "--ops", str(ops), "--warmup", str(args.warmup)],
    )
    return callgrind_command(args, client, DUMP_AT, ops)


def callgrind_command(args, client: list[str], dump_at: str, ops: int) -> dict:
    """One client command under callgrind, dumping before each call of ``dump_at`` (the two
    bounds of its timed section): ``timed`` (the second dump), ``whole`` (every dump), the
    client's errors and the wall time."""
    with tempfile.TemporaryDirectory(prefix="icount-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = [
            args.valgrind,
            "--tool=callgrind",
            "-q",
            f"--callgrind-out-file={out}",
            f"--dump-before={dump_at}",
            "--dump-instr=no",
            "--collect-jumps=no",
            *client,
        ]
        t0 = time.monotonic()
        r = run_client(cmd, None, args.timeout)
        seconds = time.monotonic() - t0
        if "failed" in r:
            return {"failed": r["failed"]}
        parts = {p.name: callgrind_total(p) for p in Path(tmp).iterdir() if p.name.startswith("cg.out")}
    dumps = sorted(name for name in parts if name != "cg.out")
    if dumps != ["cg.out.1", "cg.out.2"]:
        return {"failed": f"expected 2 dumps at {dump_at}, got {len(dumps)}"}
    return {
        "ops": ops,
        "timed": parts["cg.out.2"],
        "whole": sum(parts.values()),
        "errors": r.get("errors", 0),
        "seconds": round(seconds, 1),
    }


def sample(args, build: Build, case: Case, rnd: int) -> dict:
    """One round's figure for one build and row: runs at N1 and N2, their difference."""
    before = (build.engine_md5(), build.python_md5())
    runs = [callgrind_run(args, build, case, n) for n in (args.n1, args.n2)]
    after = (build.engine_md5(), build.python_md5())
    s: dict = {"round": rnd, "engine_md5": before[0], "python_md5": before[1]}
    if after != before:
        s["build_changed"] = {"engine_md5": after[0], "python_md5": after[1]}
    failed = [r["failed"] for r in runs if "failed" in r]
    if failed:
        return {**s, "failed": failed[0]}
    n = args.n2 - args.n1
    return {
        **s,
        "ir": round((runs[1]["timed"] - runs[0]["timed"]) / n, 1),
        "whole": round((runs[1]["whole"] - runs[0]["whole"]) / n, 1),
        "errors": runs[0]["errors"] + runs[1]["errors"],
        "seconds": round(runs[0]["seconds"] + runs[1]["seconds"], 1),
        "runs": runs,
    }


def usable(samples: list[dict], end: dict) -> list[dict]:
    """Samples that count: measured, no request error, of the build as it is at the end of the
    run (``end``: its state) and unchanged while they ran."""
    return [
        s
        for s in samples
        if "ir" in s
        and not s.get("errors")
        and "build_changed" not in s
        and (s["engine_md5"], s["python_md5"]) == (end["engine_md5"], end["python_md5"])
    ]


# ---------------------------------------------------------------------------------------------
# The table


def spread(values: list[float]) -> str:
    med = statistics.median(values)
    return "%s–%s (%.1f%%)" % (f"{min(values):,.0f}", f"{max(values):,.0f}", 100 * (max(values) - min(values)) / med)


def summarise(cases: list[Case], samples: dict, end: dict, a: str, b: str, tol: float) -> list[dict]:
    """Per row: each build's median and spread of instructions per request, B/A (and of the
    whole-process cross-check), the number of samples used (``end``: each build's state at
    the end of the run)."""
    rows = []
    for case in cases:
        by = samples.get(case.key, {})
        sa, sb = usable(by.get(a, []), end[a]), usable(by.get(b, []), end[b])
        row: dict = {"key": list(case.key), "n": [len(sa), len(sb)]}
        failed = [s["failed"] for s in by.get(a, []) + by.get(b, []) if "failed" in s]
        if failed:
            row["failed"] = failed[0]
        if sa and sb:
            ma, mb = statistics.median(s["ir"] for s in sa), statistics.median(s["ir"] for s in sb)
            wa, wb = statistics.median(s["whole"] for s in sa), statistics.median(s["whole"] for s in sb)
            row.update(
                a=ma,
                b=mb,
                ratio=round(mb / ma, 4),
                within=abs(mb / ma - 1) <= tol,
                spread_a=spread([s["ir"] for s in sa]),
                spread_b=spread([s["ir"] for s in sb]),
                whole_ratio=round(wb / wa, 4),
            )
        rows.append(row)
    return rows


def table(rows: list[dict], a: str, b: str, tol: float) -> list[str]:
    lines = [
        f"| scenario | row | workload | {a} instr/req | {b} instr/req | {b}/{a} | within ±{100 * tol:g}% "
        f"| {a} spread | {b} spread | {b}/{a}, whole process | samples |",
        "| " + " | ".join(["---"] * 11) + " |",
    ]
    for r in rows:
        head = "| %s | %s | %s " % tuple(r["key"])
        if "ratio" not in r:
            lines.append(head + "| failed: %s | | | | | | | %d/%d |" % (r.get("failed", "no sample"), *r["n"]))
            continue
        lines.append(
            head + f"| {r['a']:,.0f} | {r['b']:,.0f} | {r['ratio']:.3f} | {'yes' if r['within'] else '**no**'} "
            f"| {r['spread_a']} | {r['spread_b']} | {r['whole_ratio']:.3f} | {r['n'][0]}/{r['n'][1]} |"
        )
    return lines


def notes(rows: list[dict], samples: dict, meta: dict, tol: float) -> list[str]:
    """What the reader must know beside the table: rows outside the tolerance, left-out
    samples, engine files that changed during the run."""
    out = []
    outside = ["%s %s %s (%.3f)" % (*r["key"], r["ratio"]) for r in rows if "ratio" in r and not r["within"]]
    out.append(
        f"Rows outside ±{100 * tol:g}%: "
        + ("; ".join(outside) if outside else "none")
        + f" ({sum('ratio' in r for r in rows)} rows compared)."
    )
    every = [(label, s) for by in samples.values() for label, ss in by.items() for s in ss]
    end = meta["builds_end"]
    counts = {
        "of an earlier state of the build": sum(
            "ir" in s and (s["engine_md5"], s["python_md5"]) != (end[lab]["engine_md5"], end[lab]["python_md5"])
            for lab, s in every
        ),
        "with the build changed while they ran": sum("build_changed" in s for _, s in every),
        "with request errors": sum(bool(s.get("errors")) for _, s in every),
        "failed": sum("failed" in s for _, s in every),
    }
    if any(counts.values()):
        out.append("Samples left out: " + ", ".join(f"{n} {what}" for what, n in counts.items() if n) + ".")
    for label, start in meta["builds_start"].items():
        seen = {(s["engine_md5"], s["python_md5"]) for lab, s in every if lab == label and "engine_md5" in s}
        if start != end[label] or len(seen) > 1:
            out.append(
                f"Build {label} changed during the run: engine md5 {start['engine_md5']} at the start, "
                f"{end[label]['engine_md5']} at the end, Python files {start['python_md5']} → "
                f"{end[label]['python_md5']} ({len(seen)} states seen by its samples); the table has only "
                "the samples of its state at the end."
            )
    return out


# ---------------------------------------------------------------------------------------------


def warm_up(args, build: Build) -> None:
    """Server warm-up by build B's client, not under valgrind: execute_concurrent writes, then
    reads (the read run writes the read keys first if they are missing)."""
    for wl, ops in (("write", args.server_warmup_ops), ("read", max(1, args.server_warmup_ops))):
        if ops <= 0:
            continue
        extra = ["--pattern", "execute_concurrent", "--workload", wl, "--ops", str(ops), "--warmup", "0"]
        common = server_args(args.host, args.port, args.keyspace, None, args.rows)
        cmd = client_cmd(peers.Client("turbocql", build.python), PATTERNS_PY, [*common, *extra])
        r = run_client(cmd, None, args.timeout)
        print(f"server warm-up, {wl}, {ops} requests: {r.get('failed', 'done')}", file=sys.stderr, flush=True)


def valgrind_version(valgrind: str) -> str:
    try:
        return subprocess.run([valgrind, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return f"unavailable: {e}"


def git_state() -> dict:
    def git(*cmd: str) -> str:
        r = subprocess.run(["git", *cmd], cwd=HERE.parent, capture_output=True, text=True)
        return r.stdout.strip()

    dirty = git("status", "--porcelain", "--", "python", "src", "Cargo.toml", "Cargo.lock").splitlines()
    return {"head": git("rev-parse", "--short", "HEAD"), "uncommitted_build_files": dirty}


def save(path: Path, meta: dict, samples: dict, **done) -> None:
    """Writes the run's JSON: its ``meta`` and every sample so far, then (``done``) the rows,
    the table and the notes. Written after each sample too (without ``done``: ``partial``), so
    a run stopped before its end keeps what it measured, and ``--resume`` goes on from it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flat = [{"key": list(k), **by} for k, by in samples.items()]
    body = {"meta": meta, **({} if done else {"partial": True}), **done, "samples": flat}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=1) + "\n")
    tmp.replace(path)


def resumed(path: Path | None) -> dict:
    """The samples of an earlier run's JSON (``--resume``), by row and side; empty without one."""
    if path is None or not path.exists():
        return {}
    out: dict = {}
    for entry in json.loads(path.read_text())["samples"]:
        key = tuple(entry.pop("key"))
        out[key] = {side: list(ss) for side, ss in entry.items()}
    return out


def run_rounds(args, cases: list[Case], sides: list[str], take, meta: dict) -> dict:
    """``args.rounds`` rounds over ``cases``, each row measured on each of ``sides`` (two
    builds, or turbocql and the reference) in turn, the order alternating from round to round;
    ``take(side, case, round)`` gives one sample. Samples found in ``args.resume`` for a
    (row, side, round) are kept and not measured again. After each sample the JSON
    (``args.out``) is written with everything so far. Returns the samples by row and side, and
    puts the seconds and each round's in ``meta``."""
    samples: dict[tuple, dict[str, list[dict]]] = resumed(args.resume)
    started = time.time()
    round_seconds = []
    for rnd in range(args.rounds):
        t_round = time.time()
        order = sides if rnd % 2 == 0 else sides[::-1]
        for case in cases:
            for side in order:
                have = samples.setdefault(case.key, {}).setdefault(side, [])
                if any(s.get("round") == rnd for s in have):
                    continue
                s = take(side, case, rnd)
                have.append(s)
                shown = s.get("failed") or f"{s['ir']:,.0f} instr/req ({s['seconds']:.0f} s)"
                extra = " BUILD CHANGED" if "build_changed" in s else ""
                print(f"round {rnd + 1} {' '.join(case.key)} {side}: {shown}{extra}", file=sys.stderr, flush=True)
                if args.out:
                    save(args.out, meta, samples)
        round_seconds.append(round(time.time() - t_round))
        print(f"round {rnd + 1}/{args.rounds} done ({round_seconds[-1]} s)", file=sys.stderr, flush=True)
    meta.update(seconds=round(time.time() - started), round_seconds=round_seconds)
    return samples


def parse_run_arguments(ap: argparse.ArgumentParser, argv, n2: int, threads: str) -> tuple:
    """The options of a run by instructions (this script's and run_instructions_vs_rust.py's):
    the rows, the request counts, the server, the output; parses ``argv`` and returns the
    arguments and the rows (``make_cases``)."""
    ap.add_argument("--n1", type=int, default=2000, help="requests of the short run")
    ap.add_argument("--n2", type=int, default=n2, help="requests of the long run")
    ap.add_argument("--warmup", type=int, default=2000, help="client warm-up requests (same pattern), both runs")
    ap.add_argument(
        "--patterns", default="all", help="run_patterns.py --patterns (empty: none); a name without :N takes all"
    )
    ap.add_argument("--workloads", default="write,read", help="comma-separated: write,read")
    ap.add_argument("--threads", default=threads, help="sync table: comma-separated thread counts (empty: none)")
    ap.add_argument("--read-consume", choices=["sliding", "end"], default="sliding", help="read_pipeline")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--rows", type=int, default=10000, help="read keys row0..row<rows-1>")
    ap.add_argument("--server-warmup-ops", type=int, default=20000, help="before the first round (not under valgrind)")
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--timeout", type=float, default=900, help="per client run, seconds")
    ap.add_argument("--out", type=Path, default=None, help="JSON with every sample and the table")
    ap.add_argument(
        "--resume", type=Path, default=None, help="an earlier run's JSON: its samples kept, the rest measured"
    )
    ap.add_argument("--md", type=Path, default=None, help="Markdown report (default: --out with .md)")
    args = ap.parse_args(argv)
    if not 0 < args.n1 < args.n2:
        ap.error("need 0 < --n1 < --n2")
    workloads = [w for w in args.workloads.split(",") if w]
    try:
        cases = make_cases(args.patterns, workloads, [int(t) for t in args.threads.split(",") if t], args.read_consume)
    except ValueError as e:
        ap.error(str(e))
    return args, cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, metavar="PYTHON", help="interpreter of build A (the baseline)")
    ap.add_argument("--b", required=True, metavar="PYTHON", help="interpreter of build B (the change)")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=0.03, help="B/A within 1 ± this (default %(default)s)")
    args, cases = parse_run_arguments(ap, argv, n2=12000, threads="1,4")
    if not require_server(args.host, args.port, 0, hint=False):
        return 2

    a, b = args.label_a, args.label_b
    builds = [Build.probe(a, args.a), Build.probe(b, args.b)]
    by_label = {x.label: x for x in builds}
    command = " ".join(["python", "benchmarks/run_ab_instructions.py", *(argv if argv is not None else sys.argv[1:])])
    meta: dict = {
        "command": command,
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "builds": {x.label: x.python for x in builds},
        "builds_start": {x.label: x.state() for x in builds},
        "checkout": git_state(),
        "valgrind": valgrind_version(args.valgrind),
        "n1": args.n1,
        "n2": args.n2,
        "warmup": args.warmup,
        "rounds": args.rounds,
        "tolerance": args.tolerance,
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg()[0],
        "env": {k: v for k, v in os.environ.items() if k.startswith("TURBOCQL_BENCH_")},
    }
    print(f"{len(cases)} rows × 2 builds × {args.rounds} rounds, N1={args.n1}, N2={args.n2}", file=sys.stderr)
    warm_up(args, builds[1])

    samples = run_rounds(
        args, cases, [x.label for x in builds], lambda label, case, rnd: sample(args, by_label[label], case, rnd), meta
    )
    meta.update(
        loadavg_end=os.getloadavg()[0],
        builds_end={x.label: x.state() for x in builds},
    )
    rows = summarise(cases, samples, meta["builds_end"], a, b, args.tolerance)
    lines = table(rows, a, b, args.tolerance)
    remarks = notes(rows, samples, meta, args.tolerance)
    print("\n".join(lines + [""] + remarks))
    if args.out:
        save(args.out, meta, samples, rows=rows, table=lines, notes=remarks)
        print(f"raw results: {args.out}", file=sys.stderr)
    md = args.md or (args.out.with_suffix(".md") if args.out else None)
    if md:
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(report(meta, lines, remarks))
        print(f"report: {md}", file=sys.stderr)
    return 0


def report(meta: dict, lines: list[str], remarks: list[str]) -> str:
    a, b = list(meta["builds"])
    engines = ", ".join(
        f"{label} `{meta['builds_start'][label]['engine_md5']}` → `{meta['builds_end'][label]['engine_md5']}`"
        for label in (a, b)
    )
    return (
        f"# Instructions per request: {a} vs {b}\n\n"
        f"{meta['date'][:16].replace('T', ' ')}, `{meta['command']}`\n\n"
        f"callgrind's instruction count of the client's timed section (every thread), run with "
        f"{meta['n2']:,} requests minus run with {meta['n1']:,}, over {meta['n2'] - meta['n1']:,}; "
        f"{meta['warmup']:,} warm-up requests before each; {meta['rounds']} rounds, the builds' order "
        f"alternating; medians, B/A of the medians, spread = min–max over the rounds "
        f"((max − min) / median). Whole process: the same difference over the whole process, a "
        f"cross-check. {meta['cpus']} CPUs, {meta['valgrind']}, checkout {meta['checkout']['head']}; "
        f"{meta['seconds'] // 60} min in all, rounds of {', '.join(str(s) for s in meta['round_seconds'])} s. "
        f"Engine md5 at start → end: {engines}. The method and its limits: "
        f"`benchmarks/run_ab_instructions.py`.\n\n" + "\n".join(lines) + "\n\n" + "\n\n".join(remarks) + "\n"
    )


if __name__ == "__main__":
    sys.exit(main())
