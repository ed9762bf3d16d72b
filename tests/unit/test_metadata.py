"""Unit tests for turbocql.metadata without a server: names and values, replication
strategies, type strings, CQL rendering from hand-built objects, schema rows read through a
fake ``fetch`` (compared with the classic driver's parser on the same rows, when it is
installed), and Metadata's refresh and staleness handling.

:func:`keyspace_differences` (turbocql's metadata against the classic driver's, field by
field) is shared with tests/integration/test_metadata.py.
"""

import re
import threading
import time
from collections.abc import Mapping

import pytest

from turbocql import DriverException, InvalidRequest
from turbocql import metadata as md
from turbocql._metadata.schema_cql import strip_frozen, type_names
from turbocql._metadata.schema_read import function_target, wait_for_schema_agreement

# -- comparison with the classic driver's metadata ----------------------------------------


def _plain(value):
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _columns(cols):
    return [(c.name, c.cql_type, bool(c.is_static), bool(c.is_reversed)) for c in cols]


def _strategy(s):
    if s is None:
        return None
    return (
        type(s).__name__.lstrip("_"),
        s.export_for_schema() if not isinstance(s.export_for_schema(), dict) else str(s.export_for_schema()),
        getattr(s, "replication_factor", None),
        getattr(s, "dc_replication_factors", None),
    )


def _table_like(t):
    return {
        "keyspace_name": t.keyspace_name,
        "name": t.name,
        "columns": list(t.columns),
        "column_fields": _columns(t.columns.values()),
        "partition_key": _columns(t.partition_key),
        "clustering_key": _columns(t.clustering_key),
        "options": _plain(t.options),
        "extensions": _plain(t.extensions or {}),
        "cql": t.as_cql_query(),
        "cql_formatted": t.as_cql_query(formatted=True),
    }


def keyspace_differences(mine, classic):
    """Where turbocql's KeyspaceMetadata ``mine`` and the classic driver's ``classic``
    differ: a list of descriptions, empty if they agree on every field compared."""
    diffs = []

    def check(what, a, b):
        if a != b:
            diffs.append("%s: turbocql %r != classic %r" % (what, a, b))

    ks = mine.name
    for attr in ("name", "durable_writes", "virtual", "graph_engine"):
        check("%s.%s" % (ks, attr), getattr(mine, attr), getattr(classic, attr))
    check("%s.replication_strategy" % ks, _strategy(mine.replication_strategy), _strategy(classic.replication_strategy))
    check("%s.tables" % ks, list(mine.tables), list(classic.tables))
    check("%s.views" % ks, list(mine.views), list(classic.views))
    check("%s.indexes" % ks, sorted(mine.indexes), sorted(classic.indexes))
    check("%s.user_types" % ks, list(mine.user_types), list(classic.user_types))
    check("%s.functions" % ks, list(mine.functions), list(classic.functions))
    check("%s.aggregates" % ks, list(mine.aggregates), list(classic.aggregates))
    for name in set(mine.tables) & set(classic.tables):
        a, b = mine.tables[name], classic.tables[name]
        where = "%s.%s" % (ks, name)
        for key, value in _table_like(a).items():
            check("%s %s" % (where, key), value, _table_like(b)[key])
        check(where + " primary_key", _columns(a.primary_key), _columns(b.primary_key))
        check(where + " virtual", a.virtual, b.virtual)
        check(where + " is_compact_storage", a.is_compact_storage, b.is_compact_storage)
        check(where + " views", list(a.views), list(b.views))
        check(where + " triggers", list(a.triggers), list(b.triggers))
        for tname in set(a.triggers) & set(b.triggers):
            check(where + " trigger " + tname, _plain(a.triggers[tname].options), _plain(b.triggers[tname].options))
            check(where + " trigger cql", a.triggers[tname].as_cql_query(), b.triggers[tname].as_cql_query())
        check(where + " indexes", list(a.indexes), list(b.indexes))
        for iname in set(a.indexes) & set(b.indexes):
            ia, ib = a.indexes[iname], b.indexes[iname]
            fields = ("keyspace_name", "table_name", "name", "kind")
            check("index " + iname, [getattr(ia, f) for f in fields], [getattr(ib, f) for f in fields])
            check("index %s options" % iname, _plain(ia.index_options), _plain(ib.index_options))
            check("index %s cql" % iname, ia.export_as_string(), ib.export_as_string())
        check(where + " export", a.export_as_string(), b.export_as_string())
    for name in set(mine.views) & set(classic.views):
        a, b = mine.views[name], classic.views[name]
        for key, value in _table_like(a).items():
            check("view %s %s" % (name, key), value, _table_like(b)[key])
        for attr in ("base_table_name", "include_all_columns", "where_clause"):
            check("view %s %s" % (name, attr), getattr(a, attr), getattr(b, attr))
        check("view %s export" % name, a.export_as_string(), b.export_as_string())
    for name in set(mine.user_types) & set(classic.user_types):
        a, b = mine.user_types[name], classic.user_types[name]
        for attr in ("keyspace", "name", "field_names", "field_types"):
            check("type %s %s" % (name, attr), list_or(getattr(a, attr)), list_or(getattr(b, attr)))
        check("type %s cql" % name, a.export_as_string(), b.export_as_string())
    fn_fields = (
        "keyspace",
        "name",
        "argument_types",
        "argument_names",
        "return_type",
        "language",
        "body",
        "called_on_null_input",
        "deterministic",
        "monotonic",
        "signature",
    )
    for sig in set(mine.functions) & set(classic.functions):
        a, b = mine.functions[sig], classic.functions[sig]
        for attr in fn_fields:
            check("function %s %s" % (sig, attr), list_or(getattr(a, attr)), list_or(getattr(b, attr)))
        check("function %s monotonic_on" % sig, list(a.monotonic_on or ()), list(b.monotonic_on or ()))
        check("function %s cql" % sig, a.export_as_string(), b.export_as_string())
    agg_fields = (
        "keyspace",
        "name",
        "argument_types",
        "state_func",
        "state_type",
        "final_func",
        "initial_condition",
        "return_type",
        "deterministic",
        "signature",
    )
    for sig in set(mine.aggregates) & set(classic.aggregates):
        a, b = mine.aggregates[sig], classic.aggregates[sig]
        for attr in agg_fields:
            check("aggregate %s %s" % (sig, attr), list_or(getattr(a, attr)), list_or(getattr(b, attr)))
        check("aggregate %s cql" % sig, a.export_as_string(), b.export_as_string())
    check("%s.as_cql_query" % ks, mine.as_cql_query(), classic.as_cql_query())
    check("%s.export_as_string" % ks, mine.export_as_string(), classic.export_as_string())
    return diffs


