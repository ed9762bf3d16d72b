"""The parameterized CQL types (re-exported by ``turbocql.cqltypes``): ``list``, ``set``,
``map``, ``tuple``, user types, ``frozen``, ``vector``, and the composite, reversed and
column-to-collection types of Cassandra's marshal names.

A class made with its parameters knows its engine type (``list<map<int, text>>``; a user
type as the tuple of its fields' types, its values positional as the classic driver reads
them) and converts through the engine's codec. The classic framing (``serialize_safe`` /
``deserialize_safe``, element by element through the parameters' classes) is kept for what
the engine does not do: protocol v1 and v2's 16-bit collection sizes, parameters the engine
has no type for (DSE, custom), and its gaps, each marked "engine gap": a None inside a
collection (the classic driver writes it empty), empty elements read back, a tuple shorter
than its type (the engine writes nulls for the missing elements, the classic driver nothing)
and a vector of variable-size elements with bytes left over. A value the engine refuses
goes through the framing too, so that its error is the one the classic driver raises.
"""

from __future__ import annotations

from binascii import unhexlify
from typing import Any, ClassVar

from turbocql import util
from turbocql._types import udt as _udt
from turbocql._types.base import CassandraType, _decode, _encode
from turbocql._types.casstype_parse import lookup_casstype
from turbocql.marshal import int32_pack, int32_unpack, uint16_pack, uint16_unpack, uvint_pack, uvint_unpack


class _UseFraming(Exception):
    """A value the engine would write otherwise than the classic driver: frame it in Python."""


def _engine_name(t):
    return getattr(t, "_engine_type", None)


