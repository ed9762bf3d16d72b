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

This module holds the prepared, bound and batch statements; the rest of its names are
re-exported from where they live, one concern each: ``_statement`` (Statement,
SimpleStatement, ``UNSET_VALUE``, ``FETCH_SIZE_UNSET``), ``_row_factories`` and ``_trace``.
"""

from __future__ import annotations

import struct
import weakref
from collections import namedtuple
from typing import ClassVar

from turbocql import ConsistencyLevel, OperationTimedOut, UnsupportedOperation, _loggers  # noqa: F401 - classic names of cassandra.query
from turbocql._engine import encode as _engine_encode
from turbocql._row_factories import (  # noqa: F401 - names of turbocql.query, moved (row factories)
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
from turbocql._statement import (  # noqa: F401 - names of turbocql.query, moved (statement base classes)
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
from turbocql._trace import QueryTrace, TraceEvent, TraceUnavailable  # noqa: F401 - names of turbocql.query, moved
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


class ColumnMetadata(namedtuple("ColumnMetadata", "keyspace_name table_name name type")):
    """A bind marker or result column: keyspace, table, name and CQL type name."""


def _type_class(cql_type):
    """The cqltypes class of a CQL type name (the name itself for a type cqltypes does not
    know)."""
    from turbocql import cqltypes

    try:
        return cqltypes._lookup_cql_type(cql_type)
    except (ValueError, KeyError, LookupError):
        return cql_type


# The prepared statements made in this process, by query id (for classic batch triples).
_PREPARED_BY_ID: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _batch_item(item):
    """A batch item as the engine reads it, from ours or a classic ``(is_prepared,
    query_id_or_text, values)`` triple."""
    if len(item) != 3:
        return item
    is_prepared, statement, values = item
    if not is_prepared:
        return (statement, values or None)
    prepared = _PREPARED_BY_ID.get(statement)
    if prepared is None:
        raise ValueError("batch item: no prepared statement with query id %r in this process" % (statement,))
    return (prepared._prepared, values if values is not None else ())


class PreparedStatement:
    """A statement prepared on the cluster (from :meth:`Session.prepare <turbocql.cluster.Session.prepare>`).

    Execute it with ``session.execute(prepared, values)`` or bind it first with
    :meth:`bind`. Values go by position (``?``) or by name (``:name``, a dict).
    """

    consistency_level = None
    serial_consistency_level = None
    fetch_size = FETCH_SIZE_UNSET
    retry_policy = _RETRY_POLICY
    custom_payload = _CUSTOM_PAYLOAD
    is_idempotent = False
    # The protocol the engine speaks (classic code reads it to pick encodings).
    protocol_version = 4
    # The options the engine resolved for this statement (see Session._build_request);
    # assigning any attribute drops them, so a change takes effect at the next execution.
    _engine_opts = None

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name != "_engine_opts":
            self.__dict__.pop("_engine_opts", None)

    def __delattr__(self, name):
        object.__delattr__(self, name)
        self.__dict__.pop("_engine_opts", None)

    def __new__(cls, *args, **kwargs):
        # The classic constructor (column_metadata, query_id, routing_key_indexes, query,
        # keyspace, protocol_version, result_metadata, result_metadata_id[,
        # column_encryption_policy]: 8 arguments or more) makes a _ClassicPreparedStatement.
        # Session.prepare passes the engine's statement (and the session's keyspace).
        if cls is PreparedStatement and len(args) + len(kwargs) > 2:
            cls = _ClassicPreparedStatement
        return object.__new__(cls)

    def __init__(self, engine_prepared, keyspace=None):
        self._prepared = engine_prepared
        self.query_string = engine_prepared.query_string
        self.query_id = engine_prepared.query_id
        _PREPARED_BY_ID[self.query_id] = self
        ks = engine_prepared.keyspace or keyspace
        table = engine_prepared.table
        self.keyspace = ks
        # Types as the classic driver's metadata holds them: cqltypes classes.
        self.column_metadata = [
            ColumnMetadata(ks, table, n, _type_class(t))
            for n, t in zip(engine_prepared.param_names, engine_prepared.param_types)
        ]
        self.result_metadata = [
            ColumnMetadata(ks, table, n, _type_class(t))
            for n, t in zip(engine_prepared.result_column_names, engine_prepared.result_column_types)
        ]
        self._routing_key_indexes = list(engine_prepared.routing_key_indexes)
        self.is_lwt = engine_prepared.is_lwt

    @property
    def routing_key_indexes(self):
        """The positions of the partition key's columns among the bind markers, as the
        server reported them when preparing."""
        return self._routing_key_indexes

    @routing_key_indexes.setter
    def routing_key_indexes(self, indexes):
        # The engine routes a prepared statement by the partition key the server reported
        # (the crate computes the token from it): other indexes, or None (no routing key),
        # would change BoundStatement.routing_key and not where the request goes.
        if indexes is None or list(indexes) != list(self._prepared.routing_key_indexes):
            raise UnsupportedOperation(
                "PreparedStatement.routing_key_indexes = %r: the engine routes a prepared statement by the "
                "partition key columns the server reports (%r); other indexes are not supported"
                % (indexes, list(self._prepared.routing_key_indexes))
            )
        self._routing_key_indexes = list(indexes)

    def is_routing_key_index(self, i):
        return i in self.routing_key_indexes

    def bind(self, values):
        """A :class:`BoundStatement` of this statement with ``values``."""
        return BoundStatement(self).bind(values)

    def __str__(self):
        return '<PreparedStatement query="%s", consistency=%s>' % (
            self.query_string,
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__


class BoundStatement(Statement):
    """A prepared statement with its values, converted and checked when bound."""

    def __init__(
        self,
        prepared_statement,
        retry_policy=None,
        consistency_level=None,
        routing_key=None,
        serial_consistency_level=None,
        fetch_size=FETCH_SIZE_UNSET,
        keyspace=None,
        custom_payload=None,
    ):
        ps = prepared_statement
        self.prepared_statement = ps
        Statement.__init__(
            self,
            # A prepared statement's retry_policy and custom_payload are None (any other
            # value is refused), so the bound statement's are the ones given.
            retry_policy,
            consistency_level if consistency_level is not None else ps.consistency_level,
            routing_key,
            serial_consistency_level if serial_consistency_level is not None else ps.serial_consistency_level,
            fetch_size if fetch_size is not FETCH_SIZE_UNSET else ps.fetch_size,
            keyspace if keyspace is not None else ps.keyspace,
            custom_payload,
            ps.is_idempotent,
        )
        self.values = []
        if type(ps) is not PreparedStatement and isinstance(ps, _ClassicPreparedStatement):
            _ClassicBoundStatement._adopt(self, keyspace)

    def bind(self, values):
        """Binds ``values`` (a sequence, or a dict by marker name). Raises ``TypeError`` /
        ``ValueError`` naming the column for a value that does not fit; a dict key left out
        is bound as ``UNSET_VALUE``."""
        if values is None:
            values = ()
        elif isinstance(values, str):
            values = tuple(values)  # a str is a sequence of values, as in the classic driver
        ps = self.prepared_statement
        indexes = ps.routing_key_indexes or ()  # None when set so by the user, as classic allows
        if isinstance(values, dict):
            for i in indexes:
                if values.get(ps.column_metadata[i].name, UNSET_VALUE) is UNSET_VALUE:
                    _unset_routing_key(ps, i)
        else:
            n = len(ps.column_metadata)
            if len(values) < n:
                # Short sequences are completed with UNSET_VALUE (protocol v4), as in the
                # classic driver; never a routing-key column.
                for i in indexes:
                    if i >= len(values):
                        _unset_routing_key(ps, i)
                values = tuple(values) + (UNSET_VALUE,) * (n - len(values))
            for i in indexes:
                if i < len(values) and values[i] is UNSET_VALUE:
                    _unset_routing_key(ps, i)
        self._prepared_check(values)
        self.values = values
        self._routing_key = None
        return self

    def _prepared_check(self, values):
        self.prepared_statement._prepared.check_values(values)

    @property
    def query_string(self):
        return self.prepared_statement.query_string

    def _get_routing_key(self):
        """The partition key of the bound values, serialized (a composite key packed),
        computed on first read as in the classic driver; None when the statement has no
        partition-key markers."""
        ps = self.prepared_statement
        indexes = ps.routing_key_indexes
        if not indexes:
            return None
        if self._routing_key is not None:
            return self._routing_key
        values = self.values
        types = ps._prepared.param_types
        parts = []
        for i in indexes:
            value = values.get(ps.column_metadata[i].name) if isinstance(values, dict) else values[i]
            if value is None or value is UNSET_VALUE:
                return None
            parts.append(_engine_encode(types[i], value))
        self._routing_key = parts[0] if len(parts) == 1 else _pack_routing_key(parts)
        return self._routing_key

    routing_key = property(_get_routing_key, Statement._set_routing_key, Statement._del_routing_key)

    def __str__(self):
        return '<BoundStatement query="%s", values=%s, consistency=%s>' % (
            self.query_string,
            self.values,
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__


class _ClassicPreparedStatement(PreparedStatement):
    """A PreparedStatement made by the classic constructor, not by ``Session.prepare``
    (code that builds one from its metadata, as the classic driver's tests do): its
    metadata is what was given (``column_metadata`` types are cqltypes classes), and it
    binds as the classic one (:class:`_ClassicBoundStatement`). The engine has no
    prepared statement for it, so it cannot be executed or batched."""

    __module__ = "turbocql.query"

    column_encryption_policy = None
    result_metadata_id = None
    is_lwt = False
    _routing_key_index_set = None

    def __init__(
        self,
        column_metadata,
        query_id,
        routing_key_indexes,
        query,
        keyspace,
        protocol_version,
        result_metadata,
        result_metadata_id,
        column_encryption_policy=None,
    ):
        if column_encryption_policy is not None:
            raise UnsupportedOperation(
                "PreparedStatement(column_encryption_policy=...): column encryption is not supported by turbocql"
            )
        self.column_metadata = column_metadata
        self.query_id = query_id
        self.routing_key_indexes = routing_key_indexes
        self.query_string = query
        self.keyspace = keyspace
        self.protocol_version = protocol_version
        self.result_metadata = result_metadata
        self.result_metadata_id = result_metadata_id
        self.is_idempotent = False

    @property
    def _prepared(self):
        raise UnsupportedOperation(
            "this PreparedStatement was made by its constructor, not by Session.prepare: the engine has no "
            "prepared statement to execute"
        )

    @property
    def routing_key_indexes(self):
        return self.__dict__.get("_routing_key_indexes")

    @routing_key_indexes.setter
    def routing_key_indexes(self, indexes):
        self._routing_key_indexes = indexes
        self._routing_key_index_set = None

    def is_routing_key_index(self, i):
        if self._routing_key_index_set is None:
            self._routing_key_index_set = set(self.routing_key_indexes) if self.routing_key_indexes else set()
        return i in self._routing_key_index_set

    def bind(self, values):
        return _ClassicBoundStatement(self).bind(values)


class _ClassicBoundStatement(BoundStatement):
    """A BoundStatement of a :class:`_ClassicPreparedStatement` (``BoundStatement.__init__``
    makes it one): bound as the classic driver binds, each value serialized in Python by its
    column's cqltypes class at the statement's ``protocol_version`` (``values`` is the list of
    bytes, ``raw_values`` what was given); before v4 a missing value is an error, from v4 it
    is ``UNSET_VALUE``."""

    __module__ = "turbocql.query"

    raw_values = ()

    @staticmethod
    def _adopt(bound, keyspace):
        """Makes ``bound`` (just made by BoundStatement.__init__) one of these: as classic,
        its keyspace is the one given, else its first bind marker's."""
        bound.__class__ = _ClassicBoundStatement
        if keyspace is None:
            meta = bound.prepared_statement.column_metadata
            bound.keyspace = meta[0].keyspace_name if meta else None

    def bind(self, values):
        if values is None:
            values = ()
        ps = self.prepared_statement
        proto_version = ps.protocol_version
        col_meta = ps.column_metadata
        if isinstance(values, dict):
            values_dict = values
            values = []
            for col in col_meta:
                try:
                    values.append(values_dict[col.name])
                except KeyError:
                    if proto_version >= 4:
                        values.append(UNSET_VALUE)
                    else:
                        raise KeyError("Column name `%s` not found in bound dict." % (col.name)) from None
        if len(values) > len(col_meta):
            raise ValueError(
                "Too many arguments provided to bind() (got %d, expected %d)" % (len(values), len(col_meta))
            )
        if proto_version < 4 and ps.routing_key_indexes and len(values) < len(ps.routing_key_indexes):
            raise ValueError(
                "Too few arguments provided to bind() (got %d, required %d for routing key)"
                % (len(values), len(ps.routing_key_indexes))
            )
        self.raw_values = values
        self.values = []
        for value, col_spec in zip(values, col_meta):
            if value is None:
                self.values.append(None)
            elif value is UNSET_VALUE:
                if proto_version < 4:
                    raise ValueError(
                        "Attempt to bind UNSET_VALUE while using unsuitable protocol version (%d < 4)" % proto_version
                    )
                self._append_unset_value()
            else:
                try:
                    self.values.append(col_spec.type.serialize(value, proto_version))
                except (TypeError, struct.error) as exc:
                    raise TypeError(
                        'Received an argument of invalid type for column "%s". Expected: %s, Got: %s; (%s)'
                        % (col_spec.name, col_spec.type, type(value), exc)
                    ) from None
        if proto_version >= 4:
            for _ in range(len(col_meta) - len(self.values)):
                self._append_unset_value()
        self._routing_key = None
        return self

    def _append_unset_value(self):
        ps = self.prepared_statement
        i = len(self.values)
        if ps.is_routing_key_index(i):
            raise ValueError("Cannot bind UNSET_VALUE as a part of the routing key '%s'" % ps.column_metadata[i].name)
        self.values.append(UNSET_VALUE)

    def _get_routing_key(self):
        indexes = self.prepared_statement.routing_key_indexes
        if not indexes:
            return None
        if self._routing_key is None:
            parts = [self.values[i] for i in indexes]
            self._routing_key = parts[0] if len(parts) == 1 else _pack_routing_key(parts)
        return self._routing_key

    routing_key = property(_get_routing_key, Statement._set_routing_key, Statement._del_routing_key)

    def __str__(self):
        return '<BoundStatement query="%s", values=%s, consistency=%s>' % (
            self.query_string,
            self.raw_values,
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__


def _may_give_routing_key(statement):
    """Whether a statement added to a batch has a keyspace and a routing key (or, prepared,
    the partition-key markers that give one), without computing the key."""
    if isinstance(statement, PreparedStatement):
        return bool(statement.keyspace and statement.routing_key_indexes)
    if isinstance(statement, BoundStatement):
        return bool(statement.keyspace and statement.prepared_statement.routing_key_indexes)
    return bool(getattr(statement, "keyspace", None) and getattr(statement, "_routing_key", None))


def _unset_routing_key(ps, i):
    raise ValueError("Cannot bind UNSET_VALUE as a part of the routing key '%s'" % ps.column_metadata[i].name)


class BatchType:
    """The kind of a :class:`BatchStatement`."""

    LOGGED: ClassVar[BatchType]
    UNLOGGED: ClassVar[BatchType]
    COUNTER: ClassVar[BatchType]

    def __init__(self, name, value):
        self.name = name
        self.value = value

    def __str__(self):
        return self.name

    def __repr__(self):
        return "BatchType.%s" % (self.name,)


BatchType.LOGGED = BatchType("LOGGED", 0)
BatchType.UNLOGGED = BatchType("UNLOGGED", 1)
BatchType.COUNTER = BatchType("COUNTER", 2)


class BatchStatement(Statement):
    """Several statements applied as one batch (LOGGED by default).

    Every value is converted before anything is sent: one bad value sends nothing.
    """

    _rk_source = None

    @property
    def _statements_and_parameters(self):
        """The batch's items as the classic triples ``(is_prepared, query_id or CQL text,
        values)``, a new list (tools read it: ddtrace tags a batch span with its first
        texts). The engine reads ``_items``: ``(CQL text or engine prepared statement,
        values)`` pairs."""
        return [
            (False, statement, ()) if isinstance(statement, str) else (True, statement.query_id, values)
            for statement, values in self.__dict__["_items"]
        ]

    @_statements_and_parameters.setter
    def _statements_and_parameters(self, items):
        # Code written for the classic driver (cqlsh's COPY FROM) fills this list itself
        # with the classic triples (is_prepared, query_id or CQL text, values).
        self.__dict__["_items"] = [_batch_item(item) for item in items]

    def __init__(
        self,
        batch_type=BatchType.LOGGED,
        retry_policy=None,
        consistency_level=None,
        serial_consistency_level=None,
        session=None,
        custom_payload=None,
    ):
        Statement.__init__(
            self,
            retry_policy=retry_policy,
            consistency_level=consistency_level,
            serial_consistency_level=serial_consistency_level,
            custom_payload=custom_payload,
        )
        self.batch_type = batch_type
        self._statements_and_parameters = []
        self._session = session
        self._rk_source = None

    def clear(self):
        del self.__dict__["_items"][:]
        self.keyspace = None
        self.routing_key = None
        self._rk_source = None

    def _get_routing_key(self):
        if self._routing_key is None and self._rk_source is not None:
            self._inherit_routing_key()
        return self._routing_key

    def _inherit_routing_key(self):
        """The classic batch's routing key and keyspace: those of the first statement added
        that has both (computed here, on first read, rather than at each add)."""
        item, parameters = self._rk_source
        self._rk_source = None
        if isinstance(item, PreparedStatement):
            item = item.bind(() if parameters is None else parameters)
        key = item.routing_key
        if item.keyspace and key:
            self._routing_key = key
            self.keyspace = item.keyspace

    def _get_keyspace(self):
        if self._routing_key is None and self._rk_source is not None:
            self._inherit_routing_key()
        return self.__dict__.get("keyspace")

    def _set_keyspace(self, keyspace):
        self.__dict__["keyspace"] = keyspace

    keyspace = property(_get_keyspace, _set_keyspace)
    routing_key = property(_get_routing_key, Statement._set_routing_key, Statement._del_routing_key)

    def add(self, statement, parameters=None):
        """Adds a query string, SimpleStatement, PreparedStatement or BoundStatement.

        As in the classic driver, the batch takes its ``routing_key`` and ``keyspace`` from
        the first statement that has both (read lazily), and at most 65535 statements."""
        items = self.__dict__["_items"]
        if len(items) >= 0xFFFF:
            raise ValueError("Batch statement cannot contain more than %d statements." % 0xFFFF)
        if self._rk_source is None and self._routing_key is None and _may_give_routing_key(statement):
            self._rk_source = (statement, parameters)
        if isinstance(statement, str):
            if parameters:
                statement = bind_params(statement, parameters, self._encoder())
            items.append((statement, None))
        elif isinstance(statement, PreparedStatement):
            items.append((statement._prepared, parameters if parameters is not None else ()))
        elif isinstance(statement, BoundStatement):
            if parameters:
                raise ValueError("Parameters cannot be passed with a BoundStatement to BatchStatement.add()")
            items.append((statement.prepared_statement._prepared, statement.values))
        elif isinstance(statement, SimpleStatement):
            query = statement.query_string
            if parameters:
                query = bind_params(query, parameters, self._encoder())
            items.append((query, None))
        else:
            raise TypeError("BatchStatement.add() takes a str or a statement, not %s" % type(statement).__name__)
        return self

    def add_all(self, statements, parameters):
        for statement, value in zip(statements, parameters):
            self.add(statement, value)

    def _encoder(self):
        if self._session is not None:
            return self._session.encoder
        return _DEFAULT_ENCODER

    def __len__(self):
        return len(self.__dict__["_items"])

    def __str__(self):
        return "<BatchStatement type=%s, statements=%d, consistency=%s>" % (
            self.batch_type,
            len(self),
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__


_DEFAULT_ENCODER = Encoder()
