"""Every public name of the classic driver's user-facing modules is in turbocql (or listed
as deliberately absent, with the reason), and the names classic code calls behave as the
classic driver's: util helpers, cqltypes, marshal, the timestamp generator. No server."""

import datetime
import decimal
import importlib.util
import logging
import sys
import uuid
import warnings
from pathlib import Path

import pytest

cassandra = pytest.importorskip("cassandra")

from cassandra import cqltypes as c_cqltypes  # noqa: E402
from cassandra import marshal as c_marshal  # noqa: E402
from cassandra import util as c_util  # noqa: E402
from cassandra.timestamps import MonotonicTimestampGenerator as ClassicGenerator  # noqa: E402

from turbocql import UnsupportedOperation, cqltypes, marshal, util  # noqa: E402
from turbocql.timestamps import MonotonicTimestampGenerator  # noqa: E402

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "public_names.py"


def _tool():
    spec = importlib.util.spec_from_file_location("public_names", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["public_names"] = module
    spec.loader.exec_module(module)
    return module


def test_no_public_name_missing():
    report = _tool().check()
    assert report.missing == []
    by_module = {m.classic: m for m in report.modules}
    assert by_module["cassandra.io.libevreactor"].present  # a reactor module is walked
    assert "MonotonicTimestampGenerator" in by_module["cassandra.timestamps"].present
    assert "LibevConnection" in by_module["cassandra.io.libevreactor"].present


def test_tool_reports_a_missing_name(monkeypatch):
    tool = _tool()
    monkeypatch.delitem(tool.ABSENT, "PrepareMessage")
    report = tool.check(("cassandra.query", "cassandra.protocol"))
    assert "turbocql.protocol.PrepareMessage" in report.missing


def test_reactor_classes_are_configuration_only():
    from turbocql.cluster import Cluster
    from turbocql.io.asyncioreactor import AsyncioConnection
    from turbocql.io.asyncorereactor import AsyncoreConnection
    from turbocql.io.eventletreactor import EventletConnection
    from turbocql.io.geventreactor import GeventConnection
    from turbocql.io.libevreactor import LibevConnection
    from turbocql.io.twistedreactor import TwistedConnection

    for cls in (
        LibevConnection,
        AsyncoreConnection,
        AsyncioConnection,
        GeventConnection,
        EventletConnection,
        TwistedConnection,
    ):
        cluster = Cluster(["127.0.0.1"], connection_class=cls)
        assert cluster is not None
        cls.initialize_reactor()
        with pytest.raises(UnsupportedOperation):
            cls()


DT = datetime.datetime(2020, 5, 6, 7, 8, 9, 123456)


@pytest.mark.parametrize(
    "name, args",
    [
        ("ms_timestamp_from_datetime", (DT,)),
        ("ms_timestamp_from_datetime", (datetime.datetime(1960, 5, 6, 7, 8, 9, 123500),)),
        ("utc_datetime_from_ms_timestamp", (1588748889123,)),
        ("datetime_from_timestamp", (1588748889.1234567,)),
        ("uuid_from_time", (DT, 1, 2)),
        ("uuid_from_time", (DT.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=2))), 0x1234, 0x3FFF)),
        ("uuid_from_time", (1588748889.123456, 0xFFFFFFFFFFFF, 0)),
        ("uuid_from_time", (-1.5, 0, 0)),
        ("min_uuid_from_time", (1588748889.5,)),
        ("max_uuid_from_time", (1588748889.5,)),
        ("unix_time_from_uuid1", (uuid.UUID("573d6900-8f68-11ea-8002-000000000001"),)),
        ("datetime_from_uuid1", (uuid.UUID("573d6900-8f68-11ea-8002-000000000001"),)),
        ("list_contents_to_tuple", ([1, [2, [3]], {4}],)),
    ],
)
def test_util_functions_as_classic(name, args):
    assert getattr(util, name)(*args) == getattr(c_util, name)(*args)


