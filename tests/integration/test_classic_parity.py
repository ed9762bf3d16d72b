"""Statement behaviour compared with the classic driver against the local node: routing
keys of bound statements (one and several partition-key columns, tuples and dicts),
bind() with short sequences, missing dict keys, UNSET_VALUE and str values, a batch's
inherited routing key, and metadata.group_keys_by_replica."""

import uuid

import pytest

from tests.conftest import HOST, PORT

cassandra_cluster = pytest.importorskip("cassandra.cluster")
import cassandra.metadata as c_metadata  # noqa: E402
import cassandra.query as c_query  # noqa: E402

import turbocql.metadata as t_metadata  # noqa: E402
import turbocql.query as t_query  # noqa: E402


@pytest.fixture(scope="module")
def sessions(cluster, keyspace):
    classic = cassandra_cluster.Cluster([HOST], port=PORT, protocol_version=4)
    c_session = classic.connect(keyspace)
    t_session = cluster.connect(keyspace)
    name = "parity_" + uuid.uuid4().hex[:10]
    t_session.execute("CREATE TABLE %s_one (k int PRIMARY KEY, v text)" % name)
    t_session.execute("CREATE TABLE %s_two (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))" % name)
    t_session.cluster.refresh_schema_metadata()
    classic.refresh_schema_metadata()
    yield c_session, t_session, name
    t_session.execute("DROP TABLE %s_one" % name)
    t_session.execute("DROP TABLE %s_two" % name)
    t_session.shutdown()
    classic.shutdown()


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the kind is what is compared
        return ("raises", type(exc).__name__)


def _both(sessions, query):
    c_session, t_session, name = sessions
    q = query.format(name=name)
    return c_session.prepare(q), t_session.prepare(q)


def test_bound_routing_key_one_column(sessions):
    c_ps, t_ps = _both(sessions, "INSERT INTO {name}_one (k, v) VALUES (?, ?)")
    for values in ((1, "x"), {"k": 7, "v": "y"}, [2**31 - 1, None]):
        c_b, t_b = c_ps.bind(values), t_ps.bind(values)
        assert t_b.routing_key == c_b.routing_key
        assert t_b.routing_key is not None
    assert t_ps.bind((1, "x")).routing_key == b"\x00\x00\x00\x01"
    c_sel, t_sel = _both(sessions, "SELECT * FROM {name}_one")
    assert t_sel.bind(()).routing_key is c_sel.bind(()).routing_key is None


def test_bound_routing_key_composite(sessions):
    c_ps, t_ps = _both(sessions, "INSERT INTO {name}_two (a, b, c, v) VALUES (?, ?, ?, ?)")
    for values in ((1, "ab", 3, 4), {"a": 5, "b": "é", "c": 0, "v": 1}):
        assert t_ps.bind(values).routing_key == c_ps.bind(values).routing_key
    # markers out of the key's order
    c_ps, t_ps = _both(sessions, "INSERT INTO {name}_two (v, c, b, a) VALUES (?, ?, ?, ?)")
    assert t_ps.bind((9, 8, "zz", 7)).routing_key == c_ps.bind((9, 8, "zz", 7)).routing_key
    # an explicit routing key is packed as in the classic driver
    c_b, t_b = c_ps.bind((9, 8, "zz", 7)), t_ps.bind((9, 8, "zz", 7))
    c_b._set_routing_key([b"\x01", b"\x02"])
    t_b._set_routing_key([b"\x01", b"\x02"])
    assert t_b.routing_key == c_b.routing_key


def test_bind_short_and_missing_values_as_classic(sessions):
    c_ps, t_ps = _both(sessions, "INSERT INTO {name}_one (k, v) VALUES (?, ?)")
    for values in ((1,), (), {}, {"k": 1}, {"v": "x"}, {"k": 1, "v": "x", "extra": 3}, (c_query.UNSET_VALUE, "x")):
        t_values = tuple(t_query.UNSET_VALUE if v is c_query.UNSET_VALUE else v for v in values)
        t_values = values if isinstance(values, dict) else t_values
        c, t = _outcome(c_ps.bind, values), _outcome(t_ps.bind, t_values)
        assert c[0] == t[0], values
        if c[0] == "raises":
            assert c[1] == t[1] == "ValueError", values
    # a short sequence is completed with UNSET_VALUE and runs
    c_session, t_session, name = sessions
    t_session.execute(t_ps.bind((42,)))
    assert t_session.execute("SELECT v FROM %s_one WHERE k = 42" % name).one().v is None


