"""Reference cycles through engine objects are collected by the cycle collector.

Every engine object that holds Python objects must take part in CPython's cycle
collector (``__traverse__`` / ``__clear__``, i.e. ``Py_TPFLAGS_HAVE_GC``): otherwise a
cycle that runs through it (a callback that references its own future, a result set
kept by an object its row factory made, ...) is never freed, and neither is anything
it reaches (the user's objects, the event loop, result pages).

Each test builds such a cycle with a weak-referenceable :class:`Sentinel` inside it,
where the cycle runs through the engine object (the *anchor*), then:

1. with the anchor still referenced, ``gc.collect()`` must NOT free the sentinel: this
   proves the sentinel is only reachable through the engine object, so that the test
   can fail (a cycle that does not actually run through the engine object would pass
   step 2 trivially);
2. with every outside reference dropped, ``gc.collect()`` must free it (``ref() is
   None``), waiting up to a few seconds for the dispatcher thread or the engine to
   drop their own references to a request that has just finished.

A pending request is held by the engine itself until it finishes (by design: its
callbacks must still run), so a cycle dropped while its request is pending can only be
collected after the request has finished; those tests drop their references while
pending and check once it is done.

The engine classes these cycles run through, and the Python objects they hold:
``ResponseFutureCore`` (callbacks, errbacks and their arguments, the settled page, rows
or exception, session, query, row factory), ``ResultCore`` (page, rows, row factory,
session, request, query, response future), ``AioRequest`` (loop, queue, wrap and args,
the settled result set or exception, done-callbacks, waiter), ``ConcurrentRun`` (the
parameters iterator, statement, result factories), ``RequestBuilder`` and ``SyncExecute``
/ ``AioExecute`` (the session, its defaults' snapshot with the row factory), the statement
cache kept on a ``PreparedStatement`` (``_engine_opts``), ``LoopQueue`` (requests and
completions not yet handed over, each holding its ``AioRequest``).

A test that fails with the engine of the day is skipped with the reason (the class and
what it lacks); remove the mark once the engine is fixed.
"""

import asyncio
import gc
import threading
import time
import weakref

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import paused
from turbocql import InvalidRequest, _engine
from turbocql.cluster import Cluster
from turbocql.concurrent import ReadPipeline, WritePipeline, execute_concurrent, execute_concurrent_with_args

TABLE = "gc_cycles"


class Sentinel:
    """A user object inside the cycle; freed only if the whole cycle is collected."""

    def __init__(self, event=None):
        self.event = event  # set when a callback ran (never part of the cycle's way back)
        self.seen = []

    def on_rows(self, rows, *args, **kwargs):
        self.seen.append(rows)
        if self.event is not None:
            self.event.set()

    on_error = on_rows

    def make_rows(self, names, rows):
        """A row factory."""
        return [tuple(r) for r in rows]


def _freed(ref, timeout=5.0):
    """True once ``ref``'s object has been collected (after ``gc.collect()``)."""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        if ref() is None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _check(ref, anchor_box):
    """Steps 1 and 2 of the module doc; ``anchor_box`` (from :func:`_anchor`) is a
    one-item list holding the only outside reference to the engine object."""
    what = type(anchor_box[0]).__name__
    gc.collect()
    assert ref() is not None, "the sentinel must be reachable only through the %s" % what
    anchor_box.clear()
    assert _freed(ref), "a reference cycle through %s was not collected" % what


def _anchor(obj):
    return [obj]


@pytest.fixture(scope="module")
def gc_session(cluster, keyspace):
    s = cluster.connect(keyspace)
    s.execute("CREATE TABLE IF NOT EXISTS %s (k int PRIMARY KEY, v text)" % TABLE)
    for k in range(20):
        s.execute("INSERT INTO %s (k, v) VALUES (%%s, %%s)" % TABLE, (k, "v%d" % k))
    yield s
    s.execute("DROP TABLE IF EXISTS %s" % TABLE)
    s.shutdown()


@pytest.fixture
def session(gc_session):
    yield gc_session
    # A test that failed before putting the class default row factory back.
    if "row_factory" in gc_session.__dict__:
        del gc_session.row_factory


@pytest.fixture(scope="module")
def stmts(gc_session):
    return (
        gc_session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % TABLE),
        gc_session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE),
    )


