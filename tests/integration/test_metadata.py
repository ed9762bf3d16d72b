"""cluster.metadata's schema against the real node, compared with the classic driver's.

Each test makes its own keyspace (``meta_<uuid>``) and drops it at the end. The keyspace
has one of everything Cassandra 5.0 allows here: user types (one nested in another, used
by tables), tables with composite partition keys, several clustering columns (one DESC),
static columns, collections frozen and not, tuples, quoted names, counters, secondary
indexes (values, keys, full), a storage-attached (SAI) index, materialized views.

Materialized views, SASI indexes and user-defined functions/aggregates need
``materialized_views_enabled``, ``sasi_indexes_enabled`` and
``user_defined_functions_enabled`` in cassandra.yaml (localdb's has them, Cassandra's stock
one not): the tests of them are marked ``requires_setting`` and skipped, naming the setting,
on a node without it; the keyspace with one of everything then has no views, and the other
tests run on the rest.
"""

import re
import uuid

import pytest

from tests.conftest import HOST, PORT
from tests.integration._settings import skip_reason
from tests.unit.test_metadata import keyspace_differences
from turbocql.cluster import Cluster
from turbocql.metadata import NetworkTopologyStrategy

SCHEMA = """
CREATE KEYSPACE {ks} WITH replication = {{'class': 'NetworkTopologyStrategy', '{dc}': 1}} AND durable_writes = true;
CREATE TYPE {ks}.address (street text, city text, zip int, tags frozen<set<text>>);
CREATE TYPE {ks}.phone (kind text, number text);
CREATE TYPE {ks}.person (name text, "Home" frozen<address>, phones list<frozen<phone>>);
CREATE TABLE {ks}.events (
    tenant int, bucket text, ts timestamp, seq int, id uuid,
    owner text static, region text static,
    payload blob, tags set<text>, scores list<double>, attrs map<text, int>,
    frozen_tags frozen<set<int>>, nested frozen<map<text, frozen<list<int>>>>,
    pair tuple<int, text>, who frozen<person>, "Mixed Case" text, "Label" text, "select" int,
    PRIMARY KEY ((tenant, bucket), ts, seq, id)
) WITH CLUSTERING ORDER BY (ts DESC, seq ASC, id ASC)
    AND comment = 'it''s the events'
    AND gc_grace_seconds = 3600
    AND caching = {{'keys': 'ALL', 'rows_per_partition': '10'}}
    AND compaction = {{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '64'}};
CREATE INDEX events_select_idx ON {ks}.events ("select");
CREATE INDEX ON {ks}.events (tags);
CREATE INDEX ON {ks}.events (keys(attrs));
CREATE INDEX ON {ks}.events (full(frozen_tags));
CREATE CUSTOM INDEX events_sai ON {ks}.events ("Label") USING 'StorageAttachedIndex';
CREATE TABLE {ks}.users (id uuid PRIMARY KEY, name text, email text, age int, profile frozen<person>, home address);
CREATE TABLE {ks}."CamelTable" ("Key" int, "Col" text, v text, PRIMARY KEY ("Key", "Col"));
CREATE TABLE {ks}.counts (k text, c int, n counter, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
"""

# Made in the full keyspace when the node has materialized_views_enabled.
VIEWS = """
CREATE MATERIALIZED VIEW {ks}.users_by_email AS
    SELECT id, name, email FROM {ks}.users WHERE email IS NOT NULL AND id IS NOT NULL
    PRIMARY KEY (email, id) WITH CLUSTERING ORDER BY (id DESC) AND comment = 'by email';
CREATE MATERIALIZED VIEW {ks}.users_by_name AS
    SELECT * FROM {ks}.users WHERE name IS NOT NULL AND id IS NOT NULL PRIMARY KEY ((name, id));
"""

