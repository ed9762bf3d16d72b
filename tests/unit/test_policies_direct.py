"""Load-balancing policies called directly, as a user's policy built over them calls them
(no server, no engine): the classic contract of the base classes, the plans of
TokenAwarePolicy and HostFilterPolicy, DCAwareRoundRobinPolicy learning its local
datacenter from a contact point, and Host ordering."""

from unittest import mock

import pytest

from turbocql import policies as ours
from turbocql.connection import DefaultEndPoint
from turbocql.pool import Host


def _host(address, dc=None, up=True):
    host = Host(address, datacenter=dc)
    host.is_up = up
    return host


class _Cluster:
    def __init__(self, replicas=(), endpoints=()):
        self.metadata = mock.Mock()
        self.metadata.get_replicas.return_value = list(replicas)
        self.endpoints_resolved = list(endpoints)


class _Statement:
    def __init__(self, keyspace=None, routing_key=None):
        self.keyspace = keyspace
        self.routing_key = routing_key


def test_base_classes_leave_everything_to_subclasses():
    policy = ours.LoadBalancingPolicy()
    host = _host("1")
    for call in (
        lambda: policy.populate(None, [host]),
        lambda: policy.distance(host),
        lambda: policy.make_query_plan(),
        lambda: policy.on_up(host),
        lambda: policy.on_remove(host),
    ):
        with pytest.raises(NotImplementedError):
            call()
    assert policy._hosts_lock is not None


def test_token_aware_puts_live_local_replicas_first():
    a, b, c, down = _host("a"), _host("b"), _host("c"), _host("d", up=False)
    child = ours.RoundRobinPolicy()
    policy = ours.TokenAwarePolicy(child)
    policy.populate(_Cluster(replicas=[c, down]), [a, b, c, down])
    plan = list(policy.make_query_plan("ks", _Statement(routing_key=b"k")))
    assert plan[0] is c and sorted(plan[1:]) == sorted([a, b])  # the down replica is left out
    # No routing key: the child's plan as it is, with the working keyspace.
    assert set(policy.make_query_plan("ks", _Statement())) == {a, b, c, down}


def test_token_aware_shuffles_through_the_modules_shuffle():
    a, b = _host("a"), _host("b")
    policy = ours.TokenAwarePolicy(ours.RoundRobinPolicy(), shuffle_replicas=True)
    policy.populate(_Cluster(replicas=[a, b]), [a, b])
    with mock.patch.object(ours, "shuffle") as shuffle:
        list(policy.make_query_plan(None, _Statement("ks", b"k")))
        list(policy.make_query_plan(None, _Statement(None, b"k")))
    assert shuffle.call_count == 1


def test_host_filter_gives_the_child_every_host_and_filters_its_plans():
    child = mock.Mock()
    child.make_query_plan.return_value = ["keep", "drop"]
    policy = ours.HostFilterPolicy(child, lambda h: h == "keep")
    policy.populate("cluster", ["keep", "drop"])
    child.populate.assert_called_once_with(cluster="cluster", hosts=["keep", "drop"])
    assert list(policy.make_query_plan("ks", None)) == ["keep"]
    policy.check_supported()
    child.check_supported.assert_called_once_with()


def test_dc_aware_learns_its_datacenter_from_a_contact_point():
    contact = DefaultEndPoint("10.0.0.1")
    policy = ours.DCAwareRoundRobinPolicy()
    policy.populate(_Cluster(endpoints=[contact]), [_host("10.0.0.9", "far")])
    assert not policy.local_dc
    policy.on_add(_host("10.0.0.9", "far"))
    assert not policy.local_dc
    policy.on_add(_host("10.0.0.1", "near"))
    assert policy.local_dc == "near"
    # Known at populate already (the engine knows every host when the cluster connects).
    policy = ours.DCAwareRoundRobinPolicy()
    policy.populate(_Cluster(endpoints=[contact]), [_host("10.0.0.1", "near")])
    assert policy.local_dc == "near"


def test_hosts_are_ordered_by_endpoint():
    low, high = Host("127.0.0.1"), Host("127.0.0.2")
    assert low < high and low <= high and high > low and high >= low
    assert Host("127.0.0.1") <= low and Host("127.0.0.1") == low
