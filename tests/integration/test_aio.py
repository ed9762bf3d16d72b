"""turbocql.aio: the native asyncio API on the application's loop (and uvloop if present)."""

import asyncio
import threading

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import paused
from turbocql import InvalidRequest, OperationTimedOut
from turbocql.aio import AsyncResultSet, Cluster
from turbocql.query import SimpleStatement


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_connect_execute_prepare_and_paging(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            async with await cluster.connect(keyspace) as session:
                await session.execute("CREATE TABLE IF NOT EXISTS aio_t (k int PRIMARY KEY, v text)")
                await session.execute("TRUNCATE aio_t")
                ins = await session.prepare("INSERT INTO aio_t (k, v) VALUES (?, ?)")
                await asyncio.gather(*(session.execute(ins, (i, str(i))) for i in range(50)))
                rs = await session.execute(SimpleStatement("SELECT k, v FROM aio_t", fetch_size=7))
                assert isinstance(rs, AsyncResultSet) and len(rs.current_rows) == 7 and rs.has_more_pages
                rows = [r async for r in rs]
                assert sorted(r.k for r in rows) == list(range(50))
                one = await session.execute("SELECT v FROM aio_t WHERE k = %s", (3,))
                assert one.one().v == "3"
                return True

    assert run(main())


def test_errors_are_raised_by_await(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            with pytest.raises(InvalidRequest, match="nope_aio"):
                await session.execute("SELECT * FROM nope_aio")
            ins = await session.prepare("SELECT * FROM system.local WHERE key = ?")
            with pytest.raises(TypeError, match='column "key"'):
                await session.execute(ins, (5,))
            assert (await session.execute("SELECT key FROM system.local")).one().key == "local"

    run(main())


def _python_threads() -> int:
    """Threads started from Python. Not the ``_DummyThread`` entries: an engine thread that
    first logs (``logging`` asks ``threading.current_thread()``) gets one for good, which says
    nothing about threads per request."""
    return sum(not isinstance(t, threading._DummyThread) for t in threading.enumerate())


def test_completions_reach_the_loop_in_batches_without_threads(cassandra, keyspace):
    """1,000 concurrent requests: no thread is started per request, and the loop is
    woken far fewer times than there are requests."""

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            await session.execute("SELECT key FROM system.local")  # warm up
            loop = asyncio.get_running_loop()
            from turbocql import aio

            queue = aio._loop_queue(loop)
            drains = 0
            original = queue.drain
            loop.remove_reader(queue.fileno())

            def counting_drain():
                nonlocal drains
                drains += 1
                return original()

            loop.add_reader(queue.fileno(), counting_drain)
            # prepare runs in the loop's default executor, which may start a second worker
            # thread when the first has not yet marked itself idle: count after it
            sel = await session.prepare("SELECT key FROM system.local")
            threads_before = _python_threads()
            results = await asyncio.gather(*(session.execute(sel) for _ in range(1000)))
            assert all(r.one().key == "local" for r in results)
            assert _python_threads() <= threads_before
            assert drains < 1000
            return drains

    drains = run(main())
    assert drains >= 1


def test_cancel_frees_the_request(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            with paused(cassandra):
                task = asyncio.ensure_future(session.execute("SELECT key FROM system.local", timeout=30))
                await asyncio.sleep(0.2)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            # The session keeps working after the cancellation.
            assert (await session.execute("SELECT key FROM system.local")).one().key == "local"

    run(main())


def test_timeout(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            with paused(cassandra):
                with pytest.raises(OperationTimedOut):
                    await session.execute("SELECT key FROM system.local", timeout=0.3)

    run(main())


def test_execute_concurrent_equivalent(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            await session.execute("CREATE TABLE IF NOT EXISTS aio_c (k int PRIMARY KEY)")
            ins = await session.prepare("INSERT INTO aio_c (k) VALUES (?)")
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.001)

            t = asyncio.ensure_future(ticker())
            results = await session.execute_concurrent_with_args(ins, [(i,) for i in range(5000)], concurrency=100)
            t.cancel()
            assert len(results) == 5000 and all(ok for ok, _ in results)
            assert ticks > 0, "the loop kept running while the engine worked"

    run(main())


def test_uvloop(cassandra, keyspace):
    uvloop = pytest.importorskip("uvloop")

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            rs = await asyncio.gather(*(session.execute("SELECT key FROM system.local") for _ in range(200)))
            return {r.one().key for r in rs}

    assert uvloop.run(main()) == {"local"}


def test_execute_returns_a_future_like_awaitable(cassandra, keyspace):
    """session.execute() starts the request at once and returns an object asyncio treats
    as a future: states, result(), exception(), callbacks, awaiting it twice."""

    async def main():
        loop = asyncio.get_running_loop()
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            req = session.execute("SELECT key FROM system.local")
            assert asyncio.isfuture(req) and req.get_loop() is loop
            assert not req.done() and not req.cancelled()
            with pytest.raises(asyncio.InvalidStateError):
                req.result()
            seen = []
            req.add_done_callback(seen.append)
            rs = await req
            assert isinstance(rs, AsyncResultSet) and rs.one().key == "local"
            assert req.done() and req.exception() is None
            assert req.result() is rs and await req is rs
            assert seen == [req]
            # A callback added once done runs soon, through the loop.
            late = loop.create_future()
            req.add_done_callback(late.set_result)
            assert await asyncio.wait_for(late, 5) is req
            # A removed callback does not run.
            req2 = session.execute("SELECT key FROM system.local")
            assert req2.remove_done_callback(seen.append) == 0
            req2.add_done_callback(seen.append)
            assert req2.remove_done_callback(seen.append) == 1
            await req2
            assert seen == [req]

            bad = session.execute("SELECT * FROM no_such_table_here")
            with pytest.raises(InvalidRequest):
                await bad
            assert isinstance(bad.exception(), InvalidRequest)
            with pytest.raises(InvalidRequest, match="no_such_table_here"):
                bad.result()
            results = await asyncio.gather(
                session.execute("SELECT * FROM no_such_table_here"),
                session.execute("SELECT key FROM system.local"),
                return_exceptions=True,
            )
            assert isinstance(results[0], InvalidRequest) and results[1].one().key == "local"

    run(main())


def test_wait_for_timeout_cancels_the_request(cassandra, keyspace):
    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            with paused(cassandra):
                req = session.execute("SELECT key FROM system.local", timeout=30)
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(req, 0.3)
                assert req.cancelled()
                with pytest.raises(asyncio.CancelledError):
                    req.result()
                assert req.cancel() is False

                # Cancelling the task that awaits it cancels the request too.
                inner = []

                async def waits():
                    r = session.execute("SELECT key FROM system.local", timeout=30)
                    inner.append(r)
                    return await r

                task = asyncio.ensure_future(waits())
                await asyncio.sleep(0.1)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert inner[0].cancelled()
            assert (await session.execute("SELECT key FROM system.local")).one().key == "local"

    run(main())


def test_cancelling_an_awaited_request_and_throwing_into_its_awaiter(cassandra, keyspace):
    """req.cancel(msg) while a task awaits it: the task gets CancelledError(msg). An
    exception thrown into the awaiting coroutine (coro.throw) or closing it cancels the
    request, and the exception comes out of the await."""

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            with paused(cassandra):
                req = session.execute("SELECT key FROM system.local", timeout=30)
                task = asyncio.ensure_future(_await(req))
                await asyncio.sleep(0.1)
                assert req.cancel("enough") is True
                with pytest.raises(asyncio.CancelledError, match="enough"):
                    await task
                assert req.cancelled() and task.cancelled()

                req2 = session.execute("SELECT key FROM system.local", timeout=30)
                coro = _await(req2)
                waiter = coro.send(None)  # suspended in the await
                assert isinstance(waiter, asyncio.Future) and not req2.done()
                with pytest.raises(KeyError, match="thrown"):
                    coro.throw(KeyError("thrown"))
                assert req2.cancelled()

                req3 = session.execute("SELECT key FROM system.local", timeout=30)
                coro = _await(req3)
                coro.send(None)
                coro.close()
                assert req3.cancelled()
            assert (await session.execute("SELECT key FROM system.local")).one().key == "local"

    run(main())


async def _await(awaitable):
    return await awaitable


def test_task_context_survives_the_await(cassandra, keyspace):
    import contextvars

    var = contextvars.ContextVar("var", default="unset")

    async def one(session, value):
        var.set(value)
        await session.execute("SELECT key FROM system.local")
        return var.get()

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            got = await asyncio.gather(*(one(session, "v%d" % i) for i in range(50)))
            assert got == ["v%d" % i for i in range(50)]
            assert var.get() == "unset"

    run(main())


def test_one_session_on_several_loops_and_threads(cassandra, keyspace):
    """The session follows the running loop: used by a second asyncio.run, and by loops
    running at the same time in other threads."""
    from turbocql.aio import Session
    from turbocql.cluster import Cluster as SyncCluster

    with SyncCluster([HOST], port=PORT) as cluster:
        session = Session(cluster.connect(keyspace))

        async def keys(n):
            rs = await asyncio.gather(*(session.execute("SELECT key FROM system.local") for _ in range(n)))
            return {r.one().key for r in rs}

        assert asyncio.run(keys(20)) == {"local"}
        assert asyncio.run(keys(20)) == {"local"}  # a new loop on the same thread
        results, errors = [], []

        def in_thread():
            try:
                results.append(asyncio.run(keys(200)))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=in_thread) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and results == [{"local"}] * 4


def test_prepared_statement_options_reach_the_engine(cassandra, keyspace):
    """session.execute(prepared, ...) runs in the engine without Python code: the statement's
    and the session's options are read at each call, as the Python path reads them."""
    from tests.integration.conftest import unavailable_on_one_node
    from turbocql import ConsistencyLevel
    from turbocql.query import dict_factory, named_tuple_factory

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            await session.execute("CREATE TABLE IF NOT EXISTS aio_opts (k int, c int, PRIMARY KEY (k, c))")
            ins = await session.prepare("INSERT INTO aio_opts (k, c) VALUES (?, ?)")
            await asyncio.gather(*(session.execute(ins, (1, c)) for c in range(10)))
            sel = await session.prepare("SELECT c FROM aio_opts WHERE k = ?")
            # Consistency: the statement's, else the session's default (one node: THREE fails).
            sel.consistency_level = ConsistencyLevel.THREE
            with unavailable_on_one_node(ConsistencyLevel.THREE):
                await session.execute(sel, (1,))
            sel.consistency_level = None
            session.default_consistency_level = ConsistencyLevel.THREE
            with unavailable_on_one_node(ConsistencyLevel.THREE):
                await session.execute(sel, (1,))
            session.default_consistency_level = ConsistencyLevel.ONE
            # Fetch size: the statement's, else the session's.
            sel.fetch_size = 3
            rs = await session.execute(sel, (1,))
            assert [r.c for r in rs.current_rows] == [0, 1, 2] and rs.has_more_pages
            assert [r.c async for r in rs] == list(range(10))
            del sel.fetch_size
            session.default_fetch_size = 4
            rs = await session.execute(sel, [1])
            assert len(rs.current_rows) == 4 and rs.has_more_pages
            session.default_fetch_size = 5000
            # Row factory and paging state.
            session.row_factory = dict_factory
            rs = await session.execute(sel, (1,), paging_state=None)
            assert rs.one() == {"c": 0} and isinstance(rs, AsyncResultSet)
            session.row_factory = named_tuple_factory
            # Bad values raise at the call, before anything is sent.
            with pytest.raises(TypeError, match='column "k"'):
                session.execute(sel, ("x",))
            with pytest.raises(ValueError):
                session.execute(sel, (1, 2))
            # Timeouts: the given one; omitted = the session's; None = none at all.
            session.default_timeout = 0.3
            with paused(cassandra):
                with pytest.raises(OperationTimedOut):
                    await session.execute(sel, (1,))
                with pytest.raises(OperationTimedOut):
                    await session.execute(sel, (1,), timeout=0.2)
                unbounded = asyncio.ensure_future(session.execute(sel, (1,), timeout=None))
                done, _ = await asyncio.wait([unbounded], timeout=0.8)
                assert not done  # still waiting for the frozen server, no client timeout
            session.default_timeout = 10.0
            assert (await asyncio.wait_for(unbounded, 20)).one().c == 0

    run(main())


def test_every_statement_kind(cassandra, keyspace):
    """Strings, SimpleStatement, BoundStatement and BatchStatement go the Python way inside
    the engine's execute; all of them run and return an AsyncResultSet."""
    from turbocql.query import BatchStatement

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            await session.execute("CREATE TABLE IF NOT EXISTS aio_kinds (k int PRIMARY KEY, v text)")
            ins = await session.prepare("INSERT INTO aio_kinds (k, v) VALUES (?, ?)")
            batch = BatchStatement()
            for i in range(3):
                batch.add(ins, (i, "b%d" % i))
            assert isinstance(await session.execute(batch), AsyncResultSet)
            await session.execute(ins.bind((3, "bound")))
            await session.execute(SimpleStatement("INSERT INTO aio_kinds (k, v) VALUES (%s, %s)"), (4, "simple"))
            await session.execute("INSERT INTO aio_kinds (k, v) VALUES (%s, %s)", (5, "str"), timeout=None)
            rows = await session.execute(SimpleStatement("SELECT k, v FROM aio_kinds", fetch_size=2))
            got = sorted((r.k, r.v) for r in await rows.all_pages())
            assert got == [(0, "b0"), (1, "b1"), (2, "b2"), (3, "bound"), (4, "simple"), (5, "str")]
            with pytest.raises(ValueError, match="BatchStatement"):
                session.execute(batch, (1,))

    run(main())