FUNCTIONS = """
CREATE FUNCTION {ks}.plus (a int, b int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a + b;';
CREATE FUNCTION {ks}.plus (a text, b text) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS 'return a + b;';
CREATE FUNCTION {ks}.acc (state frozen<tuple<int, bigint>>, v int) CALLED ON NULL INPUT
    RETURNS frozen<tuple<int, bigint>> LANGUAGE java
    AS 'if (v != null) {{ state.setInt(0, state.getInt(0) + 1); state.setLong(1, state.getLong(1) + v); }}
        return state;';
CREATE FUNCTION {ks}.avg_final (state frozen<tuple<int, bigint>>) CALLED ON NULL INPUT RETURNS double LANGUAGE java
    AS 'return state.getInt(0) == 0 ? null : (double) state.getLong(1) / state.getInt(0);';
CREATE AGGREGATE {ks}.my_avg (int) SFUNC acc STYPE frozen<tuple<int, bigint>> FINALFUNC avg_final INITCOND (0, 0);
"""


def statements(cql):
    """The statements of a CQL script (ends of statements: ``;`` at the end of a line)."""
    return [s.strip() for s in re.split(r";\s*\n|;\s*$", cql) if s.strip()]


@pytest.fixture(scope="module")
def classic(cassandra):
    pytest.importorskip("cassandra.cluster")
    from cassandra.cluster import Cluster as ClassicCluster

    c = ClassicCluster([HOST], port=PORT, protocol_version=4)
    session = c.connect()
    yield c, session
    c.shutdown()


@pytest.fixture
def new_keyspace_name(cluster):
    """Makes fresh keyspace names; their keyspaces are dropped at the end."""
    names = []

    def make():
        names.append("meta_" + uuid.uuid4().hex[:12])
        return names[-1]

    yield make
    s = cluster.connect()
    for name in names:
        s.execute("DROP KEYSPACE IF EXISTS %s" % name)
    s.shutdown()


@pytest.fixture
def keyspace_name(new_keyspace_name):
    """A fresh keyspace name, dropped at the end."""
    return new_keyspace_name()


def _datacenter(session):
    return session.execute("SELECT data_center FROM system.local").one()[0]


@pytest.fixture
def live(cluster):
    """A session of ``cluster`` open for the test: the cluster reads its metadata through
    its live sessions."""
    s = cluster.connect()
    yield s
    s.shutdown()


@pytest.fixture
def full_keyspace(live, keyspace_name, node_settings):
    """The keyspace with one of everything (functions aside; the views only if the node has
    materialized_views_enabled)."""
    cql = SCHEMA
    if skip_reason(node_settings, "materialized_views_enabled") is None:
        cql += VIEWS
    for stmt in statements(cql.format(ks=keyspace_name, dc=_datacenter(live))):
        live.execute(stmt)
    return keyspace_name


def _refreshed(cluster, classic):
    cluster.refresh_schema_metadata()
    classic[0].refresh_schema_metadata()
    return cluster.metadata.keyspaces, classic[0].metadata.keyspaces


def test_metadata_matches_the_classic_driver(cluster, classic, full_keyspace):
    mine, theirs = _refreshed(cluster, classic)
    ks = mine[full_keyspace]
    assert keyspace_differences(ks, theirs[full_keyspace]) == []
    # The system and virtual keyspaces too.
    for name in ("system_schema", "system", "system_auth", "system_views", "system_virtual_schema"):
        assert keyspace_differences(mine[name], theirs[name]) == [], name
    assert mine["system_views"].virtual and mine["system_views"].tables["caches"].virtual

    # What the comparison covered, spelled out.
    assert isinstance(ks.replication_strategy, NetworkTopologyStrategy) and ks.durable_writes is True
    assert list(ks.user_types) == ["address", "person", "phone"]
    assert ks.user_types["person"].field_names == ["name", "Home", "phones"]
    assert ks.user_types["person"].field_types == ["text", "frozen<address>", "list<frozen<phone>>"]
    export = ks.export_as_string()
    assert export.index("TYPE %s.phone" % full_keyspace) < export.index("TYPE %s.person" % full_keyspace)
    events = ks.tables["events"]
    assert [c.name for c in events.partition_key] == ["tenant", "bucket"]
    assert [(c.name, c.is_reversed) for c in events.clustering_key] == [("ts", True), ("seq", False), ("id", False)]
    assert [c.name for c in events.primary_key] == ["tenant", "bucket", "ts", "seq", "id"]
    assert list(events.columns)[:5] == ["tenant", "bucket", "ts", "seq", "id"]
    assert events.columns["owner"].is_static and not events.columns["payload"].is_static
    assert events.columns["nested"].cql_type == "frozen<map<text, frozen<list<int>>>>"
    assert events.columns["pair"].cql_type == "frozen<tuple<int, text>>"
    assert events.options["comment"] == "it's the events" and events.options["gc_grace_seconds"] == 3600
    kinds = {i.name: (i.kind, i.index_options["target"]) for i in events.indexes.values()}
    assert kinds == {
        "events_select_idx": ("COMPOSITES", '"select"'),
        "events_tags_idx": ("COMPOSITES", "values(tags)"),
        "events_attrs_idx": ("COMPOSITES", "keys(attrs)"),
        "events_frozen_tags_idx": ("COMPOSITES", "full(frozen_tags)"),
        "events_sai": ("CUSTOM", '"Label"'),
    }
    camel = ks.tables["CamelTable"]
    assert camel.as_cql_query().startswith('CREATE TABLE %s."CamelTable" ("Key" int, "Col" text' % full_keyspace)


