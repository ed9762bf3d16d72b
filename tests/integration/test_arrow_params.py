"""Arrow data as parameters: ``execute_concurrent_with_args(session, prepared, table)`` with a
pyarrow ``Table`` / ``RecordBatch``, a dict of Arrow arrays, or a polars ``DataFrame``,
written from the Arrow buffers in the engine (``codec::from_arrow``). Every CQL type goes
round the trip (read with ``to_arrow()``, written back, the classic driver reading both
tables as the oracle); bad values end their own row with the typed error naming the column."""

import datetime
import decimal
import uuid

import pytest

from tests.integration._tables import classic_rows, empty_copy
from tests.integration.test_arrow import ROWS, typed_table  # noqa: F401 (a fixture)
from turbocql.concurrent import execute_concurrent_with_args
from turbocql.query import arrow_factory, named_tuple_factory

pa = pytest.importorskip("pyarrow")


def _read_arrow(session, table):
    session.row_factory = arrow_factory
    try:
        return session.execute("SELECT * FROM %s" % table).to_arrow()
    finally:
        session.row_factory = named_tuple_factory


def _insert(session, table, names):
    return session.prepare("INSERT INTO %s (%s) VALUES (%s)" % (table, ", ".join(names), ", ".join("?" * len(names))))


def test_every_type_goes_round_the_trip_through_arrow(session, keyspace, typed_table):  # noqa: F811
    table = _read_arrow(session, typed_table)
    copy = empty_copy(session, keyspace, typed_table)
    try:
        results = execute_concurrent_with_args(session, _insert(session, copy, table.schema.names), table)
        assert [r.success for r in results] == [True] * len(ROWS), [r.result_or_exc for r in results]
        original, written = classic_rows(keyspace, typed_table, True), classic_rows(keyspace, copy, True)
        assert len(original) == len(ROWS)
        assert written == original
    finally:
        session.execute("DROP TABLE %s" % copy)


@pytest.fixture
def small_table(session):
    name = "arrow_in_" + uuid.uuid4().hex[:10]
    session.execute(
        "CREATE TABLE %s (k int PRIMARY KEY, b bigint, t text, ts timestamp, u uuid, tu timeuuid, "
        "l list<int>, d decimal, vi varint, ip inet, dt date, tm time, du duration, bl blob, f float)" % name
    )
    yield name
    session.execute("DROP TABLE %s" % name)


def _rows(session, table):
    return {r.k: r for r in session.execute("SELECT * FROM %s" % table)}


def test_values_written_as_text_read_as_the_same_values_written_natively(session, small_table):
    """A string column for any scalar type is read as its CQL text form (what cqlsh and
    ``turbocql unload`` write): the same row as the same values given as Python objects."""
    from turbocql.util import Duration

    tu = uuid.UUID("5d5d2a70-d4a0-11ee-9b6f-0242ac120002")
    native = {
        "k": 1,
        "b": -(2**40),
        "ts": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
        "u": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "tu": tu,
        "d": decimal.Decimal("-12.3400"),
        "vi": 10**30,
        "ip": "2001:db8::1",
        "dt": datetime.date(1969, 7, 20),
        "tm": datetime.time(23, 59, 58, 999999),
        "du": Duration(14, 25, 18_367_008_009_010),
        "bl": b"\x00\xff",
        "f": 1.5,
    }
    text = {
        "k": ["2"],
        "b": ["-1099511627776"],
        "ts": ["2024-01-02 04:04:05.678+0100"],
        "u": ["12345678-1234-5678-1234-567812345678"],
        "tu": [str(tu)],
        "d": ["-12.3400"],
        "vi": [str(10**30)],
        "ip": ["2001:db8::1"],
        "dt": ["1969-07-20"],
        "tm": ["23:59:58.999999"],
        "du": ["1y2mo3w4d5h6m7s8ms9us10ns"],
        "bl": ["0x00ff"],
        "f": ["1.5"],
    }
    session.execute(_insert(session, small_table, list(native)), list(native.values()))
    results = execute_concurrent_with_args(session, _insert(session, small_table, list(text)), pa.table(text))
    assert [r.success for r in results] == [True], results
    rows = _rows(session, small_table)
    assert rows[2]._replace(k=1) == rows[1]


