"""The classic ``Cluster`` arguments the engine does not take as they are: each is either
honoured elsewhere, accepted as configuration only (its value cannot change what the
engine does, or the engine already does what the value asks), or refused here with
``UnsupportedOperation`` naming the argument, when a value would change behaviour that
turbocql does not provide. ``check_cluster_arguments`` is called by ``Cluster.__init__``.

Decisions (docs/migrating.md's migration table says the same):

* ``address_translator``: None or an ``IdentityTranslator``; another translator raises
  (the engine connects to the addresses the nodes report in system.peers).
* ``conviction_policy_factory``: None or ``SimpleConvictionPolicy`` (the engine marks a
  host down when its connections fail, which is what that policy does); another raises.
* ``metrics_enabled``: honoured (``cluster.metrics``, ``turbocql.metrics``); given to
  ``Cluster()`` only: assigning another value later raises (the classic driver makes its
  metrics in ``Cluster.__init__`` and ignores a later change).
* ``endpoint_factory``: None or a ``DefaultEndPointFactory``; another raises (the engine
  makes the endpoints of the nodes it discovers).
* ``column_encryption_policy``: anything but None raises (values would be sent in clear).
* ``no_compact=True`` raises (the engine's STARTUP does not send NO_COMPACT).
* ``sockopts``: None, or only ``TCP_NODELAY`` on (the engine sets it); other options raise.
* ``connection_class``: None, turbocql's ``Connection`` and the reactor classes of
  ``turbocql.io`` (configuration only), or a subclass that overrides none of the classic
  connection's I/O methods; a class that does (or is not a turbocql connection class)
  raises: the engine opens and runs every connection.
* ``idle_heartbeat_interval`` / ``idle_heartbeat_timeout``: honoured by the engine's
  keepalive (an OPTIONS every interval, 0 for none; the connection closed when one is not
  answered within the timeout), sent on every connection where the classic driver sends
  it only on idle ones.
* ``prepare_on_all_hosts=False`` raises: the engine prepares every statement on every node
  (and waits for them), which is the classic default; what False asks, fewer PREPAREs on
  the nodes, cannot be had.
* ``schema_event_refresh_window``: negative, as classic, the schema metadata is no longer
  read again on the server's events, only by ``Cluster.refresh_*_metadata`` and after the
  cluster's own schema changes. Zero or more is kept: the window only spreads the classic
  driver's refresh reads over time; turbocql reads the schema again at the next access
  after an event, so what the application reads is never staler than a window allows.
* ``topology_event_refresh_window``: a negative value (classic: stop refreshing the node
  list on the server's events) raises, as the engine's control connection always follows
  them; zero or more is kept (the node list follows at once).
* ``monitor_reporting_interval`` other than 30 with ``monitor_reporting_enabled`` raises:
  turbocql sends no Insights reports (the classic driver sends them to DSE 6.8+ only, so
  the default and ``monitor_reporting_enabled=False`` ask for nothing turbocql does not do).
* Kept, with the reason the engine already does what any value asks:
  ``reprepare_on_up`` (False: statements are prepared again on a node only when it answers
  UNPREPARED, which is what the engine does; True, the default, re-prepares eagerly when a
  node comes up, saving that one round trip), ``status_event_refresh_window`` (a delay
  before reconnecting to a node reported up: the engine reconnects on its reconnection
  policy's schedule; nothing sent or returned depends on it), ``executor_threads`` (sizes
  the classic driver's internal worker pool for its own maintenance: turbocql has none,
  that work runs in the engine) and ``allow_beta_protocol_version`` (the USE_BETA flag
  changes nothing on protocol v4 frames, all the engine sends; beta versions need a
  ``protocol_version``, which raises).
* Each refused argument is checked again when the attribute is assigned after
  construction (``cluster.prepare_on_all_hosts = False`` raises too): see
  :class:`CheckedSetting`.
* ``protocol_version``: unset or 4 (the engine speaks protocol v4 only); any other
  version raises ``UnsupportedOperation``. ``cql_version``: None only (the engine's
  STARTUP names the scylla crate's CQL 4.0.0); a version raises ``UnsupportedOperation``.
"""

import socket

from turbocql import ProtocolVersion, UnsupportedOperation

# The classic Connection's methods that do I/O or drive the protocol: a user's
# connection_class overriding one of them expects to run the connections.
_CONNECTION_IO_METHODS = (
    "factory",
    "connect",
    "close",
    "defunct",
    "push",
    "handle_read",
    "handle_write",
    "handle_pushed",
    "send_msg",
    "wait_for_response",
    "wait_for_responses",
    "process_msg",
    "process_io_buffer",
    "register_watcher",
    "register_watchers",
    "set_keyspace_blocking",
    "set_keyspace_async",
    "service_timeouts",
    "initialize_reactor",
    "create_timer",
    "handle_fork",
    "_connect_socket",
    "_send_options_message",
    "_send_startup_message",
)


def _refuse(argument, why):
    raise UnsupportedOperation("Cluster(%s=...): %s" % (argument, why))


