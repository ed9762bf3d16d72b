"""No memory growth over many requests, on every way of running them.

Each test runs one path (sync ``execute``, ``execute_async`` + ``result()``,
``execute_async`` with callbacks, ``execute_concurrent_with_args`` from a list and from
a generator with ``results_generator=True``, ``WritePipeline``, ``ReadPipeline``,
asyncio ``await session.execute``) with prepared INSERT and SELECT statements on a small
table of its own (100 keys, so the server's work stays the same throughout):

1. warm-up: ``WARMUP`` requests of exactly the shape measured next, so that caches
   (named-tuple classes, what the engine keeps on statements and sessions, the
   dispatcher thread, the asyncio loop's completion queue, tokio's and glibc's
   per-thread arenas, CPython's free lists and pools) are filled and the allocators
   have reached the window's peak;
2. baseline after ``gc.collect()`` and ``malloc_trim(0)``: resident set size (RSS,
   ``/proc/self/statm``); then ``tracemalloc.start()``;
3. ``REQUESTS`` requests, every result consumed as an application would (``one()`` of
   each SELECT);
4. ``gc.collect()``, traced memory still allocated (``tracemalloc.get_traced_memory()``),
   ``tracemalloc.stop()``, ``malloc_trim(0)``, RSS again.

Bounds, for 100,000 requests:

* ``TRACED_LIMIT`` (1 MiB) of Python memory allocated during the window and still alive
  at its end: the smallest Python object is 16-56 bytes, so a single object leaked per
  request (100,000 objects, several MB) fails it, as does anything larger; a healthy run
  keeps under 1 KiB here (a cache entry, a dict resized once). Checked: keeping one row
  per request leaves 12.7 MB traced.
* ``RSS_LIMIT`` (20 MiB): memory the engine allocates in Rust is invisible to
  tracemalloc; RSS sees it. A leak of 200 bytes per request (a fraction of one request's
  state, which is several KB) crosses 20 MiB; what is left is the allocators' noise
  (glibc keeps freed memory of each thread's arena; ``malloc_trim`` returns what it can),
  under 1 MiB on every path here. Checked: leaking 256 bytes of ``malloc`` per request
  grows RSS by 26 MiB. RSS is read after ``tracemalloc.stop()``, which frees
  tracemalloc's own tables.

tracemalloc hooks every Python allocation and slows the Python side of each request
(1.3-2x here), so it only runs during the measured window: the warm-up runs at
full speed, and objects allocated before the window are not traced at all (they cannot
count as growth; what the window frees of them is not subtracted either). Pipelines and
``execute_concurrent`` are given small queues (1,000 unsent writes, chunks of 1,000
parameters) so that their transient peak is reached during the warm-up and is not taken
for growth. Sync ``execute`` runs from 8 threads: one thread alone waits out 100,000
round trips (about a minute here). The whole module takes 40-50 s on the 2-core test
machine, which it shares with Cassandra.
"""

import asyncio
import ctypes
import gc
import os
import threading
import tracemalloc

import pytest

from tests.conftest import HOST, PORT
from turbocql.concurrent import ReadPipeline, WritePipeline, execute_concurrent_with_args

WARMUP = 5_000
REQUESTS = 100_000
TRACED_LIMIT = 1 << 20
RSS_LIMIT = 20 << 20
KEYS = 100
TABLE = "mem_growth"

pytestmark = pytest.mark.timeout(300)

try:
    _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):  # not glibc: RSS is read without trimming
    _malloc_trim = None


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _settle():
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _measure(run, label):
    """Warm-up, then the measured window (see the module doc); asserts the bounds."""
    run(WARMUP)
    _settle()
    rss_before = _rss()
    tracemalloc.start()
    try:
        run(REQUESTS)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    _settle()
    _check(label, traced, _rss() - rss_before)


