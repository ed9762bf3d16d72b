"""``turbocql.bulk`` and ``turbocql load / unload / count`` against the local node: every CQL
type goes round the trip (unload, then load into an empty table: the same rows, read by the
classic driver as the oracle) in each format; bad rows land in the bad-rows file and the
counts add up to the input; ``max_errors`` stops a load with a clear error; ``--split``
shares cover the ring exactly once; the command line does the same."""

import json
import subprocess
import sys
import uuid

import pytest
from cassandra.cluster import Cluster as ClassicCluster

from tests.conftest import HOST, PORT
from tests.integration._tables import classic_rows, empty_copy
from tests.integration.test_arrow import ROWS, typed_table  # noqa: F401 (a fixture)
from turbocql import bulk
from turbocql.concurrent import execute_concurrent_with_args

pytest.importorskip("pyarrow")

FORMATS = ["csv", "json", "parquet", "arrow"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_type_goes_round_the_trip(session, keyspace, typed_table, tmp_path, fmt):  # noqa: F811
    out = str(tmp_path / ("rows." + fmt))
    unloaded = bulk.unload(session, keyspace, typed_table, out, progress=False)
    assert unloaded.rows == len(ROWS)
    copy = empty_copy(session, keyspace, typed_table, fmt)
    try:
        loaded = bulk.load(session, keyspace, copy, out, progress=False, bad_rows=str(tmp_path / "bad.jsonl"))
        assert (loaded.records, loaded.loaded, loaded.rejected, loaded.failed) == (len(ROWS), len(ROWS), 0, 0), loaded
        assert classic_rows(keyspace, copy, True) == classic_rows(keyspace, typed_table, True)
    finally:
        session.execute("DROP TABLE %s" % copy)


@pytest.fixture
def kv_table(session):
    name = "bulk_" + uuid.uuid4().hex[:10]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, v bigint, t text)" % name)
    yield name
    session.execute("DROP TABLE %s" % name)


