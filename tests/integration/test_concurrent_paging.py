"""Results of execute_concurrent*, of the asyncio session's execute_concurrent and of a
ReadPipeline page like a ResultSet of ``session.execute``: iteration goes through every
page, ``fetch_next_page()``, ``has_more_pages``, ``paging_state`` and ``current_rows`` work,
with a fetch size smaller than the results (issue 27, item 6).

The classic driver is the oracle: the same calls run through it against the same server
give the same pages. On one node and on the 3-node cluster (where a partition's pages and a
table scan's token ranges come from different replicas).
"""

import asyncio
import uuid

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import drop_keyspace
from turbocql import ConsistencyLevel
from turbocql import concurrent as t_concurrent
from turbocql.cluster import ResultSet

c_cluster = pytest.importorskip("cassandra.cluster")
import cassandra.concurrent as c_concurrent  # noqa: E402
import cassandra.query as c_query  # noqa: E402

import turbocql.query as t_query  # noqa: E402

FETCH = 100
# Rows per partition k: more than a page, exactly a page, less than a page, none.
SIZES = {0: 250, 1: FETCH, 2: 30, 3: 0}
SCAN_ROWS = sum(SIZES.values())


def _fill(session, table):
    ins = session.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % table)
    ins.consistency_level = ConsistencyLevel.ALL  # every replica has every row before reads
    rows = [(k, c, "v%d.%d" % (k, c)) for k, n in SIZES.items() for c in range(n)]
    results = t_concurrent.execute_concurrent_with_args(session, ins, rows, concurrency=50)
    assert all(ok for ok, _ in results)


def _rows(rows):
    return [tuple(r) for r in rows]


def _pages(rs):
    """Every page through fetch_next_page(): [(rows, has_more_pages, has paging_state)]."""
    pages = [(_rows(rs.current_rows), rs.has_more_pages, rs.paging_state is not None)]
    while rs.has_more_pages:
        rs.fetch_next_page()
        pages.append((_rows(rs.current_rows), rs.has_more_pages, rs.paging_state is not None))
    rs.fetch_next_page()  # on the last page: no request, current_rows becomes []
    pages.append((_rows(rs.current_rows), rs.has_more_pages, rs.paging_state is not None))
    return pages


def _iterated(rs):
    return _rows(rs)


def _fetched_then_iterated(rs):
    """Iterating after one fetch_next_page() yields the rows from the second page on."""
    first = len(rs.current_rows)
    rs.fetch_next_page()
    return first, _rows(rs)


# Each statement is run three times; the three results are read these three ways.
READS = (_pages, _iterated, _fetched_then_iterated)


def _tripled(items):
    return [item for item in items for _ in READS]


def _views(results, cls=None):
    """What each result shows: [(success, first page's size, has_more_pages, read)], each
    read as it comes (from a results generator, before the next one is asked for); each
    result an instance of exactly `cls` if given."""
    views = []
    for i, (ok, rs) in enumerate(results):
        assert ok, rs
        assert cls is None or type(rs) is cls, type(rs)
        views.append((ok, len(rs.current_rows), rs.has_more_pages, READS[i % len(READS)](rs)))
    assert views and len(views) % len(READS) == 0
    return views


def _expected_partition(k):
    """The views of `SELECT c, v FROM t WHERE k = k` paged by FETCH, worked out from SIZES."""
    rows = [(c, "v%d.%d" % (k, c)) for c in range(SIZES[k])]
    chunks = [rows[i : i + FETCH] for i in range(0, len(rows), FETCH)] or [[]]
    # The server cannot tell a page that ends the partition exactly: one more, empty, page.
    if len(rows) and len(rows) % FETCH == 0:
        chunks.append([])
    pages = [(chunk, i < len(chunks) - 1, i < len(chunks) - 1) for i, chunk in enumerate(chunks)]
    pages.append(([], False, False))
    more = len(chunks) > 1
    after_first = rows[len(chunks[0]) :]
    return [
        (True, len(chunks[0]), more, pages),
        (True, len(chunks[0]), more, rows),
        (True, len(chunks[0]), more, (len(chunks[0]), after_first)),
    ]


def _check_scan(views):
    """A table scan's views: every row of the table, a page at a time."""
    expected = sorted((k, c, "v%d.%d" % (k, c)) for k, n in SIZES.items() for c in range(n))
    (_, size, more, pages), (_, _, _, rows), (_, first, _, (n, rest)) = views
    assert size == FETCH and more
    assert [len(p) for p, _, _ in pages[:-2]] == [FETCH] * (len(pages) - 2)
    assert sorted(r for p, _, _ in pages for r in p) == expected
    assert sorted(rows) == expected
    assert n == first == FETCH and len(rest) == SCAN_ROWS - FETCH