def test_bind_str_values_as_classic(sessions):
    c_ps, t_ps = _both(sessions, "SELECT * FROM {name}_two WHERE a = 1 AND b = ?")
    c_b, t_b = c_ps.bind("x"), t_ps.bind("x")
    assert list(t_b.values) == ["x"]
    c_session, t_session, name = sessions
    assert list(t_session.execute(t_b)) == list(c_session.execute(c_b)) == []


def test_batch_inherits_routing_key_of_prepared_as_classic(sessions):
    c_ps, t_ps = _both(sessions, "INSERT INTO {name}_two (a, b, c, v) VALUES (?, ?, ?, ?)")
    c_batch, t_batch = c_query.BatchStatement(), t_query.BatchStatement()
    c_batch.add("INSERT INTO x (k) VALUES (1)")
    t_batch.add("INSERT INTO x (k) VALUES (1)")
    c_batch.add(c_ps, (1, "q", 2, 3))
    t_batch.add(t_ps, (1, "q", 2, 3))
    c_batch.add(c_ps.bind((2, "r", 2, 3)))
    t_batch.add(t_ps.bind((2, "r", 2, 3)))
    assert t_batch.routing_key == c_batch.routing_key
    assert t_batch.keyspace == c_batch.keyspace
    c_session, t_session, name = sessions
    t_session.execute(t_query.BatchStatement().add(t_ps, (1, "q", 2, 3)))


def test_group_keys_by_replica_as_classic(sessions):
    c_session, t_session, name = sessions
    keys = [(i, "k%d" % i) for i in range(20)]
    c_groups = c_metadata.group_keys_by_replica(c_session, c_session.keyspace, name + "_two", keys)
    t_groups = t_metadata.group_keys_by_replica(t_session, t_session.keyspace, name + "_two", keys)
    assert {h.address: v for h, v in t_groups.items()} == {h.address: v for h, v in c_groups.items()}
    assert t_metadata.NO_VALID_REPLICA not in t_groups


def test_get_pool_state_shape_as_classic(sessions):
    c_session, t_session, name = sessions
    c_state, t_state = c_session.get_pool_state(), t_session.get_pool_state()
    assert {h.address for h in t_state} == {h.address for h in c_state}
    for state in t_state.values():
        assert set(state) >= {"shutdown", "open_count", "in_flights"}
        assert state["shutdown"] is False and state["is_up"] is True
        assert state["open_count"] is None and state["in_flights"] is None  # not known to the engine


def test_refresh_nodes(sessions):
    c_session, t_session, name = sessions
    c_session.cluster.refresh_nodes()
    t_session.cluster.refresh_nodes()
    assert {h.address for h in t_session.cluster.metadata.all_hosts()} == {
        h.address for h in c_session.cluster.metadata.all_hosts()
    }


# -- ResponseFuture / ResultSet surface -------------------------------------------------

# A logged batch over many partitions, larger than the server's 5 KiB warning threshold.
WARN_BATCH = (
    "BEGIN BATCH "
    + "".join("INSERT INTO {name}_one (k, v) VALUES (%d, '%s'); " % (k, "x" * 300) for k in range(30))
    + "APPLY BATCH"
)


def test_future_warnings_as_classic(sessions):
    c_session, t_session, name = sessions
    for s in (c_session, t_session):
        future = s.execute_async(WARN_BATCH.format(name=name))
        future.result()
        assert len(future.warnings) == 1 and "Batch" in future.warnings[0]
        quiet = s.execute_async("SELECT * FROM %s_one" % name)
        quiet.result()
        assert quiet.warnings is None
    # Not done yet: DriverException in both (the turbocql future is checked at once).
    import turbocql

    pending = t_session.execute_async("SELECT * FROM system.local")
    if not pending.done:
        with pytest.raises(turbocql.DriverException, match="before ResponseFuture is finalized"):
            _ = pending.warnings
    pending.result()


def test_query_traces_as_classic(sessions):
    c_session, t_session, _ = sessions
    from turbocql import ConsistencyLevel
    from turbocql.query import TraceEvent, TraceUnavailable

    for s in (c_session, t_session):
        future = s.execute_async("SELECT * FROM system.local", trace=True)
        rs = future.result()
        trace = future.get_query_trace()
        assert trace is rs.get_query_trace()  # one object per trace
        assert trace.events and type(trace.events) is tuple
        assert type(trace.events[0]).__name__ == "TraceEvent"
        assert rs.get_all_query_traces() == [trace] == future.get_all_query_traces()
        assert len(future._query_traces) == 1 and future.get_query_trace_ids() == [trace.trace_id]
        assert trace.duration is not None and trace.coordinator and "coordinator:" in str(trace)
        untraced = s.execute_async("SELECT * FROM system.local")
        untraced.result()
        assert untraced.get_query_trace() is None and untraced.get_all_query_traces() == []
    assert isinstance(trace.events[0], TraceEvent)
    # query_cl is honoured: THREE on one node is Unavailable (inside NoHostAvailable, as the
    # classic driver's retry policy moves on to the next host, and there is none); -1 s of
    # waiting: TraceUnavailable.
    from tests.integration.conftest import unavailable_on_one_node

    future = t_session.execute_async("SELECT * FROM system.local", trace=True)
    future.result()
    with unavailable_on_one_node(ConsistencyLevel.THREE):
        future.get_query_trace(query_cl=ConsistencyLevel.THREE)
    with pytest.raises(TraceUnavailable):
        future.get_query_trace(-1.0)
    assert future.get_query_trace(max_wait=5.0, query_cl=ConsistencyLevel.ONE).trace_id


