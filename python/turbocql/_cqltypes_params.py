"""The parameterized CQL types (re-exported by ``turbocql.cqltypes``): ``list``, ``set``,
``map``, ``tuple``, user types, ``frozen``, ``vector``, and the composite, reversed and
column-to-collection types of Cassandra's marshal names.
"""

from __future__ import annotations

import re
from binascii import unhexlify
from collections import namedtuple
from typing import Any, ClassVar

from turbocql import util
from turbocql._casstype_parse import lookup_casstype
from turbocql._cqltypes_base import CassandraType
from turbocql.marshal import (
    int32_pack,
    int32_unpack,
    uint16_pack,
    uint16_unpack,
    uvint_pack,
    uvint_unpack,
)


class _ParameterizedType(CassandraType):
    num_subtypes: ClassVar[Any] = "UNKNOWN"

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't deserialize unparameterized %s" % cls.typename)
        return cls.deserialize_safe(byts, protocol_version)

    @classmethod
    def serialize(cls, val, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't serialize unparameterized %s" % cls.typename)
        return cls.serialize_safe(val, protocol_version)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        raise NotImplementedError

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        raise NotImplementedError


def _length_codec(protocol_version):
    # Protocol v1 and v2 give collection sizes as 16-bit values, later ones as 32-bit.
    if protocol_version >= 3:
        return int32_pack, int32_unpack, 4
    return uint16_pack, uint16_unpack, 2


def _pack_item(subtype, item, protocol_version, pack):
    """One length-prefixed item of a tuple (a null as length -1)."""
    if item is None:
        return int32_pack(-1) if protocol_version >= 3 else pack(0)
    data = subtype.to_binary(item, protocol_version)
    return pack(len(data)) + data


def _pack_element(subtype, item, protocol_version, pack):
    """One length-prefixed element of a collection (None as an empty value, as the
    classic driver writes it)."""
    data = subtype.to_binary(item, protocol_version)
    return pack(len(data)) + data


def _read_items(byts, count, types, protocol_version):
    _, unpack, size = _length_codec(protocol_version)
    out = []
    pos = 0
    for i in range(count):
        length = unpack(byts[pos : pos + size])
        pos += size
        subtype = types[i % len(types)]
        if length < 0:
            out.append(None)
            continue
        out.append(subtype.from_binary(byts[pos : pos + length], protocol_version))
        pos += length
    return out


class _SimpleParameterizedType(_ParameterizedType):
    adapter: ClassVar[Any] = list

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        _, unpack, size = _length_codec(protocol_version)
        count = unpack(byts[:size])
        return cls.adapter(_read_items(byts[size:], count, cls.subtypes, protocol_version))

    @classmethod
    def serialize_safe(cls, items, protocol_version):
        if isinstance(items, str):
            raise TypeError("Received a string for a type that expects a sequence")
        pack, _, _ = _length_codec(protocol_version)
        subtype = cls.subtypes[0]
        items = list(items)
        return pack(len(items)) + b"".join(_pack_element(subtype, item, protocol_version, pack) for item in items)


class ListType(_SimpleParameterizedType):
    typename = "list"
    num_subtypes = 1
    adapter = list


class SetType(_SimpleParameterizedType):
    typename = "set"
    num_subtypes = 1
    adapter = util.SortedSet


class MapType(_ParameterizedType):
    typename = "map"
    num_subtypes = 2

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        _, unpack, size = _length_codec(protocol_version)
        count = unpack(byts[:size])
        flat = _read_items(byts[size:], count * 2, cls.subtypes, protocol_version)
        themap = util.OrderedMapSerializedKey(cls.subtypes[0], protocol_version)
        for key, value in zip(flat[0::2], flat[1::2]):
            themap._insert_unchecked(key, None, value)
        return themap

    @classmethod
    def serialize_safe(cls, themap, protocol_version):
        pack, _, _ = _length_codec(protocol_version)
        key_type, value_type = cls.subtypes
        try:
            items = list(themap.items())
        except AttributeError as exc:
            raise TypeError("Got a non-map object for a map value") from exc
        parts = [pack(len(items))]
        for key, value in items:
            parts.append(_pack_element(key_type, key, protocol_version, pack))
            parts.append(_pack_element(value_type, value, protocol_version, pack))
        return b"".join(parts)


class TupleType(_ParameterizedType):
    typename = "tuple"

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        values: list[Any] = []
        pos = 0
        for subtype in cls.subtypes:
            if pos >= len(byts):
                values.append(None)
                continue
            length = int32_unpack(byts[pos : pos + 4])
            pos += 4
            if length < 0:
                values.append(None)
            else:
                values.append(subtype.from_binary(byts[pos : pos + length], max(3, protocol_version)))
                pos += length
        return tuple(values)

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        if len(val) > len(cls.subtypes):
            raise ValueError("Expected %d items in a tuple, but got %d: %s" % (len(cls.subtypes), len(val), val))
        return b"".join(
            _pack_item(subtype, item, max(3, protocol_version), int32_pack) for subtype, item in zip(cls.subtypes, val)
        )

    @classmethod
    def cql_parameterized_type(cls):
        return "frozen<tuple<%s>>" % ", ".join(sub.cql_parameterized_type() for sub in cls.subtypes)


class UserType(TupleType):
    """A user-defined type; :meth:`make_udt_class` makes the class of one."""

    typename = "org.apache.cassandra.db.marshal.UserType"
    keyspace: ClassVar[Any] = None
    fieldnames: ClassVar[Any] = ()
    mapped_class: ClassVar[Any] = None
    tuple_type: ClassVar[Any] = None

    _cache: ClassVar[dict] = {}
    _module = None

    @classmethod
    def make_udt_class(cls, keyspace, udt_name, field_names, field_types):
        """The class of user type ``keyspace.udt_name`` with these fields."""
        assert len(field_names) == len(field_types)
        key = (keyspace, udt_name, tuple(field_names), tuple(field_types))
        instance = cls._cache.get(key)
        if instance is None:
            instance = type(cls)(
                udt_name,
                (cls,),
                {
                    "subtypes": field_types,
                    "cassname": cls.cassname,
                    "typename": udt_name,
                    "fieldnames": field_names,
                    "keyspace": keyspace,
                    "mapped_class": None,
                    "tuple_type": cls._make_tuple_type(udt_name, field_names),
                },
            )
            cls._cache[key] = instance
        return instance

    @classmethod
    def evict_udt_class(cls, keyspace, udt_name):
        for key in [k for k in cls._cache if k[0] == keyspace and k[1] == udt_name]:
            del cls._cache[key]

    @classmethod
    def apply_parameters(cls, subtypes, names=None):
        keyspace = subtypes[0].cass_parameterized_type()
        udt_name = unhexlify(subtypes[1].cassname).decode("utf-8")
        field_names = [unhexlify(name).decode("utf-8") for name in (names or [])[2:]]
        return cls.make_udt_class(keyspace, udt_name, field_names, subtypes[2:])

    @classmethod
    def cql_parameterized_type(cls):
        return "frozen<%s>" % (cls.typename,)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        values = TupleType.deserialize_safe.__func__(cls, byts, protocol_version)
        if cls.mapped_class is not None:
            return cls.mapped_class(**dict(zip(cls.fieldnames, values)))
        if cls.tuple_type is not None:
            return cls.tuple_type(*values)
        return values

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        if isinstance(val, dict):
            items = [val.get(name) for name in cls.fieldnames]
        elif isinstance(val, tuple):
            items = list(val)
        else:
            items = [getattr(val, name, None) for name in cls.fieldnames]
        return TupleType.serialize_safe.__func__(cls, items, protocol_version)

    @staticmethod
    def _make_tuple_type(name, field_names):
        try:
            return namedtuple(name, field_names)
        except ValueError:
            return namedtuple(
                "Tuple_" + re.sub(r"\W", "_", name), ["field_%d" % i for i in range(len(field_names))], rename=True
            )


class CompositeType(_ParameterizedType):
    typename = "org.apache.cassandra.db.marshal.CompositeType"

    @classmethod
    def cql_parameterized_type(cls):
        return "'%s'" % (cls.cass_parameterized_type_with(cls.subtypes, full=True),)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        values = []
        pos = 0
        for subtype in cls.subtypes:
            if pos >= len(byts):
                break
            length = uint16_unpack(byts[pos : pos + 2])
            pos += 2
            values.append(subtype.from_binary(byts[pos : pos + length], protocol_version))
            pos += length + 1  # the end-of-component byte
        return tuple(values)


class DynamicCompositeType(_ParameterizedType):
    typename = "org.apache.cassandra.db.marshal.DynamicCompositeType"

    @classmethod
    def cql_parameterized_type(cls):
        sub = ", ".join(
            "%s=>%s" % (name, t.cass_parameterized_type(full=True))
            for name, t in zip(cls.fieldnames or (), cls.subtypes)
        )
        return "'%s(%s)'" % (cls.typename, sub)

    fieldnames: ClassVar[Any] = None


class ColumnToCollectionType(_ParameterizedType):
    """The column-to-collection type of legacy compact tables."""

    typename = "org.apache.cassandra.db.marshal.ColumnToCollectionType"


class ReversedType(CassandraType):
    typename = "org.apache.cassandra.db.marshal.ReversedType"
    num_subtypes = 1

    @classmethod
    def deserialize(cls, byts, protocol_version):
        return cls.subtypes[0].from_binary(byts, protocol_version)

    @classmethod
    def serialize(cls, val, protocol_version):
        return cls.subtypes[0].to_binary(val, protocol_version)


class FrozenType(_ParameterizedType):
    typename = "frozen"
    num_subtypes = 1

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        return cls.subtypes[0].from_binary(byts, protocol_version)

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        return cls.subtypes[0].to_binary(val, protocol_version)


class VectorType(_ParameterizedType):
    """``vector<subtype, n>``: ``n`` values of a subtype, fixed-size values back to back,
    variable-size ones each after its length (an unsigned vint)."""

    typename = "org.apache.cassandra.db.marshal.VectorType"
    num_subtypes: ClassVar[Any] = 0
    vector_size: ClassVar[int] = 0
    subtype: ClassVar[Any] = None

    @classmethod
    def serial_size(cls):
        size = cls.subtype.serial_size() if cls.subtype is not None else None
        return cls.vector_size * size if size is not None else None

    @classmethod
    def apply_parameters(cls, params, names=None):
        assert len(params) == 2
        subtype = lookup_casstype(params[0])
        vsize = int(params[1])
        return type(cls)("%s(%d)" % (cls.cassname, vsize), (cls,), {"vector_size": vsize, "subtype": subtype})

    @classmethod
    def deserialize(cls, byts, protocol_version):
        size = cls.subtype.serial_size()
        if size is not None:
            expected = size * cls.vector_size
            if len(byts) != expected:
                raise ValueError(
                    "Expected vector of type %s and dimension %d to have serialized size %d; observed serialized "
                    "size of %d instead" % (cls.subtype.typename, cls.vector_size, expected, len(byts))
                )
            return [
                cls.subtype.deserialize(byts[i * size : (i + 1) * size], protocol_version)
                for i in range(cls.vector_size)
            ]
        out: list[Any] = []
        pos = 0
        while len(out) < cls.vector_size:
            try:
                length, used = uvint_unpack(byts[pos:])
                if pos + used + length > len(byts):
                    raise ValueError("element past the end of the value")
                pos += used
                out.append(cls.subtype.deserialize(byts[pos : pos + length], protocol_version))
            except (ValueError, IndexError, TypeError) as exc:
                raise ValueError(
                    "Error reading additional data during vector deserialization after successfully adding %d "
                    "elements" % len(out)
                ) from exc
            pos += length
        if pos < len(byts):
            raise ValueError("Additional bytes remaining after vector deserialization completed")
        return out

    @classmethod
    def serialize(cls, v, protocol_version):
        if len(v) != cls.vector_size:
            raise ValueError(
                "Expected sequence of size %d for vector of type %s and dimension %d, observed sequence of "
                "length %d" % (cls.vector_size, cls.subtype.typename, cls.vector_size, len(v))
            )
        fixed = cls.subtype.serial_size() is not None
        parts = []
        for item in v:
            data = cls.subtype.serialize(item, protocol_version)
            parts.append(data if fixed else uvint_pack(len(data)) + data)
        return b"".join(parts)

    @classmethod
    def cql_parameterized_type(cls):
        return "%s<%s, %s>" % (cls.typename, cls.subtype.cql_parameterized_type(), cls.vector_size)
