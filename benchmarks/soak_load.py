"""The soak's load (``run_soak.py``): the state of the requests in flight and their outcomes
per fault window (:class:`Soak`, latencies in a bounded :class:`Histogram`), the steady
``execute_async`` load, the driver's host events (:class:`Events`), the RSS sampler and each
minute's ``execute_concurrent`` batch and asyncio reader.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import threading
import time
from array import array
from collections import Counter

SAMPLE_S = 5.0
RING = 4096  # recently acknowledged writes the reads pick from
LATE_S = 2.0  # a request resolved later than its timeout + this is "late"
NO_FAULT = 0


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
