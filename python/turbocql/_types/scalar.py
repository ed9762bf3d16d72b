"""The CQL types of single values (re-exported by ``turbocql.cqltypes``): ``blob``,
``decimal``, ``uuid``, ``boolean``, the integers and floats, ``inet``, ``counter``,
``timestamp``, ``timeuuid``, ``date``, ``time``, ``duration`` and the text types.

Each converts its values through the engine's codec, under its engine type name
(``_engine.encode`` / ``_engine.decode``). What stays here is how the classic driver reads
the values it is given where the engine reads them otherwise (an int ``date`` is the raw
value, a float ``decimal`` exact, a sub-millisecond ``timestamp`` as the classic float
arithmetic rounds it), the classic exception classes of values and bytes the engine
refuses, and a few one-line fallbacks for values the engine refuses and the classic driver
packs, each marked "engine gap".
"""

from __future__ import annotations

import calendar
import datetime
import math
import socket
import struct
import time
import uuid
from decimal import Decimal
from typing import ClassVar

from turbocql import _engine, util
from turbocql._types.base import EMPTY, CassandraType, _decode, _encode, cql_timestamp_formats
from turbocql.marshal import int64_pack, int64_unpack, vints_pack


class _Native(CassandraType):
    """A single-value type the engine converts as ``_engine_type``.

    ``_refused_as``: the classic exception class of a value the engine refuses (struct.error
    where the classic driver packs with ``struct``), None for the engine's own;
    ``_size``: the size of every value (the classic driver unpacks it with ``struct``, so
    other sizes raise struct.error)."""

    _refused_as: ClassVar[type[Exception] | None] = None
    _size: ClassVar[int | None] = None

    @classmethod
    def serialize(cls, val, protocol_version):
        if cls._walks_values:
            val = cls._to_engine(val)  # its errors are the classic driver's
        try:
            return _encode(cls._engine_type, val)
        except (TypeError, ValueError) as exc:
            return cls._refused(val, exc)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        try:
            return _decode(cls._engine_type, byts)
        except ValueError as exc:
            if cls._size is not None and len(byts) != cls._size:
                raise struct.error("unpack requires a buffer of %d bytes" % cls._size) from exc
            raise

    @classmethod
    def _refused(cls, val, exc):
        """The bytes of a value the engine refused (an engine gap), else the classic error."""
        if cls._refused_as is None:
            raise exc
        raise cls._refused_as(str(exc)) from exc


class BytesType(_Native):
    typename = "blob"
    _engine_type = "blob"
    empty_binary_ok = True

    @classmethod
    def _refused(cls, val, exc):
        return _encode("blob", bytes(val))  # what bytes() makes of it, or its TypeError, as classic


class DecimalType(_Native):
    typename = "decimal"
    _engine_type = "decimal"
    _walks_values = True
    _engine_misreads = (b"\x00\x00\x00\x04",)  # engine gap: a scale alone read as 0, not an error

    @classmethod
    def _to_engine(cls, val):
        # The classic driver takes anything Decimal() takes, a float as its exact value.
        if isinstance(val, Decimal):
            return val
        try:
            return Decimal(val)
        except Exception as exc:
            raise TypeError("Invalid type for Decimal value: %r" % (val,)) from exc

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if len(byts) <= 4:  # the engine reads no unscaled value as 0
            if len(byts) < 4:
                raise struct.error("unpack requires a buffer of 4 bytes")
            raise ValueError("invalid literal for int() with base 16: b''")
        return _decode("decimal", byts)

    @classmethod
    def _refused(cls, val, exc):
        # The classic errors: NaN's digits make no int, Infinity's exponent no number, an
        # exponent beyond 32 bits no scale.
        if val.is_nan():
            raise ValueError("invalid literal for int() with base 10: ''") from exc
        if val.is_infinite():
            raise TypeError("bad operand type for unary -: 'str'") from exc
        raise struct.error(str(exc)) from exc


def _uuid_refused(val, exc):
    # The classic driver takes any object with a uuid's bytes.
    try:
        data = val.bytes
    except AttributeError:
        raise TypeError("Got a non-UUID object for a UUID value") from exc
    return _encode("uuid", uuid.UUID(bytes=bytes(data)))


class UUIDType(_Native):
    typename = "uuid"
    _engine_type = "uuid"

    @classmethod
    def _refused(cls, val, exc):
        return _uuid_refused(val, exc)

    @classmethod
    def serial_size(cls):
        return 16


class BooleanType(_Native):
    typename = "boolean"
    _engine_type = "boolean"
    _refused_as = struct.error
    _size = 1

    @classmethod
    def _refused(cls, val, exc):
        # The classic driver packs any int the byte holds (int8_pack(truth)): 2 is b"\x02".
        try:
            return _encode("tinyint", val)
        except (TypeError, ValueError) as exc2:
            raise struct.error(str(exc2)) from exc

    @classmethod
    def serial_size(cls):
        return 1


class ByteType(_Native):
    typename = "tinyint"
    _engine_type = "tinyint"
    _refused_as = struct.error
    _size = 1


