"""Request-pattern benchmark runner: classic vs turbocql vs Rust (benchmarks/README.md).

In one run, after warming the server up with the Rust client, it runs for each workload
(``--workloads write,read``) and each request pattern (``--patterns``) the classic driver and
turbocql (``clients/patterns.py --driver cassandra|turbocql``), each in its own subprocess,
one after the other, plus once per workload the pure-Rust reference with 120 requests in
flight (``rust_ref --pattern concurrent --concurrency 120``), the reference row of every
in-flight pattern. It prints two Markdown tables (their origin: benchmarks/README.md):

* the request patterns of the classic driver's "Performance Notes": the write workload of
  batched, queued and unthrottled futures, callback chains (120, 250, 500),
  ``execute_concurrent`` (a list, and a generator with ``results_generator=True``);
* the pipeline benchmark: the same patterns in read mode, plus ``WritePipeline`` and
  ``ReadPipeline``, with its write rows repeated beside the write pipeline (same runs, not
  run twice);

with turbocql's asyncio API as an extra row in both. Columns: ops/s, client CPU µs/op, server
CPU µs/op, p50/p99 latency, peak RSS of the client process, ops/s relative to the classic
driver on the same pattern, client CPU relative to the Rust reference. Patterns the classic
driver does not have (pipelines, asyncio) are compared with its callback chains (marked †).
A client that fails (or lacks the API) is shown as ``failed: <reason>``.

Example::

    python3 benchmarks/run_patterns.py --quick --clients classic,rust
    python3 benchmarks/run_patterns.py --ops 20000 --pin-client 1 --out
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up, timing and reporting)
    add_client_arguments,
    add_repeat_argument,
    add_reset_argument,
    add_run_arguments,
    add_server_arguments,
    check_pin_client,
    client_cmd,
    ensure_rust_bin,
    find_server_pid,
    fmt_num,
    load_note,
    median_runs,
    ops_line,
    pin_note,
    require_server,
    reset_table,
    run_client,
    run_meta,
    rust_command,
    server_args,
    unavailable_lines,
    warm_up_server,
    write_json,
)

CLIENT_PY = HERE / "clients" / "patterns.py"
TABLE_CLIENTS = ("classic", "scylla", "turbocql", "acsylla")
RUST_LABEL = "rust, 120 in flight"
# The Rust reference with every request in flight at once (its K = the run's ops): the same
# depth as unthrottled futures, whose rows show their CPU against it too.
RUST_ALL_SPEC = "rust_all_in_flight"


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str  # as given to --patterns, e.g. "callback_chain:250"
    args: tuple[str, ...]  # patterns.py arguments
    workloads: tuple[str, ...]  # workloads it applies to
    turbocql_only: bool = False  # the classic driver has no such API
    label: str = ""  # shown in the table

    @property
    def base(self) -> str:
        return self.name.split(":")[0]

    def runs_on(self, client: str) -> bool:
        """classic and scylla-driver: the classic API; acsylla: asyncio only."""
        if client == "turbocql":
            return True
        if client == "acsylla":
            return self.base.startswith("asyncio")
        return not self.turbocql_only


def _spec(name, args, workloads=("write", "read"), turbocql_only=False, label=""):
    return Spec(name, tuple(args), tuple(workloads), turbocql_only, label or name)


SPECS = [
    _spec("batched_futures", ["--pattern", "batched_futures"], label="batched futures (120)"),
    _spec("queued_futures", ["--pattern", "queued_futures"], label="queued futures (120)"),
    _spec("unthrottled_futures", ["--pattern", "unthrottled_futures"], label="unthrottled futures"),
    _spec("callback_chain:120", ["--pattern", "callback_chain", "--chains", "120"], label="callback chains ×120"),
    _spec(
        "callback_chain:250",
        ["--pattern", "callback_chain", "--chains", "250"],
        workloads=("write",),
        label="callback chains ×250",
    ),
    _spec(
        "callback_chain:500",
        ["--pattern", "callback_chain", "--chains", "500"],
        workloads=("write",),
        label="callback chains ×500",
    ),
    _spec("execute_concurrent", ["--pattern", "execute_concurrent"], label="execute_concurrent_with_args (list, 120)"),
    _spec(
        "execute_concurrent_gen",
        ["--pattern", "execute_concurrent_gen"],
        label="execute_concurrent_with_args (generator, results_generator)",
    ),
    _spec(
        "write_pipeline",
        ["--pattern", "write_pipeline"],
        workloads=("write",),
        turbocql_only=True,
        label="WritePipeline (100 in flight, 40,000 unsent)",
    ),
    _spec(
        "read_pipeline",
        ["--pattern", "read_pipeline"],
        workloads=("read",),
        turbocql_only=True,
        label="ReadPipeline (100 in flight, 400 unconsumed)",
    ),
    _spec("asyncio", ["--pattern", "asyncio"], turbocql_only=True, label="asyncio, 120 coroutines"),
    _spec(
        "asyncio_uvloop",
        ["--pattern", "asyncio", "--uvloop"],
        turbocql_only=True,
        label="asyncio on uvloop, 120 coroutines",
    ),
]
SPEC_BY_NAME = {s.name: s for s in SPECS}

# Rows of the two tables (benchmarks/README.md): (workload, pattern names in the table's order).
DOC_000 = [
    (
        "write",
        [
            "batched_futures",
            "queued_futures",
            "unthrottled_futures",
            "callback_chain:120",
            "callback_chain:250",
            "callback_chain:500",
            "execute_concurrent",
            "execute_concurrent_gen",
            "asyncio",
            "asyncio_uvloop",
        ],
    )
]
DOC_001 = [
    ("write", ["callback_chain:120", "write_pipeline", "batched_futures", "queued_futures", "unthrottled_futures"]),
    (
        "read",
        [
            "callback_chain:120",
            "read_pipeline",
            "batched_futures",
            "queued_futures",
            "unthrottled_futures",
            "execute_concurrent",
            "execute_concurrent_gen",
            "asyncio",
            "asyncio_uvloop",
        ],
    ),
]


def select_specs(text: str) -> list[Spec]:
    """``--patterns``: comma-separated names; a name without ``:N`` takes every variant."""
    if text == "all":
        return list(SPECS)
    out: list[Spec] = []
    for want in (w.strip() for w in text.split(",") if w.strip()):
        hits = [s for s in SPECS if s.name == want or s.base == want]
        if not hits:
            raise ValueError(f"unknown pattern {want!r} (known: {', '.join(s.name for s in SPECS)})")
        out += [s for s in hits if s not in out]
    return out


def key(r: dict) -> tuple[str, str, str]:
    return (r["label"], r["spec"], r["workload"])


def markdown_table(rows: list[tuple[str, str]], results: list[dict]) -> str:
    """``rows``: (workload, spec name) in order; each gets its client rows."""
    by = {key(r): r for r in results}
    rust = {r["workload"]: r for r in results if r["label"] == "rust" and r["spec"] != RUST_ALL_SPEC}
    rust_all = {r["workload"]: r for r in results if r["label"] == "rust" and r["spec"] == RUST_ALL_SPEC}
    head = (
        "| workload | pattern | client | ops/s | client CPU µs/op | server CPU µs/op "
        "| p50 µs | p95 µs | p99 µs | peak RSS MB | ops/s vs classic | CPU vs rust |"
    )
    lines = [head, "| " + " | ".join(["---"] * 12) + " |"]
    dagger = False
    shown_rust = set()
    for wl, name in rows:
        if wl in rust and wl not in shown_rust:
            shown_rust.add(wl)
            lines.append(row_line(wl, "reference: `scylla` crate, 120 in flight", rust[wl], None, rust[wl], ""))
        spec = SPEC_BY_NAME[name]
        deep = rust_all.get(wl) if name == "unthrottled_futures" else None
        if deep is not None:
            label = "reference: `scylla` crate, every request in flight"
            lines.append(row_line(wl, label, deep, None, rust.get(wl), ""))
        for label in TABLE_CLIENTS:
            r = by.get((label, name, wl))
            if r is None:
                continue
            classic = by.get(("classic", name, wl))
            mark = ""
            if spec.turbocql_only or classic is None:
                classic = by.get(("classic", "callback_chain:120", wl))
                mark = "†"
                dagger = dagger or (classic is not None and "failed" not in classic and "failed" not in r)
            lines.append(row_line(wl, spec.label, r, classic, rust.get(wl), mark, deep))
    if dagger:
        lines.append("")
        lines.append(
            "† no such API in the classic driver (pipelines, asyncio): compared with "
            "its callback chains ×120 on the same workload."
        )
    return "\n".join(lines)


def row_line(
    wl: str, pattern: str, r: dict, classic: dict | None, rust: dict | None, mark: str, deep: dict | None = None
) -> str:
    """One row; ``deep``: the Rust reference at the same depth (every request in flight), whose
    ratio follows the 120-in-flight one."""
    name = r["label"] if r["label"] != "rust" else "rust"
    if "failed" in r:
        reason = r["failed"].replace("|", "/")
        return f"| {wl} | {pattern} | {name} | failed: {reason} | | | | | | | | |"
    vs_classic = vs_rust = ""
    if classic and "failed" not in classic and r is not classic:
        vs_classic = f"{r['ops_per_s'] / classic['ops_per_s']:.2f}×{mark}"
    if rust and "failed" not in rust and rust["cpu_us_per_op"]:
        vs_rust = f"{r['cpu_us_per_op'] / rust['cpu_us_per_op']:.2f}×"
    if deep and "failed" not in deep and deep["cpu_us_per_op"] and r is not deep:
        vs_rust += f" ({r['cpu_us_per_op'] / deep['cpu_us_per_op']:.2f}× at the same depth)"
    errs = f" ({r['errors']} errors)" if r.get("errors") else ""
    rss = r.get("process_max_rss_mb", r.get("max_rss_mb"))
    return (
        f"| {wl} | {pattern} | {name}{errs} | {fmt_num(r['ops_per_s'])} "
        f"| {fmt_num(r['cpu_us_per_op'], 1)} | {fmt_num(r.get('server_cpu_us_per_op'), 1)} "
        f"| {fmt_num(r.get('p50_us'))} | {fmt_num(r.get('p95_us'))} "
        f"| {fmt_num(r.get('p99_us'))} | {fmt_num(rss, 0)} "
        f"| {vs_classic} | {vs_rust} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.add_argument(
        "--ops", type=int, default=None, help="timed operations per client run (default 20000; --quick: 5000)"
    )
    ap.add_argument(
        "--patterns",
        default="all",
        help="comma-separated: "
        + ", ".join(s.name for s in SPECS)
        + " (a name without :N takes every variant), or all",
    )
    ap.add_argument("--workloads", default="write,read", help="comma-separated: write,read")
    ap.add_argument(
        "--clients",
        default="classic,turbocql,rust",
        help="comma-separated subset of classic,scylla,turbocql,acsylla,rust (acsylla runs the asyncio patterns only)",
    )
    ap.add_argument("--quick", action="store_true", help="small runs: 5,000 ops, 1,000 warm-up, 50,000 server warm-up")
    ap.add_argument(
        "--warmup", type=int, default=None, help="client warm-up requests, same pattern (default 2000; --quick: 1000)"
    )
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument(
        "--server-warmup-ops",
        type=int,
        default=None,
        help="writes and reads by the Rust client (120 in flight) before anything (default 100000; --quick: 50000)",
    )
    ap.add_argument(
        "--read-consume",
        choices=["sliding", "end"],
        default="sliding",
        help="ReadPipeline: consume while executing, or after (document 001)",
    )
    add_client_arguments(ap)
    peers.add_arguments(ap)
    add_repeat_argument(ap)
    add_reset_argument(ap)
    add_run_arguments(ap, "patterns", None, "per client run, seconds (default 900; --quick: 300)")
    ap.add_argument(
        "--report",
        default=str(HERE / "results" / "patterns-latest.md"),
        metavar="PATH",
        help="Markdown report (default %(default)s)",
    )
    ap.add_argument("--no-report", action="store_true", help="do not write the report")
    args = ap.parse_args(argv)

    q = args.quick
    ops = args.ops or (5000 if q else 20000)
    warmup = args.warmup if args.warmup is not None else (1000 if q else 2000)
    server_warmup = args.server_warmup_ops if args.server_warmup_ops is not None else (50000 if q else 100000)
    timeout = args.timeout or (300 if q else 900)
    workloads = [w for w in args.workloads.split(",") if w]
    try:
        clients = peers.parse_clients(args.clients)
    except ValueError as e:
        ap.error(str(e))
    for w in workloads:
        if w not in ("write", "read"):
            ap.error(f"unknown workload {w!r}")
    try:
        specs = select_specs(args.patterns)
    except ValueError as e:
        ap.error(str(e))
    check_pin_client(ap, args.pin_client)

    if not require_server(args.host, args.port, args.wait):
        return 2
    server_pid = args.server_pid or find_server_pid(args.port, args.host)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build)
    pyclients = peers.from_args(args, clients)

    common = server_args(args.host, args.port, args.keyspace, server_pid, args.rows)

    def rust_cmd(workload: str, n: int, extra: list[str]) -> list[str]:
        return rust_command(rust_bin, common, workload, n, extra)

    warm_up_server(rust_bin, common, server_warmup, args.pin_client, timeout)

    load_start = os.getloadavg()[0]
    results: list[dict] = []

    def record(label: str, spec_name: str, wl: str, cmd: list[str] | None, missing: str = "") -> None:
        print(f"{wl:5} {spec_name:>24} {label:>8} ...", end=" ", file=sys.stderr, flush=True)
        r = {"failed": missing} if cmd is None else run_client(cmd, args.pin_client, timeout)
        r.update(label=label, spec=spec_name, workload=wl)
        if label in pyclients:
            r["interpreter"] = pyclients[label].python
        print(ops_line(r), file=sys.stderr, flush=True)
        results.append(r)

    def reset() -> None:
        if args.reset:
            reset_table(rust_bin, common, args.pin_client, timeout)

    for _round, wl in ((i, wl) for i in range(max(1, args.repeat)) for wl in workloads):
        reset()
        if "rust" in clients:
            # 120 in flight, the reference of every row; and every request in flight at once,
            # unthrottled futures' own depth, when they run.
            depths = [("rust_concurrent", 120)]
            if any(s.name == "unthrottled_futures" and wl in s.workloads for s in specs):
                depths.append((RUST_ALL_SPEC, ops))
            for spec_name, depth in depths:
                extra = ["--pattern", "concurrent", "--concurrency", str(depth), "--warmup", str(warmup)]
                cmd = None if rust_bin is None else rust_cmd(wl, ops, extra)
                record("rust", spec_name, wl, cmd, "Rust reference not built")
        for spec in specs:
            if wl not in spec.workloads:
                continue
            reset()
            for label in TABLE_CLIENTS:
                if label not in clients or not spec.runs_on(label):
                    continue
                if not pyclients[label].available:
                    continue  # said once under the tables
                cmd = client_cmd(
                    pyclients[label],
                    CLIENT_PY,
                    [*common, *spec.args, "--workload", wl, "--ops", str(ops), "--warmup", str(warmup)],
                )
                if spec.name == "read_pipeline":
                    cmd += ["--read-consume", args.read_consume]
                record(label, spec.name, wl, cmd)

    results = median_runs(results, lambda r: (r["label"], r["spec"], r["workload"]))
    chosen = {s.name for s in specs}

    def doc_rows(doc) -> list[tuple[str, str]]:
        return [(wl, n) for wl, names in doc if wl in workloads for n in names if n in chosen]

    pin = pin_note(args.pin_client)
    heading = (
        f"{ops:,} ops per client run (+{warmup:,} warm-up), prepared statements, "
        f"distinct keys for writes, one-row reads over {args.rows:,} keys; "
        f"single node, {os.cpu_count()} CPUs{pin}; "
        + (
            f"each client run {args.repeat} times in interleaved rounds, the median run (client CPU) shown; "
            if args.repeat > 1
            else ""
        )
        + (
            f"server warmed with {server_warmup:,} Rust writes and reads; "
            if server_warmup > 0
            else "no server warm-up by this runner; "
        )
        + ("table truncated and read rows rewritten before each pattern's runs; " if args.reset else "")
        + f"server pid {server_pid or 'unknown'}; "
        + load_note(load_start)
    )
    sections = []
    for title, doc in (
        ("Document 000: request patterns of the classic driver's Performance Notes (writes)", DOC_000),
        ("Document 001: the same patterns with reads, and the pipeline objects", DOC_001),
    ):
        rows = doc_rows(doc)
        if rows:
            sections.append(f"## {title}\n\n{markdown_table(rows, results)}")
    missing = unavailable_lines(pyclients)
    if missing:
        sections.append(missing)
    body = "\n\n".join(sections)
    print(f"\n{heading}\n\n{body}")

    if not args.no_report:
        rpath = Path(args.report)
        rpath.parent.mkdir(parents=True, exist_ok=True)
        command = "python benchmarks/run_patterns.py " + " ".join(sys.argv[1:] if argv is None else argv)
        rpath.write_text(
            "# Request patterns: classic driver vs turbocql vs Rust\n\n"
            f"{dt.datetime.now():%Y-%m-%d %H:%M}, `{command.strip()}`\n\n{heading}\n\n"
            "Columns: client CPU = user + system of the client process over the timed section "
            "(getrusage); server CPU = the Cassandra process over the same section (/proc), an "
            "upper bound; latency = submit → result (futures), submit → callback (chains), "
            "around the await (asyncio), none for bulk calls; peak RSS = the client process's "
            "whole life (VmHWM).\n\n"
            f"{body}\n"
        )
        print(f"report: {rpath}", file=sys.stderr)

    if args.out is not None:
        meta = run_meta(
            sys.argv[1:] if argv is None else argv,
            load_start,
            server_pid,
            heading,
            pyclients,
            ops=ops,
            warmup=warmup,
            server_warmup_ops=server_warmup,
        )
        write_json(args.out, "patterns", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
