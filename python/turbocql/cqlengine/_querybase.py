"""What query sets and DMLQuery share: the query errors, LWT checks, query expressions on
columns (``Model.col == v``), BatchQuery and ContextQuery."""

import warnings
from datetime import datetime, timedelta

from turbocql.cqlengine import CQLEngineException, UnicodeMixin, connection
from turbocql.cqlengine.operators import (
    ContainsOperator,
    EqualsOperator,
    GreaterThanOperator,
    GreaterThanOrEqualOperator,
    InOperator,
    LessThanOperator,
    LessThanOrEqualOperator,
    NotEqualsOperator,
)
from turbocql.cqlengine.statements import (
    WhereClause,
)
from turbocql.query import SimpleStatement


class QueryException(CQLEngineException):
    pass


class IfNotExistsWithCounterColumn(CQLEngineException):
    pass


class IfExistsWithCounterColumn(CQLEngineException):
    pass


class LWTException(CQLEngineException):
    """A conditional write the server did not apply; ``existing`` is the row it found."""

    def __init__(self, existing):
        super().__init__("LWT Query was not applied")
        self.existing = existing


class DoesNotExist(QueryException):
    pass


class MultipleObjectsReturned(QueryException):
    pass


def check_applied(result):
    """Raises LWTException when ``result`` is a conditional write's, not applied."""
    try:
        applied = result.was_applied
    except Exception:
        applied = True
    if not applied:
        raise LWTException(result.one())


class AbstractQueryableColumn(UnicodeMixin):
    """A column in a query expression: ``Model.col == v`` and friends make WHERE clauses."""

    def _get_column(self):
        raise NotImplementedError

    def __unicode__(self):
        raise NotImplementedError

    def _to_database(self, val):
        return val

    def in_(self, item):
        return WhereClause(str(self), InOperator(), item)

    def contains_(self, item):
        return WhereClause(str(self), ContainsOperator(), item)

    def __eq__(self, other):
        return WhereClause(str(self), EqualsOperator(), self._to_database(other))

    def __gt__(self, other):
        return WhereClause(str(self), GreaterThanOperator(), self._to_database(other))

    def __ge__(self, other):
        return WhereClause(str(self), GreaterThanOrEqualOperator(), self._to_database(other))

    def __lt__(self, other):
        return WhereClause(str(self), LessThanOperator(), self._to_database(other))

    def __le__(self, other):
        return WhereClause(str(self), LessThanOrEqualOperator(), self._to_database(other))

    def __ne__(self, other):
        return WhereClause(str(self), NotEqualsOperator(), self._to_database(other))

    __hash__ = object.__hash__


class ColumnQueryEvaluator(AbstractQueryableColumn):
    """``Model.column`` (and a user type's field) on the class: comparisons make WHERE
    clauses, ``.column`` is the column."""

    def __init__(self, column):
        self.column = column

    def __unicode__(self):
        return self.column.db_field_name

    def _get_column(self):
        return self.column


class BatchType:
    Unlogged = "UNLOGGED"
    Counter = "COUNTER"


