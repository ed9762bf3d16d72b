"""The control connection's side of a Cluster: the engine keeps the connection itself (the
scylla crate's); here are what classic code calls on it and what reads through it.

``ClusterControl``, a base class of ``Cluster``: its engine session for its own reads
(``_control_engine``), the system-table reads of ``cluster.metadata`` (``_metadata_fetch``
through a ``_SystemReader``), the ``refresh_*`` calls, and the host events with their
listeners (``register_listener``, ``_host_event``, fed by ``_relay_host_event``).
``ControlConnection``, the class of ``cluster.control_connection``. Imports the session;
the cluster imports it.
"""

from turbocql import ConsistencyLevel, DriverException, _loggers
from turbocql._policies.profiles import ExecutionProfile
from turbocql._session.session import Session
from turbocql.query import tuple_factory

log = _loggers.cluster


class ClusterControl:
    """What ``Cluster`` does through its control connection (a base class of it)."""

    def register_listener(self, listener):
        """Adds a :class:`~turbocql.policies.HostStateListener`: its ``on_up``, ``on_down``,
        ``on_add`` and ``on_remove`` are called with the :class:`~turbocql.pool.Host` when
        the engine sees a host come up, go down, join or leave."""
        with self._listeners_lock:
            self._listeners.add(listener)

    def unregister_listener(self, listener):
        with self._listeners_lock:
            self._listeners.remove(listener)

    @property
    def listeners(self):
        with self._listeners_lock:
            return self._listeners.copy()

    def _host_event(self, event):
        """An engine ``HostEvent``, delivered in the order the engine saw them. "moved"
        (same host, new address) updates the host's endpoint, keeping its ``Host``
        object as the classic driver does; ``HostStateListener`` has no method for it."""
        from turbocql.pool import _host_for_event

        host = _host_for_event(event)
        self._log_host_event(event, host)
        method = {"up": "on_up", "down": "on_down", "add": "on_add", "remove": "on_remove"}.get(event.kind)
        if method is None:
            return
        policies = {
            id(p.load_balancing_policy): p.load_balancing_policy for p in self.profile_manager.profiles.values()
        }
        for target in list(policies.values()) + list(self.listeners):
            if target is None:
                continue
            try:
                getattr(target, method)(host)
            except Exception:
                log.exception("%s.%s(%s) raised", type(target).__name__, method, host)

    def _log_host_event(self, event, host):
        """Logs a host event as the classic driver logs the same change, on the same logger
        names (``cassandra.cluster`` / ``cassandra.pool`` under the shim) and levels: a host
        going down (WARNING), coming back (INFO: the pool reconnected, the host may be up,
        its pools are established), joining (except a contact point, known from the start)
        or leaving (INFO). The engine reports "up" when a host's pool has opened a connection
        again; the "up" that follows a host's "add" is part of its addition, not logged."""
        kind = event.kind
        added = self.__dict__.setdefault("_hosts_just_added", set())
        if kind == "down":
            added.discard(event.host_id)
            log.warning("Host %s has been marked down", host)
        elif kind == "up":
            if event.host_id in added:
                added.discard(event.host_id)
                return
            _loggers.pool.info("Successful reconnection to %s, marking node up if it isn't already", host)
            log.info("Host %s may be up; will prepare queries and open connection pool", host)
            log.info("Connection pools established for node %s", host)
        elif kind == "add":
            added.add(event.host_id)
            if host.address not in {str(cp) for cp in self.contact_points}:
                log.info("New Cassandra host %r discovered", host)
        elif kind == "remove":
            added.discard(event.host_id)
            log.info("Cassandra host %s removed", host)

    def _control_engine(self):
        """An engine session of this cluster for its own reads (metadata, topology): a live
        user session's engine, else one of its own (the classic control connection's
        role), opened on demand and closed by :meth:`shutdown`."""
        for s in self.sessions:
            if not s.is_shutdown:
                return s._session
        if self.is_shutdown:
            raise DriverException("Cluster is already shut down")
        own = self.__dict__.get("_own_control")
        if own is None or own.is_shutdown:
            own = self._engine_connect()
            self._own_control = own
        return own

    def _metadata_fetch(self, query, params=None, host=None):
        """Rows (as dicts) of ``query``, read with the cluster's own fixed settings
        (whatever the user's profiles and session attributes): the metadata's one way to
        read the system tables."""
        engine = self._control_engine()
        reader = self.__dict__.get("_reader")
        if reader is None or reader._session is not engine:
            reader = self._reader = _SystemReader(self, engine)
        rs = reader.execute(query, params, host=host)
        names = rs.column_names
        return [dict(zip(names, row)) for row in rs]

    @property
    def control_connection(self):
        """The classic ``cluster.control_connection``'s schema calls
        (``wait_for_schema_agreement``, ``refresh_schema``), over the engine's."""
        return ControlConnection(self)

    def refresh_schema_metadata(self, max_schema_agreement_wait=None):
        """Reads the whole schema again (classic ``Cluster.refresh_schema_metadata``)."""
        self.metadata._refresh(max_schema_agreement_wait=max_schema_agreement_wait)

    def refresh_keyspace_metadata(self, keyspace, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, max_schema_agreement_wait=max_schema_agreement_wait)

    def refresh_table_metadata(self, keyspace, table, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, "table", table, max_schema_agreement_wait)

    def refresh_materialized_view_metadata(self, keyspace, view, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, "view", view, max_schema_agreement_wait)

    def refresh_user_type_metadata(self, keyspace, user_type, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, "type", user_type, max_schema_agreement_wait)

    def refresh_user_function_metadata(self, keyspace, function, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, "function", function, max_schema_agreement_wait)

    def refresh_user_aggregate_metadata(self, keyspace, aggregate, max_schema_agreement_wait=None):
        self.metadata._refresh(keyspace, "aggregate", aggregate, max_schema_agreement_wait)

    def get_control_connection_host(self):
        """The :class:`~turbocql.pool.Host` this cluster reads its metadata from: the first
        contact point that is up, else any host that is up (None when none is)."""
        hosts = self.metadata.all_hosts()
        up = [h for h in hosts if h.is_up]
        for cp in self.contact_points:
            for h in up:
                if h.address == str(cp):
                    return h
        return up[0] if up else None

    def refresh_nodes(self, force_token_rebuild=False):
        """Reads the node list and the token map again (classic ``Cluster.refresh_nodes``).
        The engine follows topology events and refreshes its own view; this makes
        ``cluster.metadata`` read that view afresh. Raises ``DriverException`` when no
        session of this cluster is connected."""
        if self.is_shutdown or self._control_engine() is None:
            raise DriverException("Cluster.refresh_nodes: not connected")
        self.metadata._refresh_nodes()


