"""Clusters and sessions, under the classic driver's names (``cassandra.cluster``).

:class:`Cluster` holds the connection settings, :meth:`Cluster.connect` returns a
:class:`Session`, and :meth:`Session.execute` returns a :class:`ResultSet`. Requests run
in the Rust engine with the GIL released, so one Session serves many threads.
"""

import atexit
import copy
import decimal
import functools
import keyword
import logging
import os
import threading
import uuid
import warnings
import weakref
from collections import namedtuple

from turbocql import (  # noqa: F401 - classic names re-exported from turbocql.cluster
    AlreadyExists,
    AuthenticationFailed,
    ConfigurationException,
    ConsistencyLevel,
    DriverException,
    FunctionFailure,
    InvalidRequest,
    OperationTimedOut,
    ProtocolVersion,
    ReadFailure,
    ReadTimeout,
    Unauthorized,
    Unavailable,
    UnsupportedOperation,
    WriteFailure,
    WriteTimeout,
    _engine,
    protocol,
    util,
)
from turbocql._cluster_args import check_cluster_arguments, checked_settings
from turbocql._cluster_names import (  # noqa: F401 - classic names of cassandra.cluster
    DEFAULT_MAX_CONNECTIONS_PER_LOCAL_HOST,
    DEFAULT_MAX_CONNECTIONS_PER_REMOTE_HOST,
    DEFAULT_MAX_REQUESTS,
    DEFAULT_MIN_CONNECTIONS_PER_LOCAL_HOST,
    DEFAULT_MIN_CONNECTIONS_PER_REMOTE_HOST,
    DEFAULT_MIN_REQUESTS,
    EXEC_PROFILE_GRAPH_ANALYTICS_DEFAULT,
    EXEC_PROFILE_GRAPH_DEFAULT,
    EXEC_PROFILE_GRAPH_SYSTEM_DEFAULT,
    RESULT_KIND_PREPARED,
    RESULT_KIND_ROWS,
    RESULT_KIND_SCHEMA_CHANGE,
    RESULT_KIND_SET_KEYSPACE,
    RESULT_KIND_VOID,
    ConnectionBusy,
    ConnectionShutdown,
    ContinuousPagingOptions,
    DCAwareRoundRobinPolicy,
    DefaultConnection,
    DefaultEndPoint,
    DefaultEndPointFactory,
    DefaultLoadBalancingPolicy,
    DependencyException,
    EndPoint,
    ErrorMessage,
    EventletConnection,
    Host,
    HostConnectionPool,
    HostDistance,
    IdentityTranslator,
    IsBootstrappingErrorMessage,
    MonotonicTimestampGenerator,
    NeverRetryPolicy,
    NoConnectionsAvailable,
    NoSpeculativeExecutionPlan,
    NoSpeculativeExecutionPolicy,
    OverloadedErrorMessage,
    PlainTextAuthProvider,
    PreparedQueryNotFound,
    ProtocolException,
    ProtocolHandler,
    ProtocolVersionUnsupported,
    QueryMessage,
    ReadTimeoutErrorMessage,
    ResultMessage,
    SchemaTargetType,
    ServerError,
    SimpleConvictionPolicy,
    TokenAwarePolicy,
    TraceUnavailable,
    TruncateError,
    TwistedConnection,
    UnavailableErrorMessage,
    UnresolvableContactPoints,
    UserType,
    UserTypeDoesNotExist,
    Version,
    WriteTimeoutErrorMessage,
    bind_params,
    default_lbp_factory,
    int64_pack,
    murmur3,
    protect_name,
)
from turbocql._connect import check_pool_size, engine_connect
from turbocql._profiles import (  # noqa: F401 - classic names of turbocql.cluster
    _UNSET,
    EXEC_PROFILE_DEFAULT,
    ExecutionProfile,
    ProfileManager,
    _ConfigMode,
    _execution_profile_to_string,
)
from turbocql._tls import load_lazy_cas, tls_settings
from turbocql._topology import Topology
from turbocql.connection import ConnectionException
from turbocql.encoder import Encoder
from turbocql.metadata import Metadata
from turbocql.policies import ExponentialReconnectionPolicy, RetryPolicy
from turbocql.query import (
    FETCH_SIZE_UNSET,
    UNSET_VALUE,
    BatchStatement,
    BoundStatement,
    PreparedStatement,
    QueryTrace,
    SimpleStatement,
    arrow_factory,
    cql_text_factory,
    dict_factory,
    named_tuple_factory,
    numpy_factory,
    tuple_factory,
)


class NoHostAvailable(Exception):
    """No host could serve the request. ``errors`` maps each host tried to its exception."""

    errors = None

    def __init__(self, message, errors):
        Exception.__init__(self, message, errors)
        self.errors = errors


class _NotSet:
    def __repr__(self):
        return "_NOT_SET"


_NOT_SET = _NotSet()

_UDT_CLASSES: dict[tuple, type] = {}


def _make_udt(keyspace, name, field_names, values):
    cls = _UDT_CLASSES.get((keyspace, name))
    if cls is not None:
        return cls(**dict(zip(field_names, values)))
    key = (keyspace, name, field_names)
    cls = _UDT_CLASSES.get(key)
    if cls is None:
        cls = _udt_tuple_type(name, field_names)
        _UDT_CLASSES[key] = cls
    if cls is tuple:
        return tuple(values)
    return cls(*values)


def _udt_tuple_type(name, field_names):
    """The classic driver's class for an unregistered UDT: a namedtuple named after the
    type; invalid field names made positional (``field_0_``); a plain tuple when the type
    name itself is not a Python identifier."""
    try:
        return namedtuple(name, field_names)
    except ValueError:
        pass
    positional = [
        "field_%d_" % i
        if not name_ok.isidentifier() or keyword.iskeyword(name_ok) or name_ok.startswith("_")
        else name_ok
        for i, name_ok in enumerate(field_names)
    ]
    try:
        cls = namedtuple(name, positional)
    except ValueError:
        log.warning(
            "could not create a namedtuple for '%s' because the name is not a valid Python identifier; "
            "will return tuples in its place",
            name,
        )
        return tuple
    log.warning(
        "could not create a namedtuple for '%s' because one or more field names are not valid Python "
        "identifiers (%s); returning positionally-named fields",
        name,
        field_names,
    )
    return cls


