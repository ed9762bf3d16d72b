"""Round trips of the foundation's CQL types, with edge values, through prepared and
simple statements."""

import datetime
import math
import uuid

import pytest

from turbocql.util import SortedSet

TYPES = {
    "text": ["", "plain", "ünïcødé ✓ 日本", "'quoted' \"double\"", "x" * 70000],
    "ascii": ["", "abc", "~!@#"],
    "varchar": ["v", ""],
    "int": [0, 1, -1, 2**31 - 1, -(2**31)],
    "bigint": [0, 2**63 - 1, -(2**63)],
    "smallint": [0, 2**15 - 1, -(2**15)],
    "tinyint": [0, 127, -128],
    "float": [0.0, 1.5, -2.25, float("inf"), float("-inf"), 3.4028234663852886e38],
    "double": [0.0, 1e308, -1e-308, math.pi, float("inf"), float("-inf")],
    "boolean": [True, False],
    "blob": [b"", b"\x00\xff", bytes(range(256))],
    "uuid": [uuid.UUID(int=0), uuid.uuid4(), uuid.UUID(int=2**128 - 1)],
    "timeuuid": [uuid.uuid1()],
    "timestamp": [
        datetime.datetime(1970, 1, 1),
        datetime.datetime(2024, 2, 29, 23, 59, 59, 999000),
        datetime.datetime(1, 1, 1),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999000),
        datetime.datetime(1900, 6, 15, 12, 0, 0, 1000),
    ],
    "list<int>": [[1, 2, 3], [0], [-1, -1]],
    "list<text>": [["a", "ü"], [""]],
    "set<text>": [{"a", "b", "c"}, {"ü"}],
    "set<int>": [{3, 1, 2}],
    "map<text, int>": [{"a": 1, "b": -2}, {"": 0}],
    "map<int, boolean>": [{1: True, 2: False}],
    "list<frozen<list<int>>>": [[[1], [2, 3]]],
    "map<text, frozen<set<int>>>": [{"a": {1, 2}}],
}


def _table_for(session, cql_type):
    name = "types_" + "".join(ch if ch.isalnum() else "_" for ch in cql_type)
    session.execute("CREATE TABLE IF NOT EXISTS %s (k int PRIMARY KEY, v %s)" % (name, cql_type))
    session.execute("TRUNCATE %s" % name)
    return name


def _same(expected, got):
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(got)
    if isinstance(expected, set):
        return isinstance(got, SortedSet) and got == expected
    if isinstance(expected, dict):
        return set(expected) == set(got) and all(_same(v, got[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return len(expected) == len(got) and all(_same(a, b) for a, b in zip(expected, got))
    return expected == got and type(expected) is type(got)


@pytest.mark.parametrize("cql_type", sorted(TYPES))
def test_round_trip(session, cql_type):
    table = _table_for(session, cql_type)
    ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
    sel = session.prepare("SELECT v FROM %s WHERE k = ?" % table)
    values = TYPES[cql_type]
    for i, v in enumerate(values):
        session.execute(ins, (i, v))
    for i, v in enumerate(values):
        got = session.execute(sel, (i,)).one().v
        assert _same(v, got), (cql_type, v, got)
    # The same values through client-side %s encoding of a simple statement.
    for i, v in enumerate(values):
        if cql_type == "text" and len(v) > 1000:
            continue
        session.execute("INSERT INTO " + table + " (k, v) VALUES (%s, %s)", (100 + i, v))
        got = session.execute(sel, (100 + i,)).one().v
        assert _same(v, got), ("simple", cql_type, v, got)


def test_nan_round_trip(session):
    table = _table_for(session, "double")
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, float("nan")))
    assert math.isnan(session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v)


@pytest.mark.parametrize(
    "cql_type", ["int", "text", "list<int>", "map<text, int>", "set<text>", "timestamp", "uuid", "blob"]
)
def test_null_round_trip(session, cql_type):
    table = _table_for(session, cql_type)
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, None))
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v is None


def test_empty_collections_read_back_as_none(session):
    table = _table_for(session, "list<int>")
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, []))
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v is None


def test_aware_timestamp_is_converted_to_utc(session):
    table = _table_for(session, "timestamp")
    tz = datetime.timezone(datetime.timedelta(hours=2))
    aware = datetime.datetime(2024, 1, 1, 12, 0, tzinfo=tz)
    session.execute(session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table), (1, aware))
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v == datetime.datetime(2024, 1, 1, 10, 0)


def test_timestamp_precision_is_milliseconds(session):
    table = _table_for(session, "timestamp")
    session.execute(
        session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table),
        (1, datetime.datetime(2020, 1, 1, 0, 0, 0, 123456)),
    )
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v == datetime.datetime(
        2020, 1, 1, 0, 0, 0, 123000
    )


def test_bytearray_and_memoryview_for_blob(session):
    table = _table_for(session, "blob")
    ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % table)
    session.execute(ins, (1, bytearray(b"ab")))
    session.execute(ins, (2, memoryview(b"cd")))
    assert session.execute("SELECT v FROM %s WHERE k = 1" % table).one().v == b"ab"
    assert session.execute("SELECT v FROM %s WHERE k = 2" % table).one().v == b"cd"
