"""Reading a table into Spark: the table's description (columns, keys, parsed types), the
filters pushed into the CQL SELECT, the input partitions (shares of the token ring, or the
one partition an equality on the whole partition key names) and the read of each, by the
engine into Arrow, converted column by column to Spark's Arrow types."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.datasource import (
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    InputPartition,
    IsNotNull,
    LessThan,
    LessThanOrEqual,
)

from turbocql.bulk import _ring, _table
from turbocql.metadata import protect_name
from turbocql.spark import _types
from turbocql.spark._options import Options


@dataclass(frozen=True)
class TableInfo:
    table: _table.Table
    types: dict[str, _types.CqlType]


def describe(session, keyspace: str, table: str) -> TableInfo:
    """``keyspace.table``'s columns and their parsed types (a column Spark cannot hold:
    ``ValueError`` naming it)."""
    meta = _table.lookup(session, keyspace, table)
    ks = session.cluster.metadata.keyspaces[keyspace]

    def user_type(name: str):
        ut = ks.user_types.get(name)
        return None if ut is None else (list(ut.field_names), list(ut.field_types))

    types = {}
    for col, cql in meta.columns.items():
        try:
            types[col] = _types.parse(cql, user_type)
        except ValueError as e:
            raise ValueError("column %s of %s: %s" % (col, meta.qualified, e)) from None
    return TableInfo(meta, types)


def spark_schema(info: TableInfo):
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(c, _types.spark_type(t), nullable=True) for c, t in info.types.items()])


@dataclass
class TokenShare(InputPartition):
    """One input partition: its token ranges ``(start, end]`` (None: no token range, a read
    of the partition the SELECT's key equalities name), the SELECT (recorded here so that
    what each partition asked the server is visible) and its bound values after the range."""

    index: int
    ranges: list[tuple[int, int]] | None
    cql: str
    values: tuple[Any, ...] = ()


# Pushable CQL native types -> the Python type of a filter's value for them; ranges of
# text forms (uuid, decimal, varint, inet) compare differently in Spark and Cassandra, so
# only those listed push ranges.
_INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64, "time": 64}
_RANGE_TYPES = {"ascii", "text", "varchar", "float", "double", "boolean", "date", "timestamp", "blob"} | set(
    _INT_RANGES
)
_EQUAL_ONLY_TYPES = {"uuid", "timeuuid"}
_COMPARE = {GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<", LessThanOrEqual: "<="}


def _bind_value(t: _types.CqlType, op: str, value: Any) -> tuple[bool, Any]:
    """(pushable, the value to bind) for a filter ``op`` on a column of type ``t``: only
    values whose comparison means the same to the server as to Spark."""
    name = t.name
    if not t.native or value is None:
        return False, None
    if name in _EQUAL_ONLY_TYPES:
        if op != "=" or not isinstance(value, str):
            return False, None
        try:
            u = uuid.UUID(value)
        except ValueError:
            return False, None
        # Spark compares the text: only the canonical form names the same rows.
        return (str(u) == value and (name == "uuid" or u.version == 1)), u
    if name not in _RANGE_TYPES:
        return False, None
    if name in _INT_RANGES:
        bits = _INT_RANGES[name]
        ok = type(value) is int and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
        if name == "time":
            ok = ok and 0 <= value < 86_400_000_000_000
        return ok, value
    if name in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool), float(value)
    if name == "boolean":
        return isinstance(value, bool), value
    if name in ("ascii", "text", "varchar"):
        return isinstance(value, str), value
    if name == "blob":
        return isinstance(value, (bytes, bytearray)), bytes(value) if isinstance(value, (bytes, bytearray)) else None
    if name == "date":
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime), value
    if name == "timestamp":
        # The server keeps milliseconds: a bound with finer digits would move the bound.
        if not isinstance(value, datetime.datetime) or value.microsecond % 1000:
            return False, None
        if value.tzinfo is None:
            # Spark hands a TimestampType literal as a naive datetime in the local time
            # zone of the Python worker (as pyspark's own conversion does).
            value = value.astimezone()
        return True, value.astimezone(datetime.UTC)
    return False, None  # pragma: no cover - every _RANGE_TYPES name is handled above


@dataclass
class _Pushed:
    conditions: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)

    def add(self, column: str, op: str, value: Any) -> None:
        self.conditions.append("%s %s ?" % (protect_name(column), op))
        self.values.append(value)


class TableReader(DataSourceReader):
    """Reads ``schema``'s columns (pruned to them: the schema the user gives, or all) of the
    table; ``pushFilters`` is defined by :class:`PushdownReader` only, since Spark refuses a
    reader that defines it while ``spark.sql.python.filterPushdown.enabled`` is off."""

    def __init__(self, opts: Options, info: TableInfo, schema):
        from pyspark.sql.types import StructType

        assert isinstance(schema, StructType)
        self.opts = opts
        self.info = info
        expected = spark_schema(info)
        by_name = {f.name: f for f in expected.fields}
        for f in schema.fields:
            if f.name not in by_name:
                raise ValueError(
                    "%s has no column %s (its columns: %s)"
                    % (info.table.qualified, f.name, ", ".join(info.table.columns))
                )
            if f.dataType.simpleString() != by_name[f.name].dataType.simpleString():
                raise ValueError(
                    "column %s of %s is read as %s, not %s"
                    % (
                        f.name,
                        info.table.qualified,
                        by_name[f.name].dataType.simpleString(),
                        f.dataType.simpleString(),
                    )
                )
        if not schema.fields:
            raise ValueError("a read of %s needs at least one column" % info.table.qualified)
        self.schema = schema
        self.columns = [f.name for f in schema.fields]
        self.key_values: dict[str, Any] | None = None  # the whole partition key's equalities
        self.pushed = _Pushed()
        self.needs_filtering = False

    def _select(self) -> tuple[str, list[Any]]:
        t = self.info.table
        if self.key_values is not None:
            key = _Pushed()
            for c in t.partition_key:
                key.add(c, "=", self.key_values[c])
            where = " AND ".join(key.conditions + self.pushed.conditions)
            cql = _table.select_cql(t, self.columns, where, numbers_as_text=True)
            values = key.values + self.pushed.values
        else:
            cql = _table.range_select_cql(
                t, self.columns, " AND ".join(self.pushed.conditions) or None, numbers_as_text=True
            )
            values = list(self.pushed.values)
        if self.needs_filtering:
            cql += " ALLOW FILTERING"
        return cql, values

    def partitions(self) -> list[InputPartition]:
        cql, values = self._select()
        if self.key_values is not None:
            return [TokenShare(0, None, cql, tuple(values))]
        n = self.opts.split
        return [
            TokenShare(i - 1, _ring.token_ranges(self.opts.ranges_per_split, (i, n)), cql, tuple(values))
            for i in range(1, n + 1)
        ]

    def read(self, partition) -> Iterator[Any]:
        from pyspark.sql.pandas.types import to_arrow_schema

        from turbocql.query import arrow_factory

        assert isinstance(partition, TokenShare)
        session = self.opts.connection.session()
        select = session.prepare(partition.cql)
        select.fetch_size = self.opts.page_size
        if self.opts.consistency is not None:
            select.consistency_level = self.opts.consistency
        profile = session._derived_profile(row_factory=arrow_factory)
        target = to_arrow_schema(self.schema, timezone="UTC")
        work: list[tuple[Any, ...]] = (
            [tuple(partition.values)]
            if partition.ranges is None
            else [(lo, hi, *partition.values) for lo, hi in partition.ranges]
        )
        for params in work:
            rs = session.execute(select, params, execution_profile=profile)
            while True:
                for batch in rs.current_rows:
                    if batch.num_rows:
                        yield self._convert(batch, target)
                if not rs.has_more_pages:
                    break
                rs.fetch_next_page()

    def _convert(self, batch, target):
        import pyarrow as pa

        arrays = []
        for f in target:
            arr = _types.to_spark(batch.column(f.name), self.info.types[f.name])
            arrays.append(arr if arr.type == f.type else arr.cast(f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=target)


class PushdownReader(TableReader):
    """A :class:`TableReader` that pushes simple filters into the SELECT.

    * every partition key column ``=`` a value: one input partition, a read of that
      partition instead of the ring;
    * clustering columns, in order, ``=`` then at most one range: pushed in that read
      (in a ring scan the server needs ALLOW FILTERING for them, so only with
      ``allow_filtering=true``);
    * other columns' ``=``, ``<``, ``<=``, ``>``, ``>=``: only with ``allow_filtering=true``;
    * ``IS NOT NULL`` of a key column (never null): dropped.

    Everything else is left for Spark, which applies it to the rows read."""

    def pushFilters(self, filters):
        t = self.info.table
        key_cols = set(t.partition_key) | set(t.clustering_key)
        left: list[Any] = []
        simple: list[tuple[Any, str, str, Any]] = []  # (filter, column, op, bound value)
        for f in filters:
            if isinstance(f, IsNotNull) and len(f.attribute) == 1 and f.attribute[0] in key_cols:
                continue
            op = "=" if isinstance(f, EqualTo) else _COMPARE.get(type(f))
            if op is None or len(f.attribute) != 1 or f.attribute[0] not in self.info.types:
                left.append(f)
                continue
            col = f.attribute[0]
            ok, value = _bind_value(self.info.types[col], op, f.value)
            if ok:
                simple.append((f, col, op, value))
            else:
                left.append(f)
        used: set[int] = set()
        key: dict[str, Any] = {}
        for f, col, op, value in simple:
            if op == "=" and col in t.partition_key and col not in key:
                key[col] = value
                used.add(id(f))
        if len(key) == len(t.partition_key):
            self.key_values = key
        else:
            used.clear()
        allow = self.opts.allow_filtering
        if self.key_values is not None or allow:
            for col in t.clustering_key:
                mine = [s for s in simple if s[1] == col and id(s[0]) not in used]
                eq = [s for s in mine if s[2] == "="]
                if eq:
                    self.pushed.add(col, "=", eq[0][3])
                    used.add(id(eq[0][0]))
                    continue
                lower = [s for s in mine if s[2] in (">", ">=")][:1]
                upper = [s for s in mine if s[2] in ("<", "<=")][:1]
                for f, _, op, value in lower + upper:
                    self.pushed.add(col, op, value)
                    used.add(id(f))
                break
        if allow:
            regular: dict[str, list[tuple[Any, str, str, Any]]] = {}
            for s in simple:
                if id(s[0]) not in used and s[1] not in key_cols:
                    regular.setdefault(s[1], []).append(s)
            for mine in regular.values():
                # The server takes one = or one bound of each side per column: a second
                # goes to Spark.
                eq = [s for s in mine if s[2] == "="][:1]
                picked = eq or (
                    [s for s in mine if s[2] in (">", ">=")][:1] + [s for s in mine if s[2] in ("<", "<=")][:1]
                )
                for f, col, op, value in picked:
                    self.pushed.add(col, op, value)
                    used.add(id(f))
        if self.pushed.conditions and (self.key_values is None or _beyond_key(t, self.pushed.conditions)):
            self.needs_filtering = True
        # A column the server compares with a value is not null in any row it returns.
        compared = {s[1] for s in simple if id(s[0]) in used}
        left = [
            f
            for f in left
            if not (isinstance(f, IsNotNull) and f.attribute == (f.attribute[0],) and f.attribute[0] in compared)
        ]
        return left + [s[0] for s in simple if id(s[0]) not in used]


def _beyond_key(t: _table.Table, conditions: list[str]) -> bool:
    """Whether conditions name a column outside the primary key (which a single-partition
    read filters only with ALLOW FILTERING)."""
    keys = {protect_name(c) for c in (*t.partition_key, *t.clustering_key)}
    return any(c.split(" ", 1)[0] not in keys for c in conditions)
