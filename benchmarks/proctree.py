"""A process tree's CPU time and memory, read from ``/proc``: the Spark benchmark's clients
are a driver, its JVM and the JVM's Python workers, and their CPU is the whole tree's
(run_spark.py samples it at the start and end of each timed phase)."""

from __future__ import annotations

import os


def parse_stat(text: str) -> tuple[int, int, int]:
    """``(ppid, own ticks, reaped children's ticks)`` from a ``/proc/PID/stat`` line: utime +
    stime, and cutime + cstime. The command (field 2) may hold spaces and parentheses: the
    fields are counted from its last ``)``."""
    rest = text[text.rindex(")") + 2 :].split()
    # rest[0] is field 3 (state): field n is rest[n - 3].
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def process_table(proc: str = "/proc") -> dict[int, tuple[int, int, int]]:
    """Every process's :func:`parse_stat` figures, by pid (processes gone meanwhile skipped)."""
    out = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        text = _read(f"{proc}/{name}/stat")
        if text:
            try:
                out[int(name)] = parse_stat(text)
            except (ValueError, IndexError):
                continue
    return out


def descendants(root: int, table: dict[int, tuple[int, int, int]]) -> list[int]:
    """``root`` and every process below it (by parent pid), root first."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root] if root in table else []
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(sorted(children.get(pid, ())))
    return out


def tree_cpu_ticks(root: int, proc: str = "/proc") -> tuple[int, int]:
    """CPU ticks of ``root``'s process tree and how many processes it has now.

    Each live process counts its own user + system time and that of the children it has
    reaped (``cutime`` + ``cstime``), so a worker that exits and is waited for between two
    samples keeps its time in the total (in its parent's figures); one reaped by a process
    outside the tree (orphaned) would be lost, which Spark's daemons and workers are not."""
    table = process_table(proc)
    pids = descendants(root, table)
    return sum(table[p][1] + table[p][2] for p in pids), len(pids)


def process_ticks(pid: int, proc: str = "/proc") -> int | None:
    """One process's own user + system ticks (all its threads), or None."""
    text = _read(f"{proc}/{pid}/stat")
    if not text:
        return None
    _, own, _ = parse_stat(text)
    return own


def tree_memory_kb(root: int, proc: str = "/proc") -> int:
    """The memory of ``root``'s process tree now, kB: the sum of each process's proportional
    set size (``Pss`` of ``/proc/PID/smaps_rollup``: a page shared by n processes, e.g. by
    forked Python workers, counts 1/n in each), or its ``VmRSS`` where that file is missing."""
    total = 0
    for pid in descendants(root, process_table(proc)):
        got = None
        for name, key in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
            for line in (_read(f"{proc}/{pid}/{name}") or "").splitlines():
                if line.startswith(key):
                    got = int(line.split()[1])
                    break
            if got is not None:
                break
        total += got or 0
    return total


def tree_commands(root: int, proc: str = "/proc") -> dict[str, int]:
    """How many processes of each command name (``/proc/PID/stat``'s field 2) the tree has."""
    out: dict[str, int] = {}
    for pid in descendants(root, process_table(proc)):
        text = _read(f"{proc}/{pid}/stat") or ""
        if ")" in text:
            name = text[text.index("(") + 1 : text.rindex(")")]
            out[name] = out.get(name, 0) + 1
    return out


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
