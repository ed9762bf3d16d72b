"""Where requests go, for each load-balancing policy and execution profile, next to the
classic driver doing the same.

Measured on the 3-node cluster (127.0.0.11 and .12 in dc1, .13 in dc2) from each node's
``system_views.clients``: the requests each node served on the connections of the session
under test (tests/integration/_clients.py; background requests such as keepalives are
bounded by ``NOISE`` per node and window). The keyspace is replicated
``{'dc1': 2, 'dc2': 1}``; the token-aware test uses one replicated ``{'dc1': 1, 'dc2': 1}``
(with two replicas in a two-node DC every dc1 node holds every key, and token awareness
would not show), the consistency and retry tests one replicated ``{'dc1': 1}``.

The last test stops node 3 (and starts it again): it must stay the last of the module.
"""

import asyncio
import contextlib
import struct
import time
import uuid

import pytest

from tests.integration._clients import NOISE, RequestCounter, classic_cluster, receiving
from tests.integration.conftest import drop_keyspace
from turbocql import ConsistencyLevel, Unavailable
from turbocql.aio import Session as AioSession
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from turbocql.concurrent import ReadPipeline, WritePipeline, execute_concurrent_with_args
from turbocql.policies import (
    DCAwareRoundRobinPolicy,
    FallthroughRetryPolicy,
    HostFilterPolicy,
    RetryPolicy,
    RoundRobinPolicy,
    TokenAwarePolicy,
    WhiteListRoundRobinPolicy,
)

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(300)]

pytest.importorskip("cassandra.cluster")

from cassandra import policies as cpol  # noqa: E402 - the classic driver, after the skip
from cassandra.cluster import EXEC_PROFILE_DEFAULT as C_DEFAULT  # noqa: E402
from cassandra.cluster import Cluster as CCluster  # noqa: E402
from cassandra.cluster import ExecutionProfile as CProfile  # noqa: E402
from cassandra.cluster import NoHostAvailable as CNoHostAvailable  # noqa: E402

N1, N2, N3 = "127.0.0.11", "127.0.0.12", "127.0.0.13"
NODES = (N1, N2, N3)
DC1 = {N1, N2}
# Requests per measured workload: a third prepared INSERTs, a third prepared SELECTs by
# key, a third simple SELECTs by key.
N = 300


# --------------------------------------------------------------------------
# Fixtures and helpers


@pytest.fixture(scope="module")
def counter(multidc_cluster):
    rc = RequestCounter(NODES)
    yield rc
    rc.close()


@pytest.fixture(scope="module")
def keyspaces(multidc_cluster):
    """``{"main": {'dc1': 2, 'dc2': 1}, "one_each": {'dc1': 1, 'dc2': 1}, "single":
    {'dc1': 1}}`` -> keyspace names, each with ``t (k int PRIMARY KEY, v int)``; created
    with the classic driver (waiting for schema agreement), dropped at the end."""
    suffix = uuid.uuid4().hex[:8]
    replication = {
        "main": "'dc1': 2, 'dc2': 1",
        "one_each": "'dc1': 1, 'dc2': 1",
        "single": "'dc1': 1",
    }
    names = {key: "routing_%s_%s" % (key, suffix) for key in replication}
    admin = classic_cluster([N1], max_schema_agreement_wait=60, schema_metadata_enabled=True)
    session = admin.connect()
    try:
        for key, rf in replication.items():
            for ddl in (
                "CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', %s}" % (names[key], rf),
                "CREATE TABLE %s.t (k int PRIMARY KEY, v int)" % names[key],
            ):
                rs = session.execute(ddl, timeout=60)
                assert rs.response_future.is_schema_agreed, "no schema agreement after %r" % ddl
        yield names
    finally:
        try:
            for name in names.values():
                drop_keyspace(session, name)
        finally:
            admin.shutdown()


def _wait(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.1)


@contextlib.contextmanager
def turbocql(counter, contact_points=(N1,), keyspace=None, **kwargs):
    """A connected turbocql session and the selector of its connections: yields
    ``(cluster, session, selector)`` once the session has a pool to every node (all UP)."""
    before = counter.turbocql_session_ids()
    cluster = Cluster(list(contact_points), **kwargs)
    try:
        session = cluster.connect(keyspace)
        _wait(lambda: all(h.is_up for h in session._session.nodes()), 30, "turbocql to see every node up")
        assert len(session._session.nodes()) == 3
        yield cluster, session, counter.turbocql_connections(before)
    finally:
        cluster.shutdown()


@contextlib.contextmanager
def classic(counter, contact_points=(N1,), keyspace=None, **kwargs):
    """A connected classic session (every pool open) and the selector of its connections."""
    cluster = classic_cluster(contact_points, **kwargs)
    try:
        session = cluster.connect(keyspace, wait_for_all_pools=True)
        yield cluster, session, counter.classic_connections(session)
    finally:
        cluster.shutdown()


