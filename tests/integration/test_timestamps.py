"""Client-side timestamps (``Cluster.timestamp_generator``, ``Session.use_client_timestamp``)
on every request path, checked with WRITETIME against what the classic driver writes."""

import asyncio
import time

import pytest

from tests.conftest import HOST, PORT
from turbocql.cluster import Cluster
from turbocql.concurrent import WritePipeline, execute_concurrent_with_args
from turbocql.query import BatchStatement, SimpleStatement
from turbocql.timestamps import MonotonicTimestampGenerator


class FixedClock:
    def __init__(self, value):
        self.value = value
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.value


@pytest.fixture
def kv(session, keyspace):
    session.execute("CREATE TABLE IF NOT EXISTS ts_kv (k int PRIMARY KEY, v text)")
    session.execute("TRUNCATE ts_kv")
    return "%s.ts_kv" % keyspace


def _writetimes(session, table):
    return {r.k: r.wt for r in session.execute("SELECT k, WRITETIME(v) AS wt FROM %s" % table)}


def test_a_user_generator_stamps_every_path(cassandra, kv):
    clock = FixedClock(1_234_567_000)
    cluster = Cluster([HOST], port=PORT, timestamp_generator=clock)
    session = cluster.connect()
    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % kv)
    session.execute(insert, (1, "sync"))
    session.execute(SimpleStatement("INSERT INTO %s (k, v) VALUES (%%s, %%s)" % kv), (2, "simple"))
    session.execute_async(insert, (3, "future")).result()
    assert all(ok for ok, _ in execute_concurrent_with_args(session, insert, [(k, "c") for k in range(10, 20)]))
    with WritePipeline(session) as pipeline:
        for k in range(20, 25):
            pipeline.execute(insert, (k, "p"))
    batch = BatchStatement()
    batch.add(insert, (30, "batch"))
    batch.add(insert, (31, "batch"))
    session.execute(batch)

    async def over_asyncio():
        from turbocql.aio import Cluster as AioCluster

        async with AioCluster([HOST], port=PORT, timestamp_generator=clock) as c:
            s = await c.connect()
            await s.execute(await s.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % kv), (40, "aio"))

    asyncio.run(over_asyncio())
    times = _writetimes(session, kv)
    cluster.shutdown()
    assert set(times) == {1, 2, 3, *range(10, 25), 30, 31, 40}
    assert set(times.values()) == {1_234_567_000}
    assert clock.calls >= len(times) - 1  # one per request (the batch is one)


def test_the_classic_driver_writes_the_same_timestamps(cassandra, kv, session):
    from cassandra.cluster import Cluster as ClassicCluster

    classic = ClassicCluster([HOST], port=PORT, protocol_version=4, timestamp_generator=FixedClock(42_000_000))
    cs = classic.connect()
    cs.execute("INSERT INTO %s (k, v) VALUES (1, 'classic')" % kv)
    classic.shutdown()
    ours = Cluster([HOST], port=PORT, timestamp_generator=FixedClock(42_000_000))
    ours.connect().execute("INSERT INTO %s (k, v) VALUES (2, 'turbocql')" % kv)
    ours.shutdown()
    assert _writetimes(session, kv) == {1: 42_000_000, 2: 42_000_000}


def test_default_generator_is_the_monotonic_clock(cassandra, kv, session):
    cluster = Cluster([HOST], port=PORT)
    assert type(cluster.timestamp_generator) is MonotonicTimestampGenerator
    s = cluster.connect()
    before = int(time.time() * 1e6)
    insert = s.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % kv)
    # The same key written 200 times as fast as possible: each write has a later timestamp
    # than the one before, so the last value wins (server clocks could tie or reorder).
    for i in range(200):
        s.execute(insert, (7, "v%d" % i))
    after = int(time.time() * 1e6)
    cluster.shutdown()
    row = session.execute("SELECT v, WRITETIME(v) AS wt FROM %s WHERE k = 7" % kv).one()
    assert row.v == "v199"
    assert before <= row.wt <= after + 200


def test_use_client_timestamp_off_leaves_it_to_the_server(cassandra, kv, session):
    clock = FixedClock(1_000)
    cluster = Cluster([HOST], port=PORT, timestamp_generator=clock)
    s = cluster.connect()
    s.execute("INSERT INTO %s (k, v) VALUES (1, 'a')" % kv)
    s.use_client_timestamp = False
    s.execute("INSERT INTO %s (k, v) VALUES (2, 'b')" % kv)
    s.use_client_timestamp = True
    s.execute("INSERT INTO %s (k, v) VALUES (3, 'c')" % kv)
    cluster.shutdown()
    times = _writetimes(session, kv)
    assert times[1] == times[3] == 1_000
    assert times[2] > time.time() * 1e6 - 60e6


def test_a_generator_that_fails_raises(cassandra, kv):
    def broken():
        raise RuntimeError("clock unavailable")

    cluster = Cluster([HOST], port=PORT, timestamp_generator=broken)
    s = cluster.connect()
    with pytest.raises(RuntimeError, match="clock unavailable"):
        s.execute("INSERT INTO %s (k, v) VALUES (1, 'a')" % kv)
    cluster.timestamp_generator = lambda: "soon"
    with pytest.raises(TypeError, match="timestamp_generator must return an int"):
        s.execute("INSERT INTO %s (k, v) VALUES (1, 'a')" % kv)
    cluster.shutdown()