def _text_refused(val, exc, encoding):
    # As the classic driver's val.encode(encoding): its UnicodeEncodeError, an object with
    # an encode() of its own, or AttributeError for any other.
    if not hasattr(val, "encode"):
        raise AttributeError("'%s' object has no attribute 'encode'" % type(val).__name__) from exc
    return val.encode(encoding)


class AsciiType(_Native):
    typename = "ascii"
    _engine_type = "ascii"
    empty_binary_ok = True

    @classmethod
    def _refused(cls, val, exc):
        return _text_refused(val, exc, "ascii")

    @classmethod
    def deserialize(cls, byts, protocol_version):
        byts = bytes(byts)
        if not byts.isascii():
            # Engine gap: the engine reads ascii as UTF-8; the classic driver's error.
            byts.decode("ascii")
        return _decode("ascii", byts)


class FloatType(_Native):
    typename = "float"
    _engine_type = "float"
    _refused_as = struct.error
    _size = 4

    @classmethod
    def _refused(cls, val, exc):
        if isinstance(exc, ValueError):
            # Engine gap: it refuses beyond the largest float32, where Python's struct rounds
            # what lies within half a step of it down to it.
            if abs(val) < _F32_ROUNDS_DOWN:
                return _encode("float", math.copysign(_F32_MAX, val))
            if isinstance(val, float):
                raise OverflowError("float too large to pack with f format") from exc
        raise struct.error(str(exc)) from exc

    @classmethod
    def serial_size(cls):
        return 4


_F32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]
_F32_ROUNDS_DOWN = _F32_MAX + 2.0**103  # half the last step below float32's infinity


class DoubleType(_Native):
    typename = "double"
    _engine_type = "double"
    _refused_as = struct.error
    _size = 8

    @classmethod
    def serial_size(cls):
        return 8


class LongType(_Native):
    typename = "bigint"
    _engine_type = "bigint"
    _refused_as = struct.error
    _size = 8

    @classmethod
    def serial_size(cls):
        return 8


class Int32Type(_Native):
    typename = "int"
    _engine_type = "int"
    _refused_as = struct.error
    _size = 4

    @classmethod
    def serial_size(cls):
        return 4


class IntegerType(_Native):
    typename = "varint"
    _engine_type = "varint"
    _engine_misreads = (b"\x00\x00\x00\x00",)  # engine gap: an empty element read as 0, not None

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if not byts:
            raise ValueError("invalid literal for int() with base 16: b''")  # the engine reads 0
        return _decode("varint", byts)


class InetAddressType(_Native):
    typename = "inet"
    _engine_type = "inet"

    @classmethod
    def _refused(cls, addr, exc):
        # Engine gap: the classic driver reads addresses with inet_aton / inet_pton, which
        # also take IPv4's short forms ("127.1"); the engine takes the dotted quad only.
        try:
            if ":" in addr:
                return socket.inet_pton(socket.AF_INET6, addr)
            return socket.inet_aton(addr)
        except Exception:
            raise ValueError("can't interpret %r as an inet address" % (addr,)) from exc

    @classmethod
    def deserialize(cls, byts, protocol_version):
        if len(byts) not in (4, 16):
            raise OSError("packed IP wrong length for inet_ntoa")
        return _decode("inet", byts)


class CounterColumnType(LongType):
    typename = "counter"
    _engine_type = "counter"


_EPOCH = datetime.datetime(1970, 1, 1)
_ONE_MS = datetime.timedelta(milliseconds=1)
# Within 2**33 seconds of the epoch (1697 to 2242) the classic driver's float arithmetic
# gives every millisecond exactly, as the engine does; beyond, it is off by microseconds.
_EXACT_MS = 2**33 * 1000


def _classic_datetime(ms):
    """The datetime the classic driver decodes ``ms`` to (OverflowError beyond datetime)."""
    return util.datetime_from_timestamp(ms / 1000.0)


