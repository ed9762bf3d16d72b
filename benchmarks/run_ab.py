"""A/B comparison of two turbocql builds: the request-pattern, sync and TLS tables, measured
alternately in rounds, compared by medians.

A change to the request path must show that it costs no client CPU. One run cannot show
it on a machine whose run-to-run spread reaches tens of percent, so this runs both builds
in turn, ``--rounds`` times (the order flips every round, so a drift of the server or of
the machine hits both alike), with ``run_patterns.py``, ``run_sync.py`` and (scenario
``tls``, plain text and TLS rows side by side) ``run_tls.py`` (turbocql clients only),
and reports for each row the median client CPU µs/request and ops/s of each build,
B's median over A's, and each build's spread (min–max over its rounds).

A build is an interpreter that imports it: for the build before a change, for example,
``git worktree add /tmp/base <commit>``, build it there (``maturin build --release`` and
install the wheel into a virtualenv), and pass that virtualenv's python as ``--a``.

    python benchmarks/run_ab.py --a /tmp/venv-old/bin/python --b .venv/bin/python \\
        --rounds 5 --out benchmarks/results/ab-<date>.json

The server is warmed up once, before the first round (``--server-warmup-ops``); the
runners reset the table before each group of runs as usual.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_runner(script: str, python: str, extra: list[str], server_warmup: int) -> list[dict]:
    """Runs one runner for the turbocql client of ``python``; returns its result rows."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            str(HERE / script),
            "--clients",
            "turbocql",
            "--python",
            python,
            "--server-warmup-ops",
            str(server_warmup),
            "--out",
            str(out),
            *extra,
        ]
        if script in ("run_patterns.py", "run_tls.py"):
            cmd.append("--no-report")
        print("==>", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["results"]


def row_key(scenario: str, r: dict) -> tuple:
    if scenario == "sync":
        return ("sync", "%d threads" % r["threads"], r["workload"])
    if scenario == "tls":
        return ("tls", r["spec"], "%s, %s" % (r["workload"], r["transport"]))
    return ("patterns", r.get("spec") or r["pattern"], r["workload"])


def spread(values: list[float]) -> str:
    return "%.1f–%.1f" % (min(values), max(values)) if values else ""


def table(samples: dict, a: str, b: str) -> list[str]:
    lines = [
        "| scenario | row | workload | %s µs/req | %s µs/req | %s/%s | %s spread | %s spread | %s ops/s | %s ops/s |"
        % (a, b, b, a, a, b, a, b),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key in sorted(samples):
        sa, sb = samples[key].get(a, []), samples[key].get(b, [])
        if not sa or not sb:
            continue
        ca = statistics.median(x["cpu"] for x in sa)
        cb = statistics.median(x["cpu"] for x in sb)
        oa = statistics.median(x["ops"] for x in sa)
        ob = statistics.median(x["ops"] for x in sb)
        lines.append(
            "| %s | %s | %s | %.2f | %.2f | %.3f | %s | %s | %.0f | %.0f |"
            % (*key, ca, cb, cb / ca, spread([x["cpu"] for x in sa]), spread([x["cpu"] for x in sb]), oa, ob)
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, metavar="PYTHON", help="interpreter of build A (the baseline)")
    ap.add_argument("--b", required=True, metavar="PYTHON", help="interpreter of build B (the change)")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scenarios", default="patterns,sync", help="comma-separated: patterns,sync,tls")
    ap.add_argument("--ops", type=int, default=20000, help="timed requests per client run")
    ap.add_argument("--patterns", default="all", help="run_patterns.py --patterns")
    ap.add_argument("--threads", default="1,2,4,8,16", help="run_sync.py --threads")
    ap.add_argument("--server-warmup-ops", type=int, default=100000, help="before the first round only")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--tls-port", type=int, default=9044, help="run_tls.py --tls-port (scenario tls)")
    ap.add_argument("--tls-patterns", default="all", help="run_tls.py --patterns (scenario tls)")
    ap.add_argument("--out", type=Path, default=None, help="JSON with every sample and the table")
    ap.add_argument(
        "--pin-client",
        default=None,
        metavar="CPUS",
        help="the runners' --pin-client: each client process on these CPUs (the server on the others)",
    )
    args = ap.parse_args(argv)

    scenarios = [s for s in args.scenarios.split(",") if s]
    builds = [(args.label_a, args.a), (args.label_b, args.b)]
    samples: dict[tuple, dict[str, list[dict]]] = {}
    started = time.time()
    warmup = args.server_warmup_ops
    for rnd in range(args.rounds):
        order = builds if rnd % 2 == 0 else builds[::-1]
        for label, python in order:
            for scenario in scenarios:
                common = ["--port", str(args.port), "--ops", str(args.ops)]
                if args.pin_client is not None:
                    common += ["--pin-client", args.pin_client]
                if scenario == "patterns":
                    rows = run_runner("run_patterns.py", python, [*common, "--patterns", args.patterns], warmup)
                elif scenario == "tls":
                    tls = ["--tls-port", str(args.tls_port), "--patterns", args.tls_patterns]
                    rows = run_runner("run_tls.py", python, [*common, *tls], warmup)
                else:
                    rows = run_runner("run_sync.py", python, [*common, "--threads", args.threads], warmup)
                warmup = 0
                for r in rows:
                    if r.get("client") != "turbocql" or r.get("errors"):
                        continue
                    samples.setdefault(row_key(scenario, r), {}).setdefault(label, []).append(
                        {"round": rnd, "cpu": r["cpu_us_per_op"], "ops": r["ops_per_s"]}
                    )
        print("round %d/%d done (%.0f s)" % (rnd + 1, args.rounds, time.time() - started), flush=True)

    lines = table(samples, args.label_a, args.label_b)
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {
                    "command": " ".join(
                        ["python", "benchmarks/run_ab.py", *(argv if argv is not None else sys.argv[1:])]
                    ),
                    "builds": dict(builds),
                    "rounds": args.rounds,
                    "seconds": round(time.time() - started),
                    "samples": [{"key": list(k), **{lab: v for lab, v in s.items()}} for k, s in samples.items()],
                    "table": lines,
                },
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
