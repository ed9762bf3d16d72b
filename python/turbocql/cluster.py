"""Clusters and sessions, under the classic driver's names (``cassandra.cluster``).

:class:`Cluster` holds the connection settings, :meth:`Cluster.connect` returns a
:class:`Session`, and :meth:`Session.execute` returns a :class:`ResultSet`. Requests run
in the Rust engine with the GIL released, so one Session serves many threads.

This module holds :class:`Cluster`; the rest of the classic module's names are
re-exported from where they live, one concern each, importing only downward (engine ->
future -> results / dispatcher -> session -> control -> cluster; ``scripts/import_cycles.py``
checks that no module imports one that imports it back). A session and its requests in
``turbocql._session``: ``future`` (ResponseFuture, NoHostAvailable, QueryExhausted, query
tracing), ``results`` (ResultSet), ``dispatcher`` (the callback thread), ``session``
(Session). The cluster's own pieces in ``turbocql._cluster``: ``control`` (the control
connection, system-table reads, host events), ``request_settings`` (legacy parameters,
execution profiles, client timestamps), ``pool_size`` (the pool size settings),
``arguments`` (the arguments checked, honoured or refused), ``connect`` and ``tls`` (what
``connect()`` hands the engine), ``bootstrap`` (the engine's Python objects, handed over at
the end of this module's import) and ``classic_names``. Also ``turbocql._policies.profiles``
(ExecutionProfile) and ``turbocql._types.udt`` (UDT value classes).
"""

