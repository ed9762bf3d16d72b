"""Unit tests for turbocql.encoder (client-side CQL literal encoding)."""

import ast
import collections
import datetime
import enum
import ipaddress
import math
import pathlib
import uuid
from collections.abc import Mapping
from decimal import Decimal

import pytest

from turbocql.encoder import Encoder, ValueSequence, bind_params, cql_quote

ENC = Encoder()
enc = ENC.cql_encode_all_types

UTC = datetime.UTC
PLUS2 = datetime.timezone(datetime.timedelta(hours=2))
MINUS5_30 = datetime.timezone(-datetime.timedelta(hours=5, minutes=30))


# ---------------------------------------------------------------- scalars


def test_none():
    assert enc(None) == "NULL"


@pytest.mark.parametrize(
    "val, expected",
    [
        ("", "''"),
        ("abc", "'abc'"),
        ("it's", "'it''s'"),
        ("''", "''''''"),
        ("'", "''''"),
        ('a"b', "'a\"b'"),
        ("back\\slash", "'back\\slash'"),
        ("line\nbreak\ttab", "'line\nbreak\ttab'"),
        ("%s %(x)s %%", "'%s %(x)s %%'"),
        ("x'); DROP TABLE t; --", "'x''); DROP TABLE t; --'"),
    ],
)
def test_str(val, expected):
    assert enc(val) == expected
    assert ENC.cql_encode_str(val) == expected
    assert ENC.cql_encode_unicode(val) == expected
    assert cql_quote(val) == expected


@pytest.mark.parametrize(
    "val",
    [
        "ü",
        "naïve café",
        "日本語",
        "Ελληνικά",
        "emoji 🎉👍🏽",
        "e\u0301",
        "\u0000nul",
        "\U0010ffff",
    ],
)
def test_unicode_str_is_kept_verbatim(val):
    assert enc(val) == "'" + val + "'"
    assert enc("l'" + val) == "'l''" + val + "'"


def test_str_subclass_and_str_enum_are_quoted():
    class S(str):
        def __str__(self):
            return "not this"

    class Color(str, enum.Enum):  # noqa: UP042 - the str mixin, not StrEnum: its str() differs
        RED = "re'd"

    assert enc(S("x'y")) == "'x''y'"
    assert enc(Color.RED) == "'re''d'"


def test_cql_quote_non_str():
    assert cql_quote(1) == "1"
    assert cql_quote(None) == "None"
    assert cql_quote(1.5) == "1.5"


@pytest.mark.parametrize(
    "val, expected",
    [
        (b"", "0x"),
        (b"\x00\xff\x10", "0x00ff10"),
        (bytearray(b"ab"), "0x6162"),
        (memoryview(b"ab"), "0x6162"),
        (memoryview(b"xabcx")[1:4], "0x616263"),
        (bytes(range(256)), "0x" + bytes(range(256)).hex()),
    ],
)
def test_bytes(val, expected):
    assert enc(val) == expected


def test_bool_before_int():
    assert enc(True) == "true"
    assert enc(False) == "false"
    assert enc([True, False, 1, 0]) == "[true, false, 1, 0]"
    assert enc({True: False}) == "{true: false}"


@pytest.mark.parametrize(
    "val, expected",
    [
        (0, "0"),
        (1, "1"),
        (-5, "-5"),
        (2**63 - 1, "9223372036854775807"),
        (-(2**63), "-9223372036854775808"),
        (2**100, str(2**100)),
    ],
)
def test_int(val, expected):
    assert enc(val) == expected


def test_int_subclasses():
    class Flag(enum.IntEnum):
        A = 7

    class Plain(int, enum.Enum):
        B = 9

    class MyInt(int):
        def __repr__(self):
            return "nope"

        __str__ = __repr__

    assert enc(Flag.A) == "7"
    assert enc(Plain.B) == "9"
    assert enc(MyInt(3)) == "3"


