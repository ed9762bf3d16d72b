"""Many requests at once, under the classic driver's names (``cassandra.concurrent``).

:func:`execute_concurrent` and :func:`execute_concurrent_with_args` run inside the
engine: the parameters are converted a chunk at a time under one GIL acquisition, then
the engine keeps ``concurrency`` requests in flight with the GIL released, and hands the
results back in input order. Inputs are read lazily, so generators of millions of items
run in bounded memory; with ``results_generator=True`` results are streamed too.

When ``session.execute_async`` is not turbocql's own (an APM agent wrapped it, on the
session or its class, or a subclass overrides it), the statements go through it one by
one instead, as the classic driver's do, so that the agent sees each of them.
"""

import collections
import concurrent.futures
import functools
import threading
from collections import namedtuple
from collections.abc import Mapping
from itertools import repeat  # noqa: F401 - kept for callers that import it from here

from turbocql._session.session import _execute_async_replaced
from turbocql.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, ResultSet
from turbocql.query import BatchStatement, BoundStatement, PreparedStatement
from turbocql.tracing import _of as _tracing_of

ExecutionResult = namedtuple("ExecutionResult", ["success", "result_or_exc"])
"""One result of :func:`execute_concurrent`: ``(True, ResultSet)`` or ``(False, exception)``."""


def _run(
    session,
    statement,
    source,
    concurrency,
    raise_on_first_error,
    results_generator,
    execution_profile,
    check_only=False,
    batch_rows=None,
    batch_bytes=3584,
    result_set=ResultSet,
):
    """Starts the engine's run: ``statement`` (None: ``source`` holds pairs) once per item
    (``check_only``: values converted, nothing sent: ``turbocql.bulk``'s dry run;
    ``batch_rows``: rows grouped by replicas into UNLOGGED batches, ``turbocql.bulk``'s
    load, read by ``failures()``). Each result is a ``result_set`` made by the engine as
    ``session.execute`` makes its own: one with more pages fetches them."""
    if not check_only and batch_rows is None and _execute_async_replaced(session) and _rows_form(source):
        pairs = iter(source) if statement is None else ((statement, params) for params in source)
        results = _through_execute_async(session, pairs, concurrency, raise_on_first_error, execution_profile)
        return results if results_generator else list(results)
    start = functools.partial(
        session._build_request.execute_concurrent,
        statement,
        source,
        concurrency,
        raise_on_first_error,
        result_set,
        ExecutionResult,
        execution_profile,
        check_only,
        batch_rows,
        batch_bytes,
    )
    tracing = _tracing_of(session)
    if tracing is not None and not check_only:
        results = _traced(tracing, tracing.bulk_span(session, "execute_concurrent"), start)
        return results if results_generator else list(results)
    run = start()
    if results_generator:
        return run
    return run.collect()


def _traced(tracing, span, start):
    """The results of the run ``start()`` begins, under ``span`` (``turbocql.tracing``: one
    span for the whole call), which gets the statement and failure counts and ends with the
    run, or with the exception that ends it."""
    n = failures = 0
    try:
        for r in start():
            n += 1
            if not r[0]:
                failures += 1
            yield r
    except BaseException as exc:
        span.set_attribute("db.operation.batch.size", n)
        span.set_attribute("turbocql.failures", failures + 1)
        tracing.end_bulk(span, exc)
        raise
    span.set_attribute("db.operation.batch.size", n)
    span.set_attribute("turbocql.failures", failures)
    tracing.end_bulk(span)


def _rows_form(source):
    """Whether ``source`` is items (pairs, or one statement's parameter rows), not turbocql's
    columns form (a dict of columns, an array), which only the engine reads."""
    return not isinstance(source, Mapping) and not hasattr(source, "__array_interface__")


def _through_execute_async(session, pairs, concurrency, raise_on_first_error, execution_profile):
    """The classic way: each statement through ``session.execute_async`` (as classic, with
    no client timeout), up to ``concurrency`` in flight, results in input order. As in the
    classic driver, a future's outcome comes to its callbacks (``add_callbacks``), a result
    is ``ResultSet(future, rows)``, and an exception raised by ``execute_async`` itself (a
    value that does not bind) is that statement's failure."""
    pairs = iter(pairs)
    in_flight = collections.deque()
    more = True
    while True:
        while more and len(in_flight) < concurrency:
            try:
                statement, params = next(pairs)
            except StopIteration:
                more = False
                break
            in_flight.append(_Outcome(session, statement, params, execution_profile))
        if not in_flight:
            return
        success, value = in_flight.popleft().wait()
        if not success and raise_on_first_error:
            raise value
        yield ExecutionResult(success, value)