class BatchQuery:
    """Writes queued by models and query sets ``.batch(b)``, sent as one batch on ``execute()``
    (or at the end of a ``with`` block; on an exception only if ``execute_on_exception``)."""

    warn_multiple_exec = True
    _consistency = None
    _connection = None
    _connection_explicit = False

    def __init__(
        self,
        batch_type=None,
        timestamp=None,
        consistency=None,
        execute_on_exception=False,
        timeout=connection.NOT_SET,
        connection=None,
    ):
        self.queries = []
        self.batch_type = batch_type
        if timestamp is not None and not isinstance(timestamp, (datetime, timedelta)):
            raise CQLEngineException("timestamp object must be an instance of datetime")
        self.timestamp = timestamp
        self._consistency = consistency
        self._execute_on_exception = execute_on_exception
        self._timeout = timeout
        self._callbacks = []
        self._executed = False
        self._context_entered = False
        self._connection = connection
        if connection:
            self._connection_explicit = True

    def add_query(self, query):
        if not hasattr(query, "get_context"):
            raise CQLEngineException("only BaseCQLStatements can be added to a batch query")
        self.queries.append(query)

    def consistency(self, consistency):
        self._consistency = consistency

    def _execute_callbacks(self):
        for callback, args, kwargs in self._callbacks:
            callback(*args, **kwargs)

    def add_callback(self, fn, *args, **kwargs):
        """Calls ``fn(*args, **kwargs)`` after the batch has run."""
        if not callable(fn):
            raise ValueError(f"Value for argument 'fn' is {type(fn)} and is not a callable object.")
        self._callbacks.append((fn, args, kwargs))

    def execute(self):
        if self._executed and self.warn_multiple_exec:
            where = " in a context manager block" if self._context_entered else ""
            warnings.warn("Batch executed multiple times%s." % where, stacklevel=2)
        self._executed = True
        if not self.queries:
            self._execute_callbacks()
            return
        batch_type = self.batch_type
        if batch_type is not None:
            # a cqlengine BatchType string, or the driver's BatchType (LOGGED is the default)
            batch_type = getattr(batch_type, "name", batch_type).upper()
            if batch_type == "LOGGED":
                batch_type = None
        opener = "BEGIN " + (batch_type + " " if batch_type else "") + "BATCH"
        if self.timestamp:
            ts = self.timestamp
            if isinstance(ts, timedelta):
                ts = datetime.now() + ts
            import time as _time

            opener += f" USING TIMESTAMP {int(_time.mktime(ts.timetuple()) * 1e6 + ts.microsecond)}"
        parts = [opener]
        ctx = {}
        counter = 0
        for q in self.queries:
            q.update_context_id(counter)
            ctx.update(q.get_context())
            parts.append(str(q))
            counter += q.get_context_size() if q.get_context_size() else 0
            counter = max(counter, q.context_counter)
        parts.append("APPLY BATCH;")
        stmt = SimpleStatement("  ".join(parts), consistency_level=self._consistency)
        result = connection.execute(stmt, ctx, timeout=self._timeout, connection=self._connection)
        if any(
            getattr(q, "if_not_exists", False) or getattr(q, "if_exists", False) or q.conditionals for q in self.queries
        ):
            check_applied(result)
        self.queries = []
        self._execute_callbacks()

    def __enter__(self):
        self._context_entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None and not self._execute_on_exception:
            return
        self.execute()


class ContextQuery:
    """``with ContextQuery(M1, M2, keyspace=..., connection=...) as (m1, m2)``: copies of
    the models bound to that keyspace and connection."""

    def __init__(self, *args, **kwargs):
        self.models = []
        if len(args) < 1:
            raise ValueError("No model provided.")
        keyspace = kwargs.pop("keyspace", None)
        conn = kwargs.pop("connection", None)
        if kwargs:
            raise ValueError("Unknown keyword argument(s): {}".format(",".join(kwargs)))
        for model in args:
            if not isinstance(model, type):
                raise ValueError("Models must be derived from base Model.")
            if not (hasattr(model, "_columns") and hasattr(model, "_construct_instance")):
                raise CQLEngineException("Models must be derived from base Model.")
            # No __module__, as classic: see management._model_in.
            attrs = {"__abstract__": False}
            attrs["__table_name__"] = model._raw_column_family_name()
            attrs["__table_name_case_sensitive__"] = True
            if keyspace:
                attrs["__keyspace__"] = keyspace
            if conn:
                attrs["__connection__"] = conn
            m = type(model)(model.__name__, (model,), attrs)
            self.models.append(m)

    def __enter__(self):
        return self.models[0] if len(self.models) == 1 else tuple(self.models)

    def __exit__(self, exc_type, exc_val, exc_tb):
        return