def test_trace_read_with_any_row_factory(cluster):
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.query import dict_factory

    with Cluster(
        [HOST], port=PORT, execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(row_factory=dict_factory)}
    ) as c:
        rs = c.connect().execute("SELECT * FROM system.local", trace=True)
        trace = rs.get_query_trace()
        assert trace.events and trace.duration is not None
        str(trace)


def test_result_set_equality_and_column_names_as_classic(sessions):
    c_session, t_session, name = sessions
    t_session.execute("INSERT INTO %s_one (k, v) VALUES (5, 'five')" % name)
    for s in (c_session, t_session):
        rs = s.execute("SELECT k, v FROM %s_one WHERE k = 5" % name)
        assert rs.column_names == ["k", "v"]
        assert rs == [(5, "five")]
        assert rs.__hash__ is None
    c_repr = str(c_session.execute_async("SELECT k FROM %s_one WHERE k = 5" % name))
    future = t_session.execute_async("SELECT k FROM %s_one WHERE k = 5" % name)
    future.result()
    assert "result" in str(future) and "result" in c_repr


def test_register_user_type_encodes_simple_statements_as_classic(sessions):
    from collections import namedtuple

    import cassandra.cluster as c_cluster_mod

    from turbocql.cluster import Cluster, UserTypeDoesNotExist

    c_session, t_session, name = sessions
    ks = t_session.keyspace
    t_session.execute("CREATE TYPE IF NOT EXISTS %s_user (age int, name text)" % name)
    t_session.execute("CREATE TABLE IF NOT EXISTS %s_udt (k int PRIMARY KEY, u frozen<%s_user>)" % (name, name))
    User = namedtuple("User", ("age", "name"))
    # Clusters of their own: a registered type is registered again on every new session of
    # its cluster (classic too), and this one is dropped at the end.
    clusters = (
        (c_cluster_mod.Cluster([HOST], port=PORT, protocol_version=4), c_cluster_mod.UserTypeDoesNotExist),
        (Cluster([HOST], port=PORT), UserTypeDoesNotExist),
    )
    try:
        for cluster, exc in clusters:
            s = cluster.connect(ks)
            cluster.register_user_type(ks, "%s_user" % name, User)
            s.execute("INSERT INTO %s_udt (k, u) VALUES (%%s, %%s)" % name, (1, User(42, "bob")))
            assert s.execute("SELECT u FROM %s_udt WHERE k = 1" % name).one().u == User(42, "bob")
            with pytest.raises(exc):
                cluster.register_user_type("no_such_keyspace_xyz", "user", User)
            with pytest.raises(exc):
                cluster.register_user_type("system", "no_such_type", User)
    finally:
        for cluster, _ in clusters:
            cluster.shutdown()
        t_session.execute("DROP TABLE %s_udt" % name)
        t_session.execute("DROP TYPE %s_user" % name)


def test_session_protocol_version(sessions):
    assert sessions[1]._protocol_version == sessions[1].cluster.protocol_version == 4


def test_empty_contact_points_no_host_available_as_classic():
    import cassandra.cluster as c_cluster_mod

    from turbocql.cluster import Cluster, NoHostAvailable

    with pytest.raises(c_cluster_mod.NoHostAvailable):
        c_cluster_mod.Cluster(contact_points=[]).connect()
    with pytest.raises(NoHostAvailable):
        Cluster(contact_points=[]).connect()


def test_legacy_load_balancing_policy_populated_at_connect():
    from turbocql.cluster import Cluster
    from turbocql.policies import RoundRobinPolicy

    c = Cluster([HOST], port=PORT)
    c.load_balancing_policy = RoundRobinPolicy()
    assert list(c.load_balancing_policy.make_query_plan()) == []
    try:
        c.connect()
        assert list(c.load_balancing_policy.make_query_plan()) != []
    finally:
        c.shutdown()
