"""Request-pattern benchmark client: one (driver, pattern, workload) run per process.

Reproduces the request patterns of seed documents 000 (the classic driver's "Performance
Notes": batched / queued / unthrottled futures, callback chains, ``execute_concurrent``) and
001 (the same patterns in read mode, plus the ``WritePipeline`` / ``ReadPipeline`` objects),
and adds turbocql's native asyncio API. The same code runs on the classic driver
(``--driver cassandra``) and on turbocql (``--driver turbocql``); only the imported modules
(``{driver}.cluster``, ``{driver}.query``, ``{driver}.concurrent``) differ.

Patterns (``--pattern``), each with ``--concurrency`` (default 120) requests in flight:

* ``batched_futures``   ``execute_async`` 120 requests, ``.result()`` all of them, repeat
  (``future_batches.py``).
* ``queued_futures``    a FIFO of up to 120 futures; when it is full, ``.result()`` the oldest
  before submitting the next (``future_full_pipeline.py``).
* ``unthrottled_futures``  ``execute_async`` every request, then ``.result()`` every future in
  submission order (``future_full_throttle.py``); memory grows with ``--ops``.
* ``callback_chain``    ``--chains`` chains (120, 250, 500 in document 000); each request's
  ``add_callbacks(callback, errback)`` submits the next one until ``--ops`` are done; the main
  thread waits on a ``threading.Event`` (``callback_full_pipeline.py``).
* ``execute_concurrent``  ``execute_concurrent_with_args(session, prepared, params,
  concurrency=120)`` with all params in one list built before timing.
* ``execute_concurrent_gen``  the same with a generator of params and
  ``results_generator=True``, consumed fully.
* ``write_pipeline`` / ``read_pipeline`` (document 001's objects, turbocql only):
  ``WritePipeline(session, max_in_flight_requests=--in-flight,
  max_unsent_write_requests=--buffer)``, ``execute`` each, ``confirm()``;
  ``ReadPipeline(session, max_in_flight_requests=--in-flight,
  max_unconsumed_read_responses=--buffer)``, ``execute`` each and consume ``results()`` in
  submission order (``--read-consume``).
* ``asyncio`` (turbocql and acsylla): ``turbocql.aio.Cluster``; 120 worker coroutines each
  awaiting ``session.execute(prepared, params)`` until the shared count is done; ``--uvloop``
  runs it on uvloop. With ``--driver acsylla`` the same workers run on acsylla
  (``acsylla.create_cluster``, ``await cluster.create_session(keyspace=...)``, ``await
  session.create_prepared(...)``, ``prepared.bind()`` + ``bind_list(params)`` per request,
  reads decoded with ``result.first().as_tuple()``).

Workloads (same as ``sync_threads.py`` and ``rust_ref``): ``write`` = prepared ``INSERT INTO t
(thekey, col0, col1) VALUES (?, ?, ?)`` with distinct keys; ``read`` = prepared ``SELECT * FROM t
WHERE thekey = ?`` of one row by key over ``row0..row<rows-1>`` (written before timing if
missing). For reads every result's first row is taken (``ResultSet.one()``), as the Rust
reference decodes it, so a driver that decodes lazily pays for decoding too.

Transport: plain text by default; ``--tls-ca PATH`` connects over TLS, trusting the CA
certificate in PATH (``ssl.create_default_context(cafile=PATH)``, hostname checked, no client
certificate) and handing the context to ``Cluster(ssl_context=...)`` (turbocql, its asyncio
API, the classic driver, scylla-driver), or, on acsylla, ``create_cluster(ssl_enabled=True,
ssl_trusted_cert=<the PEM>)``. ``--protocol-version N`` pins the classic API's
``Cluster(protocol_version=N)`` (the ``tls`` scenario runs the classic driver on v4, the
protocol the ``scylla`` crate, hence turbocql, speaks).

Client CPU is ``getrusage(RUSAGE_SELF)`` (user + system, all threads) around the timed section
only; setup and ``--warmup`` requests (same pattern) are outside it. Latency is per request where
the pattern shows it: futures = submit → ``.result()`` returned, callbacks = submit → callback
ran, asyncio = around the ``await``; bulk patterns (``execute_concurrent*``, pipelines) report
none. Failed requests are counted in ``errors``. Prints one JSON line on stdout; exits 3 with a
message on stderr if the driver lacks the pattern's API.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import itertools
import json
import os
import sys
import threading
import time

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.sync_threads import (  # noqa: E402  (shared helpers of the sync client)
    CLIENT_NAMES,
    add_client_name,
    classic_driver_state,
    cluster_options,
    driver_version,
    peak_rss_mb,
    percentile_us,
    proc_cpu_us,
    read_key,
    self_cpu_us,
)

PATTERNS = [
    "batched_futures",
    "queued_futures",
    "unthrottled_futures",
    "callback_chain",
    "execute_concurrent",
    "execute_concurrent_gen",
    "write_pipeline",
    "read_pipeline",
    "asyncio",
]
EXIT_NO_API = 3
STALL_SECONDS = 60.0  # no completion for this long = the run is stuck


class MissingAPI(Exception):
    """The driver does not offer what the pattern needs."""


class Stalled(Exception):
    """No request completed for STALL_SECONDS."""


FIRST_ERROR: list[str] = []


def note(exc: BaseException) -> None:
    """Remember the first request error (reported if a whole warm-up fails)."""
    if not FIRST_ERROR:
        FIRST_ERROR.append(f"{type(exc).__name__}: {exc}"[:300])


def need(module, name: str, what: str):
    try:
        return getattr(module, name)
    except AttributeError:
        raise MissingAPI(f"{module.__name__} has no {name} ({what})") from None


def take_row(result):
    """Touch the first row of a read result (decoding it if the driver is lazy)."""
    one = getattr(result, "one", None)
    if one is not None:
        return one()
    return next(iter(result), None)


# ---------------------------------------------------------------------------------------------
# Patterns on the classic (thread + future) API. Each returns (latencies_ns, errors).
# ``finish(result)`` is called on every successful result (takes the row for reads).


def run_batched_futures(session, stmt, params_list, opts, finish):
    execute_async = session.execute_async
    clock = time.perf_counter_ns
    batch = opts.concurrency
    lat: list[int] = []
    errors = 0
    pending: list = []  # (future, t0)
    append = pending.append
    for params in params_list:
        if len(pending) == batch:
            for fut, t0 in pending:
                try:
                    finish(fut.result())
                except Exception as e:
                    note(e)
                    errors += 1
                lat.append(clock() - t0)
            pending.clear()
        t0 = clock()
        try:
            append((execute_async(stmt, params), t0))
        except Exception as e:
            note(e)
            errors += 1
    for fut, t0 in pending:
        try:
            finish(fut.result())
        except Exception as e:
            note(e)
            errors += 1
        lat.append(clock() - t0)
    return lat, errors


def run_queued_futures(session, stmt, params_list, opts, finish):
    execute_async = session.execute_async
    clock = time.perf_counter_ns
    depth = opts.concurrency
    lat: list[int] = []
    errors = 0
    queue: collections.deque = collections.deque()
    for params in params_list:
        if len(queue) >= depth:
            fut, t0 = queue.popleft()
            try:
                finish(fut.result())
            except Exception as e:
                note(e)
                errors += 1
            lat.append(clock() - t0)
        t0 = clock()
        try:
            queue.append((execute_async(stmt, params), t0))
        except Exception as e:
            note(e)
            errors += 1
    while queue:
        fut, t0 = queue.popleft()
        try:
            finish(fut.result())
        except Exception as e:
            note(e)
            errors += 1
        lat.append(clock() - t0)
    return lat, errors


def run_unthrottled_futures(session, stmt, params_list, opts, finish):
    execute_async = session.execute_async
    clock = time.perf_counter_ns
    lat: list[int] = []
    errors = 0
    futures = []
    append = futures.append
    for params in params_list:
        t0 = clock()
        try:
            append((execute_async(stmt, params), t0))
        except Exception as e:
            note(e)
            errors += 1
    for fut, t0 in futures:
        try:
            finish(fut.result())
        except Exception as e:
            note(e)
            errors += 1
        lat.append(clock() - t0)
    return lat, errors


def run_callback_chain(session, stmt, params_list, opts, finish):
    """``--chains`` callback chains; the callback of each request submits the next one."""
    execute_async = session.execute_async
    clock = time.perf_counter_ns
    total = len(params_list)
    started = itertools.count()
    finished = itertools.count()
    done = threading.Event()
    lat: list[int] = []
    record = lat.append
    errors = [0]
    progress = [0]

    def submit_next():
        while True:  # a loop, not recursion, when submissions fail synchronously
            i = next(started)
            if i >= total:
                return
            t0 = clock()
            try:
                fut = execute_async(stmt, params_list[i])
                fut.add_callbacks(on_result, on_error, callback_args=(t0,), errback_args=(t0,))
                return
            except Exception as e:
                note(e)
                errors[0] += 1
                complete()

    def complete():
        n = next(finished) + 1
        progress[0] = n
        if n >= total:
            done.set()

    def on_result(result, t0):
        try:
            record(clock() - t0)
            finish(result)
        except Exception as e:
            note(e)
            errors[0] += 1
        complete()
        submit_next()

    def on_error(exc, t0):
        note(exc)
        record(clock() - t0)
        errors[0] += 1
        complete()
        submit_next()

    for _ in range(min(opts.chains, total)):
        submit_next()
    last = -1
    while not done.wait(STALL_SECONDS):
        if progress[0] == last:
            raise Stalled(f"callback chains stalled at {last}/{total} completions")
        last = progress[0]
    return lat, errors[0]


def run_execute_concurrent(session, stmt, params_list, opts, finish, concurrent_mod):
    ecwa = need(concurrent_mod, "execute_concurrent_with_args", "execute_concurrent")
    errors = 0
    results = ecwa(session, stmt, params_list, concurrency=opts.concurrency, raise_on_first_error=False)
    for success, result in results:
        if success:
            try:
                finish(result)
            except Exception as e:
                note(e)
                errors += 1
        else:
            note(result)
            errors += 1
    return [], errors


def run_execute_concurrent_gen(session, stmt, params_list, opts, finish, concurrent_mod):
    ecwa = need(concurrent_mod, "execute_concurrent_with_args", "execute_concurrent")
    errors = 0
    count = 0
    gen = (p for p in params_list)
    for success, result in ecwa(
        session, stmt, gen, concurrency=opts.concurrency, raise_on_first_error=False, results_generator=True
    ):
        count += 1
        if success:
            try:
                finish(result)
            except Exception as e:
                note(e)
                errors += 1
        else:
            note(result)
            errors += 1
    return [], errors + (len(params_list) - count)


def _pipeline(cls, session, errors: list, **kwargs):
    """Build a pipeline with an ``error_handler`` that counts errors, if the class takes one."""

    def on_error(exc):
        note(exc)
        errors[0] += 1

    try:
        return cls(session, error_handler=on_error, **kwargs)
    except TypeError:
        return cls(session, **kwargs)


def run_write_pipeline(session, stmt, params_list, opts, finish, concurrent_mod):
    WritePipeline = need(concurrent_mod, "WritePipeline", "document 001's pipelines")
    errors = [0]
    try:
        with _pipeline(
            WritePipeline, session, errors, max_in_flight_requests=opts.in_flight, max_unsent_write_requests=opts.buffer
        ) as p:
            execute = p.execute
            for params in params_list:
                execute(stmt, params)
            p.confirm()
    except Exception as e:  # confirm() reporting failed writes
        note(e)
        print(f"write pipeline: {type(e).__name__}: {e}", file=sys.stderr)
        errors[0] = max(errors[0], 1)
    return [], errors[0]


def run_read_pipeline(session, stmt, params_list, opts, finish, concurrent_mod):
    """``--read-consume sliding`` (default): after the first ``--buffer`` executes, consume one
    result per execute, so at most ``--buffer`` results are unconsumed; ``end``: execute all,
    then consume ``results()``, as document 001's ``benchmarks/pipeline.py --read`` did (the
    pipeline itself stops sending while ``--buffer`` responses are unconsumed)."""
    ReadPipeline = need(concurrent_mod, "ReadPipeline", "document 001's pipelines")
    errors = [0]
    consumed = 0
    total = len(params_list)

    def take(result):
        nonlocal consumed
        consumed += 1
        try:
            finish(result)
        except Exception as e:
            note(e)
            errors[0] += 1

    p = _pipeline(
        ReadPipeline, session, errors, max_in_flight_requests=opts.in_flight, max_unconsumed_read_responses=opts.buffer
    )
    try:
        with p:
            execute = p.execute
            if opts.read_consume == "end":
                for params in params_list:
                    execute(stmt, params)
                for result in p.results():
                    take(result)
            else:
                it = None
                window = opts.buffer
                for i, params in enumerate(params_list):
                    execute(stmt, params)
                    if i + 1 > window:
                        if it is None:
                            it = iter(p.results())
                        try:
                            take(next(it))
                        except StopIteration:  # an iterator that ends when caught up
                            it = iter(p.results())
                            take(next(it))
                for result in it if it is not None else p.results():
                    take(result)
                if consumed < total:  # the last iterator stopped early: ask again
                    for result in p.results():
                        take(result)
    except Exception as e:  # the pipeline reporting a failed read (missing results counted)
        note(e)
        print(f"read pipeline: {type(e).__name__}: {e}", file=sys.stderr)
    if consumed != total:
        print(f"read pipeline: {consumed} results for {total} requests", file=sys.stderr)
    return [], errors[0] + abs(total - consumed)


SYNC_API_PATTERNS = {
    "batched_futures": run_batched_futures,
    "queued_futures": run_queued_futures,
    "unthrottled_futures": run_unthrottled_futures,
    "callback_chain": run_callback_chain,
}
CONCURRENT_PATTERNS = {
    "execute_concurrent": run_execute_concurrent,
    "execute_concurrent_gen": run_execute_concurrent_gen,
    "write_pipeline": run_write_pipeline,
    "read_pipeline": run_read_pipeline,
}


def connection_options(args, aio: bool = False) -> dict:
    """Extra ``Cluster(...)`` arguments of ``--tls-ca`` (``ssl_context``) and, on the classic
    (thread) API, ``--protocol-version``."""
    opts: dict = {}
    if args.tls_ca:
        import ssl

        opts["ssl_context"] = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.tls_ca)
    if args.protocol_version and not aio:
        opts["protocol_version"] = args.protocol_version
    return opts


def acsylla_tls_options(args) -> dict:
    """acsylla's TLS arguments for ``--tls-ca``: the CA as PEM text (its default verification:
    the peer's certificate)."""
    if not args.tls_ca:
        return {}
    with open(args.tls_ca) as f:
        return {"ssl_enabled": True, "ssl_trusted_cert": f.read()}


