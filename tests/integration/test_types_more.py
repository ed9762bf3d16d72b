"""Round trips, against the real server, of the CQL types beyond the foundation's
(test_types.py): varint, decimal, date, time, duration, inet, tuples, user-defined types,
vectors, counters and collections of unhashable elements; the errors raised for values of
the wrong type; and values exchanged with the classic driver."""

import collections
import datetime
import ipaddress
import uuid
from decimal import Decimal

import pytest

from tests.conftest import HOST, PORT
from turbocql.util import Date, Duration, OrderedMap, SortedSet, Time

D = Decimal

# Read back equal to what was written (and of the same Python type), through prepared
# and simple statements.
TYPES = {
    "varint": [
        0,
        1,
        -1,
        127,
        128,
        -128,
        -129,
        2**63,
        -(2**63) - 1,
        2**64,
        2**127,
        -(2**127) - 1,
        2**200,
        -(2**200),
        10**100,
    ],
    "decimal": [
        D("0"),
        D("1.50"),
        D("-3.14159"),
        D("1E+5"),
        D("-1E-30"),
        D("1" + "0" * 100 + ".000001"),
        D("-" + "9" * 80 + "." + "1" * 40),
    ],
    "date": [
        Date(0),
        Date(-1),
        Date(-719162),  # 0001-01-01
        Date(-719163),  # 0000-12-31: before year 1
        Date(-800000),
        Date(2932896),  # 9999-12-31
        Date(2932897),  # 10000-01-01: after 9999
        Date(3000000),
        Date(-(2**31)),  # the type's limits
        Date(2**31 - 1),
    ],
    "time": [Time(0), Time(1), Time(86_399_999_999_999), Time(45_296_789_012_345)],
    "duration": [
        Duration(0, 0, 0),
        Duration(1, 2, 3),
        Duration(-1, -2, -3),
        Duration(0, 0, -1),
        Duration(-14, 0, 0),
        Duration(0, -400, -5_000_000_000),
        Duration(2**31 - 1, 2**31 - 1, 2**63 - 1),
        Duration(-(2**31 - 1), -(2**31 - 1), -(2**63 - 1)),
    ],
    "inet": ["127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "::", "2001:db8::ff00:42:8329", "fe80::1"],
    "vector<float, 3>": [[1.0, 2.5, -3.0], [0.0, 0.0, 0.0], [0.5, -0.25, 3.4028234663852886e38]],
    "vector<double, 2>": [[1e308, -1e-308]],
    "vector<bigint, 2>": [[2**62, -1]],
    "vector<text, 2>": [["a", "bcd"], ["", "ü" * 300]],
    "vector<varint, 2>": [[2**100, -1]],
    "frozen<map<text, frozen<list<int>>>>": [{"a": [1, 2], "b": []}, {"": [0]}],
    "map<frozen<list<int>>, text>": [{(1, 2): "a", (0,): "b", (): "empty"}],
    "map<frozen<set<int>>, int>": [{frozenset({1, 2}): 1, frozenset(): 0}],
}

# Prepared statements only: a Python tuple is a CQL list literal in simple statements (as
# in the classic driver), and a set of lists cannot be built in Python.
PREPARED_ONLY = {
    "frozen<tuple<int, text, boolean>>": [(1, "a", True), (None, None, None), (1, None, False), (-(2**31), "ü", False)],
    "list<frozen<tuple<int, text>>>": [[(1, "a"), (2, None)], [(3, "")]],
    "set<frozen<list<int>>>": [SortedSet([[1, 2], [0], [1]]), SortedSet([[]])],
    "duration": [Duration(-(2**31), -(2**31), -(2**63))],
}

# (CQL type, value written, value read back): inputs the engine converts.
CONVERSIONS = [
    ("date", datetime.date(2024, 2, 29), Date(19782)),
    ("date", datetime.date(1, 1, 1), Date(-719162)),
    ("date", datetime.date(9999, 12, 31), Date(2932896)),
    ("date", 19000, Date(19000)),
    ("date", -800000, Date(-800000)),
    ("time", datetime.time(0, 0), Time(0)),
    ("time", datetime.time(12, 34, 56, 789012), Time(45_296_789_012_000)),
    ("time", datetime.time(23, 59, 59, 999999), Time(86_399_999_999_000)),
    ("time", 0, Time(0)),
    ("time", 86_399_999_999_999, Time(86_399_999_999_999)),
    ("decimal", 5, D("5")),
    ("decimal", -(2**63), D(-(2**63))),
    ("decimal", 1.5, D("1.5")),
    ("decimal", 1.1, D("1.1")),  # the float's repr, not its exact binary value
    ("decimal", -0.1, D("-0.1")),
    ("decimal", 1e20, D("1E+20")),
    ("inet", ipaddress.ip_address("10.1.2.3"), "10.1.2.3"),
    ("inet", ipaddress.ip_address("2001:db8::1"), "2001:db8::1"),
    ("inet", "::ffff:1.2.3.4", "::ffff:1.2.3.4"),
    ("inet", "2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
    ("varint", True, 1),
    ("frozen<tuple<int, text, boolean>>", [2, "b", True], (2, "b", True)),
    ("frozen<tuple<int, text, boolean>>", (1,), (1, None, None)),
    ("frozen<tuple<int, text, boolean>>", (), (None, None, None)),
    ("vector<float, 3>", (1, 2, 3), [1.0, 2.0, 3.0]),
    ("vector<text, 2>", ("x", "y"), ["x", "y"]),
    ("set<frozen<list<int>>>", {(1, 2), (0,)}, SortedSet([[0], [1, 2]])),
    ("frozen<map<text, frozen<list<int>>>>", OrderedMap([("k", (1, 2))]), {"k": [1, 2]}),
]

# (CQL type, value, exception, fragments of the message besides the column name).
WRONG = [
    ("varint", "1", TypeError, ["varint", "str"]),
    ("varint", 1.5, TypeError, ["varint", "float"]),
    ("decimal", "1.5", TypeError, ["decimal", "str"]),
    ("decimal", D("NaN"), ValueError, ["NaN"]),
    ("decimal", D("-Infinity"), ValueError, ["Infinity"]),
    ("date", "2020-01-01", TypeError, ["date", "str"]),
    ("date", datetime.datetime(2020, 1, 1), TypeError, ["date", "datetime"]),
    ("date", 2**31, ValueError, ["out of range"]),
    ("date", -(2**31) - 1, ValueError, ["out of range"]),
    ("time", "12:00:00", TypeError, ["time", "str"]),
    ("time", 86_400_000_000_000, ValueError, ["86400000000000"]),
    ("time", -1, ValueError, ["-1"]),
    ("duration", 5, TypeError, ["duration", "int"]),
    ("duration", datetime.timedelta(days=1), TypeError, ["duration", "timedelta"]),
    ("inet", "nope", ValueError, ["nope"]),
    ("inet", "1.2.3.256", ValueError, ["1.2.3.256"]),
    ("inet", 5, TypeError, ["inet", "int"]),
    ("inet", b"\x01\x02\x03\x04", TypeError, ["inet", "bytes"]),
    ("frozen<tuple<int, text, boolean>>", (1, "a", True, 4), ValueError, ["4 elements"]),
    ("frozen<tuple<int, text, boolean>>", (1, 2, True), TypeError, ["element 1", "str"]),
    ("frozen<tuple<int, text, boolean>>", "abc", TypeError, ["tuple"]),
    ("vector<float, 3>", [1.0, 2.0, 3.0, 4.0], ValueError, ["4 elements", "3"]),
    ("vector<float, 3>", [1.0, 2.0], ValueError, ["2 elements", "3"]),
    ("vector<float, 3>", [1.0, None, 2.0], ValueError, ["None", "element 1"]),
    ("vector<float, 3>", ["a", 1.0, 2.0], TypeError, ["element 0", "float"]),
    ("vector<float, 3>", 5, TypeError, ["sequence"]),
    ("vector<text, 2>", ["a"], ValueError, ["1 elements", "2"]),
    ("vector<text, 2>", ["a", 1], TypeError, ["element 1", "str"]),
    ("frozen<map<text, frozen<list<int>>>>", {"a": ["x"]}, TypeError, ["int", "str"]),
    ("frozen<map<text, frozen<list<int>>>>", {"a": None}, ValueError, ["None"]),
    ("set<frozen<list<int>>>", [[1], None], ValueError, ["None"]),
    ("set<frozen<list<int>>>", "abc", TypeError, ["set"]),
    ("map<frozen<list<int>>, text>", [(1,), "a"], TypeError, ["dict"]),
]


@pytest.fixture
def new_table(session):
    """Creates (k int PRIMARY KEY, v <type>) tables with fresh names, dropped at the end."""
    names = []

    def make(cql_type, key_type="int"):
        name = "tm_" + uuid.uuid4().hex[:12]
        session.execute("CREATE TABLE %s (k %s PRIMARY KEY, v %s)" % (name, key_type, cql_type))
        names.append(name)
        return name

    yield make
    for name in names:
        session.execute("DROP TABLE IF EXISTS %s" % name)


@pytest.fixture
def new_udt(session):
    """Creates user-defined types with fresh names (dropped after the tables by the test)."""
    names = []

    def make(fields):
        name = "udt_" + uuid.uuid4().hex[:12]
        session.execute("CREATE TYPE %s (%s)" % (name, fields))
        names.append(name)
        return name

    yield make
    for name in reversed(names):
        session.execute("DROP TYPE IF EXISTS %s" % name)


def _same(expected, got):
    if isinstance(expected, (set, frozenset, SortedSet)):
        return isinstance(got, SortedSet) and got == expected
    if isinstance(expected, dict):
        # (got's keys may be unhashable, frozen lists read back as lists: looked up by equal keys)
        return len(expected) == len(got) and all(k in got and _same(v, got[k]) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (
            type(expected) is type(got)
            and len(expected) == len(got)
            and all(_same(a, b) for a, b in zip(expected, got))
        )
    if isinstance(expected, Decimal):
        # Same digits and exponent (1.50 is not 1.5).
        return isinstance(got, Decimal) and expected.as_tuple() == got.as_tuple()
    return expected == got and type(expected) is type(got)


def _check_round_trip(session, table, values, simple):
    ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
    sel = session.prepare("SELECT v FROM %s WHERE k = ?" % table)
    for i, v in enumerate(values):
        session.execute(ins, (i, v))
    for i, v in enumerate(values):
        got = session.execute(sel, (i,)).one().v
        assert _same(v, got), (table, v, got)
    if not simple:
        return
    for i, v in enumerate(values):
        session.execute("INSERT INTO " + table + " (k, v) VALUES (%s, %s)", (100 + i, v))
        got = session.execute(sel, (100 + i,)).one().v
        assert _same(v, got), ("simple", table, v, got)


@pytest.mark.parametrize("cql_type", sorted(TYPES))
def test_round_trip(session, new_table, cql_type):
    _check_round_trip(session, new_table(cql_type), TYPES[cql_type], simple=True)


@pytest.mark.parametrize("cql_type", sorted(PREPARED_ONLY))
def test_round_trip_prepared(session, new_table, cql_type):
    _check_round_trip(session, new_table(cql_type), PREPARED_ONLY[cql_type], simple=False)


def test_result_python_types(session, new_table):
    table = new_table("frozen<tuple<date, time, duration, inet, varint, decimal>>")
    value = (Date(1), Time(2), Duration(3, 4, 5), "::1", 2**70, D("1.5"))
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, value))
    got = session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v
    assert [type(x) for x in got] == [Date, Time, Duration, str, int, Decimal]
    assert _same(value, got)
    # Date keeps datetime.date's view where it can.
    assert got[0].date() == datetime.date(1970, 1, 2)
    assert got[1].time() == datetime.time(0, 0)


@pytest.mark.parametrize("cql_type,value,expected", CONVERSIONS, ids=[str(i) for i in range(len(CONVERSIONS))])
def test_converted_inputs(session, new_table, cql_type, value, expected):
    table = new_table(cql_type)
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, value))
    got = session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v
    assert _same(expected, got), (cql_type, value, got)


