"""Cluster metadata under the classic driver's names (``cassandra.metadata``).

:class:`Metadata` is what ``Cluster.metadata`` holds: the schema (``keyspaces``, read from
``system_schema`` and ``system_virtual_schema`` when the cluster connects, on
``Cluster.refresh_*_metadata`` and, after a schema change was reported, on the next access)
and the topology (hosts, token map, replicas: left to ``Metadata._topology``). The schema's
objects: :class:`KeyspaceMetadata`, :class:`TableMetadata`, :class:`ColumnMetadata`,
:class:`IndexMetadata`, :class:`TriggerMetadata`, :class:`MaterializedViewMetadata`,
:class:`UserType`, :class:`Function`, :class:`Aggregate`, and the replication strategies
(defined in :mod:`turbocql._replication`, re-exported here). Each renders the CQL that
recreates it (``as_cql_query()``, ``export_as_string()``, from :mod:`turbocql._schema_cql`);
the rows are read and turned into these objects by :mod:`turbocql._schema_read`, imported on
the first read.
"""

import logging
import threading
import time

from turbocql._replication import (  # noqa: F401 - classic names of cassandra.metadata
    REPLICATION_STRATEGY_CLASS_PREFIX,
    EverywhereStrategy,
    LocalStrategy,
    NetworkTopologyStrategy,
    ReplicationFactor,
    ReplicationStrategy,
    SimpleStrategy,
    _UnknownStrategy,
)
from turbocql._schema_cql import (  # noqa: F401 - classic names of cassandra.metadata
    aggregate_cql,
    cql_keywords,
    cql_keywords_reserved,
    cql_keywords_unreserved,
    escape_name,
    function_cql,
    index_cql,
    is_valid_name,
    keyspace_cql,
    keyspace_export,
    map_literal,
    maybe_escape_name,
    protect_name,
    protect_names,
    protect_value,
    table_cql,
    table_export,
    trigger_cql,
    user_type_cql,
    user_types_in_order,
    view_cql,
)
from turbocql._topology import Murmur3Token, Token, TokenMap  # noqa: F401 - classic names of cassandra.metadata

log = logging.getLogger(__name__)

# -- schema objects ------------------------------------------------------------------------


def _signature(name, argument_types):
    return "%s(%s)" % (name, ",".join(argument_types))


class KeyspaceMetadata:
    """A keyspace: its replication, and its tables, views, indexes, user types, functions
    and aggregates (dicts by name; functions and aggregates by signature ``name(t1,t2)``).
    ``virtual`` for the virtual keyspaces (``system_views``, ``system_virtual_schema``)."""

    virtual = False
    _exc_info = None

    def __init__(self, name, durable_writes, strategy_class, strategy_options, graph_engine=None):
        self.name = name
        self.durable_writes = durable_writes
        self.replication_strategy = ReplicationStrategy.create(strategy_class, strategy_options)
        self.tables = {}
        self.indexes = {}
        self.user_types = {}
        self.functions = {}
        self.aggregates = {}
        self.views = {}
        self.graph_engine = graph_engine
        self.virtual = False

    @property
    def is_graph_enabled(self):
        return self.graph_engine is not None

    def export_as_string(self):
        """CQL that recreates the keyspace and everything in it: user types (those used by
        others first), functions, aggregates, tables with their indexes, triggers and views."""
        return keyspace_export(self)

    def as_cql_query(self):
        """``CREATE KEYSPACE`` for the keyspace alone."""
        return keyspace_cql(self)

    def user_type_strings(self):
        return [t.export_as_string() for t in user_types_in_order(self.user_types)]

    def _add_table_metadata(self, table):
        old = self.tables.get(table.name)
        old_indexes = {}
        if old is not None:
            # Views are read with their own rows: a table read again keeps its views.
            table.views = old.views
            old_indexes = old.indexes
        self.indexes.update(table.indexes)
        for name in old_indexes:
            if name not in table.indexes:
                self.indexes.pop(name, None)
        self.tables[table.name] = table

    def _drop_table_metadata(self, name):
        table = self.tables.pop(name, None)
        if table is not None:
            for index_name in table.indexes:
                self.indexes.pop(index_name, None)
            for view_name in table.views:
                self.views.pop(view_name, None)
            return
        view = self.views.pop(name, None)
        if view is not None and view.base_table_name in self.tables:
            self.tables[view.base_table_name].views.pop(name, None)

    def _add_view_metadata(self, view):
        base = self.tables.get(view.base_table_name)
        if base is not None:
            base.views[view.name] = view
            self.views[view.name] = view

    def __repr__(self):
        return "<KeyspaceMetadata %s>" % self.name


