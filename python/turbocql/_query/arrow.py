"""Arrow results: the engine's Arrow buffers as pyarrow arrays, and whole results as tables.

With ``row_factory = turbocql.query.arrow_factory`` the engine decodes each page column by
column into Arrow's layout (``src/codec/arrow.rs``, one ``_engine.ArrowColumn`` per column);
:func:`record_batch` wraps those buffers as a ``pyarrow.RecordBatch`` without copying them
again. :func:`result_table` gathers every page of a ``ResultSet`` into one ``pyarrow.Table``
(``ResultSet.to_arrow()``); a result read with another row factory is converted from its
Python values instead (slower; types as pyarrow infers them).

pyarrow is imported here only, when first needed: ``import turbocql`` never needs it.

CQL type -> Arrow type: tinyint, smallint, int, bigint/counter -> int8..int64; float, double
-> float32, float64; boolean -> bool; timestamp -> timestamp[ms] (naive, UTC, as the classic
driver's datetimes); date -> date32; time -> time64[ns]; uuid, timeuuid -> uuid (fixed 16
bytes); duration -> month_day_nano_interval; text, ascii, varchar -> string; inet -> string
(the classic driver's text); blob -> binary; list, set -> list; map -> map; vector of numbers
-> fixed_size_list; tuple -> struct with fields "0", "1", ...; UDT -> struct of its fields;
decimal, varint and other types -> what pyarrow makes of their Python values.
"""

from __future__ import annotations

import decimal
from typing import Any

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - exercised where pyarrow is missing
    raise ImportError(
        "turbocql's Arrow results (arrow_factory, ResultSet.to_arrow/to_pandas/to_polars) need pyarrow: "
        "pip install pyarrow"
    ) from e

__all__ = ["record_batch", "result_table", "rows_batch"]

_FIXED = {
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "timestamp_ms": pa.timestamp("ms"),
    "time64_ns": pa.time64("ns"),
    "date32": pa.date32(),
    "duration": pa.month_day_nano_interval(),
}


def _buf(b):
    return None if b is None else pa.py_buffer(b)


def to_array(col) -> pa.Array:
    """One ``_engine.ArrowColumn`` as a pyarrow array (nested kinds recursively)."""
    kind = col.kind
    n = col.length
    validity = _buf(col.validity)
    if kind == "objects":
        return _objects_array(col.objects)
    if kind in _FIXED:
        return pa.Array.from_buffers(_FIXED[kind], n, [validity, _buf(col.buffers[0])], null_count=col.null_count)
    if kind == "uuid":
        storage = pa.Array.from_buffers(pa.binary(16), n, [validity, _buf(col.buffers[0])], null_count=col.null_count)
        return pa.ExtensionArray.from_storage(pa.uuid(), storage)
    if kind == "bool":
        return pa.Array.from_buffers(pa.bool_(), n, [validity, _buf(col.buffers[0])], null_count=col.null_count)
    if kind in ("utf8", "binary"):
        t = pa.string() if kind == "utf8" else pa.binary()
        offsets, data = col.buffers
        return pa.Array.from_buffers(t, n, [validity, _buf(offsets), _buf(data)], null_count=col.null_count)
    children = [to_array(c) for c in col.children]
    if kind in ("list", "set"):
        (child,) = children
        return pa.Array.from_buffers(
            pa.list_(child.type), n, [validity, _buf(col.buffers[0])], null_count=col.null_count, children=[child]
        )
    if kind == "map":
        keys, values = children
        if keys.type == pa.null():
            # Keys of Python objects (varint, decimal, ...) take their type from their values:
            # with no entry in the page there is none, and Arrow has no null-typed key. Text,
            # the type that holds any of them (`_objects_array`).
            keys = pa.array([], type=pa.string())
        # The entries exactly as the map type declares them (keys not null): a child whose
        # type differs from the declared one corrupts memory in writers that trust the type
        # (pyarrow's Parquet writer freed a bad pointer).
        map_type = pa.map_(keys.type, values.type)
        entries = pa.StructArray.from_arrays([keys, values], fields=[map_type.key_field, map_type.item_field])
        return pa.Array.from_buffers(
            map_type,
            n,
            [validity, _buf(col.buffers[0])],
            null_count=col.null_count,
            children=[entries],
        )
    if kind == "vector":
        (child,) = children
        return pa.Array.from_buffers(
            pa.list_(child.type, col.size), n, [validity], null_count=col.null_count, children=[child]
        )
    if kind == "struct":
        t = pa.struct([pa.field(name, c.type) for name, c in zip(col.names, children, strict=True)])
        return pa.Array.from_buffers(t, n, [validity], null_count=col.null_count, children=children)
    raise ValueError("unknown Arrow column kind %r" % kind)  # pragma: no cover - engine and module disagree


