"""The request-pattern client's patterns on the classic (thread + future) API
(``patterns.py``): batched, queued and unthrottled futures, callback chains,
``execute_concurrent*`` and the pipelines, and :func:`run_thread_api`, which runs one of them
(set-up, warm-up, timed section).
"""

from __future__ import annotations

import argparse
import collections
import importlib
import itertools
import sys
import threading
import time

from benchmarks.clients.patterns_base import (
    FIRST_ERROR,
    STALL_SECONDS,
    MissingAPI,
    Stalled,
    connection_options,
    measure,
    need,
    note,
    params_factory,
    take_row,
)
from benchmarks.clients.sync_threads import (
    cluster_options,
    read_key,
)

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
