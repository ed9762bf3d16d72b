"""Many requests at once, under the classic driver's names (``cassandra.concurrent``).

:func:`execute_concurrent` and :func:`execute_concurrent_with_args` run inside the
engine: the parameters are converted a chunk at a time under one GIL acquisition, then
the engine keeps ``concurrency`` requests in flight with the GIL released, and hands the
results back in input order. Inputs are read lazily, so generators of millions of items
run in bounded memory; with ``results_generator=True`` results are streamed too.
"""

from collections import namedtuple
from itertools import repeat  # noqa: F401 - kept for callers that import it from here

from turbocql.cluster import EXEC_PROFILE_DEFAULT, ResultSet, _NOT_SET
from turbocql.query import (
    FETCH_SIZE_UNSET, BatchStatement, BoundStatement, PreparedStatement, SimpleStatement,
)

ExecutionResult = namedtuple("ExecutionResult", ["success", "result_or_exc"])
"""One result of :func:`execute_concurrent`: ``(True, ResultSet)`` or ``(False, exception)``."""


def _engine_statement(session, statement):
    """(engine statement, consistency, fetch_size) for a statement the engine can run."""
    if isinstance(statement, PreparedStatement):
        return statement._prepared, statement.consistency_level, statement.fetch_size
    if isinstance(statement, str):
        return statement, None, FETCH_SIZE_UNSET
    if isinstance(statement, SimpleStatement):
        return statement.query_string, statement.consistency_level, statement.fetch_size
    raise TypeError("unsupported statement type %s" % type(statement).__name__)


def _pairs(session, statements_and_parameters):
    """Turns (statement, parameters) pairs into what the engine runs, lazily."""
    encoder = session.encoder
    from turbocql.encoder import bind_params

    for item in statements_and_parameters:
        statement, params = item
        if isinstance(statement, PreparedStatement):
            yield statement._prepared, params if params is not None else (), statement.consistency_level
        elif isinstance(statement, BoundStatement):
            ps = statement.prepared_statement
            yield ps._prepared, statement.values, statement.consistency_level
        elif isinstance(statement, (str, SimpleStatement)):
            query = statement if isinstance(statement, str) else statement.query_string
            cl = None if isinstance(statement, str) else statement.consistency_level
            yield (bind_params(query, params, encoder) if params else query), None, cl
        elif isinstance(statement, BatchStatement):
            raise TypeError("BatchStatement is not supported by execute_concurrent; execute it directly")
        else:
            raise TypeError("unsupported statement type %s" % type(statement).__name__)


def _run(session, statement, source, concurrency, raise_on_first_error, results_generator, consistency_level, fetch_size):
    if concurrency <= 0:
        raise ValueError("concurrency must be greater than 0")
    row_factory, columnar = session._row_mode()
    timeout = session.default_timeout

    def make_result(page):
        return ResultSet(page, session, None, row_factory, statement)

    if fetch_size is FETCH_SIZE_UNSET:
        fetch_size = session.default_fetch_size
    cl = consistency_level if consistency_level is not None else session.default_consistency_level
    run = session._session.execute_concurrent(
        statement, source, concurrency, raise_on_first_error, make_result, ExecutionResult,
        cl, session.default_serial_consistency_level, fetch_size, timeout, columnar=columnar)
    if results_generator:
        return run
    return run.collect()


def execute_concurrent(session, statements_and_parameters, concurrency=100, raise_on_first_error=True,
                       results_generator=False, execution_profile=EXEC_PROFILE_DEFAULT):
    """Executes ``(statement, parameters)`` pairs with up to ``concurrency`` in flight.

    Returns a list of :class:`ExecutionResult` in input order, or an iterator of them
    when ``results_generator`` is true. With ``raise_on_first_error`` the first failure
    is raised (nothing more is sent); otherwise failures are results with
    ``success=False``.
    """
    return _run(session, None, _pairs(session, statements_and_parameters), concurrency,
                raise_on_first_error, results_generator, None, FETCH_SIZE_UNSET)


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
    opts = dict(concurrency=100, raise_on_first_error=True, results_generator=False,
                execution_profile=EXEC_PROFILE_DEFAULT)
    names = ["concurrency", "raise_on_first_error", "results_generator", "execution_profile"]
    for name, value in zip(names, args):
        opts[name] = value
    unknown = set(kwargs) - set(opts)
    if unknown:
        raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(unknown)))
    opts.update(kwargs)
    if isinstance(statement, BoundStatement):
        raise TypeError("pass the PreparedStatement, not a BoundStatement")
    if isinstance(statement, (str, SimpleStatement)):
        if isinstance(parameters, dict):
            raise TypeError("parameters as a dict of columns need a PreparedStatement")
        # Simple statements are encoded client-side per item: go through the pair path.
        return execute_concurrent(session, ((statement, p) for p in parameters), opts["concurrency"],
                                  opts["raise_on_first_error"], opts["results_generator"])
    engine_stmt, cl, fetch_size = _engine_statement(session, statement)
    return _run(session, engine_stmt, parameters, opts["concurrency"], opts["raise_on_first_error"],
                opts["results_generator"], cl, fetch_size)


