"""Arrow results: ``arrow_factory`` pages, ``ResultSet.to_arrow()``, ``to_pandas()``,
``to_polars()``, against the local node, with the classic driver reading the same rows as
the oracle for every value."""

import datetime
import decimal
import gc
import uuid
import weakref

import pytest

from tests.conftest import HOST, PORT
from tests.integration._tables import classic_rows

pa = pytest.importorskip("pyarrow")

from turbocql.query import arrow_factory, named_tuple_factory  # noqa: E402

COLUMNS = {
    "i": "int",
    "bi": "bigint",
    "si": "smallint",
    "ti": "tinyint",
    "f": "float",
    "d": "double",
    "b": "boolean",
    "t": "text",
    "a": "ascii",
    "bl": "blob",
    "ip": "inet",
    "ts": "timestamp",
    "dt": "date",
    "tm": "time",
    "u": "uuid",
    "tu": "timeuuid",
    "du": "duration",
    "dec": "decimal",
    "vi": "varint",
    "li": "list<int>",
    "st": "set<text>",
    "mp": "map<text, int>",
    "vec": "vector<float, 3>",
    "tup": "tuple<int, text>",
    "ud": "frozen<{udt}>",
    "nested": "list<frozen<map<int, text>>>",
}
ROWS = [
    {
        "i": -7,
        "bi": 2**62,
        "si": -300,
        "ti": 5,
        "f": 1.5,
        "d": -2.25,
        "b": True,
        "t": "héllo ✓",
        "a": "plain",
        "bl": b"\x00\x01\xff",
        "ip": "192.168.1.20",
        "ts": datetime.datetime(2024, 2, 29, 12, 30, 45, 123000),
        "dt": datetime.date(1969, 7, 20),
        "tm": datetime.time(23, 59, 58, 999999),
        "u": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "tu": uuid.UUID("5d5d2a70-d4a0-11ee-9b6f-0242ac120002"),
        "dec": decimal.Decimal("-12345.678900"),
        "vi": 10**30,
        "li": [3, 1, 2],
        "st": {"b", "a"},
        "mp": {"x": 1, "y": 2},
        "vec": [0.5, -1.0, 2.0],
        "tup": (4, "four"),
        "nested": [{1: "one"}, {2: "two", 3: "three"}],
    },
    {
        "i": 0,
        "t": "",
        "a": "",
        "bl": b"",
        "ip": "::1",
        "li": [],
        "mp": {},
        "b": False,
        "dec": decimal.Decimal("1E+3"),
        "vi": -5,
        "tup": (None, "x"),
    },
    {},  # every column null but the key
]


@pytest.fixture
def typed_table(session, keyspace):
    suffix = uuid.uuid4().hex[:10]
    udt = "addr_" + suffix
    session.execute("CREATE TYPE %s (street text, zip int)" % udt)
    table = "arrow_" + suffix
    cols = ", ".join("%s %s" % (n, t.format(udt=udt)) for n, t in COLUMNS.items())
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, %s)" % (table, cols))
    ins = session.prepare("INSERT INTO %s (k, du, ud) VALUES (?, ?, ?)" % table)
    for k, row in enumerate(ROWS):
        names = [n for n in row]
        if names:
            stmt = session.prepare(
                "INSERT INTO %s (k, %s) VALUES (?, %s)" % (table, ", ".join(names), ", ".join("?" * len(names)))
            )
            session.execute(stmt, [k] + [row[n] for n in names])
        else:
            session.execute("INSERT INTO %s (k) VALUES (%d)" % (table, k))
    from turbocql.util import Duration

    session.execute(ins, (0, Duration(14, 3, 5_000_000_007), {"street": "Main", "zip": 12345}))
    session.execute(ins, (1, Duration(-1, -2, -3), {"street": None, "zip": 7}))
    yield table
    session.execute("DROP TABLE %s" % table)
    session.execute("DROP TYPE %s" % udt)


def _classic_as_arrow_reads_it(name, v):
    """The classic driver's value as turbocql's Arrow column gives it in to_pylist()."""
    from cassandra import util as cutil

    if v is None:
        return None
    if isinstance(v, cutil.Date):
        return v.date()
    if isinstance(v, cutil.Time):
        return v.nanosecond_time
    if isinstance(v, cutil.Duration):
        return (v.months, v.days, v.nanoseconds)
    if name == "st":
        return list(v)
    if name == "mp":
        return list(v.items())
    if name == "nested":
        return [list(m.items()) for m in v]
    if name == "tup":
        return {str(i): x for i, x in enumerate(v)}
    if name == "ud":
        return {"street": v.street, "zip": v.zip}
    return v


def _arrow_value(name, v):
    if name == "tm" and v is not None:
        return v  # compared as nanoseconds (the column cast to int64)
    if name == "du" and v is not None:
        return (v.months, v.days, v.nanoseconds)
    return v


