"""Bad input and failures: each raises the classic typed exception, with a message that
names the cause, sends nothing it should not, and leaves the session usable."""

import time

import pytest

from tests.integration.conftest import paused
from turbocql import AlreadyExists, InvalidRequest, OperationTimedOut
from turbocql.protocol import SyntaxException
from turbocql.query import UNSET_VALUE


def _usable(session):
    assert session.execute("SELECT key FROM system.local").one().key == "local"


def _count(session, table):
    return session.execute("SELECT count(*) FROM %s" % table).one()[0]


def test_too_many_bind_values(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    with pytest.raises(ValueError, match=r"Too many arguments provided to bind\(\) \(got 4, expected 3\)"):
        session.execute(ins, ("k", "a", "b", "c"))
    with pytest.raises(ValueError, match="Too many"):
        ins.bind(("k", "a", "b", "c"))
    assert _count(session, table) == 0
    _usable(session)


@pytest.mark.parametrize(
    "values",
    [("k1",), {"k": "k1", "a": "x"}, ("k1", UNSET_VALUE, "y")],
    ids=["short-sequence", "dict-without-a-column", "explicit-unset"],
)
def test_values_left_out_are_unset_as_in_the_classic_driver(session, table, keyspace, values):
    """With protocol v4 the classic driver leaves markers without a value unset (the
    column keeps what it had), on `execute(prepared, values)` as on `bind()`."""
    from cassandra.cluster import Cluster as ClassicCluster

    from tests.conftest import HOST, PORT

    session.execute("INSERT INTO %s (k, a, b) VALUES ('k1', 'a0', 'b0')" % table)
    session.execute("INSERT INTO %s (k, a, b) VALUES ('k2', 'a0', 'b0')" % table)
    ins = "INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table
    session.execute(session.prepare(ins), values)
    classic = ClassicCluster([HOST], port=PORT, protocol_version=4)
    cs = classic.connect(keyspace)
    classic_values = dict(values, k="k2") if isinstance(values, dict) else ("k2",) + tuple(values[1:])
    if any(v is UNSET_VALUE for v in classic_values):
        from cassandra.query import UNSET_VALUE as CLASSIC_UNSET

        classic_values = tuple(CLASSIC_UNSET if v is UNSET_VALUE else v for v in classic_values)
    cs.execute(cs.prepare(ins), classic_values)
    classic.shutdown()
    rows = {r.k: (r.a, r.b) for r in session.execute("SELECT k, a, b FROM %s" % table)}
    assert rows["k1"] == rows["k2"]


@pytest.mark.parametrize("values", [(), {"a": "x"}, (UNSET_VALUE, "a", "b")], ids=["none", "dict", "explicit"])
def test_partition_key_left_unset_raises_as_in_the_classic_driver(session, table, values):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    with pytest.raises(ValueError, match="Cannot bind UNSET_VALUE as a part of the routing key 'k'"):
        session.execute(ins, values)
    with pytest.raises(ValueError, match="Cannot bind UNSET_VALUE as a part of the routing key 'k'"):
        ins.bind(values)
    assert _count(session, table) == 0
    _usable(session)


def test_wrong_number_of_percent_s_parameters(session, table):
    with pytest.raises(TypeError, match="2 .*marker|marker.*2|not enough"):
        session.execute("INSERT INTO %s (k, a) VALUES (%%s, %%s)" % table, ("only-one",))
    _usable(session)


def test_wrong_type_names_column_and_cql_type_and_sends_nothing(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    with pytest.raises(TypeError) as info:
        session.execute(ins, ("k", 42, "b"))
    msg = str(info.value)
    assert '"a"' in msg and "text" in msg and "int" in msg
    assert _count(session, table) == 0
    _usable(session)


def test_out_of_range_integer(session):
    session.execute("CREATE TABLE IF NOT EXISTS ints (k int PRIMARY KEY, s smallint, t tinyint, b bigint)")
    ins = session.prepare("INSERT INTO ints (k, s, t, b) VALUES (?, ?, ?, ?)")
    for values, col in [
        ((2**31, 0, 0, 0), "k"),
        ((1, 2**15, 0, 0), "s"),
        ((1, 0, 128, 0), "t"),
        ((1, 0, 0, 2**63), "b"),
    ]:
        with pytest.raises(ValueError, match='column "%s".*out of range' % col):
            session.execute(ins, values)
    with pytest.raises(TypeError, match='column "k"'):
        session.execute(ins, (1.5, 0, 0, 0))


def test_wrong_element_type_inside_a_collection(session):
    session.execute("CREATE TABLE IF NOT EXISTS colls (k int PRIMARY KEY, l list<int>, m map<text, int>)")
    ins = session.prepare("INSERT INTO colls (k, l, m) VALUES (?, ?, ?)")
    with pytest.raises(TypeError, match=r'column "l" of CQL type list<int>.*element.*expected int, got str'):
        session.execute(ins, (1, [1, "two"], {}))
    with pytest.raises(TypeError, match='column "m"'):
        session.execute(ins, (1, [], {"a": "b"}))
    with pytest.raises(ValueError, match="None is not allowed"):
        session.execute(ins, (1, [1, None], {}))


def test_str_for_blob_is_rejected(session):
    session.execute("CREATE TABLE IF NOT EXISTS blobs (k int PRIMARY KEY, v blob)")
    with pytest.raises(TypeError, match='column "v" of CQL type blob.*str'):
        session.execute(session.prepare("INSERT INTO blobs (k, v) VALUES (?, ?)"), (1, "text"))


def test_batch_with_one_bad_value_sends_nothing(session, table):
    from turbocql.query import BatchStatement

    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    batch = BatchStatement()
    batch.add(ins, ("good", "a", "b"))
    batch.add(ins, ("bad", 1, "b"))
    with pytest.raises(TypeError, match="batch statement 1"):
        session.execute(batch)
    assert _count(session, table) == 0


def test_unknown_keyspace_and_table(session):
    with pytest.raises(InvalidRequest, match="nope_ks"):
        session.execute("SELECT * FROM nope_ks.t")
    with pytest.raises(InvalidRequest, match="nope_table"):
        session.execute("SELECT * FROM nope_table")
    with pytest.raises(InvalidRequest, match="nope_table"):
        session.prepare("SELECT * FROM nope_table WHERE k = ?")
    _usable(session)


def test_syntax_error(session):
    with pytest.raises(SyntaxException, match="code=2000"):
        session.execute("SELEC * FROM system.local")
    with pytest.raises(SyntaxException):
        session.prepare("INSERT INTO")
    _usable(session)


def test_already_exists_has_keyspace_and_table(session, keyspace, table):
    with pytest.raises(AlreadyExists) as info:
        session.execute("CREATE TABLE %s (k int PRIMARY KEY)" % table)
    assert info.value.keyspace == keyspace and info.value.table == table
    with pytest.raises(AlreadyExists) as info:
        session.execute(
            "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace
        )
    # The frame's empty table name, kept as the classic driver keeps it ('').
    assert info.value.keyspace == keyspace and info.value.table == ""


def test_request_timeout_is_operation_timed_out(cassandra, session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    with paused(cassandra):
        t0 = time.monotonic()
        with pytest.raises(OperationTimedOut) as info:
            session.execute(ins, ("t", "a", "b"), timeout=0.5)
        elapsed = time.monotonic() - t0
    assert 0.4 < elapsed < 2.0, elapsed
    assert "timeout" in str(info.value).lower()
    _usable(session)


def test_default_timeout_applies(cassandra, session):
    session.default_timeout = 0.3
    with paused(cassandra):
        with pytest.raises(OperationTimedOut):
            session.execute("SELECT key FROM system.local")
    session.default_timeout = 10.0
    _usable(session)


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_invalid_timeout_value(session, bad):
    with pytest.raises(ValueError, match="timeout"):
        session.execute("SELECT key FROM system.local", timeout=bad)
