"""CQL statements cqlengine builds: SELECT, INSERT, UPDATE, DELETE and their clauses.

A statement holds clauses; each clause binds its values as ``%(n)s`` markers numbered from
the statement's ``context_id`` (``get_context()`` is the parameters, ``str()`` the CQL).
"""

import time
from datetime import datetime, timedelta

from turbocql._util.homes import publish as _publish
from turbocql.cqlengine import UnicodeMixin
from turbocql.cqlengine._clauses import (
    AssignmentClause,
    BaseClause,
    FieldDeleteClause,
    ListUpdateClause,
    MapDeleteClause,
    MapUpdateClause,
    SetUpdateClause,
)
from turbocql.cqlengine.functions import QueryValue
from turbocql.cqlengine.operators import BaseWhereOperator, EqualsOperator, InOperator
from turbocql.query import FETCH_SIZE_UNSET


class StatementException(Exception):
    pass


class ValueQuoter(UnicodeMixin):
    def __init__(self, value):
        self.value = value

    def __unicode__(self):
        from turbocql.encoder import cql_quote

        if isinstance(self.value, (list, tuple)):
            return "[" + ", ".join(cql_quote(v) for v in self.value) + "]"
        if isinstance(self.value, dict):
            return "{" + ", ".join(cql_quote(k) + ": " + cql_quote(v) for k, v in self.value.items()) + "}"
        if isinstance(self.value, set):
            return "{" + ", ".join(cql_quote(v) for v in self.value) + "}"
        return cql_quote(self.value)

    def __eq__(self, other):
        return isinstance(other, self.__class__) and self.value == other.value


class InQuoter(ValueQuoter):
    def __unicode__(self):
        from turbocql.encoder import cql_quote

        return "(" + ", ".join(cql_quote(v) for v in self.value) + ")"


class WhereClause(BaseClause):
    """``"field" <operator> value``; the value may be a ``QueryValue`` (a function)."""

    def __init__(self, field, operator, value, quote_field=True):
        if not isinstance(operator, BaseWhereOperator):
            raise StatementException(f"operator must be of type {BaseWhereOperator}, got {type(operator)}")
        super().__init__(field, value)
        self.operator = operator
        self.query_value = self.value if isinstance(self.value, QueryValue) else QueryValue(self.value)
        self.quote_field = quote_field

    def __unicode__(self):
        field = ('"{0}"' if self.quote_field else "{0}").format(self.field)
        return f"{field} {self.operator} {str(self.query_value)}"

    def __hash__(self):
        return super().__hash__() ^ hash(self.operator)

    def __eq__(self, other):
        return super().__eq__(other) and self.operator.__class__ == other.operator.__class__

    def get_context_size(self):
        return self.query_value.get_context_size()

    def set_context_id(self, i):
        super().set_context_id(i)
        self.query_value.set_context_id(i)

    def update_context(self, ctx):
        if isinstance(self.operator, InOperator):
            ctx[str(self.context_id)] = tuple(self.value)
        else:
            self.query_value.update_context(ctx)


class ConditionalClause(WhereClause):
    """An ``IF "field" <op> value`` condition of a lightweight transaction (``=`` unless
    ``operator`` says otherwise)."""

    def __init__(self, field, value, operator=None):
        super().__init__(field, operator if operator is not None else EqualsOperator(), value)


class CounterUpdateClause(AssignmentClause):
    """``"c" = "c" + n`` (or ``-``), the difference from ``previous``."""

    def __init__(self, field, value, previous=None):
        super().__init__(field, value)
        self.previous = previous or 0

    def get_context_size(self):
        return 1

    def update_context(self, ctx):
        ctx[str(self.context_id)] = abs(self.value - self.previous)

    def __unicode__(self):
        delta = self.value - self.previous
        sign = "-" if delta < 0 else "+"
        return f'"{self.field}" = "{self.field}" {sign} %({self.context_id})s'


