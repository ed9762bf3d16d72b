"""Faults matrix, row 11 (bad input): the engine's value decoder fuzzed with hypothesis.

``_engine.decode(cql_type, data)`` is the decoder of every cell of a ROWS result
(``src/codec/rows.rs`` ``to_py``, exposed by ``src/codec/standalone.rs``). For every CQL
type, collections, tuples, UDTs and vectors nested in each other:

- random bytes, and valid encodings cut short, extended, with a byte flipped or a 4-byte
  count or length overwritten: the decoder returns a value or raises ValueError, never
  anything else (a pyo3 PanicException is a BaseException: it fails the test);
- valid encodings round-trip: ``decode(encode(v)) == v``, and the bytes of the value decoded
  encode to the same bytes (sets aside: they decode sorted).

A set or map whose element count lies makes the decoder reserve room for that many elements
(``Vec::with_capacity(n)``, up to 16 GiB for 2^31-1 elements) before reading them: fine where
the address space can be promised (overcommit), an abort elsewhere. The fuzz leaves sets and
maps out of the lying inputs on a machine that cannot promise 16 GiB, and the abort itself is
the strict xfail at the end (in a child process with RLIMIT_AS).
"""

import datetime
import decimal
import os
import resource
import socket
import struct
import subprocess
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import turbocql.cluster  # noqa: E402, F401 - registers the classes the engine makes values of
from turbocql import _engine, util  # noqa: E402

