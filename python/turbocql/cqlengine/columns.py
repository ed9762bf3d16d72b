"""Column types of cqlengine models: each maps a Python value to a CQL type.

A column validates a value (``validate``), turns what the database returned into Python
(``to_python``) and a Python value into what is sent (``to_database``). A model instance
keeps one ``BaseValueManager`` per column, which remembers the value last loaded or saved
so that only changed columns are written.
"""

import datetime
import decimal
import itertools
import uuid as _uuid
from copy import copy as _copy

from turbocql import cqltypes, util
from turbocql.cqlengine import ValidationError

_counter = itertools.count()


class BaseValueManager:
    """The value of one column of one model instance, and what it was when last persisted."""

    def __init__(self, instance, column, value):
        self.instance = instance
        self.column = column
        self.value = value
        self.previous_value = None
        self.explicit = False

    @property
    def deleted(self):
        return self.column._val_is_null(self.value) and (
            self.explicit or not self.column._val_is_null(self.previous_value)
        )

    @property
    def changed(self):
        if self.explicit:
            return self.value != self.previous_value
        if isinstance(self.column, BaseContainerColumn):
            default = self.column.get_default()
            if self.column._val_is_null(default):
                return not self.column._val_is_null(self.value) and self.value != self.previous_value
            elif self.previous_value is None:
                return self.value != default
            return self.value != self.previous_value
        return False

    def reset_previous_value(self):
        self.previous_value = _copy(self.value)

    def getval(self):
        return self.value

    def setval(self, val):
        self.value = val
        self.explicit = True

    def delval(self):
        self.value = None

    def get_property(self):
        return property(self.getval, self.setval, self.delval)


class Column:
    """The base of every column type.

    ``primary_key``: part of the primary key (the first one is the partition key unless
    some column says ``partition_key``); ``partition_key``: part of the partition key;
    ``index``: a secondary index on it; ``custom_index``: indexed by a custom index the
    user manages; ``db_field``: its name in the table when it differs from the
    attribute's; ``default``: a value or a callable; ``required``: None refused;
    ``clustering_order``: ``"ASC"`` or ``"DESC"``; ``discriminator_column``: holds the
    polymorphic type of a row; ``static``: a static column.
    """

    db_type: str | None = None
    value_manager: type = BaseValueManager
    _python_type_hashable = True
    instance_counter = 0

    def __init__(
        self,
        primary_key=False,
        partition_key=False,
        index=False,
        db_field=None,
        default=None,
        required=False,
        clustering_order=None,
        discriminator_column=False,
        static=False,
        custom_index=False,
    ):
        self.partition_key = partition_key
        self.primary_key = partition_key or primary_key
        self.index = index
        self.custom_index = custom_index
        self.db_field = db_field
        self.default = default
        self.required = required
        self.clustering_order = clustering_order
        self.discriminator_column = discriminator_column
        self.column_name = None
        self._partition_key_index = None
        self.static = static
        self.value = None
        self.position = next(_counter)
        Column.instance_counter = self.position

    def __ne__(self, other):
        if isinstance(other, Column):
            return self.position != other.position
        return NotImplemented

    def __eq__(self, other):
        if isinstance(other, Column):
            return self.position == other.position
        return NotImplemented

    def __lt__(self, other):
        if isinstance(other, Column):
            return self.position < other.position
        return NotImplemented

    def __le__(self, other):
        if isinstance(other, Column):
            return self.position <= other.position
        return NotImplemented

    def __gt__(self, other):
        if isinstance(other, Column):
            return self.position > other.position
        return NotImplemented

    def __ge__(self, other):
        if isinstance(other, Column):
            return self.position >= other.position
        return NotImplemented

    def __hash__(self):
        return id(self)

    def validate(self, value):
        """Checks ``value`` (a missing required value included); returns it, maybe converted."""
        if value is None and self.required:
            raise ValidationError(f"{self.column_name or self.db_field} - None values are not allowed")
        return value

    def to_python(self, value):
        return value

    def to_database(self, value):
        return value

    @property
    def has_default(self):
        return self.default is not None

    @property
    def is_primary_key(self):
        return self.primary_key

    @property
    def can_delete(self):
        return not self.primary_key

    def get_default(self):
        if self.has_default:
            return self.default() if callable(self.default) else self.default
        return None

    def get_column_def(self):
        """The column's definition in CREATE TABLE."""
        static = " static" if self.static else ""
        return f"{self.cql} {self.db_type}{static}"

    def cql_parameterized_type(self):
        return self.db_type

    def set_column_name(self, name):
        self.column_name = name

    @property
    def db_field_name(self):
        return self.db_field if self.db_field is not None else self.column_name

    @property
    def db_index_name(self):
        return f"index_{self.db_field_name}"

    @property
    def has_index(self):
        return self.index or self.custom_index

    @property
    def cql(self):
        return self.get_cql()

    def get_cql(self):
        return f'"{self.db_field_name}"'

    def _val_is_null(self, val):
        return val is None

    @property
    def sub_types(self):
        return []

    @property
    def cql_type(self):
        return _cql_type_of(self.db_type)


