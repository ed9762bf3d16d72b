"""Native asyncio API.

::

    from turbocql.aio import Cluster

    async with Cluster(["127.0.0.1"]) as cluster:
        session = await cluster.connect("ks")
        prepared = await session.prepare("SELECT * FROM t WHERE k = ?")
        result = await session.execute(prepared, ("key",))
        async for row in result:          # further pages are awaited, not blocked on
            ...

Requests run in the Rust engine; no thread per request. Each event loop owns a completion
queue it watches with ``add_reader``: finished requests reach the loop in batches, one
wake-up per batch, and the tasks awaiting them are woken directly (``session.execute``
returns an engine object that asyncio's tasks await like a future). Works on the running
loop of the application, including uvloop. Cancelling the awaiting task cancels the
request and frees what it holds.
"""

import asyncio
import weakref

from turbocql import _engine
from turbocql import cluster as _cluster
from turbocql.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, ResultSet
from turbocql.concurrent import ExecutionResult, _check_with_args, _run

__all__ = ["Cluster", "Session", "AsyncResultSet"]


class Cluster:
    """Asyncio twin of :class:`turbocql.cluster.Cluster`; takes the same arguments."""

    def __init__(self, *args, **kwargs):
        self._cluster = _cluster.Cluster(*args, **kwargs)

    @property
    def sync_cluster(self):
        return self._cluster

    async def connect(self, keyspace=None):
        """Opens a :class:`Session` (the handshake runs off the event loop)."""
        loop = asyncio.get_running_loop()
        session = await loop.run_in_executor(None, self._cluster.connect, keyspace)
        return Session(session)

    def register_user_type(self, keyspace, user_type, klass):
        self._cluster.register_user_type(keyspace, user_type, klass)

    async def shutdown(self):
        await asyncio.get_running_loop().run_in_executor(None, self._cluster.shutdown)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.shutdown()


