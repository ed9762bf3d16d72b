"""CQL types as classes, under the classic driver's names (``cassandra.cqltypes``).

Each CQL type is a class: ``Int32Type.typename == 'int'``, ``cassname`` its Cassandra
marshal class name. Parameterized types are made with :meth:`CassandraType.apply_parameters`
(``MapType.apply_parameters([UTF8Type, Int32Type])``) or read from Cassandra's type strings
with :func:`lookup_casstype` (``lookup_casstype('MapType(UTF8Type, Int32Type)')``); they
know their ``subtypes`` and spell themselves with :meth:`CassandraType.cql_parameterized_type`
(``map<text, int>``). ``serialize(value, protocol_version)`` / ``deserialize(bytes,
protocol_version)`` convert values as the protocol lays them out.

The engine does its own encoding and decoding (in Rust); these classes are for classic code
that names, parses, compares or converts types itself.
"""

from __future__ import annotations

import calendar
import datetime
import ipaddress
import re
import socket
import time
import uuid
from binascii import unhexlify
from collections import namedtuple
from decimal import Decimal
from typing import Any, ClassVar

from turbocql import util
from turbocql.marshal import (  # noqa: F401 - classic names of cassandra.cqltypes
    double_pack,
    double_unpack,
    float_pack,
    float_unpack,
    int8_pack,
    int8_unpack,
    int16_pack,
    int16_unpack,
    int32_pack,
    int32_unpack,
    int64_pack,
    int64_unpack,
    point_be,
    point_le,
    uint16_pack,
    uint16_unpack,
    uint32_le_pack,
    uint32_pack,
    uint32_unpack,
    uvint_pack,
    uvint_unpack,
    varint_pack,
    varint_unpack,
    vints_pack,
    vints_unpack,
)

apache_cassandra_type_prefix = "org.apache.cassandra.db.marshal."
cassandra_empty_type = "org.apache.cassandra.db.marshal.EmptyType"
cql_empty_type = "empty"
cql_timestamp_formats = ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")

_casstypes: dict[str, type] = {}
_cqltypes: dict[str, type] = {}


def trim_if_startswith(s, prefix):
    """``s`` without ``prefix`` if it starts with it."""
    return s[len(prefix) :] if s.startswith(prefix) else s


def cql_typename(casstypename):
    """The CQL spelling of a Cassandra type string (``Int32Type`` -> ``int``) or type class.

    turbocql's result and prepared metadata give CQL type strings (``map<int, text>``,
    ``ks.udt``, ``vector<float, 3>``); for those it returns what the classic driver returns
    for the type class its metadata holds (``map<int, varchar>``, ``frozen<udt>``, ...)."""
    if isinstance(casstypename, str) and _is_cql_type_string(casstypename):
        return _lookup_cql_type(casstypename).cql_parameterized_type()
    return lookup_casstype(casstypename).cql_parameterized_type()


class CassandraTypeType(type):
    """The metaclass of the type classes: registers each by its Cassandra name (for
    :func:`lookup_casstype`) and, for CQL-named types, by its CQL name."""

    def __new__(metacls, name, bases, dct):
        dct.setdefault("cassname", name)
        cls = type.__new__(metacls, name, bases, dct)
        if not name.startswith("_"):
            _casstypes[name] = cls
            if not cls.typename.startswith(apache_cassandra_type_prefix):
                _cqltypes[cls.typename] = cls
        return cls


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


# Type strings


# A name is what Cassandra's marshal names are made of (Java identifiers, dotted
# packages, hex UDT names, ``=>`` of dynamic composites); any other character is an error.
_CASS_TOKEN = re.compile(r"\s*([(),:]|[A-Za-z0-9_.=>$]+)")


def _cass_tokens(typestring):
    tokens = []
    pos = 0
    while pos < len(typestring):
        m = _CASS_TOKEN.match(typestring, pos)
        if m is None:
            if typestring[pos:].strip():
                raise ValueError("Syntax error in %r at %d" % (typestring, pos))
            break
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def _is_int(token):
    return token.isdigit()


