"""Row 9 of the reliability matrix: ``cluster.shutdown()`` with requests in flight on every
path (thousands of execute_async, an execute_concurrent and a WritePipeline in threads,
asyncio requests), against a node that answers and against a frozen one (SIGSTOP).

``shutdown()`` returns at once (bound: 5 s; measured: under a millisecond). It does not cut
the requests in flight short: the engine's session lives as long as a request holds it, so
against a node that answers every request in flight completes normally, and a run already
going (execute_concurrent, a pipeline) goes on sending its remaining items; against a
frozen node each request ends at its own timeout with ``OperationTimedOut`` or, with no
timeout, when the idle heartbeat finds the connection dead (``NoHostAvailable``). None
hangs. Requests made after ``shutdown()`` raise ``DriverException`` at once.

The classic driver (3.30.1) is run through the same: its ``shutdown()`` returns at once
too, but it drops the requests in flight: against a node that answers, each waits for its
timeout and ends in ``OperationTimedOut`` ('Connection defunct by heartbeat'; measured:
from 1,918 to all 5,000 of 5,000 in three runs, after 30 s); an ``execute_concurrent``
running in another thread never returns (its remaining items are never started nor
failed); and with a frozen node a future without a timeout never resolves (measured: still
pending after 100 s).

Uses its own node on 127.0.0.1:9048 (started and stopped here).
"""

import asyncio
import threading
import time
from collections import Counter

import pytest

import turbocql_localdb as localdb
from benchmarks.harness import reliability
from tests.conftest import HOST, PORT
from tests.integration.conftest import paused
from turbocql import DriverException

# Its own port: 9043 auth, 9044/9045 TLS, 9046 test_server_stop, 9047 test_reprepare (in the
# other lane of scripts/test.sh, at the same time).
SHUTDOWN_PORT = PORT + 6
SHUTDOWN_BOUND = 5.0
KS = "shutdown_ks"


@pytest.fixture(scope="module")
def own_node(tmp_path_factory):
    d = tmp_path_factory.mktemp("shutdown-node")
    node = localdb.start(dir=str(d), port=SHUTDOWN_PORT, heap="768M", timeout=300, out=lambda *a, **k: None)
    from turbocql.cluster import Cluster

    with Cluster([HOST], port=SHUTDOWN_PORT) as c:
        s = c.connect()
        s.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
            % KS
        )
        s.execute("CREATE TABLE IF NOT EXISTS %s.t (k int PRIMARY KEY, v int)" % KS)
    yield node
    localdb.stop(dir=str(d), port=SHUTDOWN_PORT)


def _name(exc):
    return "ok" if exc is None else type(exc).__name__


class Load:
    """Requests in flight on every path of one session, each outcome counted as it ends:
    ``n_async`` execute_async (``timeout``) plus ``n_untimed`` with no timeout, an
    execute_concurrent of ``n_concurrent`` and a WritePipeline of ``n_pipeline`` writes in
    threads, ``n_aio`` asyncio requests in a thread of their own."""

    def __init__(self, session, ins, timeout, n_async, n_untimed, n_concurrent, n_pipeline, n_aio):
        self.session, self.ins, self.timeout = session, ins, timeout
        self.n = dict(
            execute_async=n_async + n_untimed, execute_concurrent=n_concurrent, pipeline=n_pipeline, aio=n_aio
        )
        self.n_async, self.n_untimed = n_async, n_untimed
        self.outcomes = {path: Counter() for path in self.n}
        self.lock = threading.Lock()
        self.resolved = threading.Event()
        self.ended = {}  # path -> monotonic time its last request ended
        self.started = {}  # path -> threading.Event: its requests are all handed to the engine
        self.threads = []

    def _count(self, path, outcome):
        with self.lock:
            self.outcomes[path][_name(outcome)] += 1
            if sum(self.outcomes[path].values()) == self.n[path]:
                self.ended[path] = time.monotonic()
                if path == "execute_async":
                    self.resolved.set()

    def start(self):
        from turbocql.aio import Session as AioSession
        from turbocql.concurrent import WritePipeline, execute_concurrent_with_args

        session, ins = self.session, self.ins
        for path in ("execute_concurrent", "pipeline", "aio"):
            self.started[path] = threading.Event()

        def concurrent():
            rows = [(k, k) for k in range(self.n["execute_concurrent"])]
            self.started["execute_concurrent"].set()
            try:
                results = execute_concurrent_with_args(session, ins, rows, concurrency=100, raise_on_first_error=False)
            except Exception as exc:  # counted as the outcome of every item
                for _ in range(self.n["execute_concurrent"]):
                    self._count("execute_concurrent", exc)
                return
            for r in results:
                self._count("execute_concurrent", None if r.success else r.result_or_exc)

        def pipeline():
            failures = []
            with WritePipeline(
                session, max_in_flight_requests=100, error_handler=failures.append, timeout=self.timeout
            ) as wp:
                for k in range(self.n["pipeline"]):
                    wp.execute(ins, (100_000 + k, k))
                    if k == 1000:
                        self.started["pipeline"].set()
            self.started["pipeline"].set()
            for exc in failures:
                self._count("pipeline", exc)
            for _ in range(self.n["pipeline"] - len(failures)):
                self._count("pipeline", None)

        def aio():
            async def run():
                s = AioSession(session)
                requests = [s.execute(ins, (200_000 + k, k), timeout=self.timeout) for k in range(self.n["aio"])]
                await asyncio.sleep(0)  # the loop hands them to the engine
                self.started["aio"].set()
                return await asyncio.gather(*requests, return_exceptions=True)

            for r in asyncio.run(run()):
                self._count("aio", r if isinstance(r, BaseException) else None)

        for target in (concurrent, pipeline, aio):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self.threads.append(t)
        for k in range(self.n_async + self.n_untimed):
            timeout = self.timeout if k < self.n_async else None
            f = session.execute_async(ins, (300_000 + k, k), timeout=timeout)
            f.add_callbacks(lambda _rows: self._count("execute_async", None), lambda e: self._count("execute_async", e))
        for path in ("execute_concurrent", "pipeline", "aio"):
            assert self.started[path].wait(30), path

    def pending(self):
        with self.lock:
            return {path: self.n[path] - sum(c.values()) for path, c in self.outcomes.items()}

    def wait(self, bound):
        """Waits up to ``bound`` s for every request to end; returns how many never did."""
        deadline = time.monotonic() + bound
        self.resolved.wait(max(0.0, deadline - time.monotonic()))
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        return sum(self.pending().values())

    def failed(self):
        out = Counter()
        for c in self.outcomes.values():
            for name, count in c.items():
                if name != "ok":
                    out[name] += count
        return dict(out)


