"""The reliability report (issue "Faults, overload and bad input"): per row of the matrix,
what was injected, how many requests, how many failed with which error, how many were lost
(must be 0), time to detect and recover, peak memory.

The figures come from the fault tests themselves (each asserts on what it exercises and
hands its figures to ``benchmarks/harness/reliability.record``): this script runs them with
``TURBOCQL_RELIABILITY_OUT`` naming a fresh JSON-lines file, adds the records of the two
benchmark rows (13: ``run_network.py``, 14: ``run_soak.py``) when asked, and renders
``benchmarks/results/reliability-<date>.md`` (and ``.json``)::

    python benchmarks/reliability.py                 # rows 1-12 (needs the single node and
                                                     # the 3-node cluster; starts what is missing)
    python benchmarks/reliability.py --network --soak-minutes 30
    python benchmarks/reliability.py --render FILE.jsonl   # render records already made
    python benchmarks/reliability.py --network --with soak.jsonl  # + records of an earlier run

Needs the test venv (``scripts/env.sh``), Go for toxiproxy (rows 3 and 4) and valgrind-free
time: about 15 minutes for rows 1-12 on this 2-core machine.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

# Row -> (what the row is, the test files whose records it gets).
ROWS = {
    "1": ("node killed (kill -9) with 10,000 requests in flight, every path", ["test_node_killed.py"]),
    "2": ("node frozen (SIGSTOP) for 30 s under load; idle heartbeat", ["test_frozen_node.py"]),
    "3": ("responses after the client's timeout", ["test_faults_proxy.py"]),
    "4": ("connection reset mid-frame, frame truncated", ["test_faults_proxy.py"]),
    "5": ("every server error through every path", ["test_server_errors.py"]),
    "6": ("UNPREPARED after ALTER TABLE and after a restart", ["test_reprepare.py"]),
    "7": ("1,000,000 requests to a server that stops reading", ["test_backpressure.py"]),
    "8": ("node down and up, repeatedly, under load", ["test_node_flapping.py"]),
    "9": (
        "shutdown under load, against an unresponsive node, at exit",
        ["test_shutdown.py", "test_interpreter_exit.py"],
    ),
    "10": ("fork with requests in flight", ["test_fork.py"]),
    "11": ("malformed and hostile server frames", ["test_hostile_frames.py", "test_hostile_server.py"]),
    "12": ("bad input from Python, every path", ["test_bad_input.py"]),
    "13": ("slow network through the proxy (benchmark)", []),
    "14": ("soak: mixed load with faults (benchmark)", []),
}


def run_tests(out, rows):
    files = []
    for row in rows:
        for f in ROWS[row][1]:
            path = ROOT / "tests" / "integration" / f
            if path.exists() and str(path) not in files:
                files.append(str(path))
    env = dict(os.environ, TURBOCQL_RELIABILITY_OUT=str(out), TURBOCQL_TEST_LONG="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
    print("==>", " ".join(cmd[3:]), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def run_benchmark(script, out, args):
    env = dict(os.environ, TURBOCQL_RELIABILITY_OUT=str(out), TURBOCQL_TEST_LONG="1")
    cmd = [sys.executable, str(ROOT / "benchmarks" / script), *args]
    print("==>", " ".join(cmd[1:]), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def _failed(failed):
    if not failed:
        return "0"
    if isinstance(failed, dict) and all(isinstance(v, int) for v in failed.values()):
        return ", ".join("%s %s" % (k, f"{v:,}") for k, v in sorted(failed.items(), key=lambda kv: -kv[1]))
    return json.dumps(failed, sort_keys=True)


def _num(v):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return "%.2f" % v
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def render(records, status):
    today = datetime.date.today().isoformat()
    lines = [
        "# Reliability report, %s" % today,
        "",
        'Each row of the faults matrix (issue "Faults, overload and bad input"): what was injected, how',
        "many requests, how many failed with which error, how many acknowledged writes were lost",
        "(must be 0) and requests never resolved (must be 0), time to detect and recover, the",
        "client's peak RSS. Figures recorded by the tests that assert on them",
        "(`python benchmarks/reliability.py`); the local Cassandra 5.0.6 (one node, and the 3-node",
        "2-DC cluster on 127.0.0.11-13) on this 2-core machine. Test run: %s." % status,
        "",
    ]
    by_row = {}
    for r in records:
        by_row.setdefault(r["row"], []).append(r)
    for row, (what, _files) in ROWS.items():
        lines.append("## Row %s: %s" % (row, what))
        lines.append("")
        rs = _grouped(by_row.get(row, []))
        if not rs:
            lines += ["No figures in this run.", ""]
            continue
        lines.append(
            "| scenario | injected | requests | succeeded | failed | lost | hung "
            "| detect s | recover s | peak RSS MiB |"
        )
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        notes = []
        for r in rs:
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
                % (
                    r["scenario"],
                    r.get("injected", ""),
                    _num(r.get("requests")),
                    _num(r.get("succeeded")),
                    _failed(r.get("failed")),
                    _num(r.get("lost")),
                    _num(r.get("hung")),
                    _num(r.get("detect_s")),
                    _num(r.get("recover_s")),
                    _num(r.get("peak_rss_mb")),
                )
            )
            extra = {k: v for k, v in r.items() if k not in _SHOWN}
            if r.get("notes") or extra:
                notes.append(
                    "- %s: %s%s"
                    % (r["scenario"], r.get("notes", ""), (" " + json.dumps(extra, sort_keys=True)) if extra else "")
                )
        lines.append("")
        lines += notes
        if notes:
            lines.append("")
    return "\n".join(lines)


def _grouped(records, most=12):
    """A row with many records (one per error class and path, say) as one line per group:
    the scenario's text before its first " / ", with the counts added up."""
    if len(records) <= most:
        return records
    groups = {}
    for r in records:
        key = r["scenario"].split(" / ")[0]
        g = groups.setdefault(key, {"row": r["row"], "scenario": key, "injected": r.get("injected", ""), "cases": 0})
        g["cases"] += 1
        for k in ("requests", "succeeded", "lost", "hung"):
            if isinstance(r.get(k), int):
                g[k] = g.get(k, 0) + r[k]
        if isinstance(r.get("failed"), dict):
            f = g.setdefault("failed", {})
            for k, v in r["failed"].items():
                if isinstance(v, int):
                    f[k] = f.get(k, 0) + v
        if isinstance(r.get("peak_rss_mb"), (int, float)):
            g["peak_rss_mb"] = max(g.get("peak_rss_mb", 0), r["peak_rss_mb"])
    for g in groups.values():
        g["notes"] = "%d cases (paths and policies) added up" % g.pop("cases")
    return list(groups.values())


