"""The size of a Cluster's connection pools: turbocql's own ``connections_per_host`` /
``connections_per_shard`` (the engine's pool), and the classic pool knobs of protocol v1/v2,
which the engine (v4) ignores as the classic driver does there. ``ClusterPoolSize`` is a
base class of ``Cluster``.
"""

from turbocql import UnsupportedOperation
from turbocql._cluster.connect import check_pool_size
from turbocql.policies import HostDistance


class ClusterPoolSize:
    """The pool size settings of ``Cluster`` (a base class of it)."""

    def _set_pool_size(self, connections_per_host, connections_per_shard):
        # turbocql's own: the engine's pool, N connections to each node or to each shard of
        # a ScyllaDB node (default: one per shard; Cassandra counts as one shard). The classic
        # set_core_connections_per_host only applies to protocol v1/v2 and raises here.
        check_pool_size(connections_per_host, connections_per_shard)
        self.connections_per_host = connections_per_host
        self.connections_per_shard = connections_per_shard

    def _connections_per_node(self, host):
        """Connections the engine keeps to a node it is connected to (``metrics``'
        ``open_connections``): ``connections_per_host``, else ``connections_per_shard`` (a
        Cassandra node is one shard), else the engine's default, one (per shard)."""
        return self.connections_per_host or self.connections_per_shard or 1

    # The classic pool knobs of protocol v1/v2: the engine speaks v4, where the classic driver
    # ignores the getters' values and its setters raise; so do these. turbocql's own pool size
    # is Cluster(connections_per_host=N) / Cluster(connections_per_shard=N).
    _CLASSIC_CORE_CONNECTIONS = {HostDistance.LOCAL: 2, HostDistance.REMOTE: 1}
    _CLASSIC_MAX_CONNECTIONS = {HostDistance.LOCAL: 8, HostDistance.REMOTE: 2}

    def get_core_connections_per_host(self, host_distance):
        """The classic value (2 local, 1 remote), ignored with protocol v3+ as there; the
        engine's pool size is ``connections_per_host`` / ``connections_per_shard``."""
        return self._CLASSIC_CORE_CONNECTIONS[host_distance]

    def set_core_connections_per_host(self, host_distance, core_connections):
        """Raises ``UnsupportedOperation``, as the classic driver does with protocol v3+
        (use ``Cluster(connections_per_host=N)``)."""
        raise UnsupportedOperation(
            "Cluster.set_core_connections_per_host() only has an effect when using protocol_version 1 or 2. "
            "turbocql: use Cluster(connections_per_host=N) or Cluster(connections_per_shard=N)."
        )

    def get_max_connections_per_host(self, host_distance):
        """The classic value (8 local, 2 remote), ignored with protocol v3+ as there."""
        return self._CLASSIC_MAX_CONNECTIONS[host_distance]

    def set_max_connections_per_host(self, host_distance, max_connections):
        """Raises ``UnsupportedOperation``, as the classic driver does with protocol v3+."""
        raise UnsupportedOperation(
            "Cluster.set_max_connections_per_host() only has an effect when using protocol_version 1 or 2. "
            "turbocql: use Cluster(connections_per_host=N) or Cluster(connections_per_shard=N)."
        )
