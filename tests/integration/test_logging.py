"""Logging parity: a logging configuration written for the classic driver, filtering on its
logger names (``cassandra.cluster``, ``cassandra.pool``, ...), sees the same events at the
same levels from turbocql run through the compat shim.

On the 3-node cluster, node2 (dc1, a replica the default policy keeps a pool to) is stopped
and started again while the classic driver (in this process) and turbocql (in a child
process run by ``python -m turbocql.compat --allow-shadow``, with handlers on the
``cassandra`` logger only, as the user's program would set them) are connected. The records
of the events both drivers log about it (a host discovered, marked down, a failed
reconnection attempt, a successful one, the host maybe up, its pools established) are
reduced to (logger name, level, event, host address) and must be the same set for both. A
schema agreement wait that ends without agreement (node2 frozen) is compared the same way,
turbocql's loggers re-pointed in this process for the block.
"""

import json
import logging
import queue
import re
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

import turbocql_localdb as localdb
from tests.integration.conftest import drop_keyspace, frozen_nodes
from turbocql import _loggers

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(600)]

pytest.importorskip("cassandra.cluster")

from cassandra import policies as cpol  # noqa: E402 - the classic driver, after the skip
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT  # noqa: E402
from cassandra.cluster import Cluster as ClassicCluster  # noqa: E402
from cassandra.cluster import ExecutionProfile as CProfile  # noqa: E402
from cassandra.policies import ConstantReconnectionPolicy  # noqa: E402

N1 = "127.0.0.11"
NODE = 2
ADDRESS = "127.0.0.12"
WAIT_S = 180

#: The events compared: a record's message -> (event, the host's address).
EVENTS = [
    ("discovered", re.compile(r"New Cassandra host <Host: ([\d.]+):\d+.*> discovered")),
    ("marked down", re.compile(r"Host ([\d.]+):\d+ has been marked down")),
    ("reconnect failed", re.compile(r"Error attempting to reconnect to ([\d.]+):\d+, scheduling retry in")),
    ("reconnected", re.compile(r"Successful reconnection to ([\d.]+):\d+, marking node up")),
    ("may be up", re.compile(r"Host ([\d.]+):\d+ may be up; will prepare queries and open connection pool")),
    ("pools established", re.compile(r"Connection pools established for node ([\d.]+):\d+")),
    ("schema disagreement", re.compile(r"Node ([\d.]+)(?::\d+)? is reporting a schema disagreement")),
]


def events_of(records):
    """{(logger name, level name, event, address)} of the records that are compared events."""
    found = set()
    for name, level, message in records:
        for event, pattern in EVENTS:
            m = pattern.search(message)
            if m:
                found.add((name, level, event, m.group(1)))
    return found


class Records(logging.Handler):
    """Keeps (logger name, level name, message) of the records it is given."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records = []
        self.mutex = threading.Lock()

    def emit(self, record):
        with self.mutex:
            self.records.append((record.name, record.levelname, record.getMessage()))

    def has(self, event, address=ADDRESS):
        with self.mutex:
            return any(e == event and a == address for _n, _l, e, a in events_of(self.records))


def until(what, check, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting for %s" % what
        time.sleep(0.05)


def start_node(multidc_cluster):
    """Starts node2 once the process stopped before has let go of its ports (its process can
    be gone from the process table while its last threads still hold them)."""
    node = multidc_cluster.node(NODE)
    until("node2's ports to be free", lambda: not _ports_taken(node), timeout=60)
    multidc_cluster.start_node(NODE)


def _ports_taken(node):
    try:
        localdb.check_ports_free(node)
    except localdb.LocalDBError:
        return True
    return False


@pytest.fixture
def classic_records():
    """A handler on the classic driver's ``cassandra`` logger at INFO, as a user sets one."""
    logger = logging.getLogger("cassandra")
    handler, level = Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


