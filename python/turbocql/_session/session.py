"""The classic ``Session`` (re-exported by ``turbocql.cluster``): a connected session's
settings, ``execute`` / ``execute_async`` / ``prepare`` over the engine's session, and its
execution profiles as the engine reads them. Also ``_NOT_SET``, the "argument not given"
default of its methods. Imports the results and the dispatcher; the cluster imports it.
"""

import asyncio
import concurrent.futures
import copy
import warnings

from turbocql import ConsistencyLevel, UnsupportedOperation, _engine, protocol
from turbocql._cluster.classic_names import UserTypeDoesNotExist
from turbocql._policies.profiles import (
    EXEC_PROFILE_DEFAULT,
    ExecutionProfile,
    _ConfigMode,
    _execution_profile_to_string,
)
from turbocql._session import dispatcher as _dispatcher
from turbocql._session.future import _MAX_TRACE_WAIT, ResponseFuture
from turbocql._session.results import ResultSet
from turbocql.encoder import Encoder
from turbocql.pool import Host
from turbocql.query import PreparedStatement, SimpleStatement, named_tuple_factory


class _NotSet:
    def __repr__(self):
        return "_NOT_SET"


_NOT_SET = _NotSet()


class _SessionType(type):
    """Session's metaclass, for one thing: an APM agent that replaces ``execute_async`` on
    the class (OpenTelemetry's cassandra instrumentation wraps ``Session.execute_async``)
    must see every request, as with the classic driver, whose ``execute`` calls
    ``execute_async``. While it is replaced, ``Session.execute`` does the same; put back,
    ``execute`` is the engine's one-call form again. Nothing changes for uninstrumented
    sessions: the check runs when the class attribute is set, not per request."""

    def __setattr__(cls, name, value):
        own = cls.__dict__.get("_own_execute_async")
        if name == "execute_async" and own is not None and value is own.__wrapped__:
            # Put back as read from the class (``Session.execute_async`` is the Python
            # function of the engine's method): the engine's one-call form again.
            value = own
        type.__setattr__(cls, name, value)
        if name == "execute_async" and "execute" in cls.__dict__:
            direct = cls.__dict__.get("_direct_execute")
            if direct is not None:
                through = value is not own
                type.__setattr__(cls, "execute", _execute_through_execute_async if through else direct)