class Cluster:
    """The cluster's connection settings; :meth:`connect` opens a :class:`Session`.

    Takes the classic driver's arguments: each is honoured, kept because the engine
    already does what its value asks, or refused with ``UnsupportedOperation`` naming it,
    when given and when assigned later (``turbocql._cluster_args``;
    docs/audit-accepted-settings.md).
    """

    def __init__(
        self,
        contact_points=_NOT_SET,
        port=9042,
        compression=True,
        auth_provider=None,
        load_balancing_policy=None,
        reconnection_policy=None,
        default_retry_policy=None,
        conviction_policy_factory=None,
        metrics_enabled=False,
        connection_class=None,
        ssl_options=None,
        sockopts=None,
        cql_version=None,
        protocol_version=_NOT_SET,
        executor_threads=2,
        max_schema_agreement_wait=10,
        control_connection_timeout=2.0,
        idle_heartbeat_interval=30,
        schema_event_refresh_window=2,
        topology_event_refresh_window=10,
        connect_timeout=5,
        schema_metadata_enabled=True,
        token_metadata_enabled=True,
        address_translator=None,
        status_event_refresh_window=2,
        prepare_on_all_hosts=True,
        reprepare_on_up=True,
        execution_profiles=None,
        allow_beta_protocol_version=False,
        timestamp_generator=None,
        idle_heartbeat_timeout=30,
        no_compact=False,
        ssl_context=None,
        endpoint_factory=None,
        application_name=None,
        application_version=None,
        monitor_reporting_enabled=True,
        monitor_reporting_interval=30,
        client_id=None,
        cloud=None,
        column_encryption_policy=None,
        unresponsive_node_threshold=2.0,
        max_requests_in_flight=32768,
        connections_per_host=None,
        connections_per_shard=None,
    ):
        # Classic arguments the engine cannot honour raise here (see _cluster_args).
        check_cluster_arguments(
            address_translator,
            conviction_policy_factory,
            metrics_enabled,
            endpoint_factory,
            column_encryption_policy,
            no_compact,
            sockopts,
            connection_class,
            prepare_on_all_hosts,
            schema_event_refresh_window,
            topology_event_refresh_window,
            monitor_reporting_enabled,
            monitor_reporting_interval,
        )
        contact_points_explicit = contact_points is not _NOT_SET
        if contact_points is _NOT_SET:
            contact_points = ["127.0.0.1"]
        if isinstance(contact_points, str):
            raise TypeError("contact_points should not be a string, it should be a sequence (e.g. list) of strings")
        self.contact_points = list(contact_points)
        self.port = int(port)
        if compression is True:
            compression = "lz4"
        elif compression in (False, None):
            compression = None
        elif compression not in ("lz4", "snappy"):
            raise ValueError("compression must be True, False, 'lz4' or 'snappy', not %r" % (compression,))
        self.compression = compression
        if auth_provider and not callable(getattr(auth_provider, "new_authenticator", None)):
            # As the classic driver with protocol v2+ (the engine speaks v4).
            raise TypeError(
                "auth_provider must implement the cassandra.auth.AuthProvider interface when protocol_version >= 2"
            )
        self.auth_provider = auth_provider
        # Checked now (a bad option raises here); the engine reads the context at connect.
        self._tls = tls_settings(ssl_context, ssl_options)
        self.ssl_context = ssl_context
        self.ssl_options = ssl_options
        if cloud is not None:
            raise UnsupportedOperation("cloud (secure connect bundles) is not supported")
        # The engine always speaks protocol v4, which Cassandra 2.2+ and ScyllaDB accept.
        self.protocol_version = ProtocolVersion.V4 if protocol_version is _NOT_SET else protocol_version
        self.connect_timeout = connect_timeout
        self.control_connection_timeout = control_connection_timeout
        self._config_mode = _ConfigMode.UNCOMMITTED
        self._load_balancing_policy = load_balancing_policy
        self._default_retry_policy = default_retry_policy or RetryPolicy()
        self.profile_manager = ProfileManager()
        self.profile_manager.profiles[EXEC_PROFILE_DEFAULT] = ExecutionProfile(
            load_balancing_policy if load_balancing_policy is not None else _UNSET,
            self._default_retry_policy,
            request_timeout=Session.default_timeout,
            row_factory=Session.row_factory,
        )
        if not self.profile_manager.default._load_balancing_policy_explicit:
            self._load_balancing_policy = self.profile_manager.default.load_balancing_policy
        if load_balancing_policy is not None or default_retry_policy is not None:
            if execution_profiles:
                raise ValueError(
                    "Clusters constructed with execution_profiles should not specify legacy parameters "
                    "load_balancing_policy or default_retry_policy. Configure this in a profile instead."
                )
            self._config_mode = _ConfigMode.LEGACY
            warnings.warn(
                "Legacy execution parameters will be removed in 4.0. Consider using execution profiles.",
                DeprecationWarning,
                stacklevel=2,
            )
        elif execution_profiles:
            for name, profile in execution_profiles.items():
                if not isinstance(profile, ExecutionProfile):
                    raise TypeError("profile %s must be an ExecutionProfile" % _execution_profile_to_string(name))
            self.profile_manager.profiles.update(execution_profiles)
            self._config_mode = _ConfigMode.PROFILES
        if contact_points_explicit:
            # As the classic driver: the default policy's local datacenter is the contact
            # points', which is wrong if they span datacenters.
            if self._config_mode == _ConfigMode.PROFILES:
                implicit = self.profile_manager._profiles_without_explicit_lbps()
                if implicit:
                    log.warning(
                        "Cluster.__init__ called with contact_points specified, but load-balancing policies are "
                        "not specified in some ExecutionProfiles. In the next major version, this will raise an "
                        "error; please specify a load-balancing policy. (contact_points = %s, EPs without explicit "
                        "LBPs = %s)",
                        self.contact_points,
                        implicit,
                    )
            elif load_balancing_policy is None:
                log.warning(
                    "Cluster.__init__ called with contact_points specified, but no load_balancing_policy. In the "
                    "next major version, this will raise an error; please specify a load-balancing policy. "
                    "(contact_points = %s, lbp = %s)",
                    self.contact_points,
                    load_balancing_policy,
                )
        if reconnection_policy is None:
            reconnection_policy = ExponentialReconnectionPolicy(1.0, 600.0)
        # Checked now: an unsupported policy raises here, not at connect.
        reconnection_policy._engine_policy()
        self.reconnection_policy = reconnection_policy
        self._listeners = set()
        self._listeners_lock = threading.Lock()
        self.metrics_enabled = metrics_enabled
        # Configuration only (see _cluster_args): kept as the classic attributes.
        self.address_translator = address_translator if address_translator is not None else IdentityTranslator()
        self.conviction_policy_factory = conviction_policy_factory or SimpleConvictionPolicy
        self.endpoint_factory = endpoint_factory if endpoint_factory is not None else DefaultEndPointFactory()
        self.connection_class = connection_class if connection_class is not None else DefaultConnection
        self.sockopts = sockopts
        self.cql_version = cql_version
        # Honoured by the engine: an OPTIONS on each connection every interval (0: none),
        # the connection closed when one is not answered within the timeout.
        self.idle_heartbeat_interval = idle_heartbeat_interval
        self.idle_heartbeat_timeout = idle_heartbeat_timeout
        # turbocql's own (src/exec/health.rs): a node that answers nothing for this many
        # seconds while requests wait on it goes last in query plans until it answers a
        # probe. None: off.
        self.unresponsive_node_threshold = unresponsive_node_threshold
        # turbocql's own (src/exec/inflight.rs): requests started without waiting
        # (execute_async, asyncio) in flight per session; beyond it execute_async waits for
        # a slot (at most the request's timeout) and asyncio requests wait in the engine,
        # or raise ConnectionBusy once as many wait.
        self.max_requests_in_flight = max_requests_in_flight
        # turbocql's own: the engine's pool, N connections to each node or to each shard of
        # a ScyllaDB node (default: one per shard; Cassandra counts as one shard). The classic
        # set_core_connections_per_host only applies to protocol v1/v2 and raises here.
        check_pool_size(connections_per_host, connections_per_shard)
        self.connections_per_host = connections_per_host
        self.connections_per_shard = connections_per_shard
        self.schema_event_refresh_window = schema_event_refresh_window
        self.topology_event_refresh_window = topology_event_refresh_window
        self.status_event_refresh_window = status_event_refresh_window
        self.allow_beta_protocol_version = allow_beta_protocol_version
        self.no_compact = no_compact
        self.column_encryption_policy = column_encryption_policy
        self.monitor_reporting_enabled = monitor_reporting_enabled
        self.monitor_reporting_interval = monitor_reporting_interval
        self.executor_threads = executor_threads
        self.max_schema_agreement_wait = max_schema_agreement_wait
        self.schema_metadata_enabled = schema_metadata_enabled
        self.token_metadata_enabled = token_metadata_enabled
        self.prepare_on_all_hosts = prepare_on_all_hosts
        self.reprepare_on_up = reprepare_on_up
        # As the classic driver: client timestamps from a MonotonicTimestampGenerator unless
        # another generator is given (Session.use_client_timestamp turns them off).
        self._timestamp_generator = (
            timestamp_generator if timestamp_generator is not None else MonotonicTimestampGenerator()
        )
        self.application_name = application_name
        self.application_version = application_version
        self.client_id = client_id if client_id is not None else uuid.uuid4()
        self.sessions = []
        self._user_types = {}
        self.is_shutdown = False
        self.metadata = Metadata()
        self._metadata_attached = False

    @property
    def load_balancing_policy(self):
        """The legacy default load-balancing policy (use execution profiles instead)."""
        return self._load_balancing_policy

    @load_balancing_policy.setter
    def load_balancing_policy(self, lbp):
        if self._config_mode == _ConfigMode.PROFILES:
            raise ValueError(
                "Cannot set Cluster.load_balancing_policy while using Configuration Profiles. "
                "Set this in a profile instead."
            )
        self._load_balancing_policy = lbp
        self._config_mode = _ConfigMode.LEGACY
        self._legacy_changed()

    @property
    def default_retry_policy(self):
        """The legacy default retry policy (use execution profiles instead)."""
        return self._default_retry_policy

    @default_retry_policy.setter
    def default_retry_policy(self, policy):
        if self._config_mode == _ConfigMode.PROFILES:
            raise ValueError(
                "Cannot set Cluster.default_retry_policy while using Configuration Profiles. "
                "Set this in a profile instead."
            )
        self._default_retry_policy = policy
        self._config_mode = _ConfigMode.LEGACY
        self._legacy_changed()

    def _legacy_changed(self):
        # Each session of this cluster makes its legacy profile again (assigning the
        # attribute makes the session read its defaults again); no other cluster's.
        for s in self.sessions:
            s._legacy_profile_cache = None

    @property
    def protocol_version(self):
        """Always 4: the engine speaks native protocol v4 (Cassandra 2.2+ and ScyllaDB
        accept it). Setting another version raises rather than speak v4 under its name."""
        return ProtocolVersion.V4

    @protocol_version.setter
    def protocol_version(self, version):
        if version not in (1, 2, 3, 4, 5, 6, 65, 66):
            raise ValueError("unknown protocol_version %r" % (version,))
        if version != ProtocolVersion.V4:
            raise UnsupportedOperation(
                "protocol_version=%r is not supported: turbocql's engine speaks native protocol v4 only "
                "(Cassandra 2.2+ and ScyllaDB accept it); leave protocol_version unset or set it to 4" % (version,)
            )

    @property
    def cql_version(self):
        """None: the engine's STARTUP asks for the CQL version the scylla crate sends
        (CQL_VERSION 4.0.0), which every supported server accepts."""
        return None

    @cql_version.setter
    def cql_version(self, version):
        if version is not None:
            raise UnsupportedOperation(
                "cql_version=%r is not supported: the engine's STARTUP always names the CQL version of the "
                "scylla crate (4.0.0); leave cql_version unset" % (version,)
            )

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

    @property
    def timestamp_generator(self):
        """The callable giving each request's client timestamp (microseconds); the default
        is a :class:`~turbocql.timestamps.MonotonicTimestampGenerator`."""
        return self._timestamp_generator

    @timestamp_generator.setter
    def timestamp_generator(self, generator):
        self._timestamp_generator = generator
        for session in self.sessions:
            session._build_request.settings_changed()

    def _engine_clock(self):
        """The engine clock of ``timestamp_generator``: the engine's own monotonic clock for
        an unmodified :class:`MonotonicTimestampGenerator` (same rule, no Python call per
        request), otherwise the generator itself, called for each request."""
        gen = self.timestamp_generator
        cached = self.__dict__.get("_clock_of")
        if cached is not None and cached[0] is gen:
            return cached[1]
        if type(gen) is MonotonicTimestampGenerator:
            clock = _engine.ClientClock.monotonic(
                bool(gen.warn_on_drift), float(gen.warning_threshold), float(gen.warning_interval)
            )
        elif callable(gen):
            clock = _engine.ClientClock.python(gen)
        else:
            raise TypeError("timestamp_generator must be callable (it returns microseconds since the epoch)")
        self._clock_of = (gen, clock)
        return clock

    def add_execution_profile(self, name, profile, pool_wait_timeout=5):
        """Adds a named :class:`ExecutionProfile` (raises if the name is taken or the
        cluster uses the legacy parameters)."""
        if not isinstance(profile, ExecutionProfile):
            raise TypeError("profile must be an instance of ExecutionProfile")
        if self._config_mode == _ConfigMode.LEGACY:
            raise ValueError("Cannot add execution profiles when legacy parameters are set explicitly.")
        if name in self.profile_manager.profiles:
            raise ValueError(f"Profile {name} already exists")
        self.profile_manager.profiles[name] = profile
        live = [s for s in self.sessions if not s.is_shutdown]
        if live and profile.load_balancing_policy is not None:
            profile.load_balancing_policy.populate(self, live[0]._session.nodes())

    def connect(self, keyspace=None, wait_for_all_pools=False):
        """Opens a :class:`Session`, optionally in ``keyspace``.

        Raises :class:`NoHostAvailable` when no contact point answers within
        ``connect_timeout``, ``InvalidRequest`` for an unknown keyspace.
        """
        if self.is_shutdown:
            raise DriverException("Cluster is already shut down")
        if not self.contact_points:
            raise NoHostAvailable("Unable to connect to any servers", {})  # as classic
        if not self.sessions:
            # As the classic driver's first connect: a policy may refuse the cluster.
            self.profile_manager.check_supported()
        engine_session = self._engine_connect(
            keyspace,
            # Host events come from the first session's engine only (one stream per
            # cluster, as the classic control connection's), through a weak reference.
            functools.partial(_relay_host_event, weakref.ref(self)) if not self.sessions else None,
        )
        session = Session(self, engine_session)
        self.sessions.append(session)
        if len(self.sessions) == 1:
            nodes = engine_session.nodes()
            self.profile_manager.populate(self, nodes)
            legacy_lbp = self._load_balancing_policy
            if legacy_lbp is not None and all(
                legacy_lbp is not p.load_balancing_policy for p in self.profile_manager.profiles.values()
            ):
                legacy_lbp.populate(self, nodes)  # the legacy policy learns the hosts too, as classic
        if not self._metadata_attached:
            self._metadata_attached = True
            self.metadata._topology = Topology(self, self.metadata, self.token_metadata_enabled)
            self.metadata._topology.check()
            self.metadata._attach(
                self._metadata_fetch,
                schema_enabled=self.schema_metadata_enabled,
                token_enabled=self.token_metadata_enabled,
                max_schema_agreement_wait=self.max_schema_agreement_wait,
            )
        for udt_keyspace, type_map in self._user_types.items():
            for udt_name, klass in type_map.items():
                try:
                    session.user_type_registered(udt_keyspace, udt_name, klass)
                except UserTypeDoesNotExist as exc:
                    # The classic driver raises here (connect fails); a type dropped since
                    # it was registered only loses its simple-statement encoding.
                    log.warning("register_user_type(%r, %r): %s", udt_keyspace, udt_name, exc)
        return session

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

    def _engine_connect(self, keyspace=None, on_host_event=None):
        """An engine session; under the rustls verifier, a handshake of Python's own first
        (``_tls.load_lazy_cas``: the CA certificates OpenSSL loads only on demand, and the
        classic error for a rejected certificate)."""
        rejected = load_lazy_cas(self._tls, self.contact_points, self.port, float(self.connect_timeout))
        if rejected:
            raise NoHostAvailable("Unable to connect to any servers", rejected)
        return engine_connect(self, keyspace, on_host_event)

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

    def set_meta_refresh_enabled(self, enabled):
        """*Deprecated* (as in the classic driver): sets ``schema_metadata_enabled`` and
        ``token_metadata_enabled``."""
        warnings.warn(
            "Cluster.set_meta_refresh_enabled is deprecated and will be removed in 4.0. Set "
            "Cluster.schema_metadata_enabled and Cluster.token_metadata_enabled instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        self.schema_metadata_enabled = enabled
        self.token_metadata_enabled = enabled

    def register_user_type(self, keyspace, user_type, klass):
        """Maps a user-defined type to ``klass``: results are built as ``klass(**fields)``
        and instances are accepted as values (their attributes are read by field name):
        bound to prepared statements by the engine, and encoded as a UDT literal
        (``{ field : value , ... }``) in simple statements by each session's encoder, as
        the classic driver does. With sessions open, ``UserTypeDoesNotExist`` when the
        keyspace or the type is not in ``cluster.metadata``."""
        self._user_types.setdefault(keyspace, {})[user_type] = klass
        _UDT_CLASSES[(keyspace, user_type)] = klass
        for session in tuple(self.sessions):
            session.user_type_registered(keyspace, user_type, klass)

    def shutdown(self):
        """Closes every session of this cluster."""
        for s in self.sessions:
            s.shutdown()
        self.sessions = []
        own = self.__dict__.pop("_own_control", None)
        if own is not None:
            own.shutdown()
        self.__dict__.pop("_reader", None)
        self.is_shutdown = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


for _name, _setting in checked_settings().items():
    setattr(Cluster, _name, _setting)
    _setting.__set_name__(Cluster, _name)
del _name, _setting


class Session:
    """A connected session; safe to share between threads.

    Attributes (as in the classic driver): ``default_timeout`` (seconds, ``None`` = no
    client-side timeout), ``default_consistency_level``, ``default_serial_consistency_level``,
    ``default_fetch_size`` (``None`` = unpaged) and ``row_factory``.
    """

    default_timeout = 10.0
    default_consistency_level = ConsistencyLevel.LOCAL_ONE
    default_serial_consistency_level = None
    default_fetch_size = 5000
    row_factory = staticmethod(named_tuple_factory)
    client_protocol_handler = protocol.ProtocolHandler
    use_client_timestamp = True
    # How long get_query_trace() with no max_wait retries reading a trace (the classic
    # attribute, which the classic driver documents but no longer reads: it retries forever).
    max_trace_wait = 2.0

    def __init__(self, cluster, engine_session):
        self.cluster = cluster
        self._session = engine_session
        self.encoder = Encoder()
        # (request, row factory) of any statement, built by the engine with no Python
        # frame; execute_concurrent and the pipelines start their runs from it too.
        self._build_request = _engine.RequestBuilder(self)
        # What session.execute(...) calls: the method below in one engine call, with no
        # Python frame (see the `execute = _engine.EngineMethod(...)` line after it).
        self._engine_execute = _engine.SyncExecute(self._build_request, ResultSet)

    # The legacy per-session defaults: setting one puts the cluster in legacy mode (and is
    # refused once it uses execution profiles), as in the classic driver.
    _LEGACY_ATTRS = frozenset(
        ("row_factory", "default_timeout", "default_consistency_level", "default_serial_consistency_level")
    )
    _legacy_profile_cache = None

    def __setattr__(self, name, value):
        if name == "client_protocol_handler":
            protocol._check_protocol_handler(value)
        if name in self._LEGACY_ATTRS:
            cluster = self.__dict__.get("cluster")
            if cluster is not None:
                if cluster._config_mode == _ConfigMode.PROFILES:
                    raise ValueError(
                        "Cannot set Session.%s while using Configuration Profiles. Set this in a profile instead."
                        % (name,)
                    )
                cluster._config_mode = _ConfigMode.LEGACY
            self.__dict__["_legacy_profile_cache"] = None
        object.__setattr__(self, name, value)
        # Statements' options resolved by the engine (defaults included) are stale now.
        builder = self.__dict__.get("_build_request")
        if builder is not None:
            builder.settings_changed()

    def __delattr__(self, name):
        object.__delattr__(self, name)
        if name in self._LEGACY_ATTRS:
            self.__dict__["_legacy_profile_cache"] = None
        builder = self.__dict__.get("_build_request")
        if builder is not None:
            builder.settings_changed()

    @property
    def _client_clock(self):
        """The engine's source of this session's client timestamps (read by the engine with
        the other defaults; None when ``use_client_timestamp`` is off)."""
        if not self.use_client_timestamp:
            return None
        return self.cluster._engine_clock()

    @property
    def keyspace(self):
        return self._session.keyspace

    @property
    def _protocol_version(self):
        """The protocol version the session speaks (the classic attribute): the engine's, v4."""
        return self.cluster.protocol_version

    def get_execution_profile(self, name):
        """The cluster's execution profile named ``name`` (ValueError if none)."""
        profiles = self.cluster.profile_manager.profiles
        try:
            return profiles[name]
        except (KeyError, TypeError):
            eps = [_execution_profile_to_string(ep) for ep in profiles]
            raise ValueError(
                "Invalid execution_profile: %s; valid profiles are: %s."
                % (_execution_profile_to_string(name), ", ".join(eps))
            ) from None

    def _maybe_get_execution_profile(self, ep):
        return ep if isinstance(ep, ExecutionProfile) else self.get_execution_profile(ep)

    def execution_profile_clone_update(self, ep, **kwargs):
        """A shallow copy of profile ``ep`` (a name or a profile) with ``kwargs`` set."""
        profile = self._maybe_get_execution_profile(ep)
        if type(profile) is ExecutionProfile and "continuous_paging_options" not in kwargs:
            # Often made per request: the copy and its changes without copy.copy's
            # dispatch and a __setattr__ per attribute (the copy has no engine form yet,
            # so there is nothing to mark stale).
            clone = profile.__copy__()
            clone.__dict__.update(kwargs)
            return clone
        clone = copy.copy(profile)
        for attr, value in kwargs.items():
            setattr(clone, attr, value)
        return clone

    def _engine_profile_for(self, ep):
        """The engine's form of execution profile ``ep`` (None or EXEC_PROFILE_DEFAULT:
        the default; in legacy mode, the one the session's attributes make). Called by
        the engine when the session's defaults are read, and per request only for an
        ``execution_profile`` argument."""
        cluster = self.cluster
        if ep is None or ep is EXEC_PROFILE_DEFAULT:
            if cluster._config_mode != _ConfigMode.LEGACY:
                return cluster.profile_manager.default._engine_profile()
            legacy = self._legacy_profile_cache
            if legacy is None:
                legacy = ExecutionProfile(
                    cluster.load_balancing_policy,
                    cluster.default_retry_policy,
                    self.default_consistency_level,
                    self.default_serial_consistency_level,
                    self.default_timeout,
                    self.row_factory,
                )
                self.__dict__["_legacy_profile_cache"] = legacy
            return legacy._engine_profile()
        if type(ep) is ExecutionProfile and cluster._config_mode != _ConfigMode.LEGACY:
            # The common case first (a profile object, often a per-request clone).
            return ep._engine_profile()
        if getattr(ep, "_turbocql_derived", False):
            return ep._engine_profile()
        if cluster._config_mode == _ConfigMode.LEGACY:
            raise ValueError("Cannot specify execution_profile while using legacy parameters.")
        return self._maybe_get_execution_profile(ep)._engine_profile()

    def _derived_profile(self, **kwargs):
        """turbocql's own tools (``turbocql.bulk``, ``turbocql.dask``): a copy of the profile
        requests get by default (the default profile, or in legacy mode the one the
        session's attributes make) with ``kwargs`` set, usable as ``execution_profile`` in
        either mode. Users' ``execution_profile`` arguments keep the classic rule."""
        if self.cluster._config_mode == _ConfigMode.LEGACY:
            self._engine_profile_for(None)  # makes the legacy profile
            base = self._legacy_profile_cache
        else:
            base = self.cluster.profile_manager.default
        clone = copy.copy(base)
        for attr, value in kwargs.items():
            setattr(clone, attr, value)
        clone.__dict__["_turbocql_derived"] = True
        return clone

    def _host_address(self, host):
        """``"address:port"`` of a ``host=`` argument (a Host or an address)."""
        if isinstance(host, Host):
            return "%s:%d" % (host.address, host.endpoint.port)
        host = str(host)
        if host.count(":") == 1:
            return host
        return "%s:%d" % (host, self.cluster.port)

    @property
    def hosts(self):
        return self._session.hosts

    @property
    def is_shutdown(self):
        return self._session.is_shutdown

    def execute(
        self,
        query,
        parameters=None,
        timeout=_NOT_SET,
        trace=False,
        custom_payload=None,
        execution_profile=EXEC_PROFILE_DEFAULT,
        paging_state=None,
        host=None,
        execute_as=None,
    ):
        """Executes ``query`` and waits (GIL released) for its :class:`ResultSet`.

        ``query`` is a str, SimpleStatement, PreparedStatement, BoundStatement or
        BatchStatement. ``parameters`` fill ``%s`` / ``%(name)s`` for strings and simple
        statements, ``?`` / ``:name`` for prepared ones.

        (``session.execute`` is the session's ``_engine.SyncExecute``, which does exactly
        this in one call, with no Python frame; this function is what ``Session.execute``
        shows on the class.)
        """
        request, row_factory = self._build_request(
            query, parameters, timeout, trace, execution_profile, host, custom_payload, execute_as
        )
        return ResultSet(request.run(paging_state), self, request, row_factory, query)

    execute = _engine.EngineMethod(execute, "_engine_execute")  # type: ignore[assignment]  # stands for the function

    def execute_async(
        self,
        query,
        parameters=None,
        trace=False,
        custom_payload=None,
        timeout=_NOT_SET,
        execution_profile=EXEC_PROFILE_DEFAULT,
        paging_state=None,
        host=None,
        execute_as=None,
    ):
        """Starts ``query`` and returns a :class:`ResponseFuture` at once.

        Bad values raise here, before anything is sent. The request runs in the engine;
        callbacks added with :meth:`ResponseFuture.add_callbacks` run on the dispatcher
        thread, which hands back all ready completions under one GIL acquisition.
        """
        request, row_factory = self._build_request(
            query, parameters, timeout, trace, execution_profile, host, custom_payload, execute_as
        )
        future = ResponseFuture(self, request, query, row_factory, timeout)
        if _dispatcher_thread is None:
            _start_dispatcher()
        request.submit_to(future, paging_state)
        return future

    def prepare(self, query, custom_payload=None, keyspace=None):
        """Prepares ``query`` (``?`` or ``:name`` markers) and returns a PreparedStatement.
        Raises ``SyntaxException`` / ``InvalidRequest`` as the server decides."""
        if isinstance(query, SimpleStatement):
            query = query.query_string
        if keyspace is not None:
            raise UnsupportedOperation("prepare(keyspace=...) needs protocol v5; qualify the table name instead")
        if custom_payload is not None:
            raise UnsupportedOperation(
                "prepare(custom_payload=...): custom payloads are not supported by turbocql (the scylla crate "
                "sends none)"
            )
        return PreparedStatement(self._session.prepare(query, self.default_timeout), self.keyspace)

    def set_keyspace(self, keyspace):
        """Makes ``keyspace`` the session's keyspace (``InvalidRequest`` if it does not exist)."""
        self._session.set_keyspace(keyspace, self.default_timeout)

    def shutdown(self):
        """Closes the session's connections. Later requests raise ``DriverException``."""
        self._session.shutdown()

    def user_type_registered(self, keyspace, user_type, klass):
        """Called by :meth:`Cluster.register_user_type`: instances of ``klass`` in a simple
        statement's parameters are encoded as the UDT literal ``{ field : value , ... }``
        (the classic driver's form). ``UserTypeDoesNotExist`` when the keyspace or the
        type is not in the cluster's metadata."""
        try:
            ks_meta = self.cluster.metadata.keyspaces[keyspace]
        except KeyError:
            raise UserTypeDoesNotExist(
                "Keyspace %s does not exist or has not been discovered by the driver" % (keyspace,)
            ) from None
        try:
            type_meta = ks_meta.user_types[user_type]
        except KeyError:
            raise UserTypeDoesNotExist("User type %s does not exist in keyspace %s" % (user_type, keyspace)) from None
        field_names = type_meta.field_names

        def encode(val):
            return "{ %s }" % " , ".join(
                "%s : %s" % (field_name, self.encoder.cql_encode_all_types(getattr(val, field_name, None)))
                for field_name in field_names
            )

        self.encoder.mapping[klass] = encode

    def get_pool_state(self):
        """Per host the engine knows, what can be told of its connections, in the classic
        shape: ``{host: {'shutdown': ..., 'open_count': ..., 'in_flights': ...}}``. The
        engine (the scylla crate) keeps the pools and does not expose connection counts or
        per-connection requests in flight, so ``open_count`` and ``in_flights`` are None;
        ``shutdown`` is the session's, and ``is_up`` whether the engine holds connections
        to the host."""
        shutdown = self._session.is_shutdown
        nodes = [] if shutdown else self._session.nodes()
        return {
            host: {"shutdown": shutdown, "open_count": None, "in_flights": None, "is_up": bool(host.is_up)}
            for host in nodes
        }

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


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

    def _engine_profile_for(self, ep):
        timeout = self.cluster.control_connection_timeout
        if self._profile is None or self._profile.request_timeout != timeout:
            profile = ExecutionProfile(None, None, ConsistencyLevel.ONE, None, timeout, tuple_factory)
            self.__dict__["_profile"] = profile
        return self._profile._engine_profile()


_dispatcher_lock = threading.Lock()
_dispatcher_thread = None


def _start_dispatcher():
    """Starts the dispatcher thread on first use (and again in a forked child)."""
    global _dispatcher_thread
    with _dispatcher_lock:
        if _dispatcher_thread is None:
            t = threading.Thread(target=_engine.run_dispatcher, name="turbocql-dispatcher", daemon=True)
            t.start()
            _dispatcher_thread = t
            atexit.register(_stop_dispatcher, t)


def _stop_dispatcher(thread):
    """At interpreter exit: the dispatcher thread leaves the engine before Python finalizes
    (src/exec/completion.rs, ``stop_dispatcher``); callbacks of requests still running are
    not called, as the classic driver's daemon threads do not run them either."""
    _engine.stop_dispatcher()
    thread.join(5.0)


def _forget_dispatcher():
    """In a forked child: the engine starts a new runtime and queue, and the dispatcher
    thread is started again on first use. Sessions of the parent are not usable in the
    child (as with the classic driver): connect again there."""
    global _dispatcher_thread, _dispatcher_lock
    _engine._after_fork()
    _dispatcher_thread = None
    _dispatcher_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_dispatcher)


