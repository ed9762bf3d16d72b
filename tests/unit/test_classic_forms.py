"""The classic forms that code written for the classic driver (its own unit tests among it)
builds without a server: a PreparedStatement from its constructor, a ResultSet of a future
that is not ours, execute_concurrent on a session that is not ours. Each is dispatched
when the object is made, so the engine's own statements and results are not slowed."""

import pickle
from unittest.mock import Mock

import pytest

from turbocql import UnsupportedOperation
from turbocql.cluster import ResultSet
from turbocql.concurrent import execute_concurrent
from turbocql.cqltypes import Int32Type
from turbocql.protocol import ColumnMetadata
from turbocql.query import UNSET_VALUE, BatchStatement, BoundStatement, PreparedStatement


def _classic_prepared(protocol_version=4):
    meta = [ColumnMetadata("ks", "t", name, Int32Type) for name in ("k", "v")]
    return PreparedStatement(
        column_metadata=meta,
        query_id=b"id",
        routing_key_indexes=[0],
        query="INSERT INTO ks.t (k, v) VALUES (?, ?)",
        keyspace="ks",
        protocol_version=protocol_version,
        result_metadata=None,
        result_metadata_id=None,
    )


def test_classic_prepared_statement_binds_as_classic():
    ps = _classic_prepared()
    bound = ps.bind((1, None))
    assert isinstance(bound, BoundStatement)
    assert bound.values == [b"\x00\x00\x00\x01", None]
    assert bound.routing_key == b"\x00\x00\x00\x01"
    assert bound.keyspace == "ks"
    assert BoundStatement(ps).bind({"k": 2}).values == [b"\x00\x00\x00\x02", UNSET_VALUE]
    with pytest.raises(ValueError, match="routing key 'k'"):
        ps.bind({"v": 1})
    with pytest.raises(KeyError):
        _classic_prepared(protocol_version=3).bind({"k": 1})
    with pytest.raises(TypeError, match='column "v".*Int32Type'):
        ps.bind((1, "x"))


def test_classic_prepared_statement_is_not_executable():
    ps = _classic_prepared()
    with pytest.raises(UnsupportedOperation, match="not by Session.prepare"):
        _ = ps._prepared  # what the engine reads to execute it
    with pytest.raises(UnsupportedOperation):
        BatchStatement().add(ps, (1, 2))


def test_unset_value_still_pickles_under_turbocql_query():
    assert type(UNSET_VALUE).__module__ == "turbocql.query"
    assert pickle.loads(pickle.dumps(UNSET_VALUE)) is UNSET_VALUE


def test_result_set_of_a_foreign_future_pages_through_it():
    future = Mock(has_more_pages=True, _continuous_paging_session=None)
    future.result.side_effect = [ResultSet(Mock(has_more_pages=False), [3, 4])]
    rs = ResultSet(future, [1, 2])
    assert isinstance(rs, ResultSet) and type(rs) is not ResultSet  # the classic form's class

    def last_page(*_):
        future.has_more_pages = False

    future.start_fetching_next_page.side_effect = last_page
    assert list(rs) == [1, 2, 3, 4]
    assert not rs and list(rs) == []  # as classic: an iterated result holds no rows


def test_execute_concurrent_on_a_foreign_session_goes_through_its_execute_async():
    class Future:
        def add_callbacks(self, callback, errback, callback_args=(), callback_kwargs=None, **_):
            callback(["row"], *callback_args)

        def clear_callbacks(self):
            pass

        has_more_pages = False

    session = Mock()
    session.execute_async.side_effect = [Future(), TypeError("bad value"), Future()]
    results = execute_concurrent(session, [("q", (i,)) for i in range(3)], raise_on_first_error=False)
    assert [ok for ok, _ in results] == [True, False, True]
    assert list(results[0][1]) == ["row"] and isinstance(results[1][1], TypeError)
    assert session.execute_async.call_count == 3
