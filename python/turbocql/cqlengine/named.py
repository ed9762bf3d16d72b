"""Tables no model declares: ``NamedKeyspace('ks').table('t')`` is a NamedTable whose
columns (``NamedColumn``) are known by name only; its query sets return ResultObjects."""

from turbocql.cqlengine import CQLEngineException
from turbocql.cqlengine.query import AbstractQueryableColumn, SimpleQuerySet
from turbocql.cqlengine.query import DoesNotExist as _DoesNotExist
from turbocql.cqlengine.query import MultipleObjectsReturned as _MultipleObjectsReturned


class QuerySetDescriptor:
    """``NamedTable.objects``: a new SimpleQuerySet on each access."""

    def __get__(self, instance, owner):
        if instance is None:
            raise CQLEngineException("objects of a named table are reached from an instance")
        return SimpleQuerySet(instance)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError


class NamedColumn(AbstractQueryableColumn):
    """A column of a NamedTable, known by its name: it converts nothing."""

    def __init__(self, name):
        self.name = name

    def __unicode__(self):
        return self.name

    def _get_column(self):
        return self

    @property
    def db_field_name(self):
        return self.name

    @property
    def cql(self):
        return self.get_cql()

    def get_cql(self):
        return f'"{self.name}"'

    def to_database(self, val):
        return val

    primary_key = False
    partition_key = False
    has_index = False
    custom_index = False


class NamedTable:
    """A table known by its keyspace and name; ``.objects``, ``.filter()``, ``.get()``."""

    __abstract__ = False
    objects = QuerySetDescriptor()
    __partition_keys = None
    _partition_key_index = None
    __connection__ = None
    _connection = None

    class DoesNotExist(_DoesNotExist):
        pass

    class MultipleObjectsReturned(_MultipleObjectsReturned):
        pass

    def __init__(self, keyspace, name):
        self.keyspace = keyspace
        self.name = name
        self._columns = {}
        self._partition_keys = {}
        self._primary_keys = {}
        self._db_map = {}

    @property
    def _partition_keys(self):
        if self.__partition_keys is None:
            try:
                from turbocql.cqlengine import connection

                table = (
                    connection.get_cluster(self._get_connection()).metadata.keyspaces[self.keyspace].tables[self.name]
                )
                self.__partition_keys = {c.name: NamedColumn(c.name) for c in table.partition_key}
            except Exception:
                self.__partition_keys = {}
        return self.__partition_keys

    @_partition_keys.setter
    def _partition_keys(self, value):
        self.__partition_keys = value or None

    def column(self, name):
        return NamedColumn(name)

    def _get_column(self, name):
        return NamedColumn(name)

    def _get_column_by_db_name(self, name):
        return NamedColumn(name)

    def _get_connection(self):
        return self._connection

    def column_family_name(self, include_keyspace=True):
        if include_keyspace:
            return f"{self.keyspace}.{self.name}"
        return self.name

    def _get_keyspace(self):
        return self.keyspace

    def _construct_instance(self, values):
        from turbocql.cqlengine.query import ResultObject

        return ResultObject(values)

    def all(self):
        return self.objects.all()

    def filter(self, *args, **kwargs):
        return self.objects.filter(*args, **kwargs)

    def get(self, *args, **kwargs):
        return self.objects.get(*args, **kwargs)


class NamedKeyspace:
    """A keyspace known by name: ``table(name)`` is its NamedTable."""

    def __init__(self, name):
        self.name = name

    def table(self, name):
        return type(name, (NamedTable,), {})(self.name, name)