_RESULT_CORE_COLUMN_NAMES = _engine.ResultCore.column_names
_RESULT_CORE_COLUMN_TYPES = _engine.ResultCore.column_types


@functools.lru_cache(maxsize=256)
def _column_type_classes(names):
    """The cqltypes classes of a result's CQL type names (cached per column list)."""
    from turbocql.query import _type_class

    return tuple(_type_class(n) for n in names)


class ResultSet(_engine.ResultCore):
    """The rows of a request, a page at a time.

    Iterating goes through every page, fetching the next one (GIL released) when the
    current one is exhausted. ``current_rows`` is the current page; ``one()`` and ``all()``
    are shortcuts; ``was_applied`` reads a lightweight transaction's outcome.

    Built as ``ResultSet(page, session, request, row_factory, query, rows=None,
    response_future=None)``: cheap, the row factory runs on first access to the rows. The
    page's fields (``column_names``, ``column_types``, ``paging_state``, ``warnings``),
    ``current_rows`` and ``one()`` come from the engine (``_engine.ResultCore``).
    """

    _list_mode = False
    _page_iter = None

    def _set_page(self, page):
        self._reset_page(page)
        self._page_iter = None

    def fetch_next_page(self):
        """Replaces ``current_rows`` with the next page (no-op on the last page)."""
        if self.paging_state is not None:
            self._set_page(self._request.run(self.paging_state))
        else:
            self._current_rows = []

    def __iter__(self):
        if self._list_mode:
            return iter(self._current_rows)
        self._page_iter = iter(self._current_rows)
        return self._rows()

    def _rows(self):
        while True:
            yield from self._page_iter
            if self.paging_state is None:
                return
            self.fetch_next_page()
            self._page_iter = iter(self._current_rows)

    def __next__(self):
        if self._page_iter is None:
            self._page_iter = iter(self._current_rows)
        while True:
            try:
                return next(self._page_iter)
            except StopIteration:
                if self.paging_state is None:
                    raise
                self.fetch_next_page()
                self._page_iter = iter(self._current_rows)

    def all(self):
        """Every row of every remaining page, as a list."""
        return [row for row in self]

    def _enter_list_mode(self, operator):
        if self._list_mode:
            return
        if self._page_iter is not None:
            raise RuntimeError("Cannot use %s when results have been iterated." % operator)
        rows = [row for row in self]
        self._current_rows = rows
        self._page = self._page.as_last()
        self._list_mode = True

    @property
    def column_names(self):
        """The result's column names, a list as in the classic driver (None for a result
        without rows); made on access from the engine's tuple."""
        names = _RESULT_CORE_COLUMN_NAMES.__get__(self)
        return None if names is None else list(names)

    @property
    def column_types(self):
        """The result's column types, a list of cqltypes classes as in the classic driver
        (None for a result without rows); made on access from the engine's type names."""
        names = _RESULT_CORE_COLUMN_TYPES.__get__(self)
        return None if names is None else list(_column_type_classes(tuple(names)))

    def __eq__(self, other):
        """Compares all rows with ``other`` (every page is fetched first, as in the
        classic driver, e.g. ``result == [(1, 2)]``)."""
        self._enter_list_mode("equality operator")
        return self._current_rows == other

    __hash__ = None  # type: ignore[assignment]  # as classic: __eq__ without __hash__

    def __getitem__(self, i):
        """Index into all rows (every page is fetched first, as in the classic driver)."""
        self._enter_list_mode("index operator")
        return self._current_rows[i]

    def __bool__(self):
        return bool(self._current_rows) or self.has_more_pages

    @property
    def was_applied(self):
        """For a lightweight transaction (``IF ...``): whether it was applied."""
        if self._row_factory not in (named_tuple_factory, dict_factory, tuple_factory):
            raise RuntimeError("Cannot determine LWT result with row factory %s" % (self._row_factory,))
        is_batch = isinstance(self.query, BatchStatement)
        if is_batch and (not self.column_names or self.column_names[0] != "[applied]"):
            raise RuntimeError("No LWT were present in the BatchStatement")
        if not is_batch and len(self.current_rows) != 1:
            raise RuntimeError("LWT result should have exactly one row. This has %d." % len(self.current_rows))
        row = self.current_rows[0]
        if isinstance(row, tuple):
            return row[0]
        return row["[applied]"]

    def get_query_trace(self, max_wait_sec=None):
        """The server's trace of the current page's request (execute with ``trace=True``),
        or None; as classic, the response future's (one QueryTrace object per trace)."""
        future = self.response_future
        if future is not None:
            return future.get_query_trace(max_wait_sec)
        traces = _traces_seen(self, self._trace_id)
        return _populated(traces[-1], max_wait_sec, ConsistencyLevel.LOCAL_ONE) if traces else None

    def get_all_query_traces(self, max_wait_sec_per=None):
        """The traces of the pages seen so far (the classic driver keeps one per page)."""
        future = self.response_future
        if future is not None:
            return future.get_all_query_traces(max_wait_sec_per)
        return [_populated(t, max_wait_sec_per, ConsistencyLevel.LOCAL_ONE) for t in _traces_seen(self, self._trace_id)]

    def to_arrow(self):
        """Every remaining page as one ``pyarrow.Table`` (needs pyarrow; turbocql's own).

        With ``row_factory = turbocql.query.arrow_factory`` the pages are decoded by the
        engine straight into Arrow buffers; with another row factory the rows are converted
        from their Python values (slower, types as pyarrow infers them)."""
        from turbocql import _arrow

        return _arrow.result_table(self)

    def to_pandas(self):
        """Every remaining page as one ``pandas.DataFrame`` (needs pyarrow and pandas)."""
        return self.to_arrow().to_pandas()

    def to_polars(self):
        """Every remaining page as one ``polars.DataFrame`` (needs pyarrow and polars)."""
        import polars

        return polars.from_arrow(self.to_arrow())

    def __repr__(self):
        return "<ResultSet rows=%d, has_more_pages=%s>" % (len(self.current_rows), self.has_more_pages)


