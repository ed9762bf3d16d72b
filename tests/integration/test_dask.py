"""``turbocql.dask`` on ``dask.distributed.LocalCluster`` (two worker processes) against the
3-node cluster: every row read exactly once, writes complete, a worker killed mid-read makes
its partitions run again with no row duplicated or missed."""

import os
import signal
import time
import uuid

import pytest

from turbocql import ConsistencyLevel
from turbocql.cluster import Cluster
from turbocql.concurrent import execute_concurrent_with_args

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

NODES = ("127.0.0.11", "127.0.0.12", "127.0.0.13")
QUORUM = ConsistencyLevel.QUORUM
ROWS = 20_000


@pytest.fixture(scope="module")
def cluster_session(multidc_cluster):
    cluster = Cluster(list(NODES))
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS dask_test WITH replication = "
        "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}"
    )
    yield session
    cluster.shutdown()


@pytest.fixture
def source_table(cluster_session):
    name = "src_" + uuid.uuid4().hex[:8]
    cluster_session.execute(
        "CREATE TABLE dask_test.%s (id int PRIMARY KEY, v bigint, name text, score decimal, tags set<int>)" % name
    )
    ins = cluster_session.prepare("INSERT INTO dask_test.%s (id, v, name, score, tags) VALUES (?, ?, ?, ?, ?)" % name)
    # Written and read at QUORUM (2 of the 3 replicas each): every read meets a replica that
    # acknowledged every write. At LOCAL_ONE a read may ask a replica a write has not reached
    # yet (a CI run on a loaded machine read 19,964 of 20,000 rows that way); at ALL one slow
    # node times writes out.
    ins.consistency_level = QUORUM
    import decimal

    rows = [
        (i, i * 3 if i % 7 else None, "n%d" % i, decimal.Decimal("%d.%02d" % (i, i % 100)), {i % 5} if i % 3 else None)
        for i in range(ROWS)
    ]
    execute_concurrent_with_args(cluster_session, ins, rows, concurrency=200)
    yield name
    cluster_session.execute("DROP TABLE dask_test.%s" % name)


@pytest.fixture(scope="module")
def dask_client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_every_row_is_read_exactly_once(dask_client, source_table):
    from turbocql import dask as tdask

    ddf = tdask.read_table(list(NODES), "dask_test", source_table, split=12, consistency_level=QUORUM)
    assert ddf.npartitions == 12
    df = ddf.compute()
    assert len(df) == ROWS and sorted(df["id"]) == list(range(ROWS))
    by_id = df.set_index("id")
    import pandas as pd

    assert by_id.loc[15, "v"] == 45 and pd.isna(by_id.loc[14, "v"])  # nullable, not float
    assert str(by_id["v"].dtype) == "int64[pyarrow]"
    assert by_id.loc[123, "score"] == "123.23" and list(by_id.loc[4, "tags"]) == [4]
    # One column of the frame: Dask projects it into each partition's read.
    assert sorted(ddf["name"].compute()) == sorted("n%d" % i for i in range(ROWS))
    # Columns and where are pushed into the SELECT.
    small = tdask.read_table(
        list(NODES),
        "dask_test",
        source_table,
        columns=["id"],
        where="v > 59000 ALLOW FILTERING",
        split=4,
        consistency_level=QUORUM,
    )
    assert sorted(small.compute()["id"]) == [i for i in range(ROWS) if i % 7 and i * 3 > 59000]


def test_a_dataframe_is_written_and_reads_back(dask_client, source_table, cluster_session):
    from turbocql import dask as tdask

    target = source_table + "_copy"
    cluster_session.execute("CREATE TABLE dask_test.%s (id int PRIMARY KEY, v bigint, name text)" % target)
    try:
        columns = ["id", "v", "name"]
        ddf = tdask.read_table(
            list(NODES), "dask_test", source_table, columns=columns, split=8, consistency_level=QUORUM
        )
        written = tdask.to_table(ddf, list(NODES), "dask_test", target, consistency_level=QUORUM)
        assert written == ROWS
        back = tdask.read_table(list(NODES), "dask_test", target, split=5, consistency_level=QUORUM).compute()
        assert sorted(back["id"]) == list(range(ROWS))
        assert (back.set_index("id").sort_index()["name"] == ["n%d" % i for i in range(ROWS)]).all()
    finally:
        cluster_session.execute("DROP TABLE dask_test.%s" % target)


def test_the_consistency_level_is_carried_by_every_read_and_write(dask_client, source_table, cluster_session):
    from turbocql import dask as tdask
    from turbocql.bulk import BulkError
    from turbocql.protocol import InvalidRequest

    # ANY is for writes only: the server refuses a read at it, which shows the reads carry it.
    with pytest.raises(InvalidRequest, match="ANY"):
        tdask.read_table(list(NODES), "dask_test", source_table, consistency_level=ConsistencyLevel.ANY)
    ddf = tdask.read_table(list(NODES), "dask_test", source_table, columns=["id"], split=2, consistency_level=QUORUM)
    assert len(ddf.compute()) == ROWS
    # A keyspace of one replica cannot give TWO acknowledgements: every write is refused.
    cluster_session.execute(
        "CREATE KEYSPACE IF NOT EXISTS dask_one_replica WITH replication = "
        "{'class': 'NetworkTopologyStrategy', 'dc1': 1}"
    )
    cluster_session.execute("CREATE TABLE dask_one_replica.%s (id int PRIMARY KEY)" % source_table)
    try:
        with pytest.raises(BulkError, match="Cannot achieve consistency level TWO"):
            tdask.to_table(ddf, list(NODES), "dask_one_replica", source_table, consistency_level=ConsistencyLevel.TWO)
        assert tdask.to_table(ddf, list(NODES), "dask_one_replica", source_table) == ROWS
    finally:
        cluster_session.execute("DROP TABLE dask_one_replica.%s" % source_table)


def test_a_worker_killed_mid_read_reruns_its_partitions_without_duplicates(dask_client, source_table):
    from turbocql import dask as tdask

    ddf = tdask.read_table(
        list(NODES), "dask_test", source_table, split=24, ranges_per_split=8, page_size=50, consistency_level=QUORUM
    )
    future = dask_client.compute(ddf)
    pids = dask_client.run(os.getpid)
    victim = sorted(pids)[0]
    deadline = time.monotonic() + 60
    while not dask_client.processing().get(victim):
        assert not future.done(), "the read finished before a worker could be killed: make it slower"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(pids[victim], signal.SIGKILL)
    df = future.result(timeout=180)
    assert (
        victim not in dask_client.scheduler_info()["workers"] or dask_client.run(os.getpid).get(victim) != pids[victim]
    )
    assert len(df) == ROWS
    assert df["id"].is_unique and sorted(df["id"]) == list(range(ROWS))
