"""CQL type strings (``map<text, frozen<list<int>>>``, ``ks.udt``): their names and
nesting (:func:`cqltype_to_python`, :func:`python_to_cqltype`, :func:`strip_frozen`,
:func:`cql_types_from_string`), the type classes the classic driver's metadata holds for
them (``_lookup_cql_type``, with the user types the schema metadata registers), and
:func:`cql_typename` (re-exported by ``turbocql.cqltypes``).
"""

from __future__ import annotations

import re
from typing import Any

from turbocql._types.base import apache_cassandra_type_prefix
from turbocql._types.casstype_parse import lookup_casstype, lookup_casstype_simple
from turbocql._types.params import ListType, MapType, SetType, TupleType, UserType, VectorType


def cql_typename(casstypename):
    """The CQL spelling of a Cassandra type string (``Int32Type`` -> ``int``) or type class.

    turbocql's result and prepared metadata give CQL type strings (``map<int, text>``,
    ``ks.udt``, ``vector<float, 3>``); for those it returns what the classic driver returns
    for the type class its metadata holds (``map<int, varchar>``, ``frozen<udt>``, ...)."""
    if isinstance(casstypename, str) and _is_cql_type_string(casstypename):
        return _lookup_cql_type(casstypename).cql_parameterized_type()
    return lookup_casstype(casstypename).cql_parameterized_type()


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
