"""The figures of a connections run (``run_connections.py``, ``run_cql_connections.py``):
the connection counts and model names of the options, the 127.0.0.x source addresses, the
repeated runs aggregated, and the system calls per message from ``strace -c`` or ``perf
stat`` counts. Pure functions: no process, no file.
"""

from __future__ import annotations

import re
import statistics

PER_ADDRESS = 4000  # connections per 127.0.0.x source address


def parse_counts(text: str) -> list[int]:
    counts = []
    for x in (x.strip().replace("_", "") for x in text.split(",")):
        if not x:
            continue
        n = int(x[:-1]) * 1000 if x.lower().endswith("k") else int(x)
        if n <= 0:
            raise ValueError(f"connection counts must be positive, not {x!r}")
        if n not in counts:
            counts.append(n)
    if not counts:
        raise ValueError(f"no connection count in {text!r}")
    return counts


def parse_names(text: str, known, aliases: dict | None = None) -> list[str]:
    """``--models``: comma-separated names of ``known`` (or ``aliases`` of them), in order,
    each once; ValueError for an unknown name or none."""
    out = []
    for m in (m.strip() for m in text.split(",")):
        if not m:
            continue
        m = (aliases or {}).get(m, m)
        if m not in known:
            raise ValueError(f"unknown model {m!r} (known: {', '.join(known)})")
        if m not in out:
            out.append(m)
    if not out:
        raise ValueError("no model")
    return out


def source_addresses(connections: int, per_address: int = PER_ADDRESS) -> list[str]:
    """127.0.0.1, 127.0.0.2, ...: one per ``per_address`` connections (at most 254). The
    ephemeral port range (32768-60999 here) holds about 28,000 ports per source address."""
    k = min(254, max(1, -(-connections // per_address)))
    return [f"127.0.0.{i}" for i in range(1, k + 1)]


def _ok(r: dict) -> bool:
    return "failed" not in r and "unavailable" not in r and r.get("msgs_per_s") is not None


def aggregate(results: list[dict]) -> list[dict]:
    """The repeated runs of each (client, model, connections), in first-seen order: mean,
    min and max msgs/s, the spread (half the min-max range in % of the mean), the medians of
    p50, p95, user share and cpu cores, the errors summed; a key whose runs all failed keeps
    its first failure (``failed`` or ``unavailable``) and the run count."""
    groups: dict[tuple, list[dict]] = {}
    for r in results:
        if r.get("kind", "run") != "run":
            continue
        groups.setdefault((r["client"], r["model"], r["connections"]), []).append(r)
    out = []
    for (client, model, n), runs in groups.items():
        base = {"client": client, "model": model, "connections": n, "runs": len(runs)}
        if any(r.get("spliced") for r in runs):
            base["spliced"] = True  # from a rerun spliced into the day's run: the table marks it
        ok = [r for r in runs if _ok(r)]
        if not ok:
            bad = runs[0]
            key = "unavailable" if "unavailable" in bad else "failed"
            out.append({**base, key: bad.get(key) or "no figures"})
            continue
        rates = [r["msgs_per_s"] for r in ok]
        mean = statistics.fmean(rates)

        def med(name: str, ok=ok):
            xs = [r[name] for r in ok if r.get(name) is not None]
            return statistics.median(xs) if xs else None

        out.append(
            {
                **base,
                "ok_runs": len(ok),
                "failed_runs": len(runs) - len(ok),
                "first_failure": next((r.get("failed") for r in runs if not _ok(r)), None),
                "msgs_per_s": mean,
                "msgs_per_s_min": min(rates),
                "msgs_per_s_max": max(rates),
                "spread_pct": 100 * (max(rates) - min(rates)) / 2 / mean if mean > 0 else 0.0,
                "p50_us": med("p50_us"),
                "p95_us": med("p95_us"),
                "user_share": med("user_share"),
                "cpu_cores": med("cpu_cores"),
                "errors": sum(r.get("errors") or 0 for r in ok),
            }
        )
    return out


def parse_strace_summary(text: str) -> dict[str, int]:
    """Calls per system call of an ``strace -c`` summary (``-o FILE``), with ``total``.

    The columns (``% time, seconds, usecs/call, calls, errors, syscall``) are cut where the
    dashes of the rule under the header are: numbers are right-aligned in them, and a blank
    cell (no errors; no usecs/call on some versions' total line) does not shift the others."""
    spans: list[tuple[int, int]] | None = None
    calls: dict[str, int] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("---"):
            if spans is None:
                spans = [m.span() for m in re.finditer(r"-+", line)]
            continue
        if spans is None or len(spans) < 6:
            continue
        name = line[spans[5][0] :].strip()
        cell = line[spans[3][0] : spans[3][1]].strip()
        if name and cell.isdigit():
            calls[name] = calls.get(name, 0) + int(cell)
    if calls and "total" not in calls:
        calls["total"] = sum(calls.values())
    return calls


# perf's counting tracepoints (--syscall-tool perf): the calls the models make per message, and
# raw_syscalls:sys_enter for the total (those missing on a kernel are left out).
PERF_SYSCALLS = (
    "read",
    "write",
    "recvfrom",
    "sendto",
    "recvmsg",
    "sendmsg",
    "readv",
    "writev",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_ctl",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "io_uring_enter",
    "futex",
    "sched_yield",
    "mmap",
    "munmap",
    "mremap",
    "brk",
    "madvise",
    "ioctl",
    "fcntl",
    "getsockopt",
    "setsockopt",
    "getpid",
    "clock_gettime",
)


def parse_perf_stat(text: str) -> dict[str, int]:
    """Calls per system call of ``perf stat -x , -e syscalls:sys_enter_X,...`` (CSV: count,
    unit, event, ...), ``raw_syscalls:sys_enter`` as ``total``; uncounted events left out."""
    calls: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or not parts[0].strip().isdigit():
            continue
        event = parts[2].strip()
        if event == "raw_syscalls:sys_enter":
            calls["total"] = int(parts[0])
        elif event.startswith("syscalls:sys_enter_"):
            calls[event[len("syscalls:sys_enter_") :]] = int(parts[0])
    return calls


def syscalls_per_message(run: dict[str, int], base: dict[str, int], messages: int) -> dict | None:
    """(calls of the timed run - calls of the 0-second run) / messages: in total and per
    system call (those at 0.001 or more per message, largest first)."""
    if messages <= 0 or not run:
        return None
    per = {}
    for name, n in run.items():
        if name == "total":
            continue
        d = (n - base.get(name, 0)) / messages
        if d >= 0.001:
            per[name] = round(d, 3)
    total = (run.get("total", sum(run.values())) - base.get("total", 0)) / messages
    return {"total": round(total, 2), "calls": dict(sorted(per.items(), key=lambda kv: (-kv[1], kv[0])))}
