"""Schema management: keyspaces (create / drop), tables from models (``sync_table``
creates one or adds its new columns, indexes and options; ``drop_table``) and user types
(``sync_type``). Refused unless the environment allows schema changes (a warning only)."""

import logging
import os
import warnings

from turbocql.cqlengine import CQLEngineException, columns, connection
from turbocql.cqlengine.connection import (
    execute as _execute,
)  # bound at import: a patched connection.execute sees queries, not schema changes
from turbocql.cqlengine.connection import format_log_context
from turbocql.cqlengine.models import Model  # a module global, as classic: apps rebind it (below)
from turbocql.cqlengine.usertype import UserType
from turbocql.metadata import protect_name

CQLENG_ALLOW_SCHEMA_MANAGEMENT = "CQLENG_ALLOW_SCHEMA_MANAGEMENT"

log = logging.getLogger(__name__)
schema_columnfamilies = None


def _allow_schema_modification():
    if not os.getenv(CQLENG_ALLOW_SCHEMA_MANAGEMENT):
        msg = (
            CQLENG_ALLOW_SCHEMA_MANAGEMENT
            + " environment variable is not set. Future versions of this package will require this "
            "variable to enable management functions."
        )
        warnings.warn(msg, stacklevel=2)
        log.warning(msg)


def _connections(connections):
    return connections if connections else [None]


def create_keyspace_simple(name, replication_factor, durable_writes=True, connections=None):
    """CREATE KEYSPACE IF NOT EXISTS with SimpleStrategy."""
    _create_keyspace(name, durable_writes, "SimpleStrategy", {"replication_factor": replication_factor}, connections)


def create_keyspace_network_topology(name, dc_replication_map, durable_writes=True, connections=None):
    """CREATE KEYSPACE IF NOT EXISTS with NetworkTopologyStrategy (``{dc: rf}``)."""
    _create_keyspace(name, durable_writes, "NetworkTopologyStrategy", dc_replication_map, connections)


def _create_keyspace(name, durable_writes, strategy_class, strategy_options, connections=None):
    if not _allow_schema_modification_ok():
        return
    for conn in _connections(connections):
        cluster = connection.get_cluster(conn)
        if name in cluster.metadata.keyspaces:
            log.info("Not creating keyspace %s because it already exists", name)
            continue
        opts = ", ".join([f"'class': '{strategy_class}'"] + [f"'{k}': {v!r}" for k, v in strategy_options.items()])
        query = "CREATE KEYSPACE IF NOT EXISTS {} WITH REPLICATION = {{{}}} AND DURABLE_WRITES = {}".format(
            _q(name), opts, "true" if durable_writes else "false"
        )
        _execute(query, connection=conn)


def _allow_schema_modification_ok():
    _allow_schema_modification()
    return True


def drop_keyspace(name, connections=None):
    """DROP KEYSPACE (when it exists)."""
    _allow_schema_modification()
    for conn in _connections(connections):
        cluster = connection.get_cluster(conn)
        if name in cluster.metadata.keyspaces:
            _execute(f"DROP KEYSPACE {_q(name)}", connection=conn)


def _q(name):
    return protect_name(name)


def _targets(model, keyspaces, connections):
    keyspaces = keyspaces or [None]
    conns = connections or [model.__connection__]
    for ks in keyspaces:
        for conn in conns:
            yield ks, conn


def _model_in(model, keyspace):
    if not keyspace:
        return model
    # No __module__: a model class's own metaclass (django-cassandra-engine's) registers a
    # class that has one with its framework, and this copy is no model of the application.
    attrs = {
        "__abstract__": False,
        "__keyspace__": keyspace,
        "__table_name__": model._raw_column_family_name(),
        "__table_name_case_sensitive__": True,
    }
    return type(model)(model.__name__, (model,), attrs)


def sync_table(model, keyspaces=None, connections=None):
    """Creates the model's table, or adds the columns, indexes and options it lacks.

    Existing columns are never altered or dropped; a primary key that differs raises."""
    _allow_schema_modification()
    # The module's Model, not models.Model: django-cassandra-engine sets
    # ``management.Model = (Model, DjangoCassandraModel)`` so its models pass this check.
    if not issubclass(model, Model):
        raise CQLEngineException("Models must be derived from base Model.")
    if model.__abstract__:
        raise CQLEngineException("cannot create table from abstract model")
    if model._is_polymorphic and not model._is_polymorphic_base and False:
        return
    for ks, conn in _targets(model, keyspaces, connections):
        _sync_table(_model_in(model, ks), connection=conn)


