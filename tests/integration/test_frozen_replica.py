"""A replica frozen (SIGSTOP) on the 3-node cluster makes the server answer with read and
write timeouts: a user's retry policy hears them with the classic arguments (compared with
the classic driver on the same frozen node), its decision takes effect, and speculative
execution rescues idempotent statements only.

Node 2 (127.0.0.12, dc1) is frozen for a few seconds per test, less than the failure
detector needs to call it down, and always thawed, so the cluster stays whole.
"""

import time
import uuid
import warnings

import pytest
from cassandra import ConsistencyLevel as CCL
from cassandra import policies as cpol
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT
from cassandra.cluster import Cluster as ClassicCluster
from cassandra.cluster import ExecutionProfile as CProfile

from tests.integration.conftest import drop_keyspace, frozen_nodes
from turbocql import ConsistencyLevel, OperationTimedOut, ReadTimeout, WriteTimeout
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.policies import ConstantSpeculativeExecutionPolicy, RetryPolicy, WhiteListRoundRobinPolicy
from turbocql.query import SimpleStatement

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(300)]

COORDINATOR = "127.0.0.11"


@pytest.fixture(scope="module")
def frozen_ks(multidc_cluster):
    c = Cluster([COORDINATOR])
    s = c.connect()
    name = "frozen_" + uuid.uuid4().hex[:8]
    # A node frozen by the test before may still be catching up: wait for the nodes to
    # agree on the schema, and give the DDL (whose agreement wait counts toward its
    # timeout) the time a loaded CI machine needs.
    assert c.metadata.wait_for_schema_agreement(120)
    ddl = (
        "CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % name,
        "CREATE TABLE %s.t (k int PRIMARY KEY, v int)" % name,
    )
    for stmt in ddl:
        s.execute(stmt, timeout=120)
    s.execute("INSERT INTO %s.t (k, v) VALUES (1, 1)" % name)
    yield name
    drop_keyspace(s, name)
    c.shutdown()


def frozen(multidc_cluster, k=2):
    return frozen_nodes(multidc_cluster, k)


class Recorder:
    """Mixin: records each call's arguments (retry_num included) and answers RETHROW."""

    def _record(self, name, kwargs):
        self.calls.append((name, {k: v for k, v in kwargs.items() if k != "error"}))
        return self.RETHROW, None

    def on_read_timeout(self, query, **kwargs):
        return self._record("read_timeout", kwargs)

    def on_write_timeout(self, query, **kwargs):
        return self._record("write_timeout", kwargs)

    def on_unavailable(self, query, **kwargs):
        return self._record("unavailable", kwargs)


class TurboRecorder(Recorder, RetryPolicy):
    def __init__(self):
        self.calls = []


class ClassicRecorder(Recorder, cpol.RetryPolicy):
    def __init__(self):
        self.calls = []


