"""Statements, parameters, row factories, ResultSet, batches, LWT, consistency."""

import threading

import pytest

from turbocql import ConsistencyLevel, UnsupportedOperation
from turbocql.query import (
    UNSET_VALUE,
    BatchStatement,
    BatchType,
    BoundStatement,
    PreparedStatement,
    SimpleStatement,
    dict_factory,
    named_tuple_factory,
    ordered_dict_factory,
    tuple_factory,
)

# These tests use the session-level defaults, which still work (legacy mode) and warn as
# classic; the warning itself is checked in test_default_consistency_level_warns_as_classic.
pytestmark = pytest.mark.filterwarnings("ignore:Setting the consistency level at the session level:DeprecationWarning")


def test_simple_positional_and_named_parameters(session, table):
    session.execute("INSERT INTO %s (k, a, b) VALUES (%%s, %%s, %%s)" % table, ("k1", "it's", "x"))
    session.execute(
        "INSERT INTO %s (k, a, b) VALUES (%%(k)s, %%(a)s, %%(b)s)" % table, {"k": "k2", "a": "ü", "b": None}
    )
    stmt = SimpleStatement("SELECT a, b FROM %s WHERE k = %%s" % table, consistency_level=ConsistencyLevel.ONE)
    assert tuple(session.execute(stmt, ["k1"]).one()) == ("it's", "x")
    assert tuple(session.execute(stmt, ["k2"]).one()) == ("ü", None)