def _execute_through_execute_async(
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
    """``Session.execute`` while ``execute_async`` is replaced (an APM agent's wrapper): the
    classic driver's own ``execute``, ``execute_async(...).result()``."""
    return self.execute_async(
        query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host, execute_as
    ).result()


def _execute_async_replaced(session):
    """Whether ``session.execute_async`` is not turbocql's own (an agent's wrapper on the
    instance or the class, or a subclass's; or the session is not a turbocql Session, a
    ``Mock`` in tests): the bulk paths then go through it too."""
    if not isinstance(session, Session):
        return True
    return "execute_async" in session.__dict__ or type(session).execute_async is not Session._own_execute_async


class _ClassicStorage:
    """The classic driver's private name of a session setting (``_default_consistency_level``,
    read by code written against it): on the class, the setting's default; on a session,
    its value; set, the setting is set (without the public setter's deprecation warning)."""

    def __init__(self, name):
        self.name = name

    def __get__(self, session, cls=None):
        return getattr(cls if session is None else session, self.name)

    def __set__(self, session, value):
        session._set_setting(self.name, value)


class Session(metaclass=_SessionType):
    """A connected session; safe to share between threads.

    Attributes (as in the classic driver): ``default_timeout`` (seconds, ``None`` = no
    client-side timeout), ``default_consistency_level``, ``default_serial_consistency_level``,
    ``default_fetch_size`` (``None`` = unpaged) and ``row_factory``.
    """

    default_timeout = 10.0
    default_consistency_level = ConsistencyLevel.LOCAL_ONE
    _default_consistency_level = _ClassicStorage("default_consistency_level")
    default_serial_consistency_level = None
    _default_serial_consistency_level = _ClassicStorage("default_serial_consistency_level")
    default_fetch_size = 5000
    row_factory = staticmethod(named_tuple_factory)
    client_protocol_handler = protocol.ProtocolHandler
    use_client_timestamp = True
    # How long get_query_trace() with no max_wait retries reading a trace (the classic
    # attribute, which the classic driver documents but no longer reads: it retries forever).
    max_trace_wait = _MAX_TRACE_WAIT

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
        # What session.execute_async(...) calls, likewise (the `execute_async = ...` line).
        self._engine_execute_async = _engine.AsyncExecute(self._build_request, ResponseFuture, _dispatcher)

    @property
    def _engine_metrics(self):
        """The cluster's metrics as the engine counts them (None when not enabled), read
        with the session's defaults."""
        metrics = self.cluster.metrics
        return metrics._engine if metrics is not None else None

    @property
    def _engine_tracing(self):
        """The cluster's ``_engine.Tracing`` once ``turbocql.tracing.instrument`` was called
        (None otherwise), read with the session's defaults."""
        tracing = getattr(self.cluster, "_tracing", None)
        return tracing.engine if tracing is not None else None

    # The legacy per-session defaults: setting one puts the cluster in legacy mode (and is
    # refused once it uses execution profiles), as in the classic driver.
    _LEGACY_ATTRS = frozenset(
        ("row_factory", "default_timeout", "default_consistency_level", "default_serial_consistency_level")
    )
    _legacy_profile_cache = None

    def __setattr__(self, name, value):
        if name == "default_consistency_level":
            # As classic (the session-level default still works, in legacy mode).
            warnings.warn(
                "Setting the consistency level at the session level will be removed in 4.0. Consider using "
                "execution profiles and setting the desired consistency level to the EXEC_PROFILE_DEFAULT profile.",
                DeprecationWarning,
                stacklevel=2,
            )
        self._set_setting(name, value)

    def _set_setting(self, name, value):
        if name == "execute_async":
            # An agent's wrapper on this session (ddtrace's cassandra integration): execute
            # goes through it, as classic (see _SessionType).
            self.__dict__["_engine_execute"] = _execute_through_execute_async.__get__(self)
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
        if name == "execute_async":
            self.__dict__["_engine_execute"] = _engine.SyncExecute(self._build_request, ResultSet)
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

    def _own_schema_change(self, query):
        """Called by the engine before it returns the result of a statement that may have
        changed the schema (see ``Metadata._own_schema_change``). In a running asyncio
        loop's thread the read waits for the next access instead, not to block the loop."""
        self.cluster.metadata._own_schema_change(query, self.keyspace, read_now=asyncio._get_running_loop() is None)

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

        (``session.execute_async`` is the session's ``_engine.AsyncExecute``, which does
        exactly this in one call, with no Python frame.)
        """
        request, row_factory = self._build_request(
            query, parameters, timeout, trace, execution_profile, host, custom_payload, execute_as
        )
        # Its timeout is the one in force (the call's, else the profile's), as classic.
        future = ResponseFuture(self, request, query, row_factory, request.timeout)
        if _dispatcher._dispatcher_thread is None:
            _dispatcher._start_dispatcher()
        request.submit_to(future, paging_state)
        return future

    execute_async = _engine.EngineMethod(execute_async, "_engine_execute_async")  # type: ignore[assignment]

    # What _SessionType restores when an agent puts execute_async back.
    _own_execute_async = execute_async
    _direct_execute = execute

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

    def add_or_renew_pool(self, host, is_host_addition):
        """The classic method that (re)opens a host's connection pool, returning a
        ``concurrent.futures.Future`` of whether it did. The engine (the scylla crate) opens
        and renews the pool of every node itself, so nothing is done here: a done Future,
        True while the session is up."""
        future = concurrent.futures.Future()
        future.set_result(not self.is_shutdown)
        return future

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
