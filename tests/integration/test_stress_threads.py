"""Threads, futures and callbacks hammering shared sessions for a while, then shutdown racing
the requests: the code whose memory ordering x86 forgives and arm64 does not (the engine's
atomics and lock-free queues, its condvar, the completion hand-over to the dispatcher, the
eventfd of asyncio, the in-flight slots).

The run lasts ``TURBOCQL_STRESS_SECONDS`` (default 6 s per phase here; scripts/arm64.sh runs
it much longer under emulation, where a thread is descheduled at any instruction). Every
acknowledged write is read back with its value, every callback runs exactly once for its
future, every future ends, and after ``shutdown()`` every request ends with a result or the
``DriverException`` a classic user catches: none hangs, none is lost.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter

import pytest

from tests.conftest import HOST, PORT
from turbocql import DriverException
from turbocql.cluster import Cluster
from turbocql.concurrent import execute_concurrent_with_args

SECONDS = float(os.environ.get("TURBOCQL_STRESS_SECONDS", "6"))
THREADS = 8
TABLE = "stress_threads"


@pytest.fixture(scope="module")
def table(cluster, keyspace):
    s = cluster.connect(keyspace)
    s.execute("CREATE TABLE IF NOT EXISTS %s (t int, i int, v text, PRIMARY KEY (t, i))" % TABLE)
    s.execute("TRUNCATE %s" % TABLE)
    yield TABLE
    s.execute("DROP TABLE IF EXISTS %s" % TABLE)
    s.shutdown()


class Ledger:
    """What each worker wrote and was acknowledged, and the callbacks seen, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked: dict[tuple[int, int], str] = {}
        self.callbacks: Counter = Counter()
        self.errors: list[BaseException] = []

    def ack(self, t, i, v):
        with self.lock:
            self.acked[(t, i)] = v

    def fail(self, exc):
        with self.lock:
            self.errors.append(exc)


class _Countdown:
    """The callbacks of one batch of futures: each counted in the ledger, ``done`` set by the last."""

    def __init__(self, n, ledger):
        self.remaining = n
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.ledger = ledger

    def on_done(self, _rows, key):
        with self.ledger.lock:
            self.ledger.callbacks[key] += 1
        with self.lock:
            self.remaining -= 1
            if self.remaining == 0:
                self.done.set()

    def on_error(self, exc, key):
        self.ledger.fail(exc)
        self.on_done(None, key)


def _worker(t, sessions, stmts, ledger, deadline):
    """One thread's mix, round after round: sync writes and reads, futures with callbacks
    waited in a batch, one future waited by this thread and its callback at once, and an
    execute_concurrent; the sessions alternate."""
    i = 0
    n = 0
    try:
        while time.monotonic() < deadline:
            session = sessions[n % len(sessions)]
            ins, sel = stmts[session]
            n += 1
            # sync
            session.execute(ins, (t, i, "s%d" % i))
            ledger.ack(t, i, "s%d" % i)
            assert session.execute(sel, (t, i)).one() == ("s%d" % i,)
            i += 1
            # futures with callbacks, then waited together
            batch = _Countdown(16, ledger)
            futures = []
            for _ in range(16):
                f = session.execute_async(ins, (t, i, "a%d" % i))
                f.add_callbacks(batch.on_done, batch.on_error, callback_args=((t, i),), errback_args=((t, i),))
                futures.append((i, f))
                i += 1
            for j, f in futures:
                f.result()
                ledger.ack(t, j, "a%d" % j)
            assert batch.done.wait(30), "callbacks did not all run"
            # execute_concurrent
            rows = [(t, j, "c%d" % j) for j in range(i, i + 20)]
            for ok, res in execute_concurrent_with_args(session, ins, rows, concurrency=8):
                assert ok, res
            for _t, j, v in rows:
                ledger.ack(t, j, v)
            i += 20
    except BaseException as exc:  # reported by the test
        ledger.fail(exc)
    return i


def _asyncio_worker(keyspace, ledger, deadline, t):
    """asyncio on its own loop and session in this thread, beside the others."""
    from turbocql.aio import Cluster as AioCluster

    async def main():
        cluster = AioCluster([HOST], port=PORT)
        try:
            s = await cluster.connect(keyspace)
            ins = await s.prepare("INSERT INTO %s (t, i, v) VALUES (?, ?, ?)" % TABLE)
            i = 0
            while time.monotonic() < deadline:
                await asyncio.gather(*(s.execute(ins, (t, j, "x%d" % j)) for j in range(i, i + 32)))
                for j in range(i, i + 32):
                    ledger.ack(t, j, "x%d" % j)
                i += 32
        finally:
            await cluster.shutdown()

    try:
        asyncio.run(main())
    except BaseException as exc:
        ledger.fail(exc)