def _wait(event):
    assert event.wait(10), "the callback did not run"


def _restore_row_factory(session):
    """Puts the class default row factory back, then runs one request: the session
    keeps a snapshot of its defaults (row factory included) until its next request, a
    reference from outside the cycle that would keep the sentinel alive."""
    del session.row_factory
    session.execute("SELECT k FROM %s WHERE k = 0" % TABLE)


# --- (a) ResponseFuture: callbacks and errbacks that reference the future ------------------------


def test_future_callback_bound_method_dropped_while_pending(session, stmts):
    """future -> callbacks -> bound method -> sentinel -> future, all references dropped
    while the request may still be pending; collectable once it is done."""

    def build():
        ev = threading.Event()
        holder = Sentinel(ev)
        fut = session.execute_async(stmts[1], (1,))
        holder.future = fut
        fut.add_callback(holder.on_rows)
        return weakref.ref(holder), ev

    ref, ev = build()
    _wait(ev)
    assert _freed(ref), "a reference cycle through a ResponseFuture (callback) was not collected"


def test_future_callback_bound_method_after_completion(session, stmts):
    """Same cycle, checked with the future done (callbacks are kept after completion for
    the next pages)."""

    def build():
        ev = threading.Event()
        holder = Sentinel(ev)
        fut = session.execute_async(stmts[1], (1,))
        holder.future = fut
        fut.add_callback(holder.on_rows)
        fut.result()
        return weakref.ref(holder), ev, _anchor(fut)

    ref, ev, box = build()
    _wait(ev)
    _check(ref, box)


def test_future_callback_closure_added_after_completion(session, stmts):
    """A closure over the future added once the future is done (it runs at once and is
    kept): future -> callbacks -> closure -> cell -> future."""

    def build():
        holder = Sentinel()
        fut = session.execute_async(stmts[1], (2,))
        fut.result()

        def callback(rows):
            holder.seen.append((fut, rows))

        fut.add_callback(callback)
        assert holder.seen, "a callback added after completion runs at once"
        return weakref.ref(holder), _anchor(fut)

    ref, box = build()
    _check(ref, box)


def _noop(*args, **kwargs):
    pass


def test_future_callback_args_and_kwargs_reference_the_future(session, stmts):
    """The future and the sentinel as a callback's ``callback_args`` / ``callback_kwargs``
    and an errback's: future -> callbacks -> args -> future."""

    def build():
        holder = Sentinel()
        fut = session.execute_async(stmts[1], (3,))
        fut.add_callbacks(
            _noop,
            _noop,
            callback_args=(fut, holder),
            callback_kwargs={"h": holder, "f": fut},
            errback_args=(fut, holder),
            errback_kwargs={"f": fut},
        )
        fut.result()
        return weakref.ref(holder), _anchor(fut)

    ref, box = build()
    _check(ref, box)


def test_future_errback_dropped_while_pending(session):
    """future -> errbacks -> bound method -> sentinel -> future, on a failing request."""

    def build():
        ev = threading.Event()
        holder = Sentinel(ev)
        fut = session.execute_async("SELECT * FROM gc_no_such_table")
        holder.future = fut
        fut.add_errback(holder.on_error)
        return weakref.ref(holder), ev

    ref, ev = build()
    _wait(ev)
    assert _freed(ref), "a reference cycle through a failed ResponseFuture (errback) was not collected"


def test_future_errback_after_completion(session):
    """An errback (closure over the future) added once the request has failed; the
    exception it got is kept too."""

    def build():
        holder = Sentinel()
        fut = session.execute_async("SELECT * FROM gc_no_such_table")
        with pytest.raises(InvalidRequest):
            fut.result()

        def errback(exc):
            holder.seen.append((fut, exc))

        fut.add_errback(errback)
        assert holder.seen and isinstance(holder.seen[0][1], InvalidRequest)
        return weakref.ref(holder), _anchor(fut)

    ref, box = build()
    _check(ref, box)


def test_future_and_its_result_set(session, stmts):
    """future -> callbacks -> sentinel -> ResultSet -> response_future -> future."""

    def build():
        holder = Sentinel()
        fut = session.execute_async(stmts[1], (4,))
        fut.add_callback(holder.on_rows)
        holder.result = fut.result()
        assert holder.result.response_future is fut
        return weakref.ref(holder), _anchor(fut)

    ref, box = build()
    _check(ref, box)


