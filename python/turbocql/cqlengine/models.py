"""cqlengine models: a Model subclass declares a table (its columns, keys, options), and
its instances are rows, saved, updated and deleted through ``query.DMLQuery``."""

import decimal
import re
import uuid
import warnings

from turbocql._util.homes import publish as _publish
from turbocql.cqlengine import CQLEngineException, ValidationError, _column_base, columns, query
from turbocql.cqlengine import connection as _connection
from turbocql.cqlengine._model_meta import (  # noqa: F401 - classic names of cqlengine.models
    ColumnDescriptor,
    ColumnQueryEvaluator,
    ModelDefinitionException,
    ModelException,
    ModelMetaClass,
    PolymorphicModelException,
)
from turbocql.cqlengine.query import DoesNotExist as _DoesNotExist
from turbocql.cqlengine.query import MultipleObjectsReturned as _MultipleObjectsReturned
from turbocql.metadata import protect_name

DEFAULT_KEYSPACE = _connection._default_keyspace


def _follow_default_keyspace(name):
    global DEFAULT_KEYSPACE
    DEFAULT_KEYSPACE = name


_connection._keyspace_hooks.append(_follow_default_keyspace)


_MISSING = object()
_CONTAINER = object()
_PERSISTED_STATE = {
    "_ttl": None,
    "_timestamp": None,
    "_conditional": None,
    "_batch": None,
    "_timeout": query.connection.NOT_SET,
    "_is_persisted": True,
    "_connection": None,
    "_if_not_exists": False,
    "_if_exists": False,
}


def _row_plan(model):
    """Per column of ``model``: (name, db name, column, value manager class, whether and how
    its values go through ``to_python``, the type whose values skip ``to_python``)."""
    plan = []
    for name, column in model._columns.items():
        to_python = type(column).to_python
        if isinstance(column, columns.BaseContainerColumn):
            convert = _CONTAINER
        elif to_python is _column_base.Column.to_python:
            convert = None  # the base to_python returns the value as it is
        else:
            convert = to_python
        decoded = _DECODED_AS.get(type(column))
        plan.append((name, column.db_field_name, column, column.value_manager, convert, decoded))
    return tuple(plan)


# The Python type the engine decodes each column type of the library to, for which that
# column's to_python returns the value unchanged (a subclass may change to_python: not here).
_DECODED_AS = {
    columns.Integer: int,
    columns.TinyInt: int,
    columns.SmallInt: int,
    columns.BigInt: int,
    columns.VarInt: int,
    columns.Counter: int,
    columns.UUID: uuid.UUID,
    columns.TimeUUID: uuid.UUID,
    columns.Boolean: bool,
    columns.Float: float,
    columns.Double: float,
    columns.Decimal: decimal.Decimal,
}


class UndefinedKeyspaceWarning(Warning):
    pass


class hybrid_classmethod:
    """A method that is a classmethod on the class and an instance method on instances."""

    def __init__(self, clsmethod, instmethod):
        self.clsmethod = clsmethod
        self.instmethod = instmethod

    def __get__(self, instance, owner):
        if instance is None:
            return self.clsmethod.__get__(owner, owner)
        return self.instmethod.__get__(instance, owner)


class QuerySetDescriptor:
    """``Model.objects``: a new query set of the model on each access."""

    def __get__(self, obj, model):
        if model.__abstract__:
            raise CQLEngineException("cannot execute queries against abstract models")
        qs = model.__queryset__(model)
        if model._is_polymorphic_base is False and model._is_polymorphic:
            # A subclass's rows are chosen by the discriminator only when the server can
            # (a partition key or indexed column); else the rows of another subclass raise
            # PolymorphicModelException as they come, as classic.
            column = model._columns[model._discriminator_column_name]
            if column.partition_key or column.index:
                qs = qs.filter(**{model._discriminator_column_name: model.__discriminator_value__})
        return qs

    def __call__(self, *args, **kwargs):
        raise NotImplementedError


def _snake(name):
    name = re.sub(r"([a-z])([A-Z])", lambda m: m.group(1) + "_" + m.group(2), name).lower()
    return re.sub(r"^_+", "", name)


