"""turbocql.cqltypes against the classic driver's cassandra.cqltypes (installed in the venv),
type by type over a table of values: ``serialize(v, protocol_version)`` gives the same bytes
or raises the same exception class, and ``deserialize`` of the classic bytes gives the same
value (and the same classes) on both. turbocql's classes convert through the engine; the
table holds what classic code passes them, bounds, odd values and errors included."""

import datetime
import ipaddress
import math
import uuid
from collections import namedtuple
from decimal import Decimal

import pytest

C = pytest.importorskip("cassandra.cqltypes")
import cassandra.util as c_util  # noqa: E402

import turbocql.cluster  # noqa: E402, F401 - the engine's classes (uuid, Decimal, ...)
from turbocql import cqltypes as T  # noqa: E402
from turbocql import util as t_util  # noqa: E402

UTC = datetime.UTC
PLUS2 = datetime.timezone(datetime.timedelta(hours=2))


def _plain(v):
    """A value of either driver as plain data with its classes' names, to compare."""
    name = type(v).__name__
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, Decimal):
        return (name, str(v))
    if isinstance(v, (t_util.Date, c_util.Date)):
        return (name, v.days_from_epoch)
    if isinstance(v, (t_util.Time, c_util.Time)):
        return (name, v.nanosecond_time)
    if isinstance(v, (t_util.Duration, c_util.Duration)):
        return (name, v.months, v.days, v.nanoseconds)
    if isinstance(v, c_util.OrderedMap):  # its items() re-serializes keys (a None one fails)
        return (name, [(_plain(k), _plain(x)) for k, x in v._items])
    if isinstance(v, dict):
        return (name, [(_plain(k), _plain(x)) for k, x in v.items()])
    if isinstance(v, (t_util.SortedSet, c_util.SortedSet, set, frozenset)):
        return (name, sorted((_plain(x) for x in v), key=repr))
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (name, v._fields, [_plain(x) for x in v])
    if isinstance(v, (list, tuple)):
        return (name, [_plain(x) for x in v])
    return (name, v)


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return ("raises", type(exc))


def _udt(module, name, fields, types):
    return module.UserType.make_udt_class("parity_ks", name, fields, types)


def _types(m):
    """The types of the table, built alike in module ``m`` (either driver's cqltypes)."""
    lk = m.lookup_casstype
    point = _udt(m, "point", ("x", "label"), (m.Int32Type, m.UTF8Type))
    return {
        "int": m.Int32Type,
        "bigint": m.LongType,
        "smallint": m.ShortType,
        "tinyint": m.ByteType,
        "counter": m.CounterColumnType,
        "varint": m.IntegerType,
        "boolean": m.BooleanType,
        "float": m.FloatType,
        "double": m.DoubleType,
        "decimal": m.DecimalType,
        "text": m.UTF8Type,
        "varchar": m.VarcharType,
        "ascii": m.AsciiType,
        "blob": m.BytesType,
        "uuid": m.UUIDType,
        "timeuuid": m.TimeUUIDType,
        "inet": m.InetAddressType,
        "date": m.SimpleDateType,
        "time": m.TimeType,
        "timestamp": m.DateType,
        "duration": m.DurationType,
        "list<int>": lk("ListType(Int32Type)"),
        "set<text>": lk("SetType(UTF8Type)"),
        "map<int, text>": lk("MapType(Int32Type, UTF8Type)"),
        "list<frozen<map<int, text>>>": lk("ListType(FrozenType(MapType(Int32Type, UTF8Type)))"),
        "map<text, frozen<list<timestamp>>>": lk("MapType(UTF8Type, ListType(DateType))"),
        "set<frozen<set<int>>>": lk("SetType(SetType(Int32Type))"),
        "list<date>": lk("ListType(SimpleDateType)"),
        "list<decimal>": lk("ListType(DecimalType)"),
        "tuple<int, text, uuid>": lk("TupleType(Int32Type, UTF8Type, UUIDType)"),
        "point": point,
        "list<frozen<point>>": m.ListType.apply_parameters([point]),
        "udt of collections": _udt(
            m, "bag", ("tags", "scores"), (lk("SetType(UTF8Type)"), lk("MapType(UTF8Type, DoubleType)"))
        ),
        "vector<float, 3>": lk("VectorType(FloatType, 3)"),
        "vector<text, 2>": lk("VectorType(UTF8Type, 2)"),
        "vector<varint, 2>": lk("VectorType(IntegerType, 2)"),
        "vector<list<int>, 2>": lk("VectorType(ListType(Int32Type), 2)"),
        "reversed<int>": lk("ReversedType(Int32Type)"),
        "list<boolean>": lk("ListType(BooleanType)"),
        "list<timeuuid>": lk("ListType(TimeUUIDType)"),
        "list<inet>": lk("ListType(InetAddressType)"),
        "list<time>": lk("ListType(TimeType)"),
        "list<duration>": lk("ListType(DurationType)"),
        "list<float>": lk("ListType(FloatType)"),
        "list<varint>": lk("ListType(IntegerType)"),
        "list<blob>": lk("ListType(BytesType)"),
        "list<frozen<tuple<int, int>>>": lk("ListType(TupleType(Int32Type, Int32Type))"),
        "tuple<varint, decimal>": lk("TupleType(IntegerType, DecimalType)"),
    }