def test_every_type_reads_as_the_classic_driver_reads_it(session, keyspace, typed_table):
    session.row_factory = arrow_factory
    try:
        rs = session.execute("SELECT * FROM %s" % typed_table)
        table = rs.to_arrow()
    finally:
        session.row_factory = named_tuple_factory
    classic = classic_rows(keyspace, typed_table)
    assert table.num_rows == len(ROWS) == len(classic)
    types = dict(zip(table.schema.names, table.schema.types, strict=True))
    assert types["i"] == pa.int32() and types["bi"] == pa.int64() and types["si"] == pa.int16()
    assert types["ti"] == pa.int8() and types["f"] == pa.float32() and types["d"] == pa.float64()
    assert types["b"] == pa.bool_() and types["t"] == pa.string() and types["bl"] == pa.binary()
    assert types["ts"] == pa.timestamp("ms") and types["dt"] == pa.date32() and types["tm"] == pa.time64("ns")
    assert types["u"] == pa.uuid() and types["du"] == pa.month_day_nano_interval()
    assert types["li"] == pa.list_(pa.int32()) and types["mp"] == pa.map_(pa.string(), pa.int32())
    assert types["vec"] == pa.list_(pa.float32(), 3)
    assert types["ud"] == pa.struct([("street", pa.string()), ("zip", pa.int32())])
    columns = {n: table.column(n) for n in table.schema.names}
    columns["tm"] = columns["tm"].cast(pa.int64())
    keys = columns["k"].to_pylist()
    for name, col in columns.items():
        for k, v in zip(keys, col.to_pylist(), strict=True):
            expected = _classic_as_arrow_reads_it(name, getattr(classic[k], name))
            assert _arrow_value(name, v) == expected, (name, k, v, expected)
    # Null is not empty: an empty string or blob stays empty; a missing value is null.
    by_key = {k: i for i, k in enumerate(keys)}
    assert columns["t"][by_key[1]].as_py() == "" and columns["t"][by_key[2]].as_py() is None
    assert columns["bl"][by_key[1]].as_py() == b"" and columns["bl"][by_key[2]].as_py() is None


def test_pages_become_batches_and_one_table(session):
    session.execute("CREATE TABLE IF NOT EXISTS arrow_pages (p int, c int, v double, PRIMARY KEY (p, c))")
    ins = session.prepare("INSERT INTO arrow_pages (p, c, v) VALUES (0, ?, ?)")
    from turbocql.concurrent import execute_concurrent_with_args

    execute_concurrent_with_args(session, ins, [(c, c / 2) for c in range(1000)])
    session.row_factory = arrow_factory
    try:
        from turbocql.query import SimpleStatement

        stmt = SimpleStatement("SELECT c, v FROM arrow_pages WHERE p = 0", fetch_size=100)
        batches = list(session.execute(stmt))
        assert len(batches) == 10 and all(b.num_rows == 100 for b in batches)
        table = session.execute(stmt).to_arrow()
    finally:
        session.row_factory = named_tuple_factory
    assert table.num_rows == 1000
    assert table.column("c").to_pylist() == list(range(1000))
    assert pa.compute.sum(table.column("v")).as_py() == sum(c / 2 for c in range(1000))


def test_to_pandas_and_to_polars(session):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    session.execute("CREATE TABLE IF NOT EXISTS arrow_df (k int PRIMARY KEY, name text, score double)")
    for k in range(5):
        session.execute("INSERT INTO arrow_df (k, name, score) VALUES (%s, %s, %s)", (k, "n%d" % k, k * 1.5))
    session.row_factory = arrow_factory
    try:
        df = session.execute("SELECT k, name, score FROM arrow_df").to_pandas()
        pf = session.execute("SELECT k, name, score FROM arrow_df").to_polars()
    finally:
        session.row_factory = named_tuple_factory
    assert isinstance(df, pd.DataFrame) and sorted(df["k"]) == list(range(5))
    assert str(df["k"].dtype) == "int32" and str(df["score"].dtype) == "float64"
    assert isinstance(pf, pl.DataFrame) and pf.schema["k"] == pl.Int32 and pf.schema["name"] == pl.String
    assert sorted(pf["score"].to_list()) == [k * 1.5 for k in range(5)]


def test_to_arrow_with_another_row_factory_converts_the_values(session):
    session.execute("CREATE TABLE IF NOT EXISTS arrow_conv (k int PRIMARY KEY, name text)")
    session.execute("INSERT INTO arrow_conv (k, name) VALUES (1, 'one')")
    session.execute("INSERT INTO arrow_conv (k, name) VALUES (2, null)")
    table = session.execute("SELECT k, name FROM arrow_conv").to_arrow()  # named tuples
    assert sorted(zip(table.column("k").to_pylist(), table.column("name").to_pylist(), strict=True)) == [
        (1, "one"),
        (2, None),
    ]


