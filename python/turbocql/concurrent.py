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
    row_factory = session.row_factory
    timeout = session.default_timeout

    def make_result(page):
        return ResultSet(session, None, page, row_factory, statement)

    if fetch_size is FETCH_SIZE_UNSET:
        fetch_size = session.default_fetch_size
    cl = consistency_level if consistency_level is not None else session.default_consistency_level
    run = session._session.execute_concurrent(
        statement, source, concurrency, raise_on_first_error, make_result, ExecutionResult,
        cl, session.default_serial_consistency_level, fetch_size, timeout)
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

    Takes the same options as :func:`execute_concurrent`.
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
        # Simple statements are encoded client-side per item: go through the pair path.
        return execute_concurrent(session, ((statement, p) for p in parameters), opts["concurrency"],
                                  opts["raise_on_first_error"], opts["results_generator"])
    engine_stmt, cl, fetch_size = _engine_statement(session, statement)
    return _run(session, engine_stmt, parameters, opts["concurrency"], opts["raise_on_first_error"],
                opts["results_generator"], cl, fetch_size)


__all__ = ["ExecutionResult", "execute_concurrent", "execute_concurrent_with_args"]
_ = _NOT_SET