class Workload:
    """``N`` requests by key on ``keyspace.t``, the same through either driver: prepared
    INSERTs, prepared SELECTs and simple SELECTs. Statements are prepared here, before any
    measuring (a prepare goes to every node)."""

    def __init__(self, session, keyspace, insert=None, select=None):
        self.session = session
        self.keyspace = keyspace
        self.insert = insert or session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % keyspace)
        self.select = select or session.prepare("SELECT v FROM %s.t WHERE k = ?" % keyspace)
        self.simple = "SELECT v FROM %s.t WHERE k = %%s" % keyspace

    def run(self, n=N, **kwargs):
        for k in range(n // 3):
            self.session.execute(self.insert, (k, k), **kwargs)
            self.session.execute(self.select, (k,), **kwargs)
            self.session.execute(self.simple, (k,), **kwargs)


def assert_only(deltas, nodes, total=N, spread=True, who="turbocql"):
    """``total`` requests went to ``nodes`` and (beyond noise) nowhere else; with
    ``spread``, every one of ``nodes`` got a fair share (a tenth of them at least)."""
    nodes = set(nodes)
    others = {a: n for a, n in deltas.items() if a not in nodes}
    assert all(n <= NOISE for n in others.values()), "%s: requests outside %s: %s" % (who, sorted(nodes), deltas)
    assert sum(deltas[a] for a in nodes) >= total - NOISE * len(others), "%s: requests missing: %s" % (who, deltas)
    assert sum(deltas.values()) <= total + NOISE * len(deltas), "%s: more requests than sent: %s" % (who, deltas)
    if spread:
        for a in nodes:
            assert deltas[a] >= total // (10 * len(nodes)), "%s: %s got too few: %s" % (who, a, deltas)


def _profiles(turbocql_lbp, **kwargs):
    return {"execution_profiles": {EXEC_PROFILE_DEFAULT: ExecutionProfile(turbocql_lbp, **kwargs)}}


def _classic_profiles(classic_lbp, **kwargs):
    return {"execution_profiles": {C_DEFAULT: CProfile(load_balancing_policy=classic_lbp, **kwargs)}}


def _measure_workload(counter, session, selector, keyspace, **kwargs):
    work = Workload(session, keyspace)
    return counter.measure(selector, lambda: work.run(**kwargs))


# --------------------------------------------------------------------------
# 1. The default profile: local DC from the contact point


def test_default_profile_infers_local_dc_from_the_contact_point(counter, keyspaces):
    ks = keyspaces["main"]
    with turbocql(counter, contact_points=(N3,)) as (cluster, session, sel):
        assert cluster.profile_manager.default.load_balancing_policy._child_policy.local_dc == "dc2"
        turbo = _measure_workload(counter, session, sel, ks)
    with classic(counter, contact_points=(N3,)) as (ccluster, csession, csel):
        assert ccluster.profile_manager.default.load_balancing_policy._child_policy.local_dc == "dc2"
        ref = _measure_workload(counter, csession, csel, ks)
    assert_only(turbo, {N3})
    assert_only(ref, {N3}, who="classic")


# --------------------------------------------------------------------------
# 2. DCAwareRoundRobinPolicy(local_dc), in a profile and in legacy mode


@pytest.mark.parametrize("mode", ["profile", "legacy"])
@pytest.mark.parametrize(("local_dc", "expected"), [("dc1", DC1), ("dc2", {N3})])
def test_dc_aware_policy_sends_to_the_local_dc_only(counter, keyspaces, mode, local_dc, expected):
    ks = keyspaces["main"]
    if mode == "profile":
        turbo_kw = _profiles(DCAwareRoundRobinPolicy(local_dc=local_dc))
        classic_kw = _classic_profiles(cpol.DCAwareRoundRobinPolicy(local_dc=local_dc))
        turbo_ctx = classic_ctx = contextlib.nullcontext()
    else:
        turbo_kw = {"load_balancing_policy": DCAwareRoundRobinPolicy(local_dc=local_dc)}
        classic_kw = {"load_balancing_policy": cpol.DCAwareRoundRobinPolicy(local_dc=local_dc)}
        turbo_ctx = pytest.warns(DeprecationWarning, match="Legacy execution parameters will be removed in 4.0")
        classic_ctx = pytest.warns(DeprecationWarning, match="Legacy execution parameters will be removed in 4.0")
    with turbo_ctx, turbocql(counter, **turbo_kw) as (cluster, session, sel):
        turbo = _measure_workload(counter, session, sel, ks)
    with classic_ctx, classic(counter, **classic_kw) as (_, csession, csel):
        ref = _measure_workload(counter, csession, csel, ks)
    assert_only(turbo, expected)
    assert_only(ref, expected, who="classic")


# --------------------------------------------------------------------------
# 3. WhiteListRoundRobinPolicy


def test_white_list_policy_sends_to_the_listed_host_only(counter, keyspaces):
    ks = keyspaces["main"]
    with turbocql(counter, **_profiles(WhiteListRoundRobinPolicy([N2]))) as (_, session, sel):
        turbo = _measure_workload(counter, session, sel, ks)
    # The classic driver connects through the policy's hosts only: its contact point is the listed one.
    with classic(counter, (N2,), **_classic_profiles(cpol.WhiteListRoundRobinPolicy([N2]))) as (_, csession, csel):
        ref = _measure_workload(counter, csession, csel, ks)
    assert_only(turbo, {N2})
    assert_only(ref, {N2}, who="classic")


# --------------------------------------------------------------------------
# 3b. A user's subclass overriding only distance(): the hosts it ignores are never used


def _ignoring(policies, ignored):
    """A user's subclass of ``policies.RoundRobinPolicy`` whose ``distance`` ignores one host."""

    class IgnoringPolicy(policies.RoundRobinPolicy):
        def distance(self, host):
            if host.address == ignored:
                return policies.HostDistance.IGNORED
            return super().distance(host)

    return IgnoringPolicy()


def test_distance_only_subclass_leaves_its_ignored_host_out(counter, keyspaces):
    from turbocql import policies as turbo_policies

    ks = keyspaces["main"]
    with turbocql(counter, (N2,), **_profiles(_ignoring(turbo_policies, N1))) as (_, session, sel):
        turbo = _measure_workload(counter, session, sel, ks)
    with classic(counter, (N2,), **_classic_profiles(_ignoring(cpol, N1))) as (_, csession, csel):
        ref = _measure_workload(counter, csession, csel, ks)
    assert_only(turbo, {N2, N3})
    assert_only(ref, {N2, N3}, who="classic")


# --------------------------------------------------------------------------
# 4. HostFilterPolicy: the predicate's hosts only; the predicate called once per host


def test_host_filter_policy_leaves_the_host_out_and_calls_the_predicate_per_host(counter, keyspaces):
    ks = keyspaces["main"]
    calls = {"turbocql": [], "classic": []}

    def predicate_for(who):
        def predicate(host):
            calls[who].append(host.address)
            return host.address != N1

        return predicate

    # The contact point is one the predicate keeps (the classic driver connects through
    # the policy's hosts).
    lbp = HostFilterPolicy(RoundRobinPolicy(), predicate=predicate_for("turbocql"))
    with turbocql(counter, contact_points=(N2,), **_profiles(lbp)) as (_, session, sel):
        work = Workload(session, ks)
        first = counter.measure(sel, work.run)
        after_first = len(calls["turbocql"])
        second = counter.measure(sel, work.run)
        after_second = len(calls["turbocql"])
    clbp = cpol.HostFilterPolicy(cpol.RoundRobinPolicy(), predicate=predicate_for("classic"))
    with classic(counter, contact_points=(N2,), **_classic_profiles(clbp)) as (_, csession, csel):
        ref = _measure_workload(counter, csession, csel, ks)
    for deltas in (first, second):
        assert_only(deltas, {N2, N3})
    assert_only(ref, {N2, N3}, who="classic")
    # Once per host when the profile is populated, once per host when the engine first
    # routes to it: bounded, and not one more call for the second N requests.
    assert set(calls["turbocql"]) == set(NODES)
    assert after_first <= 2 * len(NODES), calls["turbocql"]
    assert after_second == after_first, (after_first, after_second)
    # The classic driver calls it for every host of every query plan (not compared).
    assert len(calls["classic"]) >= N


# --------------------------------------------------------------------------
# 5. TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1")): the coordinator is the key's dc1 replica

KEYS = range(1000, 1020)
PER_KEY = 10


def test_token_aware_policy_sends_each_key_to_its_dc1_replica(counter, keyspaces):
    ks = keyspaces["one_each"]
    lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1"))
    clbp = cpol.TokenAwarePolicy(cpol.DCAwareRoundRobinPolicy("dc1"))
    with classic(counter, schema_metadata_enabled=True, **_classic_profiles(clbp)) as (ccluster, csession, _):
        replica = {}
        for k in KEYS:
            in_dc1 = [
                h.address for h in ccluster.metadata.get_replicas(ks, struct.pack(">i", k)) if h.datacenter == "dc1"
            ]
            assert len(in_dc1) == 1, (k, in_dc1)
            replica[k] = in_dc1[0]
        assert set(replica.values()) == DC1, "the keys should fall on both dc1 nodes: %s" % replica
        cselect = csession.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        classic_coordinators = {
            k: str(csession.execute(cselect, (k,), trace=True).get_query_trace(max_wait_sec=30).coordinator)
            for k in KEYS
        }
    assert classic_coordinators == replica

    with turbocql(counter, **_profiles(lbp)) as (_, session, sel):
        select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        insert = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks)
        measured = {}
        for k in KEYS:

            def work(k=k):
                for _ in range(PER_KEY // 2):
                    session.execute(select, (k,))
                    session.execute(insert, (k, k))

            measured[k] = counter.measure(sel, work)
        traced = {
            k: str(session.execute(select, (k,), trace=True).get_query_trace(max_wait_sec=30).coordinator) for k in KEYS
        }
    for k in KEYS:
        assert_only(measured[k], {replica[k]}, total=PER_KEY, who="turbocql, key %d" % k)
    assert traced == replica


def _simple_statements(stmt_module, ks, k, with_keyspace):
    """A simple SELECT and a batch of one simple INSERT for key ``k``, each given its
    routing key (and, with ``with_keyspace``, its keyspace), for either driver."""
    key = struct.pack(">i", k)
    extra = {"keyspace": ks} if with_keyspace else {}
    select = stmt_module.SimpleStatement("SELECT v FROM %s.t WHERE k = %d" % (ks, k), routing_key=key, **extra)
    batch = stmt_module.BatchStatement()
    batch.add(stmt_module.SimpleStatement("INSERT INTO %s.t (k, v) VALUES (%d, %d)" % (ks, k, k)))
    batch.routing_key = key
    if with_keyspace:
        batch.keyspace = ks
    return select, batch


@pytest.mark.parametrize("with_keyspace", [True, False], ids=["statement-keyspace", "session-keyspace"])
def test_token_aware_policy_sends_a_simple_statement_with_a_routing_key_to_its_replica(
    counter, keyspaces, with_keyspace
):
    """The classic ``TokenAwarePolicy`` routes a ``SimpleStatement`` (and a batch) by its
    ``routing_key`` in the statement's keyspace, else the session's; the scylla crate
    computes tokens only for prepared statements, so the engine does it for these."""
    from cassandra import query as cquery

    from turbocql import query as tquery

    ks = keyspaces["one_each"]
    lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1"))
    clbp = cpol.TokenAwarePolicy(cpol.DCAwareRoundRobinPolicy("dc1"))
    session_ks = None if with_keyspace else ks
    with classic(counter, keyspace=session_ks, schema_metadata_enabled=True, **_classic_profiles(clbp)) as (
        ccluster,
        csession,
        _,
    ):
        replica = {}
        classic_coordinators = {}
        for k in KEYS:
            in_dc1 = [
                h.address for h in ccluster.metadata.get_replicas(ks, struct.pack(">i", k)) if h.datacenter == "dc1"
            ]
            replica[k] = in_dc1[0]
            select, _ = _simple_statements(cquery, ks, k, with_keyspace)
            classic_coordinators[k] = str(
                csession.execute(select, trace=True).get_query_trace(max_wait_sec=30).coordinator
            )
    assert set(replica.values()) == DC1, "the keys should fall on both dc1 nodes: %s" % replica
    assert classic_coordinators == replica

    with turbocql(counter, keyspace=session_ks, **_profiles(lbp)) as (_, session, sel):
        measured = {}
        for k in KEYS:
            select, batch = _simple_statements(tquery, ks, k, with_keyspace)

            def work(select=select, batch=batch):
                for _ in range(PER_KEY // 2):
                    session.execute(select)
                    session.execute(batch)

            measured[k] = counter.measure(sel, work)
        traced = {
            k: str(
                session.execute(_simple_statements(tquery, ks, k, with_keyspace)[0], trace=True)
                .get_query_trace(max_wait_sec=30)
                .coordinator
            )
            for k in KEYS
        }
    for k in KEYS:
        assert_only(measured[k], {replica[k]}, total=PER_KEY, who="turbocql, key %d" % k)
    assert traced == replica


def test_a_simple_statement_without_a_routing_key_follows_the_child_policy(counter, keyspaces):
    """No routing key (or no keyspace to find replicas in): the child policy's plan, dc1
    round-robin, as the classic ``TokenAwarePolicy`` does."""
    from turbocql import query as tquery

    ks = keyspaces["one_each"]
    lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1"))
    with turbocql(counter, **_profiles(lbp)) as (_, session, sel):
        stmt = tquery.SimpleStatement("SELECT v FROM %s.t WHERE k = 1000" % ks)
        no_keyspace = tquery.SimpleStatement("SELECT v FROM %s.t WHERE k = 1000" % ks, routing_key=b"\0\0\3\xe8")

        def work():
            for _ in range(N // 2):
                session.execute(stmt)
                session.execute(no_keyspace)

        deltas = counter.measure(sel, work)
    assert_only(deltas, DC1, total=N - N % 2)


def test_coordinator_host_is_the_node_that_answered(counter, keyspaces):
    """``ResponseFuture.coordinator_host`` (and ``_current_host``) is the node that
    coordinated the request, as its trace says, for each key under token-aware routing."""
    ks = keyspaces["one_each"]
    lbp = TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1"))
    with turbocql(counter, **_profiles(lbp)) as (_, session, _sel):
        select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        seen = set()
        for k in KEYS:
            future = session.execute_async(select, (k,), trace=True)
            assert future.coordinator_host is None or future.done
            future.result()
            host = future.coordinator_host
            trace = future.get_query_trace(max_wait=30)
            assert host is not None and host.address == str(trace.coordinator), k
            assert future._current_host is host or future._current_host == host
            assert host.datacenter == "dc1"
            seen.add(host.address)
        assert seen == DC1


# --------------------------------------------------------------------------
# 6. Two profiles in one cluster: each API goes where the profile it names says


@pytest.fixture(scope="module")
def two_profiles(counter, keyspaces):
    """A turbocql session whose default profile is DC-aware on dc1 and whose "dc2" profile
    is DC-aware on dc2: ``(session, selector, keyspace, insert, select)``."""
    profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(DCAwareRoundRobinPolicy("dc1")),
        "dc2": ExecutionProfile(DCAwareRoundRobinPolicy("dc2")),
    }
    ks = keyspaces["main"]
    with turbocql(counter, execution_profiles=profiles) as (_, session, sel):
        insert = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks)
        select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        yield session, sel, ks, insert, select


def _run_execute(session, ks, insert, select, kw):
    Workload(session, ks, insert, select).run(**kw)


def _run_execute_async(session, ks, insert, select, kw):
    futures = [session.execute_async(insert, (k, k), **kw) for k in range(N // 2)]
    futures += [session.execute_async(select, (k,), **kw) for k in range(N // 2)]
    for f in futures:
        f.result()


def _run_asyncio(session, ks, insert, select, kw):
    async def main():
        aio = AioSession(session)
        await asyncio.gather(*(aio.execute(insert, (k, k), **kw) for k in range(N // 2)))
        await asyncio.gather(*(aio.execute(select, (k,), **kw) for k in range(N // 2)))

    asyncio.run(asyncio.wait_for(main(), 60))


def _run_execute_concurrent(session, ks, insert, select, kw):
    results = execute_concurrent_with_args(session, insert, [(k, k) for k in range(N // 2)], **kw)
    results += execute_concurrent_with_args(session, select, [(k,) for k in range(N // 2)], **kw)
    assert all(r.success for r in results)


def _run_pipelines(session, ks, insert, select, kw):
    with WritePipeline(session, **kw) as pipeline:
        for k in range(N // 2):
            pipeline.execute(insert, (k, k))
    reads = ReadPipeline(session, **kw)
    for k in range(N // 2):
        reads.execute(select, (k,))
    assert len(list(reads.results())) == N // 2


APIS = {
    "execute": _run_execute,
    "execute_async": _run_execute_async,
    "asyncio": _run_asyncio,
    "execute_concurrent_with_args": _run_execute_concurrent,
    "pipelines": _run_pipelines,
}


@pytest.mark.parametrize("api", list(APIS))
def test_each_api_goes_where_its_execution_profile_says(counter, two_profiles, api):
    session, sel, ks, insert, select = two_profiles
    run = APIS[api]
    to_dc2 = counter.measure(sel, lambda: run(session, ks, insert, select, {"execution_profile": "dc2"}))
    to_default = counter.measure(sel, lambda: run(session, ks, insert, select, {}))
    assert_only(to_dc2, {N3})
    assert_only(to_default, DC1)
    if api == "execute":
        profiles = {
            C_DEFAULT: CProfile(load_balancing_policy=cpol.DCAwareRoundRobinPolicy("dc1")),
            "dc2": CProfile(load_balancing_policy=cpol.DCAwareRoundRobinPolicy("dc2")),
        }
        with classic(counter, execution_profiles=profiles) as (_, csession, csel):
            work = Workload(csession, ks)
            ref_dc2 = counter.measure(csel, lambda: work.run(execution_profile="dc2"))
            ref_default = counter.measure(csel, work.run)
        assert_only(ref_dc2, {N3}, who="classic")
        assert_only(ref_default, DC1, who="classic")


# --------------------------------------------------------------------------
# 7. execute(..., host=): that node only


def test_host_argument_sends_to_that_node_only(counter, keyspaces):
    ks = keyspaces["main"]
    per_host = 60
    with turbocql(counter, **_profiles(RoundRobinPolicy())) as (_, session, sel):
        select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        hosts = session._session.nodes()
        assert sorted(h.address for h in hosts) == list(NODES)
        turbo = {}
        for host in hosts:

            def work(host=host):
                for k in range(per_host // 2):
                    session.execute(select, (k,), host=host)
                for f in [session.execute_async(select, (k,), host=host) for k in range(per_host // 2)]:
                    f.result()

            turbo[host.address] = counter.measure(sel, work)
    with classic(counter, **_classic_profiles(cpol.RoundRobinPolicy())) as (ccluster, csession, csel):
        cselect = csession.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
        ref = {}
        for host in ccluster.metadata.all_hosts():
            ref[host.address] = counter.measure(
                csel, lambda host=host: [csession.execute(cselect, (k,), host=host) for k in range(per_host)]
            )
    for address in NODES:
        assert_only(turbo[address], {address}, total=per_host)
        assert_only(ref[address], {address}, total=per_host, who="classic")


# --------------------------------------------------------------------------
# 8. Profile semantics, with the classic driver's messages


def _message(exc_info):
    return str(exc_info.value)


def test_profile_rules_and_messages_match_the_classic_driver(counter, keyspaces):
    # Legacy parameters with execution_profiles.
    for legacy in ("load_balancing_policy", "default_retry_policy"):
        turbo_arg = RoundRobinPolicy() if legacy == "load_balancing_policy" else RetryPolicy()
        classic_arg = cpol.RoundRobinPolicy() if legacy == "load_balancing_policy" else cpol.RetryPolicy()
        with pytest.raises(ValueError) as turbo:
            Cluster([N1], execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile()}, **{legacy: turbo_arg})
        with pytest.raises(ValueError) as ref:
            CCluster([N1], protocol_version=4, execution_profiles={C_DEFAULT: CProfile()}, **{legacy: classic_arg})
        assert _message(turbo) == _message(ref)

    # add_execution_profile: a name taken; in legacy mode.
    turbo_cluster = Cluster([N1], execution_profiles={"dc2": ExecutionProfile(DCAwareRoundRobinPolicy("dc2"))})
    classic_cluster_ = CCluster(
        [N1], protocol_version=4, execution_profiles={"dc2": CProfile(cpol.DCAwareRoundRobinPolicy("dc2"))}
    )
    with pytest.raises(ValueError) as turbo:
        turbo_cluster.add_execution_profile("dc2", ExecutionProfile())
    with pytest.raises(ValueError) as ref:
        classic_cluster_.add_execution_profile("dc2", CProfile())
    assert _message(turbo) == _message(ref) == "Profile dc2 already exists"
    with pytest.warns(DeprecationWarning):
        turbo_legacy = Cluster([N1], load_balancing_policy=RoundRobinPolicy())
    with pytest.warns(DeprecationWarning):
        classic_legacy = CCluster([N1], protocol_version=4, load_balancing_policy=cpol.RoundRobinPolicy())
    with pytest.raises(ValueError) as turbo:
        turbo_legacy.add_execution_profile("x", ExecutionProfile())
    with pytest.raises(ValueError) as ref:
        classic_legacy.add_execution_profile("x", CProfile())
    assert _message(turbo) == _message(ref)
    for never_connected in (turbo_cluster, classic_cluster_, turbo_legacy, classic_legacy):
        never_connected.shutdown()

    ks = keyspaces["single"]  # {'dc1': 1}
    profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(DCAwareRoundRobinPolicy("dc1")),
        "three": ExecutionProfile(DCAwareRoundRobinPolicy("dc1"), consistency_level=ConsistencyLevel.THREE),
        "all": ExecutionProfile(DCAwareRoundRobinPolicy("dc1"), consistency_level=ConsistencyLevel.ALL),
        "each_quorum": ExecutionProfile(DCAwareRoundRobinPolicy("dc1"), consistency_level=ConsistencyLevel.EACH_QUORUM),
    }
    cprofiles = {
        C_DEFAULT: CProfile(cpol.DCAwareRoundRobinPolicy("dc1")),
        "three": CProfile(cpol.DCAwareRoundRobinPolicy("dc1"), consistency_level=ConsistencyLevel.THREE),
    }
    with (
        turbocql(counter, execution_profiles=profiles) as (tcluster, session, sel),
        classic(counter, execution_profiles=cprofiles) as (_, csession, _),
    ):
        query = "SELECT v FROM %s.t WHERE k = 1" % ks
        # An unknown profile (the classic driver also lists its DSE graph profiles).
        with pytest.raises(ValueError) as turbo:
            session.execute(query, execution_profile="missing")
        with pytest.raises(ValueError) as ref:
            csession.execute(query, execution_profile="missing")
        graph = ", EXEC_PROFILE_GRAPH_DEFAULT, EXEC_PROFILE_GRAPH_SYSTEM_DEFAULT, EXEC_PROFILE_GRAPH_ANALYTICS_DEFAULT"
        assert _message(turbo) == _message(ref).replace(graph, "").replace('"three"', '"three", "all", "each_quorum"')
        with pytest.raises(ValueError, match="Invalid execution_profile"):
            session.execute_async(query, execution_profile="missing")

        # Session defaults are the profiles' in profiles mode.
        # (default_consistency_level is left out: the classic setter warns DeprecationWarning first.)
        for attr, value in (
            ("default_timeout", 5),
            ("row_factory", lambda colnames, rows: rows),
            ("default_serial_consistency_level", ConsistencyLevel.SERIAL),
        ):
            with pytest.raises(ValueError) as turbo:
                setattr(session, attr, value)
            with pytest.raises(ValueError) as ref:
                setattr(csession, attr, value)
            assert _message(turbo) == _message(ref)
        assert session.default_timeout == 10.0

        # A profile's consistency level is the one the server sees: THREE with one replica
        # is Unavailable (3 required, 1 alive), as with the classic driver.
        with pytest.raises(Unavailable) as turbo:
            session.execute(query, execution_profile="three")
        with pytest.raises(Exception) as ref:
            csession.execute(query, execution_profile="three")
        assert (turbo.value.consistency, turbo.value.required_replicas, turbo.value.alive_replicas) == (
            ConsistencyLevel.THREE,
            3,
            1,
        )
        assert (ref.value.consistency, ref.value.required_replicas, ref.value.alive_replicas) == (
            ConsistencyLevel.THREE,
            3,
            1,
        )
        session.execute(query, execution_profile="all")  # ALL of one replica
        session.execute("INSERT INTO %s.t (k, v) VALUES (1, 1)" % ks, execution_profile="each_quorum")
        main = keyspaces["main"]  # {'dc1': 2, 'dc2': 1}: ALL is 3 replicas, EACH_QUORUM 2 + 1
        session.execute("INSERT INTO %s.t (k, v) VALUES (1, 1)" % main, execution_profile="each_quorum")
        assert session.execute("SELECT v FROM %s.t WHERE k = 1" % main, execution_profile="all").one().v == 1

        # execution_profile_clone_update: a copy with the change; the original unchanged.
        original = tcluster.profile_manager.default
        clone = session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, consistency_level=ConsistencyLevel.TWO)
        assert clone is not original and isinstance(clone, ExecutionProfile)
        assert clone.consistency_level == ConsistencyLevel.TWO
        assert original.consistency_level == ConsistencyLevel.LOCAL_ONE
        assert clone.load_balancing_policy is original.load_balancing_policy  # shallow, as classic
        with pytest.raises(Unavailable) as turbo:
            session.execute(query, execution_profile=clone)
        assert (turbo.value.consistency, turbo.value.required_replicas) == (ConsistencyLevel.TWO, 2)
        session.execute(query)  # the default profile still reads at LOCAL_ONE
        assert tcluster.profile_manager.default is original

        # add_execution_profile on a connected cluster: used at once.
        tcluster.add_execution_profile("dc2", ExecutionProfile(DCAwareRoundRobinPolicy("dc2")))
        main_query = "SELECT v FROM %s.t WHERE k = 1" % main
        deltas = counter.measure(sel, lambda: [session.execute(main_query, execution_profile="dc2") for _ in range(N)])
        assert_only(deltas, {N3})


# --------------------------------------------------------------------------
# 9. Retry policy decisions (keyspace {'dc1': 1}, consistency THREE: Unavailable)


def _counting_retry_policy(base, decision):
    class CountingRetryPolicy(base):
        def __init__(self):
            self.calls = []
            self.other_calls = []

        def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
            self.calls.append((consistency, required_replicas, alive_replicas, retry_num))
            return decision, None

        def on_read_timeout(self, *args, **kwargs):
            self.other_calls.append(("on_read_timeout", args, kwargs))
            return self.RETHROW, None

        def on_write_timeout(self, *args, **kwargs):
            self.other_calls.append(("on_write_timeout", args, kwargs))
            return self.RETHROW, None

        def on_request_error(self, *args, **kwargs):
            self.other_calls.append(("on_request_error", args, kwargs))
            return self.RETHROW, None

    return CountingRetryPolicy()


def _retry_sessions(counter, turbo_policy, classic_policy, consistency=ConsistencyLevel.THREE):
    """Both drivers with a round-robin profile "p" at ``consistency`` with the given retry
    policies (the default profile stays plain: turbocql reads its metadata through it)."""
    turbo_profiles = {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(RoundRobinPolicy()),
        "p": ExecutionProfile(RoundRobinPolicy(), turbo_policy, consistency_level=consistency),
    }
    classic_profiles = {
        C_DEFAULT: CProfile(cpol.RoundRobinPolicy()),
        "p": CProfile(cpol.RoundRobinPolicy(), classic_policy, consistency_level=consistency),
    }
    return turbocql(counter, execution_profiles=turbo_profiles), classic(counter, execution_profiles=classic_profiles)


STATEMENTS = ("SELECT v FROM {ks}.t WHERE k = 1", "INSERT INTO {ks}.t (k, v) VALUES (1, 1)")
THREE_UNAVAILABLE = (ConsistencyLevel.THREE, 3, 1)


@pytest.mark.parametrize("decision", ["RETHROW", "RETRY_NEXT_HOST", "IGNORE"])
def test_retry_policy_subclass_decides_on_unavailable(counter, keyspaces, decision):
    ks = keyspaces["single"]
    turbo_policy = _counting_retry_policy(RetryPolicy, getattr(RetryPolicy, decision))
    classic_policy = _counting_retry_policy(cpol.RetryPolicy, getattr(cpol.RetryPolicy, decision))
    turbo_ctx, classic_ctx = _retry_sessions(counter, turbo_policy, classic_policy)
    outcomes = {"turbocql": [], "classic": []}
    calls = {"turbocql": [], "classic": []}
    per_node = {}
    with turbo_ctx as (_, session, sel), classic_ctx as (_, csession, _):
        for who, s, policy in (("turbocql", session, turbo_policy), ("classic", csession, classic_policy)):
            for statement in STATEMENTS:
                del policy.calls[:]
                try:
                    rs = s.execute(statement.format(ks=ks), execution_profile="p")
                    outcomes[who].append(("result", list(rs), rs.one()))
                except Exception as exc:
                    outcomes[who].append(("raised", exc))
                calls[who].append(list(policy.calls))
            assert policy.other_calls == []
        if decision == "RETRY_NEXT_HOST":
            # Each failing request is tried once on each host.
            query = STATEMENTS[0].format(ks=ks)

            def fail_ten():
                for _ in range(10):
                    with pytest.raises(NoHostAvailable):
                        session.execute(query, execution_profile="p")

            per_node = counter.measure(sel, fail_ten)

    hosts = len(NODES)
    expected_calls = {
        "RETHROW": [THREE_UNAVAILABLE + (0,)],
        "IGNORE": [THREE_UNAVAILABLE + (0,)],
        "RETRY_NEXT_HOST": [THREE_UNAVAILABLE + (n,) for n in range(hosts)],
    }[decision]
    for who in ("turbocql", "classic"):
        assert calls[who] == [expected_calls] * len(STATEMENTS), who
    for turbo_outcome, classic_outcome in zip(outcomes["turbocql"], outcomes["classic"], strict=True):
        if decision == "IGNORE":
            assert turbo_outcome == classic_outcome == ("result", [], None)
        elif decision == "RETHROW":
            assert turbo_outcome[0] == classic_outcome[0] == "raised"
            assert isinstance(turbo_outcome[1], Unavailable)
            assert type(classic_outcome[1]).__name__ == "Unavailable"
        else:
            # Both end with NoHostAvailable holding each host's Unavailable.
            assert turbo_outcome[0] == classic_outcome[0] == "raised"
            assert isinstance(turbo_outcome[1], NoHostAvailable)
            assert isinstance(classic_outcome[1], CNoHostAvailable)
            assert len(classic_outcome[1].errors) == len(turbo_outcome[1].errors) == hosts
            assert sorted(map(str, turbo_outcome[1].errors)) == sorted(map(str, classic_outcome[1].errors))
    if decision == "RETRY_NEXT_HOST":
        assert all(10 <= n <= 10 + NOISE for n in per_node.values()), per_node


def test_retry_next_host_past_the_last_host_raises_no_host_available(counter, keyspaces):
    ks = keyspaces["single"]
    turbo_policy = _counting_retry_policy(RetryPolicy, RetryPolicy.RETRY_NEXT_HOST)
    classic_policy = _counting_retry_policy(cpol.RetryPolicy, cpol.RetryPolicy.RETRY_NEXT_HOST)
    turbo_ctx, classic_ctx = _retry_sessions(counter, turbo_policy, classic_policy)
    query = STATEMENTS[0].format(ks=ks)
    with turbo_ctx as (_, session, _), classic_ctx as (_, csession, _):
        with pytest.raises(CNoHostAvailable) as ref:
            csession.execute(query, execution_profile="p")
        assert sorted(type(e).__name__ for e in ref.value.errors.values()) == ["Unavailable"] * 3
        with pytest.raises(NoHostAvailable) as turbo:
            session.execute(query, execution_profile="p")
        assert sorted(type(e).__name__ for e in turbo.value.errors.values()) == ["Unavailable"] * 3


def test_retry_policy_subclass_is_not_called_on_success(counter, keyspaces):
    ks = keyspaces["single"]
    turbo_policy = _counting_retry_policy(RetryPolicy, RetryPolicy.RETHROW)
    classic_policy = _counting_retry_policy(cpol.RetryPolicy, cpol.RetryPolicy.RETHROW)
    turbo_ctx, classic_ctx = _retry_sessions(counter, turbo_policy, classic_policy, ConsistencyLevel.ONE)
    with turbo_ctx as (_, session, _), classic_ctx as (_, csession, _):
        for s in (session, csession):
            for statement in STATEMENTS * 25:
                s.execute(statement.format(ks=ks), execution_profile="p")
    assert turbo_policy.calls == turbo_policy.other_calls == []
    assert classic_policy.calls == classic_policy.other_calls == []


@pytest.mark.parametrize(("policy", "attempts"), [("fallthrough", 1), ("default", 2)])
def test_fallthrough_rethrows_at_once_and_the_default_tries_one_more_host(counter, keyspaces, policy, attempts):
    """Counted on the nodes: FallthroughRetryPolicy sends each failing request once; the
    default RetryPolicy retries an Unavailable once on the next host."""
    ks = keyspaces["single"]
    turbo_policy, classic_policy = {
        "fallthrough": (FallthroughRetryPolicy(), cpol.FallthroughRetryPolicy()),
        "default": (RetryPolicy(), cpol.RetryPolicy()),
    }[policy]
    turbo_ctx, classic_ctx = _retry_sessions(counter, turbo_policy, classic_policy)
    query = STATEMENTS[0].format(ks=ks)
    requests = 30

    def fail(s, exc_type):
        def run():
            for _ in range(requests):
                with pytest.raises(exc_type):
                    s.execute(query, execution_profile="p")

        return run

    with turbo_ctx as (_, session, sel), classic_ctx as (_, csession, csel):
        turbo = counter.measure(sel, fail(session, Unavailable))
        ref = counter.measure(csel, fail(csession, Exception))
    for who, deltas in (("turbocql", turbo), ("classic", ref)):
        total = sum(deltas.values())
        assert requests * attempts <= total <= requests * attempts + NOISE * len(NODES), (who, deltas)


# --------------------------------------------------------------------------
# 10. used_hosts_per_remote_dc=1: with the local DC down, exactly one remote node.
# Stops node 3 and starts it again: keep this test the last of the module.


def _gossip_sees_all_up(counter, keyspace):
    """A read at ALL of a key of ``keyspace`` (a replica on every node) coordinated by
    127.0.0.11 succeeds: the others see node 3 up."""
    from cassandra.query import SimpleStatement

    statement = SimpleStatement("SELECT v FROM %s.t WHERE k = 0" % keyspace, consistency_level=ConsistencyLevel.ALL)
    try:
        counter.session(N1).execute(statement, timeout=5)
        return True
    except Exception:
        return False


def _is_up(hosts, address):
    """Whether the host at ``address`` is listed and up."""
    return any(h.address == address and h.is_up for h in hosts)


@pytest.mark.timeout(900)
def test_remote_dc_failover_uses_one_remote_host_when_the_local_dc_is_down(multidc_cluster, counter, keyspaces):
    ks = keyspaces["main"]
    lbp = DCAwareRoundRobinPolicy(local_dc="dc2", used_hosts_per_remote_dc=1)
    clbp = cpol.DCAwareRoundRobinPolicy(local_dc="dc2", used_hosts_per_remote_dc=1)
    with (
        turbocql(counter, contact_points=NODES, **_profiles(lbp)) as (_, session, sel),
        classic(counter, contact_points=NODES, **_classic_profiles(clbp)) as (ccluster, csession, csel),
    ):
        work = Workload(session, ks)
        cwork = Workload(csession, ks)
        assert_only(counter.measure(sel, work.run), {N3})
        assert_only(counter.measure(csel, cwork.run), {N3}, who="classic")
        stopped = False
        try:
            stopped = multidc_cluster.stop_node(3)
            assert stopped, "node 3 was not running"
            _wait(lambda: not _is_up(session._session.nodes(), N3), 60, "turbocql to see node 3 down")
            _wait(lambda: not _is_up(ccluster.metadata.all_hosts(), N3), 60, "the classic driver to see node 3 down")
            with counter.without(N3):
                turbo = counter.measure(sel, work.run)
                ref = counter.measure(csel, cwork.run)
        finally:
            if stopped:
                multidc_cluster.start_node(3, timeout=300)
                assert multidc_cluster.wait_for_state(3, "UP", timeout=300)
                _wait(lambda: _gossip_sees_all_up(counter, ks), 180, "the cluster to see node 3 up again")
    for who, deltas in (("turbocql", turbo), ("classic", ref)):
        used = receiving(deltas)
        assert len(used) == 1 and used <= DC1, (who, deltas)
        assert_only(deltas, used, who=who)
