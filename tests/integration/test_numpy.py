"""numpy against the real server: vectors bound from arrays, execute_concurrent_with_args
with a 2-D array or a dict of columns, and pages returned as numpy columns
(``numpy_factory``)."""

import array
import uuid

import pytest

np = pytest.importorskip("numpy")

from turbocql.concurrent import execute_concurrent_with_args  # noqa: E402
from turbocql.query import numpy_factory  # noqa: E402


@pytest.fixture
def vtable(session):
    """Makes tables (k int PRIMARY KEY, v <type>) with fresh names, dropped at the end."""
    names = []

    def make(cql_type, extra=""):
        name = "np_" + uuid.uuid4().hex[:12]
        session.execute("CREATE TABLE %s (k int PRIMARY KEY, v %s%s)" % (name, cql_type, extra))
        names.append(name)
        return name

    yield make
    for name in names:
        session.execute("DROP TABLE IF EXISTS %s" % name)


def read_back(session, table):
    return {r.k: r.v for r in session.execute("SELECT k, v FROM %s" % table)}


def count(session, table):
    return session.execute("SELECT count(*) FROM %s" % table).one()[0]


@pytest.mark.parametrize(
    "cql_type, value, expected",
    [
        ("vector<float, 4>", np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32), [1.5, -2.0, 0.25, 3.0]),
        ("vector<double, 3>", np.array([1e300, -1e-300, 0.1], dtype=np.float64), [1e300, -1e-300, 0.1]),
        ("vector<double, 2>", np.array([0.5, -0.25], dtype=np.float32), [0.5, -0.25]),
        ("vector<float, 2>", np.array([0.5, 0.1], dtype=np.float64), [0.5, float(np.float32(0.1))]),
        ("vector<float, 3>", np.array([1.0, 2.0, 3.0], dtype=">f4"), [1.0, 2.0, 3.0]),
        ("vector<float, 3>", np.arange(6, dtype=np.float32)[::2], [0.0, 2.0, 4.0]),
        ("vector<float, 2>", array.array("f", [7.0, 8.5]), [7.0, 8.5]),
        ("vector<int, 3>", np.array([1, -2, 2**31 - 1], dtype=np.int32), [1, -2, 2**31 - 1]),
        ("vector<bigint, 2>", np.array([2**62, -1], dtype=np.int64), [2**62, -1]),
        ("vector<int, 2>", np.array([5, 6], dtype=np.int64), [5, 6]),
    ],
)
def test_1d_array_binds_a_vector(session, vtable, cql_type, value, expected):
    t = vtable(cql_type)
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    session.execute(insert, (1, value))
    session.execute(insert.bind({"k": 2, "v": value}))
    got = read_back(session, t)
    assert got == {1: expected, 2: expected}


@pytest.mark.parametrize(
    "cql_type, value, exc, words",
    [
        ("vector<float, 4>", np.zeros(3, dtype=np.float32), ValueError, ["3 elements", "4"]),
        ("vector<float, 4>", np.zeros(5, dtype=np.float64), ValueError, ["5 elements", "4"]),
        ("vector<float, 4>", np.zeros(4, dtype=np.int64), TypeError, ["int64", "float32 or float64"]),
        ("vector<float, 4>", np.zeros((2, 4), dtype=np.float32), ValueError, ["1-D", "(2, 4)"]),
        ("vector<float, 2>", np.array([1e300, 0.0]), ValueError, ["element 0", "out of range"]),
        ("vector<int, 2>", np.zeros(2, dtype=np.float32), TypeError, ["float32", "integers"]),
        ("vector<int, 2>", np.array([2**40, 0], dtype=np.int64), ValueError, ["element 0", "32-bit"]),
    ],
)
def test_bad_arrays_raise_before_anything_is_sent(session, vtable, cql_type, value, exc, words):
    t = vtable(cql_type)
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    with pytest.raises(exc) as info:
        session.execute(insert, (1, value))
    msg = str(info.value)
    for w in ['column "v"', cql_type] + words:
        assert w in msg
    assert count(session, t) == 0


