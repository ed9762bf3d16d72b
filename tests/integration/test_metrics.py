"""``Cluster(metrics_enabled=True)``: ``cluster.metrics`` counted by the engine, next to the
classic driver's on the same workload and the same faults (the classic metrics need
``scales``, in the test requirements).

On the single node: successful requests on every path, an Unavailable (the default retry
policy tries the next host: one retry) and an ignored one; the host gauges. On the 3-node
cluster: a write timeout and a read timeout from a frozen replica. The counters' changes
must be equal; the latencies plausible (between the fastest and the slowest request, the
timeouts among the slowest).
"""

import asyncio
import time
import warnings

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import frozen_nodes
from turbocql import ConsistencyLevel
from turbocql.aio import Session as AioSession
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from turbocql.concurrent import ReadPipeline, execute_concurrent_with_args
from turbocql.metrics import COUNTERS, TIMER_KEYS, PrometheusCollector
from turbocql.policies import RetryPolicy, WhiteListRoundRobinPolicy
from turbocql.query import SimpleStatement

pytest.importorskip("greplin.scales")

from cassandra import ConsistencyLevel as CCL  # noqa: E402 - the classic driver, after the skip
from cassandra import policies as cpol  # noqa: E402
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT  # noqa: E402
from cassandra.cluster import Cluster as ClassicCluster  # noqa: E402
from cassandra.cluster import ExecutionProfile as CProfile  # noqa: E402
from cassandra.query import SimpleStatement as CStatement  # noqa: E402

pytestmark = pytest.mark.timeout(300)
N = 60


def _counts(metrics):
    stats = metrics.stats
    counts = {name: getattr(stats, name) for name in COUNTERS}
    counts["requests"] = metrics.request_timer["count"]
    return counts


def _delta(before, after):
    return {k: after[k] - before[k] for k in before if after[k] != before[k]}


class IgnoreUnavailable(RetryPolicy):
    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        return self.IGNORE, None


class ClassicIgnoreUnavailable(cpol.RetryPolicy):
    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        return self.IGNORE, None


def _workload_single(session, ks, stmt_cls, cl_two, ignore_profile):
    """Per step, the counters' change: N reads; an Unavailable (CL TWO on one node); the
    same with a policy that ignores it."""
    steps = {}
    metrics = session.cluster.metrics
    select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
    before = _counts(metrics)
    for k in range(N):
        session.execute(select, (k,))
    steps["reads"] = _delta(before, _counts(metrics))
    before = _counts(metrics)
    with pytest.raises(Exception) as info:
        session.execute(stmt_cls("SELECT v FROM %s.t WHERE k = 1" % ks, consistency_level=cl_two))
    assert type(info.value).__name__ == "NoHostAvailable", info.value
    steps["unavailable"] = _delta(before, _counts(metrics))
    before = _counts(metrics)
    rs = session.execute(
        stmt_cls("SELECT v FROM %s.t WHERE k = 1" % ks, consistency_level=cl_two), execution_profile=ignore_profile
    )
    assert not list(rs)
    steps["ignored"] = _delta(before, _counts(metrics))
    return steps


@pytest.fixture(scope="module")
def metrics_ks(cassandra):
    c = Cluster([HOST], port=PORT)
    s = c.connect()
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS metrics_ks "
        "WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    s.execute("CREATE TABLE IF NOT EXISTS metrics_ks.t (k int PRIMARY KEY, v int)")
    for k in range(N):
        s.execute("INSERT INTO metrics_ks.t (k, v) VALUES (%s, %s)", (k, k))
    c.shutdown()
    return "metrics_ks"


def test_counters_match_the_classic_driver_on_one_node(metrics_ks):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cc = ClassicCluster(
            [HOST],
            port=PORT,
            protocol_version=4,
            metrics_enabled=True,
            execution_profiles={
                C_DEFAULT: CProfile(),
                "ignore": CProfile(retry_policy=ClassicIgnoreUnavailable()),
            },
        )
    tc = Cluster(
        [HOST],
        port=PORT,
        metrics_enabled=True,
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(),
            "ignore": ExecutionProfile(retry_policy=IgnoreUnavailable()),
        },
    )
    try:
        classic = _workload_single(cc.connect(), metrics_ks, CStatement, CCL.TWO, "ignore")
        ours = _workload_single(tc.connect(), metrics_ks, SimpleStatement, ConsistencyLevel.TWO, "ignore")
        assert classic == {
            "reads": {"requests": N},
            "unavailable": {"requests": 1, "unavailables": 1, "retries": 1},
            "ignored": {"requests": 1, "unavailables": 1, "ignores": 1},
        }
        assert ours == classic
        # The host gauges, as classic on one node.
        # The host gauges on one node: one host, connected, one connection (as the classic
        # driver's pool of protocol v4 holds; its own gauges read its pools, which it may
        # be refilling at this moment, so only its host count is compared).
        assert tc.metrics.stats.known_hosts == cc.metrics.stats.known_hosts() == 1  # scales keeps the function
        assert tc.metrics.stats.connected_to == tc.metrics.stats.open_connections == 1
        timer = tc.metrics.request_timer
        assert set(timer) == set(TIMER_KEYS) == set(cc.metrics.request_timer)
        assert 0 < timer["min"] <= timer["median"] <= timer["99percentile"] <= timer["max"] < 10
        assert timer["min"] <= timer["mean"] <= timer["max"]
        stats = tc.metrics.get_stats()
        assert stats["request_timer"]["count"] == timer["count"] and stats["unavailables"] == 2
    finally:
        cc.shutdown()
        tc.shutdown()


