"""execute_concurrent / execute_concurrent_with_args in the engine: order, errors,
laziness, generators, bounded memory."""

import itertools
import tracemalloc

import pytest

from turbocql import InvalidRequest
from turbocql.concurrent import ExecutionResult, execute_concurrent, execute_concurrent_with_args
from turbocql.query import SimpleStatement


def test_with_args_writes_and_results_in_order(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    results = execute_concurrent_with_args(
        session, ins, [("c%d" % i, str(i), None) for i in range(2000)], concurrency=50
    )
    assert len(results) == 2000
    assert all(isinstance(r, ExecutionResult) and r.success for r in results)
    assert results[0].result_or_exc.current_rows == []
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 2000
    sel = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    reads = execute_concurrent_with_args(session, sel, [("c%d" % i,) for i in range(2000)], concurrency=120)
    assert [r.result_or_exc.one().a for r in reads] == [str(i) for i in range(2000)]


def test_pairs_with_mixed_statements(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    pairs = [
        (ins, ("p1", "x")),
        (ins.bind(("p2", "y")), None),
        ("INSERT INTO %s (k, a) VALUES (%%s, %%s)" % table, ("p3", "it's")),
        (SimpleStatement("SELECT a FROM %s WHERE k = 'p1'" % table), None),
    ]
    results = execute_concurrent(session, pairs)
    assert [r.success for r in results] == [True] * 4
    assert session.execute("SELECT a FROM %s WHERE k = 'p3'" % table).one().a == "it's"


def test_raise_on_first_error(session, table):
    bad = "SELECT * FROM no_such_table_cc"
    pairs = [("SELECT key FROM system.local", None)] * 3 + [(bad, None)] + [("SELECT key FROM system.local", None)] * 3
    with pytest.raises(InvalidRequest, match="no_such_table_cc"):
        execute_concurrent(session, pairs, raise_on_first_error=True)


def test_errors_as_results(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    params = [("e0", "ok"), ("e1", 5), ("e2", "a", "extra"), ("e3", "ok")]
    results = execute_concurrent_with_args(session, ins, params, raise_on_first_error=False)
    assert [r.success for r in results] == [True, False, False, True]
    assert isinstance(results[1].result_or_exc, TypeError) and '"a"' in str(results[1].result_or_exc)
    assert isinstance(results[2].result_or_exc, ValueError)
    bad = execute_concurrent(
        session, [("SELECT * FROM nope_cc", None), ("SELECT key FROM system.local", None)], raise_on_first_error=False
    )
    assert not bad[0].success and isinstance(bad[0].result_or_exc, InvalidRequest)
    assert bad[1].success and bad[1].result_or_exc.one().key == "local"


def test_results_generator_streams_in_order(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    consumed = []

    def params():
        for i in range(3000):
            consumed.append(i)
            yield ("g%d" % i, str(i))

    gen = execute_concurrent_with_args(session, ins, params(), concurrency=20, results_generator=True)
    first = next(gen)
    assert first.success
    assert len(consumed) < 3000, "the input is read lazily"
    rest = list(gen)
    assert len(rest) == 2999
    sel = session.prepare("SELECT a FROM %s WHERE k = ?" % table)
    out = execute_concurrent_with_args(session, sel, (("g%d" % i,) for i in range(3000)), results_generator=True)
    assert [r.result_or_exc.one().a for r in out] == [str(i) for i in range(3000)]


@pytest.mark.long
def test_generator_of_many_items_keeps_memory_bounded(session, table):
    """200,000 requests from a generator, results streamed: memory does not grow with the input."""
    sel = session.prepare("SELECT key FROM system.local WHERE key = ?")
    tracemalloc.start()
    try:
        gen = execute_concurrent_with_args(
            session, sel, itertools.repeat(("local",), 200_000), concurrency=100, results_generator=True
        )
        n = 0
        peak_after_warmup = None
        for _ok, _rs in gen:
            n += 1
            if n == 20_000:
                tracemalloc.reset_peak()
            if n == 200_000:
                peak_after_warmup = tracemalloc.get_traced_memory()[1]
        assert n == 200_000
        assert peak_after_warmup < 20 * 1024 * 1024, peak_after_warmup
    finally:
        tracemalloc.stop()


def test_empty_input_and_bad_concurrency(session, table):
    ins = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    assert execute_concurrent_with_args(session, ins, []) == []
    with pytest.raises(ValueError, match="concurrency"):
        execute_concurrent_with_args(session, ins, [("x", "y")], concurrency=0)