def params_factory(args, prefix: str):
    if args.workload == "read":
        return lambda tag, n: [(read_key(i * 7919 % args.rows),) for i in range(n)]
    return lambda tag, n: [(f"{prefix}{tag}{i}", "a", "b") for i in range(n)]


def measure(run, params, server_pid):
    """Run ``run(params)`` as the timed section; return the measurement dict."""
    srv0 = proc_cpu_us(server_pid)
    cpu0 = self_cpu_us()
    t0 = time.perf_counter()
    lat, errors = run(params)
    seconds = time.perf_counter() - t0
    cpu = self_cpu_us() - cpu0
    srv1 = proc_cpu_us(server_pid)
    return lat, errors, seconds, cpu, (None if srv0 is None or srv1 is None else srv1 - srv0)


def run_thread_api(args, prefix: str):
    """Every pattern but ``asyncio``: the classic API (Cluster, Session, futures)."""
    cluster_mod = importlib.import_module(f"{args.driver}.cluster")
    importlib.import_module(f"{args.driver}.query")  # same module set as an application
    try:
        concurrent_mod = importlib.import_module(f"{args.driver}.concurrent")
    except ImportError as e:
        concurrent_mod = None
        concurrent_err = str(e)

    if args.pattern in CONCURRENT_PATTERNS:
        if concurrent_mod is None:
            raise MissingAPI(concurrent_err)
        name = {"write_pipeline": "WritePipeline", "read_pipeline": "ReadPipeline"}.get(
            args.pattern, "execute_concurrent_with_args"
        )
        need(concurrent_mod, name, args.pattern)
        body = CONCURRENT_PATTERNS[args.pattern]

        def pattern(session, stmt, params, opts, finish):
            return body(session, stmt, params, opts, finish, concurrent_mod)
    else:
        pattern = SYNC_API_PATTERNS[args.pattern]
    if args.pattern in SYNC_API_PATTERNS:
        need(need(cluster_mod, "Session", "the session class"), "execute_async", "futures")
    if args.pattern == "callback_chain":
        ResponseFuture = need(cluster_mod, "ResponseFuture", "callbacks")
        need(ResponseFuture, "add_callbacks", "callbacks")

    cluster = cluster_mod.Cluster(
        [args.host], port=args.port, compression=False, **cluster_options(args.driver), **connection_options(args)
    )
    session = cluster.connect()
    try:
        ks = args.keyspace
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)")
        insert = session.prepare(f"INSERT INTO {ks}.t (thekey, col0, col1) VALUES (?, ?, ?)")
        select = session.prepare(f"SELECT * FROM {ks}.t WHERE thekey = ?")
        params_for = params_factory(args, prefix)
        opts = argparse.Namespace(**vars(args))
        nothing = lambda result: None  # noqa: E731

        if args.workload == "read":
            stmt, finish = select, take_row
            if session.execute(select, (read_key(args.rows - 1),)).one() is None:
                # Untimed setup: write the read keys (the runner normally did it already).
                rows = [(read_key(i), "a", "b") for i in range(args.rows)]
                _, errs = run_queued_futures(session, insert, rows, opts, nothing)
                if errs:
                    raise RuntimeError(f"populating {args.rows} rows: {errs} errors")
        else:
            stmt, finish = insert, nothing

        def run(params):
            return pattern(session, stmt, params, opts, finish)

        if args.warmup:
            _, werr = run(params_for("w", args.warmup))
            if werr >= args.warmup:
                raise RuntimeError(f"every warm-up request failed, first: {FIRST_ERROR[:1]}")
        return measure(run, params_for("", args.ops), args.server_pid)
    finally:
        cluster.shutdown()