@pytest.mark.parametrize(
    "val, expected",
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.5, "1.5"),
        (-2.25, "-2.25"),
        (0.1, "0.1"),
        (1e20, "1e+20"),
        (1e-7, "1e-07"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (1 / 3, repr(1 / 3)),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_float(val, expected):
    assert enc(val) == expected


def test_float_round_trips():
    for x in (0.1 + 0.2, math.pi, 123456789.123456789, 2.0**-1074, 1e300 / 7):
        assert float(enc(x)) == x


def test_float_subclass_uses_plain_repr():
    class F(float):
        def __repr__(self):
            return "F(...)"

    assert enc(F(2.5)) == "2.5"
    assert enc(F("nan")) == "NaN"


@pytest.mark.parametrize(
    "val, expected",
    [
        (Decimal("1.10"), "1.10"),
        (Decimal("0"), "0"),
        (Decimal("-0.001"), "-0.001"),
        (Decimal("123456789012345678901234567890.123456789"), "123456789012345678901234567890.123456789"),
        (Decimal("1E+3"), "1E+3"),
        (Decimal("1.5E-10"), "1.5E-10"),
        (Decimal("NaN"), "NaN"),
        (Decimal("-NaN"), "NaN"),
        (Decimal("sNaN"), "NaN"),
        (Decimal("Infinity"), "Infinity"),
        (Decimal("-Infinity"), "-Infinity"),
    ],
)
def test_decimal_keeps_exact_value(val, expected):
    assert enc(val) == expected


def test_uuid_unquoted():
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert enc(u) == "12345678-1234-5678-1234-567812345678"
    u1 = uuid.uuid1()
    assert enc(u1) == str(u1)
    assert enc([u]) == "[12345678-1234-5678-1234-567812345678]"


def test_ipaddress():
    assert enc(ipaddress.ip_address("10.0.0.1")) == "'10.0.0.1'"
    assert enc(ipaddress.ip_address("2001:0db8:0000:0000:0000:0000:0000:0001")) == "'2001:db8::1'"


# ------------------------------------------------------- dates and times


@pytest.mark.parametrize(
    "val, expected",
    [
        (datetime.datetime(1970, 1, 1), "0"),
        (datetime.datetime(2020, 1, 2, 3, 4, 5, 678901), "1577934245678"),
        (datetime.datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), "1577934245678"),
        (datetime.datetime(2020, 1, 2, 5, 4, 5, 678901, tzinfo=PLUS2), "1577934245678"),
        (datetime.datetime(2020, 1, 1, 21, 34, 5, 678901, tzinfo=MINUS5_30), "1577934245678"),
        (datetime.datetime(1960, 1, 1), "-315619200000"),
        (datetime.datetime(1969, 12, 31, 23, 59, 59), "-1000"),
        # sub-millisecond parts are floored, also before the epoch
        (datetime.datetime(1970, 1, 1, 0, 0, 0, 999), "0"),
        (datetime.datetime(1969, 12, 31, 23, 59, 59, 999500), "-1"),
        (datetime.datetime(1, 1, 1), "-62135596800000"),
        (datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), "253402300799999"),
    ],
)
def test_datetime(val, expected):
    assert enc(val) == expected


def test_datetime_aware_at_extremes():
    # Offsets must not overflow datetime's range.
    assert enc(datetime.datetime(1, 1, 1, 1, tzinfo=PLUS2)) == str(-62135596800000 - 3600_000)
    far = datetime.datetime(9999, 12, 31, 23, tzinfo=MINUS5_30)
    assert enc(far) == str(253402297200000 + 5 * 3600_000 + 30 * 60_000)


def test_datetime_tzinfo_without_offset_is_naive():
    class NoOffset(datetime.tzinfo):
        def utcoffset(self, dt):
            return None

        def dst(self, dt):
            return None

    val = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=NoOffset())
    assert enc(val) == enc(datetime.datetime(2020, 1, 2, 3, 4, 5))


def test_datetime_subclass():
    class DT(datetime.datetime):
        pass

    assert enc(DT(2020, 1, 2, 3, 4, 5, 678901)) == "1577934245678"


def test_datetime_matches_timestamp():
    for val in (
        datetime.datetime(2001, 9, 9, 1, 46, 40, tzinfo=UTC),
        datetime.datetime(2038, 1, 19, 3, 14, 8, 123000, tzinfo=PLUS2),
        datetime.datetime(2024, 2, 29, 12, tzinfo=MINUS5_30),
    ):
        assert int(enc(val)) == round(val.timestamp() * 1000)


