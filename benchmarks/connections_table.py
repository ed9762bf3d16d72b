"""The Markdown of both connections tables (``run_connections.py``, ``run_cql_connections.py``):
rates and latencies formatted, one row's cells per connection count (FF, n/a, spliced reruns),
the table's body with its notes and the system calls' make-up, the title's words on the runs,
and the note on the kernel settings the runs had.
"""

from __future__ import annotations

from benchmarks.connections_figures import aggregate
from benchmarks.connections_host import PORT_RANGE_SYSCTL, TW_BUCKETS_SYSCTL


def fmt_rate(x: float) -> str:
    if x >= 100_000:
        return f"{x / 1000:,.0f}k"
    if x >= 1000:
        return f"{x / 1000:.1f}k"
    return f"{x:,.0f}"


def fmt_ms(us: float | None) -> str:
    if us is None:
        return "?"
    ms = us / 1000
    if ms < 1:
        return f"{ms:.3f}"
    if ms < 10:
        return f"{ms:.2f}"
    if ms < 100:
        return f"{ms:.1f}"
    return f"{ms:,.0f}"


def composition(per: dict | None) -> str:
    """``1.00 sendto + 1.00 recvfrom + 0.01 epoll_wait``, the document's notation."""
    if not per:
        return ""
    return " + ".join(f"{v:.2f} {k}" if v >= 0.01 else f"{v:.3f} {k}" for k, v in per["calls"].items())


def count_cells(a: dict | None, name: str, n: int, notes: list[str], details) -> list[str]:
    """The three cells of one row at ``n`` connections, from its aggregate ``a``: empty when
    not run, "n/a" or "FF" (the reason added to ``notes``), else the rate (± the runs'
    spread, failed runs, errors) and the two cells ``details(a, n)`` gives. Both
    connections tables use it."""
    if a is None:
        return ["", "", ""]
    if "unavailable" in a:
        notes.append(f"n/a: {name}: {a['unavailable']}")
        return ["n/a", "", ""]
    if "failed" in a:
        notes.append(f"FF: {name}, {n:,} connections: {a['failed']}")
        return ["FF", "", ""]
    rate = fmt_rate(a["msgs_per_s"])
    if a.get("spliced"):
        rate += f" {SPLICED_MARK}"
    if a["ok_runs"] > 1:
        rate += f" ±{a['spread_pct']:.0f}%"
    if a["failed_runs"]:
        rate += f" ({a['failed_runs']} of {a['runs']} FF)"
        notes.append(f"FF in {a['failed_runs']} run(s): {name}, {n:,} connections: {a['first_failure']}")
    if a["errors"]:
        rate += f" ({a['errors']:,} errors)"
    return [rate, *details(a, n)]


SPLICED_MARK = "†"
SPLICED_NOTE = (
    f"{SPLICED_MARK}: measured in a rerun spliced into the day's run (`benchmarks/splice.py`), not in the "
    "run of the other cells; the JSON's `meta.reruns` says when and why"
)

# The tables' unit of work, short (headers) and in words (notes).
UNIT_WORDS = {"msg": "message", "req": "request"}


def window_bits(seconds: float | None, warmup: float | None, repeat: int | None) -> list[str]:
    """The table title's words on the runs' length and count, shared by both runners."""
    bits = []
    if seconds is not None:
        bits.append(f"{seconds:g} s per run" + (f" after {warmup:g} s of warm-up" if warmup else ""))
    if repeat:
        bits.append(f"{repeat} run{'s' if repeat != 1 else ''} each (mean msgs/s ± half the min–max range)")
    return bits


