"""Reading the schema: ``system_schema`` and ``system_virtual_schema`` rows turned into the
objects of :mod:`turbocql.metadata`.

:class:`SchemaReader` runs the queries through the ``fetch(query, params)`` function the
cluster gives its metadata (rows as dicts) and builds :class:`~turbocql.metadata.KeyspaceMetadata`
and the rest, as the classic driver's schema parser for Cassandra 4.0+ does: the same
table options, the same column order (partition key, clustering columns, then the others
in the server's order, by name), compact storage from the table's flags, views attached to
their base tables, functions and aggregates keyed by signature. Imported by
:mod:`turbocql.metadata` on the first read.
"""

import sys
import time
from collections.abc import Mapping

from turbocql import InvalidRequest, Unauthorized, _loggers
from turbocql._metadata.schema_model import (
    Aggregate,
    ColumnMetadata,
    Function,
    IndexMetadata,
    KeyspaceMetadata,
    MaterializedViewMetadata,
    TableMetadata,
    TriggerMetadata,
    UserType,
    _signature,
)

log = _loggers.metadata
cluster_log = _loggers.cluster  # schema agreement, as classic

# The table options the classic driver reads from Cassandra 4.0+'s system_schema.tables
# (and views); the others (extensions, id, flags, Cassandra 5.0's memtable...) are not
# options of TableMetadata.options.
RECOGNIZED_TABLE_OPTIONS = (
    "additional_write_policy",
    "bloom_filter_fp_chance",
    "caching",
    "cdc",
    "comment",
    "compaction",
    "compression",
    "crc_check_chance",
    "default_time_to_live",
    "gc_grace_seconds",
    "max_index_interval",
    "memtable_flush_period_in_ms",
    "min_index_interval",
    "read_repair",
    "speculative_retry",
)

_KS = " WHERE keyspace_name = %s"
_KS_TABLE = " WHERE keyspace_name = %s AND table_name = %s"


def _plain(value):
    """Maps as dicts (the rows' maps are the driver's ordered maps)."""
    return dict(value) if isinstance(value, Mapping) else value


def _group(rows, *keys):
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    return groups


# -- rows to objects -----------------------------------------------------------------------


def build_keyspace(row, virtual=False):
    """A keyspace, without its tables and types, from its ``system_schema.keyspaces`` (or
    ``system_virtual_schema.keyspaces``) row."""
    name = row["keyspace_name"]
    try:
        replication = dict(row.get("replication") or {})
        strategy_class = replication.pop("class", None)
        ks = KeyspaceMetadata(name, row.get("durable_writes"), strategy_class, replication)
    except Exception:
        ks = KeyspaceMetadata(name, False, "UNKNOWN", {})
        ks._exc_info = sys.exc_info()
        log.exception("Error while parsing metadata for keyspace %s row(%s)", name, row)
    ks.virtual = virtual
    return ks


def table_options(row):
    return {o: _plain(row.get(o)) for o in RECOGNIZED_TABLE_OPTIONS if o in row}


def build_column(table, row):
    return ColumnMetadata(
        table,
        row["column_name"],
        row["type"],
        row.get("kind") == "static",
        (row.get("clustering_order") or "").upper() == "DESC",
    )


def build_columns(meta, col_rows, compact_static=False, is_dense=False):
    """Fills ``meta``'s columns and keys: partition key and clustering columns by position,
    then the other columns in the rows' order. A compact static table (Thrift-era) has
    its static columns as regular ones and neither clustering column nor value; a dense
    one has no value column of type ``empty``."""

    def key_rows(kind):
        return sorted((r for r in col_rows if r.get("kind") == kind), key=lambda r: r.get("position") or 0)

    for r in key_rows("partition_key"):
        col = build_column(meta, r)
        meta.columns[col.name] = col
        meta.partition_key.append(col)
    if not compact_static:
        for r in key_rows("clustering"):
            col = build_column(meta, r)
            meta.columns[col.name] = col
            meta.clustering_key.append(col)
    for r in col_rows:
        if r.get("kind") in ("partition_key", "clustering"):
            continue
        col = build_column(meta, r)
        if is_dense and col.cql_type == "empty":
            continue
        if compact_static:
            if not col.is_static:
                continue
            col.is_static = False
        meta.columns[col.name] = col


