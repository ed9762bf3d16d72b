"""Row 6 of the reliability matrix: prepared statements the server no longer knows
(``UNPREPARED``), after ``ALTER TABLE`` and after a node restart.

Cassandra evicts every prepared statement of a table when the table is altered (and
removes it from ``system.prepared_statements``); a restart keeps them (they are reloaded
from ``system.prepared_statements``) unless that table is emptied while the node is down,
which the restart test does. The next execution of such a statement gets ``UNPREPARED``;
the driver must prepare it again and run it, transparently, on every path, with the
result rows mapped to the table's columns as they are now.

Each path has a statement of its own (the same CQL with a comment naming the path: another
statement id), so that each path meets ``UNPREPARED`` itself; that it did is checked on the
server: the statement's id is absent from ``system.prepared_statements`` before the
execution and present after it (the driver prepared it again).

The classic driver (3.30.1, protocol v4) is run on the same, and maps the rows right too:
its known stale result metadata for ``SELECT *`` (it asks the server to skip the metadata
and decodes with what it prepared) does not show against Cassandra 5.0, which evicts the
statement at the ALTER (the classic driver takes the new metadata when it prepares again)
and, when the other driver has prepared the shared statement again first
(:func:`test_statement_prepared_again_by_another_client`), sends the rows with their
metadata even though the classic driver asked to skip it (observed: its cached result
metadata stays ``[k, a, b]`` while its rows come with ``aa``). turbocql asks for the result
metadata with every response (the crate's default), so it cannot decode with stale
column names whatever the server.

Uses its own node on 127.0.0.1:9047 (started, restarted and stopped here).
"""

import asyncio
import glob
import os
import time
import uuid

import pytest

import turbocql_localdb as localdb
from benchmarks.harness import reliability
from tests.conftest import HOST, PORT
from turbocql import InvalidRequest
from turbocql.concurrent import (
    ReadPipeline,
    WritePipeline,
    execute_concurrent,
    execute_concurrent_with_args,
)
from turbocql.query import BatchStatement

# Its own port: 9043 auth, 9044/9045 TLS, 9046 test_server_stop, 9048 test_shutdown (which
# runs in the other lane of scripts/test.sh, at the same time).
REPREPARE_PORT = PORT + 5
KS = "reprepare_ks"

SELECT_PATHS = (
    "execute",
    "execute_async",
    "execute_concurrent",
    "execute_concurrent_with_args",
    "read_pipeline",
    "aio",
)
INSERT_PATHS = ("execute", "execute_async", "execute_concurrent_with_args", "write_pipeline", "aio", "batch")


class Node:
    def __init__(self, d):
        self.dir = d

    def start(self):
        return localdb.start(dir=self.dir, port=REPREPARE_PORT, heap="768M", timeout=300, out=lambda *a, **k: None)

    def stop(self):
        localdb.stop(dir=self.dir, port=REPREPARE_PORT)

    def restart(self, forget_prepared):
        """Stops the node, empties its ``system.prepared_statements`` (its SSTables, and the
        commit log: the shutdown flushed the tables) if ``forget_prepared``, starts it."""
        t0 = time.monotonic()
        self.stop()
        if forget_prepared:
            doomed = glob.glob(os.path.join(self.dir, "data", "system", "prepared_statements-*", "*"))
            doomed += glob.glob(os.path.join(self.dir, "commitlog", "*"))
            assert doomed, "no prepared_statements SSTable to remove in %s" % self.dir
            for f in doomed:
                if os.path.isfile(f):
                    os.remove(f)
        self.start()
        return time.monotonic() - t0


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Node(str(tmp_path_factory.mktemp("reprepare-node")))
    n.start()
    yield n
    n.stop()


@pytest.fixture(scope="module")
def sessions(node):
    """(turbocql session, its asyncio twin, classic session)."""
    from cassandra.cluster import Cluster as ClassicCluster
    from cassandra.policies import ConstantReconnectionPolicy as ClassicConstantReconnectionPolicy

    from turbocql.aio import Session as AioSession
    from turbocql.cluster import Cluster
    from turbocql.policies import ConstantReconnectionPolicy

    # Both reconnect every second: the restarts here are about preparing again, and with the
    # default exponential schedule a restart slowed by a loaded machine left the next
    # reconnection 64 s away, past _wait_until_usable's minute (a CI rehearsal failed so).
    cluster = Cluster([HOST], port=REPREPARE_PORT, reconnection_policy=ConstantReconnectionPolicy(1.0, None))
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % KS
    )
    session.set_keyspace(KS)
    # reprepare_on_up=False: otherwise the classic driver prepares its statements again as
    # soon as the restarted node is up, and never meets UNPREPARED.
    classic_cluster = ClassicCluster(
        [HOST],
        port=REPREPARE_PORT,
        protocol_version=4,
        schema_metadata_enabled=False,
        reprepare_on_up=False,
        reconnection_policy=ClassicConstantReconnectionPolicy(1.0, None),
    )
    classic = classic_cluster.connect(KS)
    yield session, AioSession(session), classic
    classic_cluster.shutdown()
    cluster.shutdown()