def test_every_path_is_timed(metrics_ks):
    cluster = Cluster([HOST], port=PORT, metrics_enabled=True)
    try:
        session = cluster.connect()
        select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % metrics_ks)
        timer = cluster.metrics.request_timer

        def counted(run):
            before = timer["count"]
            run()
            return timer["count"] - before

        assert counted(lambda: [session.execute_async(select, (k,)).result() for k in range(N)]) == N
        assert counted(lambda: execute_concurrent_with_args(session, select, [(k,) for k in range(N)])) == N

        def pipeline():
            with ReadPipeline(session) as p:
                for k in range(N):
                    p.execute(select, (k,))
                assert len(list(p.results())) == N

        assert counted(pipeline) == N

        async def aio():
            s = AioSession(session)
            await asyncio.gather(*(s.execute(select, (k,)) for k in range(N)))

        assert counted(lambda: asyncio.run(aio())) == N
        # A paged read: one entry per page, as the classic driver times each page (four full
        # pages; the server may send an empty fifth after a full last one).
        paged = SimpleStatement("SELECT v FROM %s.t" % metrics_ks, fetch_size=N // 4)
        assert counted(lambda: list(session.execute(paged))) in (4, 5)
        # The cluster's own reads of the system tables are not counted.
        assert counted(lambda: cluster.refresh_schema_metadata()) == 0
    finally:
        cluster.shutdown()


def test_metrics_off_by_default_and_the_name_rules():
    cluster = Cluster([HOST], port=PORT)
    assert cluster.metrics is None
    with pytest.raises(ValueError):
        PrometheusCollector(cluster)
    a = Cluster([HOST], port=PORT, metrics_enabled=True)
    b = Cluster([HOST], port=PORT, metrics_enabled=True)
    assert a.metrics.stats_name != b.metrics.stats_name
    a.metrics.set_stats_name("turbocql-a")
    assert a.metrics.stats_name == "turbocql-a"
    with pytest.raises(ValueError, match="already exists"):
        b.metrics.set_stats_name("turbocql-a")


def test_prometheus_collector_exposes_the_counters(metrics_ks):
    prometheus_client = pytest.importorskip("prometheus_client")
    cluster = Cluster([HOST], port=PORT, metrics_enabled=True)
    try:
        session = cluster.connect()
        for k in range(5):
            session.execute("SELECT v FROM %s.t WHERE k = %%s" % metrics_ks, (k,))
        registry = prometheus_client.CollectorRegistry()
        registry.register(PrometheusCollector(cluster))
        labels = {"cluster": cluster.metrics.stats_name}
        assert registry.get_sample_value("cassandra_client_requests_count", labels) == 5
        assert registry.get_sample_value("cassandra_client_unavailables_total", labels) == 0
        assert registry.get_sample_value("cassandra_client_known_hosts", labels) == 1
        p99 = registry.get_sample_value("cassandra_client_request_latency_seconds", dict(labels, quantile="0.99"))
        assert 0 < p99 < 10
        text = prometheus_client.generate_latest(registry).decode()
        assert "cassandra_client_requests_sum" in text
    finally:
        cluster.shutdown()


# --------------------------------------------------------------------------
# Timeouts on the 3-node cluster: a frozen replica


@pytest.mark.multinode
def test_timeouts_are_counted_as_the_classic_driver_counts_them(multidc_cluster):
    coordinator = "127.0.0.11"
    c = Cluster([coordinator])
    s = c.connect()
    ks = "metrics_frozen"
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
        "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}" % ks
    )
    s.execute("CREATE TABLE IF NOT EXISTS %s.t (k int PRIMARY KEY, v int)" % ks)
    s.execute("INSERT INTO %s.t (k, v) VALUES (1, 1)" % ks)
    c.shutdown()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cc = ClassicCluster(
            [coordinator],
            protocol_version=4,
            metrics_enabled=True,
            execution_profiles={C_DEFAULT: CProfile(cpol.WhiteListRoundRobinPolicy([coordinator]), request_timeout=20)},
        )
    tc = Cluster(
        [coordinator],
        metrics_enabled=True,
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(WhiteListRoundRobinPolicy([coordinator]), request_timeout=20)
        },
    )
    try:
        deltas = {}
        for name, cluster, stmt_cls, all_cl in (
            ("classic", cc, CStatement, CCL.ALL),
            ("turbocql", tc, SimpleStatement, ConsistencyLevel.ALL),
        ):
            session = cluster.connect(ks)
            session.execute("SELECT v FROM t WHERE k = 1")  # warm
            before = _counts(cluster.metrics)
            started = time.monotonic()
            with frozen_nodes(multidc_cluster, 2):
                with pytest.raises(Exception) as wt:
                    session.execute(stmt_cls("INSERT INTO t (k, v) VALUES (2, 2)", consistency_level=all_cl))
            with frozen_nodes(multidc_cluster, 2):
                with pytest.raises(Exception) as rt:
                    session.execute(stmt_cls("SELECT v FROM t WHERE k = 1", consistency_level=all_cl))
            took = time.monotonic() - started
            assert type(wt.value).__name__ == "WriteTimeout" and type(rt.value).__name__ == "ReadTimeout"
            deltas[name] = _delta(before, _counts(cluster.metrics))
            # The two timed-out requests are the slowest seen (server timeouts of 2 s and 5 s).
            assert cluster.metrics.request_timer["max"] <= took + 0.5
            assert cluster.metrics.request_timer["max"] >= 1.0
        assert deltas["classic"] == {"requests": 2, "write_timeouts": 1, "read_timeouts": 1}
        assert deltas["turbocql"] == deltas["classic"]
    finally:
        cc.shutdown()
        tc.shutdown()