@pytest.mark.timeout(120 + 4 * SECONDS)
def test_threads_futures_and_callbacks_on_shared_sessions(cluster, keyspace, table):
    """THREADS threads on two sessions of one cluster, and an asyncio thread, for SECONDS:
    no error, every callback once, every acknowledged write read back with its value."""
    sessions = [cluster.connect(keyspace), cluster.connect(keyspace)]
    stmts = {
        s: (
            s.prepare("INSERT INTO %s (t, i, v) VALUES (?, ?, ?)" % TABLE),
            s.prepare("SELECT v FROM %s WHERE t = ? AND i = ?" % TABLE),
        )
        for s in sessions
    }
    ledger = Ledger()
    deadline = time.monotonic() + SECONDS
    threads = [threading.Thread(target=_worker, args=(t, sessions, stmts, ledger, deadline)) for t in range(THREADS)]
    threads.append(threading.Thread(target=_asyncio_worker, args=(keyspace, ledger, deadline, THREADS)))
    for th in threads:
        th.start()
    for th in threads:
        th.join(60 + 2 * SECONDS)
    assert not [th for th in threads if th.is_alive()], "a worker hung"
    assert not ledger.errors, ledger.errors[:5]
    assert ledger.callbacks and set(ledger.callbacks.values()) == {1}, "a callback ran twice"
    assert len(ledger.acked) > THREADS * 50, len(ledger.acked)
    check = sessions[0]
    for t in range(THREADS + 1):
        found = {r.i: r.v for r in check.execute("SELECT i, v FROM %s WHERE t = %d" % (TABLE, t))}
        want = {i: v for (tt, i), v in ledger.acked.items() if tt == t}
        assert found == want, "thread %d: %d acknowledged writes, %d found" % (t, len(want), len(found))
    for s in sessions:
        s.shutdown()


def _send_until_shut_down(session, ins, t, started, futures, acked, unexpected):
    """Sync writes and futures on ``session`` until it is shut down (DriverException)."""
    started.wait()
    i = 0
    while True:
        try:
            if i % 4 == 0:
                session.execute(ins, (t, i, "r"))
                acked.append(i)
            else:
                futures.append((i, session.execute_async(ins, (t, i, "r"))))
        except DriverException:
            return  # the session is shut down: the classic error
        except BaseException as exc:
            unexpected.append(exc)
            return
        i += 1


@pytest.mark.timeout(120 + 2 * SECONDS)
def test_shutdown_racing_requests_from_threads(keyspace, table):
    """THREADS threads send futures and sync requests on a session of their own cluster while
    the main thread shuts it down at a moment that varies: every future ends, with its
    result or DriverException; a write acknowledged before or after is in the table."""
    rounds = max(3, int(SECONDS))
    outcomes: Counter = Counter()
    for r in range(rounds):
        cluster = Cluster([HOST], port=PORT)
        session = cluster.connect(keyspace)
        ins = session.prepare("INSERT INTO %s (t, i, v) VALUES (?, ?, ?)" % TABLE)
        base = 1000 + 100 * r
        futures: list[list] = [[] for _ in range(THREADS)]
        acked: list[list] = [[] for _ in range(THREADS)]
        unexpected: list[BaseException] = []
        started = threading.Barrier(THREADS + 1)

        threads = [
            threading.Thread(
                target=_send_until_shut_down, args=(session, ins, base + t, started, futures[t], acked[t], unexpected)
            )
            for t in range(THREADS)
        ]
        for th in threads:
            th.start()
        started.wait()
        time.sleep(0.05 + 0.1 * (r % 5))
        cluster.shutdown()
        for th in threads:
            th.join(30)
        assert not [th for th in threads if th.is_alive()], "a sender hung after shutdown"
        assert not unexpected, unexpected[:5]
        for t in range(THREADS):
            for i, f in futures[t]:
                try:
                    f.result(timeout=30)
                    acked[t].append(i)
                    outcomes["ok"] += 1
                except DriverException as exc:
                    outcomes[type(exc).__name__] += 1
        check = Cluster([HOST], port=PORT)
        try:
            s = check.connect(keyspace)
            for t in range(THREADS):
                found = {row.i for row in s.execute("SELECT i FROM %s WHERE t = %d" % (TABLE, base + t))}
                missing = set(acked[t]) - found
                assert not missing, "round %d thread %d: writes acknowledged, not found: %s" % (
                    r,
                    t,
                    sorted(missing)[:9],
                )
        finally:
            check.shutdown()
    print("shutdown racing requests, futures:", dict(outcomes))
    assert outcomes["ok"] > 0, outcomes
