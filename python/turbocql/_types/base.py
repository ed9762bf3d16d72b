"""The base of the CQL type classes (re-exported by ``turbocql.cqltypes``): the
metaclass that registers each class by its Cassandra and CQL names, :class:`CassandraType`,
the empty value, the types of names no class knows, the constants of type names, and
``_encode`` / ``_decode``, the engine's codec the classes convert values with.
"""

from __future__ import annotations

from typing import Any, ClassVar

from turbocql import _engine

apache_cassandra_type_prefix = "org.apache.cassandra.db.marshal."
cassandra_empty_type = "org.apache.cassandra.db.marshal.EmptyType"
cql_empty_type = "empty"
cql_timestamp_formats = ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")

_casstypes: dict[str, type] = {}
_cqltypes: dict[str, type] = {}

_engine_encode = _engine.encode
_engine_decode = _engine.decode


def _encode(cql_type, value):
    """The engine's bytes of ``value`` as a value of the engine's type ``cql_type``."""
    return _engine_encode(cql_type, value)


def _decode(cql_type, data):
    """The engine's Python value of the bytes ``data`` of the engine's type ``cql_type``."""
    if data.__class__ is not bytes:
        data = bytes(data)  # a bytearray or memoryview (the classic codecs read any buffer)
    return _engine_decode(cql_type, data)


def trim_if_startswith(s, prefix):
    """``s`` without ``prefix`` if it starts with it."""
    return s[len(prefix) :] if s.startswith(prefix) else s


class CassandraTypeType(type):
    """The metaclass of the type classes: registers each by its Cassandra name (for
    :func:`lookup_casstype`) and, for CQL-named types, by its CQL name."""

    def __new__(metacls, name, bases, dct):
        dct.setdefault("cassname", name)
        # A class made by a call (a parameterized type, a UDT's) rather than a class
        # statement belongs to the public module, as the classes of the statements do.
        dct.setdefault("__module__", "turbocql.cqltypes")
        cls = type.__new__(metacls, name, bases, dct)
        if "subtypes" in dct or "subtype" in dct:
            cls._derive_engine_type()
        # A class with its own serialize or deserialize (a classic subclass) is converted by
        # them, wherever it is: parameterized types holding it convert in Python, not as the
        # engine's type its base names.
        if ("serialize" in dct or "deserialize" in dct) and "_engine_type" not in dct:
            cls._engine_type = None
        if not name.startswith("_"):
            _casstypes[name] = cls
            if not cls.typename.startswith(apache_cassandra_type_prefix):
                _cqltypes[cls.typename] = cls
        if "support_empty_values" in dct:
            _tell_engine_empty_values()
        return cls

    def __setattr__(cls, name, value):
        type.__setattr__(cls, name, value)
        # The engine decodes without these classes: it keeps which types read an empty
        # cell as EMPTY, told on each change (subclasses inherit the flag, so all are read).
        if name == "support_empty_values":
            _tell_engine_empty_values()

    def __delattr__(cls, name):
        type.__delattr__(cls, name)
        if name == "support_empty_values":
            _tell_engine_empty_values()


def _tell_engine_empty_values():
    """Hands the engine the CQL types whose registered class has ``support_empty_values``."""
    _engine._set_empty_values(
        [name for name in _engine.EMPTY_VALUE_TYPES if getattr(_cqltypes.get(name), "support_empty_values", False)]
    )


class EmptyValue:
    """The value of an empty (zero-byte) cell of a type that allows one."""

    def __str__(self):
        return "EMPTY"

    __repr__ = __str__


EMPTY = EmptyValue()


