"""Regressions found by the type round-trip tests: values that used to be refused, or
worse, silently stored as nulls."""

import decimal
import uuid

import pytest

from turbocql.util import Duration


def _name(prefix):
    return prefix + "_" + uuid.uuid4().hex[:10]


def test_decimal_from_an_int_beyond_64_bits(session):
    t = _name("dec")
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, d decimal)" % t)
    ins = session.prepare("INSERT INTO %s (k, d) VALUES (?, ?)" % t)
    session.execute(ins, (1, 2**63))
    session.execute(ins, (2, -(10**40)))
    got = {r.k: r.d for r in session.execute("SELECT k, d FROM %s" % t)}
    assert got == {1: decimal.Decimal(2**63), 2: decimal.Decimal(-(10**40))}
    session.execute("DROP TABLE %s" % t)


@pytest.fixture
def udt_table(session):
    typ, t = _name("addr"), _name("udt")
    session.execute("CREATE TYPE %s (street text, zip int, tags list<text>)" % typ)
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, a frozen<%s>)" % (t, typ))
    yield t, session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % t)
    session.execute("DROP TABLE %s" % t)
    session.execute("DROP TYPE %s" % typ)


def test_udt_from_a_tuple_is_stored_by_position(session, udt_table):
    t, ins = udt_table
    session.execute(ins, (1, ("Main", 1, ["a"])))
    session.execute(ins, (2, ["Side", 2]))  # shorter: the rest is null
    rows = {r.k: r.a for r in session.execute("SELECT k, a FROM %s" % t)}
    assert (rows[1].street, rows[1].zip, rows[1].tags) == ("Main", 1, ["a"])
    assert (rows[2].street, rows[2].zip, rows[2].tags) == ("Side", 2, None)
    session.execute(ins, (3, rows[1]))  # a value read back is written back as it was
    assert session.execute("SELECT a FROM %s WHERE k = 3" % t).one().a == rows[1]


@pytest.mark.parametrize("bad", ["abc", 5, 1.5, b"x", object()])
def test_udt_from_an_unrelated_value_is_refused(session, udt_table, bad):
    t, ins = udt_table
    with pytest.raises(TypeError, match='column "a"'):
        session.execute(ins, (9, bad))
    assert session.execute("SELECT a FROM %s WHERE k = 9" % t).one() is None


def test_udt_dict_with_an_unknown_field_is_refused(session, udt_table):
    t, ins = udt_table
    with pytest.raises(ValueError, match="bogus"):
        session.execute(ins, (9, {"street": "a", "bogus": 1}))
    with pytest.raises(ValueError, match="4 values"):
        session.execute(ins, (9, ("a", 1, [], "extra")))
    assert session.execute("SELECT a FROM %s WHERE k = 9" % t).one() is None


def test_map_with_frozen_map_keys_reads_back_and_writes_back(session):
    t = _name("mapkeys")
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, m map<frozen<map<int, int>>, int>)" % t)
    ins = session.prepare("INSERT INTO %s (k, m) VALUES (?, ?)" % t)
    session.execute(ins, (1, [({1: 2}, 3)]))
    got = session.execute("SELECT m FROM %s WHERE k = 1" % t).one().m
    session.execute(ins, (2, got))
    assert session.execute("SELECT m FROM %s WHERE k = 2" % t).one().m == got
    session.execute("DROP TABLE %s" % t)


def test_mixed_sign_duration_is_refused_client_side(session):
    t = _name("dur")
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, d duration)" % t)
    with pytest.raises(ValueError, match="same sign"):
        session.execute("INSERT INTO " + t + " (k, d) VALUES (%s, %s)", (1, Duration(1, -1, 0)))
    assert session.execute("SELECT d FROM %s WHERE k = 1" % t).one() is None
    session.execute("DROP TABLE %s" % t)