class _Both:
    """The same table seen through a turbocql session and a classic session."""

    def __init__(self, t_session, c_session, table):
        self.t, self.c, self.table = t_session, c_session, table

    def statements(self, mod, session, fetch_size=FETCH):
        """The partition select prepared (fetch_size set on it) and the scan as a
        SimpleStatement, built with module `mod` (turbocql.query or cassandra.query);
        `fetch_size` None: left unset (an explicit None would mean unpaged)."""
        sel = session.prepare("SELECT c, v FROM %s WHERE k = ?" % self.table)
        scan = mod.SimpleStatement("SELECT k, c, v FROM %s" % self.table)
        if fetch_size is not None:
            sel.fetch_size = scan.fetch_size = fetch_size
        return sel, scan

    def both(self, run):
        """`run(concurrent_module, query_module, session)` through each driver; the
        turbocql results must be ResultSets, as from session.execute."""
        t_views = _views(run(t_concurrent, t_query, self.t), ResultSet)
        c_views = _views(run(c_concurrent, c_query, self.c))
        assert t_views == c_views
        return t_views


KEYS = [0, 1, 2, 3]


def check_with_args(both):
    def run(conc, mod, session):
        sel, _ = both.statements(mod, session)
        return list(conc.execute_concurrent_with_args(session, sel, _tripled([(k,) for k in KEYS]), concurrency=3))

    views = both.both(run)
    for i, k in enumerate(KEYS):
        assert views[3 * i : 3 * i + 3] == _expected_partition(k), k
    assert views[0][1:3] == (FETCH, True)  # not vacuous: the first partition is paged


def check_pairs_and_scan(both):
    def run(conc, mod, session):
        sel, scan = both.statements(mod, session)
        simple = mod.SimpleStatement("SELECT c, v FROM %s WHERE k = %%s" % both.table, fetch_size=FETCH)
        pairs = _tripled([(sel, (0,)), (simple, (0,)), (scan, None), (simple, (2,))])
        return conc.execute_concurrent(session, pairs, concurrency=5, raise_on_first_error=True)

    views = both.both(run)
    assert views[0:3] == views[3:6] == _expected_partition(0)
    _check_scan(views[6:9])
    assert views[9:12] == _expected_partition(2)


def check_session_default_fetch_size(both):
    """No fetch size on the statements: the session's default_fetch_size applies."""

    def run(conc, mod, session):
        sel, scan = both.statements(mod, session, fetch_size=None)
        old = session.default_fetch_size
        session.default_fetch_size = FETCH
        try:
            text = "SELECT c, v FROM %s WHERE k = 0" % both.table
            results = conc.execute_concurrent(session, _tripled([(text, ()), (sel, (0,)), (scan, ())]))
            # read now, while the default applies to further pages too
            views = _views(results, ResultSet if conc is t_concurrent else None)
        finally:
            session.default_fetch_size = old
        return [(True, view) for view in views]

    t_views = [v for _, v in run(t_concurrent, t_query, both.t)]
    c_views = [v for _, v in run(c_concurrent, c_query, both.c)]
    assert t_views == c_views
    assert t_views[0:3] == t_views[3:6] == _expected_partition(0)
    _check_scan(t_views[6:9])


def check_results_generator(both):
    def run(conc, mod, session):
        sel, scan = both.statements(mod, session)
        pairs = _tripled([(sel, (0,)), (scan, None), (sel, (1,))])
        gen = conc.execute_concurrent(session, pairs, concurrency=2, results_generator=True)
        assert not isinstance(gen, list)
        return gen

    views = both.both(run)
    assert views[0:3] == _expected_partition(0)
    _check_scan(views[3:6])
    assert views[6:9] == _expected_partition(1)


def check_async(both):
    def run(conc, mod, session):
        sel, scan = both.statements(mod, session)
        future = conc.execute_concurrent_async(session, _tripled([(sel, (0,)), (scan, None)]), concurrency=4)
        return future.result(timeout=60)

    views = both.both(run)
    assert views[0:3] == _expected_partition(0)
    _check_scan(views[3:6])


