"""The topology half of cluster.metadata on the 3-node cluster, against the classic driver:
hosts (address, datacenter, rack, up), the token ring, and the replicas of partition keys
for each replication strategy."""

import struct
import uuid
import warnings

import pytest
from cassandra.cluster import Cluster as ClassicCluster

from tests.integration.conftest import drop_keyspace
from turbocql.cluster import Cluster

pytestmark = pytest.mark.multinode


@pytest.fixture(scope="module")
def both(multidc_cluster):
    tc = Cluster(["127.0.0.11"])
    ts = tc.connect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc = ClassicCluster(["127.0.0.11"], protocol_version=4)
        cc.connect()
    names = {
        "nts": "topo_nts_" + uuid.uuid4().hex[:6],
        "simple": "topo_simple_" + uuid.uuid4().hex[:6],
    }
    ts.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}" % names["nts"]
    )
    ts.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}" % names["simple"]
    )
    cc.refresh_schema_metadata()
    yield tc, cc, names
    for name in names.values():
        drop_keyspace(ts, name)
    cc.shutdown()
    tc.shutdown()


def test_hosts_equal_the_classic_drivers(both):
    tc, cc, _ = both
    ours = {h.address: (h.datacenter, h.rack) for h in tc.metadata.all_hosts()}
    theirs = {h.address: (h.datacenter, h.rack) for h in cc.metadata.all_hosts()}
    expected = {"127.0.0.11": ("dc1", "rack1"), "127.0.0.12": ("dc1", "rack1"), "127.0.0.13": ("dc2", "rack1")}
    assert ours == theirs == expected
    # The engine holds a pool to every node, so each is up; the classic driver opens none
    # to the hosts its policy ignores (dc2 here) and leaves their is_up unknown (None).
    assert all(h.is_up for h in tc.metadata.all_hosts())
    assert {h.address: h.is_up for h in cc.metadata.all_hosts()}["127.0.0.13"] in (None, True)
    host = tc.metadata.get_host("127.0.0.12")
    assert host is not None and host.datacenter == "dc1" and host.endpoint.port == 9042
    assert tc.metadata.get_host("127.0.0.99") is None


def test_token_ring_equals_the_classic_drivers(both):
    tc, cc, _ = both
    ours = [t.value for t in tc.metadata.token_map.ring]
    theirs = [t.value for t in cc.metadata.token_map.ring]
    assert ours == theirs and len(ours) == 24  # 3 nodes x num_tokens 8
    owners_ours = {t.value: h.address for t, h in tc.metadata.token_map.token_to_host_owner.items()}
    owners_theirs = {t.value: h.address for t, h in cc.metadata.token_map.token_to_host_owner.items()}
    assert owners_ours == owners_theirs


@pytest.mark.parametrize("strategy", ["nts", "simple"])
def test_replicas_of_keys_equal_the_classic_drivers(both, strategy):
    tc, cc, names = both
    ks = names[strategy]
    for k in range(200):
        key = struct.pack(">i", k)
        ours = sorted(h.address for h in tc.metadata.get_replicas(ks, key))
        theirs = sorted(h.address for h in cc.metadata.get_replicas(ks, key))
        assert ours == theirs, (k, ours, theirs)
        assert len(ours) == 2
        token = tc.metadata.token_map.token_class.from_key(key)
        assert token.value == cc.metadata.token_map.token_class.from_key(key).value
        assert sorted(h.address for h in tc.metadata.token_map.get_replicas(ks, token)) == ours


def test_release_versions_equal_the_classic_drivers(both):
    tc, cc, _ = both
    ours = {h.address: h.release_version for h in tc.metadata.all_hosts()}
    theirs = {h.address: h.release_version for h in cc.metadata.all_hosts()}
    assert ours == theirs and None not in ours.values()


def test_token_metadata_disabled_is_honoured(multidc_cluster):
    c = Cluster(["127.0.0.11"], token_metadata_enabled=False)
    c.connect()
    try:
        # As classic: a token map without tokens.
        assert c.metadata.token_map.token_to_host_owner == {} and c.metadata.token_map.ring == []
        assert c.metadata.get_replicas("system_auth", b"key") == []
        assert len(c.metadata.all_hosts()) == 3  # hosts are still known
    finally:
        c.shutdown()