@pytest.mark.parametrize(
    "val, expected",
    [
        (datetime.date(2020, 1, 2), "'2020-01-02'"),
        (datetime.date(1, 1, 1), "'0001-01-01'"),
        (datetime.date(999, 12, 31), "'0999-12-31'"),
        (datetime.date(9999, 12, 31), "'9999-12-31'"),
    ],
)
def test_date(val, expected):
    assert enc(val) == expected


@pytest.mark.parametrize(
    "val, expected",
    [
        (datetime.time(0, 0), "'00:00:00'"),
        (datetime.time(1, 2, 3), "'01:02:03'"),
        (datetime.time(1, 2, 3, 4), "'01:02:03.000004'"),
        (datetime.time(23, 59, 59, 999999), "'23:59:59.999999'"),
    ],
)
def test_time(val, expected):
    assert enc(val) == expected


def test_duck_typed_time_date_duration():
    class Time:
        def __init__(self, ns):
            self.nanosecond_time = ns

    class Date:
        def __init__(self, days):
            self.days_from_epoch = days

    class Duration:
        def __init__(self, months, days, nanoseconds):
            self.months, self.days, self.nanoseconds = months, days, nanoseconds

    assert enc(Time(3723_000_000_004)) == "'01:02:03.000000004'"
    assert enc(Time(0)) == "'00:00:00.000000000'"
    assert enc(Date(0)) == str(2**31)
    assert enc(Date(-5)) == str(2**31 - 5)
    assert enc(Duration(1, 2, 3)) == "1mo2d3ns"
    assert enc(Duration(-1, -2, -3)) == "-1mo2d3ns"
    assert enc(Duration(0, 0, 0)) == "0mo0d0ns"
    assert enc([Duration(0, 1, 0)]) == "[0mo1d0ns]"


# ------------------------------------------------------------ collections


def test_list_set_map_tuple():
    assert enc([]) == "[]"
    assert enc([1, "a", None]) == "[1, 'a', NULL]"
    assert enc({3}) == "{3}"
    assert enc(frozenset(["x"])) == "{'x'}"
    assert enc(set()) == "{}"
    assert enc({}) == "{}"
    assert enc({"a": 1, "b'": [2]}) == "{'a': 1, 'b''': [2]}"
    assert enc(collections.OrderedDict([("z", 1), ("a", 2)])) == "{'z': 1, 'a': 2}"
    # Like the classic driver, a tuple encodes as a CQL list by default ...
    assert enc((1, "a")) == "[1, 'a']"
    assert enc(()) == "[]"
    # ... and as a CQL tuple with cql_encode_tuple.
    assert ENC.cql_encode_tuple((1, "a", None)) == "(1, 'a', NULL)"
    assert enc(x for x in (1, 2)) == "[1, 2]"


def test_set_order_follows_iteration():
    s = {5, 1, 3}
    assert enc(s) == "{" + ", ".join(str(x) for x in s) + "}"


def test_tuple_mapping_override():
    e = Encoder()
    e.mapping[tuple] = e.cql_encode_tuple
    assert e.cql_encode_all_types((1, ("a", 2.5), [(3,)])) == "(1, ('a', 2.5), [(3)])"
    # The shared default is unaffected.
    assert enc((1,)) == "[1]"


def test_value_sequence():
    assert enc(ValueSequence([1, "a'b", None])) == "(1, 'a''b', NULL)"
    assert enc(ValueSequence()) == "()"
    assert enc(ValueSequence([uuid.UUID(int=1)])) == "(00000000-0000-0000-0000-000000000001)"
    assert isinstance(ValueSequence([1]), list)
    assert ENC.cql_encode_sequence([1, 2]) == "(1, 2)"