def _sync_table(model, connection=None):
    from turbocql.cqlengine import connection as conn_mod

    cf_name = model.column_family_name()
    raw_cf_name = model._raw_column_family_name()
    ks_name = model._get_keyspace()
    connection = connection or model._get_connection()
    cluster = conn_mod.get_cluster(connection)
    try:
        keyspace = cluster.metadata.keyspaces[ks_name]
    except KeyError:
        raise CQLEngineException(f"Keyspace '{ks_name}' for model {model} does not exist.") from None
    udts = []
    for col in model._columns.values():
        columns.resolve_udts(col, udts)
    for udt in [u for u in udts if u not in udts[: udts.index(u)]]:
        _sync_type(ks_name, udt, connection=connection)
    tables = keyspace.tables
    if raw_cf_name not in tables:
        _execute(_get_create_table(model), connection=connection)
    else:
        table = tables[raw_cf_name]
        _validate_pk(model, table)
        existing = table.columns
        for _name, col in model._columns.items():
            if col.db_field_name in existing:
                found = existing[col.db_field_name].cql_type
                if found != col.db_type:
                    _warn_differs(
                        f'Existing table {raw_cf_name} has column "{col.db_field_name}" with a type ({found}) '
                        f"differing from the model type ({col.db_type}). Model should be updated.",
                        ks_name,
                        connection,
                    )
                continue
            if col.primary_key:
                continue
            _execute(f"ALTER TABLE {cf_name} ADD {col.get_column_def()}", connection=connection)
        if model.__options__:
            _update_options(model, connection)
    table = _table_meta(cluster, ks_name, raw_cf_name, connection)
    for _name, col in model._columns.items():
        if col.primary_key or not col.index:
            continue
        if table is not None and _has_index(table, col.db_field_name):
            continue
        target = f"values({col.cql})" if isinstance(col, columns.Map) else col.cql
        _execute(
            f"CREATE INDEX IF NOT EXISTS {_q(_index_name(raw_cf_name, col.db_field_name))} ON {cf_name} ({target})",
            connection=connection,
        )


def _warn_differs(msg, keyspace, conn):
    """A model that differs from the schema in a column's or field's type: a warning and a
    log record, as classic (the column is left as it is)."""
    msg = format_log_context(msg, keyspace=keyspace, connection=conn)
    warnings.warn(msg, stacklevel=3)
    log.warning(msg)


def _index_name(table, column):
    return f"{table}_{column}_idx"


def _table_meta(cluster, ks, name, conn=None):
    try:
        cluster.refresh_table_metadata(ks, name)
    except Exception:
        pass
    try:
        return cluster.metadata.keyspaces[ks].tables[name]
    except KeyError:
        return None


def _has_index(table, column):
    for idx in getattr(table, "indexes", {}).values():
        target = (idx.index_options or {}).get("target", "")
        if target.strip('"') == column or target.replace('"', "").endswith("(" + column + ")"):
            return True
    col = table.columns.get(column)
    return bool(col is not None and getattr(col, "index", None))


def _validate_pk(model, table_meta):
    model_partition = [c.db_field_name for c in model._partition_keys.values()]
    meta_partition = [c.name for c in table_meta.partition_key]
    model_clustering = [c.db_field_name for c in model._clustering_keys.values()]
    meta_clustering = [c.name for c in table_meta.clustering_key]
    if model_partition != meta_partition or model_clustering != meta_clustering:

        def _names(cols):
            return f"{cols}"

        raise CQLEngineException(
            f"Model {model} has different primary key definition than existing table {table_meta.name}. "
            f"Model {_names(model_partition + model_clustering)}, table {_names(meta_partition + meta_clustering)}"
        )


def _get_create_table(model):
    cols = [c.get_column_def() for c in model._columns.values()]
    pk = ", ".join(c.cql for c in model._partition_keys.values())
    if len(model._partition_keys) > 1 or model._clustering_keys:
        pk = f"({pk})"
    ck = [c.cql for c in model._clustering_keys.values()]
    key = "PRIMARY KEY ({})".format(", ".join([pk] + ck))
    query = "CREATE TABLE {} ({}, {})".format(model.column_family_name(), ", ".join(cols), key)
    withs = []
    order = [c for c in model._clustering_keys.values() if c.clustering_order]
    if model._clustering_keys and order:
        withs.append(
            "CLUSTERING ORDER BY ({})".format(
                ", ".join(
                    "{} {}".format(c.cql, (c.clustering_order or "ASC").upper())
                    for c in model._clustering_keys.values()
                )
            )
        )
    for k, v in (model.__options__ or {}).items():
        withs.append(f"{k} = {_option_value(v)}")
    if withs:
        query += " WITH " + " AND ".join(withs)
    return query


