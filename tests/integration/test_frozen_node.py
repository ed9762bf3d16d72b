"""Row 2 of the reliability matrix: a node frozen (SIGSTOP) for 30 s under steady load.

The 3-node cluster (dc1: node1, node2; dc2: node3), a keyspace replicated 2 in dc1 and 1 in
dc2, prepared writes at QUORUM issued at a steady rate through ``execute_async`` with the
classic default policy (token-aware over DC-aware, dc1 local), request timeout 5 s. node2
is frozen for 30 s, then thawed. Every request issued while it is frozen needs only node1
and node3 to succeed, but one in two is first sent to node2 as coordinator.

What turbocql promises (docs/faults.md, "A node that stops answering"): a node that has answered
nothing for ``unresponsive_node_threshold`` (2 s) while requests wait on it goes last in
every query plan until it answers a probe; so at least 80% of the requests issued while it
is frozen succeed (the classic driver keeps sending to it until each request times out:
its figure is measured beside ours in the same test, not asserted). Requests already sent
to the frozen node end with OperationTimedOut at the configured timeout (the spread is
asserted), none hangs, and after SIGCONT the node coordinates requests again.
"""

import logging
import os
import signal
import threading
import time
import uuid
import warnings

import pytest
from cassandra import ConsistencyLevel as CCL
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT
from cassandra.cluster import Cluster as ClassicCluster
from cassandra.cluster import ExecutionProfile as CProfile

from benchmarks.harness import reliability
from tests.integration.conftest import _wait_all_threads_stopped, drop_keyspace
from turbocql import ConsistencyLevel
from turbocql.cluster import Cluster, NoHostAvailable
from turbocql.policies import WhiteListRoundRobinPolicy

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(420)]

FROZEN_NODE = 2
FROZEN_ADDRESS = "127.0.0.12"
FREEZE_S = 30.0
RATE = 300  # requests per second
TIMEOUT_S = 5.0