def test_a_bad_value_fails_its_own_row_with_a_typed_error_naming_the_column(session, small_table):
    batch = pa.table(
        {
            "k": pa.array([1, 2, 3, 4, 5, 6, 7], pa.int64()),
            "b": pa.array(["5", "x", "6", "7", "8", "9", "10"]),
            "l": pa.array([[1], [2], [None], [3], [4], [5], [6]], pa.list_(pa.int64())),
            "tu": pa.array(["5d5d2a70-d4a0-11ee-9b6f-0242ac120002"] * 3 + [str(uuid.uuid4())] + [None] * 3),
            "f": pa.array([1.0, 1.0, 1.0, 1.0, 1e300, 1.0, 1.0]),
            "bl": pa.array([None] * 5 + [True, None], pa.bool_()),
        }
    )
    batch = batch.set_column(0, "k", pa.array([1, 2, 3, 4, 5, 6, 2**40], pa.int64()))
    results = execute_concurrent_with_args(
        session, _insert(session, small_table, batch.schema.names), batch, raise_on_first_error=False
    )
    errors = {i: r.result_or_exc for i, r in enumerate(results) if not r.success}
    assert sorted(errors) == [1, 2, 3, 4, 5, 6]
    assert isinstance(errors[1], ValueError) and '"b" of CQL type bigint' in str(errors[1])
    assert "'x' is not a bigint" in str(errors[1]).replace('"', "'")
    assert isinstance(errors[2], ValueError) and "null is not allowed inside a list" in str(errors[2])
    assert isinstance(errors[3], ValueError) and "version 1" in str(errors[3]) and '"tu"' in str(errors[3])
    assert isinstance(errors[4], ValueError) and "out of range for a 32-bit float" in str(errors[4])
    assert isinstance(errors[5], TypeError) and "Arrow type Boolean cannot be written as blob" in str(errors[5])
    assert isinstance(errors[6], ValueError) and "out of range for int" in str(errors[6])
    assert sorted(_rows(session, small_table)) == [1]
    with pytest.raises(ValueError, match='"b" of CQL type bigint'):
        execute_concurrent_with_args(session, _insert(session, small_table, batch.schema.names), batch)


def test_arrow_columns_by_name_and_other_arrow_sources(session, small_table):
    """Columns are matched to the markers by name (a marker without one is unset, an unknown
    one is an error); chunked tables, record batches, dictionary-encoded and view columns,
    a dict of Arrow arrays and a polars DataFrame all work."""
    ins = _insert(session, small_table, ["k", "b", "t"])
    part = pa.table({"t": ["a", "b"], "k": pa.array([1, 2], pa.int32())})
    chunked = pa.concat_tables([part, pa.table({"t": ["c"], "k": pa.array([3], pa.int32())})])
    assert chunked.column("k").num_chunks == 2
    assert all(r.success for r in execute_concurrent_with_args(session, ins, chunked))
    batch = pa.record_batch({"k": pa.array([4, 5], pa.int8()), "t": pa.array(["d", "e"]).dictionary_encode()})
    assert all(r.success for r in execute_concurrent_with_args(session, ins, batch))
    views = pa.table({"k": pa.array([6], pa.uint16()), "t": pa.array(["f"], pa.string_view())})
    assert all(r.success for r in execute_concurrent_with_args(session, ins, views))
    as_dict = {"k": pa.chunked_array([[7], [8]], pa.int32()), "b": pa.array([70, 80], pa.int64())}
    assert all(r.success for r in execute_concurrent_with_args(session, ins, as_dict))
    rows = _rows(session, small_table)
    assert {k: r.t for k, r in rows.items()} == {1: "a", 2: "b", 3: "c", 4: "d", 5: "e", 6: "f", 7: None, 8: None}
    assert rows[8].b == 80 and rows[1].b is None
    with pytest.raises(ValueError, match='Arrow column "nope" is not a bind marker'):
        execute_concurrent_with_args(session, ins, pa.table({"k": [9], "nope": [1]}))
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"k": [9, 10], "t": ["g", "h"], "b": [None, 100]})
    assert all(r.success for r in execute_concurrent_with_args(session, ins, frame))
    rows = _rows(session, small_table)
    assert (rows[9].t, rows[9].b, rows[10].t, rows[10].b) == ("g", None, "h", 100)