def list_or(value):
    return list(value) if isinstance(value, (list, tuple)) else value


# -- names and values ----------------------------------------------------------------------

NAMES = ["abc", "a_1", "Abc", "1abc", "_a", "a b", 'a"b', "select", "SELECT", "key", "text", "rows", "", "é"]


@pytest.mark.parametrize("name", NAMES)
def test_protect_name(name):
    quoted = '"%s"' % name.replace('"', '""')
    unquoted = re.fullmatch(r"[a-z][a-z0-9_]*", name) and name.lower() not in md.cql_keywords_reserved
    assert md.protect_name(name) == (name if unquoted else quoted)
    assert md.maybe_escape_name(name) == md.protect_name(name)
    assert md.escape_name(name) == quoted
    assert md.is_valid_name(name) == bool(unquoted)


def test_names_quoted_as_the_classic_driver_quotes_them():
    classic = pytest.importorskip("cassandra.metadata")
    assert md.cql_keywords == classic.cql_keywords
    assert md.cql_keywords_reserved == classic.cql_keywords_reserved
    assert md.cql_keywords_unreserved == classic.cql_keywords_unreserved
    for name in NAMES + sorted(classic.cql_keywords):
        assert md.protect_name(name) == classic.protect_name(name)
        assert md.is_valid_name(name) == classic.is_valid_name(name)
    assert md.protect_names(["a", "B"]) == classic.protect_names(["a", "B"]) == ["a", '"B"']
    assert not md.is_valid_name(None)


@pytest.mark.parametrize(
    "value, cql",
    [(None, "NULL"), (True, "true"), (False, "false"), (3, "3"), (0.01, "0.01"), ("it's", "'it''s'"), ("", "''")],
)
def test_protect_value(value, cql):
    assert md.protect_value(value) == cql


# -- replication strategies ----------------------------------------------------------------


def test_simple_strategy():
    s = md.ReplicationStrategy.create("org.apache.cassandra.locator.SimpleStrategy", {"replication_factor": "3"})
    assert isinstance(s, md.SimpleStrategy)
    assert s.replication_factor == 3
    assert s.replication_factor_info == md.ReplicationFactor(3)
    assert s.export_for_schema() == "{'class': 'SimpleStrategy', 'replication_factor': '3'}"
    assert s == md.SimpleStrategy({"replication_factor": "3"})
    assert s != md.SimpleStrategy({"replication_factor": "2"})


def test_transient_replication_factor():
    rf = md.ReplicationFactor.create("3/1")
    assert (rf.all_replicas, rf.full_replicas, rf.transient_replicas, str(rf)) == (3, 2, 1, "3/1")
    assert md.SimpleStrategy({"replication_factor": "3/1"}).replication_factor == 2
    with pytest.raises(ValueError):
        md.ReplicationFactor.create("x")


def test_network_topology_strategy():
    s = md.ReplicationStrategy.create("NetworkTopologyStrategy", {"dc2": "2/1", "dc1": "3"})
    assert isinstance(s, md.NetworkTopologyStrategy)
    assert s.dc_replication_factors == {"dc1": 3, "dc2": 1}
    assert s.dc_replication_factors_info["dc2"] == md.ReplicationFactor(2, 1)
    assert s.export_for_schema() == "{'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2/1'}"
    assert s == md.NetworkTopologyStrategy({"dc1": "3", "dc2": "2/1"})


def test_other_strategies():
    assert md.ReplicationStrategy.create("org.apache.cassandra.locator.LocalStrategy", {}) == md.LocalStrategy({})
    assert md.LocalStrategy({}).export_for_schema() == "{'class': 'LocalStrategy'}"
    every = md.ReplicationStrategy.create("EverywhereStrategy", {})
    assert isinstance(every, md.EverywhereStrategy)
    assert every.export_for_schema() == "{'class': 'EverywhereStrategy'}"
    other = md.ReplicationStrategy.create("com.example.MyStrategy", {"opt": "1"})
    assert other.name == "com.example.MyStrategy"
    assert other.export_for_schema() == "{'opt': '1', 'class': 'com.example.MyStrategy'}"
    assert md.ReplicationStrategy.create(None, {}) is None
    # Options a strategy cannot take: no strategy (and a warning), as the classic driver.
    assert md.ReplicationStrategy.create("SimpleStrategy", {}) is None


