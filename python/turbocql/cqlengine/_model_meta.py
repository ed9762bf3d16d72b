"""How a cqlengine model class is made: :class:`ModelMetaClass` collects its columns
(inherited ones first, in declaration order), keys, polymorphism and options, and makes
each column a :class:`ColumnDescriptor`; the model exceptions it raises. ``models``
re-exports all of it under the classic names."""

from turbocql.cqlengine import CQLEngineException, columns
from turbocql.cqlengine._querybase import ColumnQueryEvaluator
from turbocql.cqlengine.query import DoesNotExist as _DoesNotExist
from turbocql.cqlengine.query import MultipleObjectsReturned as _MultipleObjectsReturned


class ModelException(CQLEngineException):
    pass


class ModelDefinitionException(ModelException):
    pass


class PolymorphicModelException(ModelException):
    pass


class ColumnDescriptor:
    """A column attribute: the value on an instance, a query evaluator on the class."""

    def __init__(self, column):
        self.column = column
        self.query_evaluator = ColumnQueryEvaluator(self.column)

    def __get__(self, instance, owner):
        if instance is None:
            return self.query_evaluator
        try:
            return instance._values[self.column.column_name].getval()
        except AttributeError:
            return self.query_evaluator

    def __set__(self, instance, value):
        if instance is None:
            raise AttributeError("cannot reassign column values")
        instance._values[self.column.column_name].setval(value)

    def __delete__(self, instance):
        if self.column.can_delete:
            instance._values[self.column.column_name].delval()
        else:
            raise AttributeError(f"cannot delete {self.column.column_name} columns")


class _CompositePk:
    """``instance.pk`` of a model with a composite partition key: the tuple of its values."""

    def __init__(self, names):
        self.names = names

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return tuple(getattr(instance, n) for n in self.names)

    def __set__(self, instance, value):
        for n, v in zip(self.names, value):
            setattr(instance, n, v)


