"""The engine's pool size against the real node: with ``Cluster(connections_per_host=4)`` the
node's ``system_views.clients`` lists 4 pool connections and the control connection of this
client (recognised by the ``client_id`` it sends in STARTUP), one pool connection by default,
and requests succeed on the larger pool; after shutdown they are gone."""

import time
import uuid

import pytest

from tests.conftest import HOST, PORT
from turbocql.cluster import Cluster


def _connections(observer, client_id: str) -> int:
    """This client's connections as the node lists them (its CLIENT_ID in client_options)."""
    rows = observer.execute("SELECT client_options FROM system_views.clients")
    return sum(1 for r in rows if (r.client_options or {}).get("CLIENT_ID") == client_id)


def _settle(observer, client_id: str, want: int, timeout: float = 15.0) -> int:
    """The count once it reaches ``want`` (pools fill in the background), or the last seen."""
    deadline = time.monotonic() + timeout
    while True:
        n = _connections(observer, client_id)
        if n == want or time.monotonic() >= deadline:
            return n
        time.sleep(0.1)


@pytest.fixture
def observer(cluster, keyspace):
    s = cluster.connect()
    try:
        s.execute("SELECT client_options FROM system_views.clients LIMIT 1")
    except Exception as e:  # Cassandra before 4.1: no client_options column
        s.shutdown()
        pytest.skip(f"system_views.clients has no client_options here: {e}")
    yield s
    s.shutdown()


def _count_with_pool(observer, keyspace, **pool) -> tuple[int, int]:
    """(connections while connected, after shutdown) of a fresh client with this pool size."""
    client_id = uuid.uuid4()
    cid = str(client_id)
    assert _connections(observer, cid) == 0
    c = Cluster([HOST], port=PORT, client_id=client_id, **pool)
    try:
        s = c.connect(keyspace)
        want = 1 + (pool.get("connections_per_host") or pool.get("connections_per_shard") or 1)
        during = _settle(observer, cid, want)
        # Requests run on the pool: enough in flight to use every connection.
        rows = [
            f.result().one() for f in [s.execute_async("SELECT release_version FROM system.local") for _ in range(64)]
        ]
        assert all(r.release_version for r in rows)
        assert s.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()
    return during, _settle(observer, cid, 0)


def test_connections_per_host_opens_that_many_connections(observer, keyspace):
    default_during, default_after = _count_with_pool(observer, keyspace)
    four_during, four_after = _count_with_pool(observer, keyspace, connections_per_host=4)
    # One pool connection (Cassandra counts as one shard) and the control connection by
    # default; four and the control connection with connections_per_host=4.
    assert default_during == 2
    assert four_during == 5
    assert four_during - default_during == 3
    assert default_after == 0 and four_after == 0


def test_connections_per_shard_on_a_node_without_shards_is_per_host(observer, keyspace):
    during, after = _count_with_pool(observer, keyspace, connections_per_shard=3)
    assert during == 4
    assert after == 0
