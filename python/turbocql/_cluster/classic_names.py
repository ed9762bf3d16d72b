"""The names of the classic ``cassandra.cluster`` that are not ``turbocql.cluster``'s own
classes; ``turbocql.cluster`` imports them all from here, which keeps cluster.py about
clusters and sessions.

Defined here: :class:`ContinuousPagingOptions`, :class:`UserTypeDoesNotExist`, the
``EXEC_PROFILE_GRAPH_*`` keys, the classic pool-size constants (``DEFAULT_*``) and the
reactor names (``DefaultConnection``, ``EventletConnection``, ``TwistedConnection``). The
rest are names ``cassandra.cluster`` re-exports from other modules, imported here from
their turbocql homes. This module imports nothing that imports ``turbocql.cluster``.
"""

from turbocql import DependencyException, SchemaTargetType, UnresolvableContactPoints
from turbocql.auth import PlainTextAuthProvider
from turbocql.connection import (
    Connection,
    ConnectionBusy,
    ConnectionShutdown,
    DefaultEndPoint,
    DefaultEndPointFactory,
    EndPoint,
    ProtocolVersionUnsupported,
)
from turbocql.cqltypes import UserType
from turbocql.io.eventletreactor import EventletConnection
from turbocql.io.twistedreactor import TwistedConnection
from turbocql.marshal import int64_pack
from turbocql.metadata import murmur3, protect_name
from turbocql.policies import (
    DCAwareRoundRobinPolicy,
    DefaultLoadBalancingPolicy,
    HostDistance,
    IdentityTranslator,
    NeverRetryPolicy,
    NoSpeculativeExecutionPlan,
    NoSpeculativeExecutionPolicy,
    SimpleConvictionPolicy,
    TokenAwarePolicy,
    default_lbp_factory,
)
from turbocql.pool import Host, HostConnectionPool, NoConnectionsAvailable
from turbocql.protocol import (
    RESULT_KIND_PREPARED,
    RESULT_KIND_ROWS,
    RESULT_KIND_SCHEMA_CHANGE,
    RESULT_KIND_SET_KEYSPACE,
    RESULT_KIND_VOID,
    BatchMessage,
    ErrorMessage,
    ExecuteMessage,
    IsBootstrappingErrorMessage,
    OverloadedErrorMessage,
    PreparedQueryNotFound,
    ProtocolException,
    ProtocolHandler,
    QueryMessage,
    ReadTimeoutErrorMessage,
    ResultMessage,
    ServerError,
    TruncateError,
    UnavailableErrorMessage,
    WriteTimeoutErrorMessage,
)
from turbocql.query import TraceUnavailable, bind_params
from turbocql.timestamps import MonotonicTimestampGenerator
from turbocql.util import Version

DefaultConnection = Connection
"""The classic driver's default connection class (its best event loop); here the
configuration-only :class:`~turbocql.connection.Connection`: the engine does all I/O."""

# The classic driver's connection-pool sizes (per host). The engine's pools size
# themselves; these stay for classic code that reads them.
DEFAULT_MIN_REQUESTS = 5
DEFAULT_MAX_REQUESTS = 100
DEFAULT_MIN_CONNECTIONS_PER_LOCAL_HOST = 2
DEFAULT_MAX_CONNECTIONS_PER_LOCAL_HOST = 8
DEFAULT_MIN_CONNECTIONS_PER_REMOTE_HOST = 1
DEFAULT_MAX_CONNECTIONS_PER_REMOTE_HOST = 2

EXEC_PROFILE_GRAPH_DEFAULT = object()
"""Key of the DSE Graph default profile (DSE Graph is not supported: a key only)."""

EXEC_PROFILE_GRAPH_SYSTEM_DEFAULT = object()
"""Key of the DSE Graph system profile (DSE Graph is not supported: a key only)."""

EXEC_PROFILE_GRAPH_ANALYTICS_DEFAULT = object()
"""Key of the DSE Graph analytics profile (DSE Graph is not supported: a key only)."""