def _cql_type_of(name):
    """The driver's type class of a simple CQL type name (None for others)."""
    return cqltypes._cqltypes.get(name) if name else None


class Blob(Column):
    """``blob``: bytes (a str is encoded as UTF-8... refused: bytes or bytearray only)."""

    db_type = "blob"

    def to_database(self, value):
        if value is not None and not isinstance(value, (bytes, bytearray)):
            raise ValidationError(f"{self.column_name} {type(value)} is not a valid blob")
        return bytearray(value) if value is not None else None

    def validate(self, value):
        value = super().validate(value)
        if value is not None and not isinstance(value, (bytes, bytearray)):
            raise ValidationError(f"{self.column_name} {type(value)} is not a valid blob")
        return value

    def to_python(self, value):
        return value


Bytes = Blob


class Inet(Column):
    """``inet``: an IP address as a string."""

    db_type = "inet"


class Text(Column):
    """``text``: a str, with optional ``min_length`` and ``max_length``."""

    db_type = "text"

    def __init__(self, min_length=None, max_length=None, **kwargs):
        self.min_length = min_length if min_length is not None else (1 if kwargs.get("required", False) else None)
        self.max_length = max_length
        if self.min_length is not None and self.min_length < 0:
            raise ValueError("Minimum length is not allowed to be negative.")
        if self.max_length is not None and self.max_length < 0:
            raise ValueError("Maximum length is not allowed to be negative.")
        if self.min_length is not None and self.max_length is not None and self.max_length < self.min_length:
            raise ValueError("Maximum length must be greater or equal to minimum length.")
        super().__init__(**kwargs)

    def validate(self, value):
        value = super().validate(value)
        if not isinstance(value, ((str,), bytearray)) and value is not None:
            raise ValidationError(f"{self.column_name} {type(value)} is not a string")
        if self.max_length is not None and value and len(value) > self.max_length:
            raise ValidationError(f"{self.column_name} is longer than {self.max_length} characters")
        if self.min_length and ((value is None) or len(value) < self.min_length):
            raise ValidationError(f"{self.column_name} is shorter than {self.min_length} characters")
        return value


class Ascii(Text):
    """``ascii``: a str of ASCII characters only."""

    db_type = "ascii"

    def validate(self, value):
        value = super().validate(value)
        if value:
            chars = value.decode("ascii", "replace") if isinstance(value, (bytes, bytearray)) else value
            if any(ord(c) > 127 for c in chars):
                raise ValidationError(f"{self.column_name} is not ASCII: {value!r}")
        return value


class Integer(Column):
    """``int``: a 32-bit signed integer."""

    db_type = "int"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        try:
            return int(val)
        except (TypeError, ValueError):
            raise ValidationError(f"{self.column_name} {value} can't be converted to integral value") from None

    def to_python(self, value):
        return self.validate(value)

    def to_database(self, value):
        return self.validate(value)


class TinyInt(Integer):
    """``tinyint``: an 8-bit signed integer."""

    db_type = "tinyint"


class SmallInt(Integer):
    """``smallint``: a 16-bit signed integer."""

    db_type = "smallint"


class BigInt(Integer):
    """``bigint``: a 64-bit signed integer."""

    db_type = "bigint"


class VarInt(Column):
    """``varint``: an integer of any size."""

    db_type = "varint"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        try:
            return int(val)
        except (TypeError, ValueError):
            raise ValidationError(f"{value} can't be converted to integral value") from None

    def to_python(self, value):
        return self.validate(value)

    def to_database(self, value):
        return self.validate(value)


class CounterValueManager(BaseValueManager):
    def __init__(self, instance, column, value):
        super().__init__(instance, column, value)
        self.value = self.value or 0
        self.previous_value = self.previous_value or 0


class Counter(Integer):
    """``counter``: written as an increment from the value last read."""

    db_type = "counter"
    value_manager = CounterValueManager

    def __init__(self, index=False, db_field=None, required=False):
        super().__init__(
            primary_key=False, partition_key=False, index=index, db_field=db_field, default=0, required=required
        )