class ModelMetaClass(type):
    """Collects a model's columns (inherited ones first, in declaration order), its keys,
    and makes each column an attribute that is a value on instances."""

    def __new__(mcs, name, bases, attrs):
        column_dict = {}
        primary_keys = {}
        is_abstract = attrs["__abstract__"] = attrs.get("__abstract__", False)
        attrs["__discriminator_value__"] = attrs.get("__discriminator_value__")
        for base in bases:
            for k, v in getattr(base, "_defined_columns", {}).items():
                column_dict.setdefault(k, v)
        own = sorted(((k, v) for k, v in attrs.items() if isinstance(v, columns.Column)), key=lambda kv: kv[1].position)
        for k, v in own:
            for base in bases:
                if hasattr(base, k) and k not in getattr(base, "_defined_columns", {}):
                    raise ModelDefinitionException(f"column '{k}' conflicts with the Model attribute of that name")
            column_dict[k] = v
        is_polymorphic_base = any(c.discriminator_column for c in column_dict.values())
        disc_cols = [(k, c) for k, c in column_dict.items() if c.discriminator_column]
        if len(disc_cols) > 1:
            raise ModelDefinitionException(
                f"only one discriminator_column can be defined in a model, {len(disc_cols)} found"
            )
        if (
            attrs.get("__discriminator_value__")
            and not is_polymorphic_base
            and not any(getattr(b, "_is_polymorphic", False) for b in bases)
        ):
            raise ModelDefinitionException(
                "__discriminator_value__ specified, but no base columns defined with discriminator_column=True"
            )
        disc_name = disc_cols[0][0] if disc_cols else None
        if disc_cols and isinstance(disc_cols[0][1], (columns.BaseContainerColumn, columns.Counter)):
            raise ModelDefinitionException("counter and container columns cannot be used as discriminator columns")
        is_polymorphic = bool(disc_cols)
        poly_base = None
        if is_polymorphic:
            for base in bases:
                if getattr(base, "_is_polymorphic_base", False):
                    poly_base = base
                    is_polymorphic_base = False
                    break
                if getattr(base, "_polymorphic_base", None) is not None:
                    poly_base = base._polymorphic_base
                    is_polymorphic_base = False
                    break
        # keys
        pks = [(k, c) for k, c in column_dict.items() if c.primary_key]
        if not is_abstract and not pks and column_dict:
            raise ModelDefinitionException("At least 1 primary key is required.")
        has_partition = any(c.partition_key for _, c in pks)
        partition_keys = {}
        clustering_keys = {}
        for i, (k, c) in enumerate(pks):
            if (has_partition and c.partition_key) or (not has_partition and i == 0):
                c.partition_key = True
                c._partition_key_index = len(partition_keys)
                partition_keys[k] = c
            else:
                clustering_keys[k] = c
            primary_keys[k] = c
        counter_cols = [c for c in column_dict.values() if isinstance(c, columns.Counter)]
        if any(c.primary_key for c in counter_cols):
            raise ModelDefinitionException("counter columns cannot be used as primary keys")
        data_cols = [c for c in column_dict.values() if not c.primary_key and not isinstance(c, columns.Counter)]
        if counter_cols and data_cols:
            raise ModelDefinitionException("counter models may not have data columns")
        for k, c in clustering_keys.items():
            if c.clustering_order and c.clustering_order.upper() not in ("ASC", "DESC"):
                raise ModelDefinitionException(f"invalid clustering order '{c.clustering_order}' for column '{k}'")
        db_map = {}
        for k, c in column_dict.items():
            c.set_column_name(k)
            if c.db_field_name in db_map and db_map[c.db_field_name] != k:
                raise ModelDefinitionException(f"{name} defines the column '{c.db_field_name}' more than once")
            if c.db_field and c.db_field_name != k and c.db_field_name in column_dict:
                raise ModelDefinitionException(f"{name} defines the column '{c.db_field_name}' more than once")
            db_map[c.db_field_name] = k
        ordered = dict(list(primary_keys.items()) + [(k, c) for k, c in column_dict.items() if k not in primary_keys])
        for k, c in column_dict.items():
            attrs[k] = ColumnDescriptor(c)
        attrs["_columns"] = ordered
        attrs["_defined_columns"] = dict(column_dict)
        attrs["_db_map"] = db_map
        attrs["_primary_keys"] = primary_keys
        attrs["_partition_keys"] = partition_keys
        attrs["_partition_key_index"] = {k: i for i, k in enumerate(partition_keys)}
        attrs["_clustering_keys"] = clustering_keys
        attrs["_has_counter"] = bool(counter_cols)
        attrs["_pk_name"] = next(iter(primary_keys), None)
        attrs["_dynamic_columns"] = {}
        attrs["_is_polymorphic_base"] = is_polymorphic_base
        attrs["_is_polymorphic"] = is_polymorphic
        attrs["_polymorphic_base"] = poly_base
        attrs["_discriminator_column"] = disc_cols[0][1] if disc_cols else None
        attrs["_discriminator_column_name"] = disc_name
        attrs["_discriminator_map"] = {} if is_polymorphic_base else None
        attrs["_table_name"] = None
        attrs.setdefault("__options__", None)
        if len(partition_keys) > 1:
            attrs["pk"] = _CompositePk(list(partition_keys))
        elif attrs["_pk_name"] is not None:
            attrs["pk"] = ColumnDescriptor(primary_keys[attrs["_pk_name"]])
        klass = super().__new__(mcs, name, bases, attrs)
        udts = []
        for c in column_dict.values():
            columns.resolve_udts(c, udts)
        for udt in udts:
            udt.register_for_keyspace(klass._get_keyspace() if not is_abstract else None, klass.__connection__)
        for exc_name, exc_base in (
            ("DoesNotExist", _DoesNotExist),
            ("MultipleObjectsReturned", _MultipleObjectsReturned),
        ):
            parents = tuple(getattr(b, exc_name) for b in bases if hasattr(b, exc_name)) or (exc_base,)
            setattr(klass, exc_name, type(exc_name, parents, {"__module__": attrs.get("__module__")}))
        return klass
