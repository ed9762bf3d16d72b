"""The tables of the docs made from the run of the README's headline table.

docs/benchmarks.md's sync table (document 000, by threads), request-pattern table (documents
000 and 001) and asyncio table, and docs/execution-paths.md's table of paths, each row read
from ``headline_table.RESULT`` (a whole run of `turbocql bench`), so these pages and the
README's headline table come from the same run. ``python scripts/docs_tables.py`` prints
them; tests/unit/test_docs_figures.py checks that each page holds its tables exactly.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from headline_table import RESULT, ROOT, _find, _n  # noqa: E402

sys.path.insert(0, str(ROOT))
from benchmarks.run_patterns import RUST_ALL_SPEC  # noqa: E402  (the reference with every request in flight)

SYNC_THREADS = (1, 2, 4, 8, 16)

# (pattern, spec, label, workloads)
PATTERNS = [
    ("batched_futures", "batched_futures", "batched futures", ("write", "read")),
    ("queued_futures", "queued_futures", "queued futures", ("write", "read")),
    ("unthrottled_futures", "unthrottled_futures", "unthrottled futures", ("write", "read")),
    ("callback_chain", "callback_chain:120", "callback chains ×120", ("write", "read")),
    ("callback_chain", "callback_chain:250", "callback chains ×250", ("write",)),
    ("callback_chain", "callback_chain:500", "callback chains ×500", ("write",)),
    ("execute_concurrent", "execute_concurrent", "execute_concurrent_with_args (list)", ("write", "read")),
    (
        "execute_concurrent_gen",
        "execute_concurrent_gen",
        "execute_concurrent_with_args (generator, streamed)",
        ("write", "read"),
    ),
    ("write_pipeline", "write_pipeline", "WritePipeline", ("write",)),
    ("read_pipeline", "read_pipeline", "ReadPipeline", ("read",)),
]
# The classic driver has no pipelines: they are compared with its callback chains ×120.
NO_CLASSIC = {"write_pipeline", "read_pipeline"}


def _x(a: float, b: float) -> str:
    return "%.2f×" % (a / b)


def _row(*cells: object) -> str:
    """A table row; an empty cell as ``| |``."""
    return "|" + "|".join(" %s " % c if c != "" else " " for c in cells) + "|"


def _rust(results: list, workload: str, spec: str = "rust_concurrent") -> dict:
    return _find(results, "rust", "concurrent", workload, None, spec)


def _chains(results: list, workload: str) -> dict:
    """The classic driver's callback chains ×120: what its missing APIs are compared with."""
    return _find(results, "classic", "callback_chain", workload, None, "callback_chain:120")


@functools.cache
def _scenarios() -> dict:
    """The result file's scenarios, read once for all the tables."""
    return json.loads((ROOT / RESULT).read_text())["scenarios"]