def _resolve(session, statement, parameters):
    """(engine statement, values) for one pipeline request."""
    if isinstance(statement, PreparedStatement):
        return statement._prepared, parameters if parameters is not None else ()
    if isinstance(statement, BoundStatement):
        if parameters is not None:
            raise ValueError("parameters cannot be passed with a BoundStatement")
        return statement.prepared_statement._prepared, statement.values
    if isinstance(statement, (str, SimpleStatement)):
        from turbocql.encoder import bind_params

        query = statement if isinstance(statement, str) else statement.query_string
        return (bind_params(query, parameters, session.encoder) if parameters else query), None
    raise TypeError("unsupported statement type %s" % type(statement).__name__)


class _Pipeline:
    def __init__(self, session, max_in_flight, max_unsent, max_unconsumed, error_handler, timeout):
        if timeout is _NOT_SET:
            timeout = session.default_timeout
        self.session = session
        self.error_handler = error_handler
        self._core = session._session.pipeline(
            max_in_flight, max_unsent, max_unconsumed, session.default_consistency_level,
            session.default_serial_consistency_level, timeout)

    def execute(self, statement, parameters=None):
        """Queues one request. Bad values raise here, before anything is sent."""
        if type(statement) is PreparedStatement:  # the common case, without a call
            self._core.execute(statement._prepared, parameters if parameters is not None else ())
        else:
            self._core.execute(*_resolve(self.session, statement, parameters))

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
        try:
            if exc_type is None:
                self.confirm()
            else:
                self._core.confirm()  # let the requests end; the block's exception wins
        finally:
            self._core.close()


class WritePipeline(_Pipeline):
    """Document 001's write pipeline, driven in the engine.

    ``execute(statement, parameters)`` queues a write and returns at once (it waits, GIL
    released, only while ``max_unsent_write_requests`` are queued); the engine keeps
    ``max_in_flight_requests`` running. ``confirm()`` waits for every write queued so far
    and raises the first failure, or passes each failure to ``error_handler``. As a
    context manager, leaving the block confirms.
    """

    def __init__(self, session, max_in_flight_requests=100, max_unsent_write_requests=40000,
                 error_handler=None, timeout=_NOT_SET):
        _Pipeline.__init__(self, session, max_in_flight_requests, max_unsent_write_requests, None,
                           error_handler, timeout)

    def confirm(self):
        """Waits for every queued write; raises the first failure (or hands each to
        ``error_handler``)."""
        self._handle(self._core.confirm())


class ReadPipeline(_Pipeline):
    """Document 001's read pipeline, driven in the engine.

    ``execute(statement, parameters)`` queues a read; the engine keeps
    ``max_in_flight_requests`` running but never more than
    ``max_unconsumed_read_responses`` results ahead of the consumer. ``results()`` yields
    a :class:`~turbocql.cluster.ResultSet` per request, in submission order; a failed
    request raises there (or goes to ``error_handler``, and the results go on).
    """

    def __init__(self, session, max_in_flight_requests=100, max_unconsumed_read_responses=400,
                 error_handler=None, timeout=_NOT_SET):
        _Pipeline.__init__(self, session, max_in_flight_requests, 2**31 - 1, max_unconsumed_read_responses,
                           error_handler, timeout)

    def results(self):
        """Yields the results of the requests queued so far, in submission order."""
        session = self.session
        args = (session, None, session.row_factory, None)  # ResultSet(page, *args)
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