class Session:
    """Asyncio twin of :class:`turbocql.cluster.Session`: ``await session.execute(...)``.

    ``row_factory``, ``default_timeout``, ``default_consistency_level`` and
    ``default_fetch_size`` are those of the underlying session.
    """

    def __init__(self, session):
        self._session = session
        # What session.execute(...) calls: no Python frame per call (see Session.execute).
        object.__setattr__(
            self, "_engine_execute", _engine.AioExecute(session._build_request, AsyncResultSet, _loop_queue)
        )

    @property
    def sync_session(self):
        return self._session

    def __getattr__(self, name):
        if name in (
            "row_factory",
            "client_protocol_handler",
            "default_timeout",
            "default_consistency_level",
            "default_serial_consistency_level",
            "default_fetch_size",
            "keyspace",
            "encoder",
            "cluster",
            "is_shutdown",
            "hosts",
        ):
            return getattr(self._session, name)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name in (
            "row_factory",
            "client_protocol_handler",
            "default_timeout",
            "default_consistency_level",
            "default_serial_consistency_level",
            "default_fetch_size",
        ):
            # Supported settings of this API: without the classic setter's deprecation warning.
            self._session._set_setting(name, value)
        else:
            object.__setattr__(self, name, value)

    def execute(
        self,
        query,
        parameters=None,
        timeout=_NOT_SET,
        trace=False,
        paging_state=None,
        execution_profile=EXEC_PROFILE_DEFAULT,
        host=None,
    ):
        """Starts ``query`` and returns an awaitable of its :class:`AsyncResultSet`.

        Bad values raise here, before anything is sent. The request starts at once (as a
        task would): ``await`` it, or pass it to ``asyncio.gather``/``wait_for``.
        Cancelling it (or the task awaiting it) drops the request in the engine.

        (``session.execute`` is the session's ``_engine.AioExecute``, which does all this
        in one call; this function, shown on the class, forwards to it.)"""
        return self.__dict__["_engine_execute"](
            query, parameters, timeout, trace, paging_state, execution_profile, host
        )

    execute = _engine.EngineMethod(execute, "_engine_execute")  # type: ignore[assignment]  # stands for the function

    async def prepare(self, query, custom_payload=None, keyspace=None):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._session.prepare, query, custom_payload, keyspace)

    async def set_keyspace(self, keyspace):
        await asyncio.get_running_loop().run_in_executor(None, self._session.set_keyspace, keyspace)

    async def execute_concurrent(
        self,
        statements_and_parameters,
        concurrency=100,
        raise_on_first_error=True,
        execution_profile=EXEC_PROFILE_DEFAULT,
    ):
        """:func:`turbocql.concurrent.execute_concurrent`, awaited: the engine keeps the
        requests in flight on its own thread; the loop is free meanwhile. Results are
        :class:`AsyncResultSet`, as those of :meth:`execute`: further pages are awaited."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None,
            lambda: _run(
                self._session,
                None,
                statements_and_parameters,
                concurrency,
                raise_on_first_error,
                False,
                execution_profile,
                result_set=AsyncResultSet,
            ),
        )

    async def execute_concurrent_with_args(
        self,
        statement,
        parameters,
        concurrency=100,
        raise_on_first_error=True,
        execution_profile=EXEC_PROFILE_DEFAULT,
    ):
        _check_with_args(statement, parameters)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None,
            lambda: _run(
                self._session,
                statement,
                parameters,
                concurrency,
                raise_on_first_error,
                False,
                execution_profile,
                result_set=AsyncResultSet,
            ),
        )

    async def shutdown(self):
        self._session.shutdown()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.shutdown()


# id(loop) -> (weakref to the loop, weakref to its LoopQueue)
_queues: dict[int, tuple[weakref.ref, weakref.ref]] = {}


def _loop_queue(loop):
    """The engine's completion queue for ``loop``, watched with ``add_reader``.

    Both are held weakly here: the loop's reader keeps its queue alive while the loop
    runs, so a closed loop and its queue (with any request it never settled) are freed."""
    entry = _queues.get(id(loop))
    if entry is not None and entry[0]() is loop:
        q = entry[1]()
        if q is not None:
            return q
    q = _engine.LoopQueue()
    loop.add_reader(q.fileno(), q.drain)
    # The key is bound now, while the loop lives (the callback runs once it is gone).
    ref = weakref.ref(loop, lambda _r, key=id(loop): _queues.pop(key, None))  # noqa: B008
    _queues[id(loop)] = (ref, weakref.ref(q))
    return q


_get_running_loop = asyncio.get_running_loop


def _start(request, paging_state, wrap, args):
    """Starts ``request`` on the running loop; awaiting the returned object gives
    ``wrap(page, *args)``."""
    loop = _get_running_loop()
    return request.aio(loop, _loop_queue(loop), wrap, args, paging_state)


class AsyncResultSet(ResultSet):
    """A :class:`~turbocql.cluster.ResultSet` whose further pages are awaited:
    ``async for row in result`` and ``await result.all_pages()``. ``current_rows``,
    ``one()``, ``column_names``, ``paging_state`` and ``was_applied`` work as in the
    classic ResultSet."""

    async def fetch_next_page_async(self):
        if self.paging_state is not None:
            self._set_page(await _start(self._request, self.paging_state, _page, ()))
        else:
            self._current_rows = []

    def __aiter__(self):
        return self._arows()

    async def _arows(self):
        while True:
            for row in self._current_rows:
                yield row
            if self.paging_state is None:
                return
            await self.fetch_next_page_async()

    async def all_pages(self):
        """Every row of every remaining page, as a list."""
        return [row async for row in self]

    async def to_arrow(self):
        """Every remaining page (awaited) as one ``pyarrow.Table`` (see ``ResultSet.to_arrow``)."""
        from turbocql._query import arrow as _arrow

        return _arrow.result_table(self, [item async for item in self])

    async def to_pandas(self):
        """Every remaining page (awaited) as one ``pandas.DataFrame``."""
        return (await self.to_arrow()).to_pandas()

    async def to_polars(self):
        """Every remaining page (awaited) as one ``polars.DataFrame``."""
        import polars

        return polars.from_arrow(await self.to_arrow())


def _page(page):
    return page


_ = ExecutionResult
