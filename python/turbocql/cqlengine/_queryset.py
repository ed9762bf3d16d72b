"""Query sets: a model's rows a SELECT chooses (filters, order, limit, fields), fetched
lazily and cached; and the UPDATE and DELETE of every row they choose."""

import copy
import warnings

from turbocql.cqlengine import CQLEngineException, ValidationError, columns, connection
from turbocql.cqlengine._querybase import (
    AbstractQueryableColumn,
    DoesNotExist,
    IfExistsWithCounterColumn,
    IfNotExistsWithCounterColumn,
    MultipleObjectsReturned,
    QueryException,
    check_applied,
)
from turbocql.cqlengine.functions import QueryValue, Token
from turbocql.cqlengine.operators import BaseWhereOperator, EqualsOperator, InOperator
from turbocql.cqlengine.statements import (
    ConditionalClause,
    DeleteStatement,
    SelectStatement,
    UpdateStatement,
    WhereClause,
)

_COLLECTION_OPS = {
    "append": "append",
    "prepend": "prepend",
    "add": "append",
    "remove": "remove",
    "update": "append",
    "discard": "remove",
}


class AbstractQuerySet:
    """The options of a query, copied (not changed) by every chaining method."""

    def __init__(self, model):
        self.model = model
        self._where = []
        self._conditional = []
        self._order = []
        self._allow_filtering = False
        self._limit = 10000
        self._defer_fields = set()
        self._deferred_values = {}
        self._only_fields = []
        self._values_list = False
        self._flat_values_list = False
        self._result_cache = None
        self._result_idx = None
        self._result_generator = None
        self._materialize_results = True
        self._distinct_fields = None
        self._count = None
        self._batch = None
        self._ttl = None
        self._consistency = None
        self._timestamp = None
        self._if_not_exists = False
        self._timeout = connection.NOT_SET
        self._if_exists = False
        self._fetch_size = None
        self._connection = None
        self._keyspace = None

    @property
    def column_family_name(self):
        if self._keyspace:
            return f"{self._keyspace}.{self.model.column_family_name(include_keyspace=False)}"
        return self.model.column_family_name()

    def _execute(self, statement):
        if self._batch:
            return self._batch.add_query(statement)
        conn = self._connection or self.model._get_connection()
        result = _run(statement, self._consistency, self._timeout, conn)
        if self._if_not_exists or self._if_exists or self._conditional:
            check_applied(result)
        return result

    def __unicode__(self):
        return str(self._select_query())

    __str__ = __unicode__

    def __call__(self, *args, **kwargs):
        return self.filter(*args, **kwargs)

    def __deepcopy__(self, memo):
        clone = self.__class__(self.model)
        for k, v in self.__dict__.items():
            if k in ("_con", "_cur", "_result_cache", "_result_idx", "_result_generator", "_construct_result"):
                clone.__dict__[k] = None
            elif k == "_batch":
                clone.__dict__[k] = self._batch
            elif k == "_timeout":
                clone.__dict__[k] = self._timeout
            else:
                clone.__dict__[k] = copy.deepcopy(v, memo)
        return clone

    def __len__(self):
        self._execute_query()
        return self.count()

    def _select_fields(self):
        return []

    def _validate_select_where(self):
        pass

    def _select_query(self):
        if self._where:
            self._validate_select_where()
        return SelectStatement(
            self.column_family_name,
            fields=self._select_fields(),
            where=self._where,
            order_by=self._order,
            limit=self._limit,
            allow_filtering=self._allow_filtering,
            distinct_fields=self._distinct_fields,
            fetch_size=self._fetch_size,
        )

    def _execute_query(self):
        if self._batch:
            raise CQLEngineException("Only inserts, updates, and deletes are available in batch mode")
        if self._result_cache is None:
            self._result_generator = (i for i in self._execute(self._select_query()))
            self._result_cache = []
            self._construct_result = self._maybe_inject_deferred(self._get_result_constructor())
            if self._materialize_results or self._distinct_fields:
                self._fill_result_cache()

    def _fill_result_cache(self):
        idx = 0
        try:
            while True:
                idx += 1000
                self._fill_result_cache_to_idx(idx)
        except StopIteration:
            pass
        self._count = len(self._result_cache)

    def _fill_result_cache_to_idx(self, idx):
        self._execute_query()
        if self._result_idx is None:
            self._result_idx = -1
        qty = idx - self._result_idx
        if qty < 1:
            return
        for _ in range(qty):
            self._result_idx += 1
            while True:
                try:
                    self._result_cache[self._result_idx] = self._construct_result(self._result_cache[self._result_idx])
                    break
                except IndexError:
                    self._result_cache.append(next(self._result_generator))

    def __iter__(self):
        self._execute_query()
        idx = 0
        while True:
            if len(self._result_cache) <= idx:
                try:
                    self._result_cache.append(next(self._result_generator))
                except StopIteration:
                    break
            instance = self._result_cache[idx]
            if isinstance(instance, dict):
                self._fill_result_cache_to_idx(idx)
            yield self._result_cache[idx]
            idx += 1

    def __getitem__(self, s):
        self._execute_query()
        if isinstance(s, slice):
            start = s.start if s.start else 0
            if start < 0 or (s.stop is not None and s.stop < 0):
                warnings.warn(
                    "ModelQuerySet slicing with negative indices support will be removed in 4.0.",
                    DeprecationWarning,
                    stacklevel=2,
                )
                self._fill_result_cache()
            else:
                end = s.stop if s.stop is not None else None
                if end is None:
                    self._fill_result_cache()
                else:
                    try:
                        self._fill_result_cache_to_idx(end)
                    except StopIteration:
                        pass
            return self._result_cache[start : s.stop : s.step]
        try:
            s = int(s)
        except (ValueError, TypeError):
            raise TypeError("QuerySet indices must be integers") from None
        if s < 0:
            warnings.warn(
                "ModelQuerySet indexing with negative indices support will be removed in 4.0.",
                DeprecationWarning,
                stacklevel=2,
            )
            self._fill_result_cache()
        else:
            try:
                self._fill_result_cache_to_idx(s)
            except StopIteration:
                raise IndexError from None
        return self._result_cache[s]

    def _get_result_constructor(self):
        raise NotImplementedError

    @staticmethod
    def _construct_with_deferred(f, deferred, row):
        row.update(deferred)
        return f(row)

    def _maybe_inject_deferred(self, constructor):
        if self._deferred_values:
            deferred = dict(self._deferred_values)
            return lambda row: AbstractQuerySet._construct_with_deferred(constructor, deferred, row)
        return constructor

    def batch(self, batch_obj):
        """The query set's writes go to ``batch_obj`` (a BatchQuery) instead of running."""
        from turbocql.cqlengine._querybase import BatchQuery

        if self._connection:
            raise CQLEngineException("Cannot specify the connection on model in batch mode.")
        if batch_obj is not None and not isinstance(batch_obj, BatchQuery):
            raise CQLEngineException("batch_obj must be a BatchQuery instance or None")
        clone = copy.deepcopy(self)
        clone._batch = batch_obj
        return clone

    def first(self):
        try:
            return next(iter(self))
        except StopIteration:
            return None

    def all(self):
        return copy.deepcopy(self)

    def consistency(self, consistency):
        clone = copy.deepcopy(self)
        clone._consistency = consistency
        return clone

    def _parse_filter_arg(self, arg):
        statement = arg.rsplit("__", 1)
        if len(statement) == 1:
            return arg, None
        if len(statement) == 2:
            if statement[1].upper() in BaseWhereOperator.opmap:
                return statement[0], statement[1]
            return arg, None
        raise QueryException(f"Can't parse '{arg}'")

    def iff(self, *args, **kwargs):
        """Only if the row's current values match (a lightweight transaction)."""
        if len([x for x in kwargs.values() if x is None]):
            raise CQLEngineException("None values on iff are not allowed")
        clone = copy.deepcopy(self)
        for operator in args:
            if not isinstance(operator, ConditionalClause):
                raise QueryException(f"{operator} is not a valid query operator")
            clone._conditional.append(operator)
        for arg, val in kwargs.items():
            if isinstance(val, Token):
                raise QueryException("Token() values are not valid in conditionals")
            col_name, col_op = self._parse_filter_arg(arg)
            try:
                column = self.model._get_column(col_name)
            except KeyError:
                raise QueryException(f"Can't resolve column name: '{col_name}'") from None
            if isinstance(val, BaseQueryFunctionTypes):
                query_val = val
            else:
                query_val = column.to_database(val)
            operator = BaseWhereOperator.get_operator(col_op or "EQ")()
            clone._conditional.append(ConditionalClause(column.db_field_name, query_val, operator))
        return clone

    def filter(self, *args, **kwargs):
        """Adds WHERE conditions: ``col=v``, ``col__op=v`` (in, gt, gte, lt, lte, ne,
        contains, like) or expressions (``Model.col > v``)."""
        if len([x for x in kwargs.values() if x is None]):
            raise CQLEngineException("None values on filter are not allowed")
        clone = copy.deepcopy(self)
        for operator in args:
            if not isinstance(operator, WhereClause):
                raise QueryException(f"{operator} is not a valid query operator")
            clone._where.append(operator)
        for arg, val in kwargs.items():
            col_name, col_op = self._parse_filter_arg(arg)
            quote_field = True
            if not isinstance(val, Token):
                try:
                    column = self.model._get_column(col_name)
                except KeyError:
                    raise QueryException(f"Can't resolve column name: '{col_name}'") from None
            else:
                if col_name != "pk__token":
                    raise QueryException("Token() values may only be compared to the 'pk__token' virtual column")
                column = columns._PartitionKeysToken(self.model)
                quote_field = False
                partition_columns = column.partition_columns
                if len(partition_columns) != len(val.value):
                    raise QueryException(
                        f"Token() received {len(val.value)} arguments but model has {len(partition_columns)} "
                        f"partition keys"
                    )
                val.set_columns(partition_columns)
            operator_class = BaseWhereOperator.get_operator(col_op or "EQ")
            operator = operator_class()
            if isinstance(operator, InOperator):
                if not isinstance(val, (list, tuple)):
                    raise QueryException("IN queries must use a list/tuple value")
                query_val = [column.to_database(v) for v in val]
            elif isinstance(val, BaseQueryFunctionTypes):
                query_val = val
            elif isinstance(operator, _ContainsOp) and isinstance(column, (columns.List, columns.Set)):
                query_val = column.value_col.to_database(val)
            elif isinstance(operator, _ContainsOp) and isinstance(column, columns.Map):
                query_val = column.value_col.to_database(val)
            else:
                query_val = column.to_database(val)
                if not col_op:
                    clone._defer_fields.add(column.db_field_name)
                    clone._deferred_values[column.db_field_name] = val
            clone._where.append(WhereClause(column.db_field_name, operator, query_val, quote_field=quote_field))
        return clone

    def get(self, *args, **kwargs):
        """The one row the filters select (DoesNotExist, MultipleObjectsReturned)."""
        if args or kwargs:
            return self.filter(*args, **kwargs).get()
        self._execute_query()
        try:
            self[1]
            raise self.model.MultipleObjectsReturned("Multiple objects found")
        except IndexError:
            pass
        try:
            obj = self[0]
        except IndexError:
            raise self.model.DoesNotExist from None
        return obj

    def _get_ordering_condition(self, colname):
        order_type = "DESC" if colname.startswith("-") else "ASC"
        colname = colname.lstrip("-")
        return colname, order_type

    def order_by(self, *colnames):
        """ORDER BY clustering columns (``-col`` descending)."""
        if len(colnames) == 0:
            clone = copy.deepcopy(self)
            clone._order = []
            return clone
        conditions = []
        for colname in colnames:
            conditions.append('"{}" {}'.format(*self._get_ordering_condition(colname)))
        clone = copy.deepcopy(self)
        clone._order.extend(conditions)
        return clone

    def count(self):
        """The number of rows selected (a COUNT query unless already fetched)."""
        if self._batch:
            raise CQLEngineException("Only inserts, updates, and deletes are available in batch mode")
        if self._count is None:
            query = self._select_query()
            query.count = True
            result = self._execute(query)
            count_row = result.one().popitem()
            self._count = count_row[1]
        return self._count

    def distinct(self, distinct_fields=None):
        """SELECT DISTINCT of the partition keys (or ``distinct_fields``)."""
        clone = copy.deepcopy(self)
        if distinct_fields:
            clone._distinct_fields = distinct_fields
        else:
            clone._distinct_fields = [x.column_name for x in self.model._partition_keys.values()]
        return clone

    def limit(self, v):
        """At most ``v`` rows (None or 0: no limit)."""
        if v is None:
            v = 0
        if not isinstance(v, int):
            raise TypeError
        if v == self._limit:
            return self
        if v < 0:
            raise QueryException("Negative limit is not allowed")
        clone = copy.deepcopy(self)
        clone._limit = v
        return clone

    def fetch_size(self, v):
        if not isinstance(v, int):
            raise TypeError
        if v == self._fetch_size:
            return self
        if v < 1:
            raise QueryException("fetch size less than 1 is not allowed")
        clone = copy.deepcopy(self)
        clone._fetch_size = v
        return clone

    def allow_filtering(self):
        clone = copy.deepcopy(self)
        clone._allow_filtering = True
        return clone

    def _only_or_defer(self, action, fields):
        if action == "only" and self._only_fields:
            raise QueryException("QuerySet already has 'only' fields defined")
        clone = copy.deepcopy(self)
        missing = set(fields) - set(self.model._columns.keys())
        if missing:
            raise QueryException(
                "Can't resolve fields {} in {}".format(", ".join(sorted(missing)), self.model.__name__)
            )
        fields = [self.model._columns[field].db_field_name for field in fields]
        if action == "defer":
            clone._defer_fields.update(fields)
        elif action == "only":
            clone._only_fields = fields
        return clone

    def only(self, fields):
        return self._only_or_defer("only", fields)

    def defer(self, fields):
        return self._only_or_defer("defer", fields)

    def create(self, **kwargs):
        return (
            self.model(**kwargs)
            .batch(self._batch)
            .ttl(self._ttl)
            .consistency(self._consistency)
            .if_not_exists(self._if_not_exists)
            .timestamp(self._timestamp)
            .if_exists(self._if_exists)
            .using(keyspace=self._keyspace, connection=self._connection)
            .save()
        )

    def delete(self):
        """Deletes every row the filters select."""
        partition_keys = set(x.db_field_name for x in self.model._partition_keys.values())
        if partition_keys - set(c.field for c in self._where):
            raise QueryException("The partition key must be defined on delete queries")
        dq = DeleteStatement(
            self.column_family_name,
            where=self._where,
            timestamp=self._timestamp,
            conditionals=self._conditional,
            if_exists=self._if_exists,
        )
        self._execute(dq)

    def __eq__(self, q):
        if len(self._where) == len(q._where):
            return all(w in q._where for w in self._where)
        return False

    def __ne__(self, q):
        return not (self != q)

    __hash__ = object.__hash__

    def timeout(self, timeout):
        clone = copy.deepcopy(self)
        clone._timeout = timeout
        return clone

    def using(self, keyspace=None, connection=None):
        """The query set on ``keyspace`` and/or ``connection``."""
        if connection and self._batch:
            raise CQLEngineException("Cannot specify a connection on a model in batch mode.")
        clone = copy.deepcopy(self)
        if keyspace:
            clone._keyspace = keyspace
        if connection:
            clone._connection = connection
        return clone


def _run(statement, consistency, timeout, conn):
    return connection.execute(statement, consistency_level=consistency, timeout=timeout, connection=conn)


_ContainsOp = __import__("turbocql.cqlengine.operators", fromlist=["ContainsOperator"]).ContainsOperator
BaseQueryFunctionTypes = (QueryValue,)


class ResultObject(dict):
    """A row as a dict whose keys are also attributes."""

    def __getattr__(self, item):
        try:
            return self[item]
        except KeyError:
            raise AttributeError from None


class SimpleQuerySet(AbstractQuerySet):
    """A query set of rows as ResultObjects (NamedTable's)."""

    def _get_result_constructor(self):
        return ResultObject


__all__ = [
    "EqualsOperator",
    "DoesNotExist",
    "MultipleObjectsReturned",
    "IfExistsWithCounterColumn",
    "IfNotExistsWithCounterColumn",
    "ValidationError",
    "AbstractQueryableColumn",
    "UpdateStatement",
]
