"""The serving host of a request (issue 28, item 4), as the classic driver tells it:
``ResponseFuture.coordinator_host`` / ``_current_host`` / ``attempted_hosts``, and the
``response_future`` of a sync result. On the one node; the 3-node checks of the coordinator
against each request's trace are in test_routing.py."""

import warnings

from tests.conftest import HOST, PORT
from tests.integration.conftest import unavailable_on_one_node
from turbocql import ConsistencyLevel
from turbocql.query import SimpleStatement


def test_sync_results_have_their_response_future(session):
    rs = session.execute("SELECT release_version FROM system.local")
    future = rs.response_future
    assert future is rs.response_future
    assert future.done and future.result().one() == rs.one()
    assert future.coordinator_host.address == HOST
    assert future.attempted_hosts == [future.coordinator_host]
    assert not future.has_more_pages


def test_attempted_hosts_of_a_retried_then_failed_request_as_classic(session, keyspace):
    """An Unavailable on the one node: the default retry policy moves to the next host and
    there is none; both drivers tried the one node once."""
    from cassandra.cluster import Cluster as ClassicCluster

    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS turbocql_rf3 WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS turbocql_rf3.t (k int PRIMARY KEY)")
    query = "SELECT k FROM turbocql_rf3.t WHERE k = 1"

    future = session.execute_async(SimpleStatement(query, consistency_level=ConsistencyLevel.THREE))
    with unavailable_on_one_node(ConsistencyLevel.THREE):
        future.result()
    ours = [h.address for h in future.attempted_hosts]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        classic = ClassicCluster([HOST], port=PORT)
    try:
        from cassandra import ConsistencyLevel as ClassicCL
        from cassandra.query import SimpleStatement as ClassicStatement

        s = classic.connect()
        theirs_future = s.execute_async(ClassicStatement(query, consistency_level=ClassicCL.THREE))
        try:
            theirs_future.result()
        except Exception:  # noqa: BLE001 - NoHostAvailable, checked for ours above
            pass
        theirs = [h.address for h in theirs_future.attempted_hosts]
    finally:
        classic.shutdown()
    assert ours == theirs == [HOST]
    assert future.coordinator_host is None