# About 12 s in all here; no example database written into the tree.
FUZZ = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ROUND_TRIP = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _can_promise_gib(gib):
    """Whether this process can reserve ``gib`` GiB of address space it does not touch."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft < gib * 2**30 * 2:
        return False
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            mode = int(f.read())
        with open("/proc/meminfo") as f:
            info = {line.split(":")[0]: int(line.split()[1]) for line in f}
    except OSError:
        return False
    if mode == 1:
        return True
    if mode == 2:
        return False
    return (info.get("MemTotal", 0) + info.get("SwapTotal", 0)) * 1024 > (gib + 2) * 2**30


# A lying set/map count reserves 8 bytes per claimed element: up to 16 GiB.
LYING_COUNTS_SAFE = _can_promise_gib(16)


# --------------------------------------------------------------------------
# Types as trees: ("int",), ("list", t), ("set", t), ("map", k, v), ("tuple", [t...]),
# ("udt", [(name, t)...]), ("vector", t, n); a strategy of values for each.

I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)

NATIVE_VALUES = {
    "ascii": st.text(alphabet=st.characters(max_codepoint=127), max_size=20),
    "bigint": I64,
    "blob": st.binary(max_size=20),
    "boolean": st.booleans(),
    "counter": I64,
    "date": st.integers(-(2**31), 2**31 - 1).map(util.Date),
    "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
        lambda d: -(2**31) < d.as_tuple().exponent < 2**31 - 1
    ),
    "double": st.floats(allow_nan=False),
    "duration": st.builds(util.Duration, I32, I32, I64),
    "float": st.floats(width=32, allow_nan=False),
    # As the decoder (and the classic driver, socket.inet_ntop) writes them; IPv4-compatible
    # IPv6 addresses (::a.b.c.d) aside: test_ipv4_compatible_inet_decodes_as_inet_ntop.
    "inet": st.ip_addresses()
    .filter(lambda ip: not (ip.version == 6 and ip.packed[:12] == bytes(12) and int(ip) > 1))
    .map(lambda ip: socket.inet_ntop(socket.AF_INET if ip.version == 4 else socket.AF_INET6, ip.packed)),
    "int": I32,
    "smallint": st.integers(-(2**15), 2**15 - 1),
    "text": st.text(max_size=20),
    "time": st.integers(0, 86_399_999_999_999).map(util.Time),
    "timestamp": st.datetimes(
        min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 12, 31, 23, 59, 59)
    ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    "timeuuid": st.uuids(version=1),
    "tinyint": st.integers(-128, 127),
    "uuid": st.uuids(),
    "varint": st.integers(-(2**200), 2**200),
}
NATIVES = sorted(NATIVE_VALUES)
# Set elements and map keys: hashable natives.
KEYS = [n for n in NATIVES if n not in ("duration",)]


def _natives():
    return st.sampled_from(NATIVES).map(lambda n: (n,))


def _types(with_sets=True):
    def extend(inner):
        keys = st.sampled_from(KEYS).map(lambda n: (n,))
        options = [
            inner.map(lambda t: ("list", t)),
            st.lists(inner, min_size=1, max_size=3).map(lambda ts: ("tuple", ts)),
            st.lists(inner, min_size=1, max_size=3).map(lambda ts: ("udt", [("f%d" % i, t) for i, t in enumerate(ts)])),
            st.tuples(st.one_of(_natives(), inner.filter(lambda t: t[0] == "list")), st.integers(1, 4)).map(
                lambda p: ("vector", p[0], p[1])
            ),
        ]
        if with_sets:
            options += [keys.map(lambda k: ("set", k)), st.tuples(keys, inner).map(lambda p: ("map", p[0], p[1]))]
        return st.one_of(*options)

    return st.recursive(_natives(), extend, max_leaves=6)


def name(t):
    """The CQL type name of a tree (collections inside collections frozen, as CQL writes them)."""
    kind = t[0]
    if kind == "list":
        return "list<%s>" % _frozen(t[1])
    if kind == "set":
        return "set<%s>" % _frozen(t[1])
    if kind == "map":
        return "map<%s, %s>" % (_frozen(t[1]), _frozen(t[2]))
    if kind == "tuple":
        return "tuple<%s>" % ", ".join(_frozen(x) for x in t[1])
    if kind == "udt":
        return "udt<ks.u, %s>" % ", ".join("%s %s" % (f, _frozen(x)) for f, x in t[1])
    if kind == "vector":
        return "vector<%s, %d>" % (_frozen(t[1]), t[2])
    return kind


def _frozen(t):
    return "frozen<%s>" % name(t) if t[0] in ("list", "set", "map", "udt") else name(t)


def values(t):
    """A strategy of Python values of the type tree ``t`` (what encode takes, decode gives)."""
    kind = t[0]
    if kind == "list":
        return st.lists(values(t[1]), max_size=4)
    if kind == "set":
        return st.sets(values(t[1]), max_size=4)
    if kind == "map":
        return st.dictionaries(values(t[1]), values(t[2]), max_size=4)
    if kind == "tuple":
        return st.tuples(*[st.one_of(st.none(), values(x)) for x in t[1]])
    if kind == "udt":
        return st.tuples(*[st.one_of(st.none(), values(x)) for _f, x in t[1]])
    if kind == "vector":
        return st.lists(values(t[1]), min_size=t[2], max_size=t[2])
    return NATIVE_VALUES[kind]


def decode_or_value_error(cql_type, data):
    """Decodes; ValueError is the one documented failure. Anything else (a PanicException,
    a TypeError, an OverflowError) propagates and fails the test."""
    try:
        return _engine.decode(cql_type, bytes(data))
    except ValueError:
        return None


# --------------------------------------------------------------------------
# Bad input


@FUZZ
@given(t=_types(with_sets=LYING_COUNTS_SAFE), data=st.binary(max_size=48))
def test_random_bytes_decode_or_raise_value_error(t, data):
    decode_or_value_error(name(t), data)


@st.composite
def _mutated(draw, with_sets):
    """A valid encoding of a value of a random type, then damaged."""
    t = draw(_types(with_sets=with_sets))
    data = bytearray(_engine.encode(name(t), draw(values(t))))
    how = draw(st.sampled_from(["truncate", "extend", "flip", "count"]))
    if how == "truncate" and data:
        del data[draw(st.integers(0, len(data) - 1)) :]
    elif how == "extend":
        data += draw(st.binary(min_size=1, max_size=8))
    elif how == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= draw(st.integers(1, 255))
    elif how == "count" and len(data) >= 4:
        # A lying [int] count or length: the first 4 bytes of a collection, or any 4 bytes.
        i = draw(st.integers(0, len(data) - 4))
        lie = draw(
            st.sampled_from([-2, -1, 0x7FFFFFFF, 0x40000000, 1000, len(data)]) | st.integers(-(2**31), 2**31 - 1)
        )
        data[i : i + 4] = struct.pack(">i", lie)
    return t, bytes(data)


@FUZZ
@given(case=_mutated(LYING_COUNTS_SAFE))
def test_damaged_encodings_decode_or_raise_value_error(case):
    t, data = case
    decode_or_value_error(name(t), data)


# --------------------------------------------------------------------------
# Valid input


@st.composite
def _typed_values(draw):
    t = draw(_types())
    return t, draw(values(t))


@ROUND_TRIP
@given(case=_typed_values())
def test_valid_encodings_round_trip(case):
    t, value = case
    cql_type = name(t)
    encoded = _engine.encode(cql_type, value)
    decoded = _engine.decode(cql_type, encoded)
    assert decoded == value
    if "set<" not in cql_type:
        assert _engine.encode(cql_type, decoded) == encoded


@pytest.mark.parametrize(
    "cql_type, value",
    [
        ("varint", 0),
        ("varint", -(2**64)),
        ("decimal", decimal.Decimal("-0.000")),
        ("inet", "::ffff:1.2.3.4"),
        ("inet", "2001:db8::ff00:42:8329"),
        ("timestamp", datetime.datetime(1, 1, 1)),
        ("timestamp", datetime.datetime(9999, 12, 31, 23, 59, 59, 999000)),
        ("date", util.Date(-(2**31))),
        ("time", util.Time(86_399_999_999_999)),
        ("duration", util.Duration(-(2**31), 2**31 - 1, -(2**63))),
        ("vector<frozen<list<int>>, 2>", [[1], []]),
        ("tuple<int, frozen<map<text, frozen<list<int>>>>>", (None, {"a": [1, 2]})),
    ],
)
def test_edges_round_trip(cql_type, value):
    assert _engine.decode(cql_type, _engine.encode(cql_type, value)) == value


@pytest.mark.parametrize(
    "cql_type, data",
    [
        ("timestamp", struct.pack(">q", 2**63 - 1)),  # outside datetime: a ValueError, as classic
        ("time", struct.pack(">q", -1)),  # outside a day
        ("varint", b"\xff" * 40),
        ("duration", b"\xff" * 3),
        ("vector<varint, 2>", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
        ("list<int>", struct.pack(">ii", 1, -1)),  # a null element
    ],
)
def test_edge_bytes_decode_or_raise_value_error(cql_type, data):
    decode_or_value_error(cql_type, data)


def test_ipv4_compatible_inet_decodes_as_inet_ntop():
    packed = socket.inet_pton(socket.AF_INET6, "::1.2.3.4")
    assert _engine.decode("inet", packed) == socket.inet_ntop(socket.AF_INET6, packed)


# --------------------------------------------------------------------------
# A lying count with a capped address space (in a child: it aborts)

_CHILD = """
import resource, struct, sys
import turbocql.cluster
from turbocql import _engine
with open("/proc/self/status") as f:
    vm = [int(l.split()[1]) for l in f if l.startswith("VmSize:")][0] * 1024