def _known(session):
    """Ids of the statements the node has prepared now (hex)."""
    return {r.prepared_id.hex() for r in session.execute("SELECT prepared_id FROM system.prepared_statements")}


def _as_dicts(rows):
    return [r._asdict() for r in rows]


def select(path, session, aio, statement, key):
    """The rows (as dicts) of ``statement`` for ``key``, through ``path``; and the column names."""
    if path == "execute":
        rs = session.execute(statement, (key,))
    elif path == "execute_async":
        rs = session.execute_async(statement, (key,)).result()
    elif path == "execute_concurrent":
        ((ok, rs),) = execute_concurrent(session, [(statement, (key,))])
        assert ok, rs
    elif path == "execute_concurrent_with_args":
        ((ok, rs),) = execute_concurrent_with_args(session, statement, [(key,)])
        assert ok, rs
    elif path == "read_pipeline":
        with ReadPipeline(session) as p:
            p.execute(statement, (key,))
            (rs,) = list(p.results())
    elif path == "aio":

        async def run():
            return await aio.execute(statement, (key,))

        rs = asyncio.run(run())
    else:
        raise AssertionError(path)
    return _as_dicts(rs), list(rs.column_names)


def insert(path, session, aio, statement, values):
    if path == "execute":
        session.execute(statement, values)
    elif path == "execute_async":
        session.execute_async(statement, values).result()
    elif path == "execute_concurrent_with_args":
        ((ok, rs),) = execute_concurrent_with_args(session, statement, [values])
        assert ok, rs
    elif path == "write_pipeline":
        with WritePipeline(session) as p:
            p.execute(statement, values)
    elif path == "aio":

        async def run():
            return await aio.execute(statement, values)

        asyncio.run(run())
    elif path == "batch":
        batch = BatchStatement()
        batch.add(statement, values)
        batch.add(statement, (values[0] + 1,) + tuple(values[1:]))
        session.execute(batch)
    else:
        raise AssertionError(path)


class Statements:
    """One SELECT * and one INSERT per path (and the classic driver's own), on ``table``."""

    def __init__(self, session, classic, table, insert_columns):
        self.table = table
        self.sel = {p: session.prepare("SELECT * FROM %s WHERE k = ? /* %s */" % (table, p)) for p in SELECT_PATHS}
        self.classic_sel = classic.prepare("SELECT * FROM %s WHERE k = ? /* classic */" % table)
        self.prepare_inserts(session, classic, insert_columns)

    def prepare_inserts(self, session, classic, columns):
        cols = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        table = self.table
        self.ins = {
            p: session.prepare("INSERT INTO %s (%s) VALUES (%s) /* %s */" % (table, cols, marks, p))
            for p in INSERT_PATHS
        }
        self.classic_ins = classic.prepare("INSERT INTO %s (%s) VALUES (%s) /* classic */" % (table, cols, marks))

    def ids(self):
        out = {"select " + p: s.query_id.hex() for p, s in self.sel.items()}
        out.update({"insert " + p: s.query_id.hex() for p, s in self.ins.items()})
        out["classic select"] = self.classic_sel.query_id.hex()
        out["classic insert"] = self.classic_ins.query_id.hex()
        return out


def _check_every_path(session, aio, classic, st, expected, first_key, values_of):
    """Every path's SELECT * returns ``expected`` (a dict per key) with those column names;
    every path's INSERT writes, and reads back right; the classic driver's too."""
    names = list(next(iter(expected.values())))
    for n, path in enumerate(SELECT_PATHS):
        key = sorted(expected)[n % len(expected)]
        rows, columns = select(path, session, aio, st.sel[path], key)
        assert columns == names, (path, columns, names)
        assert rows == [expected[key]], (path, rows, expected[key])
    crs = classic.execute(st.classic_sel, (sorted(expected)[0],))
    assert list(crs.column_names) == names and _as_dicts(crs) == [expected[sorted(expected)[0]]], _as_dicts(crs)
    written = {}
    for n, path in enumerate(INSERT_PATHS):
        key = first_key + 10 * n
        insert(path, session, aio, st.ins[path], values_of(key))
        written[key] = path
    classic.execute(st.classic_ins, values_of(first_key + 1000))
    for key, path in sorted(written.items()) + [(first_key + 1000, "classic")]:
        rows, _ = select("execute", session, aio, st.sel["execute"], key)
        assert len(rows) == 1 and rows[0]["k"] == key, (path, rows)
    return written


