"""The prepared and bound statements of ``turbocql.query`` (which re-exports every name
here): :class:`PreparedStatement` (from ``Session.prepare``), :class:`BoundStatement` (its
values, converted and checked when bound), :class:`ColumnMetadata` (a bind marker or result
column), and the forms their classic constructors make (``_ClassicPreparedStatement``,
``_ClassicBoundStatement``: values serialized in Python by their column's cqltypes class).
``turbocql.query`` names itself their ``__module__`` (reprs, pickles).
"""

from __future__ import annotations

import struct
import weakref
from collections import namedtuple

from turbocql import UnsupportedOperation
from turbocql._engine import encode as _engine_encode
from turbocql._query.statement import (
    _CUSTOM_PAYLOAD,
    _RETRY_POLICY,
    FETCH_SIZE_UNSET,
    UNSET_VALUE,
    Statement,
    _consistency_name,
    _pack_routing_key,
)


class ColumnMetadata(namedtuple("ColumnMetadata", "keyspace_name table_name name type", module="turbocql.query")):
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


def _unset_routing_key(ps, i):
    raise ValueError("Cannot bind UNSET_VALUE as a part of the routing key '%s'" % ps.column_metadata[i].name)