def check_aio_session(both, t_cluster):
    """turbocql.aio's Session.execute_concurrent(_with_args): AsyncResultSets, as from its
    execute, whose further pages are awaited (or fetched as a ResultSet's)."""
    from turbocql.aio import AsyncResultSet
    from turbocql.aio import Session as AioSession

    async def run():
        session = AioSession(t_cluster.connect(both.t.keyspace))
        try:
            sel, scan = both.statements(t_query, session._session)
            a = await session.execute_concurrent(_tripled([(sel, (0,)), (scan, None)]))
            b = await session.execute_concurrent_with_args(sel, [(0,), (0,)])
            assert all(type(rs) is AsyncResultSet for _, rs in a + b)
            rows = [tuple(row) async for row in b[0].result_or_exc]
            await b[1].result_or_exc.fetch_next_page_async()
            second = _rows(b[1].result_or_exc.current_rows)
            views = _views(a, AsyncResultSet)  # further pages fetched without awaiting
        finally:
            await session.shutdown()
        return views, rows, second

    a, rows, second = asyncio.run(run())
    assert a[0:3] == _expected_partition(0)
    _check_scan(a[3:6])
    partition = _expected_partition(0)
    assert rows == partition[1][3]
    assert second == partition[0][3][1][0]  # the second page


def check_read_pipeline(both):
    """A ReadPipeline's results page as session.execute's do (the classic driver has no
    pipelines: its session.execute is the oracle)."""
    sel, scan = both.statements(t_query, both.t)
    c_sel, c_scan = both.statements(c_query, both.c)
    rp = t_concurrent.ReadPipeline(both.t, max_in_flight_requests=4, max_unconsumed_read_responses=6)
    items = _tripled([(sel, (0,)), (scan, None), (sel, (2,)), (sel, (1,))])
    for statement, params in items:
        rp.execute(statement, params)
    t_views = _views(((True, rs) for rs in rp.results()), ResultSet)
    c_items = _tripled([(c_sel, (0,)), (c_scan, None), (c_sel, (2,)), (c_sel, (1,))])
    c_views = _views([(True, both.c.execute(s, p)) for s, p in c_items])
    assert t_views == c_views
    assert t_views[0:3] == _expected_partition(0)
    _check_scan(t_views[3:6])
    assert t_views[6:9] == _expected_partition(2)
    assert t_views[9:12] == _expected_partition(1)


CHECKS = [
    check_with_args,
    check_pairs_and_scan,
    check_session_default_fetch_size,
    check_results_generator,
    check_async,
    check_read_pipeline,
]


# --------------------------------------------------------------------------
# One node


@pytest.fixture(scope="module")
def one_node(cluster, keyspace):
    classic = c_cluster.Cluster([HOST], port=PORT, protocol_version=4)
    c_session = classic.connect(keyspace)
    t_session = cluster.connect(keyspace)
    table = "paging_" + uuid.uuid4().hex[:10]
    t_session.execute("CREATE TABLE %s (k int, c int, v text, PRIMARY KEY (k, c))" % table)
    _fill(t_session, table)
    yield _Both(t_session, c_session, table)
    t_session.execute("DROP TABLE IF EXISTS %s" % table)
    t_session.shutdown()
    classic.shutdown()


@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__[len("check_") :])
def test_one_node(one_node, check):
    check(one_node)


def test_one_node_aio_session(one_node, cluster):
    check_aio_session(one_node, cluster)


# --------------------------------------------------------------------------
# Three nodes in two datacenters


@pytest.fixture(scope="module")
def three_nodes(multidc_cluster):
    from turbocql.cluster import Cluster

    t_cluster = Cluster(["127.0.0.11"])
    t_session = t_cluster.connect()
    keyspace = "paging_" + uuid.uuid4().hex[:8]
    t_session.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % keyspace
    )
    t_session.set_keyspace(keyspace)
    t_session.execute("CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))")
    _fill(t_session, "t")
    classic = c_cluster.Cluster(["127.0.0.11"], protocol_version=4)
    c_session = classic.connect(keyspace)
    yield _Both(t_session, c_session, "t"), t_cluster
    try:
        drop_keyspace(t_session, keyspace)
    finally:
        classic.shutdown()
        t_cluster.shutdown()


@pytest.mark.multinode
@pytest.mark.timeout(600)
@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__[len("check_") :])
def test_three_nodes(three_nodes, check):
    check(three_nodes[0])


@pytest.mark.multinode
@pytest.mark.timeout(600)
def test_three_nodes_aio_session(three_nodes):
    check_aio_session(*three_nodes)