def _option_value(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"'{k}': '{x}'" for k, x in v.items()) + "}"
    if isinstance(v, str):
        return "'{}'".format(v.replace("'", "''"))
    return str(v)


def _update_options(model, connection=None):
    """ALTER TABLE WITH the model's ``__options__`` that differ from the table's; whether
    there were any. KeyError for an option the table does not have."""

    table = _get_table_metadata(model, connection=connection)
    existing = dict(getattr(table, "options", {}) or {})
    changes = []
    for k, v in (model.__options__ or {}).items():
        if k not in existing:
            raise KeyError("Invalid table option: '%s'; known options: %s" % (k, ", ".join(sorted(existing))))
        cur = existing.get(k)
        if isinstance(v, dict) and isinstance(cur, dict):
            same = all(
                str(cur.get(a)) == str(b) or (a == "class" and str(cur.get(a, "")).endswith(str(b)))
                for a, b in v.items()
            )
        else:
            same = str(cur) == str(v)
        if not same:
            changes.append(f"{k} = {_option_value(v)}")
    if not changes:
        return False
    _execute("ALTER TABLE {} WITH {}".format(model.column_family_name(), " AND ".join(changes)), connection=connection)
    return True


def _same_sub_option(current, key, value):
    have = str(current.get(key, ""))
    return have == str(value) or (key == "class" and have.endswith(str(value)))


def _get_index_name_by_column(table, column_name):
    """The name of the index of ``table`` (TableMetadata) on ``column_name``, or None."""
    for idx in getattr(table, "indexes", {}).values():
        target = (idx.index_options or {}).get("target", "")
        if target.strip('"') == column_name or target.replace('"', "").endswith("(" + column_name + ")"):
            return idx.name
    return None


def sync_type(ks_name, type_model, connection=None):
    """Creates the user type (and the types its fields use), or adds its new fields."""
    _allow_schema_modification()
    if not issubclass(type_model, UserType):
        raise CQLEngineException("Types must be derived from base UserType.")
    _sync_type(ks_name, type_model, connection=connection)


def _sync_type(ks_name, type_model, omit_subtypes=None, connection=None):
    from turbocql.cqlengine import connection as conn_mod

    omit = omit_subtypes or set()
    for field in type_model._fields.values():
        udts = []
        columns.resolve_udts(field, udts)
        for udt in udts:
            if udt not in omit:
                _sync_type(ks_name, udt, omit, connection)
                omit.add(udt)
    type_name = type_model.type_name()
    cluster = conn_mod.get_cluster(connection)
    keyspace = cluster.metadata.keyspaces[ks_name]
    defined = keyspace.user_types
    if type_name not in defined:
        _execute(get_create_type(type_model, ks_name), connection=connection)
    else:
        type_meta = defined[type_name]
        existing = dict(zip(type_meta.field_names, type_meta.field_types))
        for field in type_model._fields.values():
            found = existing.get(field.db_field_name)
            if found is not None and found != field.db_type:
                _warn_differs(
                    f'Existing user type {_q(ks_name)}.{_q(type_name)} has field "{field.db_field_name}" with a type '
                    f"({found}) differing from the model user type ({field.db_type}). UserType should be updated.",
                    ks_name,
                    connection,
                )
            if found is None:
                _execute(
                    f"ALTER TYPE {_q(ks_name)}.{_q(type_name)} ADD {field.get_column_def()}",
                    connection=connection,
                )
    try:
        cluster.refresh_user_type_metadata(ks_name, type_name)
    except Exception:
        pass
    type_model.register_for_keyspace(ks_name, connection)


def get_create_type(type_model, keyspace):
    fields = ", ".join(f.get_column_def() for f in type_model._fields.values())
    return f"CREATE TYPE {_q(keyspace)}.{_q(type_model.type_name())} ({fields})"


def drop_table(model, keyspaces=None, connections=None):
    """DROP TABLE of the model (when it exists)."""
    _allow_schema_modification()
    for ks, conn in _targets(model, keyspaces, connections):
        m = _model_in(model, ks)
        conn = conn or m._get_connection()
        cluster = connection.get_cluster(conn)
        try:
            cluster.metadata.keyspaces[m._get_keyspace()].tables[m._raw_column_family_name()]
        except KeyError:
            continue
        _execute(f"DROP TABLE {m.column_family_name()};", connection=conn)


def _get_table_metadata(model, connection=None):
    """The driver's TableMetadata of the model's table (refreshed first)."""
    from turbocql.cqlengine import connection as conn_mod

    connection = connection or model._get_connection()
    cluster = conn_mod.get_cluster(connection)
    return _table_meta(cluster, model._get_keyspace(), model._raw_column_family_name(), connection)
