"""``cassandra.io.geventreactor``: :class:`GeventConnection`, for configuration only.

``Cluster(connection_class=GeventConnection)`` is accepted; the engine opens and runs every
connection itself (gevent is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import (
    Connection,
    ConnectionShutdown,  # noqa: F401 - a classic name of this module
)

__all__ = ["GeventConnection"]


class GeventConnection(Connection):
    """The classic driver's gevent connection class; a name for ``connection_class``."""
