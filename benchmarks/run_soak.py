"""Row 14 of the faults matrix (issue 15): a soak of turbocql under mixed load with a node fault every few minutes.

What it measures, over ``--minutes`` (default 30) on the local 3-node cluster (127.0.0.11-13,
``turbocql localdb cluster``; dc1: node1, node2, dc2: node3; keyspace replicated dc1: 2, dc2: 1):

* acknowledged writes lost: every write the driver acknowledged (QUORUM) is read back at QUORUM
  at the end; each one not found is lost (must be 0);
* requests never resolved: at the end the script waits, at most ``--request-timeout`` + 30 s, for
  every request it started; the ones still open are counted (must be 0), and so are requests
  that resolved later than their timeout + 2 s (``late``);
* reads of an acknowledged key that found no row (QUORUM reads after QUORUM writes: must be 0);
* errors by class and latency per window: each fault's window (from its injection to the node's
  return, plus ``--grace`` s) and the time outside faults, by the time each request was sent;
* the process's RSS and the ops/s completed, every 5 s, and when the driver saw each node go
  down and come back (a ``HostStateListener``).

The load, all through one turbocql session (``ConstantReconnectionPolicy(1 s)``, request timeout
``--request-timeout`` s): ``--rate`` requests/s (default 200) through ``execute_async``, open loop,
alternately an idempotent prepared QUORUM write of a new key and a QUORUM read of a key whose write
was already acknowledged; and once a minute (30 s past each minute) an ``execute_concurrent_with_args``
batch of ``--batch`` writes of new keys (their acknowledged keys are checked at the end too) and an
asyncio reader (``turbocql.aio.Session`` on a fresh event loop: ``--aio-reads`` reads of
acknowledged keys, 50 at a time).

The faults, every ``--fault-every`` minutes (default 4; the first at that minute), cycling through
(``--faults``, default ``kill,freeze,stop``): ``kill``: kill -9 of node2, ``--down-s`` s (10) down,
restart; ``freeze``: SIGSTOP of node2 for ``--freeze-s`` s (20), then SIGCONT; ``stop``: clean stop
(SIGTERM) of node3, ``--down-s`` s down, restart. A fault starts only once the one before is
over; the load runs until ``--minutes`` have passed and no fault is under way. Whatever happens
(an exception, Ctrl-C, SIGTERM), the nodes are restored before the script exits, and it exits
only once all three answer CQL.

The script's own bookkeeping stays bounded apart from one byte per acknowledged-write flag (about
0.35 MB over 30 minutes at 200 requests/s), so RSS growth is the driver's.

Run (the cluster must be running, every node UP; the default run takes about 32 minutes)::

    turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11     # if it is not running
    .venv/bin/python benchmarks/run_soak.py                            # 30 minutes, a fault every 4
    .venv/bin/python benchmarks/run_soak.py --minutes 3 --fault-every 1   # a smoke test

Writes benchmarks/results/soak-<date>.json, .md and .png (RSS in MiB and ops/s over time, fault
windows shaded, each node's return dashed; ``--out PATH``: the JSON's path, the others beside it) and, when
``$TURBOCQL_RELIABILITY_OUT`` names a file, one record in the reliability report's format (row "14").
Exit status 1 if a write was lost, a request never resolved or a read missed an acknowledged row.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import logging
import math
import os
import platform
import random
import signal
import sys
import threading
import time
import uuid
from array import array
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package

FIRST_ADDRESS = "127.0.0.11"
TABLE = "t"
FAULTS = ("kill", "freeze", "stop")
FAULT_NODE = {"kill": 2, "freeze": 2, "stop": 3}
FAULT_TEXT = {
    "kill": "kill -9 of node2 (dc1), restarted after {down:g} s",
    "freeze": "SIGSTOP of node2 (dc1) for {freeze:g} s, then SIGCONT",
    "stop": "clean stop (SIGTERM) of node3 (dc2), restarted after {down:g} s",
}
SAMPLE_S = 5.0
RING = 4096  # recently acknowledged writes the reads pick from
LATE_S = 2.0  # a request resolved later than its timeout + this is "late"
DRAIN_MARGIN_S = 30.0
NO_FAULT = 0

log = logging.getLogger("run_soak")


def rss_mb() -> float:
    """This process's resident set size now, in MiB (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0)


def peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Histogram:
    """Latencies in log buckets (5% wide, from 0.1 ms): bounded memory for any count."""

    BASE_MS = 0.1
    GROWTH = math.log(1.05)

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.max_ms = 0.0

    def add(self, seconds: float) -> None:
        ms = seconds * 1000
        self.max_ms = max(self.max_ms, ms)
        self.counts[0 if ms <= self.BASE_MS else int(math.log(ms / self.BASE_MS) / self.GROWTH) + 1] += 1

    def percentile(self, p: float) -> float | None:
        total = sum(self.counts.values())
        if not total:
            return None
        rank, seen = math.ceil(p / 100 * total), 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                return round(min(self.BASE_MS * math.exp(b * self.GROWTH), self.max_ms), 2)
        return round(self.max_ms, 2)

    def summary(self) -> dict:
        return {"p50": self.percentile(50), "p99": self.percentile(99), "max": round(self.max_ms, 2)}


class Soak:
    """The load's state: requests in flight (bounded), acknowledged-write flags, the ring of
    recent acknowledged writes, per-window outcomes and latencies, and running totals."""

    def __init__(self, session, insert, select, run_id: str, timeout: float):
        self.session, self.insert, self.select = session, insert, select
        self.run_id, self.timeout = run_id, timeout
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.pending: dict[int, tuple[float, int, int]] = {}  # request -> (sent, window, write no. or -1)
        self.acked = bytearray()  # per steady write: 1 once acknowledged
        self.ring = array("q", [-1] * RING)
        self.ring_pos = 0
        self.window = NO_FAULT  # the fault window requests are sent in now
        self.outcomes: dict[int, Counter] = {}  # window -> outcome (ok / error class) -> count
        self.latency: dict[int, Histogram] = {}
        self.totals: Counter = Counter()  # requests, succeeded, failed, late, read_missing
        self.stop = threading.Event()
        self.rng = random.Random(14)

    def key(self, w: int) -> str:
        return f"{self.run_id}-w{w}"

    def now(self) -> float:
        return time.monotonic() - self.t0

    def note(self, window: int, outcome: str, latency: float | None = None) -> None:
        """One request's outcome (under the lock)."""
        self.outcomes.setdefault(window, Counter())[outcome] += 1
        if latency is not None:
            self.latency.setdefault(window, Histogram()).add(latency)
        self.totals["succeeded" if outcome == "ok" else "failed"] += 1
        if outcome == "ReadMissing":
            self.totals["read_missing"] += 1

    def _end(self, i: int, error: BaseException | None, found: bool = True) -> None:
        now = time.monotonic()
        with self.lock:
            sent, window, w = self.pending.pop(i)
            lat = now - sent
            if lat > self.timeout + LATE_S:
                self.totals["late"] += 1
            if error is not None:
                self.note(window, type(error).__name__)
            elif not found:
                self.note(window, "ReadMissing")
            else:
                self.note(window, "ok", lat)
                if w >= 0:
                    self.acked[w] = 1
                    self.ring[self.ring_pos % RING] = w
                    self.ring_pos += 1

    def _read_done(self, rows, i):
        self._end(i, None, found=bool(rows))

    def _write_done(self, _rows, i):
        self._end(i, None)

    def _failed(self, exc, i):
        self._end(i, exc)

    def recent_acked(self) -> int:
        """An acknowledged write's number (-1 if none yet)."""
        with self.lock:
            n = min(self.ring_pos, RING)
            return self.ring[self.rng.randrange(n)] if n else -1

    def steady_load(self, rate: float) -> None:
        """``rate`` requests/s until ``stop``: writes of new keys and reads of acknowledged keys."""
        session, insert, select, timeout = self.session, self.insert, self.select, self.timeout
        step, t0, i, w_next = 1.0 / rate, time.monotonic(), 0, 0
        while not self.stop.is_set():
            delay = t0 + i * step - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            w = -1
            if i % 2 == 0:
                w, w_next = w_next, w_next + 1
                self.acked.append(0)
                params: tuple = (self.key(w), i)
                stmt, ok = insert, self._write_done
            else:
                r = self.recent_acked()
                params = (self.key(r if r >= 0 else 0),)
                stmt, ok = select, (self._read_done if r >= 0 else self._write_done)
            with self.lock:
                self.pending[i] = (time.monotonic(), self.window, w)
                self.totals["requests"] += 1
            try:
                f = session.execute_async(stmt, params, timeout=timeout)
            except Exception as e:  # noqa: BLE001 (refused at send: counted like any error)
                self._failed(e, i)
            else:
                f.add_callbacks(ok, self._failed, callback_args=(i,), errback_args=(i,))
            i += 1

    def wait_drained(self, bound: float) -> int:
        """Waits (at most ``bound`` s) for every request in flight; returns how many are left."""
        deadline = time.monotonic() + bound
        while True:
            with self.lock:
                left = len(self.pending)
            if left == 0 or time.monotonic() >= deadline:
                return left
            time.sleep(0.05)