class DateTime(Column):
    """``timestamp``: a datetime (naive UTC; an aware one is converted to UTC)."""

    db_type = "timestamp"
    truncate_microseconds = False

    def to_python(self, value):
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            if DateTime.truncate_microseconds:
                us = value.microsecond
                return value.replace(microsecond=us - us % 1000)
            return value
        if isinstance(value, datetime.date):
            return datetime.datetime(*(value.timetuple()[:6]))
        return datetime.datetime.fromtimestamp(value, datetime.UTC).replace(tzinfo=None)

    def to_database(self, value):
        value = super().to_database(value)
        if value is None:
            return None
        if not isinstance(value, datetime.datetime):
            if isinstance(value, datetime.date):
                value = datetime.datetime(value.year, value.month, value.day)
            else:
                raise ValidationError(f"{self.column_name} '{value}' is not a datetime object")
        epoch = datetime.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        offset = epoch.tzinfo.utcoffset(epoch).total_seconds() if epoch.tzinfo else 0
        return int(((value - epoch).total_seconds() - offset) * 1000)


class Date(Column):
    """``date``: a ``datetime.date`` or ``turbocql.util.Date``."""

    db_type = "date"

    def to_database(self, value):
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            value = value.date()
        return value if isinstance(value, util.Date) else util.Date(value)

    def validate(self, value):
        value = super().validate(value)
        if isinstance(value, datetime.datetime):
            return value.date()
        return value

    def to_python(self, value):
        if value is None:
            return None
        if isinstance(value, util.Date):
            return value
        if isinstance(value, datetime.datetime):
            value = value.date()
        return util.Date(value)


class Time(Column):
    """``time``: a ``datetime.time`` or ``turbocql.util.Time``."""

    db_type = "time"

    def to_database(self, value):
        value = super().to_database(value)
        if value is None:
            return None
        return value if isinstance(value, util.Time) else util.Time(value)

    def to_python(self, value):
        value = super().to_database(value)
        if value is None:
            return None
        return value if isinstance(value, util.Time) else util.Time(value)


class Duration(Column):
    """``duration``: a ``turbocql.util.Duration``."""

    db_type = "duration"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        if not isinstance(val, util.Duration):
            raise TypeError(f"{self.column_name} {value} is not a valid Duration.")
        return val


class UUID(Column):
    """``uuid``: a ``uuid.UUID`` (or its str form)."""

    db_type = "uuid"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        if isinstance(val, _uuid.UUID):
            return val
        if isinstance(val, str):
            try:
                return _uuid.UUID(val)
            except ValueError:
                pass
        raise ValidationError(f"{self.column_name} {value} is not a valid uuid")

    def to_python(self, value):
        return self.validate(value)

    def to_database(self, value):
        return self.validate(value)


class TimeUUID(UUID):
    """``timeuuid``: a version 1 UUID."""

    db_type = "timeuuid"


class Boolean(Column):
    """``boolean``."""

    db_type = "boolean"

    def validate(self, value):
        value = super().validate(value)
        if value is not None:
            value = bool(value)
        return value

    def to_python(self, value):
        return self.validate(value)


class BaseFloat(Column):
    def validate(self, value):
        value = super().validate(value)
        if value is None:
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValidationError(f"{self.column_name} {value} is not a valid float") from None

    def to_python(self, value):
        return self.validate(value)

    def to_database(self, value):
        return self.validate(value)


class Float(BaseFloat):
    """``float``: a 32-bit floating point number."""

    db_type = "float"


class Double(BaseFloat):
    """``double``: a 64-bit floating point number."""

    db_type = "double"


class Decimal(Column):
    """``decimal``: a ``decimal.Decimal``."""

    db_type = "decimal"

    def validate(self, value):
        val = super().validate(value)
        if val is None:
            return None
        try:
            return decimal.Decimal(val) if not isinstance(val, float) else decimal.Decimal(repr(val))
        except (TypeError, ValueError, decimal.InvalidOperation):
            raise ValidationError(f"{self.column_name} '{val}' can't be coerced to decimal") from None

    def to_python(self, value):
        return self.validate(value)

    def to_database(self, value):
        return self.validate(value)


class BaseCollectionColumn(Column):
    """A column of other columns' values (list, set, map, tuple)."""

    def __init__(self, types, **kwargs):
        instances = []
        for t in types:
            inst = t() if isinstance(t, type) else t
            if not isinstance(inst, Column):
                raise ValidationError(f"{t} is not a column class")
            if isinstance(inst, Counter):
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
    pass


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
