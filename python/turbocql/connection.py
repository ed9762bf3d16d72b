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