def test_strategies_export_as_the_classic_driver():
    classic = pytest.importorskip("cassandra.metadata")
    cases = [
        ("org.apache.cassandra.locator.SimpleStrategy", {"replication_factor": "2"}),
        ("SimpleStrategy", {"replication_factor": "3/1"}),
        ("NetworkTopologyStrategy", {"dc2": "2", "dc1": "3/1"}),
        ("org.apache.cassandra.locator.LocalStrategy", {}),
        ("com.example.MyStrategy", {"opt": "1"}),
    ]
    for cls, options in cases:
        mine = md.ReplicationStrategy.create(cls, dict(options)).export_for_schema()
        theirs = classic.ReplicationStrategy.create(cls, dict(options)).export_for_schema()
        assert mine == str(theirs)


# -- type strings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cql, stripped",
    [
        ("int", "int"),
        ("frozen<list<frozen<tuple<int, text>>>>", "list<tuple<int, text>>"),
        ("map<text,int>", "map<text, int>"),
        ('frozen<"MyType">', '"MyType"'),
        ("vector<float, 3>", "vector<float, 3>"),
        ("frozen<map<frozen<set<int>>, list<text>>>", "map<set<int>, list<text>>"),
    ],
)
def test_strip_frozen(cql, stripped):
    assert strip_frozen(cql) == stripped
    classic = pytest.importorskip("cassandra.cqltypes")
    assert classic.strip_frozen(cql) == stripped


def test_type_names():
    assert type_names('map<text, frozen<"My ""T""">>') == ["map", "text", "frozen", 'My "T"']
    assert type_names("'org.apache.cassandra.db.marshal.BytesType'") == []
    assert type_names("list<") == []


# -- rendering from hand-built objects -----------------------------------------------------


def _table():
    t = md.TableMetadata("ks", "Events")
    cols = [
        ("a", "int", False, False),
        ("b", "text", False, False),
        ("c", "timestamp", False, True),
        ("d", "int", False, False),
        ("s", "text", True, False),
        ("select", "map<text, frozen<list<int>>>", False, False),
    ]
    for name, typ, static, reversed_ in cols:
        t.columns[name] = md.ColumnMetadata(t, name, typ, static, reversed_)
    t.partition_key = [t.columns["a"], t.columns["b"]]
    t.clustering_key = [t.columns["c"], t.columns["d"]]
    t.options = {
        "comment": "it's",
        "gc_grace_seconds": 10,
        "caching": {"keys": "ALL", "rows_per_partition": "NONE"},
        "cdc": None,
        "crc_check_chance": 1.0,
    }
    return t


def test_table_cql():
    t = _table()
    assert [c.name for c in t.primary_key] == ["a", "b", "c", "d"]
    assert t.as_cql_query() == (
        'CREATE TABLE ks."Events" (a int, b text, c timestamp, d int, s text static, '
        '"select" map<text, frozen<list<int>>>, PRIMARY KEY ((a, b), c, d)) '
        "WITH CLUSTERING ORDER BY (c DESC, d ASC) AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} "
        "AND comment = 'it''s' AND crc_check_chance = 1.0 AND gc_grace_seconds = 10"
    )
    idx = md.IndexMetadata("ks", "Events", "by_d", "COMPOSITES", {"target": "d"})
    t.indexes[idx.name] = idx
    sai = md.IndexMetadata(
        "ks", "Events", "Sai", "CUSTOM", {"class_name": "StorageAttachedIndex", "target": 'keys("select")', "o": "x"}
    )
    t.indexes[sai.name] = sai
    assert idx.export_as_string() == 'CREATE INDEX by_d ON ks."Events" (d);'
    assert sai.as_cql_query() == (
        'CREATE CUSTOM INDEX "Sai" ON ks."Events" (keys("select")) USING \'StorageAttachedIndex\' '
        "WITH OPTIONS = {'o': 'x'}"
    )
    assert t.export_as_string() == (
        'CREATE TABLE ks."Events" (\n'
        "    a int,\n"
        "    b text,\n"
        "    c timestamp,\n"
        "    d int,\n"
        "    s text static,\n"
        '    "select" map<text, frozen<list<int>>>,\n'
        "    PRIMARY KEY ((a, b), c, d)\n"
        ") WITH CLUSTERING ORDER BY (c DESC, d ASC)\n"
        "    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}\n"
        "    AND comment = 'it''s'\n"
        "    AND crc_check_chance = 1.0\n"
        "    AND gc_grace_seconds = 10;\n"
        'CREATE INDEX by_d ON ks."Events" (d);\n'
        'CREATE CUSTOM INDEX "Sai" ON ks."Events" (keys("select")) USING \'StorageAttachedIndex\' '
        "WITH OPTIONS = {'o': 'x'};"
    )