def test_simple_statement_inputs(session, new_table):
    """datetime.date / datetime.time / ipaddress objects through %s encoding."""
    for cql_type, value, expected in [
        ("date", datetime.date(2024, 2, 29), Date(19782)),
        ("date", datetime.date(1, 1, 1), Date(-719162)),
        ("time", datetime.time(12, 34, 56, 789012), Time(45_296_789_012_000)),
        ("inet", ipaddress.ip_address("10.1.2.3"), "10.1.2.3"),
        ("inet", ipaddress.ip_address("fe80::1"), "fe80::1"),
        ("decimal", 5, D("5")),
        ("decimal", 2**70, D(2**70)),
        ("decimal", 1.5, D("1.5")),
    ]:
        table = new_table(cql_type)
        session.execute("INSERT INTO " + table + " (k, v) VALUES (%s, %s)", (1, value))
        got = session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v
        assert _same(expected, got), (cql_type, value, got)


@pytest.mark.parametrize(
    "cql_type",
    [
        "varint",
        "decimal",
        "date",
        "time",
        "duration",
        "inet",
        "frozen<tuple<int, text, boolean>>",
        "vector<float, 3>",
        "vector<text, 2>",
        "frozen<map<text, frozen<list<int>>>>",
        "set<frozen<list<int>>>",
    ],
)
def test_null_round_trip(session, new_table, cql_type):
    table = new_table(cql_type)
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, None))
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v is None


