"""CQL types as classes, under the classic driver's names (``cassandra.cqltypes``).

Each CQL type is a class: ``Int32Type.typename == 'int'``, ``cassname`` its Cassandra
marshal class name. Parameterized types are made with :meth:`CassandraType.apply_parameters`
(``MapType.apply_parameters([UTF8Type, Int32Type])``) or read from Cassandra's type strings
with :func:`lookup_casstype` (``lookup_casstype('MapType(UTF8Type, Int32Type)')``); they
know their ``subtypes`` and spell themselves with :meth:`CassandraType.cql_parameterized_type`
(``map<text, int>``). ``serialize(value, protocol_version)`` / ``deserialize(bytes,
protocol_version)`` convert values as the protocol lays them out, through the engine's codec
(``_engine.encode`` / ``_engine.decode``, the one that binds and reads every value): each
class knows the engine's name of its type, and keeps the classic driver's reading of the
values it is given and its errors.

These classes are for classic code that names, parses, compares or converts types itself.

The classic module's names, gathered from the modules of ``turbocql._types`` that hold them
by concern: the base class and registry in ``base``, the single-value types in ``scalar``,
the parameterized ones in ``params``, the DSE ones in ``dse``; the parsing of type strings
apart from the classes, Cassandra's marshal strings in ``casstype_parse`` and CQL's in
``cqltype_parse``.
"""

from __future__ import annotations

from turbocql import util  # noqa: F401 - a name of cassandra.cqltypes
from turbocql._types.base import (  # noqa: F401 - private names: former callers
    EMPTY,
    CassandraType,
    CassandraTypeType,
    EmptyValue,
    _casstypes,
    _cqltypes,
    _UnrecognizedType,
    apache_cassandra_type_prefix,
    cassandra_empty_type,
    cql_empty_type,
    cql_timestamp_formats,
    mkUnrecognizedType,
    trim_if_startswith,
)
from turbocql._types.casstype_parse import (  # noqa: F401
    _CASS_TOKEN,
    _apply,
    _cass_tokens,
    _is_int,
    lookup_casstype,
    lookup_casstype_simple,
    parse_casstype_args,
)
from turbocql._types.cqltype_parse import (  # noqa: F401
    _CQL_TOKEN,
    _RESULT_CQL_COLLECTIONS,
    _RESULT_CQL_NAMES,
    _UDT_NAME,
    _cql_tokens,
    _is_cql_type_string,
    _known_user_type,
    _lookup_cql_type,
    _unquote,
    _user_type_fields,
    cql_typename,
    cql_types_from_string,
    cqltype_to_python,
    python_to_cqltype,
    strip_frozen,
)
from turbocql._types.dse import (  # noqa: F401
    _WKB_LINESTRING,
    _WKB_POINT,
    _WKB_POLYGON,
    BoundKind,
    DateRangeType,
    LineStringType,
    PointType,
    PolygonType,
    _wkb_doubles,
    _wkb_header,
    _wkb_read,
)
from turbocql._types.params import (  # noqa: F401
    ColumnToCollectionType,
    CompositeType,
    DynamicCompositeType,
    FrozenType,
    ListType,
    MapType,
    ReversedType,
    SetType,
    TupleType,
    UserType,
    VectorType,
    _ParameterizedType,
    _SimpleParameterizedType,
)
from turbocql._types.scalar import (  # noqa: F401
    _DATE_EPOCH_DAYS,
    AsciiType,
    BooleanType,
    BytesType,
    ByteType,
    CounterColumnType,
    DateType,
    DecimalType,
    DoubleType,
    DurationType,
    FloatType,
    InetAddressType,
    Int32Type,
    IntegerType,
    LongType,
    ShortType,
    SimpleDateType,
    TimestampType,
    TimeType,
    TimeUUIDType,
    UTF8Type,
    UUIDType,
    VarcharType,
)
from turbocql._util.homes import publish as _publish
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


def is_reversed_casstype(data_type):
    return issubclass(data_type, ReversedType)


def is_counter_type(t):
    if isinstance(t, str):
        t = lookup_casstype(t)
    return issubclass(t, CounterColumnType)


# This module is the home of the classes and functions of cassandra.cqltypes that live in
# turbocql._types (reprs, docs and pickles name turbocql.cqltypes): every type class bound
# here, and the names below.
_publish(
    __name__,
    [name for name, value in tuple(globals().items()) if isinstance(value, CassandraTypeType)]
    + [
        "BoundKind",
        "CassandraTypeType",
        "EmptyValue",
        "cql_typename",
        "cql_types_from_string",
        "cqltype_to_python",
        "lookup_casstype",
        "lookup_casstype_simple",
        "mkUnrecognizedType",
        "parse_casstype_args",
        "python_to_cqltype",
        "strip_frozen",
        "trim_if_startswith",
    ],
)