U1 = uuid.UUID("6b9e6a5c-8c3e-11ee-b9d1-0242ac120002")
U4 = uuid.UUID("3d6f0a3e-1c2b-4e5f-9a8b-7c6d5e4f3a2b")
PointNT = namedtuple("PointNT", ("x", "label"))
Other = namedtuple("Other", ("a", "b"))


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


VALUES = {
    "int": [0, 1, -1, 2**31 - 1, -(2**31), 2**31, True, 1.5, "1"],
    "bigint": [2**63 - 1, -(2**63), 2**63, 7],
    "smallint": [2**15 - 1, -(2**15), 2**15],
    "tinyint": [127, -128, 128],
    "counter": [5, -(2**63), 2**63],
    "varint": [0, 1, -1, 127, 128, -128, -129, 255, 256, 2**64, -(2**64), 2**200 + 1, -(2**200), True, 1.5],
    "boolean": [True, False, 0, 1, 2, -1, 127, 128, "x", 1.0],
    "float": [0.0, 1.5, -2.25, 3.4028235e38, 3.5e38, float("inf"), float("-inf"), float("nan"), 1, 2**128, "x"],
    "double": [0.0, 1.5, 1e308, -1e-308, float("nan"), 1, "x", 10**400],
    "decimal": [
        Decimal("1.5"),
        Decimal("-0"),
        Decimal("0"),
        Decimal("1E+5"),
        Decimal("-123456789012345678901234567890.0001"),
        Decimal("1e-2147483648"),
        Decimal("1e-2147483649"),
        Decimal("NaN"),
        Decimal("Infinity"),
        1.1,
        5,
        "1.25",
        object(),
    ],
    "text": ["", "plain", "héllo ☃ 𝄞", "\x00", b"bytes", 5, "\ud800"],
    "varchar": ["x", "ünï"],
    "ascii": ["", "abc", "é", b"x"],
    "blob": [b"", b"\x00\xff", bytearray(b"ab"), memoryview(b"cd"), "s", 3, [1, 2]],
    "uuid": [U1, U4, uuid.UUID(int=0), "x"],
    "timeuuid": [U1, U4],
    "inet": [
        "1.2.3.4",
        "0.0.0.0",
        "255.255.255.255",
        "::",
        "::1",
        "2001:db8::1",
        "::ffff:1.2.3.4",
        "fe80::1:2:3:4",
        ipaddress.ip_address("10.0.0.1"),
        ipaddress.ip_address("::2"),
        "127.1",
        "bad",
        5,
    ],
    "date": [
        datetime.date(2020, 1, 1),
        datetime.date(1, 1, 1),
        datetime.date(9999, 12, 31),
        datetime.date(1969, 12, 31),
        t_util.Date(5),
        c_util.Date(-5),
        5,
        2**31,
        2**32 - 1,
        -1,
        2**32,
        "2020-01-02",
        datetime.datetime(2020, 1, 1, 5),
    ],
    "time": [
        datetime.time(1, 2, 3, 4),
        datetime.time(23, 59, 59, 999999),
        0,
        86399999999999,
        86400000000000,
        "01:02:03.123456789",
        t_util.Time(5),
        c_util.Time(7),
    ],
    "timestamp": [
        datetime.datetime(2020, 1, 1, 1, 2, 3, 4000),
        datetime.datetime(2020, 1, 1, 1, 2, 3, 4567),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999),
        datetime.datetime(1965, 1, 1, 0, 0, 0, 123456),
        datetime.datetime(1945, 8, 5, 23, 15, 44),
        datetime.datetime(1, 1, 1),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999000),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
        datetime.datetime(3000, 6, 1, 12, 0, 0, 1000),
        datetime.datetime(2020, 1, 1, tzinfo=PLUS2),
        datetime.datetime(2020, 1, 1, 0, 0, 0, 500, tzinfo=UTC),
        datetime.date(1960, 5, 5),
        1234,
        -1234,
        12.7,
        -12.7,
        float("nan"),
        True,
        2**63,
        "x",
    ],
    "duration": [
        t_util.Duration(1, 2, 3),
        c_util.Duration(-1, -2, -3),
        t_util.Duration(0, 0, 2**63 - 1),
        t_util.Duration(2**31, 0, 0),
        t_util.Duration(0, 0, 2**63),
        "x",
    ],
    "list<int>": [[], [1, 2, 3], [1, None], (4, 5), "ab", [1, "x"], [2**31]],
    "set<text>": [set(), {"a", "b"}, ["z", "a"], t_util.SortedSet(["q"])],
    "map<int, text>": [{}, {1: "a", 2: "b"}, {1: None}, {None: "x"}, [(1, "a")], {1: 2}],
    "list<frozen<map<int, text>>>": [[{1: "a"}, {}], [{2: "b", 3: "c"}]],
    "map<text, frozen<list<timestamp>>>": [
        {"a": [datetime.datetime(2020, 1, 1, 0, 0, 0, 1500), datetime.datetime(1960, 1, 1, 0, 0, 0, 1)]},
        {"b": [datetime.datetime(9999, 1, 1), 5.5]},
    ],
    "set<frozen<set<int>>>": [{frozenset({1, 2}), frozenset()}],
    "list<date>": [[datetime.date(2000, 1, 1), 5, t_util.Date(3), "2001-02-03"], [None]],
    "list<decimal>": [[Decimal("1.5"), 1.1, 7, "2.5"]],
    "tuple<int, text, uuid>": [(1, "a", U4), (None, "b", None), (1,), (1, "a", U4, 9), [2, "l", U1], ("1", 2, 3)],
    "point": [
        (1, "a"),
        PointNT(2, "b"),
        Other(3, "c"),
        Obj(x=4, label="d"),
        Obj(x=5),
        Obj(),
        {"x": 1, "label": "a"},
        (None, None),
        (1,),
    ],
    "list<frozen<point>>": [[(1, "a"), PointNT(2, "b")], [Other(3, "c")], [Obj(x=1, label="o")]],
    "udt of collections": [({"a", "b"}, {"k": 1.5}), (None, {}), (set(), None)],
    "vector<float, 3>": [[1.0, 2.5, -3.25], (0.0, 0.0, 0.0), [1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [1.0, None, 2.0]],
    "vector<text, 2>": [["a", "héllo"], ["", ""], ["x"], ["a", 5]],
    "vector<varint, 2>": [[1, 2**70], [-1, 0]],
    "vector<list<int>, 2>": [[[1, 2], []], [[3], [4, 5, 6]]],
    "reversed<int>": [5, -5],
    "list<boolean>": [[True, 2, 0]],
    "list<timeuuid>": [[U1, U4]],
    "list<inet>": [["127.1", "::1"]],
    "list<time>": [["01:02:03", 5]],
    "list<duration>": [[t_util.Duration(2**31, 0, 0)]],
    "list<float>": [[3.4028235e38, 1.0]],
    "list<varint>": [[1, 2**70, -1]],
    "list<blob>": [[bytearray(b"x"), 3, b"y"]],
    "list<frozen<tuple<int, int>>>": [[(1,)], [(1, 2), (None, 3)], [(1, 2, 3)]],
    "tuple<varint, decimal>": [(5, Decimal("1.5")), (None, 2.5)],
}