def test_nested_collections():
    val = {
        "k": [{1, 2}, {"x": [b"\x01", None]}],
        (1, 2): frozenset([datetime.date(2020, 1, 2)]),
        uuid.UUID(int=2): {"inner": {"deep": ["it's", float("nan"), True]}},
    }
    assert enc(val) == (
        "{'k': [{1, 2}, {'x': [0x01, NULL]}], [1, 2]: {'2020-01-02'}, "
        "00000000-0000-0000-0000-000000000002: "
        "{'inner': {'deep': ['it''s', NaN, true]}}}"
    )
    assert enc([[[[]]]]) == "[[[[]]]]"
    assert enc([ValueSequence([1]), [datetime.datetime(1970, 1, 1, 0, 0, 1)]]) == "[(1), [1000]]"


def test_any_mapping_and_set():
    class Frozen(Mapping):
        def __init__(self, d):
            self._d = d

        def __getitem__(self, k):
            return self._d[k]

        def __iter__(self):
            return iter(self._d)

        def __len__(self):
            return len(self._d)

    class MyDict(dict):
        pass

    class SortedSet:  # like the classic driver's: not a collections.abc.Set
        def __init__(self, items):
            self._items = sorted(items)

        def __iter__(self):
            return iter(self._items)

    assert enc(Frozen({"a": [1]})) == "{'a': [1]}"
    assert enc(MyDict(x=None)) == "{'x': NULL}"
    assert enc(collections.defaultdict(list, {1: [2]})) == "{1: [2]}"
    assert enc(collections.Counter({"a": 2})) == "{'a': 2}"
    assert enc({}.keys()) == "{}"
    assert enc(SortedSet([3, 1, 2])) == "{1, 2, 3}"
    assert enc([Frozen({1: SortedSet(["b", "a"])})]) == "[{1: {'a', 'b'}}]"


def test_namedtuple_is_a_tuple():
    P = collections.namedtuple("P", "x y")
    assert enc(P(1, "a")) == "[1, 'a']"


# ------------------------------------------------------- other / mapping


def test_unknown_object_uses_str():
    class Thing:
        def __str__(self):
            return "thing!"

    assert enc(Thing()) == "thing!"
    assert ENC.cql_encode_object(42) == "42"
    assert enc(datetime.timedelta(days=1)) == str(datetime.timedelta(days=1))


def test_fake_numpy_values_use_tolist():
    def make(name, value):
        cls = type(name, (), {"tolist": lambda self: value, "__str__": lambda self: "bad"})
        cls.__module__ = "numpy"
        return cls()

    assert enc(make("float64", 1.5)) == "1.5"
    assert enc(make("ndarray", [1, 2, 3])) == "[1, 2, 3]"
    assert enc(make("datetime64", datetime.datetime(1970, 1, 1, 0, 0, 2))) == "2000"
    assert enc(make("bool_", True)) == "true"


def test_custom_mapping_entry_and_subclass_lookup():
    class Money:
        def __init__(self, cents):
            self.cents = cents

    class Euro(Money):
        pass

    e = Encoder()
    e.mapping[Money] = lambda m: "%d" % m.cents
    assert e.cql_encode_all_types(Money(150)) == "150"
    assert e.cql_encode_all_types(Euro(7)) == "7"
    assert e.cql_encode_all_types([Money(1), {Euro(2): None}]) == "[1, {2: NULL}]"
    assert Money not in Encoder().mapping


def test_override_str_encoder_applies_to_nested_values():
    e = Encoder()
    e.mapping[str] = lambda s: "$$" + s + "$$"
    assert e.cql_encode_all_types(["a", {"b": "c"}]) == "[$$a$$, {$$b$$: $$c$$}]"


def test_as_text_type_is_accepted():
    assert enc("abc", as_text_type=True) == "'abc'"
    assert enc(1, as_text_type=True) == "1"
    assert enc(b"\x01", as_text_type=True) == "0x01"
    assert ENC.cql_encode_all_types(["a"], True) == "['a']"


def test_results_are_str():
    for val in (
        None,
        "a",
        b"a",
        True,
        1,
        1.5,
        Decimal(1),
        uuid.UUID(int=0),
        datetime.datetime(2000, 1, 1),
        datetime.date(2000, 1, 1),
        datetime.time(1),
        [1],
        {1},
        {1: 1},
        (1,),
        ValueSequence([1]),
    ):
        assert type(enc(val)) is str