def _classic_cluster(**kwargs):
    from cassandra.cluster import Cluster as ClassicCluster

    return ClassicCluster([HOST], port=SHUTDOWN_PORT, protocol_version=4, schema_metadata_enabled=False, **kwargs)


def _classic_load(session, ins, n_async, timeout):
    """The classic driver's execute_async and execute_concurrent (in a daemon thread: it may
    never return); returns (futures, the concurrent run's outcome dict, its thread)."""
    from cassandra.concurrent import execute_concurrent_with_args

    outcome = {}
    started = threading.Event()

    def concurrent():
        started.set()
        results = execute_concurrent_with_args(
            session, ins, [(k, k) for k in range(5000)], concurrency=100, raise_on_first_error=False
        )
        outcome["results"] = Counter(_name(None if r.success else r.result_or_exc) for r in results)

    t = threading.Thread(target=concurrent, daemon=True)
    t.start()
    started.wait(10)
    futures = [session.execute_async(ins, (300_000 + k, k), timeout=timeout) for k in range(n_async)]
    return futures, outcome, t


def _classic_outcomes(futures, bound):
    """``({outcome: count}, seconds until the last ended, one error message)``."""
    out = Counter()
    message = None
    t0 = time.monotonic()
    deadline = t0 + bound
    for f in futures:
        # The classic result() has no timeout: wait for the event it sets.
        if not f._event.wait(max(0.0, deadline - time.monotonic())):
            out["hung"] += 1
            continue
        try:
            f.result()
            out["ok"] += 1
        except Exception as exc:
            out[type(exc).__name__] += 1
            message = message or str(exc)[:200]
    return dict(out), time.monotonic() - t0, message


