"""A node killed under load on the 3-node cluster: idempotent writes in flight are retried on
the other replicas and every one completes, as with the classic driver.

The scenario of the "Real clusters" issue: 6,000 idempotent prepared writes at QUORUM in
flight through ``execute_async`` (timeout 4 s), keyspace replicated 2 in dc1 and 1 in dc2,
``kill -9`` of a dc1 node while they run. The node is restarted at the end and the test
waits until it answers again, so the cluster is whole for the tests after it.
"""

import threading
import time
import uuid

import pytest

from tests.integration.conftest import drop_keyspace
from turbocql import ConsistencyLevel, OperationTimedOut, ReadTimeout
from turbocql.cluster import Cluster
from turbocql.concurrent import execute_concurrent_with_args
from turbocql.policies import HostStateListener

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(600)]

WRITES = 6000


@pytest.fixture
def ring_keyspace(multidc_cluster):
    c = Cluster(["127.0.0.11"])
    s = c.connect()
    name = "failover_" + uuid.uuid4().hex[:8]
    s.execute("CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % name)
    s.execute("CREATE TABLE %s.t (k int PRIMARY KEY, v text)" % name)
    yield name
    try:
        drop_keyspace(s, name)
    finally:
        c.shutdown()


class Listener(HostStateListener):
    """Records host events as (event, address)."""

    def __init__(self):
        self.events = []
        self.changed = threading.Condition()

    def _note(self, what, host):
        with self.changed:
            self.events.append((what, host.address))
            self.changed.notify_all()

    def on_up(self, host):
        self._note("up", host)

    def on_down(self, host):
        self._note("down", host)

    # The classic base raises for the events a listener does not handle.
    def on_add(self, host):
        pass

    def on_remove(self, host):
        pass

    def wait_for(self, event, timeout):
        with self.changed:
            return self.changed.wait_for(lambda: event in self.events, timeout)


def _count_rows(session, within=90.0):
    """count(*) of the table, asked again while the servers have not yet called the killed
    node down (a coordinator may wait on it: ReadTimeout) until ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            return session.execute("SELECT count(*) FROM t", timeout=30).one()[0]
        except (ReadTimeout, OperationTimedOut):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_node_killed_with_idempotent_writes_in_flight_loses_none(multidc_cluster, ring_keyspace):
    cluster = Cluster(["127.0.0.11"])
    listener = Listener()
    cluster.register_listener(listener)
    session = cluster.connect(ring_keyspace)
    restarted = False
    try:
        insert = session.prepare("INSERT INTO t (k, v) VALUES (?, ?)")
        insert.is_idempotent = True
        insert.consistency_level = ConsistencyLevel.QUORUM
        # The nodes' write path warmed up first (a cluster the fixture has just started
        # answers a burst several times slower: a cold coordinator alone can take more
        # than the 4 s timeout, with or without a dead replica). Keys of their own, deleted.
        warm = execute_concurrent_with_args(session, insert, [(-k - 1, "w") for k in range(30000)], concurrency=200)
        assert all(ok for ok, _ in warm)
        session.execute("TRUNCATE t", timeout=60)
        done = threading.Event()
        lock = threading.Lock()
        outcome = {"ok": 0, "errors": []}

        def finished():
            if outcome["ok"] + len(outcome["errors"]) == WRITES:
                done.set()

        def ok(_rows):
            with lock:
                outcome["ok"] += 1
                finished()

        def failed(exc):
            with lock:
                outcome["errors"].append(exc)
                finished()

        killed = False
        for k in range(WRITES):
            if k == WRITES // 4 and not killed:
                # A dc1 replica (not the contact point) dies with ~1,500 writes sent.
                assert multidc_cluster.kill_node(2)
                killed = True
            future = session.execute_async(insert, (k, "v%d" % k), timeout=4.0)
            future.add_callbacks(ok, failed)
        assert done.wait(120), "writes still pending: %d done" % (outcome["ok"] + len(outcome["errors"]))
        errors = outcome["errors"]
        kinds = sorted({type(e).__name__ for e in errors})
        assert not errors, "%d of %d writes failed (%s); first: %r" % (len(errors), WRITES, kinds, errors[0])
        assert outcome["ok"] == WRITES
        assert _count_rows(session) == WRITES
        # The engine saw node 2 go down, and sees it come back (listeners hear both).
        assert listener.wait_for(("down", "127.0.0.12"), 60), listener.events
        assert not cluster.metadata.get_host("127.0.0.12").is_up
        multidc_cluster.start_node(2)
        restarted = True
        assert listener.wait_for(("up", "127.0.0.12"), 120), listener.events
        # Host.is_up is the engine's: true once its pool to the node has connections again.
        deadline = time.monotonic() + 60
        while not cluster.metadata.get_host("127.0.0.12").is_up:
            assert time.monotonic() < deadline, "node 2 never came back into the engine's pools"
            time.sleep(0.1)
    finally:
        cluster.shutdown()
        if not restarted:
            multidc_cluster.start_node(2)
        assert multidc_cluster.wait_for_state(2, "UP", timeout=180)