def build_table(row, col_rows, trigger_rows=(), index_rows=(), virtual=False):
    """A table from its ``system_schema.tables`` row and its columns', triggers' and
    indexes' rows (``system_virtual_schema`` rows for a virtual table)."""
    keyspace, name = row["keyspace_name"], row["table_name"]
    table = TableMetadata(keyspace, name, virtual=virtual)
    try:
        table.options = table_options(row)
        flags = row.get("flags")
        if flags:
            is_dense = "dense" in flags
            compact_static = not is_dense and "super" not in flags and "compound" not in flags
            table.is_compact_storage = is_dense or "super" in flags or "compound" not in flags
        elif virtual:
            is_dense = compact_static = False
        else:
            # No flags at all: a Thrift-era static column family.
            is_dense, compact_static = False, True
            table.is_compact_storage = True
        build_columns(table, col_rows, compact_static, is_dense)
        for r in trigger_rows:
            trigger = TriggerMetadata(table, r["trigger_name"], _plain(r.get("options")))
            table.triggers[trigger.name] = trigger
        for r in index_rows:
            if r.get("index_name") or r.get("kind"):
                index = IndexMetadata(keyspace, name, r.get("index_name"), r.get("kind"), _plain(r.get("options")))
                table.indexes[index.name] = index
        table.extensions = _plain(row.get("extensions", {}))
    except Exception:
        table._exc_info = sys.exc_info()
        log.exception("Error while parsing metadata for table %s.%s row(%s) columns(%s)", keyspace, name, row, col_rows)
    return table


def build_view(row, col_rows):
    """A materialized view from its ``system_schema.views`` row and its columns' rows."""
    view = MaterializedViewMetadata(
        row["keyspace_name"],
        row["view_name"],
        row["base_table_name"],
        row["include_all_columns"],
        row["where_clause"],
        table_options(row),
    )
    build_columns(view, col_rows)
    view.extensions = _plain(row.get("extensions", {}))
    return view


def build_user_type(row):
    return UserType(row["keyspace_name"], row["type_name"], row.get("field_names"), row.get("field_types"))


def build_function(row):
    return Function(
        row["keyspace_name"],
        row["function_name"],
        list(row.get("argument_types") or []),
        list(row.get("argument_names") or []),
        row["return_type"],
        row["language"],
        row["body"],
        row["called_on_null_input"],
        row.get("deterministic", False),
        row.get("monotonic", False),
        row.get("monotonic_on", ()),
    )


def build_aggregate(row):
    return Aggregate(
        row["keyspace_name"],
        row["aggregate_name"],
        list(row.get("argument_types") or []),
        row["state_func"],
        row["state_type"],
        row.get("final_func"),
        row.get("initcond"),
        row["return_type"],
        row.get("deterministic", False),
    )


def assemble_keyspace(ks_row, rows):
    """A keyspace with everything in it, from its row and ``rows``: a dict of the other
    tables' rows grouped by keyspace (``tables``, ``types``, ``functions``, ``aggregates``,
    ``views``) or by keyspace and table (``columns``, ``triggers``, ``indexes``)."""
    ks = build_keyspace(ks_row)
    name = ks.name
    try:
        for row in rows["tables"].get((name,), ()):
            key = (name, row["table_name"])
            table = build_table(
                row,
                rows["columns"].get(key, []),
                rows["triggers"].get(key, ()),
                rows["indexes"].get(key, ()),
            )
            ks._add_table_metadata(table)
        for row in rows["types"].get((name,), ()):
            udt = build_user_type(row)
            ks.user_types[udt.name] = udt
        for row in rows["functions"].get((name,), ()):
            fn = build_function(row)
            ks.functions[fn.signature] = fn
        for row in rows["aggregates"].get((name,), ()):
            agg = build_aggregate(row)
            ks.aggregates[agg.signature] = agg
    except Exception:
        log.exception("Error while parsing metadata for keyspace %s. Metadata model will be incomplete.", name)
        ks._exc_info = sys.exc_info()
    for row in rows["views"].get((name,), ()):
        ks._add_view_metadata(build_view(row, rows["columns"].get((name, row["view_name"]), [])))
    return ks


def assemble_virtual_keyspace(ks_row, table_rows, column_rows):
    """A virtual keyspace with its tables (``column_rows`` grouped by keyspace and table)."""
    ks = build_keyspace(ks_row, virtual=True)
    for row in table_rows:
        ks._add_table_metadata(build_table(row, column_rows.get((ks.name, row["table_name"]), []), virtual=True))
    return ks


