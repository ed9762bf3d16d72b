"""Document 002 on this machine: Python's I/O models against the number of TCP connections
(scenario ``connections`` of ``turbocql bench``; no Cassandra involved).

64-byte ping-pong, one message outstanding per connection, a fixed time per run. The runner
starts the echo server itself, ``pingpong-server`` (``benchmarks/pingpong``, a Rust tokio
stand-in for the document's C++ epoll server; built with ``cargo build --release -p
turbocql-pingpong`` when missing or with ``--build``), pinned to CPU 1 (``--pin-server``), and
runs every client pinned to CPU 0 (``--pin-client``: one core, as the document's Python
process), one at a time, each in its own process:

* ``clients/pingpong.py`` with ``--python`` (default: this interpreter): ``asyncio-streams``,
  ``asyncio-protocol``, ``asyncio-sock``, ``selectors``, ``threads``; and ``uvloop-streams``,
  ``uvloop-protocol``, ``uvloop-sock`` if uvloop imports there (else with the acsylla peer's
  venv, which has uvloop);
* ``clients/pingpong.py`` with the gevent peer's venv (``.venvs/gevent``, ``--gevent-python``):
  ``gevent`` (monkey-patched sockets, one greenlet per connection);
* ``pingpong-client`` (a binary): ``tokio``, the limit row (the document's ``cpp_epoll``), one
  current-thread runtime;

for every connection count of ``--connections`` (default 10, 100, 1,000, 10,000; ``--quick``
10, 100, 1,000), ``--seconds`` per run (default 10; ``--quick`` 3) after ``--warmup`` (1 s),
``--repeat`` runs each (default 3; ``--quick`` 1) in interleaved rounds. Connections are spread
over 127.0.0.x source addresses (:func:`source_addresses`, one per 4,000 connections). Both
sides raise ``RLIMIT_NOFILE`` to the hard limit (the server's is recorded in the meta).

System calls per message: for one sample per model at ``--strace-connections`` (1,000), the
client runs under ``strace -c -f`` twice, for ``--strace-seconds`` (2) and for 0 seconds
(connections opened and closed, no window); (calls of the first - calls of the second) /
messages of the first, in total and per system call. strace slows the client many times over,
so these runs' throughput is not reported; only the calls per message. It also stops each
thread at every call, so the ``threads`` model's other threads wait on the GIL meanwhile: its
futex count under strace (about 25 per message) is strace's own. ``--syscall-tool perf`` counts
with ``perf stat`` on the system calls' tracepoints instead (the document used ``perf stat``;
there ``threads`` shows about 0.25 futex per message at 1,000 connections).

Prints a Markdown table in the document's style (:func:`markdown`): one row per (client,
model), per connection count the mean msgs/s (± half the min-max range of the runs, in % of
the mean), the median p50 / p95 round trip in ms and the median share of user time in the
client's CPU time, "FF" where the model could not open or hold the connections (the reasons
under the table), then the system calls per message, with their make-up below. ``--out``
writes the JSON (``common.write_json``: every run and every strace sample).

Example::

    python3 benchmarks/run_connections.py --connections 10,100 --seconds 2 --repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import add_out_argument, fmt_num, run_client, run_meta, write_json  # noqa: E402

CLIENT = HERE / "clients" / "pingpong.py"
BIN_DIR = ROOT / "target" / "release"
SERVER_BIN, CLIENT_BIN = BIN_DIR / "pingpong-server", BIN_DIR / "pingpong-client"
PYTHON_MODELS = (
    "asyncio-streams",
    "asyncio-protocol",
    "asyncio-sock",
    "uvloop-streams",
    "uvloop-protocol",
    "uvloop-sock",
    "selectors",
    "threads",
    "gevent",
)
# (client, model) in table order; --models takes the model names, "rust" for the last row.
ROWS = tuple(("python", m) for m in PYTHON_MODELS) + (("rust", "tokio"),)
MODEL_KEYS = (*PYTHON_MODELS, "rust")
DEFAULT_CONNECTIONS, QUICK_CONNECTIONS = "10,100,1000,10000", "10,100,1000"
DEFAULT_SECONDS, QUICK_SECONDS = 10.0, 3.0
DEFAULT_REPEAT, QUICK_REPEAT = 3, 1
PER_ADDRESS = 4000  # connections per 127.0.0.x source address
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
CLIENT_NAMES = {"python": "Python", "rust": "Rust (limit)"}


def row_key(model: str) -> tuple[str, str]:
    return ("rust", "tokio") if model in ("rust", "tokio") else ("python", model)


# ------------------------------------------------------------------------------------ pure parts


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


def parse_models(text: str) -> list[str]:
    return parse_names(text, MODEL_KEYS, {"tokio": "rust"})


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


def _latency_and_share(a: dict, n: int) -> list[str]:
    share = a.get("user_share")
    return [f"{fmt_ms(a.get('p50_us'))}/{fmt_ms(a.get('p95_us'))}", "" if share is None else f"{100 * share:.0f}"]


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


def markdown(
    results: list[dict],
    counts: list[int],
    seconds: float | None = None,
    warmup: float | None = None,
    repeat: int | None = None,
    pins: tuple[str | None, str | None] = ("0", "1"),
    kernel: dict | None = None,
) -> str:
    """The table in the document's style, then the FF reasons, the system calls' make-up and
    the kernel settings the runs had."""
    bits = ["64-byte ping-pong, one message outstanding per connection", *window_bits(seconds, warmup, repeat)]
    cpu_client, cpu_server = pins
    if cpu_client is not None:
        bits.append(f"clients on CPU {cpu_client}")
    if cpu_server is not None:
        bits.append(f"the Rust echo server on CPU {cpu_server}")
    lines, after, _ = table_lines(
        results, counts, ROWS, CLIENT_NAMES, "user %", "msg", _latency_and_share, lambda c, m: m
    )
    title = "**Connections** (document 002): " + "; ".join(bits)
    note = kernel_note(kernel)
    return "\n".join(
        [
            title + ". FF: the model could not open or hold the connections.",
            "",
            *lines,
            *after,
            *([""] + note if note else []),
        ]
    )


# ------------------------------------------------------------------------------------ the server


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


def ensure_bins(build: bool) -> str | None:
    """Build ``turbocql-pingpong`` (release) when a binary is missing or with ``build``; the
    reason when it cannot be built."""
    if build or not (SERVER_BIN.exists() and CLIENT_BIN.exists()):
        print(
            "building the ping-pong server and client (cargo build --release -p turbocql-pingpong)...", file=sys.stderr
        )
        try:
            r = subprocess.run(
                ["cargo", "build", "--release", "-p", "turbocql-pingpong"],
                cwd=ROOT,
                stdout=sys.stderr,
                stderr=sys.stderr,
            )
        except OSError as e:
            return f"cargo: {e}"
        if r.returncode != 0:
            return f"cargo build failed (status {r.returncode})"
    missing = [p.name for p in (SERVER_BIN, CLIENT_BIN) if not p.exists()]
    return f"missing {', '.join(missing)}" if missing else None


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


# ------------------------------------------------------------------------------------ runs


def client_command(model: str, python: str | None, port: int, n: int, seconds: float, warmup: float) -> list[str]:
    addrs = ",".join(source_addresses(n))
    if model == "rust":
        cmd = [str(CLIENT_BIN), "--connect", f"127.0.0.1:{port}"]
    else:
        cmd = [str(python), str(CLIENT), "--model", model, "--connect", f"127.0.0.1:{port}"]
    return cmd + ["--connections", str(n), "--seconds", f"{seconds:g}", "--warmup", f"{warmup:g}", "--addresses", addrs]


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


def _line(r: dict) -> str:
    if "unavailable" in r:
        return f"not available: {r['unavailable']}"
    if "failed" in r:
        return f"FF: {r['failed']}"
    text = f"{fmt_num(r.get('msgs_per_s'))} msgs/s, p50 {fmt_ms(r.get('p50_us'))} ms, p95 {fmt_ms(r.get('p95_us'))} ms"
    if r.get("user_share") is not None:
        text += f", user {100 * r['user_share']:.0f}%"
    if r.get("errors"):
        text += f", {r['errors']} errors (first: {r.get('first_error')})"
    return text


def add_run_arguments(ap: argparse.ArgumentParser, model_keys, server: str, binaries: str, stem: str) -> None:
    """The options both connections runners take (this one and run_cql_connections.py):
    counts, run length, models, pinning, the server's threads, the build, the system-call
    sample, the kernel settings, the peers' interpreters, a client run's time limit and the
    JSON (``--out``, default name from ``stem``); ``server`` and ``binaries`` name what is
    pinned and built."""
    add_out_argument(ap, stem)
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="per client run, seconds (default: warm-up + seconds + time to open the N connections)",
    )
    ap.add_argument(
        "--connections",
        default=None,
        help=f"connection counts, comma-separated (default {DEFAULT_CONNECTIONS}; --quick {QUICK_CONNECTIONS})",
    )
    ap.add_argument(
        "--seconds", type=float, default=None, help=f"per run (default {DEFAULT_SECONDS:g}; --quick {QUICK_SECONDS:g})"
    )
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before each run's window (default 1)")
    ap.add_argument(
        "--repeat", type=int, default=None, help=f"runs each (default {DEFAULT_REPEAT}; --quick {QUICK_REPEAT})"
    )
    ap.add_argument(
        "--quick", action="store_true", help=f"counts {QUICK_CONNECTIONS}, {QUICK_SECONDS:g} s, {QUICK_REPEAT} run"
    )
    ap.add_argument("--models", default=",".join(model_keys), help=f"of {', '.join(model_keys)} (default all)")
    ap.add_argument("--pin-client", metavar="CPU", default="0", help="taskset -c CPU for every client (default 0)")
    ap.add_argument("--pin-server", metavar="CPU", default="1", help=f"taskset -c CPU for {server} (default 1)")
    ap.add_argument("--no-pin", action="store_true", help="pin neither")
    ap.add_argument("--server-threads", type=int, default=1, help=f"{server}'s worker threads (default 1)")
    ap.add_argument("--build", action="store_true", help=f"cargo build {binaries} first")
    ap.add_argument(
        "--strace-connections", type=int, default=1000, help="the system-call sample's connections (default 1000)"
    )
    ap.add_argument("--strace-seconds", type=float, default=2.0, help="the system-call sample's seconds (default 2)")
    ap.add_argument("--no-strace", action="store_true", help="no system-call sample")
    ap.add_argument(
        "--tune-sysctls",
        action="store_true",
        help=f"for the runs' duration, widen {PORT_RANGE_SYSCTL} to {TUNED_PORT_RANGE} and cap "
        f"{TW_BUCKETS_SYSCTL} at {TUNED_TW_BUCKETS}, both put back after (needs root; the settings of the "
        "committed tables' runs). Without it (or the two options below) the machine's settings are kept, "
        "and each run's pool fill time (pool_fill_s) shows what they cost",
    )
    ap.add_argument(
        "--local-port-range",
        default=None,
        metavar="LO-HI|keep",
        help=f"widen {PORT_RANGE_SYSCTL} to cover LO-HI during the runs, restored after (needs root, else it "
        f"is kept and the meta says why); default: keep it (--tune-sysctls: {TUNED_PORT_RANGE})",
    )
    ap.add_argument(
        "--max-tw-buckets",
        default=None,
        metavar="N|keep",
        help=f"cap {TW_BUCKETS_SYSCTL} (sockets kept in TIME_WAIT) at N during the runs, restored after "
        f"(needs root); default: keep it (--tune-sysctls: {TUNED_TW_BUCKETS})",
    )
    ap.add_argument(
        "--syscall-tool",
        choices=("strace", "perf"),
        default="strace",
        help="count the sample's system calls with strace -c -f (default; it stops the client at every call) "
        "or perf stat on the syscalls tracepoints (barely slows it; needs perf and tracepoint access)",
    )
    peers.add_arguments(ap)


def run_settings(ap: argparse.ArgumentParser, a: argparse.Namespace, parse_models):
    """(counts, models, seconds, repeat, (client CPU, server CPU)) from the options of
    :func:`add_run_arguments`, ``--quick`` filling what was not given; a bad value is
    ``ap.error``; no pinning without taskset."""
    try:
        counts = parse_counts(a.connections or (QUICK_CONNECTIONS if a.quick else DEFAULT_CONNECTIONS))
        models = parse_models(a.models)
        tuned = getattr(a, "tune_sysctls", False)
        a.port_range = parse_port_range(a.local_port_range or (TUNED_PORT_RANGE if tuned else "keep"))
        a.tw_buckets = parse_tw_buckets(a.max_tw_buckets or (TUNED_TW_BUCKETS if tuned else "keep"))
    except ValueError as e:
        ap.error(str(e))
    seconds = a.seconds if a.seconds is not None else (QUICK_SECONDS if a.quick else DEFAULT_SECONDS)
    repeat = a.repeat or (QUICK_REPEAT if a.quick else DEFAULT_REPEAT)
    if seconds <= 0 or repeat <= 0 or a.warmup < 0:
        ap.error("--seconds and --repeat must be positive, --warmup not negative")
    pin_client, pin_server = (None, None) if a.no_pin else (a.pin_client, a.pin_server)
    if (pin_client or pin_server) and not shutil.which("taskset"):
        print("taskset not found: clients and server are not pinned", file=sys.stderr)
        pin_client = pin_server = None
    return counts, models, seconds, repeat, (pin_client, pin_server)


def settings_meta(a: argparse.Namespace, counts, seconds, repeat, models, pins, sysctls_set: dict) -> dict:
    """The meta both runners record of their options (:func:`add_run_arguments`) and of the
    kernel: the run settings, the system-call sample, the sysctls that bear on many
    connections and what :func:`run_sysctls` set."""
    return {
        "connections": counts,
        "seconds": seconds,
        "warmup": a.warmup,
        "repeat": repeat,
        "models": models,
        "pin_client": pins[0],
        "pin_server": pins[1],
        "syscalls": None
        if a.no_strace
        else {"tool": a.syscall_tool, "connections": a.strace_connections, "seconds": a.strace_seconds},
        "sysctl": {
            k: _sysctl(k) for k in (PORT_RANGE_SYSCTL, "net.core.somaxconn", "net.ipv4.tcp_tw_reuse", TW_BUCKETS_SYSCTL)
        },
        "sysctls_set": sysctls_set,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(ap, MODEL_KEYS, "the echo server", "the ping-pong server and client", "connections")
    a = ap.parse_args(argv)
    counts, models, seconds, repeat, (pin_client, pin_server) = run_settings(ap, a, parse_models)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    load_start = os.getloadavg()[0]

    why = ensure_bins(a.build)
    if why:
        log(f"connections: the ping-pong binaries are not available: {why}")
        return 2
    # Interpreters: --python for the stdlib models and uvloop (else the acsylla peer's venv),
    # the gevent peer's venv for gevent.
    python = a.python
    interpreters: dict[str, dict] = {"python": {"python": python}}
    unavailable: dict[str, str] = {}
    uvloop_python: str | None = python
    if any(m.startswith("uvloop") for m in models) and not has_module(python, "uvloop"):
        acs = peers.resolve(
            ["acsylla"],
            turbocql_python=python,
            explicit={"acsylla": a.acsylla_python},
            venvs_dir=a.venvs_dir,
            install=not a.no_install,
        )["acsylla"]
        uvloop_python = acs.python if acs.available else None
        if uvloop_python is None:
            unavailable["uvloop"] = f"uvloop is not installed in {python}, and the acsylla peer: {acs.reason}"
        interpreters["uvloop"] = {"python": uvloop_python, "via": "acsylla peer venv", "reason": acs.reason}
    elif any(m.startswith("uvloop") for m in models):
        interpreters["uvloop"] = {"python": python, "via": "--python"}
    gevent_python: str | None = None
    if "gevent" in models:
        g = peers.from_args(a, ["gevent"])["gevent"]
        gevent_python = g.python if g.available else None
        if not g.available:
            unavailable["gevent"] = g.reason or "not available"
        interpreters["gevent"] = g.to_json()

    def python_of(model: str) -> str | None:
        if model == "rust":
            return None
        if model.startswith("uvloop"):
            return uvloop_python
        return gevent_python if model == "gevent" else python

    def reason_unavailable(model: str) -> str | None:
        if model.startswith("uvloop"):
            return unavailable.get("uvloop")
        return unavailable.get(model)

    with run_sysctls(a.port_range, a.tw_buckets) as sysctls_set:
        server = Server(SERVER_BIN, pin_server, a.server_threads)
        results: list[dict] = []
        try:
            server.start()
            log(
                f"connections: pingpong-server on 127.0.0.1:{server.port} (CPU {pin_server}, RLIMIT_NOFILE "
                f"{server.nofile()}); counts {counts}, {seconds:g} s + {a.warmup:g} s warm-up, {repeat} run(s) each"
            )
            for n in counts:
                for rnd in range(repeat):
                    for model in models:
                        client, mname = row_key(model)
                        base = {"kind": "run", "client": client, "model": mname, "connections": n, "round": rnd + 1}
                        why = reason_unavailable(model)
                        if why:
                            results.append({**base, "unavailable": why})
                            continue
                        server.ensure()
                        cmd = client_command(model, python_of(model), server.port, n, seconds, a.warmup)
                        r = run_client(cmd, pin_client, a.timeout or run_timeout(n, seconds, a.warmup))
                        r = {**base, **r} if "failed" in r else {**r, **base}
                        r["interpreter"] = python_of(model) or str(CLIENT_BIN)
                        results.append(r)
                        log(f"{n:,} connections, round {rnd + 1}/{repeat}: {mname}: {_line(r)}")
            if not a.no_strace and shutil.which(a.syscall_tool):
                n = a.strace_connections
                for model in models:
                    client, mname = row_key(model)
                    base = {"kind": "syscalls", "client": client, "model": mname, "connections": n}
                    why = reason_unavailable(model)
                    if why:
                        results.append({**base, "unavailable": why})
                        continue

                    def command(secs: float, model: str = model) -> list[str]:
                        server.ensure()
                        return client_command(model, python_of(model), server.port, n, secs, 0.0)

                    s = syscall_sample(command, n, a.strace_seconds, pin_client, a.syscall_tool)
                    results.append({**base, "seconds": a.strace_seconds, **s})
                    per = s.get("per_message")
                    log(
                        f"{a.syscall_tool}, {n:,} connections: {mname}: "
                        + (f"{per['total']} calls/msg = {composition(per)}" if per else s.get("failed", "no messages"))
                    )
            elif not a.no_strace:
                log(f"{a.syscall_tool} not found: no system calls per message")
        finally:
            server_nofile = server.nofile()
            server.stop()
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        None,
        f"Connections (document 002): 64-byte ping-pong over {', '.join(f'{n:,}' for n in counts)} connections, "
        f"{seconds:g} s per run after {a.warmup:g} s of warm-up, {repeat} run(s) each, clients on CPU {pin_client}, "
        f"the Rust echo server on CPU {pin_server}; loopback.",
        **settings_meta(a, counts, seconds, repeat, models, (pin_client, pin_server), sysctls_set),
        server={
            "binary": str(SERVER_BIN),
            "threads": a.server_threads,
            "rlimit_nofile": server_nofile,
            "starts": server.starts,
        },
        client_binary=str(CLIENT_BIN),
        interpreters=interpreters,
        unavailable=unavailable,
        per_address=PER_ADDRESS,
    )
    kernel = {"sysctl": meta.get("sysctl"), "sysctls_set": meta.get("sysctls_set")}
    print(markdown(results, counts, seconds, a.warmup, repeat, (pin_client, pin_server), kernel))
    if a.out is not None:
        write_json(a.out, "connections", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
