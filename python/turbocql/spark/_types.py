"""CQL types as Spark types, and Arrow columns converted between the engine's Arrow form
and Spark's, column by column with pyarrow compute and numpy (no Python object per value).

A table's column types are parsed once, on the driver, into :class:`CqlType` trees (user
types resolved from the keyspace's metadata), which travel pickled to the executors. The
mapping itself is documented in :mod:`turbocql.spark`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Spark type of each CQL native type (a name in pyspark.sql.types, made on use).
_NATIVE = {
    "ascii": "StringType",
    "text": "StringType",
    "varchar": "StringType",
    "bigint": "LongType",
    "counter": "LongType",
    "blob": "BinaryType",
    "boolean": "BooleanType",
    "date": "DateType",
    "decimal": "StringType",
    "double": "DoubleType",
    "float": "FloatType",
    "inet": "StringType",
    "int": "IntegerType",
    "smallint": "ShortType",
    "tinyint": "ByteType",
    "time": "LongType",
    "timestamp": "TimestampType",
    "timeuuid": "StringType",
    "uuid": "StringType",
    "varint": "StringType",
}
DURATION_FIELDS = ("months", "days", "nanoseconds")


@dataclass(frozen=True)
class CqlType:
    """A parsed CQL type: a native ``name``, or ``list``/``set``/``map``/``tuple``/``udt``/
    ``vector`` with its ``params`` (a UDT's ``fields`` name them; a vector has ``size``)."""

    name: str
    params: tuple[CqlType, ...] = ()
    fields: tuple[str, ...] = ()
    size: int = 0

    @property
    def native(self) -> bool:
        return not self.params and self.name not in ("udt", "tuple")


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def parse(cql: str, user_type) -> CqlType:
    """``cql`` (a column's type as the schema metadata prints it) as a tree; ``user_type``:
    a UDT's name -> (field names, field CQL types). Types Spark cannot hold raise
    ``ValueError`` naming them."""
    from turbocql._types.cqltype_parse import cqltype_to_python, strip_frozen

    def build(items: list[Any]) -> CqlType:
        name = str(items[0])
        elems = _split(items[1]) if len(items) > 1 and isinstance(items[1], list) else []
        lname = name.lower()
        if lname in ("list", "set") and len(elems) == 1:
            return CqlType(lname, (build(elems[0]),))
        if lname == "map" and len(elems) == 2:
            return CqlType("map", (build(elems[0]), build(elems[1])))
        if lname == "tuple" and elems:
            return CqlType("tuple", tuple(build(e) for e in elems))
        if lname == "vector" and len(elems) == 2:
            return CqlType("vector", (build(elems[0]),), size=int(elems[1][0]))
        if elems:
            raise ValueError("no Spark type for CQL type %r" % name)
        if lname in _NATIVE or lname == "duration":
            return CqlType(lname)
        if name.startswith("'"):
            raise ValueError("no Spark type for custom CQL type %s" % name)
        udt = user_type(_unquote(name.split(".")[-1]))
        if udt is None:
            raise ValueError("no Spark type for CQL type %r (not a user type of the keyspace)" % name)
        names, types = udt
        return CqlType("udt", tuple(parse(t, user_type) for t in types), fields=tuple(names))

    return build(cqltype_to_python(strip_frozen(cql)))


def _split(params: list[Any]) -> list[list[Any]]:
    """A parameter list (``['int', 'list', ['text'], 'float']``) as one item list per
    parameter (``[['int'], ['list', ['text']], ['float']]``)."""
    out: list[list[Any]] = []
    for p in params:
        if isinstance(p, list):
            out[-1].append(p)
        else:
            out.append([p])
    return out


def spark_type(t: CqlType):
    """The Spark type of ``t`` (see the mapping in :mod:`turbocql.spark`)."""
    from pyspark.sql import types as st

    if t.name in _NATIVE and t.native:
        return getattr(st, _NATIVE[t.name])()
    if t.name == "duration":
        return st.StructType(
            [
                st.StructField("months", st.IntegerType()),
                st.StructField("days", st.IntegerType()),
                st.StructField("nanoseconds", st.LongType()),
            ]
        )
    if t.name in ("list", "set", "vector"):
        return st.ArrayType(spark_type(t.params[0]), containsNull=True)
    if t.name == "map":
        return st.MapType(spark_type(t.params[0]), spark_type(t.params[1]), valueContainsNull=True)
    if t.name == "tuple":
        return st.StructType([st.StructField("_%d" % (i + 1), spark_type(p)) for i, p in enumerate(t.params)])
    if t.name == "udt":
        return st.StructType([st.StructField(n, spark_type(p)) for n, p in zip(t.fields, t.params, strict=True)])
    raise ValueError("no Spark type for CQL type %r" % t.name)  # pragma: no cover - parse refuses it first


# Reading: the engine's Arrow column -> the Arrow form of the Spark type


def _uuid_text(arr):
    """16-byte UUIDs as their canonical text (8-4-4-4-12 lowercase hex), from the buffer."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    storage = arr.storage if isinstance(arr, pa.ExtensionArray) else arr
    n = len(storage)
    if n == 0:
        return pa.array([], pa.string())
    raw = np.frombuffer(storage.buffers()[1], np.uint8, count=(storage.offset + n) * 16)[storage.offset * 16 :]
    raw = raw.reshape(n, 16)
    hexd = np.frombuffer(b"0123456789abcdef", np.uint8)
    digits = np.empty((n, 32), np.uint8)
    digits[:, 0::2] = hexd[raw >> 4]
    digits[:, 1::2] = hexd[raw & 15]
    out = np.full((n, 36), ord("-"), np.uint8)
    out[:, [i for i in range(36) if i not in (8, 13, 18, 23)]] = digits
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    text = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(out)])
    if storage.null_count:
        text = pc.if_else(storage.is_null(), pa.scalar(None, pa.string()), text)
    return text


def _interval_dtype():
    import numpy as np

    return np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])


def _duration_struct(arr):
    """month_day_nano_interval values as struct<months, days, nanoseconds>, from the buffer."""
    import numpy as np
    import pyarrow as pa

    n = len(arr)
    if n == 0:
        rec = np.zeros(0, _interval_dtype())
    else:
        rec = np.frombuffer(arr.buffers()[1], _interval_dtype(), count=arr.offset + n)[arr.offset :]
    return pa.StructArray.from_arrays(
        [pa.array(np.ascontiguousarray(rec[f])) for f in DURATION_FIELDS],
        names=list(DURATION_FIELDS),
        mask=arr.is_null() if arr.null_count else None,
    )


def _needs_read(t: CqlType) -> bool:
    if t.name in ("uuid", "timeuuid", "duration", "time", "decimal", "varint", "tuple"):
        return True
    return any(_needs_read(p) for p in t.params)


def to_spark(arr, t: CqlType):
    """The engine's Arrow column of CQL type ``t`` made into the values of its Spark type
    (before the final cast to Spark's exact Arrow type, which renames and widens)."""
    import pyarrow as pa

    if not _needs_read(t):
        return arr
    if t.name in ("uuid", "timeuuid"):
        return _uuid_text(arr)
    if t.name == "duration":
        return _duration_struct(arr)
    if t.name == "time":
        return arr.cast(pa.int64())
    if t.name in ("decimal", "varint"):
        # Top-level columns come as their text (CAST in the SELECT); nested ones as the
        # Arrow type pyarrow gave the page's values (decimal128 of the page's widest scale,
        # int64 or text), written as text here.
        return arr if pa.types.is_string(arr.type) else arr.cast(pa.string())
    mask = arr.is_null() if arr.null_count else None
    if t.name in ("list", "set"):
        return pa.ListArray.from_arrays(arr.offsets, to_spark(arr.values, t.params[0]), mask=mask)
    if t.name == "vector":
        # .values is the whole child, whatever slice of it this array is.
        values = to_spark(arr.values.slice(arr.offset * t.size, len(arr) * t.size), t.params[0])
        return pa.FixedSizeListArray.from_arrays(values, t.size, mask=mask)
    if t.name == "map":
        return pa.MapArray.from_arrays(
            arr.offsets, to_spark(arr.keys, t.params[0]), to_spark(arr.items, t.params[1]), mask=mask
        )
    children = arr.flatten()
    names = ["_%d" % (i + 1) for i in range(len(children))] if t.name == "tuple" else list(t.fields)
    return pa.StructArray.from_arrays(
        [to_spark(c, p) for c, p in zip(children, t.params, strict=True)], names=names, mask=mask
    )


# Writing: Spark's Arrow column -> what the engine writes as the CQL type


def _duration_interval(arr):
    """struct<months, days, nanoseconds> as month_day_nano_interval (a null field: 0)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(arr)
    rec = np.zeros(n, _interval_dtype())
    for f, child in zip(DURATION_FIELDS, arr.flatten(), strict=True):
        rec[f] = pc.fill_null(child, 0).to_numpy(zero_copy_only=False)
    validity = None
    if arr.null_count:
        validity = pc.invert(arr.is_null()).buffers()[1]
    return pa.Array.from_buffers(
        pa.month_day_nano_interval(), n, [validity, pa.py_buffer(rec.tobytes())], null_count=arr.null_count
    )


def _needs_write(t: CqlType) -> bool:
    return t.name in ("duration", "time") or any(_needs_write(p) for p in t.params)


def from_spark(arr, t: CqlType):
    """Spark's Arrow column ``arr`` made writable as CQL type ``t`` by the engine (which
    takes text for every type, so only durations as structs and times as nanoseconds need
    converting)."""
    import pyarrow as pa

    if not _needs_write(t):
        return arr
    if t.name == "duration":
        return _duration_interval(arr) if pa.types.is_struct(arr.type) else arr
    if t.name == "time":
        return arr.cast(pa.time64("ns")) if pa.types.is_integer(arr.type) else arr
    mask = arr.is_null() if arr.null_count else None
    if t.name in ("list", "set", "vector") and pa.types.is_list(arr.type):
        return pa.ListArray.from_arrays(arr.offsets, from_spark(arr.values, t.params[0]), mask=mask)
    if t.name == "map" and pa.types.is_map(arr.type):
        return pa.MapArray.from_arrays(
            arr.offsets, from_spark(arr.keys, t.params[0]), from_spark(arr.items, t.params[1]), mask=mask
        )
    if t.name in ("tuple", "udt") and pa.types.is_struct(arr.type):
        children = arr.flatten()
        params: list[CqlType | None]
        if t.name == "tuple":
            params = list(t.params)
        else:
            by_name = dict(zip(t.fields, t.params, strict=True))
            params = [by_name.get(arr.type.field(i).name) for i in range(arr.type.num_fields)]
        return pa.StructArray.from_arrays(
            [c if p is None else from_spark(c, p) for c, p in zip(children, params, strict=False)],
            names=[f.name for f in arr.type],
            mask=mask,
        )
    return arr