class _Outcome:
    """One statement of :func:`_through_execute_async`: sent at once, its outcome set by the
    future's callback or errback (any thread) and waited for by the caller."""

    __slots__ = ("_done", "_value")

    def __init__(self, session, statement, params, execution_profile):
        self._done = threading.Event()
        try:
            future = session.execute_async(statement, params, timeout=None, execution_profile=execution_profile)
            future.add_callbacks(callback=self._on_success, callback_args=(future,), errback=self._on_error)
        except Exception as exc:  # noqa: BLE001 - this statement's failure, as classic
            self._on_error(exc)

    def _on_success(self, rows, future):
        try:
            # No callback for the next pages (iterating the result fetches them), as classic.
            future.clear_callbacks()
            value = (True, ResultSet(future, rows))
        except Exception as exc:  # noqa: BLE001 - never leave the caller waiting
            value = (False, exc)
        self._value = value
        self._done.set()

    def _on_error(self, exc):
        self._value = (False, exc)
        self._done.set()

    def wait(self):
        self._done.wait()
        return self._value


def execute_concurrent(
    session,
    statements_and_parameters,
    concurrency=100,
    raise_on_first_error=True,
    results_generator=False,
    execution_profile=EXEC_PROFILE_DEFAULT,
):
    """Executes ``(statement, parameters)`` pairs with up to ``concurrency`` in flight.

    Returns a list of :class:`ExecutionResult` in input order, or an iterator of them
    when ``results_generator`` is true. With ``raise_on_first_error`` the first failure
    is raised (nothing more is sent); otherwise failures are results with
    ``success=False``.
    """
    return _run(
        session,
        None,
        statements_and_parameters,
        concurrency,
        raise_on_first_error,
        results_generator,
        execution_profile,
    )


def execute_concurrent_with_args(session, statement, parameters, *args, **kwargs):
    """Executes one statement once per item of ``parameters`` (any iterable, read lazily).

    With a :class:`~turbocql.query.PreparedStatement`, ``parameters`` may also be columns,
    converted in the engine straight from the arrays' memory, a chunk at a time:

    * a dict of bind-marker name to column: a 2-D numeric array for a vector marker (row
      ``i`` is statement ``i``'s vector), a 1-D numeric array for a number marker, or any
      sequence (list, range, ...) for the others; every column has one value per
      statement, a marker without a column is left unset, an unknown name is an error;
    * one 2-D array, when the statement has a single ``vector<float|double|int|..., n>``
      marker (or a 1-D array for a single number marker);
    * one 2-D array with a column per marker, when every marker is a number (int, bigint,
      smallint, tinyint, float, double): row ``i`` is statement ``i``'s parameters.

    Rows whose vector is a numpy array (``zip(ids, matrix)``) are converted from the
    array's memory too. Takes the same options as :func:`execute_concurrent`.
    """
    opts = dict(
        concurrency=100, raise_on_first_error=True, results_generator=False, execution_profile=EXEC_PROFILE_DEFAULT
    )
    names = ["concurrency", "raise_on_first_error", "results_generator", "execution_profile"]
    for name, value in zip(names, args):
        opts[name] = value
    unknown = set(kwargs) - set(opts)
    if unknown:
        raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(unknown)))
    opts.update(kwargs)
    _check_with_args(statement, parameters)
    return _run(
        session,
        statement,
        parameters,
        opts["concurrency"],
        opts["raise_on_first_error"],
        opts["results_generator"],
        opts["execution_profile"],
    )


def _check_with_args(statement, parameters):
    if isinstance(statement, (BoundStatement, BatchStatement)):
        raise TypeError(
            "execute_concurrent_with_args needs a statement that takes parameters "
            "(a PreparedStatement, SimpleStatement or str), not a %s" % type(statement).__name__
        )
    if isinstance(parameters, dict) and not isinstance(statement, PreparedStatement):
        raise TypeError("parameters as a dict of columns need a PreparedStatement")