def test_util_uuid_errors_and_constants():
    assert util.LOWEST_TIME_UUID == c_util.LOWEST_TIME_UUID
    assert util.HIGHEST_TIME_UUID == c_util.HIGHEST_TIME_UUID
    with pytest.raises(ValueError):
        util.uuid_from_time(1, clock_seq=2**14)
    with pytest.raises(ValueError):
        util.uuid_from_time(1, node=2**48)
    random_one = util.uuid_from_time(DT)
    assert random_one.version == 1 and util.datetime_from_uuid1(random_one) == DT
    assert util.sortedset is util.SortedSet
    from collections import OrderedDict

    assert util.OrderedDict is OrderedDict


@pytest.mark.parametrize(
    "kind, wkt",
    [
        ("Point", "POINT (1 2)"),
        ("Point", "POINT (1.5 -2)"),
        ("LineString", "LINESTRING (1 2, 3 4)"),
        ("LineString", "LINESTRING EMPTY"),
        ("Polygon", "POLYGON ((1 2, 3 4, 5 6, 1 2), (1 1, 2 2, 1 1))"),
        ("Polygon", "POLYGON EMPTY"),
    ],
)
def test_geometry_as_classic(kind, wkt):
    ours, theirs = getattr(util, kind).from_wkt(wkt), getattr(c_util, kind).from_wkt(wkt)
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    with pytest.raises(ValueError):
        getattr(util, kind).from_wkt("CIRCLE (1 2)")


def test_geometry_values_as_classic():
    for args in ((1, 2), (1.5, 2.25)):
        assert str(util.Point(*args)) == str(c_util.Point(*args))
        assert repr(util.Point(*args)) == repr(c_util.Point(*args))
    coords = [(1, 2), (3, 4), (5, 6)]
    assert str(util.LineString(coords)) == str(c_util.LineString(coords))
    assert str(util.Polygon(coords, [coords])) == str(c_util.Polygon(coords, [coords]))
    assert repr(util.Polygon(coords, [coords])) == repr(c_util.Polygon(coords, [coords]))
    assert str(util.Distance(1, 2, 3)) == str(c_util.Distance(1, 2, 3))
    assert util.Point(1, 2) == util.Point(1, 2) and hash(util.Point(1, 2)) == hash(util.Point(1.0, 2.0))


@pytest.mark.parametrize("precision", c_util.DateRangePrecision.PRECISIONS)
@pytest.mark.parametrize("ms", [1588748889123, -1, 0, 951782400000, 1709251199999])
def test_date_range_precision_as_classic(precision, ms):
    ours, theirs = util.DateRangePrecision, c_util.DateRangePrecision
    assert ours.round_down_to_precision(ms, precision) == theirs.round_down_to_precision(ms, precision)
    assert ours.round_up_to_precision(ms, precision) == theirs.round_up_to_precision(ms, precision)
    assert str(util.DateRangeBound(ms, precision)) == str(c_util.DateRangeBound(ms, precision))
    assert repr(util.DateRangeBound(ms, precision)) == repr(c_util.DateRangeBound(ms, precision))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"value": (1588748889123, "DAY")},
        {"lower_bound": (1588748889123, "MILLISECOND"), "upper_bound": (1688748889123, "YEAR")},
        {"lower_bound": (1588748889123, "HOUR")},
        {"upper_bound": (1688748889123, "MONTH")},
    ],
)
def test_date_range_as_classic(kwargs):
    ours, theirs = util.DateRange(**kwargs), c_util.DateRange(**kwargs)
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    serialized = c_cqltypes.DateRangeType.serialize(theirs, 4)
    assert cqltypes.DateRangeType.serialize(ours, 4) == serialized
    assert repr(cqltypes.DateRangeType.deserialize(serialized, 4)) == repr(
        c_cqltypes.DateRangeType.deserialize(serialized, 4)
    )


def test_date_range_errors():
    with pytest.raises(ValueError):
        util.DateRange()
    bound = util.DateRangeBound(5, "DAY")
    with pytest.raises(ValueError):
        util.DateRange(value=bound, lower_bound=bound)
    with pytest.raises(ValueError):
        util.DateRangeBound(1, "WEEK")
    assert str(util.OPEN_BOUND) == "*"