@pytest.mark.parametrize("cql_type,value,exc,fragments", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_wrong_values_raise(session, new_table, cql_type, value, exc, fragments):
    table = new_table(cql_type)
    ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
    with pytest.raises(exc) as info:
        session.execute(ins, (1, value))
    msg = str(info.value)
    assert '"v"' in msg, msg
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)
    # Nothing was written.
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one() is None


def test_wrong_value_names_its_column(session, new_table):
    table = new_table("varint")
    session.execute("ALTER TABLE %s ADD other_col vector<float, 3>" % table)
    ins = session.prepare("INSERT INTO %s (k, v, other_col) VALUES (?, ?, ?)" % table)
    with pytest.raises(ValueError, match='"other_col".*4 elements'):
        session.execute(ins, (1, 5, [1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(TypeError, match='"v".*varint'):
        session.execute(ins, (1, "5", [1.0, 2.0, 3.0]))


def test_udt_read_back_as_named_tuple(session, new_table, new_udt):
    udt = new_udt("street text, zip int, tags frozen<list<text>>")
    table = new_table("frozen<%s>" % udt)
    session.execute("ALTER TABLE %s ADD l list<frozen<%s>>" % (table, udt))
    session.execute("ALTER TABLE %s ADD nf %s" % (table, udt))  # not frozen
    ins = session.prepare("INSERT INTO %s (k, v, l, nf) VALUES (?, ?, ?, ?)" % table)
    try:
        session.execute(
            ins,
            (
                1,
                {"street": "Main", "zip": 12345, "tags": ["a", "ü"]},
                [{"street": "x"}, {"zip": -1, "tags": []}],
                {"zip": 5},
            ),
        )
        row = session.execute("SELECT v, l, nf FROM %s WHERE k = 1" % table).one()
        assert isinstance(row.v, tuple)
        assert type(row.v).__name__ == udt
        assert row.v._fields == ("street", "zip", "tags")
        assert row.v == ("Main", 12345, ["a", "ü"])
        assert (row.v.street, row.v.zip, row.v.tags) == ("Main", 12345, ["a", "ü"])
        assert row.l[0] == ("x", None, None)
        assert row.l[1].zip == -1 and row.l[1].street is None
        assert row.nf == (None, 5, None)
        # A value read back is accepted as a value (fields read by name).
        session.execute(ins, (2, row.v, row.l, row.nf))
        again = session.execute("SELECT v, l, nf FROM %s WHERE k = 2" % table).one()
        assert again == row
        # Null fields and a null UDT.
        session.execute(ins, (3, {}, None, None))
        row = session.execute("SELECT v, l, nf FROM %s WHERE k = 3" % table).one()
        assert row.v == (None, None, None) and row.l is None
    finally:
        session.execute("DROP TABLE %s" % table)


def test_udt_wrong_field_value_names_column_and_field(session, new_table, new_udt):
    udt = new_udt("street text, zip int")
    table = new_table("frozen<%s>" % udt)
    try:
        ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
        with pytest.raises(TypeError, match='"v".*"street".*str'):
            session.execute(ins, (1, {"street": 5}))
        with pytest.raises(TypeError, match='"v".*"zip".*int'):
            session.execute(ins, (1, {"zip": "x"}))
        with pytest.raises(ValueError, match='"v".*"zip".*32-bit'):
            session.execute(ins, (1, {"zip": 2**31}))
    finally:
        session.execute("DROP TABLE %s" % table)


def test_register_user_type(cluster, session, new_table, new_udt, keyspace):
    udt = new_udt("street text, zip int, tags frozen<set<text>>")
    table = new_table("frozen<%s>" % udt)

    class Address:
        def __init__(self, street=None, zip=None, tags=None):
            self.street, self.zip, self.tags = street, zip, tags

    try:
        ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
        session.execute(ins, (1, {"street": "Main", "zip": 1, "tags": {"b", "a"}}))
        cluster.register_user_type(keyspace, udt, Address)
        got = session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v
        assert type(got) is Address
        assert (got.street, got.zip) == ("Main", 1)
        assert got.tags == {"a", "b"} and isinstance(got.tags, SortedSet)
        # Instances are accepted as values; dicts still are.
        session.execute(ins, (2, Address("Side", None, {"x"})))
        session.execute(ins, (3, {"zip": 7}))
        got = session.execute("SELECT v FROM %s WHERE k = 2" % table).one().v
        assert (type(got), got.street, got.zip, list(got.tags)) == (Address, "Side", None, ["x"])
        got = session.execute("SELECT v FROM %s WHERE k = 3" % table).one().v
        assert (type(got), got.street, got.zip, got.tags) == (Address, None, 7, None)
        # The class is built with keyword arguments.
        seen = []

        class Kw:
            def __init__(self, **fields):
                seen.append(fields)

        cluster.register_user_type(keyspace, udt, Kw)
        assert type(session.execute("SELECT v FROM %s WHERE k = 3" % table).one().v) is Kw
        assert seen == [{"street": None, "zip": 7, "tags": None}]
    finally:
        session.execute("DROP TABLE %s" % table)


def test_counter(session):
    table = "tm_" + uuid.uuid4().hex[:12]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, c counter)" % table)
    try:
        up = session.prepare("UPDATE %s SET c = c + ? WHERE k = ?" % table)
        session.execute(up, (5, 1))
        session.execute(up, (-2, 1))
        session.execute(up, (2**62, 2))
        session.execute(up, (2**62 - 1, 2))
        session.execute(up, (-(2**63), 3))
        session.execute("UPDATE " + table + " SET c = c + %s WHERE k = %s", (7, 4))
        session.execute("UPDATE " + table + " SET c = c - %s WHERE k = %s", (8, 4))
        got = {r.k: r.c for r in session.execute("SELECT k, c FROM %s" % table)}
        assert got == {1: 3, 2: 2**63 - 1, 3: -(2**63), 4: -1}
        assert all(type(c) is int for c in got.values())
        with pytest.raises(TypeError, match='"c".*counter.*str'):
            session.execute(up, ("1", 1))
        with pytest.raises(TypeError, match='"c".*counter.*float'):
            session.execute(up, (1.5, 1))
        with pytest.raises(ValueError, match='"c".*counter.*64-bit'):
            session.execute(up, (2**63, 1))
        assert session.execute("SELECT c FROM %s WHERE k = 1" % table).one().c == 3
    finally:
        session.execute("DROP TABLE %s" % table)


def test_unhashable_set_elements_and_map_keys(session, new_table):
    table = new_table("set<frozen<list<int>>>")
    session.execute("ALTER TABLE %s ADD m map<frozen<list<int>>, frozen<set<int>>>" % table)
    ins = session.prepare("INSERT INTO %s (k, v, m) VALUES (?, ?, ?)" % table)
    session.execute(ins, (1, [[3], [1, 2], [1]], {(2,): {1}, (1, 5): {3, 2}}))
    row = session.execute("SELECT v, m FROM %s WHERE k = 1" % table).one()
    assert isinstance(row.v, SortedSet)
    assert list(row.v) == [[1], [1, 2], [3]]
    assert [1, 2] in row.v and [2] not in row.v
    assert isinstance(row.m, OrderedMap)
    # Server (key) order, the keys as read (lists, as in the classic driver); an equal
    # list or tuple finds them.
    assert list(row.m) == [[1, 5], [2]]
    assert row.m[(1, 5)] == row.m[[1, 5]] == {2, 3} and isinstance(row.m[(1, 5)], SortedSet)
    # What was read back can be written again.
    session.execute(ins, (2, row.v, row.m))
    again = session.execute("SELECT v, m FROM %s WHERE k = 2" % table).one()
    assert again == row


# -- with the classic driver ---------------------------------------------------------------

CROSS_COLUMNS = collections.OrderedDict(
    [
        ("vi", "varint"),
        ("de", "decimal"),
        ("da", "date"),
        ("ti", "time"),
        ("du", "duration"),
        ("ip4", "inet"),
        ("ip6", "inet"),
        ("tu", "frozen<tuple<int, text, boolean>>"),
        ("lt", "list<frozen<tuple<int, text>>>"),
        ("vf", "vector<float, 3>"),
        ("vt", "vector<text, 2>"),
        ("fm", "frozen<map<text, frozen<list<int>>>>"),
        ("sl", "set<frozen<list<int>>>"),
        ("mk", "map<frozen<list<int>>, text>"),
        ("u", None),  # frozen<the test's UDT>
        ("lu", None),  # list<frozen<the test's UDT>>
    ]
)

CROSS_ROWS = [
    dict(
        vi=2**200,
        de=D("-123.4500"),
        da=(-800000),
        ti=86_399_999_999_999,
        du=(-1, -2, -3),
        ip4="10.0.0.255",
        ip6="2001:db8::ff00:42:8329",
        tu=(1, None, True),
        lt=[(1, "a"), (2, None)],
        vf=[1.0, -2.5, 0.125],
        vt=["", "ü" * 200],
        fm={"a": [1, 2], "b": []},
        sl=[[1, 2], [0]],
        mk={(1, 2): "x", (0,): "y"},
        u=("Main", 12345),
        lu=[("a", None), (None, 2)],
    ),
    dict(
        vi=-(2**70),
        de=D("1E+30"),
        da=3000000,
        ti=0,
        du=(14, 3, 5_000_000_000),
        ip4="0.0.0.0",
        ip6="::1",
        tu=(None, None, None),
        lt=[(3, "")],
        vf=[0.0, 0.0, 0.0],
        vt=["a", "bc"],
        fm={"": [0]},
        sl=[[]],
        mk={(): "empty"},
        u=(None, None),
        lu=[],
    ),
    dict(
        vi=0,
        de=D("0.000001"),
        da=0,
        ti=1,
        du=(0, 0, 0),
        ip4="255.255.255.255",
        ip6="fe80::1",
        tu=(-1, "t", False),
        lt=None,
        vf=[3.0, 2.0, 1.0],
        vt=["x", "y"],
        fm=None,
        sl=None,
        mk=None,
        u=None,
        lu=None,
    ),
]


def _norm(v):
    """A value as plain tuples, comparable across the two drivers' Python types."""
    if v is None or isinstance(v, (bool, int, float, str, Decimal)):
        return v
    if hasattr(v, "days_from_epoch"):
        return ("date", v.days_from_epoch)
    if hasattr(v, "nanosecond_time"):
        return ("time", v.nanosecond_time)
    if all(hasattr(v, a) for a in ("months", "days", "nanoseconds")):
        return ("duration", v.months, v.days, v.nanoseconds)
    if hasattr(v, "items"):
        return ("map", tuple(sorted((_norm(k), _norm(x)) for k, x in v.items())))
    if isinstance(v, (set, frozenset)) or type(v).__name__ == "SortedSet":
        return ("set", tuple(sorted(_norm(x) for x in v)))
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    raise AssertionError("unexpected value %r" % (v,))


def _turbocql_input(name, v):
    if v is None:
        return None
    if name == "da":
        return Date(v)
    if name == "ti":
        return Time(v)
    if name == "du":
        return Duration(*v)
    if name == "u":
        return {"street": v[0], "zip": v[1]}
    if name == "lu":
        return [{"street": s, "zip": z} for s, z in v]
    return v


def _classic_input(name, v):
    from cassandra import util as cutil

    if v is None:
        return None
    if name == "da":
        return cutil.Date(v)
    if name == "ti":
        return cutil.Time(v)
    if name == "du":
        return cutil.Duration(*v)
    if name == "sl":
        return cutil.SortedSet(v)
    if name == "mk":
        return cutil.OrderedMap(v.items())
    return v  # UDTs as positional tuples


def _expected(name, v):
    """What a row of CROSS_ROWS reads back as, normalized."""
    if name == "da":
        return ("date", v)
    if name == "ti":
        return ("time", v)
    if name == "du":
        return ("duration",) + v
    if name == "sl":
        return ("set", tuple(sorted(_norm(x) for x in v))) if v else None
    if name in ("lt", "lu") and not v:
        return None
    return _norm(v)


def _cross_table(session, new_table, new_udt):
    udt = new_udt("street text, zip int")
    cols = dict(CROSS_COLUMNS, u="frozen<%s>" % udt, lu="list<frozen<%s>>" % udt)
    table = new_table("int")  # v int, unused
    for name, typ in cols.items():
        session.execute("ALTER TABLE %s ADD %s %s" % (table, name, typ))
    return table, list(cols)


@pytest.fixture
def classic_session(keyspace):
    pytest.importorskip("cassandra")
    from cassandra.cluster import Cluster as ClassicCluster

    classic = ClassicCluster([HOST], port=PORT)
    try:
        yield classic.connect(keyspace)
    finally:
        classic.shutdown()


def test_written_by_turbocql_read_by_classic(session, new_table, new_udt, classic_session):
    from cassandra import util as cutil

    table, names = _cross_table(session, new_table, new_udt)
    try:
        ins = session.prepare(
            "INSERT INTO %s (k, %s) VALUES (?, %s)" % (table, ", ".join(names), ", ".join("?" * len(names)))
        )
        for k, row in enumerate(CROSS_ROWS):
            session.execute(ins, [k] + [_turbocql_input(n, row[n]) for n in names])
        # A counter too.
        counters = "tm_" + uuid.uuid4().hex[:12]
        session.execute("CREATE TABLE %s (k int PRIMARY KEY, c counter)" % counters)
        try:
            up = session.prepare("UPDATE %s SET c = c + ? WHERE k = ?" % counters)
            session.execute(up, (2**40, 1))
            session.execute(up, (-3, 1))
            assert classic_session.execute("SELECT c FROM %s WHERE k = 1" % counters).one().c == 2**40 - 3
        finally:
            session.execute("DROP TABLE %s" % counters)

        sel = classic_session.prepare("SELECT %s FROM %s WHERE k = ?" % (", ".join(names), table))
        for k, row in enumerate(CROSS_ROWS):
            got = classic_session.execute(sel, (k,)).one()
            for n in names:
                assert _norm(getattr(got, n)) == _expected(n, row[n]), (k, n, getattr(got, n))
            assert (
                isinstance(got.da, cutil.Date) and isinstance(got.ti, cutil.Time) and isinstance(got.du, cutil.Duration)
            )
            assert got.de.as_tuple() == row["de"].as_tuple()
    finally:
        session.execute("DROP TABLE %s" % table)


def test_written_by_classic_read_by_turbocql(session, new_table, new_udt, classic_session):
    table, names = _cross_table(session, new_table, new_udt)
    try:
        ins = classic_session.prepare(
            "INSERT INTO %s (k, %s) VALUES (?, %s)" % (table, ", ".join(names), ", ".join("?" * len(names)))
        )
        for k, row in enumerate(CROSS_ROWS):
            classic_session.execute(ins, [k] + [_classic_input(n, row[n]) for n in names])
        counters = "tm_" + uuid.uuid4().hex[:12]
        classic_session.execute("CREATE TABLE %s (k int PRIMARY KEY, c counter)" % counters)
        try:
            classic_session.execute("UPDATE %s SET c = c + %d WHERE k = 1" % (counters, 2**40))
            classic_session.execute(classic_session.prepare("UPDATE %s SET c = c + ? WHERE k = ?" % counters), (-3, 1))
            assert session.execute("SELECT c FROM %s WHERE k = 1" % counters).one().c == 2**40 - 3
        finally:
            classic_session.execute("DROP TABLE %s" % counters)

        sel = session.prepare("SELECT %s FROM %s WHERE k = ?" % (", ".join(names), table))
        for k, row in enumerate(CROSS_ROWS):
            got = session.execute(sel, (k,)).one()
            for n in names:
                assert _norm(getattr(got, n)) == _expected(n, row[n]), (k, n, getattr(got, n))
            assert type(got.da) is Date and type(got.ti) is Time and type(got.du) is Duration
            assert got.de.as_tuple() == row["de"].as_tuple()
            if row["sl"]:
                assert isinstance(got.sl, SortedSet)
            if row["u"]:
                assert (got.u.street, got.u.zip) == row["u"]
    finally:
        session.execute("DROP TABLE %s" % table)