def test_single_key_table_and_virtual_table():
    t = md.TableMetadata("ks", "t", virtual=True)
    t.columns["k"] = md.ColumnMetadata(t, "k", "int")
    t.columns["v"] = md.ColumnMetadata(t, "v", "text")
    t.partition_key = [t.columns["k"]]
    t.options = {"comment": None}
    assert t.as_cql_query() == "VIRTUAL TABLE ks.t (k int PRIMARY KEY, v text)"
    assert t.export_as_string() == (
        "/*\nWarning: Table ks.t is a virtual table and cannot be recreated with CQL.\n"
        "Structure, for reference:\nVIRTUAL TABLE ks.t (\n    k int PRIMARY KEY,\n    v text\n);\n*/"
    )


def test_view_type_function_aggregate_cql():
    t = _table()
    v = md.MaterializedViewMetadata("ks", "by_c", "Events", False, "c IS NOT NULL", {"comment": ""})
    for name in ("c", "a", "b", "d"):
        v.columns[name] = md.ColumnMetadata(v, name, "int", False, name == "a")
    v.partition_key = [v.columns["c"]]
    v.clustering_key = [v.columns["a"], v.columns["b"], v.columns["d"]]
    assert v.as_cql_query() == (
        'CREATE MATERIALIZED VIEW ks.by_c AS SELECT c, a, b, d FROM ks."Events" WHERE c IS NOT NULL '
        "PRIMARY KEY (c, a, b, d) WITH CLUSTERING ORDER BY (a DESC, b ASC, d ASC) AND comment = ''"
    )
    v.include_all_columns = True
    v.partition_key = [v.columns["c"], v.columns["a"]]
    v.clustering_key = []
    assert v.export_as_string() == (
        'CREATE MATERIALIZED VIEW ks.by_c AS\n    SELECT *\n    FROM ks."Events"\n    WHERE c IS NOT NULL\n'
        "    PRIMARY KEY ((c, a))\n    WITH comment = '';"
    )
    t.views[v.name] = v
    assert t.export_as_string().endswith("\n\n" + v.export_as_string())

    u = md.UserType("ks", "Addr", ["street", "zip"], ["text", "frozen<list<int>>"])
    assert u.as_cql_query() == 'CREATE TYPE ks."Addr" (street text, zip frozen<list<int>>)'
    assert u.export_as_string() == 'CREATE TYPE ks."Addr" (\n    street text,\n    zip frozen<list<int>>\n);'

    f = md.Function(
        "ks", "f", ["int", "frozen<list<int>>"], ["a", "b"], "int", "java", "return a;", False, False, False, ()
    )
    assert f.signature == "f(int,frozen<list<int>>)"
    assert f.as_cql_query() == (
        "CREATE FUNCTION ks.f(a int, b list<int>) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$return a;$$"
    )
    f.body = "return '$$';"
    assert f.as_cql_query().endswith("AS 'return ''$$'';'")
    a = md.Aggregate("ks", "agg", ["int"], "f", "frozen<tuple<int, int>>", "fin", "(0, 0)", "int", False)
    assert a.signature == "agg(int)"
    assert a.export_as_string() == (
        "CREATE AGGREGATE ks.agg(int)\n    SFUNC f\n    STYPE tuple<int, int>\n    FINALFUNC fin\n    INITCOND (0, 0);"
    )


def test_keyspace_export_orders_types_by_dependency():
    ks = md.KeyspaceMetadata("ks", True, "SimpleStrategy", {"replication_factor": "1"})
    ks.user_types["a_outer"] = md.UserType("ks", "a_outer", ["x"], ['frozen<"Z inner">'])
    ks.user_types["Z inner"] = md.UserType("ks", "Z inner", ["y"], ["frozen<m_mid>"])
    ks.user_types["m_mid"] = md.UserType("ks", "m_mid", ["z"], ["int"])
    assert [t.name for t in md.user_types_in_order(ks.user_types)] == ["m_mid", "Z inner", "a_outer"]
    assert ks.as_cql_query() == (
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  "
        "AND durable_writes = true"
    )
    assert ks.export_as_string().split("\n\n")[1:] == ks.user_type_strings()
    ks.virtual = True
    assert ks.as_cql_query() == "// VIRTUAL KEYSPACE ks"


# -- reading rows (fake system tables) ----------------------------------------------------


class FakeSchema:
    """System tables as lists of row dicts, queried like the reader queries them."""

    QUERY = re.compile(r"SELECT (.+?) FROM (\S+)(?: WHERE (.*))?$")

    def __init__(self, tables):
        self.tables = tables
        self.queries = []
        self.fail = None

    def fetch(self, query, params=None):
        self.queries.append((query, params))
        if self.fail is not None:
            raise self.fail
        m = self.QUERY.match(query)
        table, where = m.group(2), m.group(3)
        if table not in self.tables:
            raise InvalidRequest("unconfigured table %s" % table)
        rows = self.tables[table]
        if where and params:
            keys = re.findall(r"(\w+) = %s", where)
            rows = [r for r in rows if all(r.get(k) == v for k, v in zip(keys, params))]
        return [dict(r) for r in rows]


def _col(ks, table, name, typ, kind="regular", position=-1, order="none"):
    return {
        "keyspace_name": ks,
        "table_name": table,
        "column_name": name,
        "clustering_order": order,
        "column_name_bytes": name.encode(),
        "kind": kind,
        "position": position,
        "type": typ,
    }