def run_asyncio(args, prefix: str):
    """``asyncio``: ``turbocql.aio``; N worker coroutines awaiting ``session.execute``."""
    import asyncio

    try:
        aio = importlib.import_module(f"{args.driver}.aio")
    except ImportError as e:
        raise MissingAPI(str(e)) from None
    AioCluster = need(aio, "Cluster", "the asyncio API")
    loop_factory = _uvloop_factory(args)

    ks = args.keyspace
    params_for = params_factory(args, prefix)

    async def workers(session, stmt, params_list, finish):
        n = len(params_list)
        counter = itertools.count()
        lat: list[int] = []
        errors = [0]
        clock = time.perf_counter_ns

        async def worker():
            execute = session.execute
            record = lat.append
            while True:
                i = next(counter)
                if i >= n:
                    return
                t0 = clock()
                try:
                    finish(await execute(stmt, params_list[i]))
                except Exception as e:
                    note(e)
                    errors[0] += 1
                record(clock() - t0)

        await asyncio.gather(*(worker() for _ in range(min(args.concurrency, n))))
        return lat, errors[0]

    async def amain():
        async with AioCluster(
            [args.host],
            port=args.port,
            compression=False,
            **cluster_options("turbocql"),
            **connection_options(args, aio=True),
        ) as cluster:
            try:
                session = await cluster.connect(ks)
            except Exception:
                # Keyspace missing (the runner's warm-up normally created it).
                session = await cluster.connect()
                await session.execute(
                    f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}"
                )
                session = await cluster.connect(ks)
            await session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)")
            insert = await session.prepare("INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)")
            select = await session.prepare("SELECT * FROM t WHERE thekey = ?")
            nothing = lambda result: None  # noqa: E731
            if args.workload == "read":
                stmt, finish = select, take_row
                if take_row(await session.execute(select, (read_key(args.rows - 1),))) is None:
                    rows = [(read_key(i), "a", "b") for i in range(args.rows)]
                    _, errs = await workers(session, insert, rows, nothing)
                    if errs:
                        raise RuntimeError(f"populating {args.rows} rows: {errs} errors")
            else:
                stmt, finish = insert, nothing
            return await _timed_async(args, workers, session, stmt, finish, params_for)

    return _run_loop(amain, loop_factory)