@pytest.mark.requires_setting("materialized_views_enabled")
def test_materialized_views_match_the_classic_driver(cluster, classic, full_keyspace):
    mine, theirs = _refreshed(cluster, classic)
    ks = mine[full_keyspace]
    assert keyspace_differences(ks, theirs[full_keyspace]) == []
    users = ks.tables["users"]
    assert list(users.views) == ["users_by_email", "users_by_name"] == list(ks.views)
    view = ks.views["users_by_email"]
    assert (view.base_table_name, view.include_all_columns) == ("users", False)
    assert [c.name for c in view.partition_key] == ["email"] and view.clustering_key[0].is_reversed
    assert view.where_clause == "email IS NOT NULL AND id IS NOT NULL"
    assert ks.views["users_by_name"].include_all_columns
    assert [c.name for c in ks.views["users_by_name"].partition_key] == ["name", "id"]


@pytest.mark.requires_setting("sasi_indexes_enabled")
def test_sasi_index(cluster, classic, live, keyspace_name):
    s = live
    s.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace_name
    )
    s.execute("CREATE TABLE %s.t (k int PRIMARY KEY, v text)" % keyspace_name)
    s.execute(
        "CREATE CUSTOM INDEX t_v_sasi ON %s.t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' "
        "WITH OPTIONS = {'mode': 'CONTAINS'}" % keyspace_name
    )
    mine, theirs = _refreshed(cluster, classic)
    index = mine[keyspace_name].indexes["t_v_sasi"]
    assert index.kind == "CUSTOM" and index.index_options["mode"] == "CONTAINS"
    assert index.as_cql_query().endswith(
        "USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'mode': 'CONTAINS'}"
    )
    assert keyspace_differences(mine[keyspace_name], theirs[keyspace_name]) == []


@pytest.mark.requires_setting("user_defined_functions_enabled")
def test_functions_and_aggregates_match_the_classic_driver(cluster, classic, live, keyspace_name):
    s = live
    s.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace_name
    )
    for stmt in statements(FUNCTIONS.format(ks=keyspace_name)):
        s.execute(stmt)
    mine, theirs = _refreshed(cluster, classic)
    ks = mine[keyspace_name]
    assert sorted(ks.functions) == [
        "acc(frozen<tuple<int, bigint>>,int)",
        "avg_final(frozen<tuple<int, bigint>>)",
        "plus(int,int)",
        "plus(text,text)",
    ]
    assert list(ks.aggregates) == ["my_avg(int)"]
    agg = ks.aggregates["my_avg(int)"]
    assert (agg.state_func, agg.final_func, agg.initial_condition) == ("acc", "avg_final", "(0, 0)")
    assert keyspace_differences(ks, theirs[keyspace_name]) == []