import atexit
import functools
import threading
import uuid
import warnings
import weakref
from typing import TYPE_CHECKING
from warnings import warn  # noqa: F401 - the classic cassandra.cluster.warn (ResultSet indexing warns through it)

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
    _loggers,
    protocol,
    util,
)
from turbocql._cluster.arguments import (
    ProtocolAndAuthSettings,
    check_cluster_arguments,
    check_policy_instances,
    checked_settings,
    protocol_version_refusal,
)
from turbocql._cluster.bootstrap import _bootstrap_engine
from turbocql._cluster.classic_names import (  # noqa: F401 - classic names of cassandra.cluster
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
    BatchMessage,
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
    ExecuteMessage,
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
from turbocql._cluster.connect import engine_connect
from turbocql._cluster.control import (  # noqa: F401 - names of turbocql.cluster, moved
    ClusterControl,
    ControlConnection,
    _relay_host_event,
    _SystemReader,
)
from turbocql._cluster.pool_size import ClusterPoolSize
from turbocql._cluster.request_settings import ClusterProfiles
from turbocql._cluster.tls import load_lazy_cas, tls_settings
from turbocql._metadata.topology import Topology
from turbocql._policies.profiles import (  # noqa: F401 - classic names of turbocql.cluster
    _UNSET,
    EXEC_PROFILE_DEFAULT,
    ExecutionProfile,
    ProfileManager,
    _ConfigMode,
    _execution_profile_to_string,
)
from turbocql._session import dispatcher as _dispatcher
from turbocql._session.dispatcher import _forget_dispatcher, _start_dispatcher, _stop_dispatcher  # noqa: F401 - moved
from turbocql._session.future import (  # noqa: F401 - names of turbocql.cluster, moved
    NoHostAvailable,
    QueryExhausted,
    ResponseFuture,
    _populated,
    _traces_seen,
)
from turbocql._session.results import (  # noqa: F401 - names of turbocql.cluster, moved
    _RESULT_CORE_COLUMN_NAMES,
    _RESULT_CORE_COLUMN_TYPES,
    ResultSet,
    _column_type_classes,
)
from turbocql._session.session import _NOT_SET, Session, _NotSet  # noqa: F401 - moved
from turbocql._types.udt import _UDT_CLASSES, _make_udt, _udt_tuple_type  # noqa: F401 - moved
from turbocql._util.homes import publish as _publish
from turbocql.connection import ConnectionException  # noqa: F401 - a classic name of cassandra.cluster
from turbocql.encoder import Encoder  # noqa: F401 - a classic name of cassandra.cluster
from turbocql.metadata import Metadata
from turbocql.metrics import Metrics
from turbocql.policies import ExponentialReconnectionPolicy, RetryPolicy
from turbocql.query import (  # noqa: F401 - classic names of cassandra.cluster
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

log = _loggers.cluster

if TYPE_CHECKING:
    from turbocql._session.dispatcher import _dispatcher_lock, _dispatcher_thread  # noqa: F401
else:

    def __getattr__(name):
        # The dispatcher's state, rebound in turbocql._session.dispatcher (the thread once started,
        # both in a forked child): read there when asked for here, never a stale copy.
        if name in ("_dispatcher_thread", "_dispatcher_lock"):
            return getattr(_dispatcher, name)
        raise AttributeError("module %r has no attribute %r" % (__name__, name))


# The connected clusters, shut down at interpreter exit as the classic driver does (its
# module-level name, which applications and the cqlengine tests read). Weak, unlike the
# classic set: a cluster the application dropped is still collected (its sessions
# closed by the collector), and only those alive at exit are shut down here.
_clusters_for_shutdown: "weakref.WeakSet[Cluster]" = weakref.WeakSet()


def _register_cluster_shutdown(cluster):
    _clusters_for_shutdown.add(cluster)


def _discard_cluster_shutdown(cluster):
    _clusters_for_shutdown.discard(cluster)


@atexit.register
def _shutdown_clusters():
    for cluster in list(_clusters_for_shutdown):  # a copy: shutdown discards from the set
        cluster.shutdown()


class Cluster(ClusterProfiles, ClusterControl, ClusterPoolSize, ProtocolAndAuthSettings):
    """The cluster's connection settings; :meth:`connect` opens a :class:`Session`.

    Takes the classic driver's arguments: each is honoured, kept because the engine
    already does what its value asks, or refused with ``UnsupportedOperation`` naming it,
    when given and when assigned later (``turbocql._cluster.arguments``;
    docs/audit-accepted-settings.md).
    """

    # Class-level, as classic: ``Mock(spec=Cluster)`` (user code's stand-in for a cluster,
    # e.g. for TokenAwarePolicy.populate) sees only what the class declares.
    metadata = None

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
        max_frame_length=256 * 1024 * 1024,
    ):
        check_policy_instances(
            load_balancing_policy=load_balancing_policy,
            reconnection_policy=reconnection_policy,
            default_retry_policy=default_retry_policy,
            address_translator=address_translator,
        )
        # Classic arguments the engine cannot honour raise here (see _cluster.arguments).
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
        # None is the default too, as classic (cqlengine's connection.setup(hosts=None)).
        contact_points_explicit = contact_points is not _NOT_SET and contact_points is not None
        if not contact_points_explicit:
            contact_points = ["127.0.0.1"]
        if isinstance(contact_points, str):
            raise TypeError("contact_points should not be a string, it should be a sequence (e.g. list) of strings")
        if None in contact_points:
            raise ValueError("contact_points should not contain None (it can resolve to localhost)")
        self.contact_points = list(contact_points)
        self.port = int(port)
        if compression is True:
            compression = "lz4"
        elif compression in (False, None):
            compression = None
        elif compression not in ("lz4", "snappy"):
            raise ValueError("compression must be True, False, 'lz4' or 'snappy', not %r" % (compression,))
        self.compression = compression
        # Checked now (a bad option raises here); the engine reads the context at connect.
        self._tls = tls_settings(ssl_context, ssl_options)
        self.ssl_context = ssl_context
        self.ssl_options = ssl_options
        if cloud is not None:
            raise UnsupportedOperation("cloud (secure connect bundles) is not supported")
        # The engine always speaks protocol v4, which Cassandra 2.2+ and ScyllaDB accept.
        self.protocol_version = ProtocolVersion.V4 if protocol_version is _NOT_SET else protocol_version
        self.auth_provider = auth_provider
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
        # Counted by the engine on every path (turbocql.metrics); weakly held, as classic.
        self.metrics = Metrics(weakref.proxy(self)) if metrics_enabled else None
        # Configuration only (see _cluster.arguments): kept as the classic attributes.
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
        # turbocql's own (src/api/frame_limit.rs): a response frame declaring a longer body
        # fails its connection before anything is allocated for it (ConnectionException, the
        # request going on by the retry policy). One limit per process: Clusters connected at
        # the same time must agree on it.
        self.max_frame_length = max_frame_length
        self._set_pool_size(connections_per_host, connections_per_shard)
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

    def connect(self, keyspace=None, wait_for_all_pools=False):
        """Opens a :class:`Session`, optionally in ``keyspace``.

        Raises :class:`NoHostAvailable` when no contact point answers within
        ``connect_timeout``, ``InvalidRequest`` for an unknown keyspace.
        """
        if self.is_shutdown:
            raise DriverException("Cluster is already shut down")
        if not self.contact_points:
            raise NoHostAvailable("Unable to connect to any servers", {})  # as classic
        if self._refused_protocol_version is not None:
            refusal = protocol_version_refusal(self._refused_protocol_version)
            raise NoHostAvailable(
                "Unable to connect to any servers",
                {"%s:%s" % (cp, self.port): UnsupportedOperation(refusal) for cp in self.contact_points},
            )
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
        _register_cluster_shutdown(self)
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

    def _engine_connect(self, keyspace=None, on_host_event=None):
        """An engine session; under the rustls verifier, a handshake of Python's own first
        (``_cluster.tls.load_lazy_cas``: the CA certificates OpenSSL loads only on demand, and the
        classic error for a rejected certificate)."""
        rejected = load_lazy_cas(self._tls, self.contact_points, self.port, float(self.connect_timeout))
        if rejected:
            raise NoHostAvailable("Unable to connect to any servers", rejected)
        return engine_connect(self, keyspace, on_host_event)

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
        _discard_cluster_shutdown(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


for _name, _setting in checked_settings().items():
    setattr(Cluster, _name, _setting)
    _setting.__set_name__(Cluster, _name)
del _name, _setting


# This module is the home of the classic names of cassandra.cluster that live in
# turbocql._cluster, turbocql._session and turbocql._policies (reprs, tracebacks, docs and
# pickles name turbocql.cluster), and of _NotSet and _SystemReader, as before. The names of
# turbocql.policies, turbocql.query and turbocql.metadata it passes on have those modules as
# theirs, and its helpers (check_cluster_arguments, ClusterControl...) stay where they are.
_publish(
    __name__,
    [
        "ContinuousPagingOptions",
        "ControlConnection",
        "ExecutionProfile",
        "NoHostAvailable",
        "ProfileManager",
        "QueryExhausted",
        "ResponseFuture",
        "ResultSet",
        "Session",
        "UserTypeDoesNotExist",
        "_NotSet",
        "_SystemReader",
    ],
)

_bootstrap_engine()
