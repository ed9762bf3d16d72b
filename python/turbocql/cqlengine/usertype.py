"""User-defined types: a UserType subclass declares a type's fields (columns) and its
instances are the values of ``columns.UserDefinedType`` columns."""

import re

from turbocql.cqlengine import CQLEngineException, ValidationError, columns, connection
from turbocql.cqlengine._querybase import ColumnQueryEvaluator


class UserTypeDefinitionException(CQLEngineException):
    pass


class BaseUserType:
    """What every user type instance has: its fields' values."""

    __type_name__ = None
    _fields = None
    _db_map = None

    def __init__(self, **values):
        self._values = {}
        if self._db_map:
            values = {self._db_map.get(k, k): v for k, v in values.items()}
        for name, field in self._fields.items():
            field_default = field.get_default() if field.has_default else None
            value = values.get(name, field_default)
            if value is not None or isinstance(field, columns.BaseContainerColumn):
                value = field.to_python(value)
            vm = field.value_manager(self, field, value)
            vm.explicit = name in values
            self._values[name] = vm

    def __eq__(self, other):
        if self.__class__ != other.__class__:
            return False
        keys = set(self._fields.keys())
        if keys != set(other._fields.keys()):
            return False
        return all(getattr(self, k, None) == getattr(other, k, None) for k in keys)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __str__(self):
        return "{{{}}}".format(", ".join(f"'{k}': {getattr(self, k)}" for k, v in self._values.items()))

    def has_changed_fields(self):
        return any(v.changed for v in self._values.values())

    def reset_changed_fields(self):
        for v in self._values.values():
            v.reset_previous_value()

    def __iter__(self):
        yield from self._fields.keys()

    def __getattr__(self, attr):
        # driver-side field names (db_field) read through to the column attribute
        db_map = type(self)._db_map or {}
        if attr in db_map:
            return getattr(self, db_map[attr])
        raise AttributeError(attr)

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise TypeError
        if key not in self._fields.keys():
            raise KeyError
        return getattr(self, key)

    def __setitem__(self, key, val):
        if not isinstance(key, str):
            raise TypeError
        if key not in self._fields.keys():
            raise KeyError
        return setattr(self, key, val)

    def __len__(self):
        return len(self._fields)

    def keys(self):
        return self._fields.keys()

    def items(self):
        return [(k, self[k]) for k in self]

    def values(self):
        return [self[k] for k in self]

    @classmethod
    def register_for_keyspace(cls, keyspace, connection_name=None):
        connection.register_udt(keyspace, cls.type_name(), cls, connection_name)

    @classmethod
    def type_name(cls):
        """The type's name: ``__type_name__``, or the class name in snake case."""
        if cls.__type_name__:
            type_name = cls.__type_name__.lower()
        else:
            name = re.sub(r"([a-z])([A-Z])", lambda m: m.group(1) + "_" + m.group(2), cls.__name__)
            type_name = re.sub(r"^_+", "", name.lower())
            cls.__type_name__ = type_name
        return type_name

    def validate(self):
        for name, field in self._fields.items():
            v = getattr(self, name)
            if v is None and not self._values[name].explicit and field.has_default:
                v = field.get_default()
            val = field.validate(v)
            setattr(self, name, val)

    @classmethod
    def _from_db(cls, value):
        """An instance from what the driver returned (a UDT value or a mapping)."""
        if isinstance(value, dict):
            items = value
        else:
            items = {}
            for name, field in cls._fields.items():
                key = field.db_field_name
                if hasattr(value, key):
                    items[name] = getattr(value, key)
                elif hasattr(value, name):
                    items[name] = getattr(value, name)
        out = cls(
            **{
                k: cls._fields[k].to_python(v) if k in cls._fields and v is not None else v
                for k, v in items.items()
                if k in cls._fields
            }
        )
        for vm in out._values.values():
            vm.explicit = False
            vm.reset_previous_value()
        return out

    @classmethod
    def _to_db(cls, value):
        """The value as the driver encodes it: an instance of ``_DbValue`` per field."""
        if not isinstance(value, cls):
            if isinstance(value, dict):
                value = cls(**value)
            else:
                raise ValidationError(f"{value} is not a {cls.__name__}")
        return _db_value(cls)(**{f.db_field_name: f.to_database(getattr(value, n)) for n, f in cls._fields.items()})


_DB_VALUE_CLASSES: dict[type, type] = {}


def _db_value(cls):
    """A plain class with the type's db field names, registered with the cluster in place of
    the user's class so the driver encodes values by those names."""
    klass = _DB_VALUE_CLASSES.get(cls)
    if klass is None:

        def __init__(self, **kw):
            self.__dict__.update(kw)

        klass = type(
            cls.__name__ + "Value",
            (),
            {"__init__": __init__, "__eq__": lambda a, b: a.__dict__ == getattr(b, "__dict__", None)},
        )
        _DB_VALUE_CLASSES[cls] = klass
        columns.UDT_VALUE_CLASSES[klass] = list(f.db_field_name for f in cls._fields.values())
    return klass


class UserTypeMetaClass(type):
    """Collects a user type's fields (inherited first, in declaration order)."""

    def __new__(mcs, name, bases, attrs):
        field_dict = {}
        for base in bases:
            for k, v in (getattr(base, "_fields", None) or {}).items():
                field_dict.setdefault(k, v)
        own = sorted(((k, v) for k, v in attrs.items() if isinstance(v, columns.Column)), key=lambda kv: kv[1].position)
        db_map = {}
        for k, v in own:
            if v.primary_key or v.partition_key:
                raise UserTypeDefinitionException("Cannot use primary_key or partition_key in UserType fields")
            field_dict[k] = v
        for k, v in field_dict.items():
            v.set_column_name(k)
            if v.db_field_name in db_map and db_map[v.db_field_name] != k:
                raise UserTypeDefinitionException(f"{name} defines the field '{v.db_field_name}' more than once")
            db_map[v.db_field_name] = k
            attrs[k] = _FieldDescriptor(k)
        attrs["_fields"] = field_dict
        attrs["_db_map"] = {db: k for db, k in db_map.items() if db != k}
        return super().__new__(mcs, name, bases, attrs)


class _FieldDescriptor:
    def __init__(self, name):
        self.name = name

    def __get__(self, instance, owner):
        if instance is None:
            # As a model's column on the class, as classic: ``UserTypeClass.field.column``.
            return ColumnQueryEvaluator(owner._fields[self.name])
        return instance._values[self.name].getval()

    def __set__(self, instance, value):
        instance._values[self.name].setval(value)

    def __delete__(self, instance):
        instance._values[self.name].delval()


class UserType(BaseUserType, metaclass=UserTypeMetaClass):
    """The base class of a user's types; ``__type_name__`` overrides the snake-case name."""

    __type_name__ = None
