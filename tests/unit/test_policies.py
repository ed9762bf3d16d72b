"""Policies and execution profiles without a server: what each classic policy becomes in
the engine, and the decisions and rules that must equal the classic driver's (the classic
driver, installed in the test venv, is the oracle)."""

import itertools
import warnings

import pytest
from cassandra import cluster as classic_cluster
from cassandra import policies as classic

from turbocql import UnsupportedOperation, _engine
from turbocql import policies as ours
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile

CL = range(0, 11)


def test_builtin_load_balancing_policies_become_engine_policies():
    cases = {
        ours.RoundRobinPolicy(): "RoundRobin",
        ours.DCAwareRoundRobinPolicy("dc2", 1): 'DcAware { local_dc: Some("dc2"), local_rack: None, remote_hosts: 1 }',
        ours.RackAwareRoundRobinPolicy("dc1", "r1"): 'local_rack: Some("r1")',
        ours.TokenAwarePolicy(ours.DCAwareRoundRobinPolicy("dc1"), shuffle_replicas=True): "shuffle: true",
        ours.WhiteListRoundRobinPolicy(["127.0.0.2"]): "Allow([127.0.0.2])",
        ours.HostFilterPolicy(ours.RoundRobinPolicy(), lambda h: True): "Predicate",
        ours.DefaultLoadBalancingPolicy(ours.RoundRobinPolicy()): "RoundRobin",
    }
    for policy, expected in cases.items():
        engine = policy._engine_policy()
        assert isinstance(engine, _engine.LoadBalancing)
        assert expected in repr(engine), (policy, repr(engine))


def test_own_make_query_plan_is_asked_per_request():
    class Mine(ours.RoundRobinPolicy):
        def make_query_plan(self, working_keyspace=None, query=None):
            return iter(())

    class Bare(ours.LoadBalancingPolicy):
        pass

    for policy in (Mine(), Bare(), ours.TokenAwarePolicy(Mine()), ours.HostFilterPolicy(Mine(), bool)):
        engine = policy._engine_policy()
        assert engine.is_custom, policy
        assert "Custom" in repr(engine)
    assert not ours.TokenAwarePolicy(ours.RoundRobinPolicy())._engine_policy().is_custom


def test_retry_policies_become_the_engines_and_subclasses_are_called():
    assert "Default" in repr(ours.RetryPolicy()._engine_policy())
    assert "Fallthrough" in repr(ours.FallthroughRetryPolicy()._engine_policy())
    assert "Fallthrough" in repr(ours.NeverRetryPolicy()._engine_policy())
    assert "Downgrading" in repr(ours.DowngradingConsistencyRetryPolicy()._engine_policy())

    class Mine(ours.RetryPolicy):
        def on_unavailable(self, *args, **kwargs):
            return self.RETHROW, None

    class Plain(ours.RetryPolicy):  # overrides nothing: still the built-in
        pass

    assert "Python" in repr(Mine()._engine_policy())
    assert "Default" in repr(Plain()._engine_policy())


def _grid():
    yield from itertools.product(CL, (1, 2, 3), (0, 1, 2, 3), (0, 1))