def _recreate(cluster, session, source, target):
    """Runs ``source``'s export, renamed to ``target``; returns both exports."""
    export = cluster.metadata.keyspaces[source].export_as_string()
    renamed = export.replace(source, target)
    for stmt in statements(renamed):
        session.execute(stmt)
    cluster.refresh_schema_metadata()
    return renamed, cluster.metadata.keyspaces[target].export_as_string()


def test_export_recreates_the_keyspace(cluster, live, full_keyspace, new_keyspace_name):
    keyspace_name = new_keyspace_name()
    cluster.refresh_schema_metadata()
    expected, copied = _recreate(cluster, live, full_keyspace, keyspace_name)
    assert copied == expected
    original, copy = cluster.metadata.keyspaces[full_keyspace], cluster.metadata.keyspaces[keyspace_name]
    assert list(copy.tables) == list(original.tables) and list(copy.views) == list(original.views)
    for name, table in original.tables.items():
        other = copy.tables[name]
        fields = [(c.name, c.cql_type, c.is_static, c.is_reversed) for c in table.columns.values()]
        assert [(c.name, c.cql_type, c.is_static, c.is_reversed) for c in other.columns.values()] == fields
        assert other.options == table.options
        assert {i.name: (i.kind, i.index_options) for i in other.indexes.values()} == {
            i.name: (i.kind, i.index_options) for i in table.indexes.values()
        }


def test_refresh_sees_changes_made_by_another_client(cluster, classic, full_keyspace):
    ks = full_keyspace
    cluster.refresh_schema_metadata()
    other = classic[1]
    other.execute("ALTER TABLE %s.events ADD added_col int" % ks)
    other.execute("DROP INDEX %s.events_select_idx" % ks)
    cluster.refresh_table_metadata(ks, "events")
    events = cluster.metadata.keyspaces[ks].tables["events"]
    assert events.columns["added_col"].cql_type == "int"
    assert (
        "events_select_idx" not in events.indexes and "events_select_idx" not in cluster.metadata.keyspaces[ks].indexes
    )
    other.execute("ALTER TABLE %s.users ADD nickname text" % ks)
    cluster.refresh_table_metadata(ks, "users")
    assert "nickname" in cluster.metadata.keyspaces[ks].tables["users"].columns

    other.execute("ALTER TYPE %s.phone ADD ext int" % ks)
    cluster.refresh_user_type_metadata(ks, "phone")
    assert cluster.metadata.keyspaces[ks].user_types["phone"].field_names == ["kind", "number", "ext"]

    other.execute("ALTER KEYSPACE %s WITH durable_writes = false" % ks)
    cluster.refresh_keyspace_metadata(ks)
    assert cluster.metadata.keyspaces[ks].durable_writes is False
    assert "events" in cluster.metadata.keyspaces[ks].tables

    other.execute("CREATE TABLE %s.later (k int PRIMARY KEY)" % ks)
    cluster.refresh_schema_metadata()
    assert "later" in cluster.metadata.keyspaces[ks].tables
    other.execute("DROP TABLE %s.later" % ks)
    cluster.refresh_table_metadata(ks, "later")
    assert "later" not in cluster.metadata.keyspaces[ks].tables

    classic[0].refresh_schema_metadata()
    assert keyspace_differences(cluster.metadata.keyspaces[ks], classic[0].metadata.keyspaces[ks]) == []


@pytest.mark.requires_setting("materialized_views_enabled")
def test_refresh_keeps_the_views(cluster, classic, full_keyspace):
    """A view altered by another client is read again, and a table read again keeps its views."""
    ks = full_keyspace
    cluster.refresh_schema_metadata()
    other = classic[1]
    other.execute("ALTER MATERIALIZED VIEW %s.users_by_email WITH comment = 'changed'" % ks)
    cluster.refresh_materialized_view_metadata(ks, "users_by_email")
    users = cluster.metadata.keyspaces[ks].tables["users"]
    assert users.views["users_by_email"].options["comment"] == "changed"
    other.execute("ALTER TABLE %s.users ADD nickname text" % ks)
    cluster.refresh_table_metadata(ks, "users")
    assert "nickname" in cluster.metadata.keyspaces[ks].tables["users"].columns
    assert list(cluster.metadata.keyspaces[ks].tables["users"].views) == ["users_by_email", "users_by_name"]
    mine, theirs = _refreshed(cluster, classic)
    assert mine[ks].views["users_by_email"].options["comment"] == "changed"
    assert keyspace_differences(mine[ks], theirs[ks]) == []