class _Pipeline:
    def __init__(self, session, max_in_flight, max_unsent, max_unconsumed, error_handler, timeout, execution_profile):
        self.session = session
        self.error_handler = error_handler
        self.execution_profile = execution_profile
        builder = session._build_request
        # A write pipeline's handler is also called from execute() with the failures so far,
        # so that failures never pile up (src/api/pipeline.rs).
        handler = error_handler if max_unconsumed is None else None
        self._core = builder.pipeline(max_in_flight, max_unsent, max_unconsumed, timeout, execution_profile, handler)
        tracing = _tracing_of(session)
        # turbocql.tracing: one span per pipeline, to the end of its `with` block.
        self._span = (tracing, tracing.bulk_span(session, type(self).__name__)) if tracing is not None else None
        # Queues one request (values converted now: bad values raise here, before
        # anything is sent); the engine's method itself, with no Python frame.
        self.execute = self._core.execute

    @property
    def pending(self):
        """Requests queued or in flight, not yet finished."""
        return self._core.pending

    def _handle(self, failures):
        if not failures:
            return
        if self.error_handler is None:
            raise failures[0]
        for exc in failures:
            self.error_handler(exc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        failure = exc
        try:
            if exc_type is None:
                self.confirm()
            else:
                self._core.confirm()  # let the requests end; the block's exception wins
        except BaseException as e:
            failure = e
            raise
        finally:
            self._core.close()
            if self._span is not None:
                tracing, span = self._span
                self._span = None
                tracing.end_bulk(span, failure)


class WritePipeline(_Pipeline):
    """A write pipeline (docs/execution-paths.md), driven in the engine.

    ``execute(statement, parameters)`` queues a write and returns at once (it waits, GIL
    released, only while ``max_unsent_write_requests`` are queued); the engine keeps
    ``max_in_flight_requests`` running. ``confirm()`` waits for every write queued so far
    and raises the first failure, or passes each failure to ``error_handler``. As a
    context manager, leaving the block confirms.

    ``error_handler`` is called in the caller's thread, from ``confirm()`` and from each
    ``execute()`` with the failures that arrived since the last call: failures never pile
    up, whatever the number of writes. Without it only the first failure is kept (the one
    ``confirm()`` raises); ``failures_dropped`` counts the others.
    """

    def __init__(
        self,
        session,
        max_in_flight_requests=100,
        max_unsent_write_requests=40000,
        error_handler=None,
        timeout=_NOT_SET,
        execution_profile=EXEC_PROFILE_DEFAULT,
    ):
        _Pipeline.__init__(
            self,
            session,
            max_in_flight_requests,
            max_unsent_write_requests,
            None,
            error_handler,
            timeout,
            execution_profile,
        )

    def confirm(self):
        """Waits for every queued write; raises the first failure (or hands each to
        ``error_handler``)."""
        self._handle(self._core.confirm())

    @property
    def failures_dropped(self):
        """Failures after the first, not kept for lack of an ``error_handler``."""
        return self._core.failures_dropped


class ReadPipeline(_Pipeline):
    """A read pipeline (docs/execution-paths.md), driven in the engine.

    ``execute(statement, parameters)`` queues a read; the engine keeps
    ``max_in_flight_requests`` running but never more than
    ``max_unconsumed_read_responses`` results ahead of the consumer. ``results()`` yields
    a :class:`~turbocql.cluster.ResultSet` per request, in submission order, paged as one
    of ``session.execute`` (iterating it fetches the further pages); a failed request
    raises there (or goes to ``error_handler``, and the results go on).
    """

    def __init__(
        self,
        session,
        max_in_flight_requests=100,
        max_unconsumed_read_responses=400,
        error_handler=None,
        timeout=_NOT_SET,
        execution_profile=EXEC_PROFILE_DEFAULT,
    ):
        _Pipeline.__init__(
            self,
            session,
            max_in_flight_requests,
            2**31 - 1,
            max_unconsumed_read_responses,
            error_handler,
            timeout,
            execution_profile,
        )

    def results(self):
        """Yields the results of the requests queued so far, in submission order."""
        session = self.session
        row_factory = session._build_request.row_factory_for(self.execution_profile)
        args = (session, row_factory, None)  # ResultSet(page, session, request, *args[1:])
        next_result = self._core.next_result
        while True:
            try:
                rs = next_result(ResultSet, args)
            except StopIteration:
                return
            except Exception as exc:
                if self.error_handler is None:
                    raise
                self.error_handler(exc)
                continue
            yield rs

    def confirm(self):
        """Consumes (and discards) every remaining result; raises the first failure."""
        for _ in self.results():
            pass


__all__ = ["ExecutionResult", "execute_concurrent", "execute_concurrent_with_args", "WritePipeline", "ReadPipeline"]


def execute_concurrent_async(
    session,
    statements_and_parameters,
    concurrency=100,
    raise_on_first_error=False,
    execution_profile=EXEC_PROFILE_DEFAULT,
):
    """:func:`execute_concurrent` without waiting: returns a
    :class:`concurrent.futures.Future` of its list of :class:`ExecutionResult` (the
    requests run in the engine; one helper thread waits for them)."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def run():
        if not future.set_running_or_notify_cancel():
            return
        try:
            results = execute_concurrent(
                session,
                statements_and_parameters,
                concurrency=concurrency,
                raise_on_first_error=raise_on_first_error,
                execution_profile=execution_profile,
            )
        except BaseException as exc:  # handed to the future's waiter
            future.set_exception(exc)
        else:
            future.set_result(results)

    threading.Thread(target=run, name="turbocql-execute-concurrent-async", daemon=True).start()
    return future
