"""turbocql._query.arrow's conversions of Python values (no server): the paths ``to_arrow()`` takes
for results read with another row factory than arrow_factory."""

import decimal

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

from turbocql._query import arrow as _arrow  # noqa: E402


def test_numpy_pages_keep_their_nulls_and_vectors():
    page = {
        "k": np.array([1, 2], dtype=np.int32),
        "v": np.ma.MaskedArray([0.5, 0.0], mask=[False, True]),
        "vec": np.ma.MaskedArray(np.array([[1.0, 2.0], [0.0, 0.0]], dtype=np.float32), mask=[[0, 0], [1, 1]]),
        "o": np.array(["x", None], dtype=object),
    }
    batch = _arrow._columns_batch(["k", "v", "vec", "o"], page)
    assert batch.to_pydict() == {"k": [1, 2], "v": [0.5, None], "vec": [[1.0, 2.0], None], "o": ["x", None]}


def test_rows_of_every_shape():
    names = ["a", "b"]
    assert _arrow.rows_batch(names, [(1, "x"), (2, None)]).to_pydict() == {"a": [1, 2], "b": ["x", None]}
    assert _arrow.rows_batch(names, [{"a": 1, "b": "x"}]).to_pydict() == {"a": [1], "b": ["x"]}


def test_integers_past_64_bits_and_what_nothing_holds():
    big = _arrow._objects_array([10**30, -5, None])
    assert big.type == pa.decimal128(38, 0) and big.to_pylist() == [decimal.Decimal(10**30), -5, None]
    huge = _arrow._objects_array([10**40, None])
    assert huge.type == pa.string() and huge.to_pylist() == [str(10**40), None]


def test_integers_past_pythons_str_limit_are_written_as_text():
    """An int past 10**38 and past sys.int_max_str_digits (4,300 digits) is text in Arrow: str()
    of it raises ValueError in Python 3.11+, Decimal's conversion does not."""
    big = 1 << 20000
    arr = _arrow._objects_array([big, None, 5])
    assert arr.type == pa.string()
    assert arr.to_pylist() == [str(decimal.Decimal(big)), None, "5"]
    assert len(arr[0].as_py()) == 6021