def table_lines(
    results: list[dict], counts: list[int], order, names: dict, third: str, unit: str, details, name_of
) -> tuple:
    """The body both runners' tables share: the header (per count msgs/s, p50/p95 ms and
    ``third``; the system calls per ``unit`` when sampled), a line per (client, model) in
    ``order`` (then any other measured) headed by ``names[client]``, each count's cells by :func:`count_cells` with
    ``details``; after it, the FF notes (``name_of(client, model)`` names a row in them) and
    the system calls' make-up. (the table's lines, the lines after it, the aggregated runs by
    (client, model, count))."""
    agg = {(a["client"], a["model"], a["connections"]): a for a in aggregate(results)}
    sys_rows = {(r["client"], r["model"]): r for r in results if r.get("kind") == "syscalls"}
    rows = [k for k in order if any((*k, n) in agg for n in counts) or k in sys_rows]
    rows += sorted({(c, m) for c, m, _ in agg} - set(order))
    strace_n = next((r.get("connections") for r in sys_rows.values()), None)
    head = ["client", "model"]
    for n in counts:
        head += [f"{n:,}: msgs/s", f"{n:,}: p50/p95 ms", f"{n:,}: {third}"]
    if sys_rows:
        head.append(f"syscalls/{unit} ({strace_n:,} conn.)" if strace_n else f"syscalls/{unit}")
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    notes: list[str] = []
    for client, model in rows:
        cells = [names.get(client, client), model]
        for n in counts:
            cells += count_cells(agg.get((client, model, n)), name_of(client, model), n, notes, details)
        if sys_rows:
            s = sys_rows.get((client, model))
            per = (s or {}).get("per_message")
            cells.append("" if s is None else f"{per['total']:.2f}" if per else "FF" if s.get("failed") else "n/a")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if any(a.get("spliced") for a in agg.values()):
        notes.append(SPLICED_NOTE)
    after = [""] + [f"* {n}" for n in dict.fromkeys(notes)] if notes else []
    made = [(name_of(c, m), s["per_message"]) for (c, m), s in sys_rows.items() if s.get("per_message")]
    tool = next((s.get("tool") for s in sys_rows.values() if s.get("tool")), "strace")
    if made:
        how = "`strace -c -f`" if tool == "strace" else "`perf stat` on the syscalls tracepoints"
        after += [
            "",
            f"System calls per {UNIT_WORDS.get(unit, unit)} ({how}, {strace_n:,} connections; the calls "
            "of a 0-second run, which opens and closes the connections, subtracted):",
            "",
        ]
        after += [f"* {name} = {composition(per)}" for name, per in made]
        if tool == "strace" and any(m == "threads" for (_, m), s in sys_rows.items() if s.get("per_message")):
            after.append(
                "* (strace stops each thread at every system call, so the others wait on the GIL: the "
                "threads model's futex calls are mostly strace's own; `--syscall-tool perf` counts without it)"
            )
    for (c, m), s in sys_rows.items():
        if not s.get("per_message"):
            why = s.get("failed") or s.get("unavailable") or f"no {UNIT_WORDS.get(unit, unit)}s"
            after.append(f"* {name_of(c, m)}: no system-call figure ({why})")
    return lines, after, agg


def kernel_note(kernel: dict | None) -> list[str]:
    """The kernel settings a run had (``kernel``: the meta's ``sysctl`` and ``sysctls_set``):
    those ``--tune-sysctls`` changed for it, else the machine's own; nothing when unknown."""
    if not kernel:
        return []
    sysctl, done = kernel.get("sysctl") or {}, kernel.get("sysctls_set") or {}
    changed = {k: v for k, v in done.items() if v.get("during") != v.get("before")}
    if changed:
        how = ", ".join(f"`{k}` {v['before']} → {v['during']}" for k, v in changed.items())
        return [f"Kernel settings changed for the runs (`--tune-sysctls`, put back after): {how}."]
    return [
        f"Kernel settings as the machine had them (`{PORT_RANGE_SYSCTL}` {sysctl.get(PORT_RANGE_SYSCTL)}, "
        f"`{TW_BUCKETS_SYSCTL}` {sysctl.get(TW_BUCKETS_SYSCTL)}); "
        "`--tune-sysctls` widens the first and caps the second."
    ]
