"""Statements and row factories, under the classic driver's names (``cassandra.query``).

- :class:`SimpleStatement`: a query string; ``%s`` / ``%(name)s`` parameters are encoded
  into CQL literals on the client, as the classic driver does.
- :class:`PreparedStatement` / :class:`BoundStatement`: ``?`` / ``:name`` markers, values
  serialized by the engine using the prepared metadata.
- :class:`BatchStatement` with :class:`BatchType`.
- Row factories: :func:`named_tuple_factory` (the default), :func:`dict_factory`,
  :func:`tuple_factory`, :func:`ordered_dict_factory`, :func:`numpy_factory` (pages as numpy columns),
  :func:`arrow_factory` (pages as pyarrow record batches; turbocql's own).
"""

from __future__ import annotations

import datetime
import keyword
import re
import time
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import ClassVar

from turbocql import ConsistencyLevel, OperationTimedOut, UnsupportedOperation, _loggers  # noqa: F401 - classic names of cassandra.query
from turbocql._engine import encode as _engine_encode
from turbocql._engine import named_rows as _named_rows
from turbocql.encoder import Encoder, ValueSequence, bind_params  # noqa: F401 - classic re-exports
from turbocql.util import unix_time_from_uuid1

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


class _UnsetValue:
    """Leaves a bound column untouched (protocol v4 'unset')."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "UNSET_VALUE"

    def __reduce__(self):
        return (_UnsetValue, ())


UNSET_VALUE = _UnsetValue()
"""Bind this to leave a column untouched instead of writing null."""

FETCH_SIZE_UNSET = object()
"""The default of ``Statement.fetch_size``: use ``Session.default_fetch_size``."""


# ---------------------------------------------------------------- row factories


def _clean_column_name(name):
    """As the classic driver: leading non-alphanumerics and trailing non-word characters
    dropped, other non-alphanumerics replaced by ``_``."""
    return NON_ALPHA_REGEX.sub("_", START_BADCHAR_REGEX.sub("", END_BADCHAR_REGEX.sub("", name)))


_ROW_CLASSES: dict[tuple[str, ...], type] = {}


def _row_class(colnames):
    """The named-tuple class for a column list (cached; at most 1024 lists are kept)."""
    cls = _ROW_CLASSES.get(colnames)
    if cls is None:
        try:
            cls = namedtuple("Row", colnames)
        except ValueError:
            cls = _cleaned_row_class(colnames)
        if len(_ROW_CLASSES) >= 1024:
            _ROW_CLASSES.clear()
        _ROW_CLASSES[colnames] = cls
    return cls


def _cleaned_row_class(colnames):
    """The classic named_tuple_factory's class for names namedtuple refuses: the names
    cleaned (``[applied]`` -> ``applied``); if still refused (duplicates, keywords),
    invalid ones become ``field_<i>_`` and duplicates get ``_`` appended (``duplicate``,
    ``duplicate_``, ``duplicate__``), with the classic warning."""
    clean = [_clean_column_name(c) for c in colnames]
    try:
        return namedtuple("Row", clean)
    except ValueError:
        log.warning(
            "Failed creating named tuple for results with column names %s (cleaned: %s) "
            "(see Python 'namedtuple' documentation for details on name rules). "
            "Results will be returned with positional names. "
            'Avoid this by choosing different names, using SELECT "<col name>" AS aliases, '
            "or specifying a different row_factory on your Session" % (list(colnames), clean)
        )
        return namedtuple("Row", _sanitize_identifiers(clean))


def _sanitize_identifiers(field_names):
    """As the classic cassandra.util._sanitize_identifiers."""
    names_out = list(field_names)
    for index, name in enumerate(field_names):
        if (
            not all(c.isalnum() or c == "_" for c in name)
            or keyword.iskeyword(name)
            or not name
            or name[0].isdigit()
            or name.startswith("_")
        ):
            names_out[index] = "field_%d_" % index
    if len(names_out) != len(set(names_out)):
        observed = set()
        for index in range(len(names_out)):
            while names_out[index] in observed:
                names_out[index] = "%s_" % (names_out[index],)
            observed.add(names_out[index])
    return names_out


def tuple_factory(colnames, rows):
    """Rows as plain tuples."""
    return rows


named_tuple_factory = _named_rows
"""Rows as named tuples (the default): ``named_tuple_factory(colnames, rows)``. The class
is built once per column list (``_row_class``); rows are made in the engine."""


def dict_factory(colnames, rows):
    """Rows as dicts keyed by column name."""
    return [dict(zip(colnames, r)) for r in rows]


def ordered_dict_factory(colnames, rows):
    """Rows as OrderedDicts keyed by column name."""
    return [OrderedDict(zip(colnames, r)) for r in rows]


def numpy_factory(colnames, rows):
    """A page as ONE dict of column name -> numpy array (needs numpy).

    Set as ``session.row_factory``: the engine then decodes each page column by column,
    in Rust, with no Python object per value. Numbers become arrays of their dtype
    (``int32``, ``int64``, ``float32``, ``float64``, ``bool``, ``datetime64[ms]`` for
    timestamps); ``vector<float, n>`` (and the other numeric vectors) a 2-D array with a
    row per row; a column with nulls a ``numpy.ma.MaskedArray``; other types object
    arrays of the usual values. Iterating a ResultSet yields one such dict per page (as
    the classic driver's ``NumpyProtocolHandler``); an empty page gives none.
    """
    if isinstance(rows, dict):
        if not rows or len(next(iter(rows.values()))) == 0:
            return []
        return [rows]
    # Decoded as rows (a batch's result): build the columns here.
    import numpy as np

    if not rows:
        return []
    out = {}
    for i, name in enumerate(colnames):
        col = np.empty(len(rows), dtype=object)
        for j, r in enumerate(rows):
            col[j] = r[i]
        out[name] = col
    return [out]


def arrow_factory(colnames, rows):
    """A page as ONE ``pyarrow.RecordBatch`` (needs pyarrow; turbocql's own, not in the
    classic driver).

    Set as ``session.row_factory`` (or a profile's): the engine decodes each page column by
    column in Rust straight into Arrow buffers, with no Python object per value (the types
    are listed in ``turbocql._arrow``). Iterating a ResultSet yields one batch per page (an
    empty page gives none); ``ResultSet.to_arrow()`` gives every page as one table.
    """
    from turbocql import _arrow

    if isinstance(rows, _arrow.pa.RecordBatch):
        return [rows] if rows.num_rows else []
    # Decoded as rows (a batch's result): build the batch here.
    return [_arrow.rows_batch(colnames, rows)] if rows else []


def cql_text_factory(colnames, rows):
    """A page as ONE ``pyarrow.RecordBatch`` of strings: each value in its CQL text form, as
    cqlsh writes it and ``turbocql load`` reads it back (``2024-01-02 03:04:05.678+0000``,
    ``0x0aff``, ``{'a': 1}``); null stays null. Needs pyarrow; turbocql's own (what
    ``turbocql unload`` writes CSV from). The engine writes the text straight from each
    value's bytes, with no Python object per value.
    """
    from turbocql import _arrow

    if isinstance(rows, _arrow.pa.RecordBatch):
        return [rows] if rows.num_rows else []
    # Decoded as rows (a batch's result): Python's own text of each value.
    columns = {name: [None if r[i] is None else str(r[i]) for r in rows] for i, name in enumerate(colnames)}
    return [_arrow.pa.RecordBatch.from_pydict(columns)] if rows else []


# ---------------------------------------------------------------- statements


class _SerialConsistencyLevel:
    """``statement.serial_consistency_level``: checked when assigned (SERIAL, LOCAL_SERIAL or
    None, else ValueError, as in the classic driver). It has no ``__get__``, so reading it
    (the engine does, per request) is a plain instance-dict lookup with no Python call."""

    def __set__(self, obj, value):
        if value is not None and value not in (8, 9):
            raise ValueError(
                "serial_consistency_level must be either ConsistencyLevel.SERIAL or ConsistencyLevel.LOCAL_SERIAL"
            )
        obj.__dict__["serial_consistency_level"] = value

    def __delete__(self, obj):
        obj.__dict__["serial_consistency_level"] = None


class _Refused:
    """A statement attribute the engine does not apply: None (the default) only; any other
    value raises ``UnsupportedOperation`` naming it, given to the constructor or assigned."""

    def __init__(self, why):
        self.why = why

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None
        return obj.__dict__.get(self.name)

    def __set__(self, obj, value):
        if value is not None:
            from turbocql import UnsupportedOperation

            raise UnsupportedOperation("%s.%s: %s" % (type(obj).__name__, self.name, self.why))
        obj.__dict__[self.name] = None


# The classic driver sends these with the request; the engine does not (see the audit,
# docs/audit-accepted-settings.md).
_RETRY_POLICY = _Refused(
    "a per-statement retry policy is not supported: the engine applies the execution profile's "
    "retry_policy (give the statement an execution_profile whose retry_policy is the one wanted)"
)
_CUSTOM_PAYLOAD = _Refused("custom payloads are not supported by turbocql (the scylla crate sends none)")


class Statement:
    """Options shared by every kind of statement."""

    retry_policy = _RETRY_POLICY
    consistency_level = None
    fetch_size = FETCH_SIZE_UNSET
    keyspace = None
    table = None
    custom_payload = _CUSTOM_PAYLOAD
    is_idempotent = False
    _routing_key = None

    def __init__(
        self,
        retry_policy=None,
        consistency_level=None,
        routing_key=None,
        serial_consistency_level=None,
        fetch_size=FETCH_SIZE_UNSET,
        keyspace=None,
        custom_payload=None,
        is_idempotent=False,
        table=None,
    ):
        self.retry_policy = retry_policy
        self.consistency_level = consistency_level
        self.serial_consistency_level = serial_consistency_level
        self._routing_key = routing_key  # as given (the setter packs lists; __init__ does not)
        if fetch_size is not FETCH_SIZE_UNSET:
            self.fetch_size = fetch_size
        self.keyspace = keyspace
        self.table = table
        self.custom_payload = custom_payload
        self.is_idempotent = is_idempotent

    def _get_routing_key(self):
        return self._routing_key

    def _set_routing_key(self, key):
        """A serialized key, or a list/tuple of serialized components (one: itself;
        several: packed as a composite key), as in the classic driver."""
        if isinstance(key, (list, tuple)):
            key = key[0] if len(key) == 1 else _pack_routing_key(key)
        self._routing_key = key

    def _del_routing_key(self):
        self._routing_key = None

    routing_key = property(_get_routing_key, _set_routing_key, _del_routing_key)

    serial_consistency_level = _SerialConsistencyLevel()


def _pack_routing_key(parts):
    """A composite partition key's routing key: each component as [short length][bytes][0]."""
    return b"".join(len(p).to_bytes(2, "big") + p + b"\x00" for p in parts)


def _consistency_name(level):
    return ConsistencyLevel.value_to_name.get(level, "Not Set")


class SimpleStatement(Statement):
    """A query string, with optional ``%s`` / ``%(name)s`` parameters encoded client-side."""

    def __init__(
        self,
        query_string,
        retry_policy=None,
        consistency_level=None,
        routing_key=None,
        serial_consistency_level=None,
        fetch_size=FETCH_SIZE_UNSET,
        keyspace=None,
        custom_payload=None,
        is_idempotent=False,
    ):
        Statement.__init__(
            self,
            retry_policy,
            consistency_level,
            routing_key,
            serial_consistency_level,
            fetch_size,
            keyspace,
            custom_payload,
            is_idempotent,
        )
        self._query_string = query_string

    @property
    def query_string(self):
        return self._query_string

    def __str__(self):
        return '<SimpleStatement query="%s", consistency=%s>' % (
            self.query_string,
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__


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
    """A statement prepared on the cluster (from :meth:`Session.prepare`).

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
            retry_policy if retry_policy is not None else ps.retry_policy,
            consistency_level if consistency_level is not None else ps.consistency_level,
            routing_key,
            serial_consistency_level if serial_consistency_level is not None else ps.serial_consistency_level,
            fetch_size if fetch_size is not FETCH_SIZE_UNSET else ps.fetch_size,
            keyspace if keyspace is not None else ps.keyspace,
            custom_payload if custom_payload is not None else ps.custom_payload,
            ps.is_idempotent,
        )
        self.values = []
        self._bound = None

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


class QueryTrace:
    """A server-side trace of one request (``execute(..., trace=True)``), read from
    ``system_traces`` by :meth:`populate`, as the classic driver does: ``events`` is a
    tuple of :class:`TraceEvent`; the rows are read whatever the session's row factory."""

    trace_id = None
    request_type = None
    duration = None
    client = None
    coordinator = None
    parameters = None
    started_at = None
    events = None
    _session = None

    _SELECT_SESSIONS_FORMAT = "SELECT * FROM system_traces.sessions WHERE session_id = %s"
    _SELECT_EVENTS_FORMAT = "SELECT * FROM system_traces.events WHERE session_id = %s"
    _BASE_RETRY_SLEEP = 0.003

    def __init__(self, trace_id, session):
        self.trace_id = trace_id
        self._session = session

    def populate(self, max_wait=2.0, wait_for_complete=True, query_cl=None):
        """Reads the trace (retrying until the server has written it all, up to
        ``max_wait`` seconds, forever if None: then ``TraceUnavailable``).
        ``wait_for_complete=False`` takes a trace whose duration is not written yet;
        ``query_cl`` is the consistency level of the reads (None: the session's)."""
        attempt = 0
        start = time.time()
        while True:
            time_spent = time.time() - start
            if max_wait is not None and time_spent >= max_wait:
                raise TraceUnavailable(
                    "Trace information was not available within %f seconds. Consider raising "
                    "Session.max_trace_wait." % (max_wait,)
                )
            rows = self._execute(self._SELECT_SESSIONS_FORMAT, query_cl, time_spent, max_wait)
            row = rows[0] if rows else None
            is_complete = row is not None and row.get("duration") is not None and row.get("started_at") is not None
            if row is None or (wait_for_complete and not is_complete):
                time.sleep(self._BASE_RETRY_SLEEP * (2**attempt))
                attempt += 1
                continue
            self.request_type = row.get("request")
            self.duration = datetime.timedelta(microseconds=row["duration"]) if is_complete else None
            self.started_at = row.get("started_at")
            self.coordinator = row.get("coordinator")
            self.parameters = row.get("parameters")
            self.client = row.get("client")
            time_spent = time.time() - start
            events = self._execute(self._SELECT_EVENTS_FORMAT, query_cl, time_spent, max_wait)
            self.events = tuple(
                TraceEvent(r.get("activity"), r["event_id"], r.get("source"), r.get("source_elapsed"), r.get("thread"))
                for r in events
            )
            break

    def _execute(self, query, query_cl, time_spent, max_wait):
        """The rows of ``query`` for this trace as dicts (any row factory)."""
        timeout = (max_wait - time_spent) if max_wait is not None else None
        statement = SimpleStatement(query, consistency_level=query_cl)
        try:
            result = self._session.execute(statement, (self.trace_id,), timeout=timeout)
        except OperationTimedOut:
            raise TraceUnavailable("Trace information was not available within %f seconds" % (max_wait,)) from None
        names = result.column_names
        return [dict(r) if isinstance(r, Mapping) else dict(zip(names, r)) for r in result]

    def __str__(self):
        return "%s [%s] coordinator: %s, started at: %s, duration: %s, parameters: %s" % (
            self.request_type,
            self.trace_id,
            self.coordinator,
            self.started_at,
            self.duration,
            self.parameters,
        )


class TraceUnavailable(Exception):
    """Trace data was not (yet) available."""


START_BADCHAR_REGEX = re.compile("^[^a-zA-Z0-9]*")
END_BADCHAR_REGEX = re.compile("[^a-zA-Z0-9_]*$")
NON_ALPHA_REGEX = re.compile("[^a-zA-Z0-9]")


class TraceEvent:
    """One event of a query trace (a row of ``system_traces.events``)."""

    description = None
    datetime = None
    source = None
    source_elapsed = None
    thread_name = None

    def __init__(self, description, timeuuid, source, source_elapsed, thread_name):
        self.description = description
        # Timezone-aware (UTC), as in the classic driver 3.30.
        self.datetime = datetime.datetime.fromtimestamp(unix_time_from_uuid1(timeuuid), datetime.UTC)
        self.source = source
        self.source_elapsed = datetime.timedelta(microseconds=source_elapsed) if source_elapsed is not None else None
        self.thread_name = thread_name

    def __str__(self):
        return "%s on %s[%s] at %s" % (self.description, self.source, self.thread_name, self.datetime)