class CassandraType(metaclass=CassandraTypeType):
    """Base class of the CQL types."""

    typename: ClassVar[str] = "'org.apache.cassandra.db.marshal.CassandraType'"
    cassname: ClassVar[str]
    subtypes: ClassVar[Any] = ()
    num_subtypes: ClassVar[Any] = 0
    empty_binary_ok = False
    support_empty_values = False
    # The type as the engine's codec names it (``_engine.encode``), None for a type it does
    # not convert (custom, DSE, legacy marshal types): see scalar, params.
    _engine_type: ClassVar[str | None] = None
    # Whether values need ``_to_engine`` before the engine converts them as classic code
    # means them (an int ``date`` is the raw value, ...), and decoded ones ``_from_engine``
    # to be what the classic driver gives (a map's OrderedMapSerializedKey, a UDT's class).
    _walks_values: ClassVar[bool] = False
    _walks_decoded: ClassVar[bool] = False
    # The lowest protocol version whose layout of the type's values is the engine's (v1 and
    # v2 give collections 16-bit sizes).
    _engine_min_protocol: ClassVar[int] = 0
    # Bytes that, inside a value of a type holding this one, may be an element the engine
    # reads otherwise than the classic driver (an empty varint as 0): such values are read
    # in Python.
    _engine_misreads: ClassVar[tuple[bytes, ...]] = ()

    def __init__(self, val):
        self.val = self.validate(val)

    def __repr__(self):
        return "<%s(%r)>" % (self.cql_parameterized_type(), self.val)

    @staticmethod
    def validate(val):
        return val

    @classmethod
    def from_binary(cls, byts, protocol_version):
        """The value of a cell: None for a null cell, :data:`EMPTY` (or None) for an
        empty one of a type without empty values, else :meth:`deserialize`."""
        if byts is None:
            return None
        if len(byts) == 0 and not cls.empty_binary_ok:
            return EMPTY if cls.support_empty_values else None
        return cls.deserialize(byts, protocol_version)

    @classmethod
    def to_binary(cls, val, protocol_version):
        """The bytes of a value (empty for None)."""
        return b"" if val is None else cls.serialize(val, protocol_version)

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts

    @staticmethod
    def serialize(val, protocol_version):
        return val

    @classmethod
    def _to_engine(cls, val):
        """``val`` as the engine takes it for this type (with ``_walks_values``)."""
        return val

    @classmethod
    def _from_engine(cls, val, protocol_version):
        """The engine's decoded ``val`` as the classic driver gives it (with ``_walks_decoded``)."""
        return val

    @classmethod
    def _derive_engine_type(cls):
        """Sets the engine's type of a class made with parameters (``subtypes``, a vector's
        ``subtype``) from theirs; see params."""

    @classmethod
    def serial_size(cls):
        """The size of every value of the type in bytes, or None if it varies."""
        return None

    @classmethod
    def cass_parameterized_type_with(cls, subtypes, full=False):
        cname = cls.cassname
        if full and "." not in cname:
            cname = apache_cassandra_type_prefix + cname
        if not subtypes:
            return cname
        return "%s(%s)" % (cname, ", ".join(sub.cass_parameterized_type(full=full) for sub in subtypes))

    @classmethod
    def apply_parameters(cls, subtypes, names=None):
        """The type with these subtypes (``ListType.apply_parameters([Int32Type])``)."""
        if cls.num_subtypes != "UNKNOWN" and len(subtypes) != cls.num_subtypes:
            raise ValueError(
                "%s types require %d subtypes (%d given)" % (cls.typename, cls.num_subtypes, len(subtypes))
            )
        newname = cls.cass_parameterized_type_with(subtypes)
        return type(cls)(newname, (cls,), {"subtypes": subtypes, "cassname": cls.cassname, "fieldnames": names})

    @classmethod
    def cql_parameterized_type(cls):
        """The type as CQL spells it (``map<text, int>``)."""
        if not cls.subtypes:
            return cls.typename
        return "%s<%s>" % (cls.typename, ", ".join(sub.cql_parameterized_type() for sub in cls.subtypes))

    @classmethod
    def cass_parameterized_type(cls, full=False):
        """The type as Cassandra spells it (``MapType(UTF8Type, Int32Type)``; with
        ``full``, the marshal package in front of each name)."""
        return cls.cass_parameterized_type_with(cls.subtypes, full=full)


class _UnrecognizedType(CassandraType):
    num_subtypes: ClassVar[Any] = "UNKNOWN"


def mkUnrecognizedType(casstypename):
    """A type class for a Cassandra type this module does not know (bytes as they are)."""
    return CassandraTypeType(casstypename, (_UnrecognizedType,), {"typename": "'%s'" % casstypename})