async def _timed_async(args, workers, session, stmt, finish, params_for):
    """The asyncio clients' warm-up, then their timed section: ``(latencies, errors,
    seconds, client CPU µs, server CPU µs or None)``."""
    if args.warmup:
        _, werr = await workers(session, stmt, params_for("w", args.warmup), finish)
        if werr >= args.warmup:
            raise RuntimeError(f"every warm-up request failed, first: {FIRST_ERROR[:1]}")
    params = params_for("", args.ops)
    srv0 = proc_cpu_us(args.server_pid)
    cpu0 = self_cpu_us()
    t0 = time.perf_counter()
    lat, errors = await workers(session, stmt, params, finish)
    seconds = time.perf_counter() - t0
    cpu = self_cpu_us() - cpu0
    srv1 = proc_cpu_us(args.server_pid)
    return lat, errors, seconds, cpu, (None if srv0 is None or srv1 is None else srv1 - srv0)


def _run_loop(amain, loop_factory):
    import asyncio

    if loop_factory is None:
        return asyncio.run(amain())
    loop = loop_factory()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(amain())
    finally:
        loop.close()


def _uvloop_factory(args):
    if not args.uvloop:
        return None
    try:
        import uvloop
    except ImportError:
        raise MissingAPI("uvloop is not installed (pip install uvloop)") from None
    return uvloop.new_event_loop


