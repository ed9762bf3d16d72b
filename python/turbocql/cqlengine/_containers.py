"""Column types holding other values: Set, List, Map, Tuple, and UserDefinedType (whose
values are usertype instances, sent as UDT literals)."""

from copy import copy as _copy

from turbocql import util
from turbocql.cqlengine import ValidationError
from turbocql.cqlengine._column_base import BaseValueManager, Column


class BaseCollectionColumn(Column):
    """A column of other columns' values (list, set, map, tuple)."""

    def __init__(self, types, **kwargs):
        instances = []
        for t in types:
            inst = t() if isinstance(t, type) else t
            if not isinstance(inst, Column):
                raise ValidationError(f"{t} is not a column class")
            if inst.db_type == "counter":
                raise ValidationError("Counters are not allowed in collections")
            instances.append(inst)
        self.types = instances
        super().__init__(**kwargs)

    def validate(self, value):
        value = super().validate(value)
        if value is not None and len(value) > 65535:
            raise ValidationError(f"{self.column_name} collection can't have more than 65535 elements")
        return value

    def _val_is_null(self, val):
        return not val

    @property
    def sub_types(self):
        return self.types

    @property
    def cql_type(self):
        from turbocql import cqltypes

        return cqltypes.lookup_casstype(self.db_type_name()) if False else None

    def _sub_cql(self, col):
        if isinstance(col, BaseCollectionColumn) or isinstance(col, UserDefinedType):
            return f"frozen<{col.db_type}>"
        return col.db_type


class BaseContainerColumn(BaseCollectionColumn):
    """A list, set or map (not frozen): its value manager writes what changed."""

    _container = True


class Set(BaseContainerColumn):
    """``set<T>``: a Python set of ``value_type`` values; ``strict`` refuses lists."""

    _python_type_hashable = True

    def __init__(self, value_type, strict=True, default=set, **kwargs):
        self.strict = strict
        super().__init__((value_type,), default=default, **kwargs)
        self.value_col = self.types[0]
        if not self.value_col._python_type_hashable:
            raise ValidationError("Cannot create a Set with unhashable value type (see PYTHON-494)")
        self.db_type = f"set<{self._sub_cql(self.value_col)}>"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        types = (set, util.SortedSet) if self.strict else (set, util.SortedSet, list, tuple)
        if not isinstance(val, types):
            if self.strict:
                raise ValidationError(f"{self.column_name} {val} is not a set object")
            raise ValidationError(f"{self.column_name} {val} cannot be coerced to a set object")
        if None in val:
            raise ValidationError(f"{self.column_name} None not allowed in a set")
        return set(self.value_col.validate(v) for v in val)

    def to_python(self, value):
        if value is None:
            return set()
        return set(self.value_col.to_python(v) for v in value)

    def to_database(self, value):
        if value is None:
            return None
        return set(self.value_col.to_database(v) for v in value)


class List(BaseContainerColumn):
    """``list<T>``: a Python list of ``value_type`` values."""

    _python_type_hashable = False

    def __init__(self, value_type, default=list, **kwargs):
        super().__init__((value_type,), default=default, **kwargs)
        self.value_col = self.types[0]
        self.db_type = f"list<{self._sub_cql(self.value_col)}>"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        if not isinstance(val, (set, list, tuple)):
            raise ValidationError(f"{self.column_name} {val} is not a list object")
        if None in val:
            raise ValidationError(f"{self.column_name} None is not allowed in a list")
        return [self.value_col.validate(v) for v in val]

    def to_python(self, value):
        if value is None:
            return []
        return [self.value_col.to_python(v) for v in value]

    def to_database(self, value):
        if value is None:
            return None
        return [self.value_col.to_database(v) for v in value]