def _check_connection_class(connection_class):
    from turbocql.connection import Connection

    if connection_class is None:
        return
    if not (isinstance(connection_class, type) and issubclass(connection_class, Connection)):
        _refuse(
            "connection_class",
            "%r is not a turbocql connection class: turbocql's engine opens and runs every connection "
            "(the reactor classes of turbocql.io are accepted as names)" % (connection_class,),
        )
    for klass in connection_class.__mro__:
        if klass.__module__.split(".")[0] == "turbocql":
            continue
        overridden = sorted(name for name in _CONNECTION_IO_METHODS if name in vars(klass))
        if overridden:
            _refuse(
                "connection_class",
                "%s overrides %s: turbocql's engine opens and runs every connection, so a connection "
                "class's I/O is never called" % (connection_class.__name__, ", ".join(overridden)),
            )


def _check_sockopts(sockopts):
    for option in sockopts or ():
        level, name, value = option
        if (level, name) == (socket.IPPROTO_TCP, socket.TCP_NODELAY) and value:
            continue  # the engine sets TCP_NODELAY on every connection
        _refuse(
            "sockopts",
            "socket option %r is not supported: the engine opens the sockets (it sets TCP_NODELAY only)" % (option,),
        )


def _check_address_translator(address_translator):
    from turbocql.policies import IdentityTranslator

    if address_translator is not None and type(address_translator) is not IdentityTranslator:
        _refuse(
            "address_translator",
            "only IdentityTranslator is supported: the engine connects to the addresses the nodes "
            "report (system.peers), untranslated",
        )


def _check_conviction_policy_factory(conviction_policy_factory):
    from turbocql.policies import SimpleConvictionPolicy

    if conviction_policy_factory is not None and not callable(conviction_policy_factory):
        raise ValueError("conviction_policy_factory must be callable")  # as classic, before anything
    if conviction_policy_factory not in (None, SimpleConvictionPolicy):
        _refuse(
            "conviction_policy_factory",
            "only SimpleConvictionPolicy is supported: the engine marks a host down when its connections fail",
        )


def _check_metrics_enabled(metrics_enabled):
    if not isinstance(metrics_enabled, bool):
        raise TypeError("metrics_enabled must be True or False, not %r" % (metrics_enabled,))


def _check_endpoint_factory(endpoint_factory):
    from turbocql.connection import DefaultEndPointFactory

    if endpoint_factory is not None and type(endpoint_factory) is not DefaultEndPointFactory:
        _refuse(
            "endpoint_factory", "the engine makes the endpoints of the nodes it discovers; only DefaultEndPointFactory"
        )


def _check_column_encryption_policy(column_encryption_policy):
    if column_encryption_policy is not None:
        _refuse(
            "column_encryption_policy",
            "client-side column encryption is not supported (values would be sent unencrypted)",
        )


def _check_no_compact(no_compact):
    if no_compact:
        _refuse("no_compact", "the engine's STARTUP does not send NO_COMPACT")


def _check_prepare_on_all_hosts(prepare_on_all_hosts):
    if not prepare_on_all_hosts:
        _refuse(
            "prepare_on_all_hosts",
            "False is not supported: the engine prepares every statement on every node (the classic "
            "default, True); leave it unset",
        )


def check_policy_instances(**policies):
    """As classic: a policy (or translator) given as its class, not an instance, is a
    TypeError at ``Cluster()``, before anything else is checked."""
    for argument, value in policies.items():
        if isinstance(value, type):
            raise TypeError("%s should not be a class, it should be an instance of that class" % argument)


def _check_event_refresh_window(argument):
    def check(window):
        if window is not None and window < 0:
            _refuse(
                argument,
                "a negative window (no node list refresh on the server's events) is not supported: the "
                "engine's control connection always follows topology events; give 0 or more",
            )

    return check


def _check_number(argument):
    def check(value):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError("%s must be a number of seconds, not %r" % (argument, value))

    return check


def _check_monitor_reporting(enabled, interval):
    if enabled and interval != 30:
        _refuse(
            "monitor_reporting_interval",
            "turbocql sends no Insights reports (a DSE 6.8+ feature), so it has no interval; leave it unset "
            "or set monitor_reporting_enabled=False",
        )


class CheckedSetting:
    """A ``Cluster`` attribute whose assignment after construction is checked as the
    argument of the same name is (a refused value raises then too). Reading it on the
    class gives the classic default."""

    def __init__(self, check, default):
        self.check = check
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.default
        return obj.__dict__.get(self.name, self.default)

    def __set__(self, obj, value):
        self.check(value)
        obj.__dict__[self.name] = value


class _ConstructorSetting(CheckedSetting):
    """An argument that only ``Cluster()`` takes: assigning another value later raises."""

    def __set__(self, obj, value):
        self.check(value)
        if self.name in obj.__dict__ and obj.__dict__[self.name] != value:
            _refuse(self.name, "give it to Cluster(): what it sets up is made with the cluster")
        obj.__dict__[self.name] = value