def _traces_seen(owner, trace_id):
    """The QueryTrace objects recorded on ``owner`` (a future or a ResultSet), with
    ``trace_id`` (the current page's) appended when new: one object per trace, so that
    the future's and its result sets' traces are the same objects, as in the classic driver."""
    traces = owner.__dict__.setdefault("_traces", [])
    if trace_id is not None and not any(t.trace_id == trace_id for t in traces):
        session = owner.session if isinstance(owner, ResponseFuture) else owner._session
        traces.append(QueryTrace(trace_id, session))
    return traces


def _populated(trace, max_wait, query_cl):
    if not trace.events:
        if max_wait is None:
            max_wait = getattr(trace._session, "max_trace_wait", Session.max_trace_wait)
        trace.populate(max_wait=max_wait, query_cl=query_cl)
    return trace


log = logging.getLogger("turbocql.cluster")


class QueryExhausted(Exception):
    """``start_fetching_next_page()`` was called on the last page."""


class ResponseFuture(_engine.ResponseFutureCore):
    """The future result of :meth:`Session.execute_async`.

    ``result(timeout=None)`` waits (GIL released) and returns a :class:`ResultSet` or raises
    the request's exception; ``timeout`` bounds that wait only (``OperationTimedOut``).
    ``add_callback(fn, *args, **kwargs)``, ``add_errback``, ``add_callbacks(callback,
    errback, callback_args=(), callback_kwargs=None, errback_args=(), errback_kwargs=None)``
    and ``clear_callbacks()``: callbacks get the page's rows (``None`` for a write) and
    errbacks the exception; they run on the dispatcher thread, or at once in the caller's
    thread when added after completion; failures are logged. A callback may call
    ``execute_async`` again. ``has_more_pages`` and ``start_fetching_next_page()`` (the
    callbacks run again with the next page). ``done``, ``query``, ``session``,
    ``row_factory``, ``timeout``.

    Built as ``ResponseFuture(session, request, query, row_factory, timeout)``; the engine
    (``_engine.ResponseFutureCore``) settles it: the request's target is the future itself.
    """

    @property
    def is_schema_agreed(self):
        """False when the request was a schema change and the nodes were not seen to agree
        on the schema within ``max_schema_agreement_wait`` (the engine waits before it
        settles the request; the change is applied and a warning logged). As classic: True
        for anything else, a failed request included."""
        if not self.done:
            return True
        try:
            return self.result()._schema_agreed
        except Exception:  # noqa: BLE001 - a failed request: nothing to agree on
            return True

    @property
    def warnings(self):
        """The server's warnings for the request (a list of str, or None). As classic:
        ``DriverException`` while the request is not done; None for a failed request."""
        if not self.done:
            raise DriverException("warnings cannot be retrieved before ResponseFuture is finalized")
        try:
            return self.result().warnings
        except Exception:  # noqa: BLE001 - the request's error: it brought no warnings
            return None

    @property
    def _query_traces(self):
        """The QueryTrace of each traced page seen so far (None when there is none), as the
        classic attribute. The engine hands the future its current page only: a page's
        trace is recorded when this (or a trace method) is read while it is current."""
        if not self.done:
            return self.__dict__.get("_traces") or None
        try:
            trace_id = self.result()._trace_id
        except Exception:  # noqa: BLE001 - a failed request has no trace id here
            trace_id = None
        return _traces_seen(self, trace_id) or None

    def get_query_trace_ids(self):
        """The trace ids of the traced pages (does not read the traces)."""
        return [trace.trace_id for trace in self._query_traces or ()]

    def get_query_trace(self, max_wait=None, query_cl=ConsistencyLevel.LOCAL_ONE):
        """The trace of the last response, read at ``query_cl``, or None when the request
        was not traced; ``TraceUnavailable`` when the future is not done or the trace is
        not written within ``max_wait`` seconds (``session.max_trace_wait``, 2 s, if None)."""
        if not self.done:
            raise TraceUnavailable("Trace information was not available. The ResponseFuture is not done.")
        traces = self._query_traces
        if traces:
            return _populated(traces[-1], max_wait, query_cl)
        return None

    def get_all_query_traces(self, max_wait_per=None, query_cl=ConsistencyLevel.LOCAL_ONE):
        """The traces of every traced page seen (see ``_query_traces``)."""
        return [_populated(t, max_wait_per, query_cl) for t in self._query_traces or ()]

    def __repr__(self):
        # The classic form, less what the engine does not tell (request id, coordinator).
        result, exception = "(no result yet)", None
        if self.done:
            try:
                result = self.result()
            except Exception as exc:  # noqa: BLE001 - shown, not raised
                result, exception = None, exc
        return "<ResponseFuture: query='%s' result=%s exception=%s>" % (self.query, result, exception)

    __str__ = __repr__