@pytest.fixture(scope="module")
def freeze_ks(multidc_cluster):
    c = Cluster(["127.0.0.11"])
    s = c.connect()
    name = "freeze_" + uuid.uuid4().hex[:8]
    s.execute("CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % name)
    s.execute("CREATE TABLE %s.t (k int PRIMARY KEY, v int)" % name)
    yield name
    drop_keyspace(s, name)
    c.shutdown()


class Outcomes:
    """Each request's send time, end time and outcome (None: a result; else the error's
    class name), filled by the futures' callbacks."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sent = []  # (t_sent, index)
        self.ended = {}  # index -> (t_end, error class name or None)
        self.all_ended = threading.Condition(self.lock)

    def start(self, index):
        self.sent.append((time.monotonic(), index))

    def end(self, index, error):
        with self.lock:
            self.ended[index] = (time.monotonic(), None if error is None else type(error).__name__)
            self.all_ended.notify_all()

    def wait_all(self, timeout):
        with self.lock:
            return self.all_ended.wait_for(lambda: len(self.ended) == len(self.sent), timeout)


def _steady_load(session, insert, outcomes, stop):
    """execute_async at RATE per second until ``stop`` is set."""
    i = 0
    t0 = time.monotonic()
    while not stop.is_set():
        due = t0 + i / RATE
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        index = i
        outcomes.start(index)
        f = session.execute_async(insert, (index, index), timeout=TIMEOUT_S)
        f.add_callbacks(
            lambda _r, index=index: outcomes.end(index, None), lambda e, index=index: outcomes.end(index, e)
        )
        i += 1


def _run(multidc_cluster, session, insert):
    """Load for 3 s, node2 frozen for FREEZE_S under load, thawed, 6 s more. Returns the
    outcomes and the freeze window (monotonic times)."""
    outcomes, stop = Outcomes(), threading.Event()
    loader = threading.Thread(target=_steady_load, args=(session, insert, outcomes, stop), daemon=True)
    loader.start()
    time.sleep(3.0)
    node = multidc_cluster.node(FROZEN_NODE)
    pid = node.pid or multidc_cluster.refresh().node(FROZEN_NODE).pid
    assert pid, "node %s has no pid" % FROZEN_NODE
    os.kill(pid, signal.SIGSTOP)
    try:
        _wait_all_threads_stopped(pid)
        frozen_at = time.monotonic()
        time.sleep(FREEZE_S)
    finally:
        os.kill(pid, signal.SIGCONT)
    thawed_at = time.monotonic()
    time.sleep(6.0)
    stop.set()
    loader.join(10)
    assert outcomes.wait_all(TIMEOUT_S + 10), "requests never resolved: %d of %d" % (
        len(outcomes.sent) - len(outcomes.ended),
        len(outcomes.sent),
    )
    return outcomes, frozen_at, thawed_at


def _figures(outcomes, frozen_at, thawed_at):
    during = [i for t, i in outcomes.sent if frozen_at <= t < thawed_at]
    failed = {}
    for i in during:
        err = outcomes.ended[i][1]
        if err is not None:
            failed[err] = failed.get(err, 0) + 1
    ok = len(during) - sum(failed.values())
    # How late each timeout fired, against the configured timeout.
    late = sorted(
        outcomes.ended[i][0] - t - TIMEOUT_S for t, i in outcomes.sent if outcomes.ended[i][1] == "OperationTimedOut"
    )
    return during, ok, failed, late


def _clients_requests(session, address, wait_s=60.0):
    """Requests counted by the node at ``address`` on turbocql's connections to it. Right
    after the thaw the node may not serve yet: the others' failure detectors called it down
    during the freeze (the DOWN event can reach the session after the thaw), and a
    connection to it may be reconnecting; this waits up to ``wait_s`` for it to answer."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            rows = session.execute(
                "SELECT driver_name, request_count FROM system_views.clients", execution_profile="node2"
            )
            return sum(r.request_count or 0 for r in rows if r.driver_name == "turbocql")
        except NoHostAvailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_a_frozen_node_goes_last_in_plans_and_most_requests_succeed(multidc_cluster, freeze_ks, caplog):
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile

    caplog.set_level(logging.INFO, logger="turbocql.cluster")
    c = Cluster(
        ["127.0.0.11"],
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(consistency_level=ConsistencyLevel.QUORUM),
            "node2": ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([FROZEN_ADDRESS])),
        },
    )
    s = c.connect(freeze_ks)
    try:
        insert = s.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
        for i in range(300):  # warm every connection and the servers' write path
            s.execute(insert, (i, i))
        outcomes, frozen_at, thawed_at = _run(multidc_cluster, s, insert)
        during, ok, failed, late = _figures(outcomes, frozen_at, thawed_at)

        # Noticed, and back after the thaw.
        messages = [r.getMessage() for r in caplog.records if r.name == "turbocql.cluster"]
        assert any(FROZEN_ADDRESS in m and "goes last in query plans" in m for m in messages), messages
        assert any("answers again" in m for m in messages), messages
        before = _clients_requests(s, FROZEN_ADDRESS)
        for i in range(600):
            s.execute(insert, (i, i))
        after = _clients_requests(s, FROZEN_ADDRESS)
        # Token-aware: about half of these are coordinated by node2 again.
        assert after - before >= 150, (before, after)
    finally:
        c.shutdown()

    # The classic driver on the same scenario, for the report (not asserted).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cc = ClassicCluster(
            ["127.0.0.11"],
            protocol_version=4,
            execution_profiles={C_DEFAULT: CProfile(consistency_level=CCL.QUORUM)},
        )
        cs = cc.connect(freeze_ks)
    try:
        cinsert = cs.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
        for i in range(300):
            cs.execute(cinsert, (i, i))
        c_outcomes, c_frozen_at, c_thawed_at = _run(multidc_cluster, cs, cinsert)
        c_during, c_ok, c_failed, _ = _figures(c_outcomes, c_frozen_at, c_thawed_at)
    finally:
        cc.shutdown()

    share = ok / len(during)
    c_share = c_ok / len(c_during)
    reliability.record(
        "2",
        "node frozen 30 s (SIGSTOP), QUORUM writes at %d/s" % RATE,
        injected="SIGSTOP of node2 (dc1) for %.0f s, then SIGCONT" % FREEZE_S,
        requests=len(during),
        succeeded=ok,
        failed=failed,
        lost=0,
        hung=0,
        timeout_late_s={"min": late[0] if late else None, "max": late[-1] if late else None},
        classic={"requests": len(c_during), "succeeded": c_ok, "failed": c_failed, "share": round(c_share, 3)},
        notes="turbocql %.1f%% succeeded, the classic driver %.1f%%" % (100 * share, 100 * c_share),
    )
    print(
        "frozen node: turbocql %d/%d %s, classic %d/%d %s, late %s"
        % (ok, len(during), failed, c_ok, len(c_during), c_failed, late[:2] + late[-2:])
    )
    assert share >= 0.8, (share, failed, "classic: %.3f" % c_share)
    assert set(failed) <= {"OperationTimedOut"}, failed
    # Timeouts fire at the configured time: no earlier, and at most 0.5 s late.
    assert late and late[0] >= -0.01 and late[-1] < 0.5, late[:3] + late[-3:]