# --- (b) ResultSet ----------------------------------------------------------------------------------


def test_result_set_row_factory_references_it(session):
    """ResultSet -> row factory (a bound method) -> sentinel -> ResultSet."""

    def build():
        holder = Sentinel()

        class Factory:
            def __init__(self, owner):
                self.owner = owner

            def __call__(self, names, rows):
                return [tuple(r) for r in rows]

        session.row_factory = Factory(holder)
        try:
            rs = session.execute("SELECT k, v FROM %s WHERE k = 5" % TABLE)
        finally:
            _restore_row_factory(session)
        assert rs.one() == (5, "v5")
        holder.result = rs
        return weakref.ref(holder), _anchor(rs)

    ref, box = build()
    _check(ref, box)


def test_result_set_rows_made_by_the_row_factory_reference_it(session):
    """ResultSet -> its rows (made by the row factory) -> sentinel -> ResultSet."""

    def build():
        holder = Sentinel()

        def factory(names, rows):
            return [holder]

        session.row_factory = factory
        try:
            rs = session.execute("SELECT k, v FROM %s WHERE k = 6" % TABLE)
        finally:
            _restore_row_factory(session)
        assert rs.one() is holder
        holder.result = rs
        del factory
        return weakref.ref(holder), _anchor(rs)

    ref, box = build()
    _check(ref, box)


def test_result_set_user_attribute(session, stmts):
    """ResultSet.__dict__ -> sentinel -> ResultSet (a user object kept on the result)."""

    def build():
        holder = Sentinel()
        rs = session.execute(stmts[1], (7,))
        assert rs.one().v == "v7"
        rs.owner = holder
        holder.result = rs
        return weakref.ref(holder), _anchor(rs)

    ref, box = build()
    _check(ref, box)


# --- (c) asyncio requests (turbocql.aio: session.execute returns an engine AioRequest) -------------


def _run_aio(keyspace, body):
    """Runs ``body(session, stmts)`` on a fresh loop with a fresh asyncio session; returns
    what it returns."""
    from turbocql.aio import Cluster as AioCluster

    async def main():
        async with AioCluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            select = await session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)
            return await body(session, select)

    return asyncio.run(asyncio.wait_for(main(), 60))


def test_aio_request_done_callback_added_while_pending(gc_session, keyspace):
    """A done-callback (bound method) added while the request is pending keeps the result
    set it gets on the sentinel: request -> result set -> sentinel -> request."""

    async def body(session, select):
        holder = Sentinel()
        req = session.execute(select, (8,))
        assert not req.done()

        def on_done(r):
            r.result().owner = holder
            holder.request = r

        req.add_done_callback(on_done)
        rs = await req
        assert rs.one().v == "v8" and holder.request is req
        return weakref.ref(holder), _anchor(req)

    ref, box = _run_aio(keyspace, body)
    _check(ref, box)


def test_aio_request_done_callback_added_when_done(gc_session, keyspace):
    """A done-callback (closure over the request) added once it is done: it runs on the
    loop; request -> result set -> sentinel -> request."""

    async def body(session, select):
        holder = Sentinel()
        req = session.execute(select, (9,))
        rs = await req

        def on_done(r):
            holder.request = req
            rs.owner = holder

        req.add_done_callback(on_done)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert holder.request is req
        return weakref.ref(holder), _anchor(req)

    ref, box = _run_aio(keyspace, body)
    _check(ref, box)


def test_aio_request_failed_and_awaited(gc_session, keyspace):
    """The classic asyncio cycle: a failed request keeps its exception, whose traceback
    holds the frame that awaited it, whose locals hold the request (and the sentinel)."""

    async def body(session, select):
        holder = Sentinel()
        req = session.execute("SELECT * FROM gc_no_such_table")
        holder.request = req
        try:
            await req
        except InvalidRequest:
            pass
        else:
            raise AssertionError("InvalidRequest expected")
        return weakref.ref(holder), _anchor(req)

    ref, box = _run_aio(keyspace, body)
    _check(ref, box)


