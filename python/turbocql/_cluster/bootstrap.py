"""The engine's bootstrap: ``_bootstrap_engine`` hands the engine, once, every Python object
it uses to run requests (exception classes, statement classes, result classes; see
src/pyrefs.rs); the codec's value classes are handed over before, by the cqltypes classes'
module (``turbocql._types.scalar``). ``turbocql.cluster`` calls it at the end of its
import, so every module that runs requests (they import ``turbocql.cluster`` first) finds
the engine ready. Imports the results, the session and the UDT helpers; nothing of the
cluster layer imports it but cluster.py.
"""

from turbocql import _engine, _loggers, protocol
from turbocql._policies.profiles import EXEC_PROFILE_DEFAULT
from turbocql._session.future import NoHostAvailable, QueryExhausted
from turbocql._session.results import ResultSet
from turbocql._session.session import _NOT_SET
from turbocql._types.udt import _make_udt
from turbocql.connection import ConnectionBusy, ConnectionException
from turbocql.encoder import bind_params
from turbocql.query import (
    FETCH_SIZE_UNSET,
    UNSET_VALUE,
    BatchStatement,
    BoundStatement,
    PreparedStatement,
    SimpleStatement,
    arrow_factory,
    cql_text_factory,
    named_tuple_factory,
    numpy_factory,
)


def _arrow_record_batch(names, columns):
    """An Arrow page's columns as a ``pyarrow.RecordBatch`` (``turbocql._query.arrow.record_batch``).
    ``turbocql._query.arrow`` imports pyarrow, which is optional: it is imported at the first Arrow
    page, here, so that the engine itself imports no module of the package."""
    from turbocql._query.arrow import record_batch

    return record_batch(names, columns)


def _bootstrap_engine():
    """Hands the engine, once, every Python object it uses (see src/pyrefs.rs)."""
    import asyncio

    import turbocql
    from turbocql.pool import _host_of
    from turbocql.query import _row_class

    objects = {
        name: getattr(turbocql, name)
        for name in (
            "DriverException",
            "InvalidRequest",
            "AlreadyExists",
            "FunctionFailure",
            "AuthenticationFailed",
            "Unauthorized",
            "Unavailable",
            "ReadTimeout",
            "WriteTimeout",
            "ReadFailure",
            "WriteFailure",
            "OperationTimedOut",
            "UnsupportedOperation",
        )
    }
    for name in (
        "ErrorMessage",  # an error code the driver does not know
        "ConfigurationException",  # the classic cassandra.protocol class (an ErrorMessage)
        "SyntaxException",
        "OverloadedErrorMessage",
        "IsBootstrappingErrorMessage",
        "TruncateError",
        "ProtocolException",
        "PreparedQueryNotFound",
        "ServerError",
    ):
        objects[name] = getattr(protocol, name)
    objects.update(
        NoHostAvailable=NoHostAvailable,
        ConnectionException=ConnectionException,
        ConnectionBusy=ConnectionBusy,
        QueryExhausted=QueryExhausted,
        UNSET_VALUE=UNSET_VALUE,
        make_udt=_make_udt,
        row_class=_row_class,
        PreparedStatement=PreparedStatement,
        BoundStatement=BoundStatement,
        SimpleStatement=SimpleStatement,
        BatchStatement=BatchStatement,
        FETCH_SIZE_UNSET=FETCH_SIZE_UNSET,
        NOT_SET=_NOT_SET,
        bind_params=bind_params,
        numpy_factory=numpy_factory,
        arrow_factory=arrow_factory,
        cql_text_factory=cql_text_factory,
        arrow_record_batch=_arrow_record_batch,
        NumpyProtocolHandler=protocol.NumpyProtocolHandler,
        named_rows=named_tuple_factory,
        ResultSet=ResultSet,
        EXEC_PROFILE_DEFAULT=EXEC_PROFILE_DEFAULT,
        host_of=_host_of,
        cluster_log=_loggers.cluster,
        pool_log=_loggers.pool,
        protocol_log=_loggers.protocol,
        asyncio_Future=asyncio.Future,
        asyncio_CancelledError=asyncio.CancelledError,
        asyncio_InvalidStateError=asyncio.InvalidStateError,
        asyncio_get_running_loop=asyncio.get_running_loop,
    )
    _engine._bootstrap(objects)
