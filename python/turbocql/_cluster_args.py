"""The classic ``Cluster`` arguments the engine does not take as they are: each is either
honoured elsewhere, accepted as configuration only (its value cannot change what the
engine does, or the engine already does what the value asks), or refused here with
``UnsupportedOperation`` naming the argument, when a value would change behaviour that
turbocql does not provide. ``check_cluster_arguments`` is called by ``Cluster.__init__``.

Decisions (the README's migration table says the same):

* ``address_translator``: None or an ``IdentityTranslator``; another translator raises
  (the engine connects to the addresses the nodes report in system.peers).
* ``conviction_policy_factory``: None or ``SimpleConvictionPolicy`` (the engine marks a
  host down when its connections fail, which is what that policy does); another raises.
* ``metrics_enabled=True`` raises: ``cluster.metrics`` (request timers, error counters) is
  not provided.
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
* Configuration only (kept as attributes): ``prepare_on_all_hosts`` (the engine prepares
  on every node), ``reprepare_on_up`` (the engine prepares again when a node answers
  UNPREPARED), ``schema_event_refresh_window``, ``topology_event_refresh_window``,
  ``status_event_refresh_window`` (the engine follows events itself; the schema is read
  again lazily after a change), ``executor_threads`` (callbacks run on one dispatcher thread),
  ``monitor_reporting_enabled`` / ``monitor_reporting_interval`` (DSE Insights, which
  the classic driver only sends to DSE) and ``allow_beta_protocol_version`` (beta
  versions are only spoken when asked for by ``protocol_version``).
* ``protocol_version``: unset or 4 (the engine speaks protocol v4 only); any other
  version raises ``UnsupportedOperation``. ``cql_version``: None only (the engine's
  STARTUP names the scylla crate's CQL 4.0.0); a version raises ``UnsupportedOperation``.
"""

import socket

from turbocql import UnsupportedOperation

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


def check_cluster_arguments(
    address_translator,
    conviction_policy_factory,
    metrics_enabled,
    endpoint_factory,
    column_encryption_policy,
    no_compact,
    sockopts,
    connection_class,
):
    from turbocql.connection import DefaultEndPointFactory
    from turbocql.policies import IdentityTranslator, SimpleConvictionPolicy

    if address_translator is not None and type(address_translator) is not IdentityTranslator:
        _refuse(
            "address_translator",
            "only IdentityTranslator is supported: the engine connects to the addresses the nodes "
            "report (system.peers), untranslated",
        )
    if conviction_policy_factory is not None and not callable(conviction_policy_factory):
        raise ValueError("conviction_policy_factory must be callable")  # as classic, before anything
    if conviction_policy_factory not in (None, SimpleConvictionPolicy):
        _refuse(
            "conviction_policy_factory",
            "only SimpleConvictionPolicy is supported: the engine marks a host down when its connections fail",
        )
    if metrics_enabled:
        _refuse("metrics_enabled", "cluster.metrics (request timers and error counters) is not provided by turbocql")
    if endpoint_factory is not None and type(endpoint_factory) is not DefaultEndPointFactory:
        _refuse(
            "endpoint_factory", "the engine makes the endpoints of the nodes it discovers; only DefaultEndPointFactory"
        )
    if column_encryption_policy is not None:
        _refuse(
            "column_encryption_policy",
            "client-side column encryption is not supported (values would be sent unencrypted)",
        )
    if no_compact:
        _refuse("no_compact", "the engine's STARTUP does not send NO_COMPACT")
    _check_sockopts(sockopts)
    _check_connection_class(connection_class)
