"""What a :class:`~turbocql.cluster.Cluster` hands the engine's ``connect``: the
credentials or the authentication provider, the TLS context, and the client's identity
(``application_name``, ``application_version``, ``client_id``, sent in STARTUP), the idle
heartbeat, when a node that stops answering goes last in query plans, and the pool size
(``connections_per_host`` / ``connections_per_shard``, checked by :func:`check_pool_size`).
"""

from turbocql import _engine
from turbocql.auth import PlainTextAuthProvider


def _auth_arguments(auth_provider):
    if auth_provider is None:
        return {}
    # A plain PlainTextAuthProvider: the engine's own PasswordAuthenticator exchange.
    if type(auth_provider).new_authenticator is PlainTextAuthProvider.new_authenticator:
        return {"username": auth_provider.username, "password": auth_provider.password}
    return {"auth_provider": auth_provider}


def check_pool_size(connections_per_host, connections_per_shard):
    """Raises for a bad pool size: each None or a positive int, not both given."""
    for name, value in (
        ("connections_per_host", connections_per_host),
        ("connections_per_shard", connections_per_shard),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("%s must be a positive int or None, not %r" % (name, value))
        if value < 1:
            raise ValueError("%s must be at least 1, not %d" % (name, value))
    if connections_per_host is not None and connections_per_shard is not None:
        raise ValueError(
            "give connections_per_host (connections to each node) or connections_per_shard "
            "(to each shard of a ScyllaDB node), not both"
        )


def engine_connect(cluster, keyspace=None, on_host_event=None):
    """An engine session of ``cluster`` (raises the classic connect errors)."""
    tls = cluster._tls
    return _engine.connect(
        [str(cp) for cp in cluster.contact_points],
        cluster.port,
        keyspace=keyspace,
        compression=cluster.compression,
        connect_timeout=float(cluster.connect_timeout),
        tcp_nodelay=True,
        reconnection=cluster.reconnection_policy._engine_policy(),
        on_host_event=on_host_event,
        ssl_context=tls.context if tls else None,
        server_hostname=tls.server_hostname if tls else None,
        client_certfile=tls.certfile if tls else None,
        client_keyfile=tls.keyfile if tls else None,
        application_name=cluster.application_name or None,
        application_version=cluster.application_version or None,
        client_id=str(cluster.client_id) if cluster.client_id is not None else None,
        heartbeat_interval=float(cluster.idle_heartbeat_interval or 0),
        heartbeat_timeout=float(cluster.idle_heartbeat_timeout) if cluster.idle_heartbeat_timeout else None,
        max_requests_in_flight=int(cluster.max_requests_in_flight),
        max_frame_length=int(cluster.max_frame_length),
        connections_per_host=cluster.connections_per_host,
        connections_per_shard=cluster.connections_per_shard,
        unresponsive_node_threshold=(
            float(cluster.unresponsive_node_threshold) if cluster.unresponsive_node_threshold is not None else None
        ),
        max_schema_agreement_wait=float(cluster.max_schema_agreement_wait or 0),
        control_connection_timeout=(
            float(cluster.control_connection_timeout) if cluster.control_connection_timeout is not None else None
        ),
        **_auth_arguments(cluster.auth_provider),
    )