# The program turbocql runs under the shim: it configures logging on the classic names only,
# connects, and reports (JSON lines on stdout) each record and each change of node2's state
# it sees; it ends when its stdin is closed.
CHILD = textwrap.dedent(
    """
    import json, logging, sys, threading

    out_lock = threading.Lock()

    def say(item):  # one write per line: the lines of two threads never interleave
        with out_lock:
            sys.stdout.write(json.dumps(item) + "\\n")
            sys.stdout.flush()

    class Out(logging.Handler):
        def emit(self, record):
            say({"record": [record.name, record.levelname, record.getMessage()]})

    classic = logging.getLogger("cassandra")
    classic.addHandler(Out())
    classic.setLevel(logging.INFO)
    stray = []  # records under turbocql's own names: there must be none under the shim
    class Stray(logging.Handler):
        def emit(self, record):
            stray.append(record.name)
    logging.getLogger("turbocql").addHandler(Stray())
    logging.getLogger("turbocql").setLevel(logging.INFO)

    from cassandra.cluster import Cluster
    from cassandra.policies import ConstantReconnectionPolicy

    cluster = Cluster(["%(n1)s"], reconnection_policy=ConstantReconnectionPolicy(1.0, None))
    session = cluster.connect()
    done = threading.Event()

    def watch():
        last = None
        while not done.is_set():
            hosts = [h for h in cluster.metadata.all_hosts() if h.address == "%(address)s"]
            state = "up" if hosts and hosts[0].is_up else "down"
            if state != last:
                say({"state": state})
                last = state
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    sys.stdin.read()
    done.set()
    watcher.join()
    cluster.shutdown()
    say({"stray": stray})
    """
) % {"n1": N1, "address": ADDRESS}


