"""``max_schema_agreement_wait`` and ``control_connection_timeout`` on the 3-node cluster,
next to the classic driver.

A schema change is sent to node 1 while node 2 is frozen (SIGSTOP, a few seconds, less
than the failure detector needs to call it down): node 1 applies it and answers, and node 2
cannot report the new schema version. Both drivers then wait ``max_schema_agreement_wait``
seconds, log a warning and return the result with ``is_schema_agreed`` False (the change
is applied); with 0 neither waits. ``control_connection_timeout`` bounds each read of the
system tables: with every node frozen, a schema refresh fails after about that long.
"""

import logging
import time
import uuid

import pytest

from tests.integration.conftest import drop_keyspace
from tests.integration.conftest import frozen_nodes as frozen
from turbocql import OperationTimedOut
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.policies import WhiteListRoundRobinPolicy

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(300)]

pytest.importorskip("cassandra.cluster")

from cassandra import policies as cpol  # noqa: E402 - the classic driver, after the skip
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT  # noqa: E402
from cassandra.cluster import Cluster as ClassicCluster  # noqa: E402
from cassandra.cluster import ExecutionProfile as CProfile  # noqa: E402

N1 = "127.0.0.11"
WAIT = 2.0
# The wait of the clusters that check "agreement reached: no wait worth the name". A server
# loaded by other work can take WAIT itself to apply a change (the classic driver's took
# 2.12 s once, agreement reached), so a bound of WAIT cannot tell a slow server from a driver
# that waits its whole max_schema_agreement_wait needlessly; with this wait, one that did would
# take LONG_WAIT, more than twice the bound.
LONG_WAIT = 20.0


@pytest.fixture(scope="module")
def agreement_ks(multidc_cluster):
    c = Cluster([N1])
    s = c.connect()
    name = "agree_" + uuid.uuid4().hex[:8]
    s.execute("CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % name)
    yield name
    drop_keyspace(s, name)
    c.shutdown()


def _schema_change(session, ks):
    """A CREATE TABLE through ``execute_async``: (seconds taken, is_schema_agreed, rows)."""
    started = time.monotonic()
    future = session.execute_async("CREATE TABLE %s.t_%s (k int PRIMARY KEY, v int)" % (ks, uuid.uuid4().hex[:8]))
    rows = list(future.result())
    return time.monotonic() - started, future.is_schema_agreed, rows


def _turbocql(wait):
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([N1]))
    return Cluster([N1], execution_profiles={EXEC_PROFILE_DEFAULT: profile}, max_schema_agreement_wait=wait)


def _classic(wait):
    profile = CProfile(load_balancing_policy=cpol.WhiteListRoundRobinPolicy([N1]))
    return ClassicCluster(
        [N1], execution_profiles={C_DEFAULT: profile}, max_schema_agreement_wait=wait, protocol_version=4
    )


def test_a_schema_change_without_agreement_is_applied_with_a_warning(multidc_cluster, agreement_ks, caplog):
    outcomes = {}
    for name, make in (("classic", _classic), ("turbocql", _turbocql)):
        # Agreement reached: no wait worth the name, True.
        cluster = make(LONG_WAIT)
        try:
            took, agreed, rows = _schema_change(cluster.connect(), agreement_ks)
            assert agreed is True and rows == [] and took < LONG_WAIT / 2, (name, took)
        finally:
            cluster.shutdown()
        cluster = make(WAIT)
        try:
            session = cluster.connect()
            caplog.clear()
            with caplog.at_level(logging.WARNING), frozen(multidc_cluster, 2):
                outcomes[name] = _schema_change(session, agreement_ks)
                warned = [r for r in caplog.records if r.levelno == logging.WARNING and "schema" in r.getMessage()]
            assert warned, "%s logged no warning: %s" % (name, [r.getMessage() for r in caplog.records])
        finally:
            cluster.shutdown()
    for name, (took, agreed, rows) in outcomes.items():
        assert agreed is False, name
        assert rows == [], name
        assert WAIT * 0.9 <= took < WAIT + 5, "%s took %.2f s" % (name, took)
    # The change is applied: the table is there.
    check = _turbocql(WAIT)
    try:
        tables = check.connect().execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (agreement_ks,)
        )
        assert len(list(tables)) == 4
    finally:
        check.shutdown()


def test_a_zero_wait_does_not_wait(multidc_cluster, agreement_ks):
    for make in (_classic, _turbocql):
        cluster = make(0)
        try:
            session = cluster.connect()
            with frozen(multidc_cluster, 2):
                took, agreed, _ = _schema_change(session, agreement_ks)
            assert agreed is True and took < WAIT, (make.__name__, took)
        finally:
            cluster.shutdown()


@pytest.mark.parametrize("timeout", [1.0, 3.0])
def test_control_connection_timeout_bounds_each_system_table_read(multidc_cluster, timeout):
    cluster = Cluster([N1], control_connection_timeout=timeout)
    try:
        cluster.connect()
        with frozen(multidc_cluster, 1, 2, 3):
            started = time.monotonic()
            with pytest.raises(OperationTimedOut):
                cluster.refresh_schema_metadata(max_schema_agreement_wait=0)
            took = time.monotonic() - started
        assert timeout * 0.9 <= took < timeout + 1.5, took
    finally:
        cluster.shutdown()