class Events:
    """A HostStateListener's record: (seconds since the start, address, "up"/"down")."""

    def __init__(self, soak: Soak):
        from turbocql.policies import HostStateListener

        outer = self
        self.seen: list[tuple[float, str, str]] = []

        class Listener(HostStateListener):
            def on_up(self, host):
                outer.seen.append((soak.now(), host.address, "up"))

            def on_down(self, host):
                outer.seen.append((soak.now(), host.address, "down"))

        self.listener = Listener()

    def first(self, address: str, what: str, after: float) -> float | None:
        return next((t for t, a, w in list(self.seen) if a == address and w == what and t >= after), None)


def sampler(soak: Soak, samples: list[dict]) -> None:
    """Every SAMPLE_S s: RSS (MiB), and the successes and errors per second since the last."""
    last = Counter(soak.totals)
    last_t = soak.now()
    while not soak.stop.wait(SAMPLE_S - (soak.now() % SAMPLE_S)):
        t = soak.now()
        with soak.lock:
            now = Counter(soak.totals)
        span = max(t - last_t, 1e-6)
        samples.append(
            {
                "t_s": round(t, 2),
                "rss_mb": round(rss_mb(), 2),
                "ops_per_s": round((now["succeeded"] - last["succeeded"]) / span, 1),
                "errors_per_s": round((now["failed"] - last["failed"]) / span, 1),
                "in_flight": len(soak.pending),
            }
        )
        last, last_t = now, t


def minutely(soak: Soak, aio_session, batch: int, aio_reads: int, runs: list[dict]) -> None:
    """30 s past each minute: an execute_concurrent_with_args batch of writes of new keys, then
    an asyncio reader of acknowledged keys on a fresh event loop."""
    from turbocql.concurrent import execute_concurrent_with_args

    minute = 0
    while not soak.stop.wait(max(0.0, 30 + 60 * minute - soak.now())):
        entry: dict = {"minute": minute, "at_s": round(soak.now(), 1), "window": soak.window}
        runs.append(entry)
        keys = [f"{soak.run_id}-c{minute}-{j}" for j in range(batch)]
        t = time.monotonic()
        entry["batch"] = {"state": "running"}
        try:
            results = execute_concurrent_with_args(
                soak.session,
                soak.insert,
                [(k, j) for j, k in enumerate(keys)],
                concurrency=50,
                raise_on_first_error=False,
            )
        except Exception as e:  # noqa: BLE001 (execute_concurrent itself should not raise: reported)
            entry["batch"] = {"writes": batch, "raised": f"{type(e).__name__}: {e}"}
        else:
            acked = bytearray(batch)
            errors: Counter = Counter()
            for j, (success, value) in enumerate(results):
                if success:
                    acked[j] = 1
                else:
                    errors[type(value).__name__] += 1
            entry["batch"] = {
                "writes": batch,
                "acked": sum(acked),
                "failed": dict(errors),
                "seconds": round(time.monotonic() - t, 2),
                "_acked": acked,
            }
            with soak.lock:
                for name, n in errors.items():
                    soak.outcomes.setdefault(entry["window"], Counter())["batch " + name] += n
        entry["aio"] = {"state": "running"}
        try:
            entry["aio"] = asyncio.run(aio_reader(soak, aio_session, aio_reads))
        except Exception as e:  # noqa: BLE001 (reported)
            entry["aio"] = {"raised": f"{type(e).__name__}: {e}"}
        minute += 1


async def aio_reader(soak: Soak, aio_session, reads: int) -> dict:
    """``reads`` reads of acknowledged keys, 50 at a time; each awaited at most timeout + 10 s."""
    t = time.monotonic()
    outcomes: Counter = Counter()
    sem = asyncio.Semaphore(50)

    async def one(w: int) -> None:
        async with sem:
            try:
                rs = await asyncio.wait_for(
                    aio_session.execute(soak.select, (soak.key(w),), timeout=soak.timeout), soak.timeout + 10
                )
                outcomes["ok" if rs.one() is not None else "ReadMissing"] += 1
            except TimeoutError:
                outcomes["NeverResolved"] += 1
            except Exception as e:  # noqa: BLE001 (counted by class)
                outcomes[type(e).__name__] += 1

    picks = [soak.recent_acked() for _ in range(reads)]
    await asyncio.gather(*(one(w) for w in picks if w >= 0))
    return {"reads": sum(outcomes.values()), "outcomes": dict(outcomes), "seconds": round(time.monotonic() - t, 2)}


