"""A change to one execution profile, or to a policy in one, marks that profile's engine
form stale and no other; a copy of a profile with the same policies shares their engine
form (the clone-per-request idiom builds no policies)."""

import copy

from turbocql import ConsistencyLevel
from turbocql.cluster import ExecutionProfile
from turbocql.policies import DCAwareRoundRobinPolicy, RetryPolicy, RoundRobinPolicy, TokenAwarePolicy, _policy_changed


def test_changing_one_profile_leaves_the_others_alone():
    a = ExecutionProfile(RoundRobinPolicy())
    b = ExecutionProfile(RoundRobinPolicy())
    ea, eb = a._engine_profile(), b._engine_profile()
    a.consistency_level = ConsistencyLevel.QUORUM
    assert ea.stale and not eb.stale
    assert b._engine_profile() is eb
    fresh = a._engine_profile()
    assert fresh is not ea and not fresh.stale
    assert a._engine_profile() is fresh


def test_a_policy_change_marks_only_the_profiles_built_from_it():
    shared = TokenAwarePolicy(DCAwareRoundRobinPolicy())
    a = ExecutionProfile(shared)
    b = ExecutionProfile(shared)
    c = ExecutionProfile(TokenAwarePolicy(DCAwareRoundRobinPolicy()))
    ea, eb, ec = a._engine_profile(), b._engine_profile(), c._engine_profile()
    # The child of the token-aware policy changes (as when it learns its local DC).
    _policy_changed(shared._child_policy)
    assert ea.stale and eb.stale and not ec.stale
    assert c._engine_profile() is ec


def test_a_copy_changed_in_its_defaults_shares_the_policies_engine_form():
    base = ExecutionProfile(RoundRobinPolicy(), RetryPolicy())
    engine_base = base._engine_profile()
    clone = copy.copy(base)
    clone.consistency_level = ConsistencyLevel.ONE
    clone.request_timeout = 3.0
    derived = clone._engine_profile()
    assert derived is not engine_base
    # The copy's change leaves the original's engine form alone.
    assert not engine_base.stale and base._engine_profile() is engine_base
    # The original's policies changing makes the copy's derived form stale too.
    _policy_changed(base.load_balancing_policy)
    assert engine_base.stale and derived.stale
    rebuilt = clone._engine_profile()
    assert not rebuilt.stale


def test_a_copy_with_another_policy_builds_its_own():
    base = ExecutionProfile(RoundRobinPolicy())
    engine_base = base._engine_profile()
    clone = copy.copy(base)
    clone.load_balancing_policy = DCAwareRoundRobinPolicy("dc1")
    own = clone._engine_profile()
    _policy_changed(base.load_balancing_policy)
    assert engine_base.stale and not own.stale


def test_a_distance_only_subclass_becomes_a_host_filter_and_a_built_in_does_not():
    from turbocql.policies import HostDistance, _engine_form

    class Ignoring(RoundRobinPolicy):
        def distance(self, host):
            return HostDistance.IGNORED

    assert "Filter" in repr(_engine_form(Ignoring()))
    assert "Filter" not in repr(_engine_form(RoundRobinPolicy()))
    # Over a child, too: the token-aware wrapper asks its child's engine form.
    assert "Filter" in repr(_engine_form(TokenAwarePolicy(Ignoring())))


def test_clone_update_sets_the_values_on_a_copy_and_refuses_what_a_profile_refuses():
    import pytest

    from turbocql import UnsupportedOperation
    from turbocql.cluster import Cluster, Session

    cluster = Cluster(execution_profiles={"p": ExecutionProfile(RoundRobinPolicy(), request_timeout=5.0)})
    session = object.__new__(Session)
    session.__dict__["cluster"] = cluster
    base = cluster.profile_manager.profiles["p"]
    clone = session.execution_profile_clone_update("p", request_timeout=1.0, consistency_level=ConsistencyLevel.ONE)
    assert clone is not base and type(clone) is ExecutionProfile
    assert (clone.request_timeout, clone.consistency_level) == (1.0, ConsistencyLevel.ONE)
    assert base.request_timeout == 5.0
    with pytest.raises(UnsupportedOperation, match="continuous_paging_options"):
        session.execution_profile_clone_update("p", continuous_paging_options=object())
