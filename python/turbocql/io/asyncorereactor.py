"""``cassandra.io.asyncorereactor``: :class:`AsyncoreConnection`, for configuration only.

``Cluster(connection_class=AsyncoreConnection)`` is accepted; the engine opens and runs every
connection itself (asyncore is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import (
    Connection,
    ConnectionShutdown,  # noqa: F401 - a classic name of this module
)

__all__ = ["AsyncoreConnection"]


class AsyncoreConnection(Connection):
    """The classic driver's asyncore connection class; a name for ``connection_class``."""