class DateType(_Native):
    typename = "timestamp"
    _engine_type = "timestamp"
    _walks_values = True
    _walks_decoded = True

    @staticmethod
    def interpret_datestring(val):
        """Milliseconds since the epoch of a date string in one of
        :data:`cql_timestamp_formats`, with an optional ``+HHMM`` / ``-HHMM`` offset
        (local time without one)."""
        offset = None
        if len(val) > 5 and val[-5] in ("+", "-"):
            offset = (int(val[-4:-2]) * 3600 + int(val[-2:]) * 60) * (1 if val[-5] == "+" else -1)
            val = val[:-5]
        for fmt in cql_timestamp_formats:
            try:
                parsed = datetime.datetime.strptime(val, fmt)
            except ValueError:
                continue
            if offset is None:
                return time.mktime(parsed.timetuple()) * 1e3
            return (calendar.timegm(parsed.utctimetuple()) - offset) * 1e3
        raise ValueError("can't interpret %r as a date" % (val,))

    @classmethod
    def _to_engine(cls, v):
        # The classic driver's milliseconds: seconds * 1e3 + microseconds / 1e3 as a float,
        # truncated; the engine's are the same but for sub-millisecond microseconds (it
        # floors them) and for NaN and infinite floats (it saturates them).
        if isinstance(v, datetime.datetime):
            if v.microsecond % 1000 == 0:
                return v
            return int(calendar.timegm(v.utctimetuple()) * 1e3 + v.microsecond / 1e3)
        if isinstance(v, datetime.date) or type(v) is int:
            return v
        if type(v) is float:
            return int(v)
        try:
            return int(calendar.timegm(v.utctimetuple()) * 1e3 + getattr(v, "microsecond", 0) / 1e3)
        except AttributeError:
            pass
        try:
            return int(calendar.timegm(v.timetuple()) * 1e3)
        except AttributeError:
            raise TypeError("DateType arguments must be a datetime, date, or timestamp") from None

    @classmethod
    def _refused(cls, val, exc):
        if type(val) is int:
            raise struct.error(str(exc)) from exc  # beyond 64 bits
        raise exc

    @classmethod
    def deserialize(cls, byts, protocol_version):
        ms = int64_unpack(byts)
        if -_EXACT_MS < ms < _EXACT_MS:
            return _decode("timestamp", byts)
        # Beyond datetime, the classic OverflowError (the engine asks this method for the
        # timestamps of rows it cannot make a datetime of).
        return _classic_datetime(ms)

    @classmethod
    def _from_engine(cls, val, protocol_version):
        if not isinstance(val, datetime.datetime) or -_EXACT_MS < (ms := (val - _EPOCH) // _ONE_MS) < _EXACT_MS:
            return val
        return _classic_datetime(ms)

    @classmethod
    def serial_size(cls):
        return 8


class TimestampType(DateType):
    pass


class TimeUUIDType(DateType):
    typename = "timeuuid"
    # The engine's "timeuuid" takes version 1 only; the classic driver packs any uuid.
    _engine_type = "uuid"
    _walks_values = False
    _walks_decoded = False
    deserialize = _Native.__dict__["deserialize"]

    def my_timestamp(self):
        return util.unix_time_from_uuid1(self.val)

    @classmethod
    def _refused(cls, val, exc):
        return _uuid_refused(val, exc)

    @classmethod
    def serial_size(cls):
        return 16


_DATE_EPOCH_DAYS = 2**31


class SimpleDateType(_Native):
    typename = "date"
    _engine_type = "date"
    _walks_values = True
    _refused_as = struct.error
    _size = 4

    @classmethod
    def _to_engine(cls, val):
        # Days from the epoch, as the engine takes an int; the classic driver takes an int as
        # the raw value (the epoch at 2**31), anything else through util.Date.
        try:
            return val.days_from_epoch
        except AttributeError:
            pass
        if isinstance(val, int):
            if not 0 <= val < 2**32:
                raise struct.error("'I' format requires 0 <= number <= 4294967295")
            return val - _DATE_EPOCH_DAYS
        return util.Date(val).days_from_epoch


class ShortType(_Native):
    typename = "smallint"
    _engine_type = "smallint"
    _refused_as = struct.error
    _size = 2


class TimeType(_Native):
    typename = "time"
    _engine_type = "time"
    _size = 8

    @classmethod
    def _refused(cls, val, exc):
        try:
            nano = val.nanosecond_time
        except AttributeError:
            nano = util.Time(val).nanosecond_time  # a time string, or util.Time's error
        try:
            return _encode("time", nano)
        except ValueError:
            # Engine gap: it refuses a time outside the day, which the classic packs.
            return int64_pack(nano)


class DurationType(_Native):
    typename = "duration"
    _engine_type = "duration"

    @classmethod
    def _refused(cls, duration, exc):
        try:
            fields = (duration.months, duration.days, duration.nanoseconds)
        except AttributeError:
            raise TypeError("DurationType arguments must be a Duration.") from exc
        if isinstance(exc, ValueError) and all(type(f) is int and -(2**63) <= f < 2**63 for f in fields):
            # Engine gap: it refuses months and days beyond 32 bits, which the classic packs.
            return vints_pack(fields)
        raise exc


class UTF8Type(_Native):
    typename = "text"
    _engine_type = "text"
    empty_binary_ok = True

    @classmethod
    def _refused(cls, val, exc):
        return _text_refused(val, exc, "utf-8")

    @classmethod
    def deserialize(cls, byts, protocol_version):
        try:
            return _decode("text", byts)
        except ValueError:
            return bytes(byts).decode("utf8")  # the classic UnicodeDecodeError


class VarcharType(UTF8Type):
    typename = "varchar"


# The engine's codec makes values of these classes: handed over as soon as they exist, so
# that the classes convert through the engine without the rest of the package (see
# src/pyrefs.rs, CodecRefs).
_engine._bootstrap_codec(
    {
        "UUID": uuid.UUID,
        "Decimal": Decimal,
        "Date": util.Date,
        "Time": util.Time,
        "Duration": util.Duration,
        "SortedSet": util.SortedSet,
        "OrderedMap": util.OrderedMap,
        "EMPTY": EMPTY,
        "DateType": DateType,
    }
)