def test_aio_request_done_callback_dropped_while_pending(gc_session, keyspace):
    """request -> done-callbacks -> closure -> sentinel -> request, every reference
    dropped while the request is pending: the engine drops the callbacks once it has run
    them, so the sentinel is freed once the request is done."""

    async def body(session, select):
        ev = asyncio.Event()

        def build():
            holder = Sentinel()
            req = session.execute(select, (10,))
            assert not req.done()
            holder.request = req
            req.add_done_callback(lambda r: (holder.seen.append(r), ev.set()))
            return weakref.ref(holder)

        ref = build()
        await asyncio.wait_for(ev.wait(), 10)
        return ref

    ref = _run_aio(keyspace, body)
    assert _freed(ref), "a reference cycle through an AioRequest's done-callbacks was not collected"


def test_aio_request_still_pending_when_its_loop_closes(cassandra, gc_session):
    """request -> done-callbacks -> closure -> sentinel -> request, still pending when
    asyncio.run closes the loop (the server is paused meanwhile, so it is). It can no
    longer be settled once its answer comes: the request, its callbacks, the sentinel and
    the loop must all be freed then."""
    from turbocql.aio import Session as AioSession

    select = gc_session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)

    async def main():
        session = AioSession(gc_session)
        holder = Sentinel()
        req = session.execute(select, (14,))
        holder.request = req
        req.add_done_callback(lambda r: holder.seen.append(r))
        return weakref.ref(holder), weakref.ref(asyncio.get_running_loop()), _anchor(req)

    with paused(cassandra):
        ref, loop_ref, box = asyncio.run(asyncio.wait_for(main(), 60))
        assert not box[0].done(), "the request must still be pending when its loop closes"
        gc.collect()
        assert ref() is not None
        box.clear()
    assert _freed(ref), "an AioRequest left pending on a closed loop (with its callbacks) was not freed"
    assert _freed(loop_ref), "the closed loop of a request left pending was not freed"


# --- (d) execute_concurrent(..., results_generator=True), partly consumed ---------------------------


def test_concurrent_results_generator_with_a_parameters_generator(session, stmts):
    """iterator -> its parameters generator -> the generator's frame -> sentinel ->
    iterator (and a result the sentinel keeps), partly consumed."""

    def params(owner):
        for i in range(2000):
            yield (i % 20, "v%d" % (i % 20))

    def build():
        holder = Sentinel()
        it = execute_concurrent_with_args(session, stmts[0], params(holder), concurrency=10, results_generator=True)
        holder.iterator = it
        holder.first = [next(it) for _ in range(5)]
        assert all(r.success for r in holder.first)
        return weakref.ref(holder), _anchor(it)

    ref, box = build()
    _check(ref, box)


class _Params(list):
    """A list of parameters that can carry attributes."""


def test_concurrent_results_generator_with_a_parameters_list(session, stmts):
    """iterator -> list iterator -> the parameters list -> sentinel -> iterator."""

    def build():
        holder = Sentinel()
        params = _Params((i % 20,) for i in range(2000))
        params.owner = holder
        it = execute_concurrent_with_args(session, stmts[1], params, concurrency=10, results_generator=True)
        holder.iterator = it
        assert next(it).result_or_exc.one().k == 0
        return weakref.ref(holder), _anchor(it)

    ref, box = build()
    _check(ref, box)


def test_execute_concurrent_pairs_results_generator(session, stmts):
    """execute_concurrent with (statement, parameters) pairs from a generator whose frame
    holds the sentinel, which holds the iterator; partly consumed."""

    def pairs(owner):
        for i in range(2000):
            yield (stmts[1], (i % 20,))

    def build():
        holder = Sentinel()
        it = execute_concurrent(session, pairs(holder), concurrency=10, results_generator=True)
        holder.iterator = it
        holder.first = next(it)
        assert holder.first.success
        return weakref.ref(holder), _anchor(it)

    ref, box = build()
    _check(ref, box)


# --- (e) pipelines whose error_handler references the pipeline ---------------------------------------


