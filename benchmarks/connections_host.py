"""The machine's side of a connections run (``run_connections.py``, ``run_cql_connections.py``):
the server process (``pingpong-server``, ``cql-responder``), whether an interpreter has a
module, the kernel settings set for the runs and put back after, a client run's time limit,
and the system-call sample (a client run twice under ``strace -c -f`` or ``perf stat``).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from benchmarks.common import run_client
from benchmarks.connections_figures import PERF_SYSCALLS, parse_perf_stat, parse_strace_summary, syscalls_per_message

# The kernel settings during the runs (--local-port-range, --max-tw-buckets). The scylla crate
# binds every socket to port 0 before connecting, and the kernel's bind() searches half the
# local port range for a port no socket holds, TIME_WAIT ones included: at 10,000 connections
# Linux's default 32768-60999 is nearly full, more so after the previous run's 10,000 closed
# connections, and each bind() costs about 1 ms of system time (measured: 13 s to fill a
# 10,000-connection pool, stalling its first requests past their 10 s timeout; 0.3 s with the
# wider range). A run's client closes its connections first, so each run leaves N TIME_WAIT
# sockets for 60 s: capping them keeps one run's debris out of the next one's port search.
PORT_RANGE_SYSCTL = "net.ipv4.ip_local_port_range"
TW_BUCKETS_SYSCTL = "net.ipv4.tcp_max_tw_buckets"
# What --tune-sysctls sets for the runs (the committed tables' runs had both): nothing is
# changed without it.
TUNED_PORT_RANGE, TUNED_TW_BUCKETS = "10240-65535", "1024"


class Server:
    """``pingpong-server`` on 127.0.0.1, a free port, pinned to ``cpu``; restarted if it dies.
    (``cql-responder`` too, with its own options in ``extra``: run_cql_connections.py.)"""

    def __init__(self, binary: Path, cpu: str | None, threads: int, extra: tuple[str, ...] = ()) -> None:
        self.binary, self.cpu, self.threads, self.extra = binary, cpu, threads, extra
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.starts = 0
        self.tail: list[str] = []

    def start(self, timeout: float = 20.0) -> None:
        cmd = [str(self.binary), "--listen", "127.0.0.1:0", "--threads", str(self.threads), *self.extra]
        if self.cpu is not None:
            cmd = ["taskset", "-c", self.cpu, *cmd]
        p = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(p.stderr.readline() if p.stderr else ""), daemon=True)
        reader.start()
        reader.join(timeout)
        m = re.search(r"listening on [\d.]+:(\d+)", got[0] if got else "")
        if not m:
            p.kill()
            p.wait()
            raise RuntimeError(f"{self.binary.name} did not start: {(got[0] if got else '').strip() or 'no output'}")
        self.proc, self.port = p, int(m.group(1))
        self.starts += 1
        threading.Thread(target=self._drain, args=(p,), daemon=True).start()

    def _drain(self, p: subprocess.Popen) -> None:
        for line in p.stderr or ():
            self.tail = (self.tail + [line.rstrip()])[-20:]

    def ensure(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                print(f"  {self.binary.name} exited ({self.proc.returncode}); starting it again", file=sys.stderr)
            self.start()

    def nofile(self) -> int | None:
        """The server's soft RLIMIT_NOFILE, from /proc/PID/limits."""
        if self.proc is None:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/limits").read_text().splitlines():
                if line.startswith("Max open files"):
                    return int(line.split()[3])
        except (OSError, ValueError, IndexError):
            pass
        return None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def has_module(python: str, module: str) -> bool:
    try:
        return subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys/" + name.replace(".", "/"))


def _sysctl(name: str) -> str | None:
    try:
        return _sysctl_path(name).read_text().split("\n")[0].replace("\t", " ")
    except OSError:
        return None


def parse_port_range(text: str) -> tuple[int, int] | None:
    """``LO-HI`` as a pair, or None for ``keep``; ValueError otherwise."""
    if text.strip() == "keep":
        return None
    lo, sep, hi = text.partition("-")
    try:
        pair = (int(lo), int(hi))
    except ValueError:
        pair = (0, 0)
    if not sep or not 1024 <= pair[0] < pair[1] <= 65535:
        raise ValueError(f"--local-port-range: LO-HI within 1024-65535, or keep; not {text!r}")
    return pair