@pytest.mark.parametrize(
    "text", ["3.11.4", "4.0", "4.0.1-SNAPSHOT", "1.2.3.4", "5.0-beta1", "6.8.0.20190101", "1.2.3.4-x"]
)
def test_version_as_classic(text):
    assert repr(util.Version(text)) == repr(c_util.Version(text))
    assert str(util.Version(text)) == text
    ours = util.Version(text)
    theirs = c_util.Version(text)
    assert (ours.major, ours.minor, ours.patch, ours.build, ours.prerelease) == (
        theirs.major,
        theirs.minor,
        theirs.patch,
        theirs.build,
        theirs.prerelease,
    )


def test_version_order_as_classic():
    texts = ["4.0", "3.11.4", "4.0-beta1", "4.0.1", "4.0.0.3", "4.0-beta2", "4.0-rc1", "3.0.1-beta"]
    assert [str(v) for v in sorted(util.Version(t) for t in texts)] == [
        str(v) for v in sorted(c_util.Version(t) for t in texts)
    ]
    assert util.Version("4.0") == util.Version("4.0.0")
    for bad in ("4", "4.0.x", "1.2.3.4.5", ""):
        with pytest.raises(ValueError):
            util.Version(bad)


TYPE_STRINGS = [
    "Int32Type",
    "org.apache.cassandra.db.marshal.UTF8Type",
    "MapType(UTF8Type,Int32Type)",
    "org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,"
    "org.apache.cassandra.db.marshal.Int32Type)",
    "ListType(SetType(LongType))",
    "FrozenType(ListType(Int32Type))",
    "ReversedType(TimeUUIDType)",
    "TupleType(Int32Type,UTF8Type,BooleanType)",
    "CompositeType(UTF8Type, Int32Type)",
    "VectorType(FloatType, 3)",
    "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.UTF8Type, 2)",
    "FooType",
    "ColumnToCollectionType(6162:ListType(Int32Type))",
    "DateRangeType",
    "PointType",
    "UserType(ks,6e616d65,6669656c64:UTF8Type,6f74686572:Int32Type)",
    "MapType(UTF8Type,FrozenType(UserType(ks,6e616d65,6669656c64:UTF8Type)))",
]