# -- queries -------------------------------------------------------------------------------


class SchemaReader:
    """Reads schema objects with ``fetch(query, params) -> rows as dicts``."""

    def __init__(self, fetch):
        self._fetch = fetch

    def _rows(self, table, where="", params=None):
        return self._fetch("SELECT * FROM " + table + where, params)

    def _virtual_rows(self, table, where="", params=None):
        """Rows of a ``system_virtual_schema`` table, none if the server has no such table."""
        try:
            return self._rows("system_virtual_schema." + table, where, params)
        except (InvalidRequest, Unauthorized) as exc:
            log.debug("system_virtual_schema.%s not read: %s", table, exc)
            return []

    def _keyspace_rows(self, where="", params=None):
        """The rows of the tables that describe what keyspaces hold, grouped."""

        def rows(table):
            return self._rows("system_schema." + table, where, params)

        return {
            "tables": _group(rows("tables"), "keyspace_name"),
            "columns": _group(rows("columns"), "keyspace_name", "table_name"),
            "types": _group(rows("types"), "keyspace_name"),
            "functions": _group(rows("functions"), "keyspace_name"),
            "aggregates": _group(rows("aggregates"), "keyspace_name"),
            "triggers": _group(rows("triggers"), "keyspace_name", "table_name"),
            "indexes": _group(rows("indexes"), "keyspace_name", "table_name"),
            "views": _group(rows("views"), "keyspace_name"),
        }

    def read_all(self):
        """Every keyspace, the virtual ones last."""
        ks_rows = self._rows("system_schema.keyspaces")
        rows = self._keyspace_rows()
        keyspaces = [assemble_keyspace(row, rows) for row in ks_rows]
        vks_rows = self._virtual_rows("keyspaces")
        if vks_rows:
            vtables = _group(self._virtual_rows("tables"), "keyspace_name")
            vcolumns = _group(self._virtual_rows("columns"), "keyspace_name", "table_name")
            for row in vks_rows:
                keyspaces.append(assemble_virtual_keyspace(row, vtables.get((row["keyspace_name"],), []), vcolumns))
        return keyspaces

    def read_keyspace(self, name):
        """Keyspace ``name`` with everything in it, or None if there is none."""
        ks_rows = self._rows("system_schema.keyspaces", _KS, (name,))
        if ks_rows:
            return assemble_keyspace(ks_rows[0], self._keyspace_rows(_KS, (name,)))
        vks_rows = self._virtual_rows("keyspaces", _KS, (name,))
        if vks_rows:
            vcolumns = _group(self._virtual_rows("columns", _KS, (name,)), "keyspace_name", "table_name")
            return assemble_virtual_keyspace(vks_rows[0], self._virtual_rows("tables", _KS, (name,)), vcolumns)
        return None

    def read_keyspace_row(self, name):
        """Keyspace ``name``'s own settings (no tables...), or None if there is none."""
        rows = self._rows("system_schema.keyspaces", _KS, (name,))
        if rows:
            return build_keyspace(rows[0])
        rows = self._virtual_rows("keyspaces", _KS, (name,))
        return build_keyspace(rows[0], virtual=True) if rows else None

    def read_table_or_view(self, keyspace, name):
        """The table or view ``name`` (with its indexes and triggers), or None."""
        params = (keyspace, name)
        table_rows = self._rows("system_schema.tables", _KS_TABLE, params)
        col_rows = self._rows("system_schema.columns", _KS_TABLE, params)
        if table_rows:
            trigger_rows = self._rows("system_schema.triggers", _KS_TABLE, params)
            index_rows = self._rows("system_schema.indexes", _KS_TABLE, params)
            return build_table(table_rows[0], col_rows, trigger_rows, index_rows)
        view_rows = self._rows("system_schema.views", " WHERE keyspace_name = %s AND view_name = %s", params)
        if view_rows:
            return build_view(view_rows[0], col_rows)
        vtable_rows = self._virtual_rows("tables", _KS_TABLE, params)
        if vtable_rows:
            return build_table(vtable_rows[0], self._virtual_rows("columns", _KS_TABLE, params), virtual=True)
        return None

    def read_type(self, keyspace, name):
        rows = self._rows("system_schema.types", " WHERE keyspace_name = %s AND type_name = %s", (keyspace, name))
        return build_user_type(rows[0]) if rows else None

    def read_functions(self, keyspace, name, kind="function"):
        """Every overload of function (or, with ``kind="aggregate"``, aggregate) ``name``."""
        if kind == "aggregate":
            where = " WHERE keyspace_name = %s AND aggregate_name = %s"
            return [build_aggregate(r) for r in self._rows("system_schema.aggregates", where, (keyspace, name))]
        where = " WHERE keyspace_name = %s AND function_name = %s"
        return [build_function(r) for r in self._rows("system_schema.functions", where, (keyspace, name))]