class Faults:
    """Injects the faults and always restores: every node back and answering CQL."""

    def __init__(self, cluster, args, soak: Soak, events: Events):
        self.cluster, self.args, self.soak, self.events = cluster, args, soak, events
        self.done: list[dict] = []
        self.frozen_pid: int | None = None
        self.down_node: int | None = None

    def inject(self, kind: str) -> None:
        soak, args, cluster = self.soak, self.args, self.cluster
        node = FAULT_NODE[kind]
        address = cluster.node(node).address
        window = len(self.done) + 1
        entry: dict = {"window": window, "kind": kind, "node": f"node{node}", "address": address}
        entry["injected"] = FAULT_TEXT[kind].format(down=args.down_s, freeze=args.freeze_s)
        self.done.append(entry)
        print(f"[{soak.now():7.1f} s] fault {window}: {entry['injected']}", file=sys.stderr, flush=True)
        soak.window = window
        entry["at_s"] = round(soak.now(), 2)
        if kind == "freeze":
            pid = cluster.refresh().node(node).pid
            if pid is None:
                raise RuntimeError(f"node{node} has no pid")
            self.frozen_pid = pid
            os.kill(pid, signal.SIGSTOP)
            soak.stop.wait(args.freeze_s)
            self.restore()
        else:
            self.down_node = node
            if kind == "kill":
                cluster.kill_node(node)
            else:
                cluster.stop_node(node)
            entry["down_s"] = round(soak.now(), 2)
            soak.stop.wait(args.down_s)
            self.restore()
        entry["restored_s"] = round(soak.now(), 2)
        print(f"[{soak.now():7.1f} s] fault {window}: restored", file=sys.stderr, flush=True)
        soak.stop.wait(args.grace)
        entry["window_end_s"] = round(soak.now(), 2)
        soak.window = NO_FAULT
        # The driver's view (a frozen node is put last in query plans, not called down).
        seen_down = self.events.first(address, "down", entry["at_s"])
        seen_up = self.events.first(address, "up", entry["at_s"])
        entry["driver_saw_down_after_s"] = None if seen_down is None else round(seen_down - entry["at_s"], 2)
        entry["driver_saw_up_after_restore_s"] = None if seen_up is None else round(seen_up - entry["restored_s"], 2)

    def restore(self) -> None:
        """SIGCONT the frozen node, start the stopped one; wait until it answers CQL."""
        if self.frozen_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.frozen_pid, signal.SIGCONT)
            self.frozen_pid = None
        if self.down_node is not None:
            self.cluster.start_node(self.down_node, timeout=300)
            self.down_node = None

    def ensure_whole(self) -> bool:
        """Every node UP (answering CQL): thaw and start what is not; True if all are."""
        with contextlib.suppress(Exception):
            self.restore()
        ok = True
        for k in range(1, len(self.cluster.nodes) + 1):
            n = self.cluster.refresh().node(k)
            if n.pid is not None and _stopped(n.pid):
                os.kill(n.pid, signal.SIGCONT)
            if self.cluster.state(k) != "UP":
                try:
                    self.cluster.start_node(k, timeout=300)
                except Exception as e:  # noqa: BLE001 (reported; the others are still restored)
                    print(f"could not start node{k}: {e}", file=sys.stderr)
            ok = self.cluster.wait_for_state(k, "UP", timeout=300) and ok
        return ok