CLASSIC, TURBO = _types(C), _types(T)
CASES = [(name, i, v) for name, values in VALUES.items() for i, v in enumerate(values)]


def _compare_serialize(name, value, protocol_version):
    c = _outcome(CLASSIC[name].serialize, value, protocol_version)
    t = _outcome(TURBO[name].serialize, value, protocol_version)
    if c[0] == "raises":
        assert t[0] == "raises", (name, value, c, t)
        # The classic class (a builtin or struct.error), or a subclass of it.
        assert issubclass(t[1], c[1]), (name, value, c, t)
    else:
        assert t == c, (name, value, c, t)
    return c


def _compare_deserialize(name, data, protocol_version):
    c = _outcome(CLASSIC[name].deserialize, data, protocol_version)
    t = _outcome(TURBO[name].deserialize, data, protocol_version)
    if c[0] == "raises":
        assert t[0] == "raises" and issubclass(t[1], c[1]), (name, data, c, t)
    else:
        assert t[0] == "ok" and _plain(t[1]) == _plain(c[1]), (name, data, c, t)


@pytest.mark.parametrize(("name", "i", "value"), CASES, ids=["%s-%d" % (n, i) for n, i, _ in CASES])
def test_as_classic(name, i, value):
    for protocol_version in (4, 3):
        c = _compare_serialize(name, value, protocol_version)
        if c[0] == "ok":
            _compare_deserialize(name, c[1], protocol_version)