def test_mark_stale_rereads_on_the_next_access(cluster, classic, full_keyspace):
    ks = full_keyspace
    cluster.refresh_schema_metadata()
    meta = cluster.metadata
    classic[1].execute("CREATE TABLE %s.marked (k int PRIMARY KEY)" % ks)
    meta._mark_stale(ks, "TABLE", "marked")
    assert "marked" in meta.keyspaces[ks].tables
    classic[1].execute("CREATE TABLE %s.marked2 (k int PRIMARY KEY)" % ks)
    meta._mark_stale()
    assert "marked2" in meta.keyspaces[ks].tables


def test_schema_metadata_disabled(cassandra, keyspace_name):
    c = Cluster([HOST], port=PORT, schema_metadata_enabled=False)
    try:
        s = c.connect()
        s.execute(
            "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace_name
        )
        assert c.metadata.keyspaces == {}
        assert c.metadata.cluster_name
        c.metadata._mark_stale()
        assert c.metadata.keyspaces == {}
        # Asked for explicitly, the schema is read (as by the classic driver).
        c.refresh_schema_metadata()
        assert keyspace_name in c.metadata.keyspaces
    finally:
        c.shutdown()


def test_schema_agreement_and_control_connection_calls(cassandra, keyspace_name):
    """The classic schema calls: ``cluster.control_connection.wait_for_schema_agreement``,
    ``refresh_schema``, ``cluster.metadata.wait_for_schema_agreement``; a table made by
    this client is in the metadata as soon as its DDL returns (the engine waits for the
    schema to agree, then the metadata is read again at the next access)."""
    c = Cluster([HOST], port=PORT)
    s = c.connect()
    try:
        assert c.control_connection.wait_for_schema_agreement() is True
        assert c.control_connection.wait_for_schema_agreement(wait_time=0) is True
        assert c.metadata.wait_for_schema_agreement(5) is True
        s.execute(
            "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace_name
        )
        s.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % keyspace_name)
        assert "t" in c.metadata.keyspaces[keyspace_name].tables
        assert c.control_connection.refresh_schema(keyspace=keyspace_name) is True
        assert list(c.metadata.keyspaces[keyspace_name].tables["t"].columns) == ["k"]
        # Metadata stays readable once every session of the cluster is closed.
        s.shutdown()
        c.refresh_table_metadata(keyspace_name, "t")
        assert c.metadata.keyspaces[keyspace_name].tables["t"].partition_key[0].name == "k"
        assert [h.address for h in c.metadata.all_hosts()] == [HOST]
    finally:
        c.shutdown()


@pytest.mark.requires_setting("user_defined_functions_enabled")
def test_a_keyspaces_dicts_held_by_the_application_follow_changes_as_classic(cluster, classic, live, keyspace_name):
    """What an application takes from a keyspace's metadata (its ``functions``, ``tables``
    dicts) follows this client's later schema changes, as the classic driver's per-object
    updates do; an explicit full refresh gives a new keyspaces dict equal to the one held
    before (which the classic driver fills with the new keyspaces too)."""
    live.execute(
        "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace_name
    )
    held = {}
    for name, c in (("turbocql", cluster), ("classic", classic[0])):
        c.refresh_schema_metadata()
        ks = c.metadata.keyspaces[keyspace_name]
        held[name] = (ks.functions, ks.tables)
    live.execute(
        "CREATE FUNCTION %s.twice (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x * 2;'"
        % keyspace_name
    )
    live.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % keyspace_name)
    assert cluster.metadata.keyspaces[keyspace_name] is not None  # the next access reads the change
    functions, tables = held["turbocql"]
    assert list(functions) == ["twice(int)"] and list(tables) == ["t"]
    classic_functions, classic_tables = held["classic"]
    # The classic driver's event handling is asynchronous: wait for it, not a fixed time.
    classic[0].refresh_user_function_metadata(keyspace_name, _signature("twice", ["int"]))
    classic[0].refresh_table_metadata(keyspace_name, "t")
    assert list(classic_functions) == list(functions) and list(classic_tables) == list(tables)

    for c in (cluster, classic[0]):
        before = c.metadata.keyspaces
        c.refresh_schema_metadata()
        after = c.metadata.keyspaces
        assert after is not before and after == before


