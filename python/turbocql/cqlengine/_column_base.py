"""The base of every column type (``Column``) and the value manager a model instance keeps
per column: its value, and the value last loaded or saved, so that only changed columns
are written."""

import datetime
import decimal
import ipaddress
import itertools
import uuid
from copy import copy as _copy

from turbocql import cqltypes
from turbocql.cqlengine import ValidationError

_counter = itertools.count()

# Values whose saved copy can be the value itself: nothing changes them in place.
IMMUTABLE = frozenset(
    {type(None), str, bytes, int, float, bool, uuid.UUID, decimal.Decimal}
    | {datetime.datetime, datetime.date, datetime.time, datetime.timedelta}
    | {ipaddress.IPv4Address, ipaddress.IPv6Address}
)


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
        if getattr(self.column, "_container", False):
            default = self.column.get_default()
            if self.column._val_is_null(default):
                return not self.column._val_is_null(self.value) and self.value != self.previous_value
            elif self.previous_value is None:
                return self.value != default
            return self.value != self.previous_value
        return False

    def reset_previous_value(self):
        value = self.value
        self.previous_value = value if type(value) in IMMUTABLE else _copy(value)

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