@pytest.mark.timeout(240)
def test_shutdown_under_load(own_node):
    """Thousands of requests in flight on every path: shutdown() returns within 5 s, every
    request in flight ends (here: completes, the node being up), runs already going finish
    their input, and new requests raise DriverException."""
    from turbocql.cluster import Cluster

    cluster = Cluster([HOST], port=SHUTDOWN_PORT)
    session = cluster.connect(KS)
    ins = session.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
    load = Load(session, ins, timeout=30.0, n_async=5000, n_untimed=0, n_concurrent=20_000, n_pipeline=5000, n_aio=1000)
    load.start()
    pending = load.pending()
    assert sum(pending.values()) > 0, "requests must be in flight when shutdown() is called"
    t0 = time.monotonic()
    cluster.shutdown()
    shutdown_s = time.monotonic() - t0
    assert shutdown_s < SHUTDOWN_BOUND, shutdown_s
    assert session.is_shutdown
    with pytest.raises(DriverException, match="shut down"):
        session.execute_async(ins, (0, 0))
    hung = load.wait(60)
    assert hung == 0, load.pending()
    drained_s = max(load.ended.values()) - t0
    for path, c in load.outcomes.items():
        assert c == Counter(ok=load.n[path]), (path, c)

    # The classic driver through the same.
    classic_cluster = _classic_cluster()
    cs = classic_cluster.connect(KS)
    cins = cs.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
    futures, concurrent, thread = _classic_load(cs, cins, 5000, timeout=30.0)
    t1 = time.monotonic()
    classic_cluster.shutdown()
    classic_shutdown_s = time.monotonic() - t1
    classic, classic_s, classic_message = _classic_outcomes(futures, 60)
    thread.join(10)
    assert classic_shutdown_s < SHUTDOWN_BOUND
    assert "hung" not in classic, classic
    reliability.record(
        "9",
        "shutdown-under-load",
        injected="cluster.shutdown() with %d requests pending (%s)"
        % (sum(pending.values()), ", ".join("%s %d" % kv for kv in pending.items())),
        requests=sum(load.n.values()),
        succeeded=sum(c["ok"] for c in load.outcomes.values()),
        failed=load.failed(),
        lost=0,
        hung=hung,
        notes="shutdown() returned in %.4f s; the requests in flight completed normally, the last %.2f s after "
        "it (runs already going send their remaining items); classic driver: shutdown() %.4f s, futures %s "
        "within %.2f s (%r), its execute_concurrent in another thread %s"
        % (
            shutdown_s,
            drained_s,
            classic_shutdown_s,
            classic,
            classic_s,
            classic_message,
            "returned %s" % dict(concurrent["results"]) if "results" in concurrent else "never returned",
        ),
    )


@pytest.mark.timeout(240)
def test_shutdown_with_the_node_frozen(own_node):
    """The node frozen (SIGSTOP) with requests in flight on every path: shutdown() returns
    within 5 s; each request ends with a typed error within its timeout (3 s) plus 5 s, or,
    without a timeout, once the idle heartbeat (2 s, answered within 2 s) finds its
    connection dead; none hangs."""
    from turbocql.cluster import Cluster

    timeout, heartbeat = 3.0, 2.0
    cluster = Cluster([HOST], port=SHUTDOWN_PORT, idle_heartbeat_interval=heartbeat, idle_heartbeat_timeout=heartbeat)
    session = cluster.connect(KS)
    session.default_timeout = timeout  # execute_concurrent's
    ins = session.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
    classic_cluster = _classic_cluster()
    cs = classic_cluster.connect(KS)
    cins = cs.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
    load = Load(
        session, ins, timeout=timeout, n_async=2000, n_untimed=200, n_concurrent=2000, n_pipeline=2000, n_aio=500
    )
    with paused(own_node):
        t_frozen = time.monotonic()
        load.start()
        pending = load.pending()
        t0 = time.monotonic()
        cluster.shutdown()
        shutdown_s = time.monotonic() - t0
        classic_futures, classic_concurrent, classic_thread = _classic_load(cs, cins, 2000, timeout=timeout)
        t1 = time.monotonic()
        classic_cluster.shutdown()
        classic_shutdown_s = time.monotonic() - t1
        # A request that has not started when the node froze waits at most its timeout once
        # started; the runs start theirs one window at a time, each window bounded so.
        bound = (t0 - t_frozen) + 2 * heartbeat + 4 * timeout + SHUTDOWN_BOUND
        hung = load.wait(bound)
        ended_s = max(load.ended.values(), default=time.monotonic()) - t0
        classic, _, classic_message = _classic_outcomes(classic_futures, timeout + SHUTDOWN_BOUND)
    assert shutdown_s < SHUTDOWN_BOUND, shutdown_s
    assert classic_shutdown_s < SHUTDOWN_BOUND, classic_shutdown_s
    assert hung == 0, load.pending()
    failed = load.failed()
    assert set(failed) <= {"OperationTimedOut", "NoHostAvailable"}, failed
    assert sum(failed.values()) == sum(load.n.values()), load.outcomes
    assert "hung" not in classic, classic
    reliability.record(
        "9",
        "shutdown-node-frozen",
        injected="SIGSTOP of the node, then cluster.shutdown() with %d requests pending (%s; 200 without a timeout)"
        % (sum(pending.values()), ", ".join("%s %d" % kv for kv in pending.items())),
        requests=sum(load.n.values()),
        succeeded=0,
        failed=failed,
        lost=0,
        hung=hung,
        notes="shutdown() returned in %.4f s; the last request in flight ended %.1f s after it (timeout %.0f s, "
        "heartbeat %.0f + %.0f s); classic driver: shutdown() %.4f s, futures with a timeout %s (%r)"
        % (shutdown_s, ended_s, timeout, heartbeat, heartbeat, classic_shutdown_s, classic, classic_message),
    )
    classic_thread.join(0)
