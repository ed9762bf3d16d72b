"""Unit tests (no server) for the engine's codec helpers (``turbocql._engine.encode`` /
``decode``, used by benchmarks/run_types.py), the numpy buffer path of vectors, and
``numpy_factory`` on rows decoded as tuples."""

import array
import struct

import pytest

import turbocql.cluster  # noqa: F401 - registers the classes the engine makes values of
from turbocql import _engine
from turbocql.query import numpy_factory

np = pytest.importorskip("numpy")


@pytest.mark.parametrize(
    "cql_type, value",
    [
        ("int", 5),
        ("bigint", -(2**40)),
        ("text", "héllo"),
        ("double", 0.1),
        ("boolean", True),
        ("list<int>", [1, 2, 3]),
        ("map<text, int>", {"a": 1}),
        ("tuple<int, text>", (1, "x")),
        ("vector<float, 3>", [1.0, 2.5, -3.0]),
        ("vector<text, 2>", ["a", "bc"]),
        ("varint", 2**100),
    ],
)
def test_encode_decode_round_trip(cql_type, value):
    got = _engine.decode(cql_type, _engine.encode(cql_type, value))
    if cql_type.startswith("map"):
        got = dict(got)
    assert got == value


def test_vector_from_arrays_is_the_same_bytes_as_from_lists():
    want = _engine.encode("vector<float, 3>", [1.0, 2.5, -3.0])
    assert want == struct.pack(">3f", 1.0, 2.5, -3.0)
    for arr in (
        np.array([1.0, 2.5, -3.0], dtype=np.float32),
        np.array([1.0, 2.5, -3.0]),
        np.array([1.0, 2.5, -3.0], dtype=">f4"),
        np.array([1, 9, 2.5, 9, -3], dtype=np.float32)[::2],
        array.array("f", [1.0, 2.5, -3.0]),
        memoryview(array.array("d", [1.0, 2.5, -3.0])),
    ):
        assert _engine.encode("vector<float, 3>", arr) == want
    assert _engine.encode("vector<double, 2>", np.array([0.1, 2.0])) == struct.pack(">2d", 0.1, 2.0)
    assert _engine.encode("vector<smallint, 2>", np.array([-1, 7], dtype=np.int8)) == struct.pack(">2h", -1, 7)


@pytest.mark.parametrize(
    "cql_type, value, exc, words",
    [
        ("vector<float, 3>", np.zeros(2, np.float32), ValueError, ["2 elements", "3"]),
        ("vector<float, 3>", np.zeros(3, np.int64), TypeError, ["int64"]),
        ("vector<tinyint, 1>", np.array([300], np.int32), ValueError, ["300", "8-bit"]),
    ],
)
def test_bad_arrays(cql_type, value, exc, words):
    with pytest.raises(exc) as info:
        _engine.encode(cql_type, value)
    assert cql_type in str(info.value)
    for w in words:
        assert w in str(info.value)


def test_unknown_type_names():
    with pytest.raises(ValueError, match="unknown CQL type"):
        _engine.encode("nope", 1)


def test_time_helpers_return_ns_per_value():
    assert _engine.time_encode("int", [1, 2, 3], 10) > 0
    assert _engine.time_decode("int", [b"\x00\x00\x00\x01"], 10) > 0


def test_numpy_factory_on_tuples_and_on_columns():
    assert numpy_factory(("a", "b"), []) == []
    [cols] = numpy_factory(("a", "b"), [(1, "x"), (2, (3, 4))])
    assert cols["a"].tolist() == [1, 2] and cols["b"][1] == (3, 4)
    page = {"a": np.array([1, 2])}
    assert numpy_factory(("a",), page) == [page]
    assert numpy_factory(("a",), {"a": np.array([])}) == []