def test_to_arrow_of_numpy_pages(session):
    pytest.importorskip("numpy")
    from turbocql.query import numpy_factory

    session.execute("CREATE TABLE IF NOT EXISTS arrow_np (k int PRIMARY KEY, v double, vec vector<float, 2>)")
    session.execute("INSERT INTO arrow_np (k, v, vec) VALUES (1, 0.5, [1.0, 2.0])")
    session.execute("INSERT INTO arrow_np (k) VALUES (2)")
    session.row_factory = numpy_factory
    try:
        table = session.execute("SELECT k, v, vec FROM arrow_np").to_arrow()
    finally:
        session.row_factory = named_tuple_factory
    rows = sorted(zip(*(table.column(n).to_pylist() for n in ("k", "v", "vec")), strict=True))
    assert rows == [(1, 0.5, [1.0, 2.0]), (2, None, None)]


def test_empty_results_keep_their_columns(session):
    session.execute("CREATE TABLE IF NOT EXISTS arrow_empty (k int PRIMARY KEY, v text)")
    session.row_factory = arrow_factory
    try:
        rs = session.execute("SELECT k, v FROM arrow_empty WHERE k = 12345")
        assert list(rs) == []
        table = session.execute("SELECT k, v FROM arrow_empty WHERE k = 12345").to_arrow()
        write = session.execute("INSERT INTO arrow_empty (k, v) VALUES (1, 'x')").to_arrow()
    finally:
        session.row_factory = named_tuple_factory
    assert table.num_rows == 0 and table.schema.names == ["k", "v"]
    assert table.schema.types == [pa.int32(), pa.string()]
    assert write.num_rows == 0 and write.num_columns == 0


class Sentinel:
    pass


def test_arrow_columns_take_part_in_the_cycle_collector(session, monkeypatch):
    """An ``_engine.ArrowColumn`` holds Python values (an ``objects`` column's): a cycle
    through it is collected (the pattern of tests/integration/test_gc.py)."""
    from turbocql._query import arrow as _arrow

    seen = []
    real = _arrow.record_batch
    monkeypatch.setattr(_arrow, "record_batch", lambda names, cols: seen.extend(cols) or real(names, cols))
    session.execute("CREATE TABLE IF NOT EXISTS arrow_gc (k int PRIMARY KEY, d decimal)")
    session.execute("INSERT INTO arrow_gc (k, d) VALUES (1, 1.5)")
    session.row_factory = arrow_factory
    try:
        session.execute("SELECT k, d FROM arrow_gc")
    finally:
        session.row_factory = named_tuple_factory
    col = next(c for c in seen if c.kind == "objects")
    seen.clear()
    sentinel = Sentinel()
    sentinel.col = col
    col.objects.append(sentinel)  # col -> its list -> sentinel -> col
    ref = weakref.ref(sentinel)
    del sentinel
    gc.collect()
    assert ref() is not None  # reachable through the column
    del col
    gc.collect()
    assert ref() is None


def test_asyncio_results_await_their_pages(keyspace):
    import asyncio

    from turbocql.aio import Cluster as AioCluster
    from turbocql.query import SimpleStatement

    async def main():
        async with AioCluster([HOST], port=PORT) as cluster:
            session = await cluster.connect(keyspace)
            await session.execute("CREATE TABLE IF NOT EXISTS arrow_aio (p int, c int, PRIMARY KEY (p, c))")
            ins = await session.prepare("INSERT INTO arrow_aio (p, c) VALUES (0, ?)")
            await asyncio.gather(*(session.execute(ins, (c,)) for c in range(300)))
            stmt = SimpleStatement("SELECT c FROM arrow_aio WHERE p = 0", fetch_size=70)
            session.row_factory = arrow_factory
            fast = await (await session.execute(stmt)).to_arrow()
            session.row_factory = named_tuple_factory
            converted = await (await session.execute(stmt)).to_pandas()
            return fast, converted

    fast, converted = asyncio.run(main())
    assert fast.column("c").to_pylist() == list(range(300))
    assert list(converted["c"]) == list(range(300))


def test_every_type_writes_to_parquet_and_ipc(session, typed_table, tmp_path):
    """Arrow's writers trust an array's declared type (a map whose entries' fields differed
    from the map type's crashed the Parquet writer): every column but duration (Parquet has
    no month-day-nano interval) is written and read back equal."""
    import pyarrow.parquet as pq

    session.row_factory = arrow_factory
    try:
        table = session.execute("SELECT * FROM %s" % typed_table).to_arrow()
    finally:
        session.row_factory = named_tuple_factory
    table.validate(full=True)
    parquet = table.drop_columns(["du"])
    pq.write_table(parquet, tmp_path / "t.parquet")
    assert pq.read_table(tmp_path / "t.parquet").equals(parquet)
    with pa.OSFile(str(tmp_path / "t.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    assert pa.ipc.open_file(str(tmp_path / "t.arrow")).read_all().equals(table)