# -- into Metadata -------------------------------------------------------------------------


def read_into(md, keyspace=None, target_type=None, name=None, follow=False):
    """Reads schema with ``md``'s fetch function into ``md`` (a Metadata): everything
    (``keyspace`` None), keyspace ``keyspace`` and all it holds (``target_type`` None), its
    own row (``"keyspace"``), or one ``"table"``/``"view"``, ``"type"``, ``"function"`` or
    ``"aggregate"`` of it. An object that is gone is dropped. ``md.keyspaces`` is replaced,
    not changed, when keyspaces come or go; a keyspace's dicts are changed in place.
    ``follow``: the read follows changes the server reported (see :func:`_read_all`)."""
    reader = SchemaReader(md._fetch)
    if keyspace is None:
        _read_all(md, reader, follow)
    elif target_type is None:
        _set_keyspace(md, keyspace, reader.read_keyspace(keyspace))
    elif keyspace not in md._keyspaces:
        # An object of a keyspace not read yet: read all of it.
        _set_keyspace(md, keyspace, reader.read_keyspace(keyspace))
    elif target_type == "keyspace":
        old = md._keyspaces[keyspace]
        ks = reader.read_keyspace_row(keyspace)
        if ks is not None:
            for attr in ("tables", "user_types", "indexes", "functions", "aggregates", "views"):
                setattr(ks, attr, getattr(old, attr))
        _set_keyspace(md, keyspace, ks)
    elif target_type in ("table", "view"):
        _read_table(md._keyspaces[keyspace], reader.read_table_or_view(keyspace, name), name)
    elif target_type == "type":
        ks = md._keyspaces[keyspace]
        udt = reader.read_type(keyspace, name)
        if udt is None:
            ks.user_types.pop(name, None)
        else:
            ks.user_types[udt.name] = udt
    else:
        _read_functions(md._keyspaces[keyspace], reader, target_type, name)


_KEYSPACE_DICTS = ("tables", "user_types", "indexes", "functions", "aggregates", "views")


def _read_all(md, reader, follow=False):
    """Everything read again. After changes the server reported (``follow``), a keyspace
    read before keeps its dicts (``tables``, ``functions``...), given the new content, so
    that what an application took from it follows, as the classic driver's per-object
    updates on events do. An explicit full refresh puts the new keyspaces in the dict read
    before too, as the classic driver's does, and then replaces it."""
    read = {ks.name: ks for ks in reader.read_all()}
    old = md._keyspaces
    known = list(old)
    for name, ks in read.items():
        before = old.get(name)
        if not follow:
            old[name] = ks
        elif before is not None:
            for attr in _KEYSPACE_DICTS:
                held, fresh = getattr(before, attr), getattr(ks, attr)
                for key in [k for k in held if k not in fresh]:
                    del held[key]
                held.update(fresh)
                setattr(ks, attr, held)
    if follow and set(known) == set(read):
        # The same keyspaces: the dict held before is kept (as the classic driver's
        # per-keyspace updates keep it); its size does not change under a reader.
        old.update(read)
        new = old
    else:
        # Keyspaces known before keep their place, new ones come after them.
        new = {name: read[name] for name in known if name in read}
        new.update(read)
        md._keyspaces = new
    for name in new:
        (md._keyspace_updated if name in known else md._keyspace_added)(name)
    for name in known:
        if name not in new:
            md._keyspace_removed(name)


def _set_keyspace(md, name, ks):
    """Replaces keyspace ``name`` with ``ks`` (drops it if ``ks`` is None). A keyspace
    read again is replaced in the ``keyspaces`` dict held before, as classic; one that
    comes or goes gives a new dict (a reader iterating the old one is not disturbed)."""
    old = md._keyspaces
    if ks is None and name not in old:
        return
    if ks is not None and name in old:
        old[name] = ks
        md._keyspace_updated(name)
        return
    new = dict(old)
    if ks is None:
        del new[name]
        md._keyspaces = new
        md._keyspace_removed(name)
    else:
        new[name] = ks
        md._keyspaces = new
        (md._keyspace_updated if name in old else md._keyspace_added)(name)