def test_mapping_is_per_instance_dict():
    a, b = Encoder(), Encoder()
    assert isinstance(a.mapping, dict) and a.mapping is not b.mapping
    assert a.mapping[type(None)] == a.cql_encode_none
    assert a.mapping[ValueSequence] == a.cql_encode_sequence
    assert a.mapping[dict] == a.cql_encode_map_collection


def test_classic_method_names_exist():
    for name in (
        "cql_encode_none",
        "cql_encode_unicode",
        "cql_encode_str",
        "cql_encode_bytes",
        "cql_encode_object",
        "cql_encode_float",
        "cql_encode_datetime",
        "cql_encode_date",
        "cql_encode_time",
        "cql_encode_sequence",
        "cql_encode_list_collection",
        "cql_encode_set_collection",
        "cql_encode_map_collection",
        "cql_encode_tuple",
        "cql_encode_all_types",
        "cql_encode_decimal",
        "cql_encode_ipaddress",
        "cql_encode_date_ext",
        "cql_encode_str_quoted",
    ):
        assert callable(getattr(ENC, name)), name


def test_module_imports_only_stdlib():
    import turbocql.encoder as mod

    tree = ast.parse(pathlib.Path(mod.__file__).read_text(encoding="utf-8"))
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            roots.add(node.module.split(".")[0])
    assert not roots & {"turbocql", "cassandra"}, roots


# ------------------------------------------------------------ bind_params


def test_bind_positional():
    q = "INSERT INTO t (a, b, c) VALUES (%s, %s, %s)"
    assert bind_params(q, (1, "x'y", None), ENC) == "INSERT INTO t (a, b, c) VALUES (1, 'x''y', NULL)"
    assert bind_params(q, [1, 2, 3], ENC) == "INSERT INTO t (a, b, c) VALUES (1, 2, 3)"
    assert bind_params(q, (x for x in "abc"), ENC) == "INSERT INTO t (a, b, c) VALUES ('a', 'b', 'c')"
    assert bind_params("%s%s", ("a", "b"), ENC) == "'a''b'"
    assert bind_params("%s", ([1, 2],), ENC) == "[1, 2]"


def test_bind_in_clause_with_value_sequence():
    q = "SELECT * FROM t WHERE k IN %s AND c = %s"
    assert bind_params(q, (ValueSequence(["a", "b"]), 3), ENC) == "SELECT * FROM t WHERE k IN ('a', 'b') AND c = 3"


def test_bind_named():
    q = "SELECT * FROM t WHERE k = %(k)s AND c > %(c)s AND d = %(k)s"
    assert (
        bind_params(q, {"k": "v", "c": 1.5, "unused": object()}, ENC)
        == "SELECT * FROM t WHERE k = 'v' AND c > 1.5 AND d = 'v'"
    )
    assert bind_params("%(a b)s/%(x(y)z)s", {"a b": 1, "x(y)z": 2}, ENC) == "1/2"
    assert bind_params("%()s", {"": None}, ENC) == "NULL"
    assert bind_params("%(k)s", collections.OrderedDict(k=[1]), ENC) == "[1]"


def test_bind_named_encodes_repeated_value_once():
    calls = []

    class Counting(Encoder):
        def cql_encode_all_types(self, val, as_text_type=False):
            calls.append(val)
            return super().cql_encode_all_types(val, as_text_type)

    assert bind_params("%(k)s %(k)s %(k)s", {"k": 1}, Counting()) == "1 1 1"
    assert calls == [1]


def test_bind_percent_escapes():
    assert bind_params("SELECT '%%' FROM t WHERE a = %s", (1,), ENC) == "SELECT '%' FROM t WHERE a = 1"
    assert bind_params("%%s %s %%%s %%(k)s", ("x", "y"), ENC) == "%s 'x' %'y' %(k)s"
    assert bind_params("%%(k)s %(k)s %%", {"k": 1}, ENC) == "%(k)s 1 %"
    assert bind_params("100%%", (), ENC) == "100%"
    assert bind_params("no markers", (), ENC) == "no markers"
    assert bind_params("no markers", {"a": 1}, ENC) == "no markers"
    assert bind_params("", (), ENC) == ""
    assert bind_params("%%%%", {}, ENC) == "%%"


