"""Statements and row factories, under the classic driver's names (``cassandra.query``).

- :class:`SimpleStatement`: a query string; ``%s`` / ``%(name)s`` parameters are encoded
  into CQL literals on the client, as the classic driver does.
- :class:`PreparedStatement` / :class:`BoundStatement`: ``?`` / ``:name`` markers, values
  serialized by the engine using the prepared metadata. A PreparedStatement made by its
  classic constructor (``column_metadata``, ``query_id``, ...; not by ``Session.prepare``)
  binds as the classic one does: values serialized in Python by their column's cqltypes
  class (``_ClassicPreparedStatement``).
- :class:`BatchStatement` with :class:`BatchType`.
- Row factories: :func:`named_tuple_factory` (the default), :func:`dict_factory`,
  :func:`tuple_factory`, :func:`ordered_dict_factory`, :func:`numpy_factory` (pages as numpy columns),
  :func:`arrow_factory` (pages as pyarrow record batches; turbocql's own).
- Query tracing: :class:`QueryTrace`, :class:`TraceEvent`.

Every name is re-exported from where it lives in ``turbocql._query``, one concern each:
``statement`` (Statement, SimpleStatement, ``UNSET_VALUE``, ``FETCH_SIZE_UNSET``),
``prepared`` (PreparedStatement, BoundStatement and their classic constructor forms),
``batch`` (BatchStatement, BatchType), ``row_factories`` and ``trace``. The classes keep
``turbocql.query`` as their ``__module__``.
"""

from __future__ import annotations

from turbocql import ConsistencyLevel, OperationTimedOut, UnsupportedOperation, _loggers  # noqa: F401 - classic names of cassandra.query
from turbocql._query.batch import BatchStatement, BatchType  # noqa: F401 - names of turbocql.query, moved (batches)
from turbocql._query.prepared import (  # noqa: F401 - names of turbocql.query, moved (prepared and bound statements)
    BoundStatement,
    ColumnMetadata,
    PreparedStatement,
    _ClassicBoundStatement,
    _ClassicPreparedStatement,
)
from turbocql._query.row_factories import (  # noqa: F401 - names of turbocql.query, moved (row factories)
    END_BADCHAR_REGEX,
    NON_ALPHA_REGEX,
    START_BADCHAR_REGEX,
    _clean_column_name,
    _cleaned_row_class,
    _row_class,
    _sanitize_identifiers,
    arrow_factory,
    cql_text_factory,
    dict_factory,
    named_tuple_factory,
    numpy_factory,
    ordered_dict_factory,
    tuple_factory,
)
from turbocql._query.statement import (  # noqa: F401 - names of turbocql.query, moved (statement base classes)
    _CUSTOM_PAYLOAD,
    _RETRY_POLICY,
    FETCH_SIZE_UNSET,
    UNSET_VALUE,
    SimpleStatement,
    Statement,
    _consistency_name,
    _pack_routing_key,
    _Refused,
    _SerialConsistencyLevel,
    _UnsetValue,
)
from turbocql._query.trace import QueryTrace, TraceEvent, TraceUnavailable  # noqa: F401 - names of turbocql.query, moved
from turbocql._util.homes import publish as _publish
from turbocql.encoder import Encoder, ValueSequence, bind_params  # noqa: F401 - classic re-exports
from turbocql.util import unix_time_from_uuid1  # noqa: F401 - a name of the classic module

log = _loggers.query

__all__ = [
    "UNSET_VALUE",
    "FETCH_SIZE_UNSET",
    "Statement",
    "SimpleStatement",
    "PreparedStatement",
    "BoundStatement",
    "BatchStatement",
    "BatchType",
    "ValueSequence",
    "bind_params",
    "named_tuple_factory",
    "dict_factory",
    "tuple_factory",
    "ordered_dict_factory",
    "numpy_factory",
    "arrow_factory",
    "cql_text_factory",
]

# This module is the home of the classes and functions of turbocql._query it re-exports
# (reprs, tracebacks, docs and pickles name turbocql.query).
# _UnsetValue is named by UNSET_VALUE's pickle, the _Classic* forms by their reprs.
_publish(
    __name__,
    [
        "BatchStatement",
        "BatchType",
        "BoundStatement",
        "ColumnMetadata",
        "PreparedStatement",
        "QueryTrace",
        "SimpleStatement",
        "Statement",
        "TraceEvent",
        "TraceUnavailable",
        "_ClassicBoundStatement",
        "_ClassicPreparedStatement",
        "_UnsetValue",
        "arrow_factory",
        "cql_text_factory",
        "dict_factory",
        "numpy_factory",
        "ordered_dict_factory",
        "tuple_factory",
    ],
)