@pytest.mark.parametrize("typestring", TYPE_STRINGS)
def test_lookup_casstype_as_classic(typestring):
    ours, theirs = cqltypes.lookup_casstype(typestring), c_cqltypes.lookup_casstype(typestring)
    assert ours.__name__ == theirs.__name__
    for attr in ("typename", "cassname", "num_subtypes"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.cql_parameterized_type() == theirs.cql_parameterized_type()
    assert ours.cass_parameterized_type() == theirs.cass_parameterized_type()
    assert ours.cass_parameterized_type(full=True) == theirs.cass_parameterized_type(full=True)
    assert [t.__name__ for t in ours.subtypes] == [t.__name__ for t in theirs.subtypes]
    assert ours.serial_size() == theirs.serial_size()


def test_apply_parameters_as_classic():
    ours = cqltypes.MapType.apply_parameters(
        [cqltypes.UTF8Type, cqltypes.ListType.apply_parameters([cqltypes.Int32Type])]
    )
    theirs = c_cqltypes.MapType.apply_parameters(
        [c_cqltypes.UTF8Type, c_cqltypes.ListType.apply_parameters([c_cqltypes.Int32Type])]
    )
    assert ours.cql_parameterized_type() == theirs.cql_parameterized_type() == "map<text, list<int>>"
    assert ours.cass_parameterized_type() == theirs.cass_parameterized_type()
    with pytest.raises(ValueError, match="map types require 2 subtypes"):
        cqltypes.MapType.apply_parameters([cqltypes.UTF8Type])
    udt = cqltypes.UserType.make_udt_class("ks", "addr", ["street", "zip"], [cqltypes.UTF8Type, cqltypes.Int32Type])
    classic_udt = c_cqltypes.UserType.make_udt_class(
        "ks", "addr", ["street", "zip"], [c_cqltypes.UTF8Type, c_cqltypes.Int32Type]
    )
    assert udt.cql_parameterized_type() == classic_udt.cql_parameterized_type() == "frozen<addr>"
    data = classic_udt.serialize(("x", 5), 4)
    assert udt.serialize(("x", 5), 4) == data
    assert repr(udt.deserialize(data, 4)) == repr(classic_udt.deserialize(data, 4))


VALUES = [
    ("Int32Type", 5),
    ("LongType", -5),
    ("CounterColumnType", 7),
    ("ShortType", 7),
    ("ByteType", -1),
    ("BooleanType", True),
    ("FloatType", 1.5),
    ("DoubleType", 2.25),
    ("UTF8Type", "héllo"),
    ("AsciiType", "x"),
    ("BytesType", b"\x00\x01"),
    ("DecimalType", decimal.Decimal("-12.345")),
    ("DecimalType", 1.1),
    ("IntegerType", -129),
    ("IntegerType", 2**70),
    ("UUIDType", uuid.UUID(int=5)),
    ("TimeUUIDType", uuid.UUID("573d6900-8f68-11ea-8002-000000000001")),
    ("InetAddressType", "127.0.0.1"),
    ("InetAddressType", "::1"),
    ("DateType", datetime.datetime(2020, 1, 2, 3, 4, 5, 6789)),
    ("DateType", datetime.date(2020, 1, 2)),
    ("DateType", 1588748889123),
    ("SimpleDateType", datetime.date(2020, 1, 2)),
    ("TimeType", datetime.time(1, 2, 3, 4)),
    ("ListType(Int32Type)", [1, 2, None]),
    ("SetType(UTF8Type)", {"a", "b"}),
    ("MapType(UTF8Type,Int32Type)", {"a": 1, "b": None}),
    ("TupleType(Int32Type,UTF8Type)", (1, None)),
    ("TupleType(Int32Type,UTF8Type)", (1,)),
    ("VectorType(FloatType, 3)", [1.0, 2, 3]),
    ("VectorType(UTF8Type, 2)", ["a", "bc"]),
    ("FrozenType(ListType(Int32Type))", [1]),
    ("ReversedType(Int32Type)", 3),
]


@pytest.mark.parametrize("typestring, value", VALUES)
def test_serialize_deserialize_as_classic(typestring, value):
    ours, theirs = cqltypes.lookup_casstype(typestring), c_cqltypes.lookup_casstype(typestring)
    data = theirs.serialize(value, 4)
    assert ours.serialize(value, 4) == data
    decoded, classic_decoded = ours.deserialize(data, 4), theirs.deserialize(data, 4)
    assert repr(decoded) == repr(classic_decoded) or str(decoded) == str(classic_decoded)
    assert ours.from_binary(None, 4) is None and ours.to_binary(None, 4) == b""


def test_duration_and_geometry_serialization_as_classic():
    data = c_cqltypes.DurationType.serialize(c_util.Duration(1, -2, 3), 4)
    assert cqltypes.DurationType.serialize(util.Duration(1, -2, 3), 4) == data
    assert cqltypes.DurationType.deserialize(data, 4) == util.Duration(1, -2, 3)
    ring = [(1, 2), (3, 4), (5, 6), (1, 2)]
    for kind, args in (("Point", (1, 2)), ("LineString", (ring,)), ("Polygon", (ring, [ring]))):
        name = kind + "Type"
        data = getattr(c_cqltypes, name).serialize(getattr(c_util, kind)(*args), 4)
        assert getattr(cqltypes, name).serialize(getattr(util, kind)(*args), 4) == data
        assert str(getattr(cqltypes, name).deserialize(data, 4)) == str(getattr(c_cqltypes, name).deserialize(data, 4))


def test_empty_cells_as_classic():
    for name in ("Int32Type", "UTF8Type", "BytesType"):
        assert cqltypes.lookup_casstype(name).from_binary(b"", 4) == c_cqltypes.lookup_casstype(name).from_binary(
            b"", 4
        )
    assert repr(cqltypes.EMPTY) == "EMPTY"


@pytest.mark.parametrize(
    "cql",
    ["int", "map<text,int>", "frozen<list<int>>", "list<frozen<map<text,int>>>", "tuple<int,text>", "vector<float,3>"],
)
def test_cql_type_strings_as_classic(cql):
    for name in ("cql_types_from_string", "cqltype_to_python", "strip_frozen"):
        assert getattr(cqltypes, name)(cql) == getattr(c_cqltypes, name)(cql), name
    nested = c_cqltypes.cqltype_to_python(cql)
    assert cqltypes.python_to_cqltype(nested) == c_cqltypes.python_to_cqltype(nested)


def test_cql_typename_and_predicates():
    for name in ("Int32Type", "org.apache.cassandra.db.marshal.ReversedType(Int32Type)", "MapType(UTF8Type,Int32Type)"):
        assert cqltypes.cql_typename(name) == c_cqltypes.cql_typename(name)
    assert cqltypes.is_counter_type(cqltypes.CounterColumnType)
    assert not cqltypes.is_counter_type(cqltypes.LongType)
    assert cqltypes.is_reversed_casstype(cqltypes.lookup_casstype("ReversedType(Int32Type)"))
    assert cqltypes.lookup_casstype(cqltypes.Int32Type) is cqltypes.Int32Type


@pytest.mark.parametrize(
    "value", [0, 1, 127, 128, 300, 2**14, 2**21 - 1, 2**21, 2**35, 2**56 - 1, 2**56, 2**63, 2**64 - 1]
)
def test_uvint_as_classic(value):
    data = c_marshal.uvint_pack(value)
    assert marshal.uvint_pack(value) == data
    assert marshal.uvint_unpack(data + b"x") == c_marshal.uvint_unpack(data + b"x")


@pytest.mark.parametrize("value", [0, 1, -1, 127, 128, -128, -129, 255, 256, 2**63, -(2**63), 10**30, -(10**30)])
def test_varint_as_classic(value):
    assert marshal.varint_pack(value) == c_marshal.varint_pack(value)
    assert marshal.varint_unpack(c_marshal.varint_pack(value)) == value


def test_fixed_size_packers_as_classic():
    values = [0, -1, 5, -(2**63), 2**63 - 1, 12345]
    assert marshal.vints_pack(values) == c_marshal.vints_pack(values)
    assert marshal.vints_unpack(c_marshal.vints_pack(values)) == c_marshal.vints_unpack(c_marshal.vints_pack(values))
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "uint32_le"):
        data = getattr(c_marshal, name + "_pack")(5)
        assert getattr(marshal, name + "_pack")(5) == data
        assert getattr(marshal, name + "_unpack")(data) == 5
    for name in ("float", "double"):
        assert getattr(marshal, name + "_pack")(1.5) == getattr(c_marshal, name + "_pack")(1.5)
    assert marshal.point_le.pack(1.0, 2.0) == c_marshal.point_le.pack(1.0, 2.0)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _run_generator(cls, logger_name, ticks, **kwargs):
    records = _Records()
    logger = logging.getLogger(logger_name)
    logger.addHandler(records)
    try:
        generator = cls(**kwargs)
        values = [generator._next_timestamp(now, generator.last) for now in ticks]
    finally:
        logger.removeHandler(records)
    return values, generator.last, generator._last_warn, records.messages


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"warning_threshold": 1, "warning_interval": 2},
        {"warn_on_drift": False},
        {"warning_threshold": 0.00001, "warning_interval": 0},
    ],
)
def test_timestamp_generator_as_classic(kwargs):
    ticks = [100, 100, 50, 10**7, 9 * 10**6 - 10, 9 * 10**6, 10**7 + 10, 2 * 10**7, 5 * 10**6, 5 * 10**6 + 1]
    ours = _run_generator(MonotonicTimestampGenerator, "turbocql.timestamps", ticks, **kwargs)
    theirs = _run_generator(ClassicGenerator, "cassandra.timestamps", ticks, **kwargs)
    assert ours == theirs


def test_timestamp_generator_values():
    generator = MonotonicTimestampGenerator()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = generator()
    values = [generator() for _ in range(1000)]
    assert all(b > a for a, b in zip([first] + values, values))
    now_us = datetime.datetime.now(datetime.UTC).timestamp() * 1e6
    assert abs(values[-1] - now_us) < 60e6  # microseconds since the epoch
