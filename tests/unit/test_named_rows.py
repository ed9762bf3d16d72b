"""Rows made by the engine's named-tuple factory (src/codec/named_rows.rs: one allocation of the
row class, its items set directly) are tuples in every way a tuple is used: equal to and
hashed as the plain tuple of their values, found in sets and dicts of plain tuples and the
reverse. On CPython 3.14 a tuple caches its hash, which a raw allocation would leave as 0
(scripts/python314.sh runs this file there). No server."""

import turbocql.cluster  # noqa: F401  (bootstraps the engine)
from turbocql import _engine


def _rows(values):
    return _engine.named_rows(("k", "v"), values)


def test_a_row_hashes_as_its_plain_tuple():
    (row,) = _rows([(1, "a")])
    assert row == (1, "a") and row.k == 1 and row.v == "a"
    assert hash(row) == hash((1, "a"))
    assert hash(row) == hash(row)  # the cached hash, read again


def test_rows_and_plain_tuples_find_each_other_in_sets_and_dicts():
    rows = _rows([(i, str(i)) for i in range(100)])
    assert {(i, str(i)) for i in range(100)} == set(rows)
    plain = {(i, str(i)): i for i in range(100)}
    assert all(plain[row] == row.k for row in rows)
    assert all(row in set(rows) for row in [(5, "5"), (99, "99")])
    assert len({hash(row) for row in rows}) == 100


def test_a_row_of_plain_values_is_left_out_of_the_cycle_collector():
    """As CPython does for a plain tuple at its first collection (never for a named tuple's
    instance): a row of values the collector does not track is in no cycle, so no collection
    walks it. Whether a type is the collector's is the interpreter's (Py_TPFLAGS_HAVE_GC):
    datetime's and Decimal's may differ from one CPython version to the next."""
    import datetime
    import decimal
    import gc

    (row,) = _engine.named_rows(("a", "b", "c", "d", "e", "f"), [("x", 1, 2.5, b"y", None, True)])
    assert not gc.is_tracked(row)
    have_gc = 1 << 14
    for value in (datetime.datetime(2026, 12, 7), decimal.Decimal("1.5")):
        (row,) = _rows([("x", value)])
        assert gc.is_tracked(row) == bool(type(value).__flags__ & have_gc), value


def test_a_row_holding_a_container_stays_tracked_and_its_cycle_is_collected():
    import gc
    import uuid
    import weakref

    for value in ([1], {"k": 1}, {1}, (1, [2]), uuid.uuid4()):
        (row,) = _rows([(1, value)])
        assert gc.is_tracked(row), value

    class Box:
        pass

    box = Box()
    (row,) = _rows([(1, [box])])
    box.row = row  # a cycle through the row: row -> list -> box -> row
    alive = weakref.ref(box)
    del box, row
    gc.collect()
    assert alive() is None