class CollectionOpClause(AssignmentClause):
    """``"f" = "f" + v``, ``"f" = v + "f"``, ``"f" = "f" - v``, ``"f"[k] = v``..."""

    def __init__(self, field, value, op):
        super().__init__(field, value)
        self.op = op

    def get_context_size(self):
        return 2 if self.op == "setitem" else 1

    def update_context(self, ctx):
        if self.op == "setitem":
            ctx[str(self.context_id)] = self.value[0]
            ctx[str(self.context_id + 1)] = self.value[1]
        else:
            ctx[str(self.context_id)] = self.value

    def __unicode__(self):
        f, c = self.field, self.context_id
        if self.op == "append":
            return f'"{f}" = "{f}" + %({c})s'
        if self.op == "prepend":
            return f'"{f}" = %({c})s + "{f}"'
        if self.op == "remove":
            return f'"{f}" = "{f}" - %({c})s'
        if self.op == "setitem":
            return f'"{f}"[%({c})s] = %({c + 1})s'
        return f'"{f}" = %({c})s'


class BaseCQLStatement(UnicodeMixin):
    """What every statement has: a table, WHERE clauses, conditions, consistency, timestamp."""

    def __init__(self, table, timestamp=None, where=None, fetch_size=None, conditionals=None):
        self.table = table
        self.context_id = 0
        self.context_counter = self.context_id
        self.timestamp = timestamp
        self.fetch_size = fetch_size if fetch_size else FETCH_SIZE_UNSET
        self.where_clauses = []
        for clause in where or []:
            self._add_where_clause(clause)
        self.conditionals = []
        for c in conditionals or []:
            self.add_conditional_clause(c)

    def _update_part_key_values(self, field_index_map, clauses, parts):
        for clause in filter(lambda c: c.field in field_index_map, clauses):
            parts[field_index_map[clause.field]] = clause.value

    def partition_key_values(self, field_index_map):
        parts = [None] * len(field_index_map)
        self._update_part_key_values(
            field_index_map, (w for w in self.where_clauses if w.operator.__class__ == EqualsOperator), parts
        )
        return parts

    def add_where(self, column, operator, value, quote_field=True):
        value = (
            column.to_database(value)
            if not isinstance(value, QueryValue) and not isinstance(operator, InOperator)
            else value
        )
        if isinstance(operator, InOperator) and not isinstance(value, QueryValue):
            value = [column.to_database(v) for v in value]
        self._add_where_clause(WhereClause(column.db_field_name, operator, value, quote_field))

    def _add_where_clause(self, clause):
        clause.set_context_id(self.context_counter)
        self.context_counter += clause.get_context_size()
        self.where_clauses.append(clause)

    def get_context(self):
        ctx = {}
        for clause in self.where_clauses or []:
            clause.update_context(ctx)
        return ctx

    def add_conditional_clause(self, clause):
        clause.set_context_id(self.context_counter)
        self.context_counter += clause.get_context_size()
        self.conditionals.append(clause)

    def _get_conditionals(self):
        return "IF {}".format(" AND ".join(str(c) for c in self.conditionals))

    def get_context_size(self):
        return len(self.get_context())

    def update_context_id(self, i):
        self.context_id = i
        self.context_counter = self.context_id
        for clause in self.where_clauses:
            clause.set_context_id(self.context_counter)
            self.context_counter += clause.get_context_size()

    @property
    def timestamp_normalized(self):
        """The timestamp in microseconds since the epoch (a timedelta is from now)."""
        if not self.timestamp:
            return None
        if isinstance(self.timestamp, int):
            return self.timestamp
        if isinstance(self.timestamp, timedelta):
            tmp = datetime.now() + self.timestamp
        else:
            tmp = self.timestamp
        return int(time.mktime(tmp.timetuple()) * 1e6 + tmp.microsecond)

    def __unicode__(self):
        raise NotImplementedError

    def __repr__(self):
        return self.__unicode__()

    @property
    def _where(self):
        return "WHERE {}".format(" AND ".join(str(c) for c in self.where_clauses))