def sync_table() -> str:
    results = _scenarios()["sync"]["results"]
    lines = [
        "| workload | threads | classic ops/s | turbocql ops/s | ops/s vs classic | classic µs/op | turbocql µs/op "
        "| Rust tasks µs/op | Rust OS threads µs/op | turbocql CPU vs Rust tasks | vs Rust OS threads |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload in ("write", "read"):
        for n in SYNC_THREADS:
            classic = _find(results, "classic", "sync", workload, n)
            turbo = _find(results, "turbocql", "sync", workload, n)
            tasks = _find(results, "rust", "sync", workload, n)
            threads = _find(results, "rust", "sync-threads", workload, n)
            cpu = turbo["cpu_us_per_op"]
            lines.append(
                _row(
                    workload,
                    n,
                    _n(classic["ops_per_s"]),
                    _n(turbo["ops_per_s"]),
                    _x(turbo["ops_per_s"], classic["ops_per_s"]),
                    _n(classic["cpu_us_per_op"], 1),
                    _n(cpu, 1),
                    _n(tasks["cpu_us_per_op"], 1),
                    _n(threads["cpu_us_per_op"], 1),
                    _x(cpu, tasks["cpu_us_per_op"]),
                    _x(cpu, threads["cpu_us_per_op"]),
                )
            )
    return "\n".join(lines) + "\n"


def patterns_table() -> str:
    results = _scenarios()["patterns"]["results"]
    lines = [
        "| workload | pattern | classic ops/s | turbocql ops/s | ops/s vs classic | classic µs/op | turbocql µs/op "
        "| turbocql CPU vs Rust |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload in ("write", "read"):
        rust, deep = _rust(results, workload), _rust(results, workload, RUST_ALL_SPEC)
        for label, ref in (("120 in flight", rust), ("every request in flight", deep)):
            name = "Rust reference (`scylla` crate, %s)" % label
            cpu = ref["cpu_us_per_op"]
            lines.append(
                _row(workload, name, "", _n(ref["ops_per_s"]), "", "", _n(cpu, 1), _x(cpu, rust["cpu_us_per_op"]))
            )
        for pattern, spec, label, workloads in PATTERNS:
            if workload not in workloads:
                continue
            turbo = _find(results, "turbocql", pattern, workload, None, spec)
            cpu = turbo["cpu_us_per_op"]
            versus = _x(cpu, rust["cpu_us_per_op"])
            if spec == "unthrottled_futures":
                versus += " (%s at the same depth)" % _x(cpu, deep["cpu_us_per_op"])
            if pattern in NO_CLASSIC:
                classic_ops, classic_cpu = "—", "—"
                vs_classic = _x(turbo["ops_per_s"], _chains(results, workload)["ops_per_s"]) + "†"
            else:
                classic = _find(results, "classic", pattern, workload, None, spec)
                classic_ops, classic_cpu = _n(classic["ops_per_s"]), _n(classic["cpu_us_per_op"], 1)
                vs_classic = _x(turbo["ops_per_s"], classic["ops_per_s"])
            lines.append(
                _row(workload, label, classic_ops, _n(turbo["ops_per_s"]), vs_classic, classic_cpu, _n(cpu, 1), versus)
            )
    return "\n".join(lines) + "\n"


def asyncio_table() -> str:
    results = _scenarios()["patterns"]["results"]
    lines = [
        "| workload | loop | turbocql ops/s | acsylla ops/s | turbocql µs/op | acsylla µs/op | turbocql CPU vs Rust "
        "| acsylla CPU vs Rust | turbocql ops/s vs classic† |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload in ("write", "read"):
        rust = _rust(results, workload)["cpu_us_per_op"]
        chains = _chains(results, workload)
        for loop, spec in (("asyncio", "asyncio"), ("uvloop", "asyncio_uvloop")):
            turbo = _find(results, "turbocql", "asyncio", workload, None, spec)
            acsylla = _find(results, "acsylla", "asyncio", workload, None, spec)
            lines.append(
                _row(
                    workload,
                    loop,
                    _n(turbo["ops_per_s"]),
                    _n(acsylla["ops_per_s"]),
                    _n(turbo["cpu_us_per_op"], 1),
                    _n(acsylla["cpu_us_per_op"], 1),
                    _x(turbo["cpu_us_per_op"], rust),
                    _x(acsylla["cpu_us_per_op"], rust),
                    _x(turbo["ops_per_s"], chains["ops_per_s"]),
                )
            )
    return "\n".join(lines) + "\n"


# The paths with a classic counterpart of the same name: (label, when, pattern, spec).
PATHS = [
    ("`execute_async` futures (queued)", "many requests, a result each", "queued_futures", "queued_futures"),
    ("callback chains ×120", "callback-driven code", "callback_chain", "callback_chain:120"),
    (
        "`execute_concurrent_with_args` (generator)",
        "many statements, results in order",
        "execute_concurrent_gen",
        "execute_concurrent_gen",
    ),
]


def paths_table() -> str:
    scen = _scenarios()
    sync, patterns = scen["sync"]["results"], scen["patterns"]["results"]
    lines = [
        "| path | when | write µs/op | read µs/op | write ops/s | read ops/s | reads vs classic ops/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]

    def line(label, when, write, read, classic_read, mark=""):
        vs = _x(read["ops_per_s"], classic_read["ops_per_s"]) + mark if classic_read else ""
        cpu = (_n(write["cpu_us_per_op"], 1), _n(read["cpu_us_per_op"], 1))
        return _row(label, when, *cpu, _n(write["ops_per_s"]), _n(read["ops_per_s"]), vs)

    for n, when in ((1, "simple code, one request at a time"), (16, "existing threaded code")):
        w, r = (_find(sync, "turbocql", "sync", wl, n) for wl in ("write", "read"))
        lines.append(
            line(
                "`session.execute`, %d thread%s" % (n, "" if n == 1 else "s"),
                when,
                w,
                r,
                _find(sync, "classic", "sync", "read", n),
            )
        )
    for label, when, pattern, spec in PATHS:
        w, r = (_find(patterns, "turbocql", pattern, wl, None, spec) for wl in ("write", "read"))
        lines.append(line(label, when, w, r, _find(patterns, "classic", pattern, "read", None, spec)))
    chains = _chains(patterns, "read")
    w = _find(patterns, "turbocql", "write_pipeline", "write", None, "write_pipeline")
    r = _find(patterns, "turbocql", "read_pipeline", "read", None, "read_pipeline")
    lines.append(
        line("`WritePipeline` / `ReadPipeline`", "a stream of writes or reads with bounded memory", w, r, chains, "†")
    )
    for loop, spec in (("asyncio loop", "asyncio"), ("uvloop", "asyncio_uvloop")):
        w, r = (_find(patterns, "turbocql", "asyncio", wl, None, spec) for wl in ("write", "read"))
        lines.append(line("`turbocql.aio`, %s" % loop, "asyncio applications", w, r, chains, "†"))
    w, r = (_rust(patterns, wl) for wl in ("write", "read"))
    lines.append(line("Rust reference (`scylla` crate)", "the floor", w, r, None))
    return "\n".join(lines) + "\n"


# Each page and the tables it holds.
PAGES = {
    "docs/benchmarks.md": (sync_table, patterns_table, asyncio_table),
    "docs/execution-paths.md": (paths_table,),
}

if __name__ == "__main__":
    sys.stdout.write("\n".join(t() for tables in PAGES.values() for t in tables))