def parse_casstype_args(typestring):
    """The type class of a Cassandra type string with parameters
    (``MapType(UTF8Type, Int32Type)``)."""
    tokens = _cass_tokens(typestring)
    # stack of [type name, [(name, arg), ...]]
    stack: list[list[Any]] = [["", []]]
    pending_name = None
    last = None
    for token in tokens:
        if token == "(":
            stack.append([last, []])
            last = None
        elif token == ")":
            if last is not None:
                stack[-1][1].append((pending_name, last))
                pending_name = None
            name, args = stack.pop()
            last = _apply(name, args)
        elif token == ",":
            if last is not None:
                stack[-1][1].append((pending_name, last))
            pending_name = None
            last = None
        elif token == ":":
            pending_name = last.cassname if isinstance(last, type) else str(last)
            last = None
        else:
            last = int(token) if _is_int(token) else token
    if last is not None:
        stack[-1][1].append((pending_name, last))
    args = stack[0][1]
    result = args[0][1] if len(args) == 1 else last
    return lookup_casstype_simple(result) if isinstance(result, str) else result


def _apply(name, args):
    cls = lookup_casstype_simple(name)
    names = [n for n, _ in args]
    types = [lookup_casstype_simple(a) if isinstance(a, str) else a for _, a in args]
    return cls.apply_parameters(types, names)


def lookup_casstype_simple(casstype):
    """The type class of an unparameterized Cassandra type name (prefix optional);
    unknown names get an unrecognized type."""
    shortname = trim_if_startswith(casstype, apache_cassandra_type_prefix)
    try:
        return _casstypes[shortname]
    except KeyError:
        return mkUnrecognizedType(casstype)


def lookup_casstype(casstype):
    """The type class of a Cassandra type string, with parameters or not, or of a type
    class (returned as it is)."""
    if isinstance(casstype, (CassandraType, CassandraTypeType)):
        return casstype
    try:
        return parse_casstype_args(casstype)
    except (ValueError, AssertionError, IndexError) as exc:
        raise ValueError("Don't know how to parse type string %r: %s" % (casstype, exc)) from exc


def is_reversed_casstype(data_type):
    return issubclass(data_type, ReversedType)


def is_counter_type(t):
    if isinstance(t, str):
        t = lookup_casstype(t)
    return issubclass(t, CounterColumnType)


# CQL type strings


_CQL_TOKEN = re.compile(r"""\s*('[^']*'|(?:[A-Za-z0-9_.]|"(?:[^"]|"")*")+|[<>,])""")


def _cql_tokens(cql_type):
    return [m.group(1) for m in _CQL_TOKEN.finditer(cql_type)]


def cql_types_from_string(cql_type):
    """The names in a CQL type string, flattened, without ``frozen``
    (``map<text, frozen<list<int>>>`` -> ``['map', 'text', 'list', 'int']``)."""
    return [t for t in _cql_tokens(cql_type) if t not in ("<", ">", ",", "frozen") and not t.startswith("'")]


def strip_frozen(cql):
    """A CQL type string without its ``frozen<...>`` wrappers, spaced as CQL prints it."""

    def strip(items):
        out: list[Any] = []
        for i, item in enumerate(items):
            if item == "frozen" and i + 1 < len(items) and isinstance(items[i + 1], list):
                continue
            if isinstance(item, list) and i > 0 and items[i - 1] == "frozen":
                out.extend(strip(item))
            elif isinstance(item, list):
                out.append(strip(item))
            else:
                out.append(item)
        return out

    return python_to_cqltype(strip(cqltype_to_python(cql)))


