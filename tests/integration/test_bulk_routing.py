"""Replica batches of ``turbocql load`` on the 3-node cluster: rows whose partitions have the
same replicas go in one UNLOGGED batch, sent to that replica. On a keyspace with one replica
in dc1 (node1 or node2 owns each row, as the classic driver's token map says), each node
serves exactly the batches of the rows it owns (at most ``batch_rows`` rows each) and node3
none; every row is there afterwards."""

import math
import struct
from collections import Counter

import pytest

from tests.integration._clients import NOISE
from tests.integration.test_routing import N1, N2, N3, _profiles, counter, keyspaces, turbocql  # noqa: F401
from turbocql import bulk
from turbocql.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(300)]
pa = pytest.importorskip("pyarrow")

ROWS = 4000
BATCH_ROWS = 32
# Beside the batches: the loader's PREPARE (one per node) and its look-up of the table.
SETUP = 2


def test_each_replica_batch_goes_to_the_replica_of_its_rows(counter, keyspaces):  # noqa: F811
    from cassandra.cluster import Cluster as ClassicCluster

    ks = keyspaces["single"]
    oracle = ClassicCluster([N1], protocol_version=4)
    try:
        oracle.connect()
        owners = Counter()
        for k in range(ROWS):
            (replica,) = oracle.metadata.get_replicas(ks, struct.pack(">i", k))
            owners[replica.address] += 1
        assert set(owners) == {N1, N2}, owners
        data = pa.table({"k": pa.array(range(ROWS), pa.int32()), "v": pa.array(range(ROWS), pa.int32())})
        lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc="dc1"))
        with turbocql(counter, **_profiles(lbp)) as (_, session, selector):
            results = []
            deltas = counter.measure(
                selector,
                lambda: results.append(bulk.load(session, ks, "t", data, batch_rows=BATCH_ROWS, progress=False)),
            )
        (result,) = results
        assert (result.records, result.loaded, result.failed) == (ROWS, ROWS, 0), result
        for node in (N1, N2):
            batches = math.ceil(owners[node] / BATCH_ROWS)
            assert batches <= deltas[node] <= batches + SETUP + NOISE, (node, owners, deltas)
        assert deltas[N3] <= SETUP + NOISE, deltas
        rows = dict(oracle.connect(ks).execute("SELECT k, v FROM t"))
        assert rows == {k: k for k in range(ROWS)}
    finally:
        oracle.shutdown()