def test_bound_values_are_not_reinterpreted():
    # Encoded values that contain % or markers are inserted verbatim.
    assert bind_params("%s %s", ("%s", "%(k)s %%"), ENC) == "'%s' '%(k)s %%'"
    assert bind_params("%(a)s %(b)s", {"a": "%(b)s", "b": "%"}, ENC) == "'%(b)s' '%'"


def test_bind_unicode_query_and_values():
    assert (
        bind_params("UPDATE t SET é = %s WHERE k = %s", ("日本'語", "🎉"), ENC)
        == "UPDATE t SET é = '日本''語' WHERE k = '🎉'"
    )


@pytest.mark.parametrize(
    "query, params, n_markers, n_values, phrase",
    [
        ("a %s %s", (1,), 2, 1, "not enough arguments for format string"),
        ("a %s", (), 1, 0, "not enough arguments for format string"),
        ("a %s", (1, 2), 1, 2, "not all arguments converted during string formatting"),
        ("a", (1,), 0, 1, "not all arguments converted during string formatting"),
        ("a %% %s", [1, 2, 3], 1, 3, "not all arguments converted during string formatting"),
    ],
)
def test_bind_arity_errors(query, params, n_markers, n_values, phrase):
    with pytest.raises(TypeError) as info:
        bind_params(query, params, ENC)
    msg = str(info.value)
    assert phrase in msg
    assert "has %d %%s marker" % n_markers in msg
    assert "but %d value" % n_values in msg


def test_bind_arity_error_grammar():
    with pytest.raises(TypeError, match=r"has 1 %s marker but 2 values were given"):
        bind_params("%s", (1, 2), ENC)
    with pytest.raises(TypeError, match=r"has 2 %s markers but 1 value was given"):
        bind_params("%s %s", (1,), ENC)


def test_bind_missing_named_key():
    with pytest.raises(KeyError) as info:
        bind_params("a = %(a)s AND b = %(b)s", {"a": 1}, ENC)
    assert info.value.args == ("b",)
    assert "b" in str(info.value)
    assert any("%(b)s" in note for note in info.value.__notes__)


def test_bind_marker_style_mismatch():
    with pytest.raises(TypeError, match="format requires a mapping"):
        bind_params("a = %(a)s", (1,), ENC)
    with pytest.raises(TypeError, match="format requires a sequence"):
        bind_params("a = %s", {"a": 1}, ENC)
    with pytest.raises(TypeError, match="format requires a sequence"):
        bind_params("a = %(a)s, b = %s", {"a": 1}, ENC)


@pytest.mark.parametrize("params", ["x", b"x", bytearray(b"x"), 5, None])
def test_bind_rejects_non_sequence_params(params):
    with pytest.raises(TypeError, match="sequence or a mapping"):
        bind_params("a = %s", params, ENC)


@pytest.mark.parametrize(
    "query",
    [
        "a = %d",
        "a LIKE 'x%' AND b = %s",
        "a = %",
        "a = %(k",
        "a = %(k)d",
        "a = %(k)",
        "%r",
    ],
)
def test_bind_malformed_markers(query):
    with pytest.raises(ValueError):
        bind_params(query, (1,), ENC)
    with pytest.raises(ValueError):
        bind_params(query, {"k": 1}, ENC)


def test_bind_uses_given_encoder():
    class Upper:
        def cql_encode_all_types(self, val, as_text_type=False):
            return str(val).upper()

    assert bind_params("%s-%s", ("a", "b"), Upper()) == "A-B"
    assert bind_params("%(x)s", {"x": "q"}, Upper()) == "Q"


def test_bind_query_cache_does_not_leak_between_calls():
    q = "SELECT %s, %(x)s"
    for _ in range(3):
        with pytest.raises(TypeError):
            bind_params(q, (1,), ENC)
    q = "SELECT %s, %s"
    assert bind_params(q, (1, 2), ENC) == "SELECT 1, 2"
    assert bind_params(q, (3, 4), ENC) == "SELECT 3, 4"


# ------------------------------------------- cross-check: classic driver


def _classic():
    mod = pytest.importorskip("cassandra.encoder", exc_type=ImportError)
    return mod


