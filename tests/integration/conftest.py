"""Fixtures for tests against the real local Cassandra.

The node is found if it already runs (the CI script starts it with `turbocql localdb
start`), or started here and stopped at the end of the run.
"""

import contextlib
import os
import signal
import time
import uuid
import warnings

import pytest

import turbocql_localdb as localdb
from tests.conftest import HOST, PORT
from tests.integration._settings import Unreadable, marked_skip_reason

# Another run of the same tests against the same node at the same time (scripts/arm64.sh
# beside CI's test command) names its own keyspace, so that neither sees the other's rows.
KEYSPACE = os.environ.get("TURBOCQL_TEST_KEYSPACE", "turbocql_test")


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def cassandra():
    """The running node (`localdb.Node`), started if needed."""
    started = False
    if not localdb.cql_answers(HOST, PORT):
        localdb.start(port=PORT, heap=os.environ.get("TURBOCQL_TEST_HEAP", "1G"), timeout=300)
        started = True
    node = localdb.status(port=PORT)
    yield node
    if started:
        localdb.stop(port=PORT)


@pytest.fixture(scope="session")
def cluster(cassandra):
    from turbocql.cluster import Cluster

    c = Cluster([HOST], port=PORT)
    yield c
    c.shutdown()


@pytest.fixture(scope="session")
def keyspace(cluster):
    s = cluster.connect()
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}" % KEYSPACE
    )
    s.shutdown()
    return KEYSPACE


@pytest.fixture(scope="session")
def node_settings(cluster):
    """The node's settings, read once from ``system_views.settings``: a dict name -> value
    (``{"materialized_views_enabled": "true", ...}``), or ``_settings.Unreadable`` if the
    node refuses the query. Tests that need a setting are marked ``requires_setting``."""
    from turbocql import DriverException

    s = cluster.connect()
    try:
        return {row.name: row.value for row in s.execute("SELECT name, value FROM system_views.settings")}
    except DriverException as exc:
        return Unreadable("%s: %s" % (type(exc).__name__, exc))
    finally:
        s.shutdown()


@pytest.fixture(autouse=True)
def _required_settings(request):
    """Skips a test marked ``requires_setting(NAME[, VALUE])`` when the node's cassandra.yaml
    does not have it (tests/integration/_settings.py). Only a marked test reads the settings.
    Function-scoped: a module-scoped fixture that needs a setting calls
    ``_settings.require_setting`` itself, as it is set up before this runs."""
    if request.node.get_closest_marker("requires_setting") is None:
        return
    reason = marked_skip_reason(request.node, request.getfixturevalue("node_settings"))
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture
def session(cluster, keyspace):
    s = cluster.connect(keyspace)
    yield s
    s.shutdown()


@pytest.fixture
def table(session):
    """A fresh table (k text PRIMARY KEY, a text, b text) in the test keyspace."""
    name = "t_" + uuid.uuid4().hex[:12]
    session.execute("CREATE TABLE %s (k text PRIMARY KEY, a text, b text)" % name)
    yield name
    session.execute("DROP TABLE IF EXISTS %s" % name)


def _wait_all_threads_stopped(pid, timeout=5.0):
    """SIGSTOP reaches a multi-threaded process's threads asynchronously: wait until every
    thread is stopped, so that no request can be answered after this returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                continue
        if states and all(st in ("T", "t", "Z", "X") for st in states):
            return
        time.sleep(0.005)
    raise AssertionError("Cassandra (pid %d) did not stop within %.1f s" % (pid, timeout))


@contextlib.contextmanager
def unavailable_on_one_node(consistency):
    """Expects what the classic driver raises for an Unavailable on a one-node cluster: its
    default RetryPolicy sends the request to the next host, and there is none, so
    NoHostAvailable holding the node's Unavailable. Yields a list that then holds it."""
    from turbocql import Unavailable
    from turbocql.cluster import NoHostAvailable

    got = []
    with pytest.raises(NoHostAvailable) as info:
        yield got
    errors = list(info.value.errors.values())
    assert len(errors) == 1 and isinstance(errors[0], Unavailable), info.value
    assert errors[0].consistency == consistency, errors[0]
    got.append(errors[0])


@contextlib.contextmanager
def paused(node):
    """Freezes the Cassandra process (SIGSTOP) for the duration of the block."""
    pid = node.pid
    if not pid:
        pytest.skip("the Cassandra process id is unknown (node not started by turbocql localdb)")
    os.kill(pid, signal.SIGSTOP)
    try:
        _wait_all_threads_stopped(pid)
        yield
    finally:
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.2)


@contextlib.contextmanager
def frozen_nodes(multidc_cluster, *ks):
    """Freezes nodes ``ks`` (numbers, 1-3) of the 3-node cluster (SIGSTOP) for the block, every
    thread of each stopped before it runs; always thawed."""
    pids = []
    for k in ks:
        pid = multidc_cluster.node(k).pid or multidc_cluster.refresh().node(k).pid
        assert pid, "node %s has no pid" % k
        pids.append(pid)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        for pid in pids:
            _wait_all_threads_stopped(pid)
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


# --------------------------------------------------------------------------
# A local cluster of three nodes in two datacenters (tests marked `multinode`)

MULTIDC_FIRST_ADDRESS = "127.0.0.11"
MULTIDC_LAYOUT = {"nodes": 3, "dcs": 2, "racks": 1, "first_address": MULTIDC_FIRST_ADDRESS}


