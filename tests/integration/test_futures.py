"""execute_async, ResponseFuture, callbacks and errbacks, callback chains, paging of
futures, and futures when the server stops mid-run."""

import threading
import time

import pytest

from tests.integration.conftest import paused
from turbocql import InvalidRequest, OperationTimedOut
from turbocql.cluster import QueryExhausted, ResponseFuture, ResultSet
from turbocql.query import SimpleStatement


def test_result_returns_a_result_set(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    futures = [session.execute_async(ins, ("f%d" % i, "a", "b")) for i in range(50)]
    assert all(isinstance(f, ResponseFuture) for f in futures)
    for f in futures:
        rs = f.result()
        assert isinstance(rs, ResultSet) and rs.current_rows == []
    rs = session.execute_async("SELECT count(*) FROM %s" % table).result()
    assert rs.one()[0] == 50


def test_a_constructor_put_on_response_future_is_called(session, monkeypatch):
    # The engine makes a ResponseFuture without calling the class while the class keeps the
    # engine's constructor; one patched in (an agent, a test's spy) is called as classic.
    made = []

    def spy(self, *args):
        made.append(args)

    monkeypatch.setattr(ResponseFuture, "__init__", spy, raising=False)
    rs = session.execute_async("SELECT release_version FROM system.local").result()
    assert rs.one().release_version
    ((sess, request, query, row_factory, timeout),) = made
    assert sess is session and query == "SELECT release_version FROM system.local"
    assert row_factory is session.row_factory and timeout == session.default_timeout
    monkeypatch.undo()
    made.clear()
    assert session.execute_async("SELECT release_version FROM system.local").result().one() and made == []


def test_errors_raise_from_result_and_reach_errbacks(session):
    f = session.execute_async("SELECT * FROM no_such_table_here")
    with pytest.raises(InvalidRequest, match="no_such_table_here"):
        f.result()
    got = []
    done = threading.Event()
    f2 = session.execute_async("SELECT * FROM no_such_table_here")
    f2.add_callbacks(lambda rows: got.append(("ok", rows)), lambda exc: (got.append(("err", exc)), done.set()))
    assert done.wait(10)
    assert got[0][0] == "err" and isinstance(got[0][1], InvalidRequest)


def test_bad_values_raise_synchronously(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    with pytest.raises(TypeError, match='column "a"'):
        session.execute_async(ins, ("k", 1, "b"))
    with pytest.raises(ValueError, match="Too many"):
        session.execute_async(ins, ("k", "a", "b", "c"))
    with pytest.raises(ValueError, match="routing key 'k'"):
        session.execute_async(ins, ())


def test_callbacks_run_on_the_dispatcher_with_args(session):
    seen = []
    done = threading.Event()

    def cb(rows, tag, extra=None):
        seen.append((rows[0].key, tag, extra, threading.current_thread().name))
        done.set()

    f = session.execute_async("SELECT key FROM system.local")
    f.add_callbacks(cb, lambda e: None, callback_args=("T",), callback_kwargs={"extra": 7})
    assert done.wait(10)
    key, tag, extra, thread = seen[0]
    assert (key, tag, extra) == ("local", "T", 7)
    assert thread in ("turbocql-dispatcher", threading.current_thread().name)


def test_callback_added_after_completion_runs_at_once(session):
    f = session.execute_async("SELECT key FROM system.local")
    f.result()
    seen = []
    f.add_callback(lambda rows, x: seen.append((rows[0].key, x, threading.current_thread().name)), 5)
    assert seen == [("local", 5, threading.current_thread().name)]
    bad = session.execute_async("SELECT * FROM nope_nope")
    with pytest.raises(InvalidRequest):
        bad.result()
    errs = []
    bad.add_errback(errs.append)
    assert len(errs) == 1 and isinstance(errs[0], InvalidRequest)


def test_write_callback_gets_none(session, table):
    got = []
    done = threading.Event()
    session.execute_async("INSERT INTO %s (k) VALUES ('w')" % table).add_callback(
        lambda rows: (got.append(rows), done.set())
    )
    assert done.wait(10)
    assert got == [None]


@pytest.mark.parametrize("chains", [120, 250, 500])
def test_callback_chains(session, table, chains):
    """The callback-chain pattern (benchmarks/README.md): each callback submits the next request."""
    total = 3000
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    lock = threading.Lock()
    state = {"started": 0, "finished": 0, "errors": 0}
    done = threading.Event()

    def next_request(result=None):
        with lock:
            if isinstance(result, BaseException):
                state["errors"] += 1
            if result is not _START:
                state["finished"] += 1
                if state["finished"] == total:
                    done.set()
            if state["started"] >= total:
                return
            i = state["started"]
            state["started"] += 1
        session.execute_async(ins, ("c%d" % i, "a", "b")).add_callbacks(next_request, next_request)

    for _ in range(chains):
        next_request(_START)
    assert done.wait(120), state
    assert state == {"started": total, "finished": total, "errors": 0}
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == total


_START = object()


def test_paging_with_futures(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    for i in range(25):
        session.execute(ins, ("p%02d" % i, "a", "b"))
    pages = []
    done = threading.Event()
    future = session.execute_async(SimpleStatement("SELECT k FROM %s" % table, fetch_size=10))

    def on_page(rows):
        pages.append([r.k for r in rows])
        if future.has_more_pages:
            future.start_fetching_next_page()
        else:
            done.set()

    future.add_callbacks(on_page, lambda e: done.set())
    assert done.wait(20)
    assert [len(p) for p in pages] == [10, 10, 5]
    assert sorted(sum(pages, [])) == ["p%02d" % i for i in range(25)]
    with pytest.raises(QueryExhausted):
        future.start_fetching_next_page()
    # ResultSet from a future pages on by iteration too.
    rs = session.execute_async(SimpleStatement("SELECT k FROM %s" % table, fetch_size=7)).result()
    assert len(rs.current_rows) == 7 and len(list(rs)) == 25


def test_timeouts(cassandra, session, table):
    with paused(cassandra):
        f = session.execute_async("SELECT key FROM system.local", timeout=0.5)
        t0 = time.monotonic()
        with pytest.raises(OperationTimedOut):
            f.result(timeout=0.1)  # the wait's own bound
        with pytest.raises(OperationTimedOut):
            f.result()  # the request's timeout
        assert time.monotonic() - t0 < 2
        errs = []
        ev = threading.Event()
        session.execute_async("SELECT key FROM system.local", timeout=0.3).add_errback(
            lambda e: (errs.append(e), ev.set())
        )
        assert ev.wait(5) and isinstance(errs[0], OperationTimedOut)


def test_threads_mixing_sync_and_async(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    errors = []

    def work(t):
        try:
            futures = []
            for i in range(100):
                if i % 2:
                    session.execute(ins, ("m%d-%d" % (t, i), "s", None))
                else:
                    futures.append(session.execute_async(ins, ("m%d-%d" % (t, i), "a", None)))
            for f in futures:
                f.result()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 800


def test_add_callbacks_after_completion_run_at_once_and_failing_callbacks_are_logged(cassandra, session, caplog):
    ok = session.execute_async("SELECT key FROM system.local")
    ok.result()
    bad = session.execute_async("SELECT * FROM no_such_table_here")
    with pytest.raises(InvalidRequest):
        bad.result()
    seen = []
    ok.add_callbacks(
        lambda rows, tag, n=0: seen.append(("cb", rows[0].key, tag, n)),
        seen.append,
        callback_args=("T",),
        callback_kwargs={"n": 3},
    )
    bad.add_callbacks(seen.append, lambda exc, tag: seen.append(("eb", type(exc).__name__, tag)), errback_args=("E",))
    assert seen == [("cb", "local", "T", 3), ("eb", "InvalidRequest", "E")]

    # A callback that raises on the dispatcher is logged; the next callback still runs.
    done = threading.Event()

    def boom(rows):
        raise RuntimeError("callback failed on purpose")

    with paused(cassandra):  # both callbacks are added before the request can finish
        f = session.execute_async("SELECT key FROM system.local", timeout=30)
        f.add_callback(boom)
        f.add_callback(lambda rows: done.set())
    assert done.wait(20)
    assert any("callback failed on purpose" in r.exc_text for r in caplog.records if r.exc_text)


def test_many_waiters_one_future_and_reentrant_callback_release(cassandra, session):
    """Several threads wait on one future (GIL released); dropping a callback whose
    finalizer touches the same future does not deadlock; row_factory can be changed
    on the future before it completes."""
    from turbocql.query import dict_factory

    with paused(cassandra):
        f = session.execute_async("SELECT key FROM system.local")
        f.row_factory = dict_factory
        got = []
        waiters = [threading.Thread(target=lambda: got.append(f.result(timeout=20).one())) for _ in range(8)]
        for t in waiters:
            t.start()
        time.sleep(0.3)
        assert not f.done and not got

        class Finalized:
            def __call__(self, rows):
                pass

            def __del__(self):
                f.add_errback(lambda exc: None)  # re-enters the future while it is cleared

        f.add_callback(Finalized())
        f.clear_callbacks()  # drops Finalized: its __del__ runs after the future's lock is released
    for t in waiters:
        t.join(20)
    assert got == [{"key": "local"}] * 8
    assert f.done and f.result().one() == {"key": "local"}


def test_row_factory_changed_on_the_future_of_a_prepared_statement(session):
    """A prepared statement's rows are made as named tuples while the page is decoded
    (the session's default factory); a future whose row_factory is changed before its
    result is read still gets that factory's rows: plain tuples, dicts."""
    from turbocql.query import dict_factory, tuple_factory

    sel = session.prepare("SELECT key, cluster_name FROM system.local WHERE key = ?")
    named = session.execute(sel, ["local"]).one()
    assert type(named) is not tuple and named._fields == ("key", "cluster_name") and named.key == "local"
    f = session.execute_async(sel, ["local"])
    f.row_factory = tuple_factory
    row = f.result().one()
    assert type(row) is tuple and row == tuple(named)
    f = session.execute_async(sel, ["local"])
    f.row_factory = dict_factory
    assert f.result().one() == {"key": "local", "cluster_name": named.cluster_name}


@pytest.fixture
def classic_session(keyspace):
    pytest.importorskip("cassandra")
    from cassandra.cluster import Cluster as ClassicCluster

    from tests.conftest import HOST, PORT

    classic = ClassicCluster([HOST], port=PORT, protocol_version=4)
    try:
        yield classic.connect(keyspace)
    finally:
        classic.shutdown()


def test_message_holds_what_is_sent_as_classic(session, classic_session, table):
    """``ResponseFuture.message``: the classic message class of the request, with the
    consistency, serial consistency and fetch size sent, compared with the classic
    driver's for a simple, a prepared and a batch statement."""
    from cassandra import ConsistencyLevel as ClassicCL
    from cassandra.query import BatchStatement as ClassicBatch
    from cassandra.query import SimpleStatement as ClassicSimple

    from turbocql import ConsistencyLevel
    from turbocql.query import BatchStatement

    update = "UPDATE %s SET a = 'x' WHERE k = 'm1' IF a = 'y'" % table
    insert = "INSERT INTO %s (k, a, b) VALUES ('m2', 'a', 'b')" % table

    def fields(future):
        future.result()
        m = future.message
        return (
            type(m).__name__,
            getattr(m, "query", None),
            m.consistency_level,
            m.serial_consistency_level,
            getattr(m, "fetch_size", None),
            getattr(getattr(m, "batch_type", None), "value", None),
            isinstance(m.timestamp, int),
        )

    seen = {}
    for label, s, simple, batch, cl in (
        ("turbocql", session, SimpleStatement, BatchStatement, ConsistencyLevel),
        ("classic", classic_session, ClassicSimple, ClassicBatch, ClassicCL),
    ):
        b = batch(serial_consistency_level=cl.SERIAL)
        b.add(insert)
        seen[label] = [
            fields(s.execute_async(simple(update, serial_consistency_level=cl.LOCAL_SERIAL, fetch_size=70))),
            fields(s.execute_async(s.prepare("SELECT * FROM %s WHERE k = ?" % table), ("m1",))),
            fields(s.execute_async(b)),
        ]
    assert seen["turbocql"][0] == ("QueryMessage", update, 10, 9, 70, None, True)
    assert seen["turbocql"][2] == ("BatchMessage", None, 10, 8, None, 0, True)
    # The classic ExecuteMessage has no query text; the rest must agree.
    assert seen["turbocql"][1][0] == "ExecuteMessage" and seen["turbocql"][1][2:] == seen["classic"][1][2:]
    assert seen["turbocql"][0] == seen["classic"][0] and seen["turbocql"][2] == seen["classic"][2]


def test_timeout_is_the_one_in_force_as_classic(cluster, session):
    """``ResponseFuture.timeout`` (also a sync result's ``response_future``): the call's
    timeout, else the execution profile's ``request_timeout``; None for none."""
    from turbocql.cluster import EXEC_PROFILE_DEFAULT

    profile_timeout = cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT].request_timeout
    assert session.execute("SELECT * FROM system.local").response_future.timeout == profile_timeout
    assert session.execute_async("SELECT * FROM system.local").timeout == profile_timeout
    assert session.execute_async("SELECT * FROM system.local", timeout=3.5).timeout == 3.5
    assert session.execute_async("SELECT * FROM system.local", timeout=None).timeout is None


def test_a_timeout_shorter_than_the_timer_tick_times_out_as_classic(session):
    """A client timeout below the runtime timer's resolution (down to sys.float_info.min,
    which the classic suite uses) is due once the request is sent: OperationTimedOut on
    every path, never an answer that came back within the tick."""
    import sys

    for timeout in (sys.float_info.min, 0.0005):
        for _ in range(20):
            with pytest.raises(OperationTimedOut):
                session.execute("SELECT * FROM system.local", timeout=timeout)
        with pytest.raises(OperationTimedOut):
            session.execute_async("SELECT * FROM system.local", timeout=timeout).result()
    assert session.execute("SELECT release_version FROM system.local", timeout=0.5).one()