def _as_classic(val):
    """Swap our ValueSequence for the classic driver's (recursively)."""
    if isinstance(val, ValueSequence):
        return _classic().ValueSequence(_as_classic(v) for v in val)
    if type(val) in (list, tuple):
        return type(val)(_as_classic(v) for v in val)
    if type(val) is dict:
        return {k: _as_classic(v) for k, v in val.items()}
    return val


COMPARABLE_VALUES = [
    None,
    "",
    "a",
    "it's",
    "''",
    "ü日本🎉",
    "x'); DROP TABLE t; --",
    b"",
    b"\x00\xff",
    bytearray(b"ab"),
    memoryview(b"cd"),
    0,
    1,
    -5,
    2**63 - 1,
    -(2**63),
    2**100,
    0.0,
    -0.0,
    1.5,
    -2.25,
    0.1,
    1e20,
    1e-7,
    1 / 3,
    1.7976931348623157e308,
    5e-324,
    float("nan"),
    float("inf"),
    float("-inf"),
    uuid.UUID(int=1),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    datetime.datetime(1970, 1, 1),
    datetime.datetime(2020, 1, 2, 3, 4, 5, 678901),
    datetime.datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=PLUS2),
    datetime.datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=MINUS5_30),
    datetime.datetime(2038, 1, 19, 3, 14, 7, 999000, tzinfo=UTC),
    datetime.datetime(1960, 1, 1),
    datetime.datetime(1969, 12, 31, 23, 59, 59),
    datetime.datetime(1900, 6, 15, 12, 30, 45, 123000),
    datetime.date(2020, 1, 2),
    datetime.date(1970, 1, 1),
    datetime.date(9999, 12, 31),
    datetime.time(0, 0),
    datetime.time(1, 2, 3),
    datetime.time(1, 2, 3, 4),
    datetime.time(23, 59, 59, 999999),
    ipaddress.ip_address("10.0.0.1"),
    ipaddress.ip_address("2001:db8::1"),
    [],
    [1, "a", None],
    set(),
    {1},
    frozenset(["x"]),
    {},
    {"a": 1, "b'": [2]},
    collections.OrderedDict([("z", 1), ("a", 2)]),
    (),
    (1, "a"),
    ValueSequence([1, "a'b", None]),
    ValueSequence(),
    [[1, [2]], {"x": {1}}, (3, [4.5, float("nan")])],
    {"k": [{1, 2}, {"x": [b"\x01", None]}], 7: frozenset([datetime.date(2020, 1, 2)])},
    [uuid.UUID(int=5), datetime.datetime(2001, 1, 1), ipaddress.ip_address("1.2.3.4")],
    [ValueSequence([1]), {"k": ValueSequence(["a", (2,)])}],
    datetime.timedelta(days=1, seconds=5),
]


@pytest.mark.parametrize("val", COMPARABLE_VALUES, ids=lambda v: type(v).__name__)
def test_cross_check_with_classic_encoder(val):
    classic = _classic().Encoder()
    assert enc(val) == classic.cql_encode_all_types(_as_classic(val))


def test_cross_check_generators_with_classic_encoder():
    classic = _classic().Encoder()
    assert enc(x * 2 for x in range(3)) == classic.cql_encode_all_types(x * 2 for x in range(3))


def test_cross_check_named_methods_with_classic_encoder():
    classic = _classic().Encoder()
    for val in ((1, "a", None), [1, [2, "x"]], ()):
        assert ENC.cql_encode_tuple(val) == classic.cql_encode_tuple(val)
        assert ENC.cql_encode_sequence(val) == classic.cql_encode_sequence(val)
        assert ENC.cql_encode_list_collection(val) == classic.cql_encode_list_collection(val)
        assert ENC.cql_encode_set_collection(val) == classic.cql_encode_set_collection(val)
    for val in ("a", "it's", ""):
        assert ENC.cql_encode_str(val) == classic.cql_encode_str(val)
        assert cql_quote(val) == _classic().cql_quote(val)
    for val in (1, None, 2.5):
        assert cql_quote(val) == _classic().cql_quote(val)