def _classic(policy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        profile = CProfile(WhiteListRoundRobinPolicy_classic(), policy, request_timeout=20)
        return ClassicCluster([COORDINATOR], protocol_version=4, execution_profiles={C_DEFAULT: profile})


def WhiteListRoundRobinPolicy_classic():
    return cpol.WhiteListRoundRobinPolicy([COORDINATOR])


def test_timeouts_reach_a_users_retry_policy_as_in_the_classic_driver(multidc_cluster, frozen_ks):
    ours, theirs = TurboRecorder(), ClassicRecorder()
    profile = ExecutionProfile(WhiteListRoundRobinPolicy([COORDINATOR]), ours, request_timeout=20)
    tc = Cluster([COORDINATOR], execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    cc = _classic(theirs)
    ts, cs = tc.connect(frozen_ks), cc.connect(frozen_ks)
    try:
        write_t = SimpleStatement("INSERT INTO t (k, v) VALUES (2, 2)", consistency_level=ConsistencyLevel.ALL)
        read_t = SimpleStatement("SELECT v FROM t WHERE k = 1", consistency_level=ConsistencyLevel.ALL)
        from cassandra.query import SimpleStatement as CStatement

        write_c = CStatement("INSERT INTO t (k, v) VALUES (2, 2)", consistency_level=CCL.ALL)
        read_c = CStatement("SELECT v FROM t WHERE k = 1", consistency_level=CCL.ALL)
        # One freeze per pair of requests (a write times out after 2 s on the server, a
        # read after 5 s), short enough that the other nodes never call node 2 down.
        with frozen(multidc_cluster):
            with pytest.raises(WriteTimeout) as wt:
                ts.execute(write_t)
            with pytest.raises(Exception) as cwt:
                cs.execute(write_c)
        with frozen(multidc_cluster):
            with pytest.raises(ReadTimeout):
                ts.execute(read_t)
        with frozen(multidc_cluster):
            with pytest.raises(Exception) as crt:
                cs.execute(read_c)
        assert type(cwt.value).__name__ == "WriteTimeout"
        assert type(crt.value).__name__ == "ReadTimeout"
        assert wt.value.consistency == ConsistencyLevel.ALL
        # The same calls with the same arguments: consistency, required/received
        # responses, write type, retry_num. Not data_retrieved: whether the replica asked for
        # the data (rather than a digest) answered is the coordinator's choice per request
        # (its dynamic snitch), so two requests, one per driver, may differ (seen in CI).
        assert [name for name, _ in ours.calls] == ["write_timeout", "read_timeout"]

        def comparable(calls):
            return [(name, {k: v for k, v in args.items() if k != "data_retrieved"}) for name, args in calls]

        assert comparable(ours.calls) == comparable(theirs.calls)
        assert isinstance(ours.calls[1][1]["data_retrieved"], bool)
    finally:
        tc.shutdown()
        cc.shutdown()


def test_retry_decision_on_a_timeout_takes_effect(multidc_cluster, frozen_ks):
    class RetryOnceAtOne(RetryPolicy):
        def __init__(self):
            self.calls = 0

        def on_write_timeout(self, query, consistency, write_type, required_responses, received_responses, retry_num):
            self.calls += 1
            if retry_num == 0:
                return self.RETRY, ConsistencyLevel.ONE  # the downgraded write succeeds
            return self.RETHROW, None

    policy = RetryOnceAtOne()
    profile = ExecutionProfile(WhiteListRoundRobinPolicy([COORDINATOR]), policy, request_timeout=20)
    c = Cluster([COORDINATOR], execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    s = c.connect(frozen_ks)
    try:
        with frozen(multidc_cluster):
            s.execute(SimpleStatement("INSERT INTO t (k, v) VALUES (3, 3)", consistency_level=ConsistencyLevel.ALL))
        assert policy.calls == 1
        assert s.execute("SELECT v FROM t WHERE k = 3").one().v == 3
    finally:
        c.shutdown()


def test_speculative_execution_rescues_idempotent_statements_only(multidc_cluster, frozen_ks):
    """Node 2 is first in every plan (a plan of the user's own: node 2, then node 1); with it
    frozen, an idempotent read is answered by node 1 after the speculative delay, a
    non-idempotent one waits for its timeout."""
    from turbocql.policies import RoundRobinPolicy

    class Node2First(RoundRobinPolicy):
        def make_query_plan(self, working_keyspace=None, query=None):
            hosts = sorted(self._live_hosts, key=lambda h: h.address != "127.0.0.12")
            return [h for h in hosts if h.datacenter == "dc1"]

    profile = ExecutionProfile(
        Node2First(), speculative_execution_policy=ConstantSpeculativeExecutionPolicy(0.2, 2), request_timeout=3
    )
    c = Cluster([COORDINATOR], execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    s = c.connect(frozen_ks)
    try:
        idempotent = SimpleStatement("SELECT v FROM t WHERE k = 1", is_idempotent=True)
        plain = SimpleStatement("SELECT v FROM t WHERE k = 1")
        with frozen(multidc_cluster):
            t0 = time.monotonic()
            assert s.execute(idempotent).one().v == 1
            rescued = time.monotonic() - t0
            t0 = time.monotonic()
            with pytest.raises(OperationTimedOut):
                s.execute(plain, timeout=1.5)
            waited = time.monotonic() - t0
        assert rescued < 1.0, rescued
        assert waited >= 1.4, waited
    finally:
        c.shutdown()