def cqltype_to_python(cql_string):
    """A CQL type string as nested lists: each name, then the list of its parameters
    (``map<text, frozen<list<int>>>`` -> ``['map', ['text', 'frozen', ['list', ['int']]]]``)."""
    tokens = _cql_tokens(cql_string)
    pos = 0

    def sequence():
        nonlocal pos
        items: list[Any] = []
        while pos < len(tokens):
            token = tokens[pos]
            pos += 1
            if token == ">":
                break
            if token == ",":
                continue
            if token == "<":
                items.append(sequence())
            else:
                items.append(token)
        return items

    return sequence()


def python_to_cqltype(types):
    """The inverse of :func:`cqltype_to_python`: a name followed by a list becomes
    ``name<...>``, names in a row are joined with commas."""
    parts: list[str] = []
    for item in types:
        if isinstance(item, list):
            parts[-1] += "<%s>" % python_to_cqltype(item)
        else:
            parts.append(str(item))
    return ", ".join(parts)


# The type classes of CQL type strings (what turbocql's result and prepared metadata hold)

# The classes the classic driver's result metadata holds for each CQL type: the protocol
# has one "varchar" for text and varchar, and gives DateType for timestamp.
_RESULT_CQL_NAMES = {
    "ascii": "AsciiType",
    "bigint": "LongType",
    "blob": "BytesType",
    "boolean": "BooleanType",
    "counter": "CounterColumnType",
    "date": "SimpleDateType",
    "decimal": "DecimalType",
    "double": "DoubleType",
    "duration": "DurationType",
    "float": "FloatType",
    "inet": "InetAddressType",
    "int": "Int32Type",
    "smallint": "ShortType",
    "text": "VarcharType",
    "time": "TimeType",
    "timestamp": "DateType",
    "timeuuid": "TimeUUIDType",
    "tinyint": "ByteType",
    "uuid": "UUIDType",
    "varchar": "VarcharType",
    "varint": "IntegerType",
}
_RESULT_CQL_COLLECTIONS = ("list", "set", "map", "tuple", "vector", "frozen")
_UDT_NAME = re.compile(r"""^((?:[A-Za-z0-9_]|"(?:[^"]|"")*")+)\.((?:[A-Za-z0-9_]|"(?:[^"]|"")*")+)$""")


# (keyspace, type name) -> (field names, field CQL type strings) of the user types the
# schema metadata has read (turbocql.metadata registers them), for _lookup_cql_type.
_user_type_fields: dict[tuple[str, str], tuple[list, list]] = {}


def _known_user_type(keyspace, name):
    return _user_type_fields.get((keyspace, name))


def _is_cql_type_string(typestring):
    """Whether a type string is CQL (``map<int, text>``, ``int``, ``ks.udt``) rather than a
    Cassandra marshal name (``Int32Type``, ``org.apache...MapType(...)``)."""
    text = typestring.strip()
    if "(" in text or text.startswith(apache_cassandra_type_prefix):
        return False
    if "<" in text or text in _RESULT_CQL_NAMES:
        return True
    return _UDT_NAME.match(text) is not None


def _unquote(name):
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1].replace('""', '"')
    return name