def _read_table(ks, meta, name):
    if meta is None:
        ks._drop_table_metadata(name)
    elif isinstance(meta, TableMetadata):
        ks._add_table_metadata(meta)
    else:
        old = ks.views.get(meta.name)
        if old is not None and old.base_table_name != meta.base_table_name:
            ks._drop_table_metadata(meta.name)
        ks._add_view_metadata(meta)


def function_target(name):
    """``(name, argument_types or None)`` of a function or aggregate named by a descriptor
    (``.name`` and ``.argument_types``), a ``(name, types)`` pair, a signature
    ``"name(int,text)"`` or a bare name (None: every overload)."""
    if hasattr(name, "argument_types"):
        return name.name, tuple(name.argument_types)
    if isinstance(name, tuple) and len(name) == 2:
        return name[0], tuple(name[1])
    if isinstance(name, str) and name.endswith(")") and "(" in name:
        fname, args = name[:-1].split("(", 1)
        types, depth, cur = [], 0, ""
        for ch in args:
            if ch == "," and depth == 0:
                types.append(cur.strip())
                cur = ""
                continue
            depth += ch == "<"
            depth -= ch == ">"
            cur += ch
        if cur.strip():
            types.append(cur.strip())
        return fname, tuple(types)
    return name, None


def _read_functions(ks, reader, kind, name):
    """Reads one overload of a function or aggregate (every overload for a bare name):
    those still there are replaced in place, those gone dropped, new ones added."""
    fname, argument_types = function_target(name)
    objs = ks.functions if kind == "function" else ks.aggregates
    read = {o.signature: o for o in reader.read_functions(ks.name, fname, kind)}
    if argument_types is not None:
        signature = _signature(fname, argument_types)
        read = {signature: read[signature]} if signature in read else {}
        known = [signature]
    else:
        known = [sig for sig, o in objs.items() if o.name == fname]
    for sig in known:
        if sig not in read:
            objs.pop(sig, None)
    objs.update(read)


def wait_for_schema_agreement(fetch, wait, peer_is_down=None):
    """Waits up to ``wait`` seconds until the nodes report one schema version (peers for
    which ``peer_is_down(row)`` is true left out); returns whether they do. The queries go
    through the sessions' load balancing, so system.local and system.peers may come from
    different nodes: every version seen counts."""
    if not wait or wait <= 0 or fetch is None:
        return True
    deadline = time.monotonic() + wait
    while True:
        versions = set()
        for row in fetch("SELECT schema_version FROM system.local WHERE key = 'local'"):
            if row.get("schema_version"):
                versions.add(row["schema_version"])
        for row in fetch("SELECT peer, rpc_address, schema_version FROM system.peers"):
            if row.get("schema_version") and not (peer_is_down and peer_is_down(row)):
                versions.add(row["schema_version"])
        if len(versions) <= 1:
            return True
        if time.monotonic() >= deadline:
            log_disagreement(fetch)
            return False
        time.sleep(0.2)


def log_disagreement(fetch, host=None):
    """Logs, as the classic driver does when a wait for schema agreement ends without it, a
    WARNING on the cluster logger (``cassandra.cluster`` under the shim): ``Node ADDRESS is
    reporting a schema disagreement: {version: [addresses]}``, the node being the one asked
    (``host``, else the one the reads land on). Reads system.local and system.peers once; if
    they fail, says so instead of the versions."""
    node = str(host.endpoint.address) if host is not None else "?"
    try:
        by_version = {}
        for table in ("system.local WHERE key = 'local'", "system.peers"):
            query = "SELECT rpc_address, schema_version FROM " + table
            for row in fetch(query) if host is None else fetch(query, host=host):
                if table.startswith("system.local"):
                    node = str(row.get("rpc_address") or node)
                if row.get("schema_version") is not None:
                    by_version.setdefault(str(row["schema_version"]), []).append(str(row.get("rpc_address")))
        mismatches = {v: sorted(a) for v, a in sorted(by_version.items())}
    except Exception as exc:
        mismatches = "(the versions could not be read: %s)" % (exc,)
    cluster_log.warning("Node %s is reporting a schema disagreement: %s", node, mismatches)
