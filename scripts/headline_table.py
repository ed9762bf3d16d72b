"""The README's and the docs home page's headline table, made from one committed result file.

Client CPU per request and requests/s of the main paths, for the classic driver, turbocql
and the Rust reference, read from ``RESULT`` (a whole run of `turbocql bench`). Run it to
print the table; tests/unit/test_docs_figures.py checks that both pages hold exactly this
table, so every figure in it comes from that file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = "benchmarks/results/bench-2026-12-07-182711.json"

# (label, scenario, turbocql/classic pattern, threads, Rust reference's pattern)
ROWS = [
    ("sync `execute`, 1 thread", "sync", "sync", 1, "sync-threads"),
    ("sync `execute`, 16 threads", "sync", "sync", 16, "sync-threads"),
    ("`execute_async`, 120 in flight", "patterns", "queued_futures", None, "concurrent"),
    ("`execute_concurrent`", "patterns", "execute_concurrent_gen", None, "concurrent"),
]
ASYNCIO = ("asyncio, 120 coroutines", "patterns", "asyncio", None, "concurrent")


def _find(results, client, pattern, workload, threads, spec=None):
    for r in results:
        if r["client"] != client or r["pattern"] != pattern or r["workload"] != workload:
            continue
        if threads is not None and r.get("threads") != threads:
            continue
        if spec is not None and r.get("spec") != spec:
            continue
        return r
    raise LookupError("%s %s %s threads=%s not in %s" % (client, pattern, workload, threads, RESULT))


def _n(value: float, digits: int = 0) -> str:
    return "{:,.{}f}".format(value, digits)


def table() -> str:
    data = json.loads((ROOT / RESULT).read_text())["scenarios"]
    lines = [
        "| path | | classic µs | turbocql µs | Rust µs | classic req/s | turbocql req/s | Rust req/s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for workload in ("write", "read"):
        for label, scenario, pattern, threads, rust_pattern in [*ROWS, ASYNCIO]:
            results = data[scenario]["results"]
            rust = _find(results, "rust", rust_pattern, workload, threads)
            turbo = _find(results, "turbocql", pattern, workload, threads, "asyncio" if pattern == "asyncio" else None)
            if pattern == "asyncio":
                classic_cpu, classic_ops = "—", "—"
            else:
                classic = _find(results, "classic", pattern, workload, threads)
                classic_cpu, classic_ops = _n(classic["cpu_us_per_op"], 1), _n(classic["ops_per_s"])
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s |"
                % (
                    label,
                    workload,
                    classic_cpu,
                    _n(turbo["cpu_us_per_op"], 1),
                    _n(rust["cpu_us_per_op"], 1),
                    classic_ops,
                    _n(turbo["ops_per_s"]),
                    _n(rust["ops_per_s"]),
                )
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
