# Type stub of turbocql._engine, the Rust engine (src/, see docs/ARCHITECTURE.md).
# Checked against the built module by `python -m mypy.stubtest turbocql._engine`
# (scripts/lint.sh), so it cannot drift from the code.
#
# Classes PyO3 makes without `subclass` cannot be subclassed at runtime: they are @final
# here. Those without a #[new] cannot be instantiated from Python (the engine makes them):
# they have no constructor here. ResultCore and ResponseFutureCore are subclassed in Python
# (turbocql.cluster.ResultSet, ResponseFuture); their instance layout is the engine's, so they
# are disjoint bases (a class cannot derive from both, nor from another such base).

import ssl
from asyncio import AbstractEventLoop
from collections.abc import Callable, Generator, Hashable, Iterable, Mapping, Sequence
from contextvars import Context
from types import ModuleType, TracebackType
from typing import Any, Concatenate, Generic, Literal, NoReturn, ParamSpec, Self, TypeVar, final, overload
from uuid import UUID

from typing_extensions import disjoint_base

from turbocql._policies.profiles import ExecutionProfile
from turbocql.cluster import ResultSet, _NotSet
from turbocql.cluster import Session as _ClusterSession
from turbocql.policies import LoadBalancingPolicy, RetryPolicy
from turbocql.pool import Host
from turbocql.query import BatchStatement, BoundStatement, PreparedStatement, SimpleStatement

