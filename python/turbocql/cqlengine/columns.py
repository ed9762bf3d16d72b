"""Column types of cqlengine models: each maps a Python value to a CQL type.

A column validates a value (``validate``), turns what the database returned into Python
(``to_python``) and a Python value into what is sent (``to_database``). The base class and
the value managers are in ``_column_base``, the collection and UDT columns in
``_containers``; this module holds the scalar types and every classic name.
"""

import datetime
import decimal
import uuid as _uuid

from turbocql import util
from turbocql._util.homes import publish as _publish
from turbocql.cqlengine import ValidationError
from turbocql.cqlengine._column_base import BaseValueManager, Column, _cql_type_of  # noqa: F401
from turbocql.cqlengine._containers import (  # noqa: F401
    UDT_VALUE_CLASSES,
    BaseCollectionColumn,
    BaseContainerColumn,
    List,
    Map,
    Set,
    Tuple,
    UDTValueManager,
    UserDefinedType,
    _PartitionKeysToken,
    encode_udt_value,
    resolve_udts,
)


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


# This module is the home of the classic names of cqlengine.columns that live in
# turbocql.cqlengine._column_base and _containers (reprs, docs and pickles name
# turbocql.cqlengine.columns), and of encode_udt_value (turbocql's, documented here).
_publish(
    __name__,
    [
        "BaseCollectionColumn",
        "BaseContainerColumn",
        "BaseValueManager",
        "Column",
        "List",
        "Map",
        "Set",
        "Tuple",
        "UDTValueManager",
        "UserDefinedType",
        "encode_udt_value",
        "resolve_udts",
    ],
)