class SelectStatement(BaseCQLStatement):
    """``SELECT fields|COUNT(*)|DISTINCT ... FROM table [WHERE] [ORDER BY] [LIMIT] [ALLOW FILTERING]``."""

    def __init__(
        self,
        table,
        fields=None,
        count=False,
        where=None,
        order_by=None,
        limit=None,
        allow_filtering=False,
        distinct_fields=None,
        fetch_size=None,
    ):
        super().__init__(table, where=where, fetch_size=fetch_size)
        self.fields = [fields] if isinstance(fields, str) else (fields or [])
        self.distinct_fields = distinct_fields
        self.count = count
        self.order_by = [order_by] if isinstance(order_by, str) else order_by
        self.limit = limit
        self.allow_filtering = allow_filtering

    def __unicode__(self):
        qs = ["SELECT"]
        if self.distinct_fields:
            if self.count:
                qs += ["DISTINCT COUNT({})".format(", ".join([f'"{f}"' for f in self.distinct_fields]))]
            else:
                qs += ["DISTINCT {}".format(", ".join([f'"{f}"' for f in self.distinct_fields]))]
        elif self.count:
            qs += ["COUNT(*)"]
        else:
            qs += [", ".join([f'"{f}"' for f in self.fields]) if self.fields else "*"]
        qs += ["FROM", self.table]
        if self.where_clauses:
            qs += [self._where]
        if self.order_by and not self.count:
            qs += ["ORDER BY {}".format(", ".join(str(o) for o in self.order_by))]
        if self.limit:
            qs += [f"LIMIT {self.limit}"]
        if self.allow_filtering:
            qs += ["ALLOW FILTERING"]
        return " ".join(qs)


class AssignmentStatement(BaseCQLStatement):
    """A statement that writes values: INSERT or UPDATE."""

    def __init__(self, table, assignments=None, where=None, ttl=None, timestamp=None, conditionals=None):
        super().__init__(table, where=where, conditionals=conditionals)
        self.ttl = ttl
        self.timestamp = timestamp
        self.assignments = []
        for a in assignments or []:
            self._add_assignment_clause(a)

    def update_context_id(self, i):
        super().update_context_id(i)
        for a in self.assignments:
            a.set_context_id(self.context_counter)
            self.context_counter += a.get_context_size()
        for c in self.conditionals:
            c.set_context_id(self.context_counter)
            self.context_counter += c.get_context_size()

    def add_assignment(self, column, value):
        value = column.to_database(value)
        self._add_assignment_clause(AssignmentClause(column.db_field_name, value))

    def _add_assignment_clause(self, clause):
        clause.set_context_id(self.context_counter)
        self.context_counter += clause.get_context_size()
        self.assignments.append(clause)

    @property
    def is_empty(self):
        return len(self.assignments) == 0

    def get_context(self):
        ctx = super().get_context()
        for clause in self.assignments:
            clause.update_context(ctx)
        for clause in self.conditionals:
            clause.update_context(ctx)
        return ctx

    def _using(self):
        parts = []
        if self.ttl is not None:
            parts.append(f"TTL {self.ttl}")
        if self.timestamp:
            parts.append(f"TIMESTAMP {self.timestamp_normalized}")
        return ("USING " + " AND ".join(parts)) if parts else None


class InsertStatement(AssignmentStatement):
    """``INSERT INTO table (cols) VALUES (...) [IF NOT EXISTS] [USING ...]``."""

    def __init__(self, table, assignments=None, where=None, ttl=None, timestamp=None, if_not_exists=False):
        super().__init__(table, assignments=assignments, where=where, ttl=ttl, timestamp=timestamp)
        self.if_not_exists = if_not_exists

    def __unicode__(self):
        cols = ", ".join(f'"{a.field}"' for a in self.assignments)
        vals = ", ".join(f"%({a.context_id})s" for a in self.assignments)
        qs = [f"INSERT INTO {self.table} ({cols}) VALUES ({vals})"]
        if self.if_not_exists:
            qs += ["IF NOT EXISTS"]
        using = self._using()
        if using:
            qs += [using]
        return " ".join(qs)