class Child:
    """The turbocql program, its records and the states of node2 it reported."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "turbocql.compat", "--allow-shadow", "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines = queue.Queue()
        self.records = []
        self.states = []
        self.stray = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def _drain(self):
        while True:
            try:
                item = self.lines.get_nowait()
            except queue.Empty:
                return
            if "record" in item:
                self.records.append(tuple(item["record"]))
            elif "state" in item:
                self.states.append(item["state"])
            elif "stray" in item:
                self.stray = item["stray"]

    def state(self):
        self._drain()
        assert self.proc.poll() is None, "the turbocql program ended: %s" % self.proc.stderr.read()
        return self.states[-1] if self.states else None

    def has(self, event, address=ADDRESS):
        self._drain()
        return any(e == event and a == address for _n, _l, e, a in events_of(self.records))

    def finish(self):
        self.proc.stdin.close()
        self.proc.wait(60)
        self.reader.join(10)
        self._drain()
        self.proc.stdout.close()
        assert self.proc.returncode == 0, self.proc.stderr.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc.stdin.close()
        self.proc.stderr.close()


def test_a_node_stopped_and_started_is_logged_as_the_classic_driver_logs_it(multidc_cluster, classic_records):
    child = Child()
    classic = ClassicCluster([N1], protocol_version=4, reconnection_policy=ConstantReconnectionPolicy(1.0, None))
    node_up = True
    try:
        session = classic.connect()

        def classic_host():
            return next(h for h in classic.metadata.all_hosts() if h.address == ADDRESS)

        def classic_pool_open():
            return any(h.address == ADDRESS and p["open_count"] > 0 for h, p in session.get_pool_state().items())

        until("the classic driver's pool to node2", classic_pool_open)
        until("turbocql to connect", lambda: child.state() == "up")

        assert multidc_cluster.stop_node(NODE)
        node_up = False
        until("the classic driver to see node2 down", lambda: not classic_host().is_up)
        until("turbocql to see node2 down", lambda: child.state() == "down")
        # A node that stays down is retried on the reconnection policy's schedule, and
        # each failed attempt is logged.
        until("the classic driver's failed reconnection", lambda: classic_records.has("reconnect failed"))
        until("turbocql's failed reconnection", lambda: child.has("reconnect failed"))

        start_node(multidc_cluster)
        node_up = True
        until("the classic driver to see node2 up", lambda: classic_host().is_up)
        until("turbocql to see node2 up", lambda: child.state() == "up")
        until("the classic driver's pools", lambda: classic_records.has("pools established"))
        until("turbocql's pools", lambda: child.has("pools established"))
        child.finish()
    finally:
        classic.shutdown()
        child.kill()
        if not node_up:
            start_node(multidc_cluster)
    assert multidc_cluster.wait_for_state(NODE, "UP", timeout=WAIT_S)

    classic_events, turbocql_events = events_of(classic_records.records), events_of(child.records)
    expected = {
        ("cassandra.cluster", "INFO", "discovered", "127.0.0.12"),
        ("cassandra.cluster", "INFO", "discovered", "127.0.0.13"),
        ("cassandra.cluster", "WARNING", "marked down", ADDRESS),
        ("cassandra.pool", "WARNING", "reconnect failed", ADDRESS),
        ("cassandra.cluster", "INFO", "may be up", ADDRESS),
        ("cassandra.cluster", "INFO", "pools established", ADDRESS),
    }
    # The classic driver logs "Successful reconnection" only when its own reconnection
    # attempt finds the node back before the cluster's UP event does (a race, either way
    # here); turbocql's pool always reconnects by itself and always logs it. Where logged,
    # it is the same record.
    reconnected = ("cassandra.pool", "INFO", "reconnected", ADDRESS)
    assert turbocql_events - {reconnected} == classic_events - {reconnected} == expected, (
        sorted(classic_records.records),
        sorted(child.records),
    )
    assert reconnected in turbocql_events
    # Under the shim, nothing is logged under turbocql's own names.
    assert child.stray == [], child.stray


def test_a_schema_agreement_wait_without_agreement_is_logged_as_the_classic_driver_logs_it(
    multidc_cluster, classic_records
):
    """Node2 frozen (SIGSTOP, a few seconds: not long enough to be called down), a keyspace
    created through node1: each driver's wait for schema agreement ends without it and logs
    the disagreement, naming the node it asked, on ``cassandra.cluster`` at WARNING."""
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import WhiteListRoundRobinPolicy

    name = "logging_" + uuid.uuid4().hex[:8]
    create = "CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}"
    outcomes = {}

    classic = ClassicCluster(
        [N1],
        execution_profiles={C_DEFAULT: CProfile(load_balancing_policy=cpol.WhiteListRoundRobinPolicy([N1]))},
        protocol_version=4,
        max_schema_agreement_wait=0,
    )
    try:
        session = classic.connect()
        classic_records.records.clear()
        with frozen_nodes(multidc_cluster, NODE):
            session.execute(create % (name + "_c"))
            outcomes["classic"] = classic.control_connection.wait_for_schema_agreement(wait_time=2)
        session.execute("DROP KEYSPACE %s" % (name + "_c"))
    finally:
        classic.shutdown()
    classic_events = {e for e in events_of(classic_records.records) if e[2] == "schema disagreement"}

    # turbocql in this process, its loggers re-pointed to the classic names for the block.
    classic_records.records.clear()
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([N1]))
    cluster = Cluster([N1], execution_profiles={EXEC_PROFILE_DEFAULT: profile}, max_schema_agreement_wait=0)
    _loggers.use_prefix(_loggers.CLASSIC_PREFIX)
    try:
        session = cluster.connect()
        with frozen_nodes(multidc_cluster, NODE):
            session.execute(create % (name + "_t"))
            outcomes["turbocql"] = cluster.control_connection.wait_for_schema_agreement(wait_time=2)
        drop_keyspace(session, name + "_t")
    finally:
        _loggers.use_prefix(_loggers.OWN_PREFIX)
        cluster.shutdown()
    turbocql_events = {e for e in events_of(classic_records.records) if e[2] == "schema disagreement"}

    assert outcomes == {"classic": False, "turbocql": False}
    assert classic_events == {("cassandra.cluster", "WARNING", "schema disagreement", N1)}, classic_records.records
    assert turbocql_events == classic_events, classic_records.records