__all__ = [
    "__version__",
    "_bootstrap",
    "_bootstrap_codec",
    "_after_fork",
    "tls_verifier",
    "rows_as",
    "named_rows",
    "encode",
    "encode_text",
    "decode",
    "decode_text",
    "time_encode",
    "time_decode",
    "Prepared",
    "ClassifiedStatement",
    "Page",
    "RequestMetrics",
    "Tracing",
    "TraceEvent",
    "FinishedRequest",
    "ArrowColumn",
    "LoadBalancing",
    "Retry",
    "ClientClock",
    "EngineProfile",
    "run_dispatcher",
    "stop_dispatcher",
    "connect",
    "murmur3",
    "EMPTY_VALUE_TYPES",
    "_set_empty_values",
    "Reconnection",
    "HostEvent",
    "Session",
    "Request",
    "SentRequest",
    "RequestBuilder",
    "SyncExecute",
    "AioExecute",
    "AsyncExecute",
    "EngineMethod",
    "ResultCore",
    "ResponseFutureCore",
    "ConcurrentRun",
    "LoopQueue",
    "AioRequest",
    "PipelineCore",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
_R = TypeVar("_R")
_F = TypeVar("_F")
_P = ParamSpec("_P")
_TupleT = TypeVar("_TupleT", bound=tuple[Any, ...])

# What the engine executes (exec::statement::classify; anything else is a TypeError).
_Query = str | SimpleStatement | PreparedStatement | BoundStatement | BatchStatement
# A statement's values: a sequence (not str/bytes) or a mapping by marker name, or None.
_Values = Sequence[Any] | Mapping[str, Any] | None
# A `timeout` argument: seconds, None (no client-side timeout) or `_NOT_SET` (the
# session's default, as when left out).
_Timeout = float | None | _NotSet
# A dispatcher target: called as `target(page, None)` or `target(None, exception)`.
_Target = Callable[[Page | None, BaseException | None], object]
# An `execution_profile` argument: a profile, the name of one (a key of
# `Cluster(execution_profiles=...)`), or None / `EXEC_PROFILE_DEFAULT` (the default profile).
_ExecutionProfileArg = ExecutionProfile | Hashable | None
# A `host` argument: the only host tried, a `Host` or its address ("address" or
# "address:port"); None: routed by the profile's load-balancing policy.
_HostArg = Host | str | None
# The kind of a `HostEvent` ("moved": the host's address changed).
_HostEventKind = Literal["up", "down", "add", "remove", "moved"]

__version__: str

def _bootstrap(objects: dict[str, Any]) -> None: ...
def _bootstrap_codec(objects: dict[str, Any]) -> None: ...
def _after_fork() -> None: ...

# The TLS verifier a context gets here (TURBOCQL_TLS_VERIFIER, else whether this Python's
# OpenSSL can be shared), and why it is not python-openssl when it is not
# (src/api/tls/mod.rs); ValueError for an unknown value of the switch.
def tls_verifier() -> tuple[str, str | None]: ...

# codec
def rows_as(cls: type[_TupleT], rows: Iterable[Sequence[Any]]) -> list[_TupleT]: ...
def named_rows(colnames: tuple[str, ...], rows: Iterable[Sequence[Any]]) -> list[Any]: ...
def encode(cql_type: str, value: Any) -> bytes: ...
def decode(cql_type: str, data: bytes) -> Any: ...

# The CQL type names whose empty cells can read as turbocql.cqltypes.EMPTY, and the ones
# that now do (their class's support_empty_values; told by the cqltypes metaclass).
EMPTY_VALUE_TYPES: tuple[str, ...]

def _set_empty_values(names: list[str]) -> None: ...
def encode_text(cql_type: str, text: str) -> bytes: ...
def decode_text(cql_type: str, data: bytes) -> str: ...
def time_encode(cql_type: str, values: list[Any], repeat: int = 1) -> float: ...
def time_decode(cql_type: str, encoded: list[bytes], repeat: int = 1) -> float: ...

# exec
@final
class Prepared:
    @property
    def query_string(self) -> str: ...
    @property
    def query_id(self) -> bytes: ...
    @property
    def param_names(self) -> list[str]: ...
    @property
    def param_types(self) -> list[str]: ...
    @property
    def result_column_names(self) -> list[str]: ...
    @property
    def result_column_types(self) -> list[str]: ...
    @property
    def routing_key_indexes(self) -> list[int]: ...
    @property
    def keyspace(self) -> str | None: ...
    @property
    def table(self) -> str | None: ...
    @property
    def is_lwt(self) -> bool: ...
    def check_values(self, values: _Values = None) -> None: ...

@final
class ClassifiedStatement: ...

# A cluster's tracing (turbocql.tracing): spans of finished requests.
@final
class Tracing:
    def __new__(
        cls, record: Callable[[FinishedRequest], object], current_context: Callable[[], Any], include_query_text: bool
    ) -> Self: ...
    @property
    def include_query_text(self) -> bool: ...

@final
class TraceEvent:
    @property
    def name(self) -> str: ...
    @property
    def time_ns(self) -> int: ...
    @property
    def address(self) -> str | None: ...
    @property
    def port(self) -> int | None: ...
    @property
    def error_type(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def status_code(self) -> str | None: ...

@final
class FinishedRequest:
    @property
    def parent(self) -> Any: ...
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def operation(self) -> str | None: ...
    @property
    def keyspace(self) -> str | None: ...
    @property
    def table(self) -> str | None: ...
    @property
    def query(self) -> str | None: ...
    @property
    def address(self) -> str | None: ...
    @property
    def port(self) -> int | None: ...
    @property
    def error(self) -> BaseException | None: ...
    @property
    def status_code(self) -> str | None: ...
    @property
    def events(self) -> list[TraceEvent]: ...

# A cluster's metrics as the engine counts them (turbocql.metrics.Metrics._engine).
@final
class RequestMetrics:
    def __new__(cls) -> Self: ...
    def counts(self) -> dict[str, int]: ...
    def request_timer(self) -> dict[str, float]: ...

@final
class Page:
    # A list of rows (tuples, or the default factory's named tuples), a dict of numpy
    # columns by name, a pyarrow.RecordBatch, or None for a result without rows.
    @property
    def rows(self) -> Any: ...
    @property
    def column_names(self) -> tuple[str, ...] | None: ...
    @property
    def column_types(self) -> tuple[str, ...] | None: ...
    @property
    def paging_state(self) -> bytes | None: ...
    @property
    def trace_id(self) -> UUID | None: ...
    @property
    def warnings(self) -> list[str] | None: ...
    @property
    def schema_agreed(self) -> bool: ...
    # The node that answered, as its turbocql.pool.Host (None when unknown).
    @property
    def coordinator(self) -> Any: ...
    @property
    def retried_on(self) -> list[Any]: ...
    def as_last(self) -> Page: ...

@final
class ArrowColumn:
    # One result column in Arrow's layout (src/codec/arrow.rs), wrapped by turbocql._query.arrow.
    @property
    def kind(self) -> str: ...
    @property
    def length(self) -> int: ...
    @property
    def null_count(self) -> int: ...
    @property
    def validity(self) -> bytes | None: ...
    @property
    def buffers(self) -> list[bytes]: ...
    @property
    def children(self) -> list[ArrowColumn]: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def size(self) -> int: ...
    @property
    def objects(self) -> list[Any] | None: ...

@final
class LoadBalancing:
    # The classic load-balancing policies (their `_engine_policy()`).
    @staticmethod
    def round_robin() -> LoadBalancing: ...
    # `local_dc` None or "": every DC is local; a `local_rack` needs a `local_dc` (ValueError).
    @staticmethod
    def dc_aware(
        local_dc: str | None, used_hosts_per_remote_dc: int = 0, local_rack: str | None = None
    ) -> LoadBalancing: ...
    @staticmethod
    def token_aware(child: LoadBalancing, shuffle_replicas: bool) -> LoadBalancing: ...
    # `child` over these IP addresses only (ValueError for one that is not an IP address).
    @staticmethod
    def allow_list(child: LoadBalancing, addresses: Sequence[str]) -> LoadBalancing: ...
    # `child` over the hosts for which `predicate(host)` is truthy (called once per host,
    # again if its address changes; a host whose predicate raises is left out).
    @staticmethod
    def host_filter(child: LoadBalancing, predicate: Callable[[Host], object]) -> LoadBalancing: ...
    # A user's policy: `policy.make_query_plan(working_keyspace, query)` is asked for each
    # request when it is built, and its hosts tried in order.
    @staticmethod
    def custom(policy: LoadBalancingPolicy) -> LoadBalancing: ...
    @property
    def is_custom(self) -> bool: ...
    def __repr__(self) -> str: ...

@final
class Retry:
    # The classic retry policies (their `_engine_policy()`).
    @staticmethod
    def default_policy() -> Retry: ...
    @staticmethod
    def fallthrough() -> Retry: ...
    @staticmethod
    def downgrading_consistency() -> Retry: ...
    # A user's `RetryPolicy` subclass: its methods are called on failures only.
    @staticmethod
    def python(policy: RetryPolicy) -> Retry: ...
    def __repr__(self) -> str: ...

@final
class EngineProfile:
    # A classic `ExecutionProfile` (its `_engine_profile()`). `load_balancing` / `retry`:
    # None for the engine's defaults; `speculative`: `(delay, max_attempts)` of a
    # `ConstantSpeculativeExecutionPolicy`, or None; consistency levels: `ConsistencyLevel`
    # numbers or None; `request_timeout`: positive seconds or None (no timeout).
    def __new__(
        cls,
        load_balancing: LoadBalancing | None,
        retry: Retry | None,
        speculative: tuple[float, int] | None,
        consistency_level: int | None,
        serial_consistency_level: int | None,
        request_timeout: float | None,
        row_factory: Callable[..., Any],
    ) -> Self: ...
    # This profile's policies with other per-request defaults (stale with this one's
    # policies).
    def with_defaults(
        self,
        consistency_level: int | None,
        serial_consistency_level: int | None,
        request_timeout: float | None,
        row_factory: Callable[..., Any],
    ) -> EngineProfile: ...
    # The profile, or a policy in it, changed: sessions read their defaults again.
    def mark_stale(self) -> None: ...
    @property
    def stale(self) -> bool: ...

def run_dispatcher() -> None: ...
def stop_dispatcher() -> None: ...

# api
def connect(
    contact_points: Sequence[str],
    port: int = 9042,
    username: str | None = None,
    password: str | None = None,
    keyspace: str | None = None,
    compression: Literal["lz4", "snappy"] | None = None,
    connect_timeout: float = 5.0,
    tcp_nodelay: bool = True,
    reconnection: Reconnection | None = None,
    # Called off the engine's tasks, one event at a time and in order, as
    # `on_host_event(event)`.
    on_host_event: Callable[[HostEvent], object] | None = None,
    *,
    # A classic `AuthProvider` (its authenticators are called during the handshake).
    auth_provider: object | None = None,
    # Read at connect into the engine's rustls context: see src/api/tls/mod.rs.
    ssl_context: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
    # ssl_options' certfile/keyfile (PEM), read by the engine where the context's own
    # client certificate cannot be (the rustls verifier).
    client_certfile: str | None = None,
    client_keyfile: str | None = None,
    application_name: str | None = None,
    application_version: str | None = None,
    client_id: str | None = None,
    # The classic idle heartbeat (interval 0 or None: none; timeout None: wait forever);
    # defaults 30 s and 30 s, and 2 s for unresponsive_node_threshold.
    heartbeat_interval: float | None = ...,
    heartbeat_timeout: float | None = ...,
    # Seconds a node may leave requests unanswered before plans give it last (None: off).
    unresponsive_node_threshold: float | None = ...,
    # Requests started without waiting in flight at once (default 32768).
    max_requests_in_flight: int = ...,
    # The pool: N connections to each node, or to each shard of a ScyllaDB node (not both;
    # neither: one per shard).
    connections_per_host: int | None = None,
    connections_per_shard: int | None = None,
    # Seconds to wait for schema agreement after a schema change (0: none).
    max_schema_agreement_wait: float = 10.0,
    # Seconds each read of the system tables may take (None: the crate's 31 s).
    control_connection_timeout: float | None = ...,
    max_frame_length: int = ...,
) -> Session: ...

# The Murmur3 token of a routing key (a serialized partition key).
def murmur3(key: bytes) -> int: ...

@final
class ClientClock:
    # `Cluster.timestamp_generator` for the engine: each request is stamped when built.
    @staticmethod
    def monotonic(
        warn_on_drift: bool = True, warning_threshold: float = 1.0, warning_interval: float = 1.0
    ) -> ClientClock: ...
    @staticmethod
    def python(generator: Callable[[], int]) -> ClientClock: ...

@final
class Reconnection:
    # The classic reconnection policies (their `_engine_policy()`); `max_attempts` None:
    # never give up.
    @staticmethod
    def constant(delay_seconds: float, max_attempts: int | None = None) -> Reconnection: ...
    @staticmethod
    def exponential(base_delay: float, max_delay: float, max_attempts: int | None = None) -> Reconnection: ...
    def __repr__(self) -> str: ...

@final
class HostEvent:
    # A host event, as `connect(on_host_event=...)` hears it.
    @property
    def kind(self) -> _HostEventKind: ...
    @property
    def host_id(self) -> str: ...
    # The host's address (after the change, for "moved").
    @property
    def address(self) -> str: ...
    @property
    def port(self) -> int: ...
    # For "moved": the address the host had before.
    @property
    def old_address(self) -> str | None: ...
    @property
    def old_port(self) -> int | None: ...
    def __repr__(self) -> str: ...

@final
class Session:
    def prepare(self, query: str, timeout: float | None = None) -> Prepared: ...
    def set_keyspace(self, keyspace: str, timeout: float | None = None) -> None: ...
    @property
    def keyspace(self) -> str | None: ...
    @property
    def hosts(self) -> str: ...
    # "python-openssl" or "rustls": how its TLS connections verify certificates (None:
    # clear text).
    @property
    def tls_verifier(self) -> Literal["python-openssl", "rustls"] | None: ...
    @property
    def is_shutdown(self) -> bool: ...
    def shutdown(self) -> None: ...
    # The cluster's nodes as the engine knows them now.
    def nodes(self) -> list[Host]: ...
    # True if the engine's view of the cluster (nodes, schema, tokens) was replaced since the
    # last call (True at the first call).
    def cluster_state_changed(self) -> bool: ...
    # (token, host) pairs in token order (Murmur3 tokens).
    def token_ring(self) -> list[tuple[int, Host]]: ...
    # The replicas of `token` in `keyspace`, primary replica first.
    def replicas(self, keyspace: str, token: int) -> list[Host]: ...
    # The agreed schema version, or None if the nodes did not agree within `timeout` seconds.
    def await_schema_agreement(self, timeout: float) -> str | None: ...

@final
class SentRequest:
    # A request's frame fields, as the classic QueryMessage / ExecuteMessage / BatchMessage.
    @property
    def opcode_name(self) -> str: ...
    @property
    def query(self) -> str | None: ...
    @property
    def query_id(self) -> bytes | None: ...
    @property
    def consistency_level(self) -> int | None: ...
    @property
    def serial_consistency_level(self) -> int | None: ...
    @property
    def fetch_size(self) -> int | None: ...
    @property
    def timestamp(self) -> int | None: ...
    @property
    def batch_type(self) -> int | None: ...

@final
class Request:
    def run(self, paging_state: bytes | None = None) -> Page: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def sent(self) -> SentRequest: ...
    def submit_to(self, target: _Target | AioRequest[Any], paging_state: bytes | None = None) -> None: ...
    def aio(
        self,
        event_loop: AbstractEventLoop,
        queue: LoopQueue,
        wrap: Callable[..., _T],
        args: tuple[Any, ...],
        paging_state: bytes | None = None,
    ) -> AioRequest[_T]: ...

@final
class RequestBuilder:
    def __new__(cls, session: _ClusterSession) -> Self: ...
    def settings_changed(self) -> None: ...
    # (request, the row factory of its results); a `custom_payload` or `execute_as` other
    # than None raises UnsupportedOperation.
    def __call__(
        self,
        query: _Query,
        parameters: _Values = None,
        timeout: _Timeout = ...,
        trace: bool = False,
        execution_profile: _ExecutionProfileArg = None,
        host: _HostArg = None,
        custom_payload: Mapping[str, bytes] | None = None,
        execute_as: str | None = None,
    ) -> tuple[Request, Any]: ...
    @property
    def row_factory(self) -> Any: ...
    def row_factory_for(self, execution_profile: _ExecutionProfileArg = None) -> Any: ...
    def execute_concurrent(
        self,
        statement: _Query | None,
        parameters: Iterable[Any],
        concurrency: int,
        raise_on_first_error: bool,
        # result_set(page, session, request | None, row_factory, statement): ResultSet
        result_set: Callable[..., Any],
        result_cls: Callable[[bool, Any], _T],
        execution_profile: _ExecutionProfileArg = None,
        check_only: bool = False,
        batch_rows: int | None = None,
        batch_bytes: int = 3584,
    ) -> ConcurrentRun[_T]: ...
    def pipeline(
        self,
        max_in_flight: int,
        max_unsent: int,
        max_unconsumed: int | None = None,
        timeout: _Timeout = ...,
        execution_profile: _ExecutionProfileArg = None,
        # A write pipeline's: called with each failure from execute() (and confirm()).
        error_handler: Callable[[BaseException], object] | None = None,
    ) -> PipelineCore: ...

@final
class SyncExecute(Generic[_R]):
    # result_class(page, session, request, row_factory, query): turbocql.cluster.ResultSet
    def __new__(cls, requests: RequestBuilder, result_class: Callable[..., _R]) -> SyncExecute[_R]: ...
    @property
    def __self__(self) -> Any: ...  # the session
    def __call__(
        self,
        query: _Query,
        parameters: _Values = None,
        timeout: _Timeout = ...,
        trace: bool = False,
        custom_payload: Mapping[str, bytes] | None = None,
        execution_profile: _ExecutionProfileArg = None,
        paging_state: bytes | None = None,
        host: _HostArg = None,
        execute_as: str | None = None,
    ) -> _R: ...

@final
class AsyncExecute(Generic[_F]):
    # future_class(session, request, query, row_factory, timeout): turbocql.cluster.ResponseFuture;
    # dispatcher: turbocql._session.dispatcher (its _dispatcher_thread, _start_dispatcher())
    def __new__(
        cls, requests: RequestBuilder, future_class: Callable[..., _F], dispatcher: ModuleType
    ) -> AsyncExecute[_F]: ...
    @property
    def __self__(self) -> Any: ...  # the session
    def __call__(
        self,
        query: _Query,
        parameters: _Values = None,
        trace: bool = False,
        custom_payload: Mapping[str, bytes] | None = None,
        timeout: _Timeout = ...,
        execution_profile: _ExecutionProfileArg = None,
        paging_state: bytes | None = None,
        host: _HostArg = None,
        execute_as: str | None = None,
    ) -> _F: ...

@final
class AioExecute(Generic[_R]):
    # result_class(page, session, request, row_factory, query): turbocql.aio.AsyncResultSet;
    # loop_queue(loop): turbocql.aio._loop_queue
    def __new__(
        cls,
        requests: RequestBuilder,
        result_class: Callable[..., _R],
        loop_queue: Callable[[AbstractEventLoop], LoopQueue],
    ) -> AioExecute[_R]: ...
    def __call__(
        self,
        query: _Query,
        parameters: _Values = None,
        timeout: _Timeout = ...,
        trace: bool = False,
        paging_state: bytes | None = None,
        execution_profile: _ExecutionProfileArg = None,
        host: _HostArg = None,
    ) -> AioRequest[_R]: ...

@final
class EngineMethod(Generic[_P, _R]):
    # On the class: the function; on an instance: its attribute `attr` (an engine object
    # called as the method), or the function bound when the instance has no such attribute.
    def __new__(cls, function: Callable[Concatenate[Any, _P], _R], attr: str) -> EngineMethod[_P, _R]: ...
    @overload
    def __get__(self, instance: None, owner: type | None = None, /) -> Callable[Concatenate[Any, _P], _R]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None, /) -> Callable[_P, Any]: ...
    @property
    def __wrapped__(self) -> Callable[Concatenate[Any, _P], _R]: ...

@disjoint_base
class ResultCore:
    def __new__(
        cls,
        page: Page | ResponseFutureCore,
        session: Any,
        request: Request | None = None,
        row_factory: Any = None,
        query: Any = None,
        rows: Any = None,
        response_future: Any = None,
    ) -> Self: ...
    _page: Page
    @property
    def _session(self) -> Any: ...
    @property
    def _request(self) -> Request: ...
    @property
    def _row_factory(self) -> Any: ...
    query: Any
    response_future: Any
    # The row factory's output for the page (made on first access), or [].
    _current_rows: Any
    def _reset_page(self, page: Page) -> None: ...
    @property
    def current_rows(self) -> Any: ...
    def one(self) -> Any: ...
    @property
    def column_names(self) -> tuple[str, ...] | None: ...
    @property
    def column_types(self) -> tuple[str, ...] | None: ...
    @property
    def paging_state(self) -> bytes | None: ...
    @property
    def has_more_pages(self) -> bool: ...
    @property
    def _trace_id(self) -> UUID | None: ...
    @property
    def warnings(self) -> list[str] | None: ...
    @property
    def _schema_agreed(self) -> bool: ...

@disjoint_base
class ResponseFutureCore:
    def __new__(cls, session: Any, request: Request, query: Any, row_factory: Any, timeout: Any) -> Self: ...
    @property
    def session(self) -> Any: ...
    @property
    def query(self) -> Any: ...
    @property
    def timeout(self) -> Any: ...
    @property
    def _request(self) -> Request: ...
    row_factory: Any
    def __call__(self, page: Page | None, exc: BaseException | None) -> None: ...
    def _hook_settling(self) -> None: ...
    def _settle_with(self, page: Page) -> None: ...
    @property
    def _final_page(self) -> Page | None: ...
    @property
    def done(self) -> bool: ...
    def result(self, timeout: float | None = None) -> ResultSet: ...
    def add_callback(self, fn: Callable[..., object], *args: Any, **kwargs: Any) -> Self: ...
    def add_errback(self, fn: Callable[..., object], *args: Any, **kwargs: Any) -> Self: ...
    def add_callbacks(
        self,
        callback: Callable[..., object],
        errback: Callable[..., object],
        callback_args: Sequence[Any] | None = None,
        callback_kwargs: dict[str, Any] | None = None,
        errback_args: Sequence[Any] | None = None,
        errback_kwargs: dict[str, Any] | None = None,
    ) -> Self: ...
    def clear_callbacks(self) -> None: ...
    @property
    def has_more_pages(self) -> bool: ...
    def start_fetching_next_page(self) -> None: ...

@final
class ConcurrentRun(Generic[_T_co]):
    # Items are result_cls(success, result_set(...) or exception), in input order.
    def collect(self) -> list[_T_co]: ...
    def failures(self) -> list[tuple[int, BaseException]]: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> _T_co: ...

@final
class LoopQueue:
    def __new__(cls) -> Self: ...
    def flush(self) -> None: ...
    def fileno(self) -> int: ...
    def drain(self) -> int: ...

@final
class AioRequest(Generic[_T_co]):
    # Awaiting it gives wrap(page, *args).
    def __new__(
        cls, event_loop: AbstractEventLoop, queue: LoopQueue, wrap: Callable[..., _T_co], args: tuple[Any, ...]
    ) -> AioRequest[_T_co]: ...
    _asyncio_future_blocking: bool
    def __await__(self) -> Generator[Any, None, _T_co]: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> Any: ...
    def get_loop(self) -> AbstractEventLoop: ...
    def done(self) -> bool: ...
    def cancelled(self) -> bool: ...
    def result(self) -> _T_co: ...
    def exception(self) -> BaseException | None: ...
    def add_done_callback(self, callback: Callable[[Self], object], *, context: Context | None = None) -> None: ...
    def remove_done_callback(self, callback: Callable[[Self], object]) -> int: ...
    def cancel(self, msg: Any = None) -> bool: ...
    def throw(
        self, typ: type[BaseException] | BaseException, val: object = None, tb: TracebackType | None = None
    ) -> NoReturn: ...
    def close(self) -> None: ...

@final
class PipelineCore:
    def execute(self, statement: _Query, parameters: _Values = None) -> None: ...
    def confirm(self) -> list[BaseException]: ...
    # Failures after the first not kept by a write pipeline without an error handler.
    @property
    def failures_dropped(self) -> int: ...
    # result_set(page, session, request | None, row_factory, query) with args (session,
    # row_factory, query); StopIteration once every queued request has been consumed.
    def next_result(self, result_set: Callable[..., _T], args: tuple[Any, ...]) -> _T: ...
    @property
    def pending(self) -> int: ...
    def close(self) -> None: ...