def _check(label, traced, rss_growth):
    print(
        "\n%s: %d requests, traced memory still allocated %.1f KiB, RSS growth %.1f MiB"
        % (label, REQUESTS, traced / 1024, rss_growth / (1 << 20))
    )
    assert traced < TRACED_LIMIT, "%s: %d bytes of Python memory kept over %d requests" % (label, traced, REQUESTS)
    assert rss_growth < RSS_LIMIT, "%s: RSS grew by %d bytes over %d requests" % (label, rss_growth, REQUESTS)


@pytest.fixture(scope="module")
def mem_session(cluster, keyspace):
    s = cluster.connect(keyspace)
    s.execute("CREATE TABLE IF NOT EXISTS %s (k int PRIMARY KEY, v text)" % TABLE)
    yield s
    s.execute("DROP TABLE IF EXISTS %s" % TABLE)
    s.shutdown()


@pytest.fixture(scope="module")
def stmts(mem_session):
    ins = mem_session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % TABLE)
    sel = mem_session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)
    for k in range(KEYS):
        mem_session.execute(ins, (k, "value %d" % k))
    return ins, sel


def _params(n, start=0):
    """Alternating (statement index, values): inserts and selects, keys cycling."""
    for i in range(start, start + n):
        k = i % KEYS
        yield (i & 1, (k,) if i & 1 else (k, "value %d" % k))


