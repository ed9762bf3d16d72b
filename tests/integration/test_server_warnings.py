"""Server warnings (a batch over the node's batch_size_warn_threshold): on the result and
the future, and logged as the classic driver logs them."""

import logging

from tests.conftest import HOST, PORT
from turbocql.query import BatchStatement, BatchType


def _big_batch(session, table, module):
    insert = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    batch = module.BatchStatement(batch_type=module.BatchType.LOGGED)
    for i in range(10):
        batch.add(insert, ("k%d" % i, "x" * 1000, "y"))
    return batch


def test_batch_over_the_threshold_warns_as_in_the_classic_driver(session, table, keyspace, caplog):
    import turbocql.query

    caplog.set_level(logging.WARNING)
    rs = session.execute(_big_batch(session, table, turbocql.query))
    assert rs.warnings and "exceeding specified threshold" in rs.warnings[0]
    future = session.execute_async(_big_batch(session, table, turbocql.query))
    future.result()
    ours = [r for r in caplog.records if r.name == "turbocql.protocol"]
    assert len(ours) == 2 and all(r.getMessage().startswith("Server warning: Batch for") for r in ours)

    import cassandra.query
    from cassandra.cluster import Cluster as ClassicCluster

    caplog.clear()
    classic = ClassicCluster([HOST], port=PORT, protocol_version=4)
    cs = classic.connect(keyspace)
    crs = cs.execute(_big_batch(cs, table, cassandra.query))
    classic.shutdown()
    theirs = [r for r in caplog.records if r.name == "cassandra.protocol"]
    assert [r.getMessage() for r in theirs] == [ours[0].getMessage()]
    assert crs.response_future.warnings == rs.warnings


def test_no_warnings_is_none(session):
    rs = session.execute("SELECT key FROM system.local")
    assert rs.warnings is None
    assert BatchStatement and BatchType  # the names classic code imports from here