class _ParameterizedType(CassandraType):
    num_subtypes: ClassVar[Any] = "UNKNOWN"
    # The engine's type of the class with parameters, "%s" their engine types joined.
    _engine_template: ClassVar[str | None] = None
    # Walks its values whatever its parameters (_walks_values, _walks_decoded); the lowest
    # protocol version at which its own layout is the engine's.
    _always_walks_values: ClassVar[bool] = False
    _always_walks_decoded: ClassVar[bool] = False
    _own_min_protocol: ClassVar[int] = 0

    @classmethod
    def _derive_engine_type(cls):
        subs = cls.subtypes
        names = [_engine_name(s) for s in subs]
        known = bool(subs) and cls._engine_template is not None and None not in names
        cls._engine_type = cls._engine_template % ", ".join(names) if known else None
        cls._walks_values = cls._always_walks_values or any(getattr(s, "_walks_values", False) for s in subs)
        cls._walks_decoded = cls._always_walks_decoded or any(getattr(s, "_walks_decoded", False) for s in subs)
        cls._engine_min_protocol = max([cls._own_min_protocol] + [getattr(s, "_engine_min_protocol", 0) for s in subs])
        cls._engine_misreads = tuple({b for s in subs for b in getattr(s, "_engine_misreads", ())})

    @classmethod
    def serialize(cls, val, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't serialize unparameterized %s" % cls.typename)
        if cls._engine_type is not None and protocol_version >= cls._engine_min_protocol:
            try:
                return _encode(cls._engine_type, cls._to_engine(val) if cls._walks_values else val)
            except Exception:  # an engine gap, or the classic error out of the framing
                pass
        return cls.serialize_safe(val, protocol_version)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't deserialize unparameterized %s" % cls.typename)
        byts = bytes(byts)  # a bytearray or memoryview too, as the classic driver reads
        if (
            cls._engine_type is not None
            and protocol_version >= cls._engine_min_protocol
            and not any(b in byts for b in cls._engine_misreads)
        ):
            try:
                value = _decode(cls._engine_type, byts)
            except Exception:  # empty elements (engine gap), or the classic error out of the framing
                return cls.deserialize_safe(byts, protocol_version)
            return cls._from_engine(value, protocol_version) if cls._walks_decoded else value
        return cls.deserialize_safe(byts, protocol_version)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        raise NotImplementedError

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        raise NotImplementedError


def _walk(t, value):
    """An element ``value`` of type ``t`` as the engine takes it."""
    return value if value is None or not t._walks_values else t._to_engine(value)


def _unwalk(t, value, protocol_version):
    """An element ``value`` of type ``t`` the engine decoded, as the classic driver gives it."""
    return value if value is None or not t._walks_decoded else t._from_engine(value, protocol_version)


def _sizes(protocol_version):
    """The collection size codec: 32-bit from protocol v3, 16-bit before."""
    if protocol_version >= 3:
        return int32_pack, int32_unpack, 4
    return uint16_pack, uint16_unpack, 2


def _read(byts, p, unpack, size):
    """(the element at ``p``, or None for a negative length; the position after it)."""
    length = unpack(byts[p : p + size])
    p += size
    if length < 0:
        return None, p
    return byts[p : p + length], p + length


class _SimpleParameterizedType(_ParameterizedType):
    adapter: ClassVar[Any] = list
    _own_min_protocol = 3

    @classmethod
    def _to_engine(cls, items):
        (subtype,) = cls.subtypes
        return [_walk(subtype, item) for item in items]

    @classmethod
    def _from_engine(cls, items, protocol_version):
        (subtype,) = cls.subtypes
        inner = max(3, protocol_version)
        return cls.adapter([_unwalk(subtype, item, inner) for item in items])

    @classmethod
    def serialize_safe(cls, items, protocol_version):
        if isinstance(items, str):
            raise TypeError("Received a string for a type that expects a sequence")
        (subtype,) = cls.subtypes
        pack = _sizes(protocol_version)[0]
        inner = max(3, protocol_version)
        parts = [pack(len(items))]
        for item in items:
            data = subtype.to_binary(item, inner)  # engine gap: None is written empty
            parts += (pack(len(data)), data)
        return b"".join(parts)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        (subtype,) = cls.subtypes
        _, unpack, size = _sizes(protocol_version)
        inner = max(3, protocol_version)
        result = []
        p = size
        for _ in range(unpack(byts[:size])):
            item, p = _read(byts, p, unpack, size)
            result.append(subtype.from_binary(item, inner))  # engine gap: an empty one as None/EMPTY
        return cls.adapter(result)


class ListType(_SimpleParameterizedType):
    typename = "list"
    num_subtypes = 1
    adapter = list
    _engine_template = "list<%s>"


class SetType(_SimpleParameterizedType):
    typename = "set"
    num_subtypes = 1
    adapter = util.SortedSet
    _engine_template = "set<%s>"


class MapType(_ParameterizedType):
    typename = "map"
    num_subtypes = 2
    _engine_template = "map<%s>"
    _always_walks_values = True  # a mapping (the engine takes (key, value) pairs too)
    _always_walks_decoded = True  # an OrderedMapSerializedKey, as the classic driver's
    _own_min_protocol = 3

    @classmethod
    def _to_engine(cls, themap):
        key_type, value_type = cls.subtypes
        if not hasattr(themap, "items"):
            raise _UseFraming
        if not (key_type._walks_values or value_type._walks_values):
            return themap
        return [(_walk(key_type, k), _walk(value_type, v)) for k, v in themap.items()]

    @classmethod
    def _from_engine(cls, items, protocol_version):
        key_type, value_type = cls.subtypes
        inner = max(3, protocol_version)
        themap = util.OrderedMapSerializedKey(key_type, protocol_version)
        for key, value in items.items():
            themap._insert_unchecked(_unwalk(key_type, key, inner), None, _unwalk(value_type, value, inner))
        return themap

    @classmethod
    def serialize_safe(cls, themap, protocol_version):
        key_type, value_type = cls.subtypes
        pack = _sizes(protocol_version)[0]
        parts = [pack(len(themap))]
        try:
            items = themap.items()
        except AttributeError:
            raise TypeError("Got a non-map object for a map value") from None
        inner = max(3, protocol_version)
        for key, val in items:
            keybytes = key_type.to_binary(key, inner)
            valbytes = value_type.to_binary(val, inner)
            parts += (pack(len(keybytes)), keybytes, pack(len(valbytes)), valbytes)
        return b"".join(parts)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        key_type, value_type = cls.subtypes
        _, unpack, size = _sizes(protocol_version)
        inner = max(3, protocol_version)
        themap = util.OrderedMapSerializedKey(key_type, protocol_version)
        p = size
        for _ in range(unpack(byts[:size])):
            keybytes, p = _read(byts, p, unpack, size)
            valbytes, p = _read(byts, p, unpack, size)
            key = key_type.from_binary(keybytes, inner)
            themap._insert_unchecked(key, keybytes, value_type.from_binary(valbytes, inner))
        return themap


class TupleType(_ParameterizedType):
    typename = "tuple"
    _engine_template = "tuple<%s>"
    _always_walks_values = True  # a shorter tuple: engine gap, see _to_engine

    @classmethod
    def _to_engine(cls, val):
        if len(val) != len(cls.subtypes):
            # Engine gap: it writes the missing elements of a shorter tuple as nulls, the
            # classic driver nothing (and a longer one is the framing's ValueError).
            raise _UseFraming
        return tuple(_walk(t, item) for t, item in zip(cls.subtypes, val))

    @classmethod
    def _from_engine(cls, values, protocol_version):
        inner = max(3, protocol_version)
        return tuple(_unwalk(t, v, inner) for t, v in zip(cls.subtypes, values))

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        if len(val) > len(cls.subtypes):
            raise ValueError("Expected %d items in a tuple, but got %d: %s" % (len(cls.subtypes), len(val), val))
        inner = max(3, protocol_version)
        return b"".join(_tuple_item(t, item, inner) for item, t in zip(val, cls.subtypes))

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        inner = max(3, protocol_version)
        values = []
        p = 0
        for t in cls.subtypes:
            if p == len(byts):
                break
            item, p = _read(byts, p, int32_unpack, 4)
            values.append(t.from_binary(item, inner))
        return tuple(values) + (None,) * (len(cls.subtypes) - len(values))

    @classmethod
    def cql_parameterized_type(cls):
        return "frozen<tuple<%s>>" % ", ".join(sub.cql_parameterized_type() for sub in cls.subtypes)


def _tuple_item(subtype, item, protocol_version):
    if item is None:
        return int32_pack(-1)
    data = subtype.to_binary(item, protocol_version)
    return int32_pack(len(data)) + data


class UserType(TupleType):
    """A user-defined type; :meth:`make_udt_class` makes the class of one. The engine
    converts its values as the tuple of its fields (the same bytes)."""

    typename = "org.apache.cassandra.db.marshal.UserType"
    keyspace: ClassVar[Any] = None
    fieldnames: ClassVar[Any] = ()
    mapped_class: ClassVar[Any] = None
    tuple_type: ClassVar[Any] = None

    _cache: ClassVar[dict] = {}
    _module = None
    _always_walks_decoded = True  # the values in the type's class

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
                    "tuple_type": cls._make_registered_udt_namedtuple(keyspace, udt_name, field_names),
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
    def _to_engine(cls, val):
        # As the classic driver reads a UDT value: by position, else by attribute.
        items = []
        for i, (name, t) in enumerate(zip(cls.fieldnames, cls.subtypes)):
            try:
                item = val[i]
            except TypeError:
                item = getattr(val, name, None)
            items.append(_walk(t, item))
        return tuple(items)

    @classmethod
    def _from_engine(cls, values, protocol_version):
        return cls._of_values(TupleType._from_engine.__func__(cls, values, protocol_version))

    @classmethod
    def _of_values(cls, values):
        if cls.mapped_class:
            return cls.mapped_class(**dict(zip(cls.fieldnames, values)))
        if cls.tuple_type:
            return cls.tuple_type(*values)
        return tuple(values)

    @classmethod
    def serialize_safe(cls, val, protocol_version):
        inner = max(3, protocol_version)
        return b"".join(_tuple_item(t, item, inner) for t, item in zip(cls.subtypes, cls._fields_of(val)))

    @classmethod
    def _fields_of(cls, val):
        for i, name in enumerate(cls.fieldnames):
            try:
                yield val[i]
            except TypeError:
                yield getattr(val, name, None)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        return cls._of_values(TupleType.deserialize_safe.__func__(cls, byts, protocol_version))

    @classmethod
    def _make_registered_udt_namedtuple(cls, keyspace, name, field_names):
        """The class of the type's values, the one the engine makes them of too
        (turbocql._types.udt)."""
        key = (keyspace, name, tuple(field_names))
        t = _udt._UDT_CLASSES.get(key)
        if t is None:
            t = _udt._UDT_CLASSES[key] = _udt._udt_tuple_type(name, tuple(field_names))
        return None if t is tuple else t

    @classmethod
    def _make_udt_tuple_type(cls, name, field_names):
        """A namedtuple named as the type, as the classic driver names it (positional field
        names where they are no identifiers); None when the type's name is none."""
        t = _udt._udt_tuple_type(name, tuple(field_names))
        return None if t is tuple else t


class CompositeType(_ParameterizedType):
    """Legacy marshal type (no engine type): decoded here."""

    typename = "org.apache.cassandra.db.marshal.CompositeType"

    @classmethod
    def cql_parameterized_type(cls):
        return "'%s'" % (cls.cass_parameterized_type_with(cls.subtypes, full=True),)

    @classmethod
    def deserialize_safe(cls, byts, protocol_version):
        values = []
        for subtype in cls.subtypes:
            if not byts:
                break  # missing elements at the end
            length = uint16_unpack(byts[:2])
            values.append(subtype.from_binary(byts[2 : 2 + length], protocol_version))
            byts = byts[2 + length + 1 :]  # the element, then its end-of-component byte
        return tuple(values)


class DynamicCompositeType(_ParameterizedType):
    typename = "org.apache.cassandra.db.marshal.DynamicCompositeType"
    fieldnames: ClassVar[Any] = None

    @classmethod
    def cql_parameterized_type(cls):
        sub = ", ".join(
            "%s=>%s" % (name, t.cass_parameterized_type(full=True))
            for name, t in zip(cls.fieldnames or (), cls.subtypes)
        )
        return "'%s(%s)'" % (cls.typename, sub)


class ColumnToCollectionType(_ParameterizedType):
    """The column-to-collection type of legacy compact tables."""

    typename = "org.apache.cassandra.db.marshal.ColumnToCollectionType"


class _WrapperType(_ParameterizedType):
    """A type that is its one parameter's, converted as it."""

    num_subtypes = 1
    _engine_template = "%s"

    @classmethod
    def _to_engine(cls, val):
        return cls.subtypes[0]._to_engine(val)

    @classmethod
    def _from_engine(cls, val, protocol_version):
        return cls.subtypes[0]._from_engine(val, protocol_version)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't deserialize unparameterized %s" % cls.typename)
        return cls.subtypes[0].from_binary(byts, protocol_version)

    @classmethod
    def serialize(cls, val, protocol_version):
        if not cls.subtypes:
            raise NotImplementedError("can't serialize unparameterized %s" % cls.typename)
        return cls.subtypes[0].to_binary(val, protocol_version)

    deserialize_safe = deserialize
    serialize_safe = serialize


class ReversedType(_WrapperType):
    typename = "org.apache.cassandra.db.marshal.ReversedType"


class FrozenType(_WrapperType):
    typename = "frozen"


class VectorType(CassandraType):
    """``vector<subtype, n>``: ``n`` values of a subtype, fixed-size values back to back,
    variable-size ones each after its length (an unsigned vint)."""

    typename = "org.apache.cassandra.db.marshal.VectorType"
    vector_size: ClassVar[int] = 0
    subtype: ClassVar[Any] = None

    @classmethod
    def _derive_engine_type(cls):
        sub = cls.subtype
        name = _engine_name(sub)
        cls._engine_type = None if name is None else "vector<%s, %d>" % (name, cls.vector_size)
        cls._walks_values = getattr(sub, "_walks_values", False)
        cls._walks_decoded = getattr(sub, "_walks_decoded", False)
        cls._engine_misreads = getattr(sub, "_engine_misreads", ())
        # The classic driver hands its protocol version to the elements as it is.
        cls._engine_min_protocol = getattr(sub, "_engine_min_protocol", 0)

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
    def _to_engine(cls, v):
        return [_walk(cls.subtype, item) for item in v]

    @classmethod
    def _from_engine(cls, values, protocol_version):
        return [_unwalk(cls.subtype, item, protocol_version) for item in values]

    @classmethod
    def serialize(cls, v, protocol_version):
        if len(v) != cls.vector_size:
            raise ValueError(
                "Expected sequence of size %d for vector of type %s and dimension %d, observed sequence of "
                "length %d" % (cls.vector_size, cls.subtype.typename, cls.vector_size, len(v))
            )
        if cls._engine_type is not None and protocol_version >= cls._engine_min_protocol:
            try:
                return _encode(cls._engine_type, cls._to_engine(v) if cls._walks_values else v)
            except Exception:  # the classic error out of the framing
                pass
        size = cls.subtype.serial_size()
        parts = []
        for item in v:
            data = cls.subtype.serialize(item, protocol_version)
            parts.append(data if size is not None else uvint_pack(len(data)) + data)
        return b"".join(parts)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        size = cls.subtype.serial_size()
        engine = cls._engine_type is not None and protocol_version >= cls._engine_min_protocol
        if size is not None:
            expected = size * cls.vector_size
            if len(byts) != expected:
                raise ValueError(
                    "Expected vector of type %s and dimension %d to have serialized size %d; observed serialized "
                    "size of %d instead" % (cls.subtype.typename, cls.vector_size, expected, len(byts))
                )
            if engine:
                try:
                    value = _decode(cls._engine_type, byts)
                except Exception:  # the classic error, element by element below
                    pass
                else:
                    return cls._from_engine(value, protocol_version) if cls._walks_decoded else value
            return [
                cls.subtype.deserialize(byts[i * size : (i + 1) * size], protocol_version)
                for i in range(cls.vector_size)
            ]
        # Engine gap: it does not refuse bytes left over after the last element; read here.
        out: list[Any] = []
        pos = 0
        while len(out) < cls.vector_size:
            try:
                length, used = uvint_unpack(byts[pos:])
                pos += used
                out.append(cls.subtype.deserialize(byts[pos : pos + length], protocol_version))
            except Exception as exc:
                raise ValueError(
                    "Error reading additional data during vector deserialization after successfully adding %d "
                    "elements" % len(out)
                ) from exc
            pos += length
        if pos < len(byts):
            raise ValueError("Additional bytes remaining after vector deserialization completed")
        return out

    @classmethod
    def cql_parameterized_type(cls):
        return "%s<%s, %s>" % (cls.typename, cls.subtype.cql_parameterized_type(), cls.vector_size)