def test_cross_check_tuple_override_with_classic_encoder():
    classic = _classic().Encoder()
    classic.mapping[tuple] = classic.cql_encode_tuple
    ours = Encoder()
    ours.mapping[tuple] = ours.cql_encode_tuple
    for val in [(1, "a"), (None, (2, 3)), ()]:
        assert ours.cql_encode_all_types(val) == classic.cql_encode_all_types(val)


def test_cross_check_classic_util_types():
    _classic()
    util = pytest.importorskip("cassandra.util", exc_type=ImportError)
    classic = _classic().Encoder()
    for val in (
        util.Duration(1, 2, 3),
        util.Duration(-1, -2, -3),
        util.Time(3723000000004),
        util.Date(5),
        util.Date(-100),
        util.SortedSet([2, 1]),
        util.OrderedMap([(1, 2), ("a", [3])]),
        [util.SortedSet(["b", "a"])],
    ):
        assert enc(val) == classic.cql_encode_all_types(val), val


# Documented, deliberate differences from the classic driver.


def test_differences_from_classic_encoder():
    classic = _classic().Encoder()
    # bool: classic gives 'True'/'False' (str of the bool); both are valid CQL.
    for val in (True, False):
        assert enc(val).lower() == classic.cql_encode_all_types(val).lower()
        assert enc(val) == str(val).lower()
    # Decimal: classic goes through float and loses precision/scale.
    for text in ("1.10", "0.1000000000000000000001", "-3", "1E+3", "NaN", "Infinity"):
        d = Decimal(text)
        ours, theirs = enc(d), classic.cql_encode_all_types(d)
        assert Decimal(ours).compare_total(d) == 0 or (d.is_nan() and ours == "NaN")
        if not d.is_nan():
            assert float(ours) == float(theirs)

    # A str subclass is quoted (classic uses str() of it, unquoted).
    class S(str):
        pass

    assert enc(S("x")) == "'x'" and classic.cql_encode_all_types(S("x")) == "x"
    # Pre-epoch sub-millisecond times are floored (classic truncates toward 0).
    dt = datetime.datetime(1969, 12, 31, 23, 59, 59, 999500)
    assert enc(dt) == "-1" and classic.cql_encode_all_types(dt) == "0"
    # cql_encode_unicode returns a quoted str (classic quotes a bytes repr).
    assert ENC.cql_encode_unicode("a") == "'a'"


BIND_CASES = [
    ("INSERT INTO t (a, b) VALUES (%s, %s)", (1, "x")),
    ("INSERT INTO t (a, b) VALUES (%s, %s)", [None, [1, {"a": b"\x01"}]]),
    ("SELECT * FROM t WHERE k = %(k)s AND v = %(v)s", {"k": "v'", "v": 1.5}),
    ("SELECT * FROM t WHERE k IN %s", (ValueSequence([1, 2, 3]),)),
    ("SELECT '%%' FROM t WHERE k = %s", (uuid.UUID(int=3),)),
    ("SELECT '%%(x)s' FROM t WHERE k = %(k)s AND j = %(k)s", {"k": datetime.date(2020, 1, 1)}),
    ("SELECT 1", ()),
    ("SELECT 100%%", ()),
]


@pytest.mark.parametrize("query, params", BIND_CASES)
def test_cross_check_bind_params_with_classic(query, params):
    _classic()
    classic_query = pytest.importorskip("cassandra.query", exc_type=ImportError)
    classic = _classic().Encoder()
    expected = classic_query.bind_params(query, _as_classic(params), classic)
    assert bind_params(query, params, ENC) == expected


@pytest.mark.parametrize(
    "query, params, exc",
    [
        ("a %s %s", (1,), TypeError),
        ("a %s", (1, 2), TypeError),
        ("a %(k)s", {"j": 1}, KeyError),
        ("a %(k)s", (1,), TypeError),
        ("a %d", ("x",), (TypeError, ValueError)),
        ("a %", (1,), ValueError),
    ],
)
def test_cross_check_bind_errors_with_classic(query, params, exc):
    _classic()
    classic_query = pytest.importorskip("cassandra.query", exc_type=ImportError)
    classic = _classic().Encoder()
    with pytest.raises(exc):
        classic_query.bind_params(query, params, classic)
    with pytest.raises(exc):
        bind_params(query, params, ENC)
