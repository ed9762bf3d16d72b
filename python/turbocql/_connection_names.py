"""Names of the classic ``cassandra.connection`` that ``turbocql.connection`` is to import
from here (kept apart while another change edits that module): the configuration-only
:class:`Connection` base of the reactor classes in :mod:`turbocql.io`, the endpoint
factories, :class:`ProtocolVersionUnsupported`, and the names ``cassandra.connection``
re-exports from elsewhere in the package.

This module imports ``turbocql.connection``, so ``turbocql.connection`` imports these names
at its end (after its own classes)::

    from turbocql._connection_names import (  # noqa: E402, F401 - after this module's classes
        AuthenticationFailed, Connection, ConsistencyLevel, DefaultEndPointFactory, EndPointFactory,
        ErrorMessage, InvalidRequestException, OperationTimedOut, ProtocolException, ProtocolHandler,
        ProtocolVersion, ProtocolVersionUnsupported, int32_pack,
    )
"""

from turbocql import (  # noqa: F401 - classic names of cassandra.connection
    AuthenticationFailed,
    ConsistencyLevel,
    OperationTimedOut,
    ProtocolVersion,
    UnsupportedOperation,
)
from turbocql.connection import ConnectionException, DefaultEndPoint
from turbocql.marshal import int32_pack  # noqa: F401 - a classic name of cassandra.connection
from turbocql.protocol import (  # noqa: F401 - classic names of cassandra.connection
    ErrorMessage,
    InvalidRequestException,
    ProtocolException,
    ProtocolHandler,
)

__all__ = [
    "AuthenticationFailed",
    "Connection",
    "ConsistencyLevel",
    "DefaultEndPointFactory",
    "EndPointFactory",
    "ErrorMessage",
    "InvalidRequestException",
    "OperationTimedOut",
    "ProtocolException",
    "ProtocolHandler",
    "ProtocolVersion",
    "ProtocolVersionUnsupported",
    "int32_pack",
]


class ProtocolVersionUnsupported(ConnectionException):
    """A server refused the protocol version a connection asked for."""

    def __init__(self, endpoint, startup_version):
        msg = "Unsupported protocol version on %s: %d" % (endpoint, startup_version)
        super().__init__(msg, endpoint)
        self.startup_version = startup_version

    @property
    def endpoint(self):
        return self.host


class Connection:
    """The classic base class of connections, for configuration only.

    ``Cluster(connection_class=...)`` accepts it and its subclasses (the reactor classes of
    :mod:`turbocql.io`, or a user's), but the engine opens and runs every connection
    itself, so no instance is ever made: creating one raises ``UnsupportedOperation``.
    """

    @classmethod
    def initialize_reactor(cls):
        """Nothing to start: the engine runs the I/O."""

    @classmethod
    def handle_fork(cls):
        """Nothing to reset: the engine restarts in a forked child by itself."""

    @classmethod
    def create_timer(cls, timeout, callback):
        raise UnsupportedOperation("turbocql's engine runs the I/O; connection classes have no timers")

    def __init__(self, *args, **kwargs):
        raise UnsupportedOperation(
            "%s only names the classic driver's event loop: turbocql's engine opens and runs every connection"
            % (type(self).__name__,)
        )


class EndPointFactory:
    """Makes the :class:`~turbocql.connection.EndPoint` of a node from its row in
    ``system.peers`` (``Cluster(endpoint_factory=...)``)."""

    cluster = None

    def configure(self, cluster):
        """Called with the cluster before :meth:`create` is used."""
        self.cluster = cluster
        return self

    def create(self, row):
        raise NotImplementedError()


class DefaultEndPointFactory(EndPointFactory):
    """A :class:`~turbocql.connection.DefaultEndPoint` at the peer's native address and
    port (``port``, else the row's, else the cluster's)."""

    port = None

    def __init__(self, port=None):
        self.port = port

    def create(self, row):
        get = row.get if hasattr(row, "get") else lambda key, default=None: getattr(row, key, default)
        address = get("native_address") or get("rpc_address") or get("peer")
        port = self.port or get("native_port") or (self.cluster.port if self.cluster is not None else 9042)
        return DefaultEndPoint(str(address), port)