def test_prepared_positional_named_and_bound(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    assert isinstance(ins, PreparedStatement)
    assert [c.name for c in ins.column_metadata] == ["k", "a", "b"]
    # cqltypes classes, as the classic driver's metadata holds them.
    from cassandra.cluster import Cluster as ClassicCluster

    from tests.conftest import HOST, PORT

    classic = ClassicCluster([HOST], port=PORT, protocol_version=4)
    cins = classic.connect(session.keyspace).prepare(ins.query_string)
    classic.shutdown()
    assert [c.type.cql_parameterized_type() for c in ins.column_metadata] == [
        c.type.cql_parameterized_type() for c in cins.column_metadata
    ]
    assert [c.type.typename for c in ins.column_metadata] == ["varchar"] * 3
    assert ins.routing_key_indexes == [0]
    session.execute(ins, ("p1", "a1", "b1"))
    session.execute(ins, {"k": "p2", "a": "a2", "b": "b2"})
    bound = ins.bind(["p3", "a3", "b3"])
    assert isinstance(bound, BoundStatement)
    session.execute(bound)
    named = session.prepare("INSERT INTO %s (k, a, b) VALUES (:key, :aa, :bb)" % table)
    session.execute(named, {"key": "p4", "aa": "a4", "bb": "b4"})
    sel = session.prepare("SELECT k, a, b FROM %s WHERE k = ?" % table)
    assert [c.name for c in sel.result_metadata] == ["k", "a", "b"]
    for i in range(1, 5):
        assert tuple(session.execute(sel, ["p%d" % i]).one()) == ("p%d" % i, "a%d" % i, "b%d" % i)


def test_unset_value_and_missing_dict_key_leave_column_untouched(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    session.execute(ins, ("u", "a0", "b0"))
    session.execute(ins, ("u", UNSET_VALUE, "b1"))
    session.execute(ins, {"k": "u", "b": "b2"})
    assert tuple(session.execute("SELECT a, b FROM %s WHERE k = 'u'" % table).one()) == ("a0", "b2")
    session.execute(ins, ("u", None, "b3"))
    assert session.execute("SELECT a FROM %s WHERE k = 'u'" % table).one().a is None


@pytest.mark.parametrize(
    "factory,expected",
    [
        (named_tuple_factory, None),
        (dict_factory, {"k": "r", "a": "x", "b": "y"}),
        (ordered_dict_factory, {"k": "r", "a": "x", "b": "y"}),
        (tuple_factory, ("r", "x", "y")),
    ],
)
def test_row_factories(session, table, factory, expected):
    session.execute("INSERT INTO %s (k, a, b) VALUES ('r', 'x', 'y')" % table)
    session.row_factory = factory
    row = session.execute("SELECT k, a, b FROM %s" % table).one()
    if factory is named_tuple_factory:
        assert (row.k, row.a, row.b) == ("r", "x", "y")
        assert row._fields == ("k", "a", "b")
    else:
        assert row == expected
        assert type(row) is type(factory(["k"], [("r",)])[0])


def test_named_tuple_with_unusual_column_names(session, table):
    session.execute("INSERT INTO %s (k, a, b) VALUES ('r', 'x', 'y')" % table)
    row = session.execute('SELECT count(*), k AS "Weird Name" FROM %s' % table).one()
    assert row[0] == 1 and row[1] == "r"


def test_result_set_api(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    for i in range(5):
        session.execute(ins, ("k%d" % i, str(i), None))
    rs = session.execute("SELECT k, a FROM %s" % table)
    assert rs.column_names == ["k", "a"]  # a list, as in the classic driver
    # cqltypes classes, as in the classic driver.
    from turbocql.cqltypes import VarcharType

    assert rs.column_types == [VarcharType, VarcharType]
    assert len(rs.current_rows) == 5
    assert not rs.has_more_pages
    assert sorted(r.a for r in rs) == ["0", "1", "2", "3", "4"]
    rs2 = session.execute("SELECT k FROM %s" % table)
    assert rs2.one() is not None
    assert len(rs2.all()) == 5
    # As classic: an iterated result holds no rows any more.
    assert rs2.one() is None and rs2.current_rows == [] and not rs2 and list(rs2) == []
    empty = session.execute("SELECT k FROM %s WHERE k = 'none'" % table)
    assert empty.one() is None and empty.all() == [] and not empty
    write = session.execute(ins, ("k9", "9", None))
    assert write.current_rows == [] and write.one() is None


def test_paging_by_iteration_and_fetch_size(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    for i in range(25):
        session.execute(ins, ("k%02d" % i, str(i), None))
    stmt = SimpleStatement("SELECT k FROM %s" % table, fetch_size=10)
    rs = session.execute(stmt)
    assert len(rs.current_rows) == 10 and rs.has_more_pages
    assert sorted(r.k for r in rs) == ["k%02d" % i for i in range(25)]
    # Resume from a paging state.
    first = session.execute(stmt)
    resumed = session.execute(stmt, paging_state=first.paging_state)
    assert {r.k for r in first.current_rows}.isdisjoint({r.k for r in resumed.current_rows})
    # fetch_size=None means unpaged.
    unpaged = session.execute(SimpleStatement("SELECT k FROM %s" % table, fetch_size=None))
    assert len(unpaged.current_rows) == 25 and not unpaged.has_more_pages


def test_lwt_was_applied(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?) IF NOT EXISTS" % table)
    assert session.execute(ins, ("lwt", "first")).was_applied is True
    again = session.execute(ins, ("lwt", "second"))
    assert again.was_applied is False
    assert again.one().a == "first"
    upd = session.execute("UPDATE %s SET a = 'third' WHERE k = 'lwt' IF a = 'first'" % table)
    assert upd.was_applied is True


def test_batches_logged_unlogged(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    for bt in (BatchType.LOGGED, BatchType.UNLOGGED):
        batch = BatchStatement(batch_type=bt)
        batch.add(ins, ("b1-%s" % bt, "x", "y"))
        batch.add(ins.bind(("b2-%s" % bt, "x", "y")))
        batch.add("INSERT INTO %s (k, a) VALUES (%%s, %%s)" % table, ("b3-%s" % bt, "z"))
        batch.add(SimpleStatement("INSERT INTO %s (k, a) VALUES ('b4-%s', 'w')" % (table, bt)))
        assert len(batch) == 4
        session.execute(batch)
    keys = sorted(r.k for r in session.execute("SELECT k FROM %s" % table))
    assert len(keys) == 8


def test_counter_batch(session):
    session.execute("CREATE TABLE IF NOT EXISTS counters (k text PRIMARY KEY, c counter)")
    session.execute("TRUNCATE counters")
    upd = session.prepare("UPDATE counters SET c = c + ? WHERE k = ?")
    batch = BatchStatement(BatchType.COUNTER)
    batch.add(upd, (5, "x"))
    batch.add(upd, (-2, "x"))
    session.execute(batch)
    assert session.execute("SELECT c FROM counters WHERE k = 'x'").one().c == 3


def test_lwt_in_batch(session, table):
    batch = BatchStatement()
    batch.add("INSERT INTO %s (k, a) VALUES ('bl', 'x') IF NOT EXISTS" % table)
    assert session.execute(batch).was_applied is True


def test_consistency_level_reaches_the_server(session, table):
    # One node with RF 1: THREE cannot be met, and the server says so.
    from tests.integration.conftest import unavailable_on_one_node

    stmt = SimpleStatement("INSERT INTO %s (k, a) VALUES ('c', 'x')" % table, consistency_level=ConsistencyLevel.THREE)
    with unavailable_on_one_node(ConsistencyLevel.THREE) as got:
        session.execute(stmt)
    assert (got[0].required_replicas, got[0].alive_replicas) == (3, 1)
    prepared = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    prepared.consistency_level = ConsistencyLevel.ALL
    assert session.execute(prepared, ["c"]).one() is None  # ALL = 1 replica: fine
    session.default_consistency_level = ConsistencyLevel.TWO
    with unavailable_on_one_node(ConsistencyLevel.TWO):
        session.execute("SELECT a FROM %s WHERE k = 'c'" % table)


def test_trace(session, table):
    rs = session.execute("SELECT * FROM %s" % table, trace=True)
    trace = rs.get_query_trace(max_wait_sec=10)
    assert trace is not None and trace.request_type
    assert trace.duration is not None


def test_prepared_statement_options_with_execute_and_execute_async(cassandra, session, table):
    """A PreparedStatement's request is built by the engine (Session._prepared_request) for
    execute and execute_async: the statement's options, else the session's, read at each
    call; an omitted timeout is the session's, ``timeout=None`` none at all."""
    from tests.integration.conftest import paused, unavailable_on_one_node
    from turbocql import OperationTimedOut

    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    for i in range(6):
        session.execute_async(ins, ("o%d" % i, "x")).result()
    sel = session.prepare("SELECT k FROM %s WHERE k IN ?" % table)
    keys = ["o%d" % i for i in range(6)]
    for run in (lambda: session.execute(sel, [keys]), lambda: session.execute_async(sel, [keys]).result()):
        sel.consistency_level = ConsistencyLevel.THREE
        with unavailable_on_one_node(ConsistencyLevel.THREE):
            run()
        sel.consistency_level = None
        session.default_consistency_level = ConsistencyLevel.THREE
        with unavailable_on_one_node(ConsistencyLevel.THREE):
            run()
        session.default_consistency_level = ConsistencyLevel.LOCAL_ONE
        sel.fetch_size = 2
        rs = run()
        assert len(rs.current_rows) == 2 and rs.has_more_pages and sorted(r.k for r in rs) == keys
        del sel.fetch_size
        session.row_factory = dict_factory
        assert sorted(r["k"] for r in run()) == keys
        session.row_factory = named_tuple_factory
    with pytest.raises(TypeError, match='column "k"'):
        session.execute(ins, (1, "x"))
    session.default_timeout = 0.3
    try:
        with paused(cassandra):
            with pytest.raises(OperationTimedOut):
                session.execute(sel, [keys])
            with pytest.raises(OperationTimedOut):
                session.execute_async(sel, [keys], timeout=0.2).result()
            unbounded = session.execute_async(sel, [keys], timeout=None)
            with pytest.raises(OperationTimedOut, match="result"):
                unbounded.result(timeout=0.8)  # only this wait is bounded
        assert sorted(r.k for r in unbounded.result(timeout=20)) == keys
    finally:
        session.default_timeout = 10.0


def test_one_prepared_statement_on_two_sessions_follows_each_sessions_settings(cluster, keyspace, session, table):
    """The engine keeps a statement's resolved options on the statement, stamped with the
    session that resolved them: used by a second session with other defaults, it follows
    that session's, and each session's later changes take effect at the next call."""
    from tests.integration.conftest import unavailable_on_one_node
    from turbocql.query import dict_factory, tuple_factory

    session.execute("INSERT INTO %s (k, a) VALUES ('two', 'x')" % table)
    sel = session.prepare("SELECT k, a FROM %s WHERE k = ?" % table)
    other = cluster.connect(keyspace)
    try:
        other.row_factory = dict_factory
        for _ in range(2):  # alternate, so each call finds the other session's options
            assert session.execute(sel, ["two"]).one().a == "x"
            assert other.execute(sel, ["two"]).one() == {"k": "two", "a": "x"}
            assert other.execute_async(sel, ["two"]).result().one()["a"] == "x"
        other.row_factory = tuple_factory
        assert other.execute(sel, ["two"]).one() == ("two", "x")
        other.default_consistency_level = ConsistencyLevel.THREE
        with unavailable_on_one_node(ConsistencyLevel.THREE):
            other.execute(sel, ["two"])
        assert session.execute(sel, ["two"]).one().k == "two"  # this session unaffected
        del other.default_consistency_level  # back to the class default
        assert other.execute(sel, ["two"]).one() == ("two", "x")
        sel.consistency_level = ConsistencyLevel.THREE  # the statement's own option wins
        for s in (session, other):
            with unavailable_on_one_node(ConsistencyLevel.THREE):
                s.execute(sel, ["two"])
    finally:
        other.shutdown()


def test_execute_is_the_engines_unless_a_subclass_overrides_it(cluster, keyspace, session, table):
    """session.execute runs as one engine call (kept on each session, handed out by the
    class's execute); every argument of the classic signature is accepted, by position
    or by name; a Session subclass that overrides execute keeps its own, and patching
    Session.execute reaches existing sessions."""
    from turbocql import _engine
    from turbocql.cluster import ResultSet, Session

    assert isinstance(session.execute, _engine.SyncExecute)
    assert Session.execute is Session.__dict__["execute"].__wrapped__  # the function, on the class
    assert "Executes ``query``" in Session.execute.__doc__
    session.execute("INSERT INTO %s (k, a) VALUES ('sx', 'y')" % table)
    sel = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    rs = session.execute(sel, ["sx"], 5.0, False, None, None, None, None, None)
    assert isinstance(rs, ResultSet) and rs.one().a == "y"
    rs = session.execute(
        query=sel,
        parameters=["sx"],
        timeout=None,
        trace=False,
        custom_payload=None,
        paging_state=None,
        host=None,
        execute_as=None,
    )
    assert rs.one().a == "y"
    with pytest.raises(TypeError):
        session.execute(sel, ["sx"], no_such_argument=1)
    # The class's method does the same (and is what the attribute stands for).
    assert Session.execute(session, sel, ["sx"]).one().a == "y"

    calls = []

    class Logged(Session):
        def execute(self, query, parameters=None, **kw):
            calls.append(query)
            return super().execute(query, parameters, **kw)

    logged = Logged(cluster, session._session)
    assert logged.execute(sel, ["sx"]).one().a == "y" and calls == [sel]

    # Patching the class reaches existing sessions, as with any method.
    from unittest import mock

    with mock.patch.object(Session, "execute", return_value="patched") as patched:
        assert session.execute(sel, ["sx"]) == "patched"
        patched.assert_called_once_with(sel, ["sx"])
    assert session.execute(sel, ["sx"]).one().a == "y"


def test_execute_async_is_the_engines_unless_a_subclass_overrides_it(cluster, keyspace, session, table):
    """session.execute_async runs as one engine call, like execute: every argument of the
    classic signature is accepted, in its order (trace before timeout) or by name; the
    future's timeout is the one in force; a paging state resumes a paged read; callbacks
    run on the dispatcher thread; a subclass's override and a patch of the class win."""
    from turbocql import _engine
    from turbocql.cluster import ResponseFuture, Session
    from turbocql.query import SimpleStatement

    assert isinstance(session.execute_async, _engine.AsyncExecute)
    assert session.execute_async.__self__ is session
    assert Session.execute_async is Session.__dict__["execute_async"].__wrapped__
    assert "Starts ``query``" in Session.execute_async.__doc__
    for k in ("ea1", "ea2", "ea3"):
        session.execute("INSERT INTO %s (k, a) VALUES (%%s, 'z')" % table, (k,))
    sel = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    # query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host, execute_as
    future = session.execute_async(sel, ["ea1"], False, None, 7.5, None, None, None, None)
    assert isinstance(future, ResponseFuture) and future.timeout == 7.5
    assert future.result().one().a == "z" and future.query is sel and future.session is session
    future = session.execute_async(
        query=sel,
        parameters=["ea2"],
        trace=False,
        custom_payload=None,
        timeout=None,
        paging_state=None,
        host=None,
        execute_as=None,
    )
    assert future.timeout is None and future.result().one().a == "z"
    assert session.execute_async(sel, ["ea3"]).timeout == session.default_timeout
    with pytest.raises(TypeError):
        session.execute_async(sel, ["ea1"], no_such_argument=1)
    with pytest.raises(UnsupportedOperation, match="custom_payload"):
        session.execute_async(sel, ["ea1"], custom_payload={"k": b"v"})

    # A paged read resumed from the first page's paging state.
    paged = SimpleStatement("SELECT k FROM %s" % table, fetch_size=2)
    first = session.execute_async(paged).result()
    state = first.paging_state
    assert state is not None
    rest = session.execute_async(paged, paging_state=state).result()
    assert len(first.current_rows) == 2 and rest.current_rows and not set(first.current_rows) & set(rest.current_rows)

    # Callbacks on the dispatcher thread.
    seen = []
    done = threading.Event()
    future = session.execute_async(sel, ["ea1"])
    future.add_callbacks(lambda rows: (seen.append((rows[0].a, threading.current_thread().name)), done.set()), print)
    assert done.wait(30) and seen == [("z", "turbocql-dispatcher")]

    # The class's method does the same.
    assert Session.execute_async(session, sel, ["ea1"]).result().one().a == "z"

    calls = []

    class Logged(Session):
        def execute_async(self, query, parameters=None, *args, **kw):
            calls.append(query)
            return super().execute_async(query, parameters, *args, **kw)

    logged = Logged(cluster, session._session)
    assert logged.execute_async(sel, ["ea1"]).result().one().a == "z" and calls == [sel]

    from unittest import mock

    with mock.patch.object(Session, "execute_async", return_value="patched") as patched:
        assert session.execute_async(sel, ["ea1"]) == "patched"
        patched.assert_called_once_with(sel, ["ea1"])
    assert isinstance(session.execute_async, _engine.AsyncExecute)
    assert session.execute_async(sel, ["ea1"]).result().one().a == "z"


def _generator_factory(column_names, rows):
    return (tuple(r) for r in rows)


def test_row_factory_returning_a_generator(session, table):
    for k in ("g1", "g2", "g3"):
        session.execute("INSERT INTO %s (k, a, b) VALUES (%%s, 'x', 'x')" % table, (k,))
    session.row_factory = _generator_factory
    select = "SELECT a, b FROM %s" % table
    first = session.execute(select).one()
    assert first == ("x", "x")
    assert session.execute_async(select).result().one() == ("x", "x")
    # one() takes the first row by iteration, as the classic driver: it is consumed
    rs = session.execute(select)
    assert rs.one() == ("x", "x")
    assert len(list(rs)) == 2
    # iteration, all(), indexing (list mode) and current_rows read the generator too
    assert list(session.execute(select)) == [("x", "x")] * 3
    assert session.execute(select).all() == [("x", "x")] * 3
    assert session.execute(select)[2] == ("x", "x")
    assert list(session.execute(select).current_rows) == [("x", "x")] * 3
    # an empty generator: None, not an error
    assert session.execute("SELECT a, b FROM %s WHERE k = 'none'" % table).one() is None


def test_row_factory_returning_a_generator_as_in_the_classic_driver(session, table):
    from tests.conftest import HOST, PORT

    c_cluster = pytest.importorskip("cassandra.cluster")
    session.execute("INSERT INTO %s (k, a, b) VALUES ('g1', 'x', 'x')" % table)
    classic = c_cluster.Cluster([HOST], port=PORT, protocol_version=4)
    try:
        c_session = classic.connect(session.keyspace)
        c_session.row_factory = session.row_factory = _generator_factory
        select = "SELECT a, b FROM %s" % table
        assert session.execute(select).one() == c_session.execute(select).one() == ("x", "x")
        assert session.execute(select).all() == c_session.execute(select).all()
    finally:
        classic.shutdown()


def test_default_consistency_level_warns_as_classic(cluster, session):
    """Setting ``Session.default_consistency_level`` warns of its removal in 4.0, with the
    classic driver's words; the classic private name reads the class default and the
    session's value."""
    import warnings

    from turbocql.cluster import Session

    other = cluster.connect()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            other.default_consistency_level = ConsistencyLevel.ONE
        assert [str(w.message) for w in caught] == [
            "Setting the consistency level at the session level will be removed in 4.0. Consider using "
            "execution profiles and setting the desired consistency level to the EXEC_PROFILE_DEFAULT profile."
        ]
        assert caught[0].category is DeprecationWarning and caught[0].filename == __file__
        assert Session._default_consistency_level == ConsistencyLevel.LOCAL_ONE
        assert other._default_consistency_level == ConsistencyLevel.ONE
    finally:
        other.shutdown()