def parse_tw_buckets(text: str) -> int | None:
    """A count, or None for ``keep``; ValueError otherwise."""
    if text.strip() == "keep":
        return None
    if not text.strip().isdigit():
        raise ValueError(f"--max-tw-buckets: a count, or keep; not {text!r}")
    return int(text)


def run_sysctl_values(port_range: tuple[int, int] | None, tw_buckets: int | None, current) -> dict[str, str]:
    """The sysctls to set for the runs, given ``current(name)`` (the value now, or None): the
    port range widened to cover ``port_range`` (never narrowed), TIME_WAIT buckets capped at
    ``tw_buckets`` (never raised); what already is so is left out."""
    want: dict[str, str] = {}
    now = current(PORT_RANGE_SYSCTL)
    if port_range is not None and now is not None:
        lo, hi = (int(x) for x in now.split())
        wide = (min(port_range[0], lo), max(port_range[1], hi))
        if wide != (lo, hi):
            want[PORT_RANGE_SYSCTL] = f"{wide[0]} {wide[1]}"
    now = current(TW_BUCKETS_SYSCTL)
    if tw_buckets is not None and now is not None and tw_buckets < int(now):
        want[TW_BUCKETS_SYSCTL] = str(tw_buckets)
    return want


@contextlib.contextmanager
def run_sysctls(port_range: tuple[int, int] | None, tw_buckets: int | None):
    """Sets :func:`run_sysctl_values` for the block and puts the old values back after;
    yields what it did, for the meta: per sysctl ``before`` and ``during``, and ``reason``
    where it could not write one (not root, or a read-only /proc/sys)."""
    done: dict[str, dict] = {}
    try:
        for name, value in run_sysctl_values(port_range, tw_buckets, _sysctl).items():
            done[name] = {"before": _sysctl(name), "during": _sysctl(name)}
            try:
                _sysctl_path(name).write_text(value + "\n")
                done[name]["during"] = value
            except OSError as e:
                done[name]["reason"] = f"not set to {value}: {e.strerror or e}"
        yield done
    finally:
        for name, d in done.items():
            if d["during"] != d["before"]:
                _sysctl_path(name).write_text(d["before"] + "\n")


def run_timeout(n: int, seconds: float, warmup: float) -> float:
    return warmup + seconds + 60 + n / 100


def perf_events() -> list[str]:
    """The tracepoints of :data:`PERF_SYSCALLS` this kernel has, and the total's."""
    try:
        listed = subprocess.run(["perf", "list", "syscalls:sys_enter_*"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    have = set(re.findall(r"syscalls:sys_enter_(\w+)", listed.stdout))
    return ["raw_syscalls:sys_enter", *(f"syscalls:sys_enter_{c}" for c in PERF_SYSCALLS if c in have)]


def syscall_sample(cmd_of, n: int, seconds: float, pin: str | None, tool: str = "strace") -> dict:
    """Two runs under ``strace -c -f`` (or ``perf stat`` with the system calls' tracepoints):
    ``seconds`` and 0 seconds, no warm-up; the calls per message from their difference."""
    counts = []
    messages = 0
    events = perf_events() if tool == "perf" else []
    if tool == "perf" and not events:
        return {"tool": tool, "failed": "perf has no syscalls tracepoints here"}
    with tempfile.TemporaryDirectory(prefix=f"pingpong-{tool}-") as tmp:
        for secs in (seconds, 0.0):
            path = Path(tmp) / f"{secs:g}.txt"
            if tool == "perf":
                wrap = ["perf", "stat", "-x", ",", "-o", str(path), "-e", ",".join(events)]
            else:
                wrap = ["strace", "-c", "-f", "-o", str(path)]
            r = run_client([*wrap, *cmd_of(secs)], pin, 3 * run_timeout(n, secs, 0) + 60)
            if "failed" in r:
                return {"tool": tool, "failed": r["failed"]}
            if secs:
                messages = r.get("messages") or 0
            try:
                text = path.read_text()
            except OSError as e:
                return {"tool": tool, "failed": f"no {tool} summary: {e}"}
            counts.append(parse_perf_stat(text) if tool == "perf" else parse_strace_summary(text))
    per = syscalls_per_message(counts[0], counts[1], messages)
    return {"tool": tool, "messages": messages, "calls": counts[0], "baseline_calls": counts[1], "per_message": per}
