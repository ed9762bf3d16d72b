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