class UpdateStatement(AssignmentStatement):
    """``UPDATE table [USING ...] SET ... WHERE ... [IF ...|IF EXISTS]``."""

    def __init__(
        self, table, assignments=None, where=None, ttl=None, timestamp=None, conditionals=None, if_exists=False
    ):
        super().__init__(
            table, assignments=assignments, where=where, ttl=ttl, timestamp=timestamp, conditionals=conditionals
        )
        self.if_exists = if_exists

    def __unicode__(self):
        qs = ["UPDATE", self.table]
        using = self._using()
        if using:
            qs += [using]
        qs += ["SET", ", ".join(str(a) for a in self.assignments)]
        if self.where_clauses:
            qs += [self._where]
        if self.conditionals:
            qs += [self._get_conditionals()]
        if self.if_exists:
            qs += ["IF EXISTS"]
        return " ".join(qs)

    def add_update(self, column, value, operation=None, previous=None):
        """Adds the assignment of one column: a counter by its difference from ``previous``,
        a collection by what changed (or by ``operation``: add, remove, append, prepend,
        update); nothing when there is nothing to write."""
        from turbocql.cqlengine import columns

        if operation not in ("setitem",):
            value = column.to_database(value)
        name = column.db_field_name
        if isinstance(column, columns.Counter):
            clause = CounterUpdateClause(name, value, previous)
        elif operation == "setitem":
            clause = CollectionOpClause(name, value, operation)
        elif isinstance(column, columns.Set):
            op = {"append": "add"}.get(operation, operation)
            clause = SetUpdateClause(name, value, op, previous)
        elif isinstance(column, columns.List):
            op = operation if operation in ("append", "prepend") else None
            if operation == "remove":
                clause = CollectionOpClause(name, value, "remove")
            else:
                clause = ListUpdateClause(name, value, op, previous)
        elif isinstance(column, columns.Map) and operation == "remove":
            clause = CollectionOpClause(name, set(value), "remove")  # value: {key: None}
        elif isinstance(column, columns.Map):
            op = "update" if operation in ("append", "update") else None
            clause = MapUpdateClause(name, value, op, previous)
        elif operation:
            clause = CollectionOpClause(name, value, operation)
        else:
            clause = AssignmentClause(name, value)
        if clause.get_context_size() > 0 or isinstance(clause, (AssignmentClause,)) and not hasattr(clause, "_analyze"):
            self._add_assignment_clause(clause)


class DeleteStatement(BaseCQLStatement):
    """``DELETE [fields] FROM table [USING TIMESTAMP] WHERE ... [IF ...|IF EXISTS]``."""

    def __init__(self, table, fields=None, where=None, timestamp=None, conditionals=None, if_exists=False):
        super().__init__(table, timestamp=timestamp, where=where, conditionals=conditionals)
        self.fields = []
        if isinstance(fields, str):
            fields = [fields]
        for f in fields or []:
            self.add_field(f)
        self.if_exists = if_exists

    def update_context_id(self, i):
        super().update_context_id(i)
        for f in self.fields:
            f.set_context_id(self.context_counter)
            self.context_counter += f.get_context_size()
        for c in self.conditionals:
            c.set_context_id(self.context_counter)
            self.context_counter += c.get_context_size()

    def get_context(self):
        ctx = super().get_context()
        for f in self.fields:
            f.update_context(ctx)
        for c in self.conditionals:
            c.update_context(ctx)
        return ctx

    def add_field(self, field, keys=None):
        if isinstance(field, str):
            field = FieldDeleteClause(field, keys)
        if not isinstance(field, BaseClause):
            raise StatementException("only instances of AssignmentClause can be added to statements")
        field.set_context_id(self.context_counter)
        self.context_counter += field.get_context_size()
        self.fields.append(field)

    def __unicode__(self):
        qs = ["DELETE"]
        if self.fields:
            qs += [", ".join(str(f) for f in self.fields)]
        qs += ["FROM", self.table]
        if self.timestamp:
            qs += [f"USING TIMESTAMP {self.timestamp_normalized}"]
        if self.where_clauses:
            qs += [self._where]
        if self.conditionals:
            qs += [self._get_conditionals()]
        if self.if_exists:
            qs += ["IF EXISTS"]
        return " ".join(qs)


class IsNotNull(WhereClause):
    """``"field" IS NOT NULL``: no bound value."""

    def __init__(self, field):
        from turbocql.cqlengine.operators import IsNotNullOperator

        super().__init__(field, IsNotNullOperator(), "")

    def __unicode__(self):
        return f'"{self.field}" {self.operator}'

    def update_context(self, ctx):
        pass

    def get_context_size(self):
        return 0


__all__ = ["MapDeleteClause"]


# This module is the home of the classic clause classes of turbocql.cqlengine._clauses (reprs
# and docs name turbocql.cqlengine.statements).
_publish(
    __name__,
    [
        "AssignmentClause",
        "BaseClause",
        "FieldDeleteClause",
        "ListUpdateClause",
        "MapDeleteClause",
        "MapUpdateClause",
        "SetUpdateClause",
    ],
)