class UserTypeDoesNotExist(Exception):
    """An attempt was made to use a user-defined type that does not exist."""


class ContinuousPagingOptions:
    """Options of DSE continuous paging (classic fields). turbocql does not support
    continuous paging: ``ExecutionProfile(continuous_paging_options=...)`` raises
    ``UnsupportedOperation``; the class is here for code that builds one."""

    class PagingUnit:
        BYTES = 1
        ROWS = 2

    page_unit = None
    """Whether ``max_pages`` counts rows or bytes (:class:`PagingUnit`)."""

    max_pages = None
    """The most pages to return (0: no limit)."""

    max_pages_per_second = None
    """The most pages per second (0: no limit)."""

    max_queue_size = None
    """The most pages the client queues."""

    def __init__(self, page_unit=PagingUnit.ROWS, max_pages=0, max_pages_per_second=0, max_queue_size=4):
        self.page_unit = page_unit
        self.max_pages = max_pages
        self.max_pages_per_second = max_pages_per_second
        if max_queue_size <= 1:
            raise ValueError("ContinuousPagingOptions.max_queue_size must be 2 or greater")
        self.max_queue_size = max_queue_size

    def page_unit_bytes(self):
        return self.page_unit == ContinuousPagingOptions.PagingUnit.BYTES


__all__ = [
    "ConnectionBusy",
    "ConnectionShutdown",
    "ContinuousPagingOptions",
    "DCAwareRoundRobinPolicy",
    "DEFAULT_MAX_CONNECTIONS_PER_LOCAL_HOST",
    "DEFAULT_MAX_CONNECTIONS_PER_REMOTE_HOST",
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_MIN_CONNECTIONS_PER_LOCAL_HOST",
    "DEFAULT_MIN_CONNECTIONS_PER_REMOTE_HOST",
    "DEFAULT_MIN_REQUESTS",
    "DefaultConnection",
    "DefaultEndPoint",
    "DefaultEndPointFactory",
    "DefaultLoadBalancingPolicy",
    "DependencyException",
    "EXEC_PROFILE_GRAPH_ANALYTICS_DEFAULT",
    "EXEC_PROFILE_GRAPH_DEFAULT",
    "EXEC_PROFILE_GRAPH_SYSTEM_DEFAULT",
    "EndPoint",
    "ErrorMessage",
    "EventletConnection",
    "Host",
    "HostConnectionPool",
    "HostDistance",
    "IdentityTranslator",
    "IsBootstrappingErrorMessage",
    "MonotonicTimestampGenerator",
    "NeverRetryPolicy",
    "NoConnectionsAvailable",
    "NoSpeculativeExecutionPlan",
    "NoSpeculativeExecutionPolicy",
    "OverloadedErrorMessage",
    "PlainTextAuthProvider",
    "PreparedQueryNotFound",
    "ProtocolException",
    "ProtocolHandler",
    "ProtocolVersionUnsupported",
    "QueryMessage",
    "BatchMessage",
    "ExecuteMessage",
    "RESULT_KIND_PREPARED",
    "RESULT_KIND_ROWS",
    "RESULT_KIND_SCHEMA_CHANGE",
    "RESULT_KIND_SET_KEYSPACE",
    "RESULT_KIND_VOID",
    "ReadTimeoutErrorMessage",
    "ResultMessage",
    "SchemaTargetType",
    "ServerError",
    "SimpleConvictionPolicy",
    "TokenAwarePolicy",
    "TraceUnavailable",
    "TruncateError",
    "TwistedConnection",
    "UnavailableErrorMessage",
    "UnresolvableContactPoints",
    "UserType",
    "UserTypeDoesNotExist",
    "Version",
    "WriteTimeoutErrorMessage",
    "bind_params",
    "default_lbp_factory",
    "int64_pack",
    "murmur3",
    "protect_name",
]