def _lookup_cql_type(cql_type, user_type=None):
    """The type class of a CQL type string, as the classic driver's metadata holds it.

    ``frozen<...>`` is dropped (result metadata does not carry it); a ``keyspace.name``
    becomes a :class:`UserType` named ``name``, with the fields ``user_type(keyspace,
    name)`` returns as ``(field_names, field_type_strings)`` if given (none otherwise); a
    quoted custom type (``'org.apache...'``) is looked up as a Cassandra type string.
    Without ``user_type``, the user types the schema metadata has read are known."""
    if user_type is None:
        user_type = _known_user_type

    def build(name, params):
        name = name.strip()
        if params is None:
            if name.startswith("'") and name.endswith("'"):
                return lookup_casstype(name[1:-1])
            known = _RESULT_CQL_NAMES.get(name.lower())
            if known is not None:
                return lookup_casstype_simple(known)
            match = _UDT_NAME.match(name)
            if match is None:
                return lookup_casstype(name)
            keyspace, udt = _unquote(match.group(1)), _unquote(match.group(2))
            fields: Any = user_type(keyspace, udt) if user_type is not None else None
            names, types = fields if fields else ((), ())
            return UserType.make_udt_class(keyspace, udt, list(names), [_lookup_cql_type(t, user_type) for t in types])
        kind = name.lower()
        if kind == "frozen":
            return convert(params)[0]
        if kind == "vector":
            return VectorType.apply_parameters([convert(params[:-1])[0], int(params[-1])])
        cls = {"list": ListType, "set": SetType, "map": MapType, "tuple": TupleType}.get(kind)
        if cls is None:
            raise ValueError("Don't know how to parse CQL type %r" % (cql_type,))
        return cls.apply_parameters(convert(params))

    def convert(items):
        out = []
        i = 0
        while i < len(items):
            item = items[i]
            params = items[i + 1] if i + 1 < len(items) and isinstance(items[i + 1], list) else None
            out.append(build(item, params))
            i += 2 if params is not None else 1
        return out

    types = convert(cqltype_to_python(cql_type))
    if len(types) != 1:
        raise ValueError("Don't know how to parse CQL type %r" % (cql_type,))
    return types[0]


# Scalar types


class BytesType(CassandraType):
    typename = "blob"
    empty_binary_ok = True

    @staticmethod
    def serialize(val, protocol_version):
        return bytes(val)


class DecimalType(CassandraType):
    typename = "decimal"

    @staticmethod
    def deserialize(byts, protocol_version):
        scale = int32_unpack(byts[:4])
        unscaled = varint_unpack(byts[4:])
        return Decimal("%de%d" % (unscaled, -scale))

    @staticmethod
    def serialize(dec, protocol_version):
        try:
            sign, digits, exponent = dec.as_tuple()
        except AttributeError:
            try:
                sign, digits, exponent = Decimal(dec).as_tuple()
            except Exception as exc:
                raise TypeError("Invalid type for Decimal value: %r" % (dec,)) from exc
        unscaled = int("".join(str(d) for d in digits))
        if sign:
            unscaled = -unscaled
        return int32_pack(-exponent) + varint_pack(unscaled)


class UUIDType(CassandraType):
    typename = "uuid"

    @staticmethod
    def deserialize(byts, protocol_version):
        return uuid.UUID(bytes=byts)

    @staticmethod
    def serialize(uuid_, protocol_version):
        try:
            return uuid_.bytes
        except AttributeError as exc:
            raise TypeError("Got a non-UUID object for a UUID value") from exc

    @classmethod
    def serial_size(cls):
        return 16


class BooleanType(CassandraType):
    typename = "boolean"

    @staticmethod
    def deserialize(byts, protocol_version):
        return bool(int8_unpack(byts))

    @staticmethod
    def serialize(truth, protocol_version):
        return int8_pack(bool(truth))

    @classmethod
    def serial_size(cls):
        return 1


class ByteType(CassandraType):
    typename = "tinyint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int8_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int8_pack(byts)


class AsciiType(CassandraType):
    typename = "ascii"
    empty_binary_ok = True

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts.decode("ascii")

    @staticmethod
    def serialize(var, protocol_version):
        try:
            return var.encode("ascii")
        except UnicodeDecodeError:
            return var


class FloatType(CassandraType):
    typename = "float"

    @staticmethod
    def deserialize(byts, protocol_version):
        return float_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return float_pack(byts)

    @classmethod
    def serial_size(cls):
        return 4


class DoubleType(CassandraType):
    typename = "double"

    @staticmethod
    def deserialize(byts, protocol_version):
        return double_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return double_pack(byts)

    @classmethod
    def serial_size(cls):
        return 8


class LongType(CassandraType):
    typename = "bigint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int64_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int64_pack(byts)

    @classmethod
    def serial_size(cls):
        return 8


