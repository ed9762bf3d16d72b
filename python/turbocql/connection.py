"""Connection-level names, under the classic driver's names (``cassandra.connection``):
the connection exceptions, endpoints and endpoint factories, and the configuration-only
:class:`Connection` base of the reactor classes in :mod:`turbocql.io`.

Connections themselves are opened and run by the Rust engine.
"""

from turbocql import (  # noqa: F401 - classic names of cassandra.connection
    AuthenticationFailed,
    ConsistencyLevel,
    OperationTimedOut,
    ProtocolVersion,
    UnsupportedOperation,
)
from turbocql.marshal import int32_pack  # noqa: F401 - a classic name of cassandra.connection
from turbocql.protocol import (  # noqa: F401 - classic names of cassandra.connection
    ErrorMessage,
    InvalidRequestException,
    ProtocolException,
    ProtocolHandler,
)


class ConnectionException(Exception):
    """A connection to a host failed or was lost; ``host`` names it."""

    def __init__(self, message, host=None):
        Exception.__init__(self, message)
        self.host = host


class ConnectionShutdown(ConnectionException):
    """The connection was closed."""


class ConnectionBusy(Exception):
    """The connection has no free stream ids."""


class ProtocolError(Exception):
    """The server sent something the protocol does not allow."""


class EndPoint:
    """Where a node is reached (classic ``cassandra.connection.EndPoint``)."""

    @property
    def address(self):
        raise NotImplementedError

    @property
    def port(self):
        raise NotImplementedError

    def resolve(self):
        raise NotImplementedError


class DefaultEndPoint(EndPoint):
    """A node's address and native port."""

    def __init__(self, address, port=9042):
        self._address = address
        self._port = port

    @property
    def address(self):
        return self._address

    @property
    def port(self):
        return self._port

    def resolve(self):
        return self._address, self._port

    def __eq__(self, other):
        return isinstance(other, DefaultEndPoint) and (self.address, self.port) == (other.address, other.port)

    def __hash__(self):
        return hash((self.address, self.port))

    def __lt__(self, other):
        return (self.address, self.port) < (other.address, other.port)

    def __str__(self):
        return "%s:%d" % (self.address, self.port)

    def __repr__(self):
        return "<%s: %s:%d>" % (self.__class__.__name__, self.address, self.port)


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