def test_bad_rows_go_to_the_bad_rows_file_and_the_counts_add_up(session, keyspace, kv_table, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text('k,v,t\n1,10,a\nx,20,b\n3,zz,"c, d"\n4,40,\n5,,""\n')
    bad = tmp_path / "bad.jsonl"
    result = bulk.load(session, keyspace, kv_table, str(src), bad_rows=str(bad), progress=False)
    assert (result.records, result.loaded, result.rejected, result.failed) == (5, 3, 2, 0)
    assert result.loaded + result.rejected + result.failed == result.records
    lines = [json.loads(line) for line in bad.read_text().splitlines()]
    assert [(b["record"], b["line"], b["kind"]) for b in lines] == [(2, 3, "rejected"), (3, 4, "rejected")]
    assert '"k" of CQL type int' in lines[0]["error"] and '"x" is not an int' in lines[0]["error"]
    assert lines[1]["row"] == {"k": "3", "v": "zz", "t": "c, d"}
    rows = {r.k: (r.v, r.t) for r in session.execute("SELECT * FROM %s" % kv_table)}
    # An empty unquoted field is null, "" an empty string.
    assert rows == {1: (10, "a"), 4: (40, None), 5: (None, "")}


def test_max_errors_stops_the_load_with_a_clear_error(session, keyspace, kv_table, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("k,v\n" + "".join("%d,%s\n" % (i, "bad" if i % 2 else i) for i in range(100)))
    with pytest.raises(bulk.BulkError, match="50 rejected or failed rows exceed max_errors=3") as e:
        bulk.load(
            session, keyspace, kv_table, str(src), max_errors=3, bad_rows=str(tmp_path / "b.jsonl"), progress=False
        )
    r = e.value.result
    assert r.records == 100 and r.rejected == 50 and r.loaded == 50
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 50


def test_unknown_columns_and_a_missing_key_are_refused_before_anything_is_written(
    session, keyspace, kv_table, tmp_path
):
    src = tmp_path / "in.csv"
    src.write_text("k,nope\n1,2\n")
    with pytest.raises(bulk.BulkError, match="has no column nope"):
        bulk.load(session, keyspace, kv_table, str(src), progress=False)
    src.write_text("v\n1\n")
    with pytest.raises(bulk.BulkError, match="no value for partition key column k"):
        bulk.load(session, keyspace, kv_table, str(src), progress=False)
    with pytest.raises(ValueError, match="table .* does not exist"):
        bulk.load(session, keyspace, "no_such_table", str(src), progress=False)
    assert session.execute("SELECT count(*) FROM %s" % kv_table).one()[0] == 0


def test_mapping_no_header_and_dry_run(session, keyspace, kv_table, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("7;x;70\n8;y;80\n")
    dry = bulk.load(
        session,
        keyspace,
        kv_table,
        str(src),
        header=False,
        delimiter=";",
        mapping="a=k,b=t,c=v",
        dry_run=True,
        progress=False,
    )
    assert (dry.records, dry.loaded, dry.rejected) == (2, 2, 0)
    assert session.execute("SELECT count(*) FROM %s" % kv_table).one()[0] == 0
    src.write_text("7;x;70\n8;y;oops\n")
    dry = bulk.load(
        session,
        keyspace,
        kv_table,
        str(src),
        header=False,
        delimiter=";",
        mapping="a=k,b=t,c=v",
        dry_run=True,
        progress=False,
    )
    assert (dry.loaded, dry.rejected) == (1, 1)
    src.write_text("7;x;70\n8;y;80\n")
    bulk.load(session, keyspace, kv_table, str(src), header=False, delimiter=";", mapping="a=k,b=t,c=v", progress=False)
    assert {r.k: (r.v, r.t) for r in session.execute("SELECT * FROM %s" % kv_table)} == {7: (70, "x"), 8: (80, "y")}


def test_split_shares_cover_the_ring_exactly_once(session, keyspace, kv_table, tmp_path):
    ins = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % kv_table)
    execute_concurrent_with_args(session, ins, [(k, k) for k in range(3000)], concurrency=100)
    assert bulk.count(session, keyspace, kv_table) == 3000
    assert sum(bulk.count(session, keyspace, kv_table, split="%d/3" % i, ranges=7) for i in (1, 2, 3)) == 3000
    keys = []
    for i in (1, 2, 3):
        out = tmp_path / ("share%d.csv" % i)
        r = bulk.unload(
            session, keyspace, kv_table, str(out), split="%d/3" % i, ranges=5, concurrency=3, progress=False
        )
        keys += [int(line.split(",")[0].strip('"')) for line in out.read_text().splitlines()[1:]]
        assert r.rows == len(out.read_text().splitlines()) - 1
    assert sorted(keys) == list(range(3000))
    with pytest.raises(ValueError, match="split must be I/N"):
        bulk.count(session, keyspace, kv_table, split="4/3")


def test_load_from_arrow_data_and_unload_of_chosen_columns(session, keyspace, kv_table, tmp_path):
    import pyarrow as pa

    table = pa.table({"k": pa.array(range(10), pa.int32()), "v": pa.array(range(10), pa.int64())})
    assert bulk.load(session, keyspace, kv_table, table, progress=False).loaded == 10
    out = tmp_path / "kv.csv"
    bulk.unload(session, keyspace, kv_table, str(out), columns=["v"], where="v >= 5 ALLOW FILTERING", progress=False)
    assert sorted(int(x.strip('"')) for x in out.read_text().splitlines()[1:]) == [5, 6, 7, 8, 9]


def _cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "turbocql", *args, "--host", HOST, "--port", str(PORT), "--quiet"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_line_load_unload_count(keyspace, kv_table, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("k,v,t\n" + "".join('%d,%d,"t %d"\n' % (i, i * 10, i) for i in range(500)) + "x,1,bad\n")
    bad = tmp_path / "bad.jsonl"
    summary = tmp_path / "summary.json"
    p = _cli(
        "load", "-k", keyspace, "-t", kv_table, "-f", str(src), "--bad-rows", str(bad), "--summary-json", str(summary)
    )
    assert p.returncode == 1, p.stderr  # a row was rejected
    s = json.loads(summary.read_text())
    assert (s["records"], s["loaded"], s["rejected"], s["failed"]) == (501, 500, 1, 0)
    assert "loaded 500 of 501 records" in p.stderr
    p = _cli("count", "-k", keyspace, "-t", kv_table)
    assert p.returncode == 0 and p.stdout.strip() == "500", p.stderr
    p = _cli("unload", "-k", keyspace, "-t", kv_table, "-o", "-", "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert sorted(r["k"] for r in rows) == list(range(500))
    assert all(r["v"] == r["k"] * 10 and r["t"] == "t %d" % r["k"] for r in rows)
    # From stdin.
    p = _cli("load", "-k", keyspace, "-t", kv_table, "--format", "json", stdin='{"k": 1000, "v": 1, "t": "s"}\n')
    assert p.returncode == 0, p.stderr
    p = _cli("load", "-k", keyspace, "-t", "no_such_table", "-f", str(src))
    assert p.returncode == 2 and "does not exist" in p.stderr


def test_ttl_timestamp_and_consistency_are_applied(session, keyspace, kv_table, tmp_path):
    from turbocql import ConsistencyLevel

    src = tmp_path / "in.csv"
    src.write_text("k,v\n1,10\n2,20\n")
    bulk.load(
        session,
        keyspace,
        kv_table,
        str(src),
        ttl=3600,
        timestamp=1_700_000_000_000_000,
        consistency_level=ConsistencyLevel.ALL,
        progress=False,
    )
    rows = session.execute("SELECT k, TTL(v) AS t, WRITETIME(v) AS w FROM %s" % kv_table)
    for r in rows:
        assert 3500 < r.t <= 3600 and r.w == 1_700_000_000_000_000
    # A consistency level the single node cannot meet fails every write, typed and counted.
    with pytest.raises(bulk.BulkError, match="Unavailable|NoHostAvailable"):
        bulk.load(
            session,
            keyspace,
            kv_table,
            str(src),
            consistency_level=ConsistencyLevel.THREE,
            max_errors=0,
            progress=False,
        )


def test_a_session_in_legacy_mode_unloads_and_loads(keyspace, kv_table, tmp_path):
    """Legacy mode (``Cluster(load_balancing_policy=...)``, ``session.row_factory = ...``)
    forbids ``execution_profile`` arguments; the bulk tools read with the profile the
    session's attributes make, its row factory replaced."""
    from turbocql.cluster import Cluster
    from turbocql.policies import RoundRobinPolicy
    from turbocql.query import dict_factory

    with pytest.warns(DeprecationWarning, match="Legacy execution parameters"):
        cluster = Cluster([HOST], port=PORT, load_balancing_policy=RoundRobinPolicy())
    try:
        session = cluster.connect(keyspace)
        session.row_factory = dict_factory
        src = tmp_path / "in.csv"
        src.write_text("k,v\n1,10\n2,20\n")
        assert bulk.load(session, keyspace, kv_table, str(src), progress=False).loaded == 2
        out = tmp_path / "out.csv"
        assert bulk.unload(session, keyspace, kv_table, str(out), progress=False).rows == 2
        assert bulk.count(session, keyspace, kv_table) == 2
        assert session.execute("SELECT v FROM %s WHERE k = 1" % kv_table).one() == {"v": 10}
    finally:
        cluster.shutdown()


@pytest.fixture
def ck_table(session):
    name = "bulk_ck_" + uuid.uuid4().hex[:8]
    session.execute("CREATE TABLE %s (k int, ck int, v text, PRIMARY KEY (k, ck))" % name)
    yield name
    session.execute("DROP TABLE %s" % name)


def test_replica_batches_write_what_rows_one_by_one_write(session, keyspace, ck_table, tmp_path):
    """The same input loaded a request per row and in replica batches gives the same table
    (read by the classic driver): a key repeated later in the input wins in both, and a
    row the server refuses (a null clustering key) fails alone, with its own reason, where
    its batch is sent again a row at a time."""
    pa = pytest.importorskip("pyarrow")
    n = 3000
    k = [i % 1000 for i in range(n)]  # every key three times: the last one must win
    ck = [(i % 1000) % 7 for i in range(n)]
    v = ["v%d" % i for i in range(n)]
    ck[1234] = None
    data = pa.table({"k": pa.array(k, pa.int32()), "ck": pa.array(ck, pa.int32()), "v": v})
    expected = {}
    for i in range(n):
        if ck[i] is not None:
            expected[(k[i], ck[i])] = v[i]
    seen = {}
    for batch_rows in (1, 32):
        session.execute("TRUNCATE %s" % ck_table)
        bad = tmp_path / ("bad-%d.jsonl" % batch_rows)
        result = bulk.load(session, keyspace, ck_table, data, batch_rows=batch_rows, bad_rows=str(bad), progress=False)
        assert (result.records, result.loaded, result.rejected, result.failed) == (n, n - 1, 0, 1), result
        (line,) = [json.loads(x) for x in bad.read_text().splitlines()]
        assert (line["record"], line["kind"]) == (1235, "failed")
        assert "InvalidRequest" in line["error"] and "ck" in line["error"], line
        classic = ClassicCluster([HOST], port=PORT)
        try:
            rows = classic.connect(keyspace).execute("SELECT k, ck, v FROM %s" % ck_table)
            seen[batch_rows] = {(r.k, r.ck): r.v for r in rows}
        finally:
            classic.shutdown()
    assert seen[1] == expected
    assert seen[32] == expected


def test_a_run_with_replica_batches_has_no_result_per_item(session, kv_table):
    from turbocql.cluster import EXEC_PROFILE_DEFAULT
    from turbocql.concurrent import _run

    insert = session.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % kv_table)
    run = _run(session, insert, [(i, i) for i in range(10)], 8, False, True, EXEC_PROFILE_DEFAULT, batch_rows=4)
    with pytest.raises(ValueError, match="no result per item"):
        run.collect()
    run = _run(session, insert, [(i, i) for i in range(10)], 8, False, True, EXEC_PROFILE_DEFAULT, batch_rows=4)
    assert run.failures() == []
    assert session.execute("SELECT count(*) FROM %s" % kv_table).one()[0] == 10