def cqlengine_in_keyspace(keyspace):
    """For a module fixture: cqlengine's default connection to the node, with ``keyspace``
    (created) as its default keyspace; yields ``turbocql.cqlengine.connection``, then drops
    the keyspace and unregisters the connection."""
    os.environ["CQLENG_ALLOW_SCHEMA_MANAGEMENT"] = "1"
    from turbocql.cqlengine import connection, management

    connection.setup([HOST], keyspace, port=PORT, protocol_version=4)
    management.create_keyspace_simple(keyspace, 1)
    yield connection
    management.drop_keyspace(keyspace)
    connection.unregister_connection("default")


def drop_keyspace(session, name):
    """Drops a multi-node test's keyspace. Cleanup only: a node that was just killed, frozen or
    restarted can hold the coordinator's DROP (its flush and snapshot) past the request
    timeout; the test has asserted what it exercises, and its randomly named keyspace harms
    no other test, so a timeout here is a warning, not a failure."""
    from turbocql import OperationTimedOut

    try:
        session.execute("DROP KEYSPACE IF EXISTS %s" % name, timeout=60)
    except OperationTimedOut as exc:
        warnings.warn("DROP KEYSPACE %s timed out, left behind: %s" % (name, exc), stacklevel=2)


@pytest.fixture(scope="session")
def multidc_cluster():
    """A running 3-node cluster on 127.0.0.11-13 (dc1: node1, node2; dc2: node3; rack1), as a
    `localdb.LocalCluster`.

    A cluster already running there is used (wherever it was started); otherwise the nodes
    that do not run are started here, with the heap $TURBOCQL_TEST_CLUSTER_HEAP (default
    768M) each, and only those are stopped at the end of the session, even when tests fail.
    It coexists with the single node on 127.0.0.1: each node binds its own address."""
    found = localdb.find_cluster(first_address=MULTIDC_FIRST_ADDRESS)
    if found is not None:
        layout = {
            "nodes": len(found.nodes),
            "dcs": found.dcs,
            "racks": found.racks,
            "first_address": found.first_address,
        }
        if layout != MULTIDC_LAYOUT:
            pytest.fail("the localdb cluster in %s is %s, not %s" % (found.dir, layout, MULTIDC_LAYOUT))
    cluster = localdb.start_cluster(
        **MULTIDC_LAYOUT,
        heap=os.environ.get("TURBOCQL_TEST_CLUSTER_HEAP", localdb.DEFAULT_CLUSTER_HEAP),
        dir=found.dir if found is not None else None,
        timeout=300,
    )
    started = list(cluster.started)
    try:
        yield cluster
    finally:
        if started and len(started) == len(cluster.nodes):
            cluster.stop()  # every node at once
        else:
            for name in started:
                cluster.stop_node(name)


# --------------------------------------------------------------------------
# TLS nodes (`localdb start --tls`): 9044 without client certificates, 9045 requiring them

# A run on a node of its own (scripts/arm64.sh in CI) may still share the TLS nodes.
TLS_PORT = int(os.environ.get("TURBOCQL_TEST_TLS_PORT", PORT + 2))
MTLS_PORT = int(os.environ.get("TURBOCQL_TEST_MTLS_PORT", PORT + 3))


def _tls_node(port, require_client_auth):
    """A running TLS node on 127.0.0.1:``port`` in localdb's default directory for that port
    (its certificates kept between runs), stopped at the end only if started here."""
    node = localdb.start(
        port=port,
        heap=os.environ.get("TURBOCQL_TEST_TLS_HEAP", "768M"),
        tls=True,
        require_client_auth=require_client_auth,
        timeout=300,
    )
    return node, not node.already_running


@pytest.fixture(scope="session")
def tls_node(cassandra):
    node, started = _tls_node(TLS_PORT, False)
    yield node
    if started:
        localdb.stop(port=TLS_PORT)


@pytest.fixture(scope="session")
def mtls_node(cassandra):
    node, started = _tls_node(MTLS_PORT, True)
    yield node
    if started:
        localdb.stop(port=MTLS_PORT)


# --------------------------------------------------------------------------
# The fault proxy: toxiproxy (turbocql_localdb.toxiproxy), built with Go on first use

TOXIPROXY_PORT = 8475  # its API, on 127.0.0.1 (not toxiproxy's default 8474)
PROXY_PORT = 19042  # a node's proxy listens on the node's own address at this port


@pytest.fixture(scope="session")
def toxiproxy():
    """A client (`toxiproxy.Toxiproxy`) of the toxiproxy server on 127.0.0.1:8475: one found
    answering there, else one built (the first time: `go install`, 25-40 s here) and started
    here, and stopped at the end of the session."""
    from turbocql_localdb import toxiproxy as tp

    api = tp.find_server(port=TOXIPROXY_PORT)
    server = None
    if api is None:
        server = tp.start_server(port=TOXIPROXY_PORT)
        api = server.client()
    try:
        yield api
    finally:
        if server is not None:
            server.stop()


@pytest.fixture(scope="session")
def _node_proxy(toxiproxy, cassandra):
    proxy = toxiproxy.create_proxy(
        "turbocql_node1", listen="%s:%d" % (HOST, PROXY_PORT), upstream="%s:%d" % (HOST, PORT), replace=True
    )
    yield proxy
    proxy.delete()


@pytest.fixture
def proxied_node(_node_proxy):
    """The proxy 127.0.0.1:19042 -> the single node (`cassandra`), without toxics and enabled
    at the start and at the end of each test (`toxiproxy.Proxy`)."""
    _node_proxy.reset()
    yield _node_proxy
    _node_proxy.reset()