@pytest.mark.timeout(180)
def test_alter_table_add_and_drop_columns(sessions):
    """A prepared ``SELECT *`` and INSERT on every path, then ``ALTER TABLE ... ADD`` a
    column (twice: one after the others, one sorting between them) and ``DROP`` one: after
    each, the statements run again (UNPREPARED, prepared again), and each row maps every
    value to its column's name. After the DROP, an INSERT naming the dropped column fails
    with InvalidRequest (in both drivers); one that does not keeps working."""
    session, aio, classic = sessions
    table = "t_" + uuid.uuid4().hex[:10]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, a text, b int)" % table)
    for k in (1, 2):
        session.execute("INSERT INTO %s (k, a, b) VALUES (%d, 'a%d', %d)" % (table, k, k, 10 * k))
    st = Statements(session, classic, table, ("k", "a", "b"))
    ids = st.ids()

    def expected(*columns):
        values = {"a": lambda k: "a%d" % k, "b": lambda k: 10 * k, "c": lambda k: "c%d" % k, "aa": lambda k: 100 * k}
        return {k: {"k": k, **{c: values[c](k) for c in columns}} for k in (1, 2)}

    _check_every_path(session, aio, classic, st, expected("a", "b"), 100, lambda k: (k, "x", k))
    steps = []
    for alter, then, columns in (
        ("ADD c text", "UPDATE %s SET c = 'c%d' WHERE k = %d", ("a", "b", "c")),
        ("ADD aa int", "UPDATE %s SET aa = %d WHERE k = %d", ("a", "aa", "b", "c")),
        ("DROP a", None, ("aa", "b", "c")),
    ):
        assert set(ids.values()) <= _known(session)
        session.execute("ALTER TABLE %s %s" % (table, alter))
        assert not set(ids.values()) & _known(session), "the ALTER evicts the table's statements"
        for k in (1, 2):
            if then is not None:
                session.execute(then % (table, k if "c =" in then else 100 * k, k))
        t0 = time.monotonic()
        if alter.startswith("DROP"):
            # The INSERTs name the dropped column: they cannot work any more.
            for path in INSERT_PATHS:
                with pytest.raises(InvalidRequest, match="Undefined column name a"):
                    insert(path, session, aio, st.ins[path], (500, "x", 500))
            from cassandra import InvalidRequest as ClassicInvalidRequest

            with pytest.raises(ClassicInvalidRequest, match="Undefined column name a"):
                classic.execute(st.classic_ins, (500, "x", 500))
            # INSERTs that do not name it (prepared now; the SELECTs are still evicted).
            st.prepare_inserts(session, classic, ("k", "b"))
            ids = st.ids()
            _check_every_path(session, aio, classic, st, expected(*columns), 500, lambda k: (k, k))
        else:
            _check_every_path(
                session, aio, classic, st, expected(*columns), 200 * (len(steps) + 1), lambda k: (k, "x", k)
            )
        assert set(ids.values()) <= _known(session), "every path prepared its statement again"
        steps.append("%s: every path %.2f s" % (alter, time.monotonic() - t0))
    session.execute("DROP TABLE %s" % table)
    reliability.record(
        "6",
        "alter-table",
        injected="ALTER TABLE ADD c, ADD aa (sorting between a and b), DROP a, with a prepared SELECT * and INSERT "
        "per path (%d paths) and the classic driver's" % len(set(SELECT_PATHS) | set(INSERT_PATHS)),
        requests=3 * (len(SELECT_PATHS) + len(INSERT_PATHS) + 2),
        succeeded=3 * (len(SELECT_PATHS) + len(INSERT_PATHS) + 2),
        failed={"InvalidRequest": len(INSERT_PATHS) + 1},
        lost=0,
        hung=0,
        notes="every statement evicted by the ALTER was prepared again on its first execution, with the rows "
        "mapped right, in both drivers; the INSERTs naming the dropped column fail with InvalidRequest "
        "(both drivers). %s" % "; ".join(steps),
    )


