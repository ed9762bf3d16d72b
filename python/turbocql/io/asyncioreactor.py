"""``cassandra.io.asyncioreactor``: :class:`AsyncioConnection`, for configuration only.

``Cluster(connection_class=AsyncioConnection)`` is accepted; the engine opens and runs every
connection itself (the asyncio event loop of a thread is neither needed nor used).
"""

from turbocql import DependencyException  # noqa: F401 - a classic name of this module
from turbocql.connection import (
    Connection,
    ConnectionShutdown,  # noqa: F401 - a classic name of this module
)

__all__ = ["AsyncioConnection"]


class AsyncioConnection(Connection):
    """The classic driver's the asyncio event loop of a thread connection class; a name for ``connection_class``."""
