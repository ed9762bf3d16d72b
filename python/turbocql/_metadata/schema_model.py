"""The schema objects of ``cluster.metadata`` under the classic driver's names:
:class:`KeyspaceMetadata`, :class:`TableMetadata`, :class:`ColumnMetadata`,
:class:`IndexMetadata`, :class:`TriggerMetadata`, :class:`MaterializedViewMetadata`,
:class:`UserType`, :class:`Function`, :class:`Aggregate` and the table-extension hooks.

Each renders the CQL that recreates it through :mod:`turbocql._metadata.schema_cql`; the rows of
``system_schema`` become these objects in :mod:`turbocql._metadata.schema_read`; :mod:`turbocql.metadata`
holds :class:`~turbocql.metadata.Metadata` and re-exports these names. Nothing here imports
those two modules back.
"""

from turbocql import cqltypes
from turbocql._metadata.replication import ReplicationStrategy
from turbocql._metadata.schema_cql import (
    _table_extensions,
    aggregate_cql,
    function_cql,
    index_cql,
    keyspace_cql,
    keyspace_export,
    protect_name,
    table_cql,
    table_export,
    trigger_cql,
    user_type_cql,
    user_types_in_order,
    view_cql,
)


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
        # cqltypes can then give a type string naming it its fields (cql_typename, ...)
        cqltypes._user_type_fields[(keyspace, name)] = (self.field_names, self.field_types)

    def as_cql_query(self, formatted=False):
        return user_type_cql(self, formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    def __repr__(self):
        return "<UserType %s.%s>" % (self.keyspace, self.name)


class _Routine:
    """What user-defined functions and aggregates share: their CQL, its export, and the
    signature that keys them in their keyspace."""

    _kind = ""

    def _cql(self, formatted):
        raise NotImplementedError

    def as_cql_query(self, formatted=False):
        return self._cql(formatted)

    def export_as_string(self):
        return self.as_cql_query(formatted=True) + ";"

    @property
    def signature(self):
        """``name(type1,type2)``: the key in ``KeyspaceMetadata.functions`` /
        ``.aggregates``."""
        return _signature(self.name, self.argument_types)

    def __repr__(self):
        return "<%s %s.%s>" % (self._kind, self.keyspace, self.signature)


class Aggregate(_Routine):
    """A user-defined aggregate (``CREATE AGGREGATE``)."""

    _kind = "Aggregate"

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

    def _cql(self, formatted):
        return aggregate_cql(self, formatted)


class Function(_Routine):
    """A user-defined function (``CREATE FUNCTION``)."""

    _kind = "Function"

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

    def _cql(self, formatted):
        return function_cql(self, formatted)


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


class RLACTableExtension(RegisteredTableExtension):
    """DSE's row-level access control on a table (extension ``DSE_RLACA``, whose value
    names the restricted column): exported as its ``RESTRICT ROWS`` statement. Registered
    as in the classic driver, so a DSE schema exports the same."""

    name = "DSE_RLACA"

    @classmethod
    def after_table_cql(cls, table_meta, ext_key, ext_blob):
        return "RESTRICT ROWS ON %s.%s USING %s;" % (
            protect_name(table_meta.keyspace_name),
            protect_name(table_meta.name),
            protect_name(ext_blob.decode("utf-8")),
        )