_OPTIONS = {
    "additional_write_policy": "99p",
    "bloom_filter_fp_chance": 0.01,
    "caching": {"keys": "ALL", "rows_per_partition": "NONE"},
    "cdc": None,
    "comment": "",
    "compaction": {
        "class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy",
        "max_threshold": "32",
        "min_threshold": "4",
    },
    "compression": {"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"},
    "crc_check_chance": 1.0,
    "dclocal_read_repair_chance": 0.0,
    "default_time_to_live": 0,
    "extensions": {},
    "gc_grace_seconds": 864000,
    "max_index_interval": 2048,
    "memtable": "default",
    "memtable_flush_period_in_ms": 0,
    "min_index_interval": 128,
    "read_repair": "BLOCKING",
    "read_repair_chance": 0.0,
    "speculative_retry": "99p",
}


def _table_row(ks, name, flags=("compound",), **options):
    return {"keyspace_name": ks, "table_name": name, "flags": set(flags), "id": None, **_OPTIONS, **options}


def schema_rows(ks="ks"):
    """The system tables of a keyspace with one of everything (and the system tables the
    Metadata reads besides)."""
    c = _col
    return {
        "system.local": [{"cluster_name": "Test Cluster", "partitioner": "Murmur3", "schema_version": "v1"}],
        "system.peers": [],
        "system_schema.keyspaces": [
            {
                "keyspace_name": ks,
                "durable_writes": True,
                "replication": {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"},
            },
            {
                "keyspace_name": "other",
                "durable_writes": False,
                "replication": {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
            },
        ],
        "system_schema.tables": [
            _table_row(ks, "dense", flags=("dense",)),
            _table_row(ks, "legacy", flags=()),
            _table_row(ks, "t", comment="it's", extensions={"ext": b"x"}),
            _table_row("other", "u"),
        ],
        "system_schema.columns": [
            c(ks, "by_e", "a", "int", "clustering", 0),
            c(ks, "by_e", "b", "text", "clustering", 1),
            c(ks, "by_e", "c", "timestamp", "clustering", 2, "desc"),
            c(ks, "by_e", "d", "int", "clustering", 3),
            c(ks, "by_e", "e", "int", "partition_key", 0),
            c(ks, "by_e", "l", "list<int>"),
            c(ks, "dense", "c", "int", "clustering", 0, "asc"),
            c(ks, "dense", "k", "int", "partition_key", 0),
            c(ks, "dense", "value", "empty"),
            c(ks, "legacy", "column1", "text", "clustering", 0, "asc"),
            c(ks, "legacy", "key", "blob", "partition_key", 0),
            c(ks, "legacy", "s1", "int", "static"),
            c(ks, "legacy", "value", "blob"),
            c(ks, "t", "Quoted Col", "frozen<person>"),
            c(ks, "t", "a", "int", "partition_key", 0),
            c(ks, "t", "b", "text", "partition_key", 1),
            c(ks, "t", "c", "timestamp", "clustering", 0, "desc"),
            c(ks, "t", "d", "int", "clustering", 1, "asc"),
            c(ks, "t", "e", "int"),
            c(ks, "t", "l", "list<int>"),
            c(ks, "t", "m", "map<text, frozen<set<int>>>"),
            c(ks, "t", "s", "text", "static"),
            c(ks, "t", "select", "tuple<int, text>"),
            c("other", "u", "k", "int", "partition_key", 0),
        ],
        "system_schema.indexes": [
            {
                "keyspace_name": ks,
                "table_name": "t",
                "index_name": "t_e_idx",
                "kind": "COMPOSITES",
                "options": {"target": "e"},
            },
            {
                "keyspace_name": ks,
                "table_name": "t",
                "index_name": "t_m_sai",
                "kind": "CUSTOM",
                "options": {
                    "class_name": "org.apache.cassandra.index.sai.StorageAttachedIndex",
                    "target": "keys(m)",
                },
            },
            {
                "keyspace_name": ks,
                "table_name": "t",
                "index_name": "t_s_sasi",
                "kind": "CUSTOM",
                "options": {
                    "class_name": "org.apache.cassandra.index.sasi.SASIIndex",
                    "mode": "CONTAINS",
                    "target": "s",
                },
            },
        ],
        "system_schema.triggers": [
            {"keyspace_name": ks, "table_name": "t", "trigger_name": "trg", "options": {"class": "org.example.T"}}
        ],
        "system_schema.views": [
            {
                "keyspace_name": ks,
                "view_name": "by_e",
                "base_table_name": "t",
                "base_table_id": None,
                "include_all_columns": False,
                "where_clause": "e IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL AND d IS NOT NULL",
                **_OPTIONS,
            }
        ],
        "system_schema.types": [
            {
                "keyspace_name": ks,
                "type_name": "address",
                "field_names": ["street", "zip"],
                "field_types": ["text", "int"],
            },
            {
                "keyspace_name": ks,
                "type_name": "person",
                "field_names": ["name", "addr", "phones"],
                "field_types": ["text", "frozen<address>", "list<frozen<phone>>"],
            },
            {"keyspace_name": ks, "type_name": "phone", "field_names": ["num"], "field_types": ["text"]},
        ],
        "system_schema.functions": [
            {
                "keyspace_name": ks,
                "function_name": "f",
                "argument_types": ["int", "frozen<list<int>>"],
                "argument_names": ["a", "b"],
                "body": "return a;",
                "called_on_null_input": True,
                "language": "java",
                "return_type": "int",
            },
            {
                "keyspace_name": ks,
                "function_name": "f",
                "argument_types": ["text"],
                "argument_names": ["x"],
                "body": "return 1;",
                "called_on_null_input": False,
                "language": "java",
                "return_type": "int",
            },
            {
                "keyspace_name": ks,
                "function_name": "state",
                "argument_types": ["frozen<tuple<int, int>>", "int"],
                "argument_names": ["s", "v"],
                "body": "return s;",
                "called_on_null_input": True,
                "language": "java",
                "return_type": "frozen<tuple<int, int>>",
            },
        ],
        "system_schema.aggregates": [
            {
                "keyspace_name": ks,
                "aggregate_name": "agg",
                "argument_types": ["int"],
                "final_func": None,
                "initcond": "(0, 0)",
                "return_type": "frozen<tuple<int, int>>",
                "state_func": "state",
                "state_type": "frozen<tuple<int, int>>",
            }
        ],
        "system_virtual_schema.keyspaces": [{"keyspace_name": "system_views"}],
        "system_virtual_schema.tables": [
            {"keyspace_name": "system_views", "table_name": "caches", "comment": "system caches"}
        ],
        "system_virtual_schema.columns": [
            c("system_views", "caches", "capacity", "bigint"),
            c("system_views", "caches", "name", "text", "partition_key", 0),
        ],
    }


def attached(tables=None, schema_enabled=True):
    fake = FakeSchema(tables or schema_rows())
    meta = md.Metadata()
    meta._attach(fake.fetch, schema_enabled=schema_enabled, max_schema_agreement_wait=0)
    return meta, fake


def test_read_schema():
    meta, _ = attached()
    assert meta.cluster_name == "Test Cluster"
    assert list(meta.keyspaces) == ["ks", "other", "system_views"]
    ks = meta.keyspaces["ks"]
    assert ks.replication_strategy.dc_replication_factors == {"dc1": 3}
    assert list(ks.tables) == ["dense", "legacy", "t"]
    t = ks.tables["t"]
    assert list(t.columns) == ["a", "b", "c", "d", "Quoted Col", "e", "l", "m", "s", "select"]
    assert [c.name for c in t.partition_key] == ["a", "b"]
    assert [(c.name, c.is_reversed) for c in t.clustering_key] == [("c", True), ("d", False)]
    assert t.columns["s"].is_static and not t.is_compact_storage
    assert "memtable" not in t.options and t.options["comment"] == "it's"
    assert list(t.indexes) == ["t_e_idx", "t_m_sai", "t_s_sasi"] == sorted(ks.indexes)
    assert list(t.views) == ["by_e"] and ks.views["by_e"] is t.views["by_e"]
    assert list(ks.functions) == ["f(int,frozen<list<int>>)", "f(text)", "state(frozen<tuple<int, int>>,int)"]
    assert list(ks.aggregates) == ["agg(int)"]
    dense, legacy = ks.tables["dense"], ks.tables["legacy"]
    assert dense.is_compact_storage and list(dense.columns) == ["k", "c"]
    assert legacy.is_compact_storage and list(legacy.columns) == ["key", "s1"]
    assert not legacy.columns["s1"].is_static and legacy.clustering_key == []
    vks = meta.keyspaces["system_views"]
    assert vks.virtual and vks.replication_strategy is None and vks.durable_writes is None
    assert vks.tables["caches"].virtual and list(vks.tables["caches"].columns) == ["name", "capacity"]
    export = ks.export_as_string()
    assert export.index("CREATE TYPE ks.phone") < export.index("CREATE TYPE ks.person")
    assert meta.export_schema_as_string().startswith(export)


def _classic_keyspaces(tables):
    """The classic driver's parser (Cassandra 4.0+) on the same rows."""
    classic = pytest.importorskip("cassandra.metadata")
    parser = classic.SchemaParserV4(None, 0)

    def rows(table):
        return [dict(r) for r in tables.get(table, [])]

    def query_all():
        for attr, table in [
            ("keyspaces_result", "system_schema.keyspaces"),
            ("tables_result", "system_schema.tables"),
            ("columns_result", "system_schema.columns"),
            ("triggers_result", "system_schema.triggers"),
            ("types_result", "system_schema.types"),
            ("functions_result", "system_schema.functions"),
            ("aggregates_result", "system_schema.aggregates"),
            ("indexes_result", "system_schema.indexes"),
            ("views_result", "system_schema.views"),
            ("virtual_keyspaces_result", "system_virtual_schema.keyspaces"),
            ("virtual_tables_result", "system_virtual_schema.tables"),
            ("virtual_columns_result", "system_virtual_schema.columns"),
        ]:
            setattr(parser, attr, rows(table))
        parser._aggregate_results()

    parser._query_all = query_all
    return {ks.name: ks for ks in parser.get_all_keyspaces()}


def test_rows_read_as_the_classic_driver_reads_them():
    tables = schema_rows()
    meta, _ = attached(tables)
    classic = _classic_keyspaces(tables)
    assert list(meta.keyspaces) == list(classic)
    for name in classic:
        assert keyspace_differences(meta.keyspaces[name], classic[name]) == []


# -- Metadata: refresh, staleness, topology stubs ------------------------------------------


def test_schema_disabled_reads_nothing():
    meta, fake = attached(schema_enabled=False)
    assert meta.keyspaces == {}
    assert [q for q, _ in fake.queries if "system_schema" in q] == []
    meta._mark_stale()
    assert meta.keyspaces == {}
    # An explicit refresh reads, as the classic driver's does.
    meta._refresh()
    assert "ks" in meta.keyspaces


def test_before_connect():
    meta = md.Metadata()
    assert meta.keyspaces == {} and meta.token_map is None
    assert meta.all_hosts() == [] and meta.get_host("127.0.0.1") is None and meta.get_replicas("ks", b"k") == []
    meta._mark_stale()
    assert meta.keyspaces == {}
    with pytest.raises(DriverException):
        meta._refresh()
    with pytest.raises(ValueError):
        meta._refresh("ks", "nonsense", "x")


def test_topology_is_delegated():
    class Topology:
        token_map = "tm"

        def all_hosts(self):
            return ["h"]

        def get_host(self, address, port=None):
            return (address, port)

        def get_replicas(self, keyspace, key):
            return [keyspace, key]

    meta = md.Metadata()
    meta._topology = Topology()
    assert meta.token_map == "tm" and meta.all_hosts() == ["h"]
    assert meta.get_host("a", 1) == ("a", 1) and meta.get_replicas("ks", b"k") == ["ks", b"k"]


def test_targeted_refresh():
    tables = schema_rows()
    meta, fake = attached(tables)
    ks = meta.keyspaces["ks"]
    # A new column, read by refreshing the table alone.
    tables["system_schema.columns"].append(_col("ks", "t", "z", "int"))
    fake.queries.clear()
    meta._refresh("ks", "table", "t", 0)
    assert all("table_name" in q or "view_name" in q for q, _ in fake.queries)
    assert "z" in ks.tables["t"].columns and list(ks.tables["t"].views) == ["by_e"]
    assert meta.keyspaces["ks"] is ks
    # A view, dropped.
    tables["system_schema.views"].clear()
    meta._refresh("ks", "view", "by_e", 0)
    assert ks.views == {} and ks.tables["t"].views == {}
    # A table, dropped: its indexes go too.
    tables["system_schema.tables"] = [r for r in tables["system_schema.tables"] if r["table_name"] != "t"]
    meta._refresh("ks", "table", "t", 0)
    assert "t" not in ks.tables and ks.indexes == {}
    # A type.
    tables["system_schema.types"][0]["field_names"] = ["street", "zip5"]
    meta._refresh("ks", "type", "address", 0)
    assert ks.user_types["address"].field_names == ["street", "zip5"]
    tables["system_schema.types"].pop(0)
    meta._refresh("ks", "type", "address", 0)
    assert "address" not in ks.user_types
    # Functions: one overload by descriptor or signature, every overload by name.
    tables["system_schema.functions"][1]["body"] = "return 2;"

    class Descriptor:
        name, argument_types = "f", ["text"]

    meta._refresh("ks", "function", Descriptor(), 0)
    assert ks.functions["f(text)"].body == "return 2;"
    del tables["system_schema.functions"][0]
    meta._refresh("ks", "function", "f(int,frozen<list<int>>)", 0)
    assert list(ks.functions) == ["f(text)", "state(frozen<tuple<int, int>>,int)"]
    del tables["system_schema.functions"][0]
    meta._refresh("ks", "function", "f", 0)
    assert list(ks.functions) == ["state(frozen<tuple<int, int>>,int)"]
    tables["system_schema.aggregates"].clear()
    meta._refresh("ks", "aggregate", ("agg", ["int"]), 0)
    assert ks.aggregates == {}
    # A keyspace: read whole, replacing the old object; gone: dropped.
    meta._refresh("ks", None, None, 0)
    assert meta.keyspaces["ks"] is not ks and "t" not in meta.keyspaces["ks"].tables
    tables["system_schema.keyspaces"].pop(1)
    meta._refresh("other", max_schema_agreement_wait=0)
    assert list(meta.keyspaces) == ["ks", "system_views"]
    # An object of a keyspace not known yet: the keyspace is read.
    tables["system_schema.keyspaces"].append(
        {
            "keyspace_name": "other",
            "durable_writes": True,
            "replication": {"class": "SimpleStrategy", "replication_factor": "2"},
        }
    )
    meta._refresh("other", "table", "u", 0)
    assert list(meta.keyspaces["other"].tables) == ["u"]
    meta._refresh("system_views", "table", "caches", 0)
    assert meta.keyspaces["system_views"].tables["caches"].virtual


def test_function_target():
    assert function_target("f") == ("f", None)
    assert function_target("f()") == ("f", ())
    assert function_target("f(int,map<int, text>)") == ("f", ("int", "map<int, text>"))
    assert function_target(("f", ["int"])) == ("f", ("int",))


def test_mark_stale_reads_on_next_access_only():
    tables = schema_rows()
    meta, fake = attached(tables)
    fake.queries.clear()
    assert "ks" in meta.keyspaces and fake.queries == []
    tables["system_schema.columns"].append(_col("ks", "t", "z", "int"))
    meta._mark_stale("ks", "TABLE", "t")
    assert fake.queries == []
    assert "z" in meta.keyspaces["ks"].tables["t"].columns
    assert fake.queries and all(p in (("ks", "t"), None) for _, p in fake.queries)
    fake.queries.clear()
    _ = meta.keyspaces
    assert fake.queries == []
    # The keyspace's own row: replication read, tables kept.
    tables["system_schema.keyspaces"][0]["replication"] = {"class": "SimpleStrategy", "replication_factor": "2"}
    meta._mark_stale("ks", "keyspace")
    ks = meta.keyspaces["ks"]
    assert ks.replication_strategy.replication_factor == 2 and "t" in ks.tables
    assert [q for q, _ in fake.queries if "system_schema" in q] == [
        "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = %s"
    ]
    # Everything.
    tables["system_schema.keyspaces"].append({"keyspace_name": "new", "durable_writes": True, "replication": {}})
    meta._mark_stale()
    assert list(meta.keyspaces) == ["ks", "other", "system_views", "new"]
    meta._mark_stale("ks", "function", "f", ["text"])
    tables["system_schema.functions"][1]["body"] = "x"
    assert meta.keyspaces["ks"].functions["f(text)"].body == "x"


def test_many_marks_read_everything():
    meta, fake = attached()
    for i in range(100):
        meta._mark_stale("ks", "table", "t%d" % i)
    fake.queries.clear()
    _ = meta.keyspaces
    assert "SELECT * FROM system_schema.keyspaces" in [q for q, _ in fake.queries]
    assert len(fake.queries) < 20


def test_failed_stale_read_keeps_the_schema_and_retries(monkeypatch):
    meta, fake = attached()
    before = meta.keyspaces
    before_ks = before["ks"]
    meta._mark_stale()
    fake.fail = DriverException("no session")
    assert meta.keyspaces is before and meta.keyspaces["ks"] is before_ks
    n = len(fake.queries)
    assert meta.keyspaces["ks"] is before_ks and len(fake.queries) == n  # not again at once
    fake.fail = None
    monkeypatch.setattr(md, "_RETRY_DELAY", 0.0)
    meta._retry_at = 0.0
    # Read again: new keyspace objects, in the dict held before (the same keyspaces).
    assert meta.keyspaces["ks"] is not before_ks and meta.keyspaces is before


def test_failed_read_on_attach_is_retried_on_access():
    fake = FakeSchema(schema_rows())
    fake.fail = DriverException("down")
    meta = md.Metadata()
    meta._attach(fake.fetch, max_schema_agreement_wait=0)
    assert meta._keyspaces == {}
    fake.fail = None
    assert "ks" in meta.keyspaces


def test_marks_during_a_read_are_kept():
    tables = schema_rows()
    meta, fake = attached(tables)
    reading = threading.Event()
    proceed = threading.Event()
    real_fetch = fake.fetch

    def slow_fetch(query, params=None):
        if "system_schema.keyspaces" in query and not reading.is_set():
            reading.set()
            proceed.wait(5)
        return real_fetch(query, params)

    meta._fetch = slow_fetch
    meta._mark_stale()
    t = threading.Thread(target=lambda: meta.keyspaces)
    t.start()
    assert reading.wait(5)
    # Marked while the read runs: not waiting for it, and read on the next access.
    started = time.monotonic()
    meta._mark_stale("ks", "type", "phone")
    assert time.monotonic() - started < 1
    proceed.set()
    t.join(5)
    assert meta._stale
    tables["system_schema.types"][2]["field_names"] = ["number"]
    assert meta.keyspaces["ks"].user_types["phone"].field_names == ["number"]


def test_schema_agreement_wait():
    versions = {"local": "v1", "peers": ["v1", "v2"]}

    def fetch(query, params=None):
        if "system.local" in query:
            return [{"schema_version": versions["local"]}]
        return [
            {"peer": "10.0.0.%d" % i, "rpc_address": "10.0.0.%d" % i, "schema_version": v}
            for i, v in enumerate(versions["peers"])
        ]

    assert wait_for_schema_agreement(fetch, 0) is True
    started = time.monotonic()
    assert wait_for_schema_agreement(fetch, 0.3) is False
    assert time.monotonic() - started >= 0.3
    assert wait_for_schema_agreement(fetch, 0.3, lambda row: row["schema_version"] == "v2") is True
    versions["peers"] = ["v1", None]
    assert wait_for_schema_agreement(fetch, 0.3) is True


def test_dse_row_level_access_extension_exports_as_classic():
    """The classic driver registers DSE's row-level access extension (``DSE_RLACA``): a
    table carrying it exports its RESTRICT ROWS statement, the same text in both."""
    pytest.importorskip("cassandra.metadata")
    import cassandra.metadata as classic

    import turbocql.metadata as ours

    texts = []
    for module in (ours, classic):
        table = module.TableMetadata("ks", "t")
        col = module.ColumnMetadata(table, "k", "int")
        table.columns["k"] = col
        table.partition_key.append(col)
        table.extensions = {"DSE_RLACA": b"k"}
        texts.append(table.export_as_string())
        assert "DSE_RLACA" in module._RegisteredExtensionType._extension_registry
    # (The options of a table made by hand, with none, print differently: not compared.)
    assert [t.split(";", 1)[1] for t in texts] == ["\n\nRESTRICT ROWS ON ks.t USING k;"] * 2