def _bootstrap_engine():
    """Hands the engine, once, every Python object it uses (see src/pyrefs.rs)."""
    import asyncio

    import turbocql
    from turbocql.pool import _host_of
    from turbocql.query import _row_class

    objects = {
        name: getattr(turbocql, name)
        for name in (
            "DriverException",
            "InvalidRequest",
            "AlreadyExists",
            "FunctionFailure",
            "AuthenticationFailed",
            "Unauthorized",
            "Unavailable",
            "ReadTimeout",
            "WriteTimeout",
            "ReadFailure",
            "WriteFailure",
            "OperationTimedOut",
            "UnsupportedOperation",
        )
    }
    for name in (
        "ErrorMessage",  # an error code the driver does not know
        "ConfigurationException",  # the classic cassandra.protocol class (an ErrorMessage)
        "SyntaxException",
        "OverloadedErrorMessage",
        "IsBootstrappingErrorMessage",
        "TruncateError",
        "ProtocolException",
        "PreparedQueryNotFound",
        "ServerError",
    ):
        objects[name] = getattr(protocol, name)
    objects.update(
        NoHostAvailable=NoHostAvailable,
        ConnectionException=ConnectionException,
        ConnectionBusy=ConnectionBusy,
        QueryExhausted=QueryExhausted,
        UNSET_VALUE=UNSET_VALUE,
        UUID=uuid.UUID,
        Decimal=decimal.Decimal,
        Date=util.Date,
        Time=util.Time,
        Duration=util.Duration,
        SortedSet=util.SortedSet,
        OrderedMap=util.OrderedMap,
        make_udt=_make_udt,
        row_class=_row_class,
        PreparedStatement=PreparedStatement,
        BoundStatement=BoundStatement,
        SimpleStatement=SimpleStatement,
        BatchStatement=BatchStatement,
        FETCH_SIZE_UNSET=FETCH_SIZE_UNSET,
        NOT_SET=_NOT_SET,
        bind_params=bind_params,
        numpy_factory=numpy_factory,
        arrow_factory=arrow_factory,
        cql_text_factory=cql_text_factory,
        NumpyProtocolHandler=protocol.NumpyProtocolHandler,
        named_rows=named_tuple_factory,
        ResultSet=ResultSet,
        EXEC_PROFILE_DEFAULT=EXEC_PROFILE_DEFAULT,
        host_of=_host_of,
        cluster_log=log,
        asyncio_Future=asyncio.Future,
        asyncio_CancelledError=asyncio.CancelledError,
        asyncio_InvalidStateError=asyncio.InvalidStateError,
        asyncio_get_running_loop=asyncio.get_running_loop,
    )
    _engine._bootstrap(objects)


_bootstrap_engine()
