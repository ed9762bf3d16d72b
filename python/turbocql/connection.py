"""Connection-level exceptions, under the classic driver's names (``cassandra.connection``).

Connections themselves are managed by the Rust engine.
"""


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
