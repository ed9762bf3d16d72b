"""The batches of ``turbocql.query`` (which re-exports every name here):
:class:`BatchStatement`, several statements applied as one, and :class:`BatchType`, its
kind. Items are kept as the engine reads them; code written for the classic driver may fill
``_statements_and_parameters`` with the classic triples. ``turbocql.query`` names itself
their ``__module__`` (reprs, pickles).
"""

from __future__ import annotations

from typing import ClassVar

from turbocql._query.prepared import _PREPARED_BY_ID, BoundStatement, PreparedStatement
from turbocql._query.statement import SimpleStatement, Statement, _consistency_name
from turbocql.encoder import Encoder, bind_params


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


def _may_give_routing_key(statement):
    """Whether a statement added to a batch has a keyspace and a routing key (or, prepared,
    the partition-key markers that give one), without computing the key."""
    if isinstance(statement, PreparedStatement):
        return bool(statement.keyspace and statement.routing_key_indexes)
    if isinstance(statement, BoundStatement):
        return bool(statement.keyspace and statement.prepared_statement.routing_key_indexes)
    return bool(getattr(statement, "keyspace", None) and getattr(statement, "_routing_key", None))


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