def acsylla_take_row(result):
    """The first row of an acsylla result, decoded into a tuple (acsylla decodes a column only
    when asked, so this makes it pay for the row as the other clients do)."""
    row = result.first()
    return None if row is None else row.as_tuple()


def run_acsylla(args, prefix: str):
    """``asyncio`` on acsylla (asyncio over the C++ driver): the same 120 worker coroutines,
    each ``statement = prepared.bind(); statement.bind_list(params); await
    session.execute(statement)``. acsylla has only this API, so only this pattern."""
    import asyncio

    if args.pattern != "asyncio":
        raise MissingAPI("acsylla has only an asyncio API (pattern asyncio)")
    try:
        acsylla = importlib.import_module("acsylla")
    except ImportError as e:
        raise MissingAPI(str(e)) from None
    loop_factory = _uvloop_factory(args)
    ks = args.keyspace
    tuples_for = params_factory(args, prefix)

    def params_for(tag: str, n: int):
        # bind_list takes a list, not a tuple: built before timing, as the others' tuples are.
        return [list(p) for p in tuples_for(tag, n)]

    async def workers(session, prepared, params_list, finish):
        n = len(params_list)
        counter = itertools.count()
        lat: list[int] = []
        errors = [0]
        clock = time.perf_counter_ns
        bind = prepared.bind

        async def worker():
            execute = session.execute
            record = lat.append
            while True:
                i = next(counter)
                if i >= n:
                    return
                t0 = clock()
                try:
                    statement = bind()
                    statement.bind_list(params_list[i])
                    finish(await execute(statement))
                except Exception as e:
                    note(e)
                    errors[0] += 1
                record(clock() - t0)

        await asyncio.gather(*(worker() for _ in range(min(args.concurrency, n))))
        return lat, errors[0]

    async def amain():
        cluster = acsylla.create_cluster([args.host], port=args.port, **acsylla_tls_options(args))
        setup = await cluster.create_session()
        try:
            for cql in (
                f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)",
            ):
                await setup.execute(acsylla.create_statement(cql))
        finally:
            await setup.close()
        session = await cluster.create_session(keyspace=ks)
        try:
            insert = await session.create_prepared("INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)")
            select = await session.create_prepared("SELECT * FROM t WHERE thekey = ?")
            nothing = lambda result: None  # noqa: E731
            if args.workload == "read":
                stmt, finish = select, acsylla_take_row
                probe = select.bind()
                probe.bind_list([read_key(args.rows - 1)])
                if acsylla_take_row(await session.execute(probe)) is None:
                    rows = [[read_key(i), "a", "b"] for i in range(args.rows)]
                    _, errs = await workers(session, insert, rows, nothing)
                    if errs:
                        raise RuntimeError(f"populating {args.rows} rows: {errs} errors")
            else:
                stmt, finish = insert, nothing
            return await _timed_async(args, workers, session, stmt, finish, params_for)
        finally:
            await session.close()

    return _run_loop(amain, loop_factory)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted([*CLIENT_NAMES, "acsylla"]), default="cassandra")
    ap.add_argument("--pattern", choices=PATTERNS, required=True)
    ap.add_argument("--workload", choices=["write", "read"], default="write")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=120,
        help="requests in flight: futures batch/queue size, execute_concurrent concurrency, asyncio workers",
    )
    ap.add_argument("--chains", type=int, default=120, help="callback_chain: number of chains")
    ap.add_argument("--in-flight", type=int, default=100, help="pipelines: max_in_flight_requests")
    ap.add_argument(
        "--buffer",
        type=int,
        default=None,
        help="pipelines: max_unsent_write_requests (default 40000) or max_unconsumed_read_responses (default 400)",
    )
    ap.add_argument(
        "--read-consume",
        choices=["sliding", "end"],
        default="sliding",
        help="read_pipeline: consume while executing (sliding) or after (end)",
    )
    ap.add_argument("--uvloop", action="store_true", help="asyncio: run on uvloop")
    ap.add_argument("--warmup", type=int, default=2000, help="untimed requests (same pattern) before timing")
    ap.add_argument("--rows", type=int, default=10000, help="read keys row0..row<rows-1>")
    ap.add_argument("--key-prefix", default=None, help="write key prefix (default: per process)")
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    ap.add_argument(
        "--tls-ca", metavar="PATH", default=None, help="connect over TLS, trusting the CA certificate in PATH (PEM)"
    )
    ap.add_argument(
        "--protocol-version",
        type=int,
        default=None,
        help="classic API: Cluster(protocol_version=N) (default: negotiated)",
    )
    add_client_name(ap)
    args = ap.parse_args(argv)
    if args.pattern == "write_pipeline" and args.workload != "write":
        ap.error("write_pipeline is a write pattern (--workload write)")
    if args.pattern == "read_pipeline" and args.workload != "read":
        ap.error("read_pipeline is a read pattern (--workload read)")
    if args.buffer is None:
        args.buffer = 40000 if args.pattern == "write_pipeline" else 400
    if min(args.ops, args.concurrency, args.chains, args.in_flight, args.buffer) <= 0:
        ap.error("--ops, --concurrency, --chains, --in-flight and --buffer must be > 0")
    client = args.client_name or CLIENT_NAMES.get(args.driver, args.driver)
    prefix = args.key_prefix or f"{client}-{args.pattern}-{os.getpid()}-"

    try:
        if args.driver == "acsylla":
            lat, errors, seconds, cpu, srv = run_acsylla(args, prefix)
        elif args.pattern == "asyncio":
            lat, errors, seconds, cpu, srv = run_asyncio(args, prefix)
        else:
            lat, errors, seconds, cpu, srv = run_thread_api(args, prefix)
    except MissingAPI as e:
        print(f"{client} lacks the API for {args.pattern}: {e}", file=sys.stderr)
        return EXIT_NO_API
    except Stalled as e:
        print(f"stalled: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # setup failures: one clear line for the runner's table
        import traceback

        traceback.print_exc()
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1

    lat.sort()
    out = {
        "client": client,
        "pattern": args.pattern,
        "workload": args.workload,
        "ops": args.ops,
    }
    if args.pattern == "callback_chain":
        out["chains"] = args.chains
    elif args.pattern in ("write_pipeline", "read_pipeline"):
        out.update(in_flight=args.in_flight, buffer=args.buffer)
        if args.pattern == "read_pipeline":
            out["read_consume"] = args.read_consume
    elif args.pattern != "unthrottled_futures":
        out["concurrency"] = args.concurrency
    if args.pattern == "asyncio":
        out["loop"] = "uvloop" if args.uvloop else "asyncio"
    out["tls"] = bool(args.tls_ca)
    out.update(
        seconds=round(seconds, 4),
        ops_per_s=round(args.ops / seconds, 1),
        cpu_us_per_op=round(cpu / args.ops, 2),
    )
    if srv is not None:
        out["server_cpu_us_per_op"] = round(srv / args.ops, 2)
    has_lat = bool(lat)
    out.update(
        p50_us=round(percentile_us(lat, 50), 1) if has_lat else None,
        p95_us=round(percentile_us(lat, 95), 1) if has_lat else None,
        p99_us=round(percentile_us(lat, 99), 1) if has_lat else None,
        max_rss_mb=peak_rss_mb(),
        errors=errors,
    )
    out["driver_version"] = driver_version(args.driver)
    out["classic_driver"] = classic_driver_state(args.driver)
    out["python_version"] = sys.version.split()[0]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
