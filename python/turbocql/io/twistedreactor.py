"""``cassandra.io.twistedreactor``: :class:`TwistedConnection`, for configuration only.

``Cluster(connection_class=TwistedConnection)`` is accepted; the engine opens and runs every
connection itself (Twisted's reactor is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import Connection, ConnectionException, ConnectionShutdown  # noqa: F401 - classic names here

__all__ = ["TwistedConnection"]


class TwistedConnection(Connection):
    """The classic driver's Twisted's reactor connection class; a name for ``connection_class``."""