def test_write_pipeline_error_handler(session, stmts):
    """pipeline -> error_handler (bound method) -> sentinel -> pipeline, after a failure
    went to the handler (the exception, and its traceback, are kept too)."""

    def build():
        holder = Sentinel()
        p = WritePipeline(session, max_in_flight_requests=4, error_handler=holder.on_error)
        holder.pipeline = p
        for i in range(20):
            p.execute(stmts[0], (i, "v%d" % i))
        p.execute("INSERT INTO gc_no_such_table (k) VALUES (%s)", (1,))
        p.confirm()
        assert len(holder.seen) == 1 and isinstance(holder.seen[0], InvalidRequest)
        return weakref.ref(holder), _anchor(p)

    ref, box = build()
    _check(ref, box)


def test_write_pipeline_dropped_with_writes_queued(session, stmts):
    """The same cycle dropped with writes still queued or in flight (never confirmed)."""

    def build():
        holder = Sentinel()
        p = WritePipeline(session, max_in_flight_requests=2, error_handler=holder.on_error)
        holder.pipeline = p
        for i in range(200):
            p.execute(stmts[0], (i % 20, "v%d" % (i % 20)))
        return weakref.ref(holder), _anchor(p)

    ref, box = build()
    _check(ref, box)


def test_read_pipeline_error_handler_and_results_partly_consumed(session, stmts):
    """pipeline -> error_handler -> sentinel -> the pipeline's partly consumed results()
    generator -> pipeline, with results still unconsumed in the engine."""

    def build():
        holder = Sentinel()
        p = ReadPipeline(
            session, max_in_flight_requests=4, max_unconsumed_read_responses=8, error_handler=holder.on_error
        )
        holder.pipeline = p
        p.execute("SELECT * FROM gc_no_such_table")
        for i in range(50):
            p.execute(stmts[1], (i % 20,))
        holder.results = p.results()
        first = next(holder.results)
        assert isinstance(holder.seen[0], InvalidRequest) and first.one().k == 0
        return weakref.ref(holder), _anchor(p)

    ref, box = build()
    _check(ref, box)


# --- (f) sessions and prepared statements -------------------------------------------------------------


def test_prepared_statement_in_a_cycle(session):
    """A prepared statement in a cycle with a sentinel that is also the row factory of
    the session that ran it: what the engine keeps on the statement (``_engine_opts``:
    its classification, or in some engines its resolved options with the row factory)
    must not keep the cycle alive. Run as a prepared and as a bound statement."""

    def build():
        holder = Sentinel()
        ps = session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)
        ps.owner = holder
        holder.statement = ps
        session.row_factory = holder.make_rows
        try:
            assert session.execute(ps, (11,)).one() == (11, "v11")
            assert session.execute(ps.bind((11,))).one() == (11, "v11")
            assert session.execute_async(ps, (11,)).result().one() == (11, "v11")
        finally:
            _restore_row_factory(session)
        assert ps.__dict__.get("_engine_opts") is not None, "the statement keeps what the engine made of it"
        return weakref.ref(holder), _anchor(ps)

    ref, box = build()
    _check(ref, box)


def test_session_and_its_engine_objects(keyspace):
    """A session is in a cycle with its engine objects (session -> RequestBuilder ->
    session; SyncExecute and AsyncExecute -> RequestBuilder; the builder's snapshot of the session's
    defaults holds the row factory): with the row factory a bound method of a sentinel
    the session references, a prepared statement, a future and a result set around, all
    of it is freed after shutdown."""

    def build():
        cluster = Cluster([HOST], port=PORT)
        s = cluster.connect(keyspace)
        holder = Sentinel()
        s.row_factory = holder.make_rows
        holder.session = s
        ps = s.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)
        holder.statement = ps
        holder.result = s.execute(ps, (12,))
        assert holder.result.one() == (12, "v12")
        holder.future = s.execute_async(ps, (12,))
        holder.future.result()
        cluster.shutdown()
        assert not cluster.sessions
        return weakref.ref(holder), weakref.ref(cluster), _anchor(s)

    ref, cref, box = build()
    _check(ref, box)
    assert _freed(cref)


def test_aio_session_and_its_engine_objects(keyspace):
    """The asyncio session (AioExecute -> RequestBuilder -> session) in a cycle with a
    sentinel, after requests and shutdown."""
    from turbocql.aio import Cluster as AioCluster

    async def main():
        cluster = AioCluster([HOST], port=PORT)
        s = await cluster.connect(keyspace)
        holder = Sentinel()
        s.owner = holder
        holder.session = s
        ps = await s.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)
        holder.statement = ps
        rs = await s.execute(ps, (13,))
        assert rs.one().v == "v13"
        await cluster.shutdown()
        return weakref.ref(holder), weakref.ref(s.sync_session), _anchor(s)

    ref, sref, box = asyncio.run(asyncio.wait_for(main(), 60))
    _check(ref, box)
    assert _freed(sref)


