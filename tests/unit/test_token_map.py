"""Token maps built by hand, without a server: replicas of each ring token by replication
strategy (SimpleStrategy, NetworkTopologyStrategy with racks), ``TokenMap`` lookups, the
token classes, the pure-Python Murmur3 against the engine's, and ``Metadata``'s own host
registry (hosts added by hand to a ``Metadata`` no cluster feeds)."""

import os

import pytest

from turbocql import UnsupportedOperation
from turbocql import metadata as md
from turbocql.murmur3 import _murmur3, murmur3
from turbocql.pool import Host


def _host(name, dc=None, rack=None):
    host = Host(name)
    host.set_location_info(dc, rack)
    host.set_up()
    return host


def test_simple_strategy_walks_the_ring_once_per_host():
    a, b = _host("a"), _host("b")
    ring = [md.MD5Token(v) for v in (0, 10, 20)]
    owners = dict(zip(ring, (a, a, b)))  # two tokens of a in a row
    replicas = md.SimpleStrategy({"replication_factor": "2"}).make_token_replica_map(owners, ring)
    assert replicas[ring[0]] == [a, b]
    assert replicas[ring[2]] == [b, a]
    rf5 = md.SimpleStrategy({"replication_factor": 5}).make_token_replica_map(owners, ring)
    assert all(len(hosts) == 2 for hosts in rf5.values())


def test_network_topology_places_racks_first_then_the_held_back_hosts():
    r1a, r1b, r2a = _host("r1a", "dc1", "r1"), _host("r1b", "dc1", "r1"), _host("r2a", "dc1", "r2")
    other = _host("x", "dc2", "r1")
    ring = [md.MD5Token(v) for v in (0, 1, 2, 3)]
    owners = dict(zip(ring, (r1a, r1b, other, r2a)))
    nts = md.NetworkTopologyStrategy({"dc1": "3", "dc2": "1", "dc3": "2"})
    at0 = nts.make_token_replica_map(owners, ring)[ring[0]]
    # r1b (same rack as r1a) waits for r2a; dc3 has no host.
    assert [h for h in at0 if h.datacenter == "dc1"] == [r1a, r2a, r1b]
    assert set(at0) == {r1a, r1b, r2a, other}
    assert md.NetworkTopologyStrategy({"dc1": 0}).make_token_replica_map(owners, ring)[ring[0]] == []


def test_hand_built_token_map_finds_the_range_owner():
    hosts = [_host("h%d" % i) for i in range(3)]
    ring = [md.Murmur3Token(v) for v in (-100, 0, 100)]
    keyspace = md.KeyspaceMetadata("ks", True, "SimpleStrategy", {"replication_factor": "1"})
    meta = md.Metadata()
    meta.keyspaces = {"ks": keyspace}
    token_map = md.TokenMap(md.Murmur3Token, dict(zip(ring, hosts)), ring, meta)
    assert token_map.get_replicas("ks", md.Murmur3Token(-100)) == [hosts[0]]
    assert token_map.get_replicas("ks", md.Murmur3Token(1)) == [hosts[2]]
    assert token_map.get_replicas("ks", md.Murmur3Token(101)) == [hosts[0]]  # wraps around
    assert token_map.get_replicas("unknown", md.Murmur3Token(0)) == []


def test_token_classes():
    assert md.BytesToken.from_string(b"0aff") == md.BytesToken.from_string("0aff") == md.BytesToken(b"\x0a\xff")
    assert md.Murmur3Token.from_string("-5").value == -5
    assert md.Murmur3Token(1) > md.Murmur3Token(0) and md.Murmur3Token(1) >= md.Murmur3Token(1)
    with pytest.raises(NotImplementedError):
        md.Token.from_string("1")


def test_python_murmur3_equals_the_engines():
    assert _murmur3(b"123") == -7468325962851647638
    for length in range(40):
        key = os.urandom(length)
        assert _murmur3(key) == murmur3(key), key


def test_metadata_without_a_cluster_keeps_the_hosts_given():
    meta = md.Metadata()
    a = _host("10.0.0.1")
    assert meta.add_or_return_host(a) == (a, True)
    assert meta.add_or_return_host(Host("10.0.0.1")) == (a, False)
    assert meta.get_host("10.0.0.1") is a and meta.get_host(a.endpoint) is a
    assert meta.all_hosts() == [a]
    assert meta.remove_host(a) is True and meta.remove_host(a) is False
    assert meta.all_hosts() == [] and meta.can_support_partitioner()


def test_metadata_of_a_cluster_leaves_hosts_to_the_engine():
    meta = md.Metadata()
    known = _host("10.0.0.2")

    class Engine:
        def get_host(self, endpoint, port=None):
            return known if endpoint == known.endpoint else None

    meta._topology = Engine()
    assert meta.add_or_return_host(Host("10.0.0.2")) == (known, False)
    with pytest.raises(UnsupportedOperation):
        meta.add_or_return_host(Host("10.0.0.3"))
    with pytest.raises(UnsupportedOperation):
        meta.remove_host(known)