class BaseModel:
    """What every model instance has: its values, and the options of its next save."""

    class DoesNotExist(_DoesNotExist):
        pass

    class MultipleObjectsReturned(_MultipleObjectsReturned):
        pass

    objects = QuerySetDescriptor()
    __table_name__ = None
    __table_name_case_sensitive__ = False
    __keyspace__ = None
    __connection__ = None
    __discriminator_value__ = None
    __options__ = None
    __compute_routing_key__ = True
    __queryset__ = query.ModelQuerySet
    __dmlquery__ = query.DMLQuery
    __consistency__ = None
    _timestamp = None
    _if_not_exists = False
    _if_exists = False
    _table_name = None

    def __init__(self, **values):
        self._ttl = None
        self._timestamp = None
        self._conditional = None
        self._batch = None
        self._timeout = query.connection.NOT_SET
        self._is_persisted = False
        self._connection = None
        self._if_not_exists = False
        self._if_exists = False
        self._values = {}
        for name, column in self._columns.items():
            if name in values or (column.db_field and column.db_field_name in values):
                value = values.get(name, values.get(column.db_field_name))
            else:
                # A column not given starts at its default (a collection's too: it would
                # otherwise be the empty collection), not explicit.
                value = column.get_default() if column.has_default else None
            if value is not None or isinstance(column, columns.BaseContainerColumn):
                value = column.to_python(value)
            vm = column.value_manager(self, column, value)
            vm.explicit = name in values
            self._values[name] = vm
        if self._is_polymorphic and self._discriminator_column_name and not self._is_polymorphic_base:
            if getattr(self, self._discriminator_column_name) is None:
                setattr(self, self._discriminator_column_name, self.__discriminator_value__)

    def __repr__(self):
        return "{}({})".format(
            self.__class__.__name__,
            ", ".join(
                f"{k}={getattr(self, k)!r}"
                for k in self._defined_columns.keys()
                if k != self._discriminator_column_name
            ),
        )

    def __str__(self):
        return "{} <{}>".format(
            self.__class__.__name__, ", ".join(f"{k}={getattr(self, k)}" for k in self._primary_keys.keys())
        )

    @classmethod
    def _routing_key_from_values(cls, pk_values, protocol_version):
        """The serialized partition key values (a statement's ``routing_key`` takes them):
        each the engine's bytes of the column's value, through its type's class (as the
        classic cqlengine's)."""
        if not cls.__compute_routing_key__:
            return None
        out = []
        for col, val in zip(cls._partition_keys.values(), pk_values):
            ctype = col.cql_type
            if ctype is None:
                return None
            out.append(ctype.serialize(col.to_database(val), protocol_version))
        return out

    @classmethod
    def _discover_polymorphic_submodels(cls):
        if not cls._is_polymorphic_base:
            raise ModelException("_discover_polymorphic_submodels can only be called on polymorphic base classes")

        def _discover(klass):
            if not klass._is_polymorphic_base and klass.__discriminator_value__ is not None:
                cls._discriminator_map[klass.__discriminator_value__] = klass
            for sub in klass.__subclasses__():
                _discover(sub)

        _discover(cls)

    @classmethod
    def _get_model_by_discriminator_value(cls, key):
        if not cls._is_polymorphic_base:
            raise ModelException("_get_model_by_discriminator_value can only be called on polymorphic base classes")
        return cls._discriminator_map.get(key)

    @classmethod
    def _construct_instance(cls, values):
        """A persisted instance of the row ``values`` (a dict of db field names)."""
        if not cls._is_polymorphic and cls.__init__ is BaseModel.__init__:
            return cls._persisted_from_row(values)
        field_dict = {}
        for k, v in values.items():
            name = cls._db_map.get(k, k)
            field_dict[name] = v
        klass = cls
        if cls._is_polymorphic:
            disc = field_dict.get(cls._discriminator_column_name)
            if disc is None:
                raise PolymorphicModelException("discriminator value was not found in values")
            poly_base = cls if cls._is_polymorphic_base else cls._polymorphic_base
            klass = poly_base._get_model_by_discriminator_value(disc)
            if klass is None:
                poly_base._discover_polymorphic_submodels()
                klass = poly_base._get_model_by_discriminator_value(disc)
                if klass is None:
                    raise PolymorphicModelException(
                        f"unrecognized discriminator column {disc} for class {poly_base.__name__}"
                    )
            if not issubclass(klass, cls):
                raise PolymorphicModelException(f"{klass.__name__} is not a subclass of {cls.__name__}")
            field_dict = {k: v for k, v in field_dict.items() if k in klass._columns}
            if klass.__init__ is BaseModel.__init__:
                return klass._persisted_from_row(values)
        instance = klass(**field_dict)
        instance._set_persisted(force=True)
        return instance

    @classmethod
    def _persisted_from_row(cls, row):
        """``_construct_instance`` for a model that keeps BaseModel's ``__init__``: the same
        instance ``cls(**row)`` then ``_set_persisted(force=True)`` give, built in one pass
        over a per-class plan of the columns (a read of many rows spends its time here)."""
        plan = cls.__dict__.get("_turbocql_row_plan")
        if plan is None:
            plan = _row_plan(cls)
            type.__setattr__(cls, "_turbocql_row_plan", plan)
        instance = cls.__new__(cls)
        instance.__dict__.update(_PERSISTED_STATE)
        vms = instance._values = {}
        for name, db_name, column, vm_class, to_python, decoded in plan:
            value = row.get(db_name, _MISSING)
            if value is _MISSING and db_name != name:
                value = row.get(name, _MISSING)
            if value is _MISSING:
                value = column.get_default() if column.has_default else None
            if type(value) is decoded:
                pass
            elif to_python is not None and (value is not None or to_python is _CONTAINER):
                value = column.to_python(value)
            vm = vm_class(instance, column, value)
            vm.explicit = False
            vm.reset_previous_value()  # no copy of an immutable value (BaseValueManager)
            vms[name] = vm
        if cls._is_polymorphic and not cls._is_polymorphic_base:
            vm = vms[cls._discriminator_column_name]
            if vm.value is None:
                vm.value = vm.previous_value = cls.__discriminator_value__
        return instance

    def _set_persisted(self, force=False):
        for v in self._values.values():
            if v.changed or force:
                v.reset_previous_value()
            v.explicit = False
        self._is_persisted = True

    def _can_update(self):
        if not self._is_persisted:
            return False
        return all(not self._values[k].changed for k in self._primary_keys)

    @classmethod
    def _get_keyspace(cls):
        return cls.__keyspace__ or DEFAULT_KEYSPACE

    @classmethod
    def _get_column(cls, name):
        return cls._columns[name]

    @classmethod
    def _get_column_by_db_name(cls, name):
        return cls._columns.get(cls._db_map.get(name, name))

    def __eq__(self, other):
        if self.__class__ != other.__class__:
            return False
        keys = set(self._columns.keys())
        if keys != set(other._columns.keys()):
            return False
        return all(getattr(self, k, None) == getattr(other, k, None) for k in keys)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    @classmethod
    def column_family_name(cls, include_keyspace=True):
        """The table's name, quoted as CQL needs it, with its keyspace unless told not to."""
        if include_keyspace:
            ks = cls._get_keyspace()
            if not ks:
                raise CQLEngineException(
                    "Model keyspace is not set and no default is available. Set model keyspace or setup "
                    "connection before attempting to generate a query."
                )
            return f"{_quote(ks)}.{_quote(cls._raw_column_family_name())}"
        return _quote(cls._raw_column_family_name())

    @classmethod
    def _raw_column_family_name(cls):
        if not cls._table_name:
            if cls.__table_name__:
                if cls.__table_name_case_sensitive__:
                    warnings.warn(
                        "Model __table_name_case_sensitive__ will be removed in 4.0.",
                        PendingDeprecationWarning,
                        stacklevel=2,
                    )
                    cls._table_name = cls.__table_name__
                else:
                    cls._table_name = cls.__table_name__.lower()
            elif cls._is_polymorphic and not cls._is_polymorphic_base:
                cls._table_name = cls._polymorphic_base._raw_column_family_name()
            else:
                cls._table_name = _snake(cls.__name__)
        return cls._table_name

    def _set_column_value(self, name, value):
        col = self._columns.get(name)
        if col is not None:
            setattr(self, name, value)

    def validate(self):
        """Checks every column's value (raising ValidationError) and keeps what they return."""
        for name, col in self._columns.items():
            v = getattr(self, name)
            if v is None and not self._values[name].explicit and col.has_default:
                v = col.get_default()
            val = col.validate(v)
            self._values[name].value = val

    def __iter__(self):
        yield from self._columns.keys()

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError
        if key not in self._columns.keys():
            raise KeyError
        return getattr(self, key)

    def __setitem__(self, key, val):
        if not isinstance(key, str):
            raise TypeError
        if key not in self._columns.keys():
            raise KeyError
        return setattr(self, key, val)

    def __len__(self):
        if not hasattr(self, "_len"):
            self._len = len(self._columns.keys())
        return self._len

    def keys(self):
        return list(self._columns.keys())

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def _as_dict(self):
        return {name: self._values[name].getval() for name in self._columns}

    @classmethod
    def create(cls, **kwargs):
        """Saves a new row of ``kwargs``; returns its instance."""
        extra = set(kwargs) - set(cls._columns)
        if extra:
            raise ValidationError(f"Incorrect columns passed: {extra}")
        return cls.objects.create(**kwargs)

    @classmethod
    def all(cls):
        return cls.objects.all()

    @classmethod
    def filter(cls, *args, **kwargs):
        return cls.objects.filter(*args, **kwargs)

    @classmethod
    def get(cls, *args, **kwargs):
        return cls.objects.get(*args, **kwargs)

    def timeout(self, timeout):
        assert self._batch is None, "Setting both timeout and batch is not supported"
        self._timeout = timeout
        return self

    def _dml(self, **own):
        """The instance's DML query with the options set on it; ``own``: the operation's own."""
        return self.__dmlquery__(
            self.__class__,
            self,
            batch=self._batch,
            timestamp=self._timestamp,
            consistency=self.__consistency__,
            conditional=self._conditional,
            timeout=self._timeout,
            if_exists=self._if_exists,
            **own,
        )

    def _set_discriminator(self, operation):
        """A polymorphic model's row carries its discriminator value (refused on the base)."""
        if self._is_polymorphic:
            if self._is_polymorphic_base:
                raise PolymorphicModelException("cannot %s polymorphic base model" % operation)
            setattr(self, self._discriminator_column_name, self.__discriminator_value__)

    def save(self):
        """Writes the instance: an INSERT when new, an UPDATE of the changed columns after."""
        self._set_discriminator("save")
        self.validate()
        self._dml(ttl=self._ttl, if_not_exists=self._if_not_exists).save()
        self._set_persisted()
        self._timestamp = None
        return self

    def update(self, **values):
        """Sets ``values`` and writes the changed columns (primary keys can't change)."""
        for k, v in values.items():
            col = self._columns.get(k)
            if col is None:
                raise ValidationError(f"{self.__module__}.{self.__class__.__name__} has no column named: {k}")
            if col.is_primary_key:
                current = self._values[k].getval()
                if v != current or self._values[k].previous_value != current:
                    raise ValidationError(
                        f"Cannot apply update to primary key '{k}' for {self.__module__}.{self.__class__.__name__}"
                    )
            setattr(self, k, v)
        self._set_discriminator("update")
        self.validate()
        self._dml(ttl=self._ttl).update()
        self._set_persisted()
        self._timestamp = None
        return self

    def delete(self):
        """Deletes the row."""
        self._dml().delete()

    def get_changed_columns(self):
        return [k for k, v in self._values.items() if v.changed]

    @classmethod
    def _class_batch(cls, batch):
        return cls.objects.batch(batch)

    def _inst_batch(self, batch):
        assert self._timeout is query.connection.NOT_SET, "Setting both timeout and batch is not supported"
        if self._connection:
            raise CQLEngineException("Cannot specify a connection on model in batch mode.")
        self._batch = batch
        return self

    batch = hybrid_classmethod(_class_batch, _inst_batch)

    @classmethod
    def _class_get_connection(cls):
        return cls.__connection__

    def _inst_get_connection(self):
        return self._connection or self.__connection__

    _get_connection = hybrid_classmethod(_class_get_connection, _inst_get_connection)