@pytest.mark.parametrize("name", ["RetryPolicy", "FallthroughRetryPolicy", "DowngradingConsistencyRetryPolicy"])
def test_retry_decisions_equal_the_classic_drivers(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = getattr(classic, name)()
    mine = getattr(ours, name)()
    for cl, required, received, retry_num in _grid():
        for data in (True, False):
            args = (None, cl, required, received, data, retry_num)
            assert mine.on_read_timeout(*args) == theirs.on_read_timeout(*args), args
        for write_type in range(8):
            wt_name = ["SIMPLE", "BATCH", "UNLOGGED_BATCH", "COUNTER", "BATCH_LOG", "CAS", "VIEW", "CDC"][write_type]
            args = (None, cl, write_type, required, received, retry_num)
            classic_args = (None, cl, getattr(classic.WriteType, wt_name), required, received, retry_num)
            assert mine.on_write_timeout(*args) == theirs.on_write_timeout(*classic_args), args
        args = (None, cl, required, received, retry_num)
        assert mine.on_unavailable(*args) == theirs.on_unavailable(*args), args
        args = (None, cl, Exception("x"), retry_num)
        assert mine.on_request_error(*args) == theirs.on_request_error(*args), args


def test_reconnection_schedules_equal_the_classic_drivers():
    mine, theirs = ours.ConstantReconnectionPolicy(2.0, 5), classic.ConstantReconnectionPolicy(2.0, 5)
    assert list(mine.new_schedule()) == list(theirs.new_schedule())
    assert isinstance(mine._engine_policy(), _engine.Reconnection)
    # The classic exponential schedule adds up to 15% jitter to each delay.
    mine = ours.ExponentialReconnectionPolicy(1.0, 60.0, 10)
    theirs = classic.ExponentialReconnectionPolicy(1.0, 60.0, 10)
    a, b = list(mine.new_schedule()), list(theirs.new_schedule())
    assert len(a) == len(b) == 10
    assert all(abs(x - y) <= 0.16 * x for x, y in zip(a, b)), (a, b)
    assert isinstance(mine._engine_policy(), _engine.Reconnection)

    class Mine(ours.ReconnectionPolicy):
        def new_schedule(self):
            return iter([1])

    with pytest.raises(UnsupportedOperation):
        Cluster(reconnection_policy=Mine())


def test_speculative_execution_policy():
    assert ours.ConstantSpeculativeExecutionPolicy(0.05, 2)._engine_policy() == (0.05, 2)
    assert ours.NoSpeculativeExecutionPolicy()._engine_policy() is None
    plan = ours.ConstantSpeculativeExecutionPolicy(0.1, 2).new_plan("ks", None)
    assert [plan.next_execution(None) for _ in range(3)] == [0.1, 0.1, -1]


class _Host:
    def __init__(self, address, dc, rack="r1"):
        self.address, self.datacenter, self.rack = address, dc, rack
        self.endpoint = address

    def __lt__(self, other):
        return self.address < other.address

    def __eq__(self, other):
        return self.address == getattr(other, "address", other)

    def __hash__(self):
        return hash(self.address)


def test_dc_aware_distance_and_plan_equal_the_classic_drivers():
    hosts = [_Host("10.0.0.1", "dc1"), _Host("10.0.0.2", "dc1"), _Host("10.0.0.3", "dc2"), _Host("10.0.0.4", "dc2")]
    for local_dc, remote in (("dc1", 0), ("dc1", 1), ("dc2", 2)):
        mine, theirs = ours.DCAwareRoundRobinPolicy(local_dc, remote), classic.DCAwareRoundRobinPolicy(local_dc, remote)
        mine.populate(None, hosts)
        theirs.populate(None, sorted(hosts, key=lambda h: h.datacenter))
        for h in hosts:
            if h.datacenter == local_dc:
                assert mine.distance(h) == theirs.distance(h) == classic.HostDistance.LOCAL
        # Which remote hosts are used is the classic driver's set order, ours address order:
        # the same number of them per remote DC.
        for dc in ("dc1", "dc2"):
            if dc != local_dc:
                n_mine = sum(mine.distance(h) == ours.HostDistance.REMOTE for h in hosts if h.datacenter == dc)
                n_theirs = sum(theirs.distance(h) == classic.HostDistance.REMOTE for h in hosts if h.datacenter == dc)
                assert n_mine == n_theirs == min(remote, 2)
        plan_mine, plan_theirs = list(mine.make_query_plan()), list(theirs.make_query_plan())
        assert len(plan_mine) == len(plan_theirs)
        assert sorted(h.address for h in plan_mine if h.datacenter == local_dc) == sorted(
            h.address for h in plan_theirs if h.datacenter == local_dc
        )


def test_profile_rules_equal_the_classic_drivers():
    """The legacy/profile mixing rules, with the classic driver's messages."""

    def both(fn_ours, fn_theirs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            outcomes = []
            for fn in (fn_ours, fn_theirs):
                try:
                    fn()
                    outcomes.append(None)
                except Exception as e:
                    outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] == outcomes[1]
        return outcomes[0]

    # Legacy parameters with profiles.
    err = both(
        lambda: Cluster(
            load_balancing_policy=ours.RoundRobinPolicy(), execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile()}
        ),
        lambda: classic_cluster.Cluster(
            load_balancing_policy=classic.RoundRobinPolicy(),
            execution_profiles={classic_cluster.EXEC_PROFILE_DEFAULT: classic_cluster.ExecutionProfile()},
        ),
    )
    assert err is not None and err[0] == "ValueError"

    # A profile added to a legacy cluster; a name added twice.
    def add_to_legacy(mod, pol):
        c = mod.Cluster(load_balancing_policy=pol.RoundRobinPolicy())
        c.add_execution_profile("x", mod.ExecutionProfile())

    assert both(
        lambda: add_to_legacy(__import__("turbocql.cluster").cluster, ours),
        lambda: add_to_legacy(classic_cluster, classic),
    )

    def add_twice(mod):
        c = mod.Cluster()
        c.add_execution_profile("x", mod.ExecutionProfile())
        c.add_execution_profile("x", mod.ExecutionProfile())

    assert both(lambda: add_twice(__import__("turbocql.cluster").cluster), lambda: add_twice(classic_cluster))

    # Setting a legacy attribute while using profiles.
    def set_legacy(mod):
        c = mod.Cluster(execution_profiles={mod.EXEC_PROFILE_DEFAULT: mod.ExecutionProfile()})
        c.load_balancing_policy = None

    assert both(lambda: set_legacy(__import__("turbocql.cluster").cluster), lambda: set_legacy(classic_cluster))


def test_legacy_parameters_warn_as_classic():
    with pytest.warns(DeprecationWarning, match="Legacy execution parameters"):
        Cluster(load_balancing_policy=ours.RoundRobinPolicy())


def test_execution_profile_defaults_equal_the_classic_drivers():
    mine, theirs = ExecutionProfile(), classic_cluster.ExecutionProfile()
    for field in ("consistency_level", "serial_consistency_level", "request_timeout"):
        assert getattr(mine, field) == getattr(theirs, field)
    assert type(mine.load_balancing_policy).__name__ == type(theirs.load_balancing_policy).__name__
    assert type(mine.load_balancing_policy._child_policy).__name__ == "DCAwareRoundRobinPolicy"
    assert type(mine.retry_policy).__name__ == type(theirs.retry_policy).__name__
    with pytest.raises(ValueError, match="serial_consistency_level"):
        ExecutionProfile(serial_consistency_level=1)
