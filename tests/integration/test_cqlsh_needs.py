"""What cqlsh (run through the shim) reads of the driver, compared with the classic driver:
server error messages, the control host, schema agreement, prepared metadata types and
trace event times."""

import datetime

import pytest

from tests.conftest import HOST, PORT
from turbocql.protocol import SyntaxException


@pytest.fixture(scope="module")
def classic_session(cassandra):
    from cassandra.cluster import Cluster as ClassicCluster

    c = ClassicCluster([HOST], port=PORT, protocol_version=4)
    yield c.connect()
    c.shutdown()


def test_server_error_text_and_message_as_classic(session, classic_session):
    from cassandra.protocol import SyntaxException as ClassicSyntaxException

    with pytest.raises(SyntaxException) as ours:
        session.execute("SELEC * FROM nope")
    with pytest.raises(ClassicSyntaxException) as theirs:
        classic_session.execute("SELEC * FROM nope")
    assert ours.value.message == theirs.value.message
    assert str(ours.value) == str(theirs.value)


def test_control_host_and_schema_agreement(cluster, session):
    host = cluster.get_control_connection_host()
    assert host is not None and host.address == HOST and host.is_up
    assert session.execute_async("SELECT key FROM system.local").is_schema_agreed


def test_prepared_metadata_types_and_protocol(session, classic_session, table):
    ours = session.prepare("SELECT k, a FROM %s WHERE k = ?" % table)
    theirs = classic_session.prepare("SELECT k, a FROM %s.%s WHERE k = ?" % (session.keyspace, table))
    assert ours.protocol_version == theirs.protocol_version == 4
    # (keyspace, table, name, type) rows, the type a cqltypes class.
    assert [c[3].cql_parameterized_type() for c in ours.result_metadata] == [
        c[3].cql_parameterized_type() for c in theirs.result_metadata
    ]
    assert [c.type.cql_parameterized_type() for c in ours.column_metadata] == [
        c.type.cql_parameterized_type() for c in theirs.column_metadata
    ]


def test_trace_event_times_are_utc_aware(session):
    rs = session.execute("SELECT key FROM system.local", trace=True)
    events = rs.get_query_trace(max_wait_sec=10).events
    assert events and all(e.datetime.tzinfo is datetime.UTC for e in events)


def test_batch_filled_with_classic_triples_as_cqlsh_copy_from_does(session, table):
    from turbocql.query import BatchStatement, BatchType

    insert = session.prepare("INSERT INTO %s (k, a) VALUES (?, ?)" % table)
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    batch._statements_and_parameters = [(True, insert.query_id, insert.bind(("p%d" % i, "x")).values) for i in range(3)]
    session.execute(batch)
    plain = BatchStatement(batch_type=BatchType.UNLOGGED)
    plain._statements_and_parameters = [
        (False, "INSERT INTO %s (k, a) VALUES ('s%d', 'y')" % (table, i), ()) for i in range(2)
    ]
    session.execute(plain)
    rows = {r.k: r.a for r in session.execute("SELECT k, a FROM %s" % table)}
    assert rows == {"p0": "x", "p1": "x", "p2": "x", "s0": "y", "s1": "y"}
    with pytest.raises(ValueError, match="no prepared statement with query id"):
        batch._statements_and_parameters = [(True, b"nope", ())]


def test_result_column_types_are_the_classic_classes(session, classic_session):
    query = "SELECT key, tokens, release_version, host_id, rpc_port FROM system.local"
    ours = session.execute(query).column_types
    theirs = classic_session.execute(query).column_types
    assert [t.cql_parameterized_type() for t in ours] == [t.cql_parameterized_type() for t in theirs]
    assert [t.__name__ for t in ours] == [t.__name__ for t in theirs]