def test_object_array_still_binds_element_by_element(session, vtable):
    t = vtable("vector<text, 2>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    session.execute(insert, (1, np.array(["a", "b"], dtype=object)))
    assert read_back(session, t) == {1: ["a", "b"]}


def matrix(n, dim, seed=4):
    return np.random.default_rng(seed).random((n, dim), dtype=np.float32)


def test_concurrent_dict_of_columns_writes_every_row(session, vtable):
    t = vtable("vector<float, 16>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    m = matrix(500, 16)
    ids = np.arange(500, dtype=np.int32)
    results = execute_concurrent_with_args(session, insert, {"k": ids, "v": m}, concurrency=50)
    assert len(results) == 500 and all(ok for ok, _ in results)
    got = read_back(session, t)
    assert sorted(got) == list(range(500))
    for k, v in got.items():
        assert np.array_equal(np.array(v, dtype=np.float32), m[k])


def test_concurrent_columns_take_any_layout_and_sequences(session, vtable):
    t = vtable("vector<double, 4>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    wide = np.arange(80, dtype=np.float64).reshape(10, 8)
    m = wide[:, ::2]  # rows not contiguous
    f = np.asfortranarray(m[::-1])  # column-major, reversed
    execute_concurrent_with_args(session, insert, {"k": list(range(10)), "v": m})
    execute_concurrent_with_args(session, insert, {"k": range(10, 20), "v": f})
    got = read_back(session, t)
    for i in range(10):
        assert got[i] == m[i].tolist()
        assert got[10 + i] == m[9 - i].tolist()


def test_concurrent_zip_of_ids_and_rows(session, vtable):
    t = vtable("vector<float, 8>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    m = matrix(300, 8, seed=5)
    results = execute_concurrent_with_args(session, insert, zip(range(300), m), concurrency=30)
    assert all(ok for ok, _ in results)
    got = read_back(session, t)
    assert len(got) == 300
    assert all(np.array_equal(np.array(got[k], dtype=np.float32), m[k]) for k in range(300))


def test_concurrent_2d_array_for_a_single_vector_marker(session, vtable):
    """ANN queries: one per row of a matrix (a statement with one vector marker)."""
    t = vtable("vector<float, 4>")
    session.execute("CREATE CUSTOM INDEX ON %s (v) USING 'StorageAttachedIndex'" % t)
    m = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    execute_concurrent_with_args(session, insert, {"k": [0, 1, 2], "v": m})
    query = session.prepare("SELECT k FROM %s ORDER BY v ANN OF ? LIMIT 1" % t)
    results = execute_concurrent_with_args(session, query, m[::-1] * 2)
    assert [r.one().k for ok, r in results] == [2, 1, 0]


@pytest.mark.parametrize(
    "params, exc, words",
    [
        (
            {"k": [0, 1], "v": np.zeros((2, 7), np.float32)},
            ValueError,
            ['column "v"', "vector<float, 8>", "7 elements"],
        ),
        ({"k": [0, 1], "v": np.zeros((2, 8), np.int64)}, TypeError, ['column "v"', "vector<float, 8>", "int64"]),
        ({"k": [0, 1], "v": np.zeros(8, np.float32)}, ValueError, ['column "v"', "2-D"]),
        ({"k": [0, 1, 2], "v": np.zeros((2, 8), np.float32)}, ValueError, ["differ in length", "3", "2"]),
        ({"k": [0, 1], "vec": np.zeros((2, 8), np.float32)}, ValueError, ["'vec'", "not a bind marker"]),
        ({"k": 5, "v": np.zeros((2, 8), np.float32)}, TypeError, ['column "k"', "sequence"]),
        (np.zeros((2, 8), np.float32), TypeError, ["single vector bind marker", "dict of columns"]),
    ],
)
def test_concurrent_bad_columns_raise_before_anything_is_sent(session, vtable, params, exc, words):
    t = vtable("vector<float, 8>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    with pytest.raises(exc) as info:
        execute_concurrent_with_args(session, insert, params)
    for w in words:
        assert w in str(info.value)
    assert count(session, t) == 0


def test_concurrent_bad_value_in_a_column_fails_that_statement(session, vtable):
    t = vtable("vector<int, 2>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    m = np.array([[1, 2], [2**40, 0], [3, 4]], dtype=np.int64)
    results = execute_concurrent_with_args(session, insert, {"k": [0, 1, 2], "v": m}, raise_on_first_error=False)
    assert [ok for ok, _ in results] == [True, False, True]
    assert "32-bit" in str(results[1].result_or_exc) and 'column "v"' in str(results[1].result_or_exc)
    assert read_back(session, t) == {0: [1, 2], 2: [3, 4]}


@pytest.fixture
def ntable(session):
    name = "npr_" + uuid.uuid4().hex[:12]
    session.execute(
        "CREATE TABLE %s (p int, k int, v vector<float, 4>, d double, b boolean, s text, "
        "ts timestamp, PRIMARY KEY (p, k))" % name
    )
    yield name
    session.execute("DROP TABLE IF EXISTS %s" % name)


def fill(session, table, n):
    insert = session.prepare("INSERT INTO %s (p, k, v, d, b, s, ts) VALUES (0, ?, ?, ?, ?, ?, ?)" % table)
    m = matrix(n, 4, seed=7)
    for k in range(n):
        null = k % 5 == 3
        session.execute(
            insert, (k, None if null else m[k], None if null else k / 2, k % 2 == 0, "s%d" % k, 1_700_000_000_000 + k)
        )
    return m


def test_numpy_factory_returns_a_page_as_columns(session, ntable):
    m = fill(session, ntable, 10)
    session.row_factory = numpy_factory
    rs = session.execute("SELECT k, v, d, b, s, ts FROM %s WHERE p = 0" % ntable)
    pages = list(rs)
    assert len(pages) == 1
    cols = pages[0]
    assert list(cols) == ["k", "v", "d", "b", "s", "ts"]
    assert cols["k"].dtype == np.int32 and cols["k"].tolist() == list(range(10))
    v = cols["v"]
    assert isinstance(v, np.ma.MaskedArray) and v.dtype == np.float32 and v.shape == (10, 4)
    nulls = [k for k in range(10) if k % 5 == 3]
    assert [k for k in range(10) if v.mask[k].all()] == nulls
    keep = [k for k in range(10) if k not in nulls]
    assert np.array_equal(v.data[keep], m[keep])
    assert cols["d"].dtype == np.float64 and cols["d"].mask.tolist() == [k in nulls for k in range(10)]
    assert cols["b"].dtype == np.bool_ and cols["b"].tolist() == [k % 2 == 0 for k in range(10)]
    assert cols["s"].dtype == object and cols["s"].tolist() == ["s%d" % k for k in range(10)]
    assert cols["ts"].dtype == np.dtype("datetime64[ms]")
    assert cols["ts"][3] == np.datetime64(1_700_000_000_003, "ms")


def test_numpy_factory_pages_async_and_concurrent(session, ntable):
    fill(session, ntable, 12)
    session.row_factory = numpy_factory
    select = session.prepare("SELECT k, v FROM %s WHERE p = 0" % ntable)
    select.fetch_size = 5
    pages = list(session.execute(select))
    assert [len(p["k"]) for p in pages] == [5, 5, 2]
    assert np.concatenate([p["k"] for p in pages]).tolist() == list(range(12))
    page = session.execute_async("SELECT k FROM %s WHERE p = 0 AND k < 3" % ntable).result().one()
    assert page["k"].tolist() == [0, 1, 2]
    one = session.prepare("SELECT k, v FROM %s WHERE p = 0 AND k = ?" % ntable)
    results = execute_concurrent_with_args(session, one, [(1,), (2,), (99,)])
    assert [r.one()["k"].tolist() if r.current_rows else None for ok, r in results] == [[1], [2], None]


def test_numpy_protocol_handler_as_in_the_classic_driver(session, ntable):
    from turbocql.protocol import NumpyProtocolHandler, ProtocolHandler
    from turbocql.query import tuple_factory

    m = fill(session, ntable, 4)
    session.client_protocol_handler = NumpyProtocolHandler
    session.row_factory = tuple_factory
    [page] = list(session.execute("SELECT k, v FROM %s WHERE p = 0 AND k IN (0, 1)" % ntable))
    assert page["k"].tolist() == [0, 1] and np.array_equal(page["v"], m[:2])
    session.client_protocol_handler = ProtocolHandler
    assert session.execute("SELECT k FROM %s WHERE p = 0 AND k = 1" % ntable).one() == (1,)


def test_numpy_factory_on_the_asyncio_session(session, ntable):
    import asyncio

    from turbocql import aio

    fill(session, ntable, 3)

    async def main():
        s = aio.Session(session)
        s.row_factory = numpy_factory
        rs = await s.execute("SELECT k FROM %s WHERE p = 0" % ntable)
        return rs.one()["k"].tolist()

    assert asyncio.run(main()) == [0, 1, 2]


def test_concurrent_columns_stream_with_results_generator(session, vtable):
    t = vtable("vector<float, 4>")
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    m = matrix(1000, 4, seed=9)
    run = execute_concurrent_with_args(
        session, insert, {"k": np.arange(1000), "v": m}, concurrency=20, results_generator=True
    )
    assert sum(1 for ok, _ in run if ok) == 1000
    got = read_back(session, t)
    assert all(np.array_equal(np.array(got[k], dtype=np.float32), m[k]) for k in range(1000))


def test_concurrent_2d_array_rows_of_numeric_markers(session):
    name = "npm_" + uuid.uuid4().hex[:12]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, a bigint, s smallint)" % name)
    try:
        insert = session.prepare("INSERT INTO %s (k, a, s) VALUES (?, ?, ?)" % name)
        m = np.stack([np.arange(200), np.arange(200) * 2**33, -np.arange(200)], axis=1)
        assert all(ok for ok, _ in execute_concurrent_with_args(session, insert, m))
        rows = {r.k: (r.a, r.s) for r in session.execute("SELECT k, a, s FROM %s" % name)}
        assert rows == {k: (k * 2**33, -k) for k in range(200)}
        with pytest.raises(TypeError) as info:
            execute_concurrent_with_args(session, insert, m.astype(np.float64))
        assert 'column "k"' in str(info.value) and "float64" in str(info.value)
        one = session.prepare("SELECT a FROM %s WHERE k = ?" % name)
        results = execute_concurrent_with_args(session, one, np.array([[3], [4]], dtype=np.int32))
        assert [r.one().a for ok, r in results] == [3 * 2**33, 4 * 2**33]
    finally:
        session.execute("DROP TABLE IF EXISTS %s" % name)