class Map(BaseContainerColumn):
    """``map<K, V>``: a Python dict."""

    _python_type_hashable = False

    def __init__(self, key_type, value_type, default=dict, **kwargs):
        super().__init__((key_type, value_type), default=default, **kwargs)
        self.key_col = self.types[0]
        self.value_col = self.types[1]
        if not self.key_col._python_type_hashable:
            raise ValidationError("Cannot create a Map with unhashable key type (see PYTHON-494)")
        self.db_type = f"map<{self._sub_cql(self.key_col)}, {self._sub_cql(self.value_col)}>"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        if not isinstance(val, (dict, util.OrderedMap)):
            raise ValidationError(f"{self.column_name} {val} is not a dict object")
        if None in val:
            raise ValidationError(f"{self.column_name} None is not allowed in a map")
        return dict((self.key_col.validate(k), self.value_col.validate(v)) for k, v in val.items())

    def to_python(self, value):
        if value is None:
            return {}
        return dict((self.key_col.to_python(k), self.value_col.to_python(v)) for k, v in value.items())

    def to_database(self, value):
        if value is None:
            return None
        return dict((self.key_col.to_database(k), self.value_col.to_database(v)) for k, v in value.items())


class Tuple(BaseCollectionColumn):
    """``tuple<A, B, ...>`` (frozen): a Python tuple."""

    def __init__(self, *args, **kwargs):
        if not args:
            raise ValueError("Tuple must specify at least one inner type")
        super().__init__(args, **kwargs)
        self.db_type = "frozen<tuple<{}>>".format(", ".join(self._sub_cql(t) for t in self.types))

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        if len(val) > len(self.types):
            raise ValidationError(
                "Value %r has more fields than tuple definition (%s)" % (val, ", ".join(t.db_type for t in self.types))
            )
        return tuple(t.validate(v) for t, v in zip(self.types, val))

    def to_python(self, value):
        if value is None:
            return tuple()
        return tuple(t.to_python(v) for t, v in zip(self.types, value))

    def to_database(self, value):
        if value is None:
            return None
        return tuple(t.to_database(v) for t, v in zip(self.types, value))


class UDTValueManager(BaseValueManager):
    @property
    def changed(self):
        if self.explicit:
            return self.value != self.previous_value
        default = self.column.get_default()
        if not self.column._val_is_null(default):
            return self.value != default
        if self.previous_value is None:
            return not self.column._val_is_null(self.value) and self.value.has_changed_fields()
        return False

    def reset_previous_value(self):
        if self.value is not None:
            self.value.reset_changed_fields()
        self.previous_value = _copy(self.value)


class UserDefinedType(Column):
    """A user-defined type column (frozen): ``user_type`` is a ``usertype.UserType`` class."""

    value_manager = UDTValueManager

    def __init__(self, user_type, **kwargs):
        self.user_type = user_type
        self.db_type = "frozen<%s>" % user_type.type_name()
        super().__init__(**kwargs)

    @property
    def sub_types(self):
        return list(self.user_type._fields.values())

    @property
    def cql_type(self):
        return None

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        val.validate()
        return val

    def to_python(self, val):
        if val is None:
            return None
        if isinstance(val, self.user_type):
            return val
        for name, _field in self.user_type._fields.items():
            if name in val.__dict__ if hasattr(val, "__dict__") else False:
                pass
        return self.user_type._from_db(val)

    def to_database(self, val):
        if val is None:
            return None
        return self.user_type._to_db(val)


def resolve_udts(col_def, out_list):
    """Appends to ``out_list`` every UserType ``col_def`` holds, innermost first."""
    for col in col_def.sub_types:
        resolve_udts(col, out_list)
    if isinstance(col_def, UserDefinedType):
        out_list.append(col_def.user_type)


class _PartitionKeysToken(Column):
    """The ``token(pk...)`` pseudo column of a model, for token range queries."""

    def __init__(self, model):
        self.partition_columns = list(model._partition_keys.values())
        super().__init__(partition_key=True)

    @property
    def db_field_name(self):
        return "token({})".format(", ".join([f'"{c.db_field_name}"' for c in self.partition_columns]))


# the classes usertype makes for UDT values sent (class -> field names), which every
# cqlengine session's encoder writes as UDT literals
UDT_VALUE_CLASSES: dict[type, list] = {}


def encode_udt_value(encoder, value):
    """The CQL literal ``{"f": v, ...}`` of a UDT value cqlengine sends."""
    fields = UDT_VALUE_CLASSES[type(value)]
    parts = []
    for name in fields:
        parts.append(
            '"{}": {}'.format(name.replace('"', '""'), encoder.cql_encode_all_types(getattr(value, name, None)))
        )
    return "{" + ", ".join(parts) + "}"