@pytest.mark.long
def test_sync_execute(mem_session, stmts):
    """Sync ``execute`` from 8 threads, each waiting for its own request (as the
    benchmarks' sync rows do; one thread alone would wait out 100,000 round trips)."""
    session = mem_session
    ins, sel = stmts
    threads = 8

    def worker(w, n, errors):
        try:
            for i in range(w, n, threads):
                k = i % KEYS
                if i & 1:
                    assert session.execute(sel, (k,)).one().k == k
                else:
                    session.execute(ins, (k, "value %d" % k))
        except BaseException as exc:  # reported by run()
            errors.append(exc)

    def run(n):
        errors = []
        ts = [threading.Thread(target=worker, args=(w, n, errors)) for w in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors[:3]

    _measure(run, "sync execute")


def test_execute_async_result(mem_session, stmts):
    session = mem_session
    pair = stmts

    def run(n):
        batch = 500
        for start in range(0, n, batch):
            futures = [
                (i, session.execute_async(pair[which], v))
                for i, (which, v) in enumerate(_params(min(batch, n - start), start), start)
            ]
            for i, f in futures:
                rs = f.result()
                if i & 1:
                    assert rs.one().k == (i % KEYS)

    _measure(run, "execute_async + result()")


@pytest.mark.long
def test_execute_async_callbacks(mem_session, stmts):
    """Callback chains (each callback starts the chain's next request), 100 in flight."""
    session = mem_session
    pair = stmts
    chains = 100

    def run(n):
        done = threading.Event()
        lock = threading.Lock()
        state = {"started": 0, "finished": 0, "rows": 0, "errors": []}

        def start_next():
            with lock:
                i = state["started"]
                if i >= n:
                    return
                state["started"] = i + 1
            k = i % KEYS
            if i & 1:
                f = session.execute_async(pair[1], (k,))
            else:
                f = session.execute_async(pair[0], (k, "value %d" % k))
            f.add_callbacks(on_rows, on_error)

        def finished():
            with lock:
                state["finished"] += 1
                last = state["finished"] == n
            if last:
                done.set()
            else:
                start_next()

        def on_rows(rows):
            if rows:
                state["rows"] += len(rows)
            finished()

        def on_error(exc):
            state["errors"].append(exc)
            finished()

        for _ in range(min(chains, n)):
            start_next()
        assert done.wait(120), "callback chains did not finish"
        assert not state["errors"], state["errors"][:3]
        assert state["rows"] == n // 2

    _measure(run, "execute_async with callbacks")


@pytest.mark.long
def test_execute_concurrent_with_args_list(mem_session, stmts):
    """Lists of 1,000 parameters, results as lists; inserts and selects alternate by chunk."""
    session = mem_session
    ins, sel = stmts
    chunk = 1000

    def run(n):
        for c, start in enumerate(range(0, n, chunk)):
            size = min(chunk, n - start)
            if c & 1:
                results = execute_concurrent_with_args(
                    session, sel, [((start + i) % KEYS,) for i in range(size)], concurrency=100
                )
                assert all(ok and rs.one() is not None for ok, rs in results)
            else:
                params = [((start + i) % KEYS, "value %d" % ((start + i) % KEYS)) for i in range(size)]
                results = execute_concurrent_with_args(session, ins, params, concurrency=100)
                assert all(ok for ok, _ in results)

    _measure(run, "execute_concurrent_with_args (list)")


@pytest.mark.long
def test_execute_concurrent_with_args_generator_results_generator(mem_session, stmts):
    """Parameters from generators, results streamed (``results_generator=True``): each
    run is two calls, half the requests INSERTs, then half SELECTs."""
    session = mem_session
    ins, sel = stmts

    def run(n):
        half = n // 2
        writes = execute_concurrent_with_args(
            session,
            ins,
            ((i % KEYS, "value %d" % (i % KEYS)) for i in range(half)),
            concurrency=100,
            results_generator=True,
        )
        count = 0
        for ok, _ in writes:
            assert ok
            count += 1
        reads = execute_concurrent_with_args(
            session, sel, ((i % KEYS,) for i in range(n - half)), concurrency=100, results_generator=True
        )
        for i, (ok, rs) in enumerate(reads):
            assert ok and rs.one().k == i % KEYS
            count += 1
        assert count == n

    _measure(run, "execute_concurrent_with_args (generator, results_generator)")


@pytest.mark.long
def test_write_pipeline(mem_session, stmts):
    session = mem_session
    ins = stmts[0]

    def run(n):
        with WritePipeline(session, max_in_flight_requests=100, max_unsent_write_requests=1000) as pipeline:
            for i in range(n):
                k = i % KEYS
                pipeline.execute(ins, (k, "value %d" % k))

    _measure(run, "WritePipeline")


@pytest.mark.long
def test_read_pipeline(mem_session, stmts):
    """Reads queued by chunks of 1,000, each chunk's results consumed in order."""
    session = mem_session
    sel = stmts[1]
    chunk = 1000

    def run(n):
        pipeline = ReadPipeline(session, max_in_flight_requests=100, max_unconsumed_read_responses=400)
        for start in range(0, n, chunk):
            size = min(chunk, n - start)
            for i in range(start, start + size):
                pipeline.execute(sel, (i % KEYS,))
            got = 0
            for i, rs in enumerate(pipeline.results(), start):
                assert rs.one().k == i % KEYS
                got += 1
            assert got == size

    _measure(run, "ReadPipeline")


@pytest.mark.long
def test_asyncio_execute(cassandra, keyspace, mem_session, stmts):
    """100 coroutines each awaiting one request at a time, on one loop (warm-up and
    window on the same loop and asyncio session)."""
    from turbocql.aio import Cluster

    workers = 100

    async def main():
        async with Cluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            ins = await session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % TABLE)
            sel = await session.prepare("SELECT k, v FROM %s WHERE k = ?" % TABLE)

            async def worker(w, n):
                for i in range(w, n, workers):
                    k = i % KEYS
                    if i & 1:
                        rs = await session.execute(sel, (k,))
                        assert rs.one().k == k
                    else:
                        await session.execute(ins, (k, "value %d" % k))

            async def run(n):
                await asyncio.gather(*(worker(w, n) for w in range(workers)))

            await run(WARMUP)
            _settle()
            rss_before = _rss()
            tracemalloc.start()
            try:
                await run(REQUESTS)
                for _ in range(3):  # let the loop run what gather's finished tasks scheduled
                    await asyncio.sleep(0)
                gc.collect()
                traced = tracemalloc.get_traced_memory()[0]
            finally:
                tracemalloc.stop()
            _settle()
            return traced, _rss() - rss_before

    traced, rss_growth = asyncio.run(asyncio.wait_for(main(), 280))
    _check("asyncio await session.execute", traced, rss_growth)