def _relay_host_event(cluster_ref, event):
    """The engine's host events, to the cluster if it still exists."""
    cluster = cluster_ref()
    if cluster is not None and not cluster.is_shutdown:
        cluster._host_event(event)


class ControlConnection:
    """The class of ``cluster.control_connection``: what classic code calls on it
    (``wait_for_schema_agreement``, ``refresh_schema``). The engine keeps its own control
    connection (the scylla crate's), so this only forwards; the classic class's
    connection-level internals (``_refresh_schema``, ``_connection``, event handlers) are
    not here."""

    def __init__(self, cluster):
        self._cluster = cluster

    def wait_for_schema_agreement(self, connection=None, preloaded_results=None, wait_time=None):
        """Waits up to ``wait_time`` (default ``max_schema_agreement_wait``) seconds until
        every node reports one schema version; returns whether they do."""
        if wait_time is None:
            wait_time = self._cluster.max_schema_agreement_wait
        if not wait_time or wait_time <= 0:
            return True
        return self._cluster.metadata._wait_for_schema_agreement(wait_time)

    def refresh_schema(self, force=False, **kwargs):
        """Reads the schema again (``target_type``/``keyspace``/``table``... as classic)."""
        keyspace = kwargs.get("keyspace")
        target = kwargs.get("target_type")
        name = kwargs.get("table") or kwargs.get("type") or kwargs.get("function") or kwargs.get("aggregate")
        kind = {"TABLE": "table", "TYPE": "type", "FUNCTION": "function", "AGGREGATE": "aggregate"}.get(
            (target or "").upper()
        )
        self._cluster.metadata._refresh(keyspace, kind if name else None, name, 0 if force else None)
        return True


class _SystemReader(Session):
    """Reads system tables for ``cluster.metadata`` on an engine session of the cluster,
    with fixed settings: plain tuples, ``ONE``, the engine's default routing and retries,
    the cluster's ``control_connection_timeout``, no client timestamps; the user's profiles
    and session attributes do not apply."""

    _profile = None
    use_client_timestamp = False
    # The classic driver does not time its control connection's reads.
    _engine_metrics = None
    # Nor does an APM agent see them: the engine's execute, even while an agent's wrapper
    # of Session.execute_async makes Session.execute go through it.
    execute = Session.__dict__["_direct_execute"]

    def _engine_profile_for(self, ep):
        timeout = self.cluster.control_connection_timeout
        if self._profile is None or self._profile.request_timeout != timeout:
            profile = ExecutionProfile(None, None, ConsistencyLevel.ONE, None, timeout, tuple_factory)
            self.__dict__["_profile"] = profile
        return self._profile._engine_profile()