def _stopped(pid: int) -> bool:
    """True if the process is stopped (SIGSTOP): state T in /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


def verify(soak: Soak, runs: list[dict], chunk: int = 5000) -> dict:
    """Every acknowledged write read back at QUORUM: found, lost (no row), unverifiable (the read
    failed three times)."""
    from turbocql.concurrent import execute_concurrent_with_args

    keys = [soak.key(w) for w, a in enumerate(soak.acked) if a]
    for r in runs:
        flags = r.get("batch", {}).get("_acked")
        if flags:
            keys += [f"{soak.run_id}-c{r['minute']}-{j}" for j, a in enumerate(flags) if a]
    found = lost = 0
    lost_keys: list[str] = []
    todo = keys
    for _attempt in range(3):
        retry = []
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            results = execute_concurrent_with_args(
                soak.session, soak.select, [(k,) for k in part], concurrency=100, raise_on_first_error=False
            )
            for k, (success, value) in zip(part, results):
                if not success:
                    retry.append(k)
                elif value.one() is None:
                    lost += 1
                    lost_keys.append(k)
                else:
                    found += 1
        todo = retry
        if not todo:
            break
    return {"acked": len(keys), "found": found, "lost": lost, "lost_keys": lost_keys[:20], "unverifiable": len(todo)}


def window_rows(soak: Soak, faults: list[dict], t_end: float) -> list[dict]:
    rows = []
    spans = {0: ("no fault", None, None)}
    for f in faults:
        spans[f["window"]] = (f"{f['window']}: {f['kind']} {f['node']}", f["at_s"], f.get("window_end_s", t_end))
    for w in sorted(set(soak.outcomes) | set(spans)):
        c = soak.outcomes.get(w, Counter())
        name, start, end = spans.get(w, (str(w), None, None))
        rows.append(
            {
                "window": w,
                "name": name,
                "from_s": start,
                "to_s": end,
                "requests": sum(n for k, n in c.items() if not k.startswith("batch ")),
                "ok": c.get("ok", 0),
                "errors": {k: n for k, n in sorted(c.items()) if k != "ok"},
                "latency_ms": soak.latency.get(w, Histogram()).summary(),
            }
        )
    return rows


def rss_slope_mb_per_h(samples: list[dict]) -> float | None:
    """Least-squares slope of RSS over the second half of the samples, MiB per hour."""
    half = samples[len(samples) // 2 :]
    if len(half) < 3:
        return None
    xs = [s["t_s"] for s in half]
    ys = [s["rss_mb"] for s in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var * 3600, 1) if var else None


def plot(path: Path, samples: list[dict], faults: list[dict], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t_s"] / 60 for s in samples]
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(11, 6.5))
    ax1.plot(t, [s["rss_mb"] for s in samples], color="tab:blue")
    ax1.set_ylabel("RSS (MiB)")
    ax2.plot(t, [s["ops_per_s"] for s in samples], color="tab:green", label="ops/s (succeeded)")
    ax2.plot(t, [s["errors_per_s"] for s in samples], color="tab:red", label="errors/s")
    ax2.set_ylabel("requests/s")
    ax2.set_xlabel("minutes")
    ax2.legend(loc="lower left", fontsize=8)
    colors = {"kill": "tab:red", "freeze": "tab:purple", "stop": "tab:orange"}
    for f in faults:
        start, end = f["at_s"] / 60, f.get("window_end_s", samples[-1]["t_s"] if samples else f["at_s"]) / 60
        for ax in (ax1, ax2):
            ax.axvspan(start, end, color=colors[f["kind"]], alpha=0.15, lw=0)
            if f.get("restored_s") is not None:
                ax.axvline(f["restored_s"] / 60, color=colors[f["kind"]], lw=0.8, ls="--")
        ax1.text(start, 1.0, f" {f['kind']} {f['node']}", transform=ax1.get_xaxis_transform(), fontsize=8, va="top")
    ax1.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
    ax1.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt_errors(errors: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "0"


def markdown(report: dict) -> str:
    s, meta = report["summary"], report["meta"]
    lines = [
        "# Row 14: soak under mixed load with node faults (turbocql)",
        "",
        f"{meta['date']}, `{meta['command']}`",
        "",
        meta["heading"],
        "",
        "| requests | succeeded | failed | lost acknowledged writes | never resolved | late (> timeout + 2 s) "
        "| reads missing an acknowledged row | RSS start / end / peak MiB | RSS slope, 2nd half | "
        "batches | asyncio readers |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {s['requests']:,} | {s['succeeded']:,} | {s['failed']:,} | **{s['lost']}** of {s['acked']:,} "
        f"| **{s['hung']}** | {s['late']} | {s['read_missing']} | {s['rss_start_mb']} / {s['rss_end_mb']} / "
        f"{s['peak_rss_mb']} | {s['rss_slope_mb_per_h']} MiB/h | {s['batches']} | {s['aio_readers']} |",
        "",
        "Per window (requests by the time they were sent; errors of the execute_concurrent batches marked `batch`):",
        "",
        "| window | from s | to s | requests | ok | errors | p50 ms | p99 ms | max ms | driver saw down after s "
        "| driver saw up, s after restore |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    faults = {f["window"]: f for f in report["faults"]}
    for w in report["windows"]:
        f = faults.get(w["window"], {})
        lat = w["latency_ms"]
        lines.append(
            f"| {w['name']} | {'' if w['from_s'] is None else w['from_s']} | {'' if w['to_s'] is None else w['to_s']} "
            f"| {w['requests']:,} | {w['ok']:,} | {fmt_errors(w['errors'])} | {lat['p50']} | {lat['p99']} "
            f"| {lat['max']} | {f.get('driver_saw_down_after_s', '')} | {f.get('driver_saw_up_after_restore_s', '')} |"
        )
    lines += ["", "Faults:", ""]
    for f in report["faults"]:
        lines.append(
            f"* {f['window']}. at {f['at_s']} s: {f['injected']}; node back (answering CQL) at "
            f"{f.get('restored_s')} s; window to {f.get('window_end_s')} s (restore + {meta['grace_s']:g} s)"
        )
    lines += ["", "Each minute's execute_concurrent batch and asyncio reader:", ""]
    lines += ["| minute | at s | window | batch acked / writes | batch errors | batch s | aio reads | aio outcomes |"]
    lines += ["| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in report["minutely"]:
        b, a = r.get("batch", {}), r.get("aio", {})
        window = r["window"] or "no fault"
        lines.append(
            f"| {r['minute']} | {r['at_s']} | {window} | {b.get('acked', '')} / {b.get('writes', '')} "
            f"| {fmt_errors(b.get('failed', {}))} | {b.get('seconds', b.get('state', ''))} | {a.get('reads', '')} "
            f"| {fmt_errors(a.get('outcomes', {})) if 'outcomes' in a else a.get('state', '')} |"
        )
    if report.get("plot"):
        lines += ["", f"![RSS and ops/s]({Path(report['plot']).name})"]
    return "\n".join(lines) + "\n"


def setup_keyspace(keyspace: str) -> None:
    from turbocql.cluster import Cluster

    cluster = Cluster([FIRST_ADDRESS])
    try:
        s = cluster.connect()
        s.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}",
            timeout=60,
        )
        s.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{TABLE} (k text PRIMARY KEY, v int)", timeout=60)
    finally:
        cluster.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="minutes of load (default 30)")
    ap.add_argument("--fault-every", type=float, default=4.0, help="minutes between faults (default 4)")
    ap.add_argument("--rate", type=float, default=200.0, help="execute_async requests/s (default 200)")
    ap.add_argument("--batch", type=int, default=500, help="writes of each minute's execute_concurrent batch")
    ap.add_argument("--aio-reads", type=int, default=200, help="reads of each minute's asyncio reader")
    ap.add_argument("--request-timeout", type=float, default=5.0, help="each request's timeout, s (default 5)")
    ap.add_argument("--down-s", type=float, default=10.0, help="kill / stop: seconds down before restarting")
    ap.add_argument("--freeze-s", type=float, default=20.0, help="freeze: seconds between SIGSTOP and SIGCONT")
    ap.add_argument("--grace", type=float, default=10.0, help="seconds after a restore still in its window")
    ap.add_argument(
        "--faults", default=",".join(FAULTS), help="the faults' cycle, comma-separated (default kill,freeze,stop)"
    )
    ap.add_argument("--keyspace", default="turbocql_soak")
    ap.add_argument("--keep-keyspace", action="store_true", help="do not drop the keyspace at the end")
    ap.add_argument("--out", default=None, metavar="PATH", help="the JSON (default results/soak-<date>.json)")
    args = ap.parse_args(argv)
    cycle = [f for f in args.faults.split(",") if f]
    if not cycle or any(f not in FAULTS for f in cycle):
        ap.error(f"--faults: a comma-separated list of {', '.join(FAULTS)}")
    if args.minutes <= 0 or args.fault_every <= 0 or args.rate <= 0:
        ap.error("--minutes, --fault-every and --rate are positive")

    import turbocql_localdb as localdb
    from turbocql import ConsistencyLevel
    from turbocql.aio import Session as AioSession
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import ConstantReconnectionPolicy

    logging.getLogger("turbocql.cluster").setLevel(logging.ERROR)  # no LBP warning; faults are expected
    cluster = localdb.find_cluster(first_address=FIRST_ADDRESS)
    if cluster is None or not cluster.is_up():
        print(f"the 3-node cluster at {FIRST_ADDRESS} is not running with every node UP", file=sys.stderr)
        print("  (start it with: turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11)", file=sys.stderr)
        return 2

    def on_term(_sig, _frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_term)
    setup_keyspace(args.keyspace)
    tc = Cluster(
        [FIRST_ADDRESS],
        reconnection_policy=ConstantReconnectionPolicy(1.0, max_attempts=None),
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(
                consistency_level=ConsistencyLevel.QUORUM, request_timeout=args.request_timeout
            )
        },
    )
    session = tc.connect(args.keyspace)
    insert = session.prepare(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)")
    insert.is_idempotent = True
    select = session.prepare(f"SELECT v FROM {TABLE} WHERE k = ?")
    select.is_idempotent = True
    run_id = uuid.uuid4().hex[:8]
    soak = Soak(session, insert, select, run_id, args.request_timeout)
    events = Events(soak)
    tc.register_listener(events.listener)
    faults = Faults(cluster, args, soak, events)
    samples: list[dict] = []
    minutely_runs: list[dict] = []
    load_start = os.getloadavg()[0]
    threads = [
        threading.Thread(target=soak.steady_load, args=(args.rate,), name="soak-load", daemon=True),
        threading.Thread(target=sampler, args=(soak, samples), name="soak-rss", daemon=True),
        threading.Thread(
            target=minutely,
            args=(soak, AioSession(session), args.batch, args.aio_reads, minutely_runs),
            name="soak-minutely",
            daemon=True,
        ),
    ]
    interrupted = None
    end_s = args.minutes * 60
    print(f"soak {run_id}: {args.minutes:g} min, a fault every {args.fault_every:g} min", file=sys.stderr)
    try:
        for th in threads:
            th.start()
        k = 1
        while True:
            next_fault = k * args.fault_every * 60
            if next_fault >= end_s:
                time.sleep(max(0.0, end_s - soak.now()))
                break
            time.sleep(max(0.0, next_fault - soak.now()))
            faults.inject(cycle[(k - 1) % len(cycle)])
            k += 1
            if soak.now() >= end_s:
                break
    except BaseException as e:  # KeyboardInterrupt, SIGTERM, a failed fault: restore, then report
        interrupted = f"{type(e).__name__}: {e}"
        print(f"interrupted ({interrupted}); restoring the cluster", file=sys.stderr)
    finally:
        soak.window = NO_FAULT
        whole = faults.ensure_whole()
    t_load_end = soak.now()
    soak.stop.set()
    threads[0].join(10)
    hung = soak.wait_drained(args.request_timeout + DRAIN_MARGIN_S)
    threads[2].join(args.request_timeout + DRAIN_MARGIN_S + 60)
    minutely_stuck = threads[2].is_alive()
    threads[1].join(10)
    print(f"[{soak.now():7.1f} s] load stopped; reading back the acknowledged writes ...", file=sys.stderr)
    verification = verify(soak, minutely_runs)
    peak = peak_rss_mb()
    tc.shutdown()
    if not args.keep_keyspace:
        with contextlib.suppress(Exception):
            c2 = Cluster([FIRST_ADDRESS])
            try:
                c2.connect().execute(f"DROP KEYSPACE IF EXISTS {args.keyspace}", timeout=120)
            finally:
                c2.shutdown()
    whole = faults.ensure_whole() and whole

    import turbocql

    stuck_batches = sum(1 for r in minutely_runs for part in ("batch", "aio") if r.get(part, {}).get("state"))
    for r in minutely_runs:
        r.get("batch", {}).pop("_acked", None)
    totals = soak.totals
    aio_never = sum(r.get("aio", {}).get("outcomes", {}).get("NeverResolved", 0) for r in minutely_runs)
    aio_missing = sum(r.get("aio", {}).get("outcomes", {}).get("ReadMissing", 0) for r in minutely_runs)
    summary = {
        "requests": totals["requests"],
        "succeeded": totals["succeeded"],
        "failed": totals["failed"],
        "failed_by_class": dict(
            sum((Counter({k: n for k, n in c.items() if k != "ok"}) for c in soak.outcomes.values()), Counter())
        ),
        "acked": verification["acked"],
        "lost": verification["lost"],
        "unverifiable": verification["unverifiable"],
        "hung": hung + aio_never + stuck_batches,
        "hung_execute_async": hung,
        "hung_aio": aio_never,
        "stuck_minutely_runs": stuck_batches,
        "late": totals["late"],
        "read_missing": totals["read_missing"] + aio_missing,
        "rss_start_mb": samples[0]["rss_mb"] if samples else None,
        "rss_end_mb": samples[-1]["rss_mb"] if samples else None,
        "peak_rss_mb": round(peak, 1),
        "rss_slope_mb_per_h": rss_slope_mb_per_h(samples),
        "batches": sum(1 for r in minutely_runs if "writes" in r.get("batch", {})),
        "aio_readers": sum(1 for r in minutely_runs if "reads" in r.get("aio", {})),
        "cluster_whole_at_exit": whole,
        "interrupted": interrupted,
    }
    date = dt.datetime.now()
    command = "python benchmarks/run_soak.py " + " ".join(sys.argv[1:] if argv is None else argv)
    heading = (
        f"turbocql {turbocql.__version__}, {t_load_end / 60:.1f} min of load (asked {args.minutes:g}), "
        f"{args.rate:g} requests/s through execute_async (QUORUM idempotent writes of new keys and QUORUM reads "
        f"of acknowledged keys, alternately), each minute an execute_concurrent batch of {args.batch} writes "
        f"and an asyncio reader of {args.aio_reads} keys; request timeout {args.request_timeout:g} s, "
        f"ConstantReconnectionPolicy(1 s); a fault every {args.fault_every:g} min ({', '.join(cycle)} in turn); "
        f"keyspace replicated dc1: 2, dc2: 1 on the local 3-node cluster; {os.cpu_count()} CPUs shared with the "
        f"three nodes; 1-min load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."
        + (f" INTERRUPTED: {interrupted}." if interrupted else "")
        + ("" if not minutely_stuck else " The minutely thread was still running at the end.")
    )
    report = {
        "meta": {
            "date": date.isoformat(timespec="seconds"),
            "command": command.strip(),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "turbocql": turbocql.__version__,
            "run_id": run_id,
            "minutes": args.minutes,
            "fault_every_min": args.fault_every,
            "rate": args.rate,
            "request_timeout_s": args.request_timeout,
            "grace_s": args.grace,
            "heading": heading,
        },
        "summary": summary,
        "verification": verification,
        "windows": window_rows(soak, faults.done, t_load_end),
        "faults": faults.done,
        "host_events": [{"t_s": round(t, 2), "address": a, "event": w} for t, a, w in events.seen],
        "minutely": minutely_runs,
        "samples": samples,
    }
    path = Path(args.out) if args.out else HERE / "results" / f"soak-{date:%Y-%m-%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    png = path.with_suffix(".png")
    try:
        plot(png, samples, faults.done, f"soak: turbocql, {args.rate:g} req/s, a fault every {args.fault_every:g} min")
        report["plot"] = str(png)
    except Exception as e:  # noqa: BLE001 (the figures matter more than the picture)
        print(f"no plot: {e}", file=sys.stderr)
    path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    print(f"results: {path}, {path.with_suffix('.md')}" + (f", {png}" if "plot" in report else ""), file=sys.stderr)
    print(
        f"requests {summary['requests']:,}, failed {summary['failed']:,} {summary['failed_by_class']}, "
        f"lost {summary['lost']} of {summary['acked']:,} acked, never resolved {summary['hung']}, "
        f"late {summary['late']}, reads missing a row {summary['read_missing']}, RSS {summary['rss_start_mb']} -> "
        f"{summary['rss_end_mb']} MiB (peak {summary['peak_rss_mb']}), cluster whole: {whole}",
        file=sys.stderr,
    )

    from benchmarks.harness import reliability

    reliability.record(
        "14",
        f"soak {t_load_end / 60:.0f} min, a node fault every {args.fault_every:g} min",
        injected="; ".join(f["injected"] for f in faults.done) or "no fault (too short a run)",
        requests=summary["requests"],
        succeeded=summary["succeeded"],
        failed=summary["failed_by_class"],
        lost=summary["lost"],
        hung=summary["hung"],
        peak_rss_mb=summary["peak_rss_mb"],
        notes=(
            f"{args.rate:g} req/s execute_async + a batch of {args.batch} and {args.aio_reads} asyncio reads a minute; "
            f"{summary['acked']:,} acknowledged writes read back; RSS {summary['rss_start_mb']} -> "
            f"{summary['rss_end_mb']} MiB, slope {summary['rss_slope_mb_per_h']} MiB/h over the second half; "
            f"late {summary['late']}, reads missing a row {summary['read_missing']}"
        ),
    )
    bad = summary["lost"] or summary["hung"] or summary["read_missing"] or not whole or interrupted
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