class _MonitorSetting(CheckedSetting):
    """``monitor_reporting_enabled`` / ``_interval``: refused together (see the module doc)."""

    def __set__(self, obj, value):
        settings = {
            "monitor_reporting_enabled": obj.__dict__.get("monitor_reporting_enabled", True),
            "monitor_reporting_interval": obj.__dict__.get("monitor_reporting_interval", 30),
        }
        settings[self.name] = value
        _check_monitor_reporting(*settings.values())
        obj.__dict__[self.name] = value


def protocol_version_refusal(version):
    return (
        "protocol_version=%r is not supported: turbocql's engine speaks native protocol v4 only "
        "(Cassandra 2.2+ and ScyllaDB accept it); leave protocol_version unset or set it to 4" % (version,)
    )


class ProtocolAndAuthSettings:
    """``Cluster.protocol_version`` and ``Cluster.auth_provider``, checked when set (at
    ``Cluster()`` and later), as classic."""

    # A version kept to fail at connect as classic (1, 2, or beyond 5: NoHostAvailable,
    # as today's servers refuse them too).
    _refused_protocol_version = None

    _auth_provider = None

    @property
    def auth_provider(self):
        """An :class:`~turbocql.auth.AuthProvider` (such as ``PlainTextAuthProvider``), or
        None without authentication; checked when set, as classic."""
        return self._auth_provider

    @auth_provider.setter
    def auth_provider(self, value):
        if value and not callable(getattr(value, "new_authenticator", None)):
            if self.protocol_version > 1:
                raise TypeError(
                    "auth_provider must implement the cassandra.auth.AuthProvider interface when protocol_version >= 2"
                )
            if not callable(value):
                # Protocol v1's credentials function (a v1 cluster fails at connect anyway).
                raise TypeError("auth_provider must be callable when protocol_version == 1")
        self._auth_provider = value

    @property
    def protocol_version(self):
        """4: the engine speaks native protocol v4 (Cassandra 2.2+ and ScyllaDB accept it).
        3 and 5, which today's servers speak, raise when set, rather than speak v4 under
        their name; 1 and 2 (which Cassandra 3.0+ and ScyllaDB refuse) and a version beyond
        5 are kept and fail at connect with NoHostAvailable, as the classic driver fails
        against such a server."""
        return self._refused_protocol_version or ProtocolVersion.V4

    @protocol_version.setter
    def protocol_version(self, version):
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError("unknown protocol_version %r" % (version,))
        self._refused_protocol_version = None
        if version in (3, 5):
            raise UnsupportedOperation(protocol_version_refusal(version))
        if version != ProtocolVersion.V4:
            self._refused_protocol_version = version


def checked_settings():
    """The ``Cluster`` class attributes checked on assignment, by name."""
    return {
        "address_translator": CheckedSetting(_check_address_translator, None),
        "conviction_policy_factory": CheckedSetting(_check_conviction_policy_factory, None),
        "metrics_enabled": _ConstructorSetting(_check_metrics_enabled, False),
        "endpoint_factory": CheckedSetting(_check_endpoint_factory, None),
        "column_encryption_policy": CheckedSetting(_check_column_encryption_policy, None),
        "no_compact": CheckedSetting(_check_no_compact, False),
        "sockopts": CheckedSetting(_check_sockopts, None),
        "connection_class": CheckedSetting(_check_connection_class, None),
        "prepare_on_all_hosts": CheckedSetting(_check_prepare_on_all_hosts, True),
        "schema_event_refresh_window": CheckedSetting(_check_number("schema_event_refresh_window"), 2),
        "topology_event_refresh_window": CheckedSetting(
            _check_event_refresh_window("topology_event_refresh_window"), 10
        ),
        "monitor_reporting_enabled": _MonitorSetting(None, True),
        "monitor_reporting_interval": _MonitorSetting(None, 30),
    }


def check_cluster_arguments(
    address_translator,
    conviction_policy_factory,
    metrics_enabled,
    endpoint_factory,
    column_encryption_policy,
    no_compact,
    sockopts,
    connection_class,
    prepare_on_all_hosts=True,
    schema_event_refresh_window=2,
    topology_event_refresh_window=10,
    monitor_reporting_enabled=True,
    monitor_reporting_interval=30,
):
    _check_address_translator(address_translator)
    _check_conviction_policy_factory(conviction_policy_factory)
    _check_metrics_enabled(metrics_enabled)
    _check_endpoint_factory(endpoint_factory)
    _check_column_encryption_policy(column_encryption_policy)
    _check_no_compact(no_compact)
    _check_sockopts(sockopts)
    _check_connection_class(connection_class)
    _check_prepare_on_all_hosts(prepare_on_all_hosts)
    _check_number("schema_event_refresh_window")(schema_event_refresh_window)
    _check_event_refresh_window("topology_event_refresh_window")(topology_event_refresh_window)
    _check_monitor_reporting(monitor_reporting_enabled, monitor_reporting_interval)
