"""``cassandra.io.eventletreactor``: :class:`EventletConnection`, for configuration only.

``Cluster(connection_class=EventletConnection)`` is accepted; the engine opens and runs every
connection itself (eventlet is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import (
    Connection,
    ConnectionShutdown,  # noqa: F401 - a classic name of this module
)

__all__ = ["EventletConnection"]


class EventletConnection(Connection):
    """The classic driver's eventlet connection class; a name for ``connection_class``."""
