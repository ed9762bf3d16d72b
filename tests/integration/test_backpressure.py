"""Row 7 of the reliability matrix: a server that stops reading, with 1,000,000 requests
submitted through ``execute_async``, ``execute_concurrent``, a ``WritePipeline`` and asyncio.

node3 of the 3-node cluster is frozen (SIGSTOP: it reads nothing more, its socket buffers
fill), every request is routed to it only (a white-list profile) with a 0.5 s timeout, and
each path submits 1,000,000 requests as fast as it can. The bound (docs/faults.md, "Back-pressure"):

- ``execute_async``: at most ``max_requests_in_flight`` (32,768) requests of a session in
  flight; the next one waits for a slot on the caller's thread (GIL released), at most its
  timeout: back-pressure, as the classic driver's ``execute_async`` waits for a stream id;
- ``execute_concurrent`` and pipelines: their own ``concurrency`` / ``max_in_flight`` and
  ``max_unsent_write_requests``;
- asyncio: 32,768 in flight and as many waiting for a slot in the engine; the next
  ``session.execute`` raises ConnectionBusy at once.

Past that, the crate runs out of stream ids on the node's connection (timed-out requests'
ids stay taken until the node answers): requests fail at once with ConnectionBusy, then
NoHostAvailable once the connection is given up. Every request ends with a result or a
typed error, and the client's memory stays within a bound (asserted per path, from the RSS
sampled while it runs).
"""

import asyncio
import collections
import os
import signal
import threading
import time

import pytest

from benchmarks.harness import reliability
from tests.integration.conftest import _wait_all_threads_stopped
from turbocql.aio import Session as AioSession
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.concurrent import WritePipeline, execute_concurrent_with_args
from turbocql.connection import ConnectionBusy
from turbocql.policies import WhiteListRoundRobinPolicy

pytestmark = [pytest.mark.multinode, pytest.mark.long, pytest.mark.timeout(600)]

N = 1_000_000
NODE = 3
ADDRESS = "127.0.0.13"
TIMEOUT_S = 0.5
# Client memory growth allowed per path while 1,000,000 requests meet a node that reads
# nothing, whatever the number sent: 32,768 requests in flight (a few KB each in the engine)
# and the Python objects of those in flight, with room for the allocator's fragmentation.
# asyncio also holds up to 32,768 requests waiting for a slot, and the test itself holds
# the 100,000 awaitables of a batch (and gather's tasks): measured 318 to 416 MiB.
BOUND_MB = {"execute_async": 400, "execute_concurrent": 400, "pipeline": 400, "asyncio": 700}
TYPED = {"OperationTimedOut", "ConnectionBusy", "NoHostAvailable"}


class RssSampler:
    """The largest RSS seen while running, sampled every 20 ms."""

    def __init__(self):
        self.base = reliability.current_rss_mb()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, reliability.current_rss_mb())

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak - self.base


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_kind = collections.Counter()
        self.all_done = threading.Condition(self.lock)

    def note(self, kind):
        with self.lock:
            self.by_kind[kind] += 1
            if sum(self.by_kind.values()) == N:
                self.all_done.notify_all()

    def wait(self, timeout):
        with self.lock:
            return self.all_done.wait_for(lambda: sum(self.by_kind.values()) == N, timeout)


def _futures(session, q):
    counts = Counts()
    for _ in range(N):
        f = session.execute_async(q, ("local",))
        f.add_callbacks(lambda _r: counts.note("ok"), lambda e: counts.note(type(e).__name__))
    assert counts.wait(60), "unresolved: %d" % (N - sum(counts.by_kind.values()))
    return counts.by_kind


def _concurrent(session, q):
    kinds = collections.Counter()
    params = (("local",) for _ in range(N))
    for ok, outcome in execute_concurrent_with_args(
        session, q, params, concurrency=500, raise_on_first_error=False, results_generator=True
    ):
        kinds["ok" if ok else type(outcome).__name__] += 1
    return kinds


def _pipeline(session, q):
    kinds = collections.Counter()
    with WritePipeline(
        session, max_in_flight_requests=500, error_handler=lambda e: kinds.update([type(e).__name__])
    ) as p:
        for _ in range(N):
            p.execute(q, ("local",))
    kinds["ok"] = N - sum(kinds.values())
    return kinds


def _asyncio(session, q):
    """1,000,000 ``session.execute`` calls without waiting between them, awaited every
    100,000 (what a program gathering them would do): past 65,536 pending, ConnectionBusy."""
    kinds = collections.Counter()

    async def main():
        aio = AioSession(session)
        pending = []
        for i in range(N):
            try:
                pending.append(aio.execute(q, ("local",)))
            except ConnectionBusy:
                kinds["ConnectionBusy"] += 1
            if len(pending) == 100_000 or i == N - 1:
                for r in await asyncio.gather(*pending, return_exceptions=True):
                    kinds["ok" if not isinstance(r, BaseException) else type(r).__name__] += 1
                pending.clear()

    asyncio.run(main())
    return kinds


PATHS = {"execute_async": _futures, "execute_concurrent": _concurrent, "pipeline": _pipeline, "asyncio": _asyncio}


@pytest.mark.parametrize("path", list(PATHS))
def test_a_million_requests_to_a_node_that_stops_reading(multidc_cluster, path):
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([ADDRESS]), request_timeout=TIMEOUT_S)
    c = Cluster([ADDRESS], execution_profiles={EXEC_PROFILE_DEFAULT: profile}, unresponsive_node_threshold=None)
    s = c.connect()
    q = s.prepare("SELECT key FROM system.local WHERE key = ?")
    assert s.execute(q, ("local",)).one().key == "local"
    pid = multidc_cluster.node(NODE).pid or multidc_cluster.refresh().node(NODE).pid
    os.kill(pid, signal.SIGSTOP)
    try:
        _wait_all_threads_stopped(pid)
        sampler = RssSampler()
        t0 = time.monotonic()
        kinds = PATHS[path](s, q)
        took = time.monotonic() - t0
        grew = sampler.stop()
    finally:
        os.kill(pid, signal.SIGCONT)
    try:
        reliability.record(
            "7",
            "1,000,000 requests through %s to a node that stops reading" % path,
            injected="SIGSTOP of node3, every request routed to it, timeout %.1f s" % TIMEOUT_S,
            requests=N,
            succeeded=kinds.get("ok", 0),
            failed={k: v for k, v in kinds.items() if k != "ok"},
            lost=0,
            hung=0,
            peak_rss_mb=round(sampler.peak, 1),
            notes="RSS grew %.0f MiB over %.0f MiB; %.1f s" % (grew, sampler.base, took),
        )
        assert sum(kinds.values()) == N, kinds
        assert set(kinds) - {"ok"} <= TYPED, kinds
        assert grew < BOUND_MB[path], "RSS grew %.0f MiB (%s)" % (grew, dict(kinds))
        # After the thaw the same session works again.
        deadline = time.monotonic() + 60
        while True:
            try:
                assert s.execute(q, ("local",), timeout=5).one().key == "local"
                break
            except Exception:
                assert time.monotonic() < deadline, "node3 never answered again"
                time.sleep(0.5)
    finally:
        c.shutdown()
