"""A user's Python callbacks never hold up other requests: a retry policy subclass and a
host-filter predicate that wait (for a lock, a service, the GIL) keep only their own
request waiting; every other request of every session goes on meanwhile.

Each callback here waits on a gate that the test opens only after 2,000 other requests
have completed. With the callback on the engine's I/O thread (one thread by default,
driving every connection of every session) those requests could not complete and the
callback would give up waiting: the test fails. The authenticator's case is in
``test_auth``; the latency figures are in ``benchmarks/callbacks.py``.
"""

import threading

import pytest

from tests.conftest import HOST, PORT
from tests.integration._traffic import Gate, run_traffic, traffic_cluster
from turbocql import ConsistencyLevel, Unavailable
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.policies import HostFilterPolicy, RetryPolicy, RoundRobinPolicy

pytestmark = pytest.mark.timeout(120)


class WaitingRetryPolicy(RetryPolicy):
    """Waits on the gate on each Unavailable, then gives the error back."""

    def __init__(self, gate):
        self.gate = gate
        self.threads = []

    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        self.threads.append(threading.current_thread().name)
        self.gate.hold()
        return self.RETHROW, None


def test_retry_policy_that_waits_holds_up_only_its_own_request(cassandra):
    gate = Gate()
    policy = WaitingRetryPolicy(gate)
    profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(RoundRobinPolicy()),
        # THREE on one node: Unavailable, so the policy is asked.
        "three": ExecutionProfile(RoundRobinPolicy(), policy, consistency_level=ConsistencyLevel.THREE),
    }
    with Cluster([HOST], port=PORT, execution_profiles=profiles) as cluster:
        session = cluster.connect()
        failing = session.execute_async("SELECT key FROM system.local", execution_profile="three")
        assert gate.entered.wait(10), "the retry policy was never asked"
        # The same session and another cluster's: every request completes while it waits.
        assert run_traffic(session) == 2000
        with traffic_cluster() as other:
            assert run_traffic(other.connect()) == 2000
        gate.opened.set()
        with pytest.raises(Unavailable):
            failing.result(timeout=30)
    assert gate.outcomes == [True], "the retry policy gave up waiting: the traffic was held up"
    # Called off the application's thread (the engine's), and still answered in time.
    assert policy.threads and policy.threads[0] != threading.main_thread().name


def test_host_filter_predicate_that_waits_holds_up_only_its_own_request(cassandra):
    gate = Gate()
    engine_calls = []

    def predicate(host):
        # Python's own calls (at connect, from the application's thread) answer at once;
        # the engine's (when a request first meets the host) wait on the gate.
        if threading.current_thread() is not threading.main_thread():
            engine_calls.append(host.address)
            gate.hold()
        return True

    policy = HostFilterPolicy(RoundRobinPolicy(), predicate)
    with traffic_cluster() as busy:
        busy_session = busy.connect()
        with Cluster([HOST], port=PORT, execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(policy)}) as cluster:
            session = cluster.connect()
            filtered = session.execute_async("SELECT key FROM system.local")
            assert gate.entered.wait(10), "the engine never asked the predicate"
            assert run_traffic(busy_session) == 2000
            gate.opened.set()
            assert filtered.result(timeout=30).one().key == "local"
    assert engine_calls == [HOST]
    assert gate.outcomes == [True], "the predicate gave up waiting: the traffic was held up"
