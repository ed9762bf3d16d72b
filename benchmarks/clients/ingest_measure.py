"""What the ingestion client measures (``ingest.py``): a phase's wall time, this process's
user and system CPU and the server's (:class:`Meter`, :func:`phase_result`), both phases
together (:func:`totals`), the failed requests (:class:`Errors`) and the peak RSS.
"""

from __future__ import annotations

import os
import resource
import time


def proc_cpu_s(pid: int | None) -> float | None:
    """utime + stime of another process (the server) in seconds, from /proc/PID/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def peak_rss_mb() -> float | None:
    """``VmHWM`` of this process (not ``ru_maxrss``: it carries the parent's RSS over exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


class Errors:
    """Failed requests, and the first one's message."""

    def __init__(self):
        self.first: str | None = None

    def note(self, exc: BaseException | str) -> None:
        if self.first is None:
            self.first = (exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}")[:300]


class Meter:
    """Wall time, this process's user and system CPU, and the server's CPU, of one phase."""

    def __init__(self, server_pid: int | None):
        self.server_pid = server_pid

    def start(self) -> None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        self.u0, self.s0 = ru.ru_utime, ru.ru_stime
        self.srv0 = proc_cpu_s(self.server_pid)
        self.t0 = time.perf_counter()

    def stop(self, records: int, requests: int, errors: int) -> dict:
        seconds = time.perf_counter() - self.t0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        srv1 = proc_cpu_s(self.server_pid)
        return phase_result(
            records,
            requests,
            errors,
            seconds,
            ru.ru_utime - self.u0,
            ru.ru_stime - self.s0,
            None if self.srv0 is None or srv1 is None else srv1 - self.srv0,
        )


def phase_result(
    records: int, requests: int, errors: int, seconds: float, user_s: float, system_s: float, server_s: float | None
) -> dict:
    """One phase's figures (pure: unit-tested)."""
    cpu = user_s + system_s
    r = {
        "records": records,
        "requests": requests,
        "errors": errors,
        "seconds": round(seconds, 4),
        "records_per_s": round(records / seconds, 1) if seconds > 0 else None,
        "cpu_s": round(cpu, 4),
        "user_s": round(user_s, 4),
        "system_s": round(system_s, 4),
        "cpu_us_per_record": round(cpu / records * 1e6, 2) if records else None,
        "user_share": round(user_s / cpu, 3) if cpu > 0 else None,
        "system_share": round(system_s / cpu, 3) if cpu > 0 else None,
        "cpu_cores": round(cpu / seconds, 3) if seconds > 0 else None,
    }
    if server_s is not None:
        r["server_cpu_s"] = round(server_s, 3)
        r["server_cpu_us_per_record"] = round(server_s / records * 1e6, 2) if records else None
        r["server_cores"] = round(server_s / seconds, 3) if seconds > 0 else None
    return r


def totals(phases: dict) -> dict:
    """Both phases together: records, seconds, records/s, CPU µs per record, shares, cores."""
    ps = list(phases.values())
    records = sum(p["records"] for p in ps)
    seconds = sum(p["seconds"] for p in ps)
    user = sum(p["user_s"] for p in ps)
    system = sum(p["system_s"] for p in ps)
    server = [p.get("server_cpu_s") for p in ps]
    r = phase_result(
        records,
        sum(p["requests"] for p in ps),
        sum(p["errors"] for p in ps),
        seconds,
        user,
        system,
        None if None in server else sum(server),  # type: ignore[arg-type]
    )
    return {k: v for k, v in r.items() if k not in ("records", "requests")} | {"records_total": records}