COLLECTIONS = [(n, i, v) for n, i, v in CASES if n.startswith(("list", "set", "map", "vector"))]


@pytest.mark.parametrize(("name", "i", "value"), COLLECTIONS, ids=["%s-%d" % (n, i) for n, i, _ in COLLECTIONS])
def test_old_protocols_as_classic(name, i, value):
    """Protocol v1 and v2 size collections with 16 bits (and vectors hand the version on)."""
    for protocol_version in (0, 1, 2):
        c = _compare_serialize(name, value, protocol_version)
        if c[0] == "ok":
            _compare_deserialize(name, c[1], protocol_version)


def _i32(n):
    return n.to_bytes(4, "big", signed=True)


RAW = {
    "int": [b"", b"\x00\x00\x01", b"\x00\x00\x00\x00\x00"],
    "bigint": [b"\x00" * 7],
    "boolean": [b"\x02", b"\x00\x00"],
    "float": [b"\x7f\xc0\x00\x00", b"\x7f\x80\x00\x00", b"\x00\x00\x00"],
    "double": [b"\x00" * 7],
    "decimal": [b"\x00\x00\x00", b"\x00\x00\x00\x02", b"\xff\xff\xff\xfe\x01"],
    "varint": [b"", b"\x00\x80", b"\xff\x7f"],
    "text": [b"\xff\xfe", "é".encode()],
    "ascii": ["é".encode(), b"abc"],
    "uuid": [b"\x00" * 15],
    "inet": [b"\x01\x02\x03", b"\x00" * 16, b"\x00" * 12 + b"\x01\x02\x03\x04", b"\x00" * 14 + b"\x01\x00"],
    "date": [b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x00"],
    "time": [b"\x00" * 7],
    "timestamp": [
        (2**62).to_bytes(8, "big"),
        (-(2**62)).to_bytes(8, "big", signed=True),
        (253402300800000).to_bytes(8, "big"),
        (253402300799999).to_bytes(8, "big"),
        (-62135596800000).to_bytes(8, "big", signed=True),
        (2**33 * 1000 + 1).to_bytes(8, "big"),
        b"\x00" * 7,
    ],
    "list<int>": [_i32(2) + _i32(-1) + _i32(4) + _i32(42), _i32(2) + _i32(0) + _i32(4) + _i32(42), _i32(0)],
    "map<int, text>": [_i32(2) + _i32(4) + _i32(42) + _i32(-1) + _i32(-1) + _i32(1) + b"a"],
    "tuple<int, text, uuid>": [b"", _i32(4) + _i32(1), _i32(0) + _i32(0) + _i32(-1)],
    "point": [b"", _i32(4) + _i32(7), _i32(-1) + _i32(1) + b"z"],
    "vector<float, 3>": [b"\x00" * 8, b"\x00" * 16],
    "vector<text, 2>": [b"\x01a", b"\x01a\x01b\x00"],
    "vector<varint, 2>": [b"\x00\x01\x05", b"\x01\x05"],
    "list<varint>": [_i32(2) + _i32(0) + _i32(1) + b"\x05", _i32(1) + _i32(1) + b"\x00"],
    "tuple<varint, decimal>": [_i32(0) + _i32(4) + b"\x00\x00\x00\x01", _i32(1) + b"\x07" + _i32(0)],
    "map<text, frozen<list<timestamp>>>": [
        _i32(1) + _i32(1) + b"k" + _i32(16) + _i32(1) + _i32(8) + (2**62).to_bytes(8, "big"),
        _i32(1) + _i32(1) + b"k" + _i32(16) + _i32(1) + _i32(8) + (2**45).to_bytes(8, "big"),
    ],
}
RAW_CASES = [(n, i, b) for n, raws in RAW.items() for i, b in enumerate(raws)]


@pytest.mark.parametrize(("name", "i", "data"), RAW_CASES, ids=["%s-%d" % (n, i) for n, i, _ in RAW_CASES])
def test_bytes_read_as_classic(name, i, data):
    """Bytes the classic driver never writes: nulls and empties inside collections, wrong
    sizes, timestamps beyond datetime, odd addresses."""
    for protocol_version in (4, 3):
        _compare_deserialize(name, data, protocol_version)
        c = _outcome(CLASSIC[name].from_binary, data, protocol_version)
        t = _outcome(TURBO[name].from_binary, data, protocol_version)
        assert c[0] == t[0], (name, data, c, t)
        if c[0] == "ok":
            assert _plain(t[1]) == _plain(c[1]), (name, data, c, t)


def test_to_from_binary_and_empty_values_as_classic():
    for name in ("int", "text", "list<int>", "point", "timestamp"):
        assert TURBO[name].to_binary(None, 4) == CLASSIC[name].to_binary(None, 4) == b""
        assert TURBO[name].from_binary(None, 4) is CLASSIC[name].from_binary(None, 4) is None
        assert _plain(TURBO[name].from_binary(b"", 4)) == _plain(CLASSIC[name].from_binary(b"", 4))
    T.Int32Type.support_empty_values = True
    try:
        assert T.Int32Type.from_binary(b"", 4) is T.EMPTY
        listed = T.ListType.apply_parameters([T.Int32Type])
        assert listed.deserialize(_i32(1) + _i32(0), 4) == [T.EMPTY]
    finally:
        T.Int32Type.support_empty_values = False


def test_engine_type_names():
    """Each class names its type for the engine; the classes the engine has no type for
    (DSE, custom) are converted in Python."""
    assert TURBO["list<frozen<map<int, text>>>"]._engine_type == "list<map<int, text>>"
    assert TURBO["map<text, frozen<list<timestamp>>>"]._engine_type == "map<text, list<timestamp>>"
    assert TURBO["point"]._engine_type == "tuple<int, text>"
    assert TURBO["list<frozen<point>>"]._engine_type == "list<tuple<int, text>>"
    assert TURBO["vector<text, 2>"]._engine_type == "vector<text, 2>"
    assert TURBO["reversed<int>"]._engine_type == "int"
    assert T.TimeUUIDType._engine_type == "uuid"  # any uuid, as the classic driver packs
    assert T.ListType.apply_parameters([T.PointType])._engine_type is None

    class _Custom(T.Int32Type):  # a name with "_" is not registered (as "int")
        @staticmethod
        def serialize(v, protocol_version):
            return b"custom"

    assert _Custom._engine_type is None
    assert T.ListType.apply_parameters([_Custom]).serialize([1], 4) == _i32(1) + _i32(6) + b"custom"


def test_udt_values_in_the_types_class():
    point = TURBO["point"]
    value = point.deserialize(point.serialize((1, "a"), 4), 4)
    assert type(value) is point.tuple_type and value == (1, "a") and value.label == "a"

    class Mapped:
        def __init__(self, x, label):
            self.x, self.label = x, label

    point.mapped_class = Mapped
    try:
        got = point.deserialize(point.serialize((2, "b"), 4), 4)
        assert type(got) is Mapped and (got.x, got.label) == (2, "b")
    finally:
        point.mapped_class = None
