"""``cassandra.io.libevreactor``: :class:`LibevConnection`, for configuration only.

``Cluster(connection_class=LibevConnection)`` is accepted; the engine opens and runs every
connection itself (libev is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import (
    Connection,
    ConnectionShutdown,  # noqa: F401 - a classic name of this module
)

__all__ = ["LibevConnection"]


class LibevConnection(Connection):
    """The classic driver's libev connection class; a name for ``connection_class``."""
