"""WritePipeline and ReadPipeline (docs/execution-paths.md), driven in the engine."""

import time

import pytest

from tests.integration.conftest import paused
from turbocql import InvalidRequest, OperationTimedOut
from turbocql.concurrent import ReadPipeline, WritePipeline


def _count(session, table):
    return session.execute("SELECT count(*) FROM %s" % table).one()[0]


def test_write_pipeline_confirm(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    wp = WritePipeline(session, max_in_flight_requests=50, max_unsent_write_requests=100)
    for i in range(3000):
        wp.execute(ins, ("w%d" % i, "a", "b"))
    wp.confirm()
    assert wp.pending == 0
    assert _count(session, table) == 3000


def test_write_pipeline_context_manager_and_simple_statements(session, table):
    with WritePipeline(session) as wp:
        for i in range(100):
            wp.execute("INSERT INTO %s (k, a) VALUES (%%s, %%s)" % table, ("s%d" % i, "it's"))
    assert _count(session, table) == 100
    with pytest.raises(RuntimeError, match="closed"):
        wp.execute("INSERT INTO %s (k) VALUES ('late')" % table)


def test_write_pipeline_failure_raises_from_confirm(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    wp = WritePipeline(session)
    wp.execute(ins, ("ok1", "a"))
    wp.execute("INSERT INTO no_such_table_wp (k) VALUES ('x')")
    wp.execute(ins, ("ok2", "a"))
    with pytest.raises(InvalidRequest, match="no_such_table_wp"):
        wp.confirm()
    assert _count(session, table) == 2
    wp.confirm()  # failures are reported once


def test_write_pipeline_error_handler(session, table):
    seen = []
    with WritePipeline(session, error_handler=seen.append) as wp:
        for i in range(3):
            wp.execute("INSERT INTO no_such_table_wp2 (k) VALUES ('%d')" % i)
    assert len(seen) == 3 and all(isinstance(e, InvalidRequest) for e in seen)


def test_write_pipeline_bad_values_raise_at_execute(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    with WritePipeline(session) as wp:
        with pytest.raises(TypeError, match='column "a"'):
            wp.execute(ins, ("k", 1))
    assert _count(session, table) == 0


def test_write_pipeline_timeout_never_waits_forever(cassandra, session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    wp = WritePipeline(session, max_in_flight_requests=4, max_unsent_write_requests=8, timeout=0.5)
    with paused(cassandra):
        t0 = time.monotonic()
        for i in range(20):  # more than fit: execute waits for room, bounded by the timeouts
            wp.execute(ins, ("t%d" % i, "a"))
        with pytest.raises(OperationTimedOut):
            wp.confirm()
        assert time.monotonic() - t0 < 10


def test_read_pipeline_results_in_order(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    for i in range(500):
        session.execute(ins, ("r%d" % i, str(i)))
    sel = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    rp = ReadPipeline(session, max_in_flight_requests=20, max_unconsumed_read_responses=50)
    got = []
    for i in range(500):
        rp.execute(sel, ("r%d" % i,))
        if i % 100 == 99:
            got.extend(rs.one().a for rs in rp.results())
    assert got == [str(i) for i in range(500)]
    assert list(rp.results()) == []


def test_read_pipeline_failure_and_error_handler(session, table):
    session.execute("INSERT INTO %s (k, a) VALUES ('x', '1')" % table)
    sel = "SELECT a FROM %s WHERE k = 'x'" % table
    rp = ReadPipeline(session)
    rp.execute(sel)
    rp.execute("SELECT * FROM no_such_table_rp")
    rp.execute(sel)
    it = rp.results()
    assert next(it).one().a == "1"
    with pytest.raises(InvalidRequest):
        next(it)
    seen = []
    rp2 = ReadPipeline(session, error_handler=seen.append)
    for q in (sel, "SELECT * FROM no_such_table_rp", sel):
        rp2.execute(q)
    assert [rs.one().a for rs in rp2.results()] == ["1", "1"]
    assert len(seen) == 1 and isinstance(seen[0], InvalidRequest)