def _objects_array(values: list[Any]) -> pa.Array:
    """Python values (decimal, varint, ...) as pyarrow makes them; integers past 64 bits as
    decimal128(38, 0) while they fit; as text if nothing else holds them."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    if all(v is None or (type(v) is int and abs(v) < 10**38) for v in values):
        return pa.array([None if v is None else decimal.Decimal(v) for v in values], type=pa.decimal128(38, 0))
    # str() of an int past sys.int_max_str_digits raises; Decimal's conversion has no such limit
    # and is not quadratic
    return pa.array(
        [None if v is None else str(decimal.Decimal(v)) if type(v) is int else str(v) for v in values],
        type=pa.string(),
    )


def record_batch(names, columns) -> pa.RecordBatch:
    """A page of ``columns`` (``_engine.ArrowColumn``, in the order of ``names``)."""
    return pa.RecordBatch.from_arrays([to_array(c) for c in columns], names=list(names))


def rows_batch(colnames, rows) -> pa.RecordBatch:
    """Rows already made as Python values (tuples, named tuples or dicts) as a batch."""
    names = list(colnames or ())
    columns: list[list[Any]] = [[] for _ in names]
    for row in rows:
        if isinstance(row, dict):
            for col, name in zip(columns, names, strict=True):
                col.append(row.get(name))
        else:
            for col, value in zip(columns, row, strict=True):
                col.append(value)
    return pa.RecordBatch.from_arrays([_objects_array(c) for c in columns], names=names)


def result_table(result, items=None) -> pa.Table:
    """Every remaining page of ``result`` (a ``ResultSet``) as one ``pyarrow.Table``;
    ``items``: what iterating it gave, when the caller iterated (asyncio)."""
    names = result.column_names
    if names is None:
        return pa.table({})
    items = list(result) if items is None else items
    if not items:
        batches = [_empty_batch(result)]
    elif all(isinstance(b, pa.RecordBatch) for b in items):
        batches = items  # arrow_factory: one RecordBatch per page (an empty page gives none)
    elif isinstance(result._page.rows, dict):
        batches = [_columns_batch(names, page) for page in items]  # numpy_factory: a dict per page
    else:
        batches = [rows_batch(names, items)]
    tables = [pa.Table.from_batches([b]) for b in batches]
    # Columns of Python values (decimal, varint, ...) are typed page by page, and a page of
    # nulls only has no type: let pyarrow unify them.
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def _columns_batch(names, page) -> pa.RecordBatch:
    """A numpy_factory page (column name -> array; masked where null) as a batch."""

    import numpy as np

    def values(col):
        nulls = np.ma.getmaskarray(col)
        if nulls.ndim > 1:  # a vector column: a row is null when masked
            nulls = nulls.any(axis=tuple(range(1, nulls.ndim)))
        data = np.ma.getdata(col)
        return [None if null else getattr(v, "tolist", lambda v=v: v)() for v, null in zip(data, nulls, strict=True)]

    return pa.RecordBatch.from_arrays([_objects_array(values(page[n])) for n in names], names=list(names))


def _empty_batch(result) -> pa.RecordBatch:
    page = result._page
    rows = page.rows
    if isinstance(rows, pa.RecordBatch):
        return rows
    return pa.RecordBatch.from_arrays([pa.array([]) for _ in result.column_names], names=list(result.column_names))