class UserType:
    """A user-defined type: ``field_names`` and ``field_types`` (CQL type strings), in order."""

    def __init__(self, keyspace, name, field_names, field_types):
        self.keyspace = keyspace
        self.name = name
        self.field_names = list(field_names or [])
        self.field_types = list(field_types or [])

    def as_cql_query(self, formatted=False):
        return user_type_cql(self, formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    def __repr__(self):
        return "<UserType %s.%s>" % (self.keyspace, self.name)


class Aggregate:
    """A user-defined aggregate (``CREATE AGGREGATE``)."""

    def __init__(
        self,
        keyspace,
        name,
        argument_types,
        state_func,
        state_type,
        final_func,
        initial_condition,
        return_type,
        deterministic,
    ):
        self.keyspace = keyspace
        self.name = name
        self.argument_types = argument_types
        self.state_func = state_func
        self.state_type = state_type
        self.final_func = final_func
        self.initial_condition = initial_condition
        self.return_type = return_type
        self.deterministic = deterministic

    def as_cql_query(self, formatted=False):
        return aggregate_cql(self, formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    @property
    def signature(self):
        """``name(type1,type2)``: the key in ``KeyspaceMetadata.aggregates``."""
        return _signature(self.name, self.argument_types)

    def __repr__(self):
        return "<Aggregate %s.%s>" % (self.keyspace, self.signature)


class Function:
    """A user-defined function (``CREATE FUNCTION``)."""

    def __init__(
        self,
        keyspace,
        name,
        argument_types,
        argument_names,
        return_type,
        language,
        body,
        called_on_null_input,
        deterministic,
        monotonic,
        monotonic_on,
    ):
        self.keyspace = keyspace
        self.name = name
        self.argument_types = argument_types
        self.argument_names = argument_names or []
        self.return_type = return_type
        self.language = language
        self.body = body
        self.called_on_null_input = called_on_null_input
        self.deterministic = deterministic
        self.monotonic = monotonic
        self.monotonic_on = monotonic_on

    def as_cql_query(self, formatted=False):
        return function_cql(self, formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    @property
    def signature(self):
        """``name(type1,type2)``: the key in ``KeyspaceMetadata.functions``."""
        return _signature(self.name, self.argument_types)

    def __repr__(self):
        return "<Function %s.%s>" % (self.keyspace, self.signature)


class TableMetadata:
    """A table: ``columns`` (partition key, clustering columns, then the others by name),
    the key columns, ``options`` (the ``WITH`` options), ``indexes``, ``triggers`` and
    ``views`` (dicts by name), ``extensions``; ``virtual`` for a virtual table."""

    is_compact_storage = False
    virtual = False
    extensions = None
    _exc_info = None

    def __init__(
        self,
        keyspace_name,
        name,
        partition_key=None,
        clustering_key=None,
        columns=None,
        triggers=None,
        options=None,
        virtual=False,
    ):
        self.keyspace_name = keyspace_name
        self.name = name
        self.partition_key = [] if partition_key is None else partition_key
        self.clustering_key = [] if clustering_key is None else clustering_key
        self.columns = {} if columns is None else columns
        self.indexes = {}
        self.options = {} if options is None else options
        self.comparator = None
        self.triggers = {} if triggers is None else triggers
        self.views = {}
        self.virtual = virtual

    @property
    def primary_key(self):
        """The partition key's columns, then the clustering columns."""
        return self.partition_key + self.clustering_key

    @property
    def is_cql_compatible(self):
        """Always true for the tables of Cassandra 3.0 and later."""
        return True

    def export_as_string(self):
        """``CREATE TABLE`` with its indexes, triggers and views (a virtual table's CQL in a
        comment)."""
        return table_export(self)

    def as_cql_query(self, formatted=False):
        """``CREATE TABLE`` alone; ``formatted`` puts each column and option on its own line."""
        return table_cql(self, formatted)

    def __repr__(self):
        return "<TableMetadata %s.%s>" % (self.keyspace_name, self.name)


TableMetadataV3 = TableMetadata


class ColumnMetadata:
    """A column: ``name``, ``cql_type`` (as ``system_schema.columns`` spells it),
    ``is_static``, ``is_reversed`` (a ``DESC`` clustering column)."""

    _cass_type = None

    def __init__(self, table_metadata, column_name, cql_type, is_static=False, is_reversed=False):
        self.table = table_metadata
        self.name = column_name
        self.cql_type = cql_type
        self.is_static = is_static
        self.is_reversed = is_reversed

    def __str__(self):
        return "%s %s" % (self.name, self.cql_type)

    def __repr__(self):
        return "<ColumnMetadata %s>" % self


class IndexMetadata:
    """A secondary index: ``kind`` (``COMPOSITES``, ``KEYS``, ``CUSTOM``) and
    ``index_options`` (``target``, and ``class_name`` for a custom index)."""

    def __init__(self, keyspace_name, table_name, index_name, kind, index_options):
        self.keyspace_name = keyspace_name
        self.table_name = table_name
        self.name = index_name
        self.kind = kind
        self.index_options = index_options

    def as_cql_query(self):
        return index_cql(self)

    def export_as_string(self):
        return self.as_cql_query() + ";"

    def __repr__(self):
        return "<IndexMetadata %s.%s>" % (self.keyspace_name, self.name)


class TriggerMetadata:
    """A trigger on a table; ``options['class']`` names its Java class."""

    def __init__(self, table_metadata, trigger_name, options=None):
        self.table = table_metadata
        self.name = trigger_name
        self.options = options

    def as_cql_query(self):
        return trigger_cql(self)

    def export_as_string(self):
        return self.as_cql_query() + ";"


class MaterializedViewMetadata:
    """A materialized view of ``base_table_name``: its columns and keys as a table's,
    ``where_clause``, ``include_all_columns`` (``SELECT *``) and ``options``."""

    extensions = None

    def __init__(self, keyspace_name, view_name, base_table_name, include_all_columns, where_clause, options):
        self.keyspace_name = keyspace_name
        self.name = view_name
        self.base_table_name = base_table_name
        self.partition_key = []
        self.clustering_key = []
        self.columns = {}
        self.include_all_columns = include_all_columns
        self.where_clause = where_clause
        self.options = options or {}

    def as_cql_query(self, formatted=False):
        return view_cql(self, formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    def __repr__(self):
        return "<MaterializedViewMetadata %s.%s>" % (self.keyspace_name, self.name)


# Table extensions (keys of system_schema.tables' extensions map) that add CQL after a
# table's: filled by subclassing RegisteredTableExtension.
_table_extensions: dict = {}


class TableExtensionInterface:
    """CQL that follows a table's definition for one of its extensions."""

    @classmethod
    def after_table_cql(cls, table_meta, ext_key, ext_blob):
        """The statements (with their semicolons) to add after the table's, or None."""
        return None


class RegisteredTableExtension(TableExtensionInterface):
    """Subclasses with a ``name`` are used for the extension of that name."""

    name: str | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name is not None:
            _table_extensions[cls.name] = cls


# -- Metadata ------------------------------------------------------------------------------

_TARGET_TYPES = ("keyspace", "table", "view", "type", "function", "aggregate")

# More pending targets than this and the next access reads the whole schema instead.
_MAX_STALE_TARGETS = 32

# After a failed lazy re-read, accesses use the schema already read for this long (seconds)
# before trying again.
_RETRY_DELAY = 2.0


class Metadata:
    """The cluster's schema and topology, as the classic driver's ``Metadata``.

    ``keyspaces`` maps each keyspace's name to its :class:`KeyspaceMetadata`. It is read when
    the cluster connects (unless ``schema_metadata_enabled=False``) and by
    ``Cluster.refresh_*_metadata``; after :meth:`_mark_stale` (a schema change reported by
    the server), the next access of ``keyspaces`` reads what changed first. Reading never
    happens per request.

    The topology (``all_hosts()``, ``get_host()``, ``get_replicas()``, ``token_map``) comes
    from ``self._topology``: empty (no hosts, no token map) while it is None.
    """

    dbaas = False

    def __init__(self) -> None:
        self.cluster_name = None
        self.partitioner = None
        self.dbaas = False
        self._keyspaces: dict = {}
        self._fetch = None
        self._schema_enabled = False
        self._token_enabled = False
        self._agreement_wait = 10
        # The topology half (hosts, token map, replicas): None until it is set.
        self._topology = None
        # Held while reading the schema (a second reader waits, then finds it read).
        self._lock = threading.RLock()
        # Held only to set or take the staleness marks, never during I/O: _mark_stale does
        # not wait for a read in progress.
        self._stale_lock = threading.Lock()
        # Set by _mark_stale: _stale says some of the schema must be read again on the next
        # access, _stale_all that all of it must, _stale_targets which objects.
        self._stale = False
        self._stale_all = False
        self._stale_targets: dict = {}
        self._retry_at = 0.0

    # -- schema --------------------------------------------------------------------------

    @property
    def keyspaces(self):
        """A dict of keyspace names to :class:`KeyspaceMetadata`."""
        if self._topology is not None:
            self._topology.check()
        if self._stale:
            self._refresh_stale()
        return self._keyspaces

    @keyspaces.setter
    def keyspaces(self, value):
        self._keyspaces = value

    def export_schema_as_string(self):
        """CQL that recreates the whole schema (every keyspace's ``export_as_string()``)."""
        return "\n\n".join(ks.export_as_string() for ks in self.keyspaces.values())

    def _attach(self, fetch, schema_enabled=True, token_enabled=True, max_schema_agreement_wait=None):
        """Called by ``Cluster.connect`` on the first session: ``fetch(query, params)``
        runs a CQL query on a live session of the cluster and returns its rows as dicts.
        Reads the cluster's name and partitioner, and the schema if ``schema_enabled``.
        ``max_schema_agreement_wait`` defaults to the cluster's (``fetch``'s owner)."""
        self._fetch = fetch
        self._schema_enabled = schema_enabled
        self._token_enabled = token_enabled
        if max_schema_agreement_wait is None:
            max_schema_agreement_wait = getattr(getattr(fetch, "__self__", None), "max_schema_agreement_wait", 10)
        self._agreement_wait = max_schema_agreement_wait
        try:
            rows = fetch("SELECT cluster_name, partitioner FROM system.local WHERE key = 'local'")
            if rows:
                self.cluster_name = rows[0].get("cluster_name")
                self.partitioner = rows[0].get("partitioner")
        except Exception:
            log.warning("Could not read the cluster's name and partitioner", exc_info=True)
        if schema_enabled:
            try:
                self._read()
            except Exception:
                log.warning("Could not read the schema metadata; will try again on access", exc_info=True)
                self._mark_stale()

    def _read(self, keyspace=None, target_type=None, name=None):
        """Reads schema and puts it into ``keyspaces`` (see :func:`turbocql._schema_read.read_into`).
        A whole read covers the changes marked so far: it takes the marks, and puts them
        back if it fails."""
        if self._fetch is None:
            from turbocql import DriverException

            raise DriverException("Schema metadata cannot be read before the cluster is connected")
        from turbocql._schema_read import read_into

        with self._lock:
            marks = self._take_stale() if keyspace is None else (False, [])
            try:
                read_into(self, keyspace, target_type, name)
            except BaseException:
                self._restore_stale(*marks)
                raise

    def _refresh(self, keyspace=None, target_type=None, name=None, max_schema_agreement_wait=None):
        """Reads schema again, after waiting up to ``max_schema_agreement_wait`` seconds
        (default: the cluster's) for the nodes to agree on it: everything, or one keyspace
        (with all its objects), or one ``"table"``, ``"view"``, ``"type"``, ``"function"`` or
        ``"aggregate"`` of it (a function or aggregate named by a descriptor with ``name``
        and ``argument_types``, a signature string, or a bare name for every overload).
        Works with ``schema_metadata_enabled=False`` too, as the classic driver's."""
        if target_type is not None:
            if target_type.lower() not in _TARGET_TYPES:
                raise ValueError("Unknown schema target_type: '%s'" % target_type)
            target_type = target_type.lower()
        if self._fetch is not None:
            wait = self._agreement_wait if max_schema_agreement_wait is None else max_schema_agreement_wait
            self._wait_for_schema_agreement(wait)
        self._read(keyspace, target_type, name)

    def _mark_stale(self, keyspace=None, target_type=None, name=None, argument_types=None):
        """Notes that the server reported a schema change; the next access of ``keyspaces``
        reads it. Cheap, no I/O, never waits for a read in progress: callable from any thread.

        ``_mark_stale()``: everything. ``_mark_stale(ks)``: keyspace ``ks`` and all it holds.
        ``_mark_stale(ks, "keyspace")``: the keyspace's own settings (replication...).
        ``_mark_stale(ks, "table" | "view" | "type", name)``: that object.
        ``_mark_stale(ks, "function" | "aggregate", name, argument_types)``: that overload
        (every overload of ``name`` without ``argument_types``).
        """
        if not self._schema_enabled or self._fetch is None:
            return
        tt = target_type.lower() if target_type else None
        if tt in ("function", "aggregate") and argument_types is not None:
            name = (name, tuple(argument_types))
        with self._stale_lock:
            if keyspace is None or len(self._stale_targets) >= _MAX_STALE_TARGETS:
                self._stale_all = True
            else:
                self._stale_targets[(keyspace, tt, name)] = None
            self._stale = True

    def _take_stale(self):
        """The staleness marks ``(everything?, [targets])``, cleared."""
        with self._stale_lock:
            marks = self._stale_all, list(self._stale_targets)
            self._stale = self._stale_all = False
            self._stale_targets = {}
        return marks

    def _restore_stale(self, stale_all, targets):
        """Puts back marks taken by :meth:`_take_stale` for a read that failed."""
        if not stale_all and not targets:
            return
        with self._stale_lock:
            self._stale_all = self._stale_all or stale_all
            for t in targets:
                self._stale_targets[t] = None
            self._stale = True

    def _refresh_stale(self):
        """Reads what :meth:`_mark_stale` marked. On failure the schema read before stays,
        and the next access after ``_RETRY_DELAY`` seconds tries again."""
        with self._lock:
            if not self._stale or time.monotonic() < self._retry_at:
                return
            stale_all, targets = self._take_stale()
            try:
                self._wait_for_schema_agreement(self._agreement_wait)
                if stale_all:
                    self._read()
                else:
                    for target in targets:
                        self._read(*target)
            except Exception:
                log.warning("Could not read the changed schema; keeping the schema read before", exc_info=True)
                self._restore_stale(stale_all, targets)
                self._retry_at = time.monotonic() + _RETRY_DELAY

    def wait_for_schema_agreement(self, wait_time=10):
        """Waits up to ``wait_time`` seconds until every node reports one schema version;
        returns whether they do (also ``cluster.control_connection.wait_for_schema_agreement``)."""
        return self._wait_for_schema_agreement(wait_time)

    def _wait_for_schema_agreement(self, wait):
        """Waits up to ``wait`` seconds until the nodes report one schema version (peers the
        topology knows to be down left out); returns whether they do."""
        if self._topology is not None:
            # The engine asks every node it holds connections to (its control connection
            # knows which are down), not whichever node a query lands on.
            return self._topology.await_schema_agreement(wait)
        from turbocql._schema_read import wait_for_schema_agreement

        return wait_for_schema_agreement(self._fetch, wait, self._peer_is_down)

    def _peer_is_down(self, row):
        """Whether the topology knows the peer of a ``system.peers`` row to be down."""
        if self._topology is None:
            return False
        address = row.get("rpc_address") or row.get("peer")
        host = self.get_host(str(address)) if address is not None else None
        return host is not None and getattr(host, "is_up", None) is False

    # Token map upkeep, for the topology half.

    def _keyspace_added(self, name):
        hook = getattr(self._topology, "_keyspace_added", None)
        if hook is not None:
            hook(name)

    def _keyspace_updated(self, name):
        hook = getattr(self._topology, "_keyspace_updated", None)
        if hook is not None:
            hook(name)

    def _keyspace_removed(self, name):
        hook = getattr(self._topology, "_keyspace_removed", None)
        if hook is not None:
            hook(name)

    # -- topology: through self._topology, empty until it is set --------------------------

    @property
    def token_map(self):
        """The ring's token map (``None`` until the topology is known)."""
        return None if self._topology is None else self._topology.token_map

    def all_hosts(self):
        """Every known host (none until the topology is known)."""
        return [] if self._topology is None else self._topology.all_hosts()

    def get_host(self, endpoint_or_address, port=None):
        """The host at an endpoint or address (and port), or None."""
        return None if self._topology is None else self._topology.get_host(endpoint_or_address, port)

    def get_replicas(self, keyspace, key):
        """The hosts that replicate the partition key ``key`` (serialized) of ``keyspace``."""
        return [] if self._topology is None else self._topology.get_replicas(keyspace, key)
