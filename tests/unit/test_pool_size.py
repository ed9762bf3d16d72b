"""The engine's pool size, ``Cluster(connections_per_host=N)`` / ``connections_per_shard=N``
(turbocql's own arguments), checked before anything connects; and the classic pool knobs of
protocol v1/v2, which raise as the classic driver's do with protocol v3+. The connections
they open are counted by tests/integration/test_pool_size.py (Cassandra) and
test_cql_responder.py."""

import pytest

from turbocql import UnsupportedOperation, _engine
from turbocql.cluster import Cluster
from turbocql.policies import HostDistance


def test_defaults_and_given_values_are_kept():
    c = Cluster(["127.0.0.1"])
    assert c.connections_per_host is None and c.connections_per_shard is None
    assert Cluster(["127.0.0.1"], connections_per_host=4).connections_per_host == 4
    assert Cluster(["127.0.0.1"], connections_per_shard=2).connections_per_shard == 2


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"connections_per_host": 0}, ValueError, "connections_per_host must be at least 1, not 0"),
        ({"connections_per_shard": -3}, ValueError, "connections_per_shard must be at least 1"),
        ({"connections_per_host": "4"}, TypeError, "connections_per_host must be a positive int or None"),
        ({"connections_per_host": 2.0}, TypeError, "connections_per_host must be a positive int"),
        ({"connections_per_shard": True}, TypeError, "connections_per_shard must be a positive int"),
        ({"connections_per_host": 2, "connections_per_shard": 2}, ValueError, "not both"),
    ],
)
def test_bad_pool_sizes_raise_at_construction(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Cluster(["127.0.0.1"], **kwargs)


def test_the_engine_refuses_both_or_zero_before_connecting():
    # Port 9 (discard): nothing is contacted, the arguments are refused first.
    with pytest.raises(ValueError, match="not both"):
        _engine.connect(["127.0.0.1"], 9, connections_per_host=1, connections_per_shard=1)
    with pytest.raises(ValueError, match="connections_per_host must be at least 1"):
        _engine.connect(["127.0.0.1"], 9, connections_per_host=0)


def test_classic_pool_knobs_behave_as_with_protocol_v3_and_up():
    c = Cluster(["127.0.0.1"], connections_per_host=4)
    assert c.get_core_connections_per_host(HostDistance.LOCAL) == 2
    assert c.get_core_connections_per_host(HostDistance.REMOTE) == 1
    assert c.get_max_connections_per_host(HostDistance.LOCAL) == 8
    assert c.get_max_connections_per_host(HostDistance.REMOTE) == 2
    with pytest.raises(UnsupportedOperation, match="only has an effect when using protocol_version 1 or 2"):
        c.set_core_connections_per_host(HostDistance.LOCAL, 4)
    with pytest.raises(UnsupportedOperation, match="connections_per_host=N"):
        c.set_max_connections_per_host(HostDistance.LOCAL, 4)
    assert c.connections_per_host == 4