def test_load_balancing_host_filter_predicate_cycle():
    """LoadBalancing (a HostFilterPolicy's engine form) holds its predicate."""
    sentinel = Sentinel()
    ref = weakref.ref(sentinel)

    class Predicate:
        def __call__(self, host):
            return True

    predicate = Predicate()
    predicate.sentinel = sentinel
    engine = _engine.LoadBalancing.host_filter(_engine.LoadBalancing.round_robin(), predicate)
    predicate.engine = engine  # predicate -> engine -> predicate
    box = _anchor(engine)
    del sentinel, predicate, engine
    _check(ref, box)


def test_retry_python_policy_cycle():
    """Retry (a RetryPolicy subclass's engine form) holds the policy."""
    from turbocql.policies import RetryPolicy

    class Mine(RetryPolicy):
        def on_unavailable(self, *args, **kwargs):
            return self.RETHROW, None

    sentinel = Sentinel()
    ref = weakref.ref(sentinel)
    policy = Mine()
    policy.sentinel = sentinel
    engine = policy._engine_policy()
    policy.engine = engine
    box = _anchor(engine)
    del sentinel, policy, engine
    _check(ref, box)


def test_engine_profile_row_factory_cycle():
    """EngineProfile (an ExecutionProfile's engine form) holds the profile's row factory."""
    from turbocql.cluster import ExecutionProfile

    sentinel = Sentinel()
    ref = weakref.ref(sentinel)

    class Factory:
        def __call__(self, colnames, rows):
            return rows

    factory = Factory()
    factory.sentinel = sentinel
    engine = ExecutionProfile(row_factory=factory)._engine_profile()
    factory.engine = engine
    box = _anchor(engine)
    del sentinel, factory, engine
    _check(ref, box)


def test_client_clock_python_generator_cycle():
    """ClientClock (a user's timestamp_generator's engine form) holds the generator."""

    class Generator:
        def __call__(self):
            return 1

    sentinel = Sentinel()
    ref = weakref.ref(sentinel)
    generator = Generator()
    generator.sentinel = sentinel
    engine = _engine.ClientClock.python(generator)
    generator.engine = engine  # generator -> engine -> generator
    box = _anchor(engine)
    del sentinel, generator, engine
    _check(ref, box)


# --- (e) objects left out of the collector --------------------------------------------------------


def test_request_objects_are_untracked_and_hold_no_python_object(session, stmts, keyspace):
    """An engine ``Request`` (one per request, alive as long as its future or result set)
    is left out of the cycle collector's lists (``Request::into_untracked``): it must reach
    no Python object but its type, else a cycle through it could never be collected. Every
    path that makes one: sync and async execute, asyncio, a paged result of
    execute_concurrent and of a read pipeline."""
    from turbocql.aio import Cluster as AioCluster

    def check(request):
        assert type(request) is _engine.Request
        assert not gc.is_tracked(request)
        assert all(r is type(request) for r in gc.get_referents(request)), gc.get_referents(request)

    check(session.execute(stmts[1], (1,))._request)
    future = session.execute_async(stmts[1], (2,))
    check(future._request)
    check(future.result()._request)
    paged = session.prepare("SELECT k, v FROM %s" % TABLE)
    paged.fetch_size = 5
    ((ok, rs),) = execute_concurrent(session, [(paged, ())])
    assert ok and rs.has_more_pages
    check(rs._request)
    rp = ReadPipeline(session)
    rp.execute(paged)
    (rs,) = list(rp.results())
    assert rs.has_more_pages
    check(rs._request)

    async def main():
        cluster = AioCluster([HOST], port=PORT)
        try:
            s = await cluster.connect(keyspace)
            return (await s.execute("SELECT k, v FROM %s WHERE k = 3" % TABLE))._request
        finally:
            await cluster.shutdown()

    check(asyncio.run(asyncio.wait_for(main(), 60)))