def _quote(name):
    return protect_name(name)


def _instance_options(name, attr, clear=None):
    def cls_method(cls, value=True):
        return getattr(cls.objects, name)(value)

    def inst_method(self, value=True):
        setattr(self, attr, value)
        return self

    return hybrid_classmethod(cls_method, inst_method)


for _name, _attr in (
    ("ttl", "_ttl"),
    ("timestamp", "_timestamp"),
    ("consistency", "__consistency__"),
    ("if_not_exists", "_if_not_exists"),
    ("if_exists", "_if_exists"),
):
    setattr(BaseModel, _name, _instance_options(_name, _attr))


def _class_iff(cls, *args, **kwargs):
    return cls.objects.iff(*args, **kwargs)


def _inst_iff(self, **kwargs):
    if self._conditional is None:
        self._conditional = {}
    for k in kwargs:
        if k.split("__")[0] not in self._columns:
            raise ValidationError(f"Cannot apply iff condition to non-existing column {k}")
    self._conditional.update(kwargs)
    return self


BaseModel.iff = hybrid_classmethod(_class_iff, _inst_iff)  # type: ignore[attr-defined]


def _class_using(cls, keyspace=None, connection=None):
    return cls.objects.using(keyspace=keyspace, connection=connection)


def _inst_using(self, keyspace=None, connection=None):
    if connection and self._batch:
        raise CQLEngineException("Cannot specify a connection on model in batch mode.")
    if keyspace:
        self.__keyspace__ = keyspace
    if connection:
        self._connection = connection
    return self


BaseModel.using = hybrid_classmethod(_class_using, _inst_using)  # type: ignore[attr-defined]


class Model(BaseModel, metaclass=ModelMetaClass):
    """The base class of a user's models (``__abstract__ = True`` for one with no table)."""

    __abstract__ = True


# This module is the home of the classic names of cqlengine.models that live in
# turbocql.cqlengine._model_meta and _querybase (reprs, tracebacks, docs and pickles name
# turbocql.cqlengine.models).
_publish(
    __name__,
    [
        "ColumnDescriptor",
        "ColumnQueryEvaluator",
        "ModelDefinitionException",
        "ModelException",
        "ModelMetaClass",
        "PolymorphicModelException",
    ],
)