def _signature(name, argument_types):
    from turbocql.metadata import SignatureDescriptor

    return SignatureDescriptor(name, argument_types)


def _make_keyspace(session, name):
    session.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % name)


def test_own_ddl_is_in_the_metadata_when_it_returns_as_classic(cassandra, classic, new_keyspace_name):
    """After this cluster's own CREATE/ALTER/DROP returns, on every path (execute,
    execute_async's result, a prepared DDL), the metadata shows it, in the dicts the
    application took before too, with no access of ``cluster.metadata`` in between: as
    the classic driver, which reads the change before it returns the result."""
    from cassandra.cluster import Cluster as ClassicCluster

    names = [new_keyspace_name(), new_keyspace_name()]
    c = Cluster([HOST], port=PORT)
    cc = ClassicCluster([HOST], port=PORT, protocol_version=4)
    try:
        seen = {}
        for (label, cluster), name in zip((("turbocql", c), ("classic", cc)), names):
            s = cluster.connect()
            _make_keyspace(s, name)
            ks = cluster.metadata.keyspaces[name]
            tables, types = ks.tables, ks.user_types
            s.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % name)
            after_execute = sorted(tables)
            s.execute_async("CREATE TYPE %s.point (x int, y int)" % name).result()
            after_async = sorted(types)
            s.execute(s.prepare("ALTER TABLE %s.t ADD v text" % name))
            after_prepared = sorted(tables["t"].columns)
            s.execute("DROP TABLE %s.t" % name)
            after_drop = sorted(tables)
            # A statement that changes no schema reads nothing, and does not fail.
            s.execute("  -- a comment first\n  SELECT release_version FROM system.local")
            seen[label] = (after_execute, after_async, after_prepared, after_drop)
        assert seen["turbocql"] == seen["classic"] == (["t"], ["point"], ["k", "v"], [])
    finally:
        c.shutdown()
        cc.shutdown()


def test_negative_schema_event_refresh_window_reads_only_own_changes_as_classic(
    cassandra, classic, live, new_keyspace_name
):
    """``schema_event_refresh_window=-1``: another client's change is not read until an
    explicit refresh; the cluster's own change is read when it returns, as classic."""
    from cassandra.cluster import Cluster as ClassicCluster

    other, own = new_keyspace_name(), new_keyspace_name()
    c = Cluster([HOST], port=PORT, schema_event_refresh_window=-1)
    cc = ClassicCluster([HOST], port=PORT, protocol_version=4, schema_event_refresh_window=-1)
    try:
        sessions = {"turbocql": c.connect(), "classic": cc.connect()}
        _make_keyspace(live, other)  # another client
        live.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % other)
        seen = {}
        for label, cluster in (("turbocql", c), ("classic", cc)):
            session = sessions[label]
            before_refresh = other in cluster.metadata.keyspaces
            name = own + ("_c" if label == "classic" else "")
            _make_keyspace(session, name)
            session.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % name)
            own_seen = list(cluster.metadata.keyspaces[name].tables)
            still_unseen = other not in cluster.metadata.keyspaces
            cluster.refresh_schema_metadata()
            seen[label] = (before_refresh, own_seen, still_unseen, list(cluster.metadata.keyspaces[other].tables))
            session.execute("DROP KEYSPACE %s" % name)
        assert seen["turbocql"] == seen["classic"] == (False, ["t"], True, ["t"])
    finally:
        c.shutdown()
        cc.shutdown()