class _DownListener:
    """Notes when a host is called down (the same methods for both drivers' listeners)."""

    def __init__(self, address):
        self.address = address
        self.down = threading.Event()

    def on_down(self, host):
        if host.address == self.address:
            self.down.set()

    def on_up(self, host):
        pass

    def on_add(self, host):
        pass

    def on_remove(self, host):
        pass


def test_idle_heartbeat_settings_are_honoured(multidc_cluster):
    """``idle_heartbeat_interval`` / ``idle_heartbeat_timeout`` (classic arguments, 30 s each
    by default): an idle connection to a frozen node is found dead by its heartbeat and the
    node called down within interval + timeout + the reconnection's connect timeout; with the
    heartbeat off (interval 0) turbocql does not notice it. The classic driver's time to call
    it down with the same settings is recorded beside ours."""
    from cassandra.policies import HostStateListener as CListener

    from turbocql.policies import HostStateListener

    class Ours(_DownListener, HostStateListener):
        pass

    class Theirs(_DownListener, CListener):
        pass

    def cluster_of(heartbeat, classic):
        kwargs = dict(
            idle_heartbeat_interval=heartbeat, idle_heartbeat_timeout=1, connect_timeout=2, protocol_version=4
        )
        if classic:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return ClassicCluster(["127.0.0.11"], **kwargs), Theirs(FROZEN_ADDRESS)
        return Cluster(["127.0.0.11"], unresponsive_node_threshold=None, **kwargs), Ours(FROZEN_ADDRESS)

    made = [cluster_of(1, False), cluster_of(1, True), cluster_of(0, False)]
    try:
        for c, listener in made:
            c.register_listener(listener)
            c.connect()
        node = multidc_cluster.node(FROZEN_NODE)
        pid = node.pid or multidc_cluster.refresh().node(FROZEN_NODE).pid
        os.kill(pid, signal.SIGSTOP)
        try:
            _wait_all_threads_stopped(pid)
            t0 = time.monotonic()
            # 1 s interval + 1 s timeout, then a reconnection whose handshake the frozen
            # process never answers (2 s connect timeout); margin for a loaded machine.
            assert made[0][1].down.wait(12), "turbocql never called the frozen node down"
            ours_s = time.monotonic() - t0
            # The classic driver, for the record: it heartbeats idle connections only, and
            # how soon it calls the node down is measured, not asserted.
            theirs_s = time.monotonic() - t0 if made[1][1].down.wait(max(0.0, 20 - ours_s)) else None
            assert not made[2][1].down.is_set(), "called down with the heartbeat off"
        finally:
            os.kill(pid, signal.SIGCONT)
        reliability.record(
            "2",
            "idle connection to a frozen node, idle_heartbeat_interval=1, idle_heartbeat_timeout=1",
            injected="SIGSTOP of node2 with no load",
            detect_s=round(ours_s, 2),
            classic={"detect_s": round(theirs_s, 2) if theirs_s is not None else "not within 20 s"},
        )
    finally:
        for c, _ in made:
            c.shutdown()
        assert multidc_cluster.wait_for_state(FROZEN_NODE, "UP", timeout=120)