class Int32Type(CassandraType):
    typename = "int"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int32_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int32_pack(byts)

    @classmethod
    def serial_size(cls):
        return 4


class IntegerType(CassandraType):
    typename = "varint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return varint_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return varint_pack(byts)


class InetAddressType(CassandraType):
    typename = "inet"

    @staticmethod
    def deserialize(byts, protocol_version):
        if len(byts) == 16:
            return socket.inet_ntop(socket.AF_INET6, byts)
        return socket.inet_ntoa(byts)

    @staticmethod
    def serialize(addr, protocol_version):
        if isinstance(addr, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
            return addr.packed
        try:
            if ":" in addr:
                return socket.inet_pton(socket.AF_INET6, addr)
            return socket.inet_aton(addr)
        except (OSError, TypeError) as exc:
            raise ValueError("can't interpret %r as an inet address" % (addr,)) from exc


class CounterColumnType(LongType):
    typename = "counter"


class DateType(CassandraType):
    typename = "timestamp"

    @staticmethod
    def interpret_datestring(val):
        """Milliseconds since the epoch of a date string in one of
        :data:`cql_timestamp_formats`, with an optional ``+HHMM`` / ``-HHMM`` offset
        (local time without one)."""
        offset = None
        if len(val) > 5 and val[-5] in ("+", "-"):
            offset = (int(val[-4:-2]) * 3600 + int(val[-2:]) * 60) * (1 if val[-5] == "+" else -1)
            val = val[:-5]
        for fmt in cql_timestamp_formats:
            try:
                parsed = datetime.datetime.strptime(val, fmt)
            except ValueError:
                continue
            if offset is None:
                return time.mktime(parsed.timetuple()) * 1e3
            return (calendar.timegm(parsed.utctimetuple()) - offset) * 1e3
        raise ValueError("can't interpret %r as a date" % (val,))

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.datetime_from_timestamp(int64_unpack(byts) / 1000.0)

    @staticmethod
    def serialize(v, protocol_version):
        if isinstance(v, datetime.datetime):
            ms = calendar.timegm(v.utctimetuple()) * 1000 + v.microsecond // 1000
        elif isinstance(v, datetime.date):
            ms = calendar.timegm(v.timetuple()) * 1000
        elif isinstance(v, (int, float)):
            ms = v
        else:
            raise TypeError("DateType arguments must be a datetime, date, or timestamp")
        return int64_pack(int(ms))

    @classmethod
    def serial_size(cls):
        return 8


class TimestampType(DateType):
    pass


class TimeUUIDType(DateType):
    typename = "timeuuid"

    def my_timestamp(self):
        return util.unix_time_from_uuid1(self.val)

    @staticmethod
    def deserialize(byts, protocol_version):
        return uuid.UUID(bytes=byts)

    @staticmethod
    def serialize(timeuuid, protocol_version):
        try:
            return timeuuid.bytes
        except AttributeError as exc:
            raise TypeError("Got a non-UUID object for a UUID value") from exc

    @classmethod
    def serial_size(cls):
        return 16


_DATE_EPOCH_DAYS = 2**31


class SimpleDateType(CassandraType):
    typename = "date"

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.Date(uint32_unpack(byts) - _DATE_EPOCH_DAYS)

    @staticmethod
    def serialize(val, protocol_version):
        days = val.days_from_epoch if isinstance(val, util.Date) else util.Date(val).days_from_epoch
        return uint32_pack(days + _DATE_EPOCH_DAYS)


class ShortType(CassandraType):
    typename = "smallint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int16_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int16_pack(byts)


class TimeType(CassandraType):
    typename = "time"

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.Time(int64_unpack(byts))

    @staticmethod
    def serialize(val, protocol_version):
        return int64_pack((val if isinstance(val, util.Time) else util.Time(val)).nanosecond_time)


class DurationType(CassandraType):
    typename = "duration"

    @staticmethod
    def deserialize(byts, protocol_version):
        months, days, nanoseconds = vints_unpack(byts)
        return util.Duration(months, days, nanoseconds)

    @staticmethod
    def serialize(duration, protocol_version):
        try:
            months, days, nanoseconds = duration.months, duration.days, duration.nanoseconds
        except AttributeError as exc:
            raise TypeError("DurationType arguments must be a Duration.") from exc
        return vints_pack([months, days, nanoseconds])


class UTF8Type(CassandraType):
    typename = "text"
    empty_binary_ok = True

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts.decode("utf8")

    @staticmethod
    def serialize(ustr, protocol_version):
        try:
            return ustr.encode("utf-8")
        except UnicodeDecodeError:
            return ustr


class VarcharType(UTF8Type):
    typename = "varchar"


# Parameterized types


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


# DSE geometric and date range types


_WKB_POINT, _WKB_LINESTRING, _WKB_POLYGON = 1, 2, 3


def _wkb_header(kind):
    return b"\x01" + uint32_le_pack(kind)


def _wkb_read(byts):
    little = byts[0] == 1
    order = "little" if little else "big"
    kind = int.from_bytes(byts[1:5], order)
    return little, order, kind, 5


def _wkb_doubles(byts, pos, count, little):
    fmt = point_le if little else point_be
    out = []
    for _ in range(count):
        out.append(fmt.unpack_from(byts, pos))
        pos += 16
    return out, pos


class PointType(CassandraType):
    typename = "PointType"

    @staticmethod
    def serialize(val, protocol_version):
        return _wkb_header(_WKB_POINT) + point_le.pack(val.x, val.y)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, _, _, pos = _wkb_read(byts)
        x, y = (point_le if little else point_be).unpack_from(byts, pos)
        return util.Point(x, y)


class LineStringType(CassandraType):
    typename = "LineStringType"

    @staticmethod
    def serialize(val, protocol_version):
        coords = val.coords
        return _wkb_header(_WKB_LINESTRING) + uint32_le_pack(len(coords)) + b"".join(point_le.pack(*c) for c in coords)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, order, _, pos = _wkb_read(byts)
        count = int.from_bytes(byts[pos : pos + 4], order)
        coords, _ = _wkb_doubles(byts, pos + 4, count, little)
        return util.LineString(coords)


class PolygonType(CassandraType):
    typename = "PolygonType"

    @staticmethod
    def serialize(val, protocol_version):
        rings = [val.exterior.coords] + [ring.coords for ring in val.interiors] if val.exterior.coords else []
        parts = [_wkb_header(_WKB_POLYGON), uint32_le_pack(len(rings))]
        for ring in rings:
            parts.append(uint32_le_pack(len(ring)))
            parts.extend(point_le.pack(*c) for c in ring)
        return b"".join(parts)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, order, _, pos = _wkb_read(byts)
        nrings = int.from_bytes(byts[pos : pos + 4], order)
        pos += 4
        rings = []
        for _ in range(nrings):
            count = int.from_bytes(byts[pos : pos + 4], order)
            ring, pos = _wkb_doubles(byts, pos + 4, count, little)
            rings.append(ring)
        return util.Polygon(rings[0], rings[1:]) if rings else util.Polygon()


class BoundKind:
    """The kinds of DSE date range (the first byte of a ``DateRangeType`` value)."""

    SINGLE_DATE = "SINGLE_DATE"
    CLOSED_RANGE = "CLOSED_RANGE"
    OPEN_RANGE_HIGH = "OPEN_RANGE_HIGH"
    OPEN_RANGE_LOW = "OPEN_RANGE_LOW"
    BOTH_OPEN_RANGE = "BOTH_OPEN_RANGE"
    SINGLE_DATE_OPEN = "SINGLE_DATE_OPEN"

    VALID_RANGE_BOUNDS = (SINGLE_DATE, CLOSED_RANGE, OPEN_RANGE_HIGH, OPEN_RANGE_LOW, BOTH_OPEN_RANGE, SINGLE_DATE_OPEN)

    _bound_str_to_int_map = {name: i for i, name in enumerate(VALID_RANGE_BOUNDS)}
    _bound_int_to_str_map = dict(enumerate(VALID_RANGE_BOUNDS))

    @classmethod
    def to_int(cls, bound_str):
        return cls._bound_str_to_int_map[bound_str.upper()]

    @classmethod
    def to_str(cls, bound_int):
        return cls._bound_int_to_str_map[bound_int].upper()


class DateRangeType(CassandraType):
    typename = "daterange"

    _precision_str_to_int_map = {name: i for i, name in enumerate(util.DateRangePrecision.PRECISIONS)}
    _precision_int_to_str_map = dict(enumerate(util.DateRangePrecision.PRECISIONS))

    @classmethod
    def _encode_precision(cls, precision_str):
        try:
            return cls._precision_str_to_int_map[precision_str.upper()]
        except KeyError:
            raise ValueError(
                "%r is not a valid DateRange precision string. Valid values: %s"
                % (precision_str, ", ".join(cls._precision_str_to_int_map))
            ) from None

    @classmethod
    def _decode_precision(cls, precision_int):
        try:
            return cls._precision_int_to_str_map[precision_int]
        except KeyError:
            raise ValueError(
                "%s not a valid DateRange precision int. Valid values: %s"
                % (precision_int, ", ".join(str(i) for i in cls._precision_int_to_str_map))
            ) from None

    @classmethod
    def _bound_bytes(cls, bound):
        return int64_pack(bound.milliseconds) + int8_pack(cls._encode_precision(bound.precision))

    @classmethod
    def serialize(cls, v, protocol_version):
        open_bound = util.OPEN_BOUND
        try:
            value = v.value
        except AttributeError:
            raise ValueError(
                "%s.serialize expects an object with a value attribute; got %r" % (cls.__name__, v)
            ) from None
        if value is not None:
            if value == open_bound:
                return int8_pack(BoundKind.to_int(BoundKind.SINGLE_DATE_OPEN))
            return int8_pack(BoundKind.to_int(BoundKind.SINGLE_DATE)) + cls._bound_bytes(value)
        try:
            lower, upper = v.lower_bound, v.upper_bound
        except AttributeError:
            raise ValueError(
                "%s.serialize expects an object with lower_bound and upper_bound attributes; got %r" % (cls.__name__, v)
            ) from None
        if lower == open_bound and upper == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.BOTH_OPEN_RANGE))
        if upper == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.OPEN_RANGE_HIGH)) + cls._bound_bytes(lower)
        if lower == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.OPEN_RANGE_LOW)) + cls._bound_bytes(upper)
        return int8_pack(BoundKind.to_int(BoundKind.CLOSED_RANGE)) + cls._bound_bytes(lower) + cls._bound_bytes(upper)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        kind = BoundKind.to_str(int8_unpack(byts[:1]))

        def bound(pos):
            return util.DateRangeBound(int64_unpack(byts[pos : pos + 8]), cls._decode_precision(byts[pos + 8]))

        if kind == BoundKind.SINGLE_DATE:
            return util.DateRange(value=bound(1))
        if kind == BoundKind.SINGLE_DATE_OPEN:
            return util.DateRange(value=util.OPEN_BOUND)
        if kind == BoundKind.BOTH_OPEN_RANGE:
            return util.DateRange(lower_bound=util.OPEN_BOUND, upper_bound=util.OPEN_BOUND)
        if kind == BoundKind.OPEN_RANGE_HIGH:
            return util.DateRange(lower_bound=bound(1), upper_bound=util.OPEN_BOUND)
        if kind == BoundKind.OPEN_RANGE_LOW:
            return util.DateRange(lower_bound=util.OPEN_BOUND, upper_bound=bound(1))
        return util.DateRange(lower_bound=bound(1), upper_bound=bound(10))