limit = vm + 2**30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    _engine.decode(sys.argv[1], struct.pack(">i", 2**31 - 1) + struct.pack(">ii", 4, 7))
except ValueError as exc:
    print("ValueError", exc)
"""


@pytest.mark.parametrize(
    "cql_type",
    [
        "set<int>",
        "map<int, int>",
        "list<int>",
    ],
)
def test_lying_collection_count_does_not_reserve_it(cql_type):
    """A set, map or list claiming 2^31-1 elements, with 1 GiB of address space to spare:
    ValueError (truncated), not an allocation of 16 GiB that aborts the process."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, cql_type],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    assert proc.returncode == 0, proc.stderr.splitlines()[:1]
    assert proc.stdout.startswith("ValueError")


def _short_tuples(n):
    """A list of `n` tuple values that each end after their first field (a null)."""
    return struct.pack(">i", n) + (struct.pack(">i", 4) + struct.pack(">i", -1)) * n


def test_fields_a_value_leaves_out_are_charged_to_the_fill_budget():
    """Each element of a list of 65,535-field tuples (the protocol's most) that ends after its
    first field reads as 65,535 Nones: 600 of them (4.8 KB) would be 315 MB of slots no byte
    stands for, over the page's fill budget
    (src/codec/fill.rs: the frame limit, 256 MiB by default), so the value is refused with a
    ValueError naming the setting; 30 of them are read next, each field None (the budget is
    per decoding: the refused value had used it up)."""
    t = "list<frozen<tuple<%s>>>" % ", ".join(["int"] * 65535)
    with pytest.raises(ValueError, match=r"over the page's budget of 268435456 bytes \(Cluster max_frame_length\)"):
        _engine.decode(t, _short_tuples(600))
    got = _engine.decode(t, _short_tuples(30))
    assert len(got) == 30 and all(len(x) == 65535 and x[0] is None and x[-1] is None for x in got)
    # an element of no byte at all is None, as the classic driver reads it
    assert _engine.decode(t, struct.pack(">ii", 1, 0)) == [None]


def test_text_form_of_a_decimal_is_bounded_by_its_bytes():
    """A decimal of 5 bytes with a scale of 2^31-1 wrote 2 GB of zeros in plain notation (the
    columns fuzz target ran out of memory): from an exponent of -7 on, the text form is
    scientific, as Python's str(Decimal) and Cassandra's BigDecimal.toString() write it, and
    reads back the same (turbocql load)."""
    for scale, unscaled in [(2**31 - 1, 5), (84215045, 123456789), (8, 12), (7, 12), (2, -5), (-2, 15)]:
        raw = struct.pack(">i", scale) + unscaled.to_bytes(8, "big", signed=True)
        text = _engine.decode_text("decimal", raw)
        assert len(text) < 40, text
        want = decimal.Decimal("%dE%d" % (unscaled, -scale))
        assert decimal.Decimal(text) == want
        assert _engine.encode_text("decimal", text) == _engine.encode("decimal", want)


def test_text_form_of_a_varint_is_limited_as_pythons_str():
    """Writing n bytes in decimal takes time in n^2 (a 64 KB varint took 30 s): past 1,786
    bytes (about 4,300 digits, Python's int_max_str_digits) the text form is refused."""
    n = 1786
    v = (1 << (8 * n - 1)) - 1
    raw = v.to_bytes(n, "big", signed=True)
    assert _engine.decode_text("varint", raw) == str(decimal.Decimal(v))
    assert _engine.decode_text("varint", (-v).to_bytes(n, "big", signed=True)) == "-" + str(decimal.Decimal(v))
    with pytest.raises(ValueError, match="limited to 1786 bytes"):
        _engine.decode_text("varint", b"\x7f" + b"\xff" * n)
