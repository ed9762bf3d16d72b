"""The CQL text form of every type (what ``turbocql unload`` writes to CSV and ``load`` reads
back): ``_engine.decode_text`` of a value's wire bytes, read by ``_engine.encode_text``,
gives the same bytes; the bytes come from the engine's encoder and, for the scalar types,
from the classic driver's serializers (the oracle). No server needed."""

import datetime
import decimal
import ipaddress
import uuid

import pytest

import turbocql.cluster  # noqa: F401 (registers the Python classes the engine's encoders check)
from turbocql import _engine
from turbocql.util import Duration

UDT = "udt<ks.addr, street text, zip int, tags set<text>>"

CASES = [
    ("int", -7, "-7"),
    ("bigint", 2**62, str(2**62)),
    ("smallint", -300, "-300"),
    ("tinyint", 5, "5"),
    ("varint", -(10**40), str(-(10**40))),
    ("varint", 0, "0"),
    ("float", 0.1, "0.1"),
    ("float", float("inf"), "Infinity"),
    ("double", -2.5e-300, "-2.5e-300"),
    ("double", 1e300, "1e300"),
    ("double", float("-inf"), "-Infinity"),
    ("boolean", True, "true"),
    ("text", "it's ✓", "it's ✓"),
    ("ascii", "", ""),
    ("blob", b"\x00\xff", "0x00ff"),
    ("blob", b"", "0x"),
    ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678"), "12345678-1234-5678-1234-567812345678"),
    ("timeuuid", uuid.UUID("5d5d2a70-d4a0-11ee-9b6f-0242ac120002"), "5d5d2a70-d4a0-11ee-9b6f-0242ac120002"),
    ("inet", "192.168.1.20", "192.168.1.20"),
    ("inet", "2001:db8::1", "2001:db8::1"),
    ("timestamp", datetime.datetime(2024, 2, 29, 12, 30, 45, 123000), "2024-02-29 12:30:45.123+0000"),
    ("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 999000), "1969-12-31 23:59:59.999+0000"),
    ("date", datetime.date(1969, 7, 20), "1969-07-20"),
    ("time", datetime.time(23, 59, 58, 999999), "23:59:58.999999000"),
    ("duration", Duration(14, 25, 18_367_008_009_010), "1y2mo25d5h6m7s8ms9us10ns"),
    ("duration", Duration(-1, -2, -3), "-1mo2d3ns"),
    ("decimal", decimal.Decimal("-12345.678900"), "-12345.678900"),
    ("decimal", decimal.Decimal("1E+3"), "1E+3"),
    ("decimal", decimal.Decimal("0.0005"), "0.0005"),
    ("list<int>", [3, 1, 2], "[3, 1, 2]"),
    ("set<text>", ["a", "it's"], "{'a', 'it''s'}"),
    ("map<text, int>", {"x": 1, "y": 2}, "{'x': 1, 'y': 2}"),
    ("map<timestamp, blob>", {datetime.datetime(2024, 1, 1): b"\x01"}, "{'2024-01-01 00:00:00.000+0000': 0x01}"),
    ("tuple<int, text, uuid>", (4, "four", None), "(4, 'four', null)"),
    ("vector<float, 3>", [0.5, -1.0, 2.0], "[0.5, -1, 2]"),
    ("vector<text, 2>", ["a", "b"], "['a', 'b']"),
    ("list<frozen<map<int, text>>>", [{1: "one"}, {2: "two", 3: "three"}], "[{1: 'one'}, {2: 'two', 3: 'three'}]"),
    (UDT, {"street": "Main", "zip": None, "tags": {"a"}}, "{street: 'Main', zip: null, tags: {'a'}}"),
]


@pytest.mark.parametrize("cql_type, value, text", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_text_form_reads_back_to_the_same_bytes(cql_type, value, text):
    data = _engine.encode(cql_type, value)
    assert _engine.decode_text(cql_type, data) == text
    assert _engine.encode_text(cql_type, text) == data


CLASSIC_NAMES = {
    "int": "Int32Type",
    "bigint": "LongType",
    "smallint": "ShortType",
    "tinyint": "ByteType",
    "varint": "IntegerType",
    "float": "FloatType",
    "double": "DoubleType",
    "boolean": "BooleanType",
    "text": "UTF8Type",
    "ascii": "AsciiType",
    "blob": "BytesType",
    "uuid": "UUIDType",
    "timeuuid": "TimeUUIDType",
    "inet": "InetAddressType",
    "timestamp": "DateType",
    "date": "SimpleDateType",
    "time": "TimeType",
    "decimal": "DecimalType",
}
SCALARS = [c for c in CASES if "<" not in c[0] and c[0] not in ("duration",)]


@pytest.mark.parametrize("cql_type, value, text", SCALARS, ids=["%s-%d" % (c[0], i) for i, c in enumerate(SCALARS)])
def test_scalar_bytes_are_the_classic_drivers(cql_type, value, text):
    from cassandra import cqltypes

    classic = cqltypes.lookup_casstype(CLASSIC_NAMES[cql_type])
    if cql_type == "inet":
        value = str(ipaddress.ip_address(value))
    if cql_type == "date":
        from cassandra.util import Date

        value = Date(value)
    if cql_type == "time":
        from cassandra.util import Time

        value = Time(value)
    assert _engine.encode_text(cql_type, text) == classic.serialize(value, 4)


@pytest.mark.parametrize(
    "cql_type, text, value",
    [
        ("list<text>", '["a", "b\\"c"]', ["a", 'b"c']),
        ("map<text, int>", '{"x": 1}', {"x": 1}),
        ("set<int>", "[1, 2]", [1, 2]),
        ("timestamp", "2024-01-02T03:04:05Z", datetime.datetime(2024, 1, 2, 3, 4, 5)),
        ("timestamp", "2024-01-02 04:04:05+01:00", datetime.datetime(2024, 1, 2, 3, 4, 5)),
        ("timestamp", "1704164645000", datetime.datetime(2024, 1, 2, 3, 4, 5)),
        ("boolean", "False", False),
        (UDT, '{"zip": 7}', {"zip": 7}),
        ("tuple<int, text>", "(1)", (1, None)),
    ],
)
def test_other_spellings_are_read_too(cql_type, text, value):
    """JSON (as DSBulk writes collections), ISO 8601 timestamps, epoch milliseconds."""
    assert _engine.encode_text(cql_type, text) == _engine.encode(cql_type, value)


@pytest.mark.parametrize(
    "cql_type, text, message",
    [
        ("int", "12x", "is not an int"),
        ("int", "3000000000", "is not an int"),
        ("list<int>", "[1, null]", "null is not allowed inside a list"),
        ("list<int>", "[1, 2", "expected ',' or ']'"),
        ("map<text, int>", "{'a' 1}", "expected ':'"),
        ("set<text>", "{'a'", "expected ',' or '}'"),
        ("list<text>", "['unterminated]", "unterminated quoted string"),
        (UDT, "{nope: 1}", "has no field"),
        ("vector<float, 3>", "[1, 2]", "vector has 2 elements, the column has 3"),
        ("tuple<int, int>", "(1, 2, 3)", "more than the tuple's 2 elements"),
        ("timeuuid", str(uuid.uuid4()), "version 1"),
        ("blob", "0x0", "even number"),
        ("timestamp", "2024-13-01", "is not a timestamp"),
        ("list<int>", "[1] trailing", "unexpected"),
    ],
)
def test_bad_text_raises_value_error_naming_the_cause(cql_type, text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        _engine.encode_text(cql_type, text)