def _wait_until_usable(session, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            session.execute("SELECT key FROM system.local")
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.timeout(300)
def test_node_restart(node, sessions):
    """A prepared ``SELECT *`` and INSERT per path, then the node restarted twice: as is
    (the node reloads its prepared statements: no UNPREPARED), and with its
    ``system.prepared_statements`` emptied while it is down (every statement UNPREPARED).
    Each time every statement runs again transparently on its path (the batch's included),
    with the right rows; the classic driver's too."""
    session, aio, classic = sessions
    table = "r_" + uuid.uuid4().hex[:10]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, a text, b int)" % table)
    for k in (1, 2):
        session.execute("INSERT INTO %s (k, a, b) VALUES (%d, 'a%d', %d)" % (table, k, k, 10 * k))
    st = Statements(session, classic, table, ("k", "a", "b"))
    ids = set(st.ids().values())
    expected = {k: {"k": k, "a": "a%d" % k, "b": 10 * k} for k in (1, 2)}
    _check_every_path(session, aio, classic, st, expected, 100, lambda k: (k, "x", k))
    assert ids <= _known(session)
    figures = []
    for n, forget in enumerate((False, True)):
        restart_s = node.restart(forget_prepared=forget)
        t0 = time.monotonic()
        _wait_until_usable(session)
        reconnect_s = time.monotonic() - t0
        known = _known(session)
        if forget:
            assert not ids & known, "the restarted node must not know the statements"
        else:
            assert ids <= known, "a plain restart keeps the prepared statements"
        _wait_until_usable(classic)
        t1 = time.monotonic()
        _check_every_path(session, aio, classic, st, expected, 10_000 * (n + 2), lambda k: (k, "x", k))
        paths_s = time.monotonic() - t1
        assert ids <= _known(session), "every statement prepared again"
        figures.append(
            "%s: restart %.1f s, session usable %.1f s later, every path %.2f s"
            % ("prepared statements forgotten" if forget else "plain restart", restart_s, reconnect_s, paths_s)
        )
    count = session.execute("SELECT count(*) FROM %s" % table).one()[0]
    # 2 rows, and per check: one row per INSERT path (two for the batch) and the classic one.
    assert count == 2 + 3 * (len(INSERT_PATHS) + 1 + 1)
    session.execute("DROP TABLE %s" % table)
    reliability.record(
        "6",
        "node-restart",
        injected="node restarted as is, then with system.prepared_statements emptied while down, with a "
        "prepared SELECT * and INSERT per path and the classic driver's (reprepare_on_up=False)",
        requests=2 * (len(SELECT_PATHS) + len(INSERT_PATHS) + 2),
        succeeded=2 * (len(SELECT_PATHS) + len(INSERT_PATHS) + 2),
        failed={},
        lost=0,
        hung=0,
        notes="; ".join(figures) + "; no write lost across the restarts",
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("first", ["classic", "turbocql"])
def test_statement_prepared_again_by_another_client(sessions, first):
    """The case where a driver that skips the result metadata would map columns wrong: the
    same ``SELECT *`` prepared by both drivers (one statement id on the server), the table
    altered, and the other driver executing it first (it meets UNPREPARED and prepares it
    again); the second then runs the statement the server knows again, without UNPREPARED.
    Both map the columns right (Cassandra 5.0 sends the result metadata with the rows then,
    though the classic driver asks to skip it)."""
    session, aio, classic = sessions
    table = "o_" + uuid.uuid4().hex[:10]
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, a text, b int)" % table)
    session.execute("INSERT INTO %s (k, a, b) VALUES (1, 'a1', 10)" % table)
    cql = "SELECT * FROM %s WHERE k = ?" % table
    ours, theirs = session.prepare(cql), classic.prepare(cql)
    assert ours.query_id == theirs.query_id
    for s, p in ((session, ours), (classic, theirs)):
        assert _as_dicts(s.execute(p, (1,))) == [{"k": 1, "a": "a1", "b": 10}]
    session.execute("ALTER TABLE %s ADD aa int" % table)
    session.execute("UPDATE %s SET aa = 5 WHERE k = 1" % table)
    assert ours.query_id.hex() not in _known(session)
    expected = [{"k": 1, "a": "a1", "aa": 5, "b": 10}]
    order = [(classic, theirs), (session, ours)] if first == "classic" else [(session, ours), (classic, theirs)]
    got = []
    for s, p in order:
        rs = s.execute(p, (1,))
        got.append((list(rs.column_names), _as_dicts(rs)))
    assert ours.query_id.hex() in _known(session)
    assert got == [(list(expected[0]), expected)] * 2, got
    # Many times over, on every SELECT path of turbocql.
    for path in SELECT_PATHS:
        assert select(path, session, aio, ours, 1) == (expected, list(expected[0])), path
    session.execute("DROP TABLE %s" % table)