_SHOWN = {
    "row",
    "scenario",
    "at",
    "injected",
    "requests",
    "succeeded",
    "failed",
    "lost",
    "hung",
    "detect_s",
    "recover_s",
    "peak_rss_mb",
    "notes",
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--rows", default=",".join(r for r in ROWS if ROWS[r][1]), help="rows whose tests run (default 1-12)"
    )
    p.add_argument("--network", action="store_true", help="row 13: run benchmarks/run_network.py too")
    p.add_argument("--soak-minutes", type=float, default=0, help="row 14: run benchmarks/run_soak.py for this long")
    p.add_argument("--render", metavar="JSONL", help="only render records already made")
    p.add_argument(
        "--with",
        dest="extra",
        metavar="JSONL",
        action="append",
        default=[],
        help="add the records of an earlier run (say, a 30-minute soak's $TURBOCQL_RELIABILITY_OUT)",
    )
    p.add_argument("--out", default=None, help="Markdown output (default benchmarks/results/reliability-DATE.md)")
    args = p.parse_args(argv)

    if args.render:
        records_file, status = Path(args.render), "rendered from %s" % args.render
    else:
        records_file = Path(tempfile.mkstemp(prefix="reliability-", suffix=".jsonl")[1])
        rc = run_tests(records_file, [r.strip() for r in args.rows.split(",") if r.strip()])
        status = "all passed" if rc == 0 else "pytest exit status %d (see its output)" % rc
        if args.network:
            run_benchmark("run_network.py", records_file, [])
        if args.soak_minutes:
            run_benchmark("run_soak.py", records_file, ["--minutes", str(args.soak_minutes)])
    records = []
    for f in [records_file, *map(Path, args.extra)]:
        records += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    for f in args.extra:
        status += "; with the records of %s" % Path(f).name
    out = Path(args.out) if args.out else RESULTS / ("reliability-%s.md" % datetime.date.today().isoformat())
    out.write_text(render(records, status) + "\n")
    out.with_suffix(".json").write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    print("wrote", out, "and", out.with_suffix(".json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
