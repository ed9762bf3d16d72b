"""The CQL types of single values (re-exported by ``turbocql.cqltypes``): ``blob``,
``decimal``, ``uuid``, ``boolean``, the integers and floats, ``inet``, ``counter``,
``timestamp``, ``timeuuid``, ``date``, ``time``, ``duration`` and the text types, each
converting its values as the protocol lays them out.
"""

from __future__ import annotations

import calendar
import datetime
import ipaddress
import socket
import time
import uuid
from decimal import Decimal

from turbocql import util
from turbocql._cqltypes_base import CassandraType, cql_timestamp_formats
from turbocql.marshal import (
    double_pack,
    double_unpack,
    float_pack,
    float_unpack,
    int8_pack,
    int8_unpack,
    int16_pack,
    int16_unpack,
    int32_pack,
    int32_unpack,
    int64_pack,
    int64_unpack,
    uint32_pack,
    uint32_unpack,
    varint_pack,
    varint_unpack,
    vints_pack,
    vints_unpack,
)


class BytesType(CassandraType):
    typename = "blob"
    empty_binary_ok = True

    @staticmethod
    def serialize(val, protocol_version):
        return bytes(val)


class DecimalType(CassandraType):
    typename = "decimal"

    @staticmethod
    def deserialize(byts, protocol_version):
        scale = int32_unpack(byts[:4])
        unscaled = varint_unpack(byts[4:])
        return Decimal("%de%d" % (unscaled, -scale))

    @staticmethod
    def serialize(dec, protocol_version):
        try:
            sign, digits, exponent = dec.as_tuple()
        except AttributeError:
            try:
                sign, digits, exponent = Decimal(dec).as_tuple()
            except Exception as exc:
                raise TypeError("Invalid type for Decimal value: %r" % (dec,)) from exc
        unscaled = int("".join(str(d) for d in digits))
        if sign:
            unscaled = -unscaled
        return int32_pack(-exponent) + varint_pack(unscaled)


class UUIDType(CassandraType):
    typename = "uuid"

    @staticmethod
    def deserialize(byts, protocol_version):
        return uuid.UUID(bytes=byts)

    @staticmethod
    def serialize(uuid_, protocol_version):
        try:
            return uuid_.bytes
        except AttributeError as exc:
            raise TypeError("Got a non-UUID object for a UUID value") from exc

    @classmethod
    def serial_size(cls):
        return 16


class BooleanType(CassandraType):
    typename = "boolean"

    @staticmethod
    def deserialize(byts, protocol_version):
        return bool(int8_unpack(byts))

    @staticmethod
    def serialize(truth, protocol_version):
        return int8_pack(bool(truth))

    @classmethod
    def serial_size(cls):
        return 1


class ByteType(CassandraType):
    typename = "tinyint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int8_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int8_pack(byts)


class AsciiType(CassandraType):
    typename = "ascii"
    empty_binary_ok = True

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts.decode("ascii")

    @staticmethod
    def serialize(var, protocol_version):
        try:
            return var.encode("ascii")
        except UnicodeDecodeError:
            return var


class FloatType(CassandraType):
    typename = "float"

    @staticmethod
    def deserialize(byts, protocol_version):
        return float_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return float_pack(byts)

    @classmethod
    def serial_size(cls):
        return 4


class DoubleType(CassandraType):
    typename = "double"

    @staticmethod
    def deserialize(byts, protocol_version):
        return double_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return double_pack(byts)

    @classmethod
    def serial_size(cls):
        return 8


class LongType(CassandraType):
    typename = "bigint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int64_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int64_pack(byts)

    @classmethod
    def serial_size(cls):
        return 8


class Int32Type(CassandraType):
    typename = "int"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int32_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int32_pack(byts)

    @classmethod
    def serial_size(cls):
        return 4


class IntegerType(CassandraType):
    typename = "varint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return varint_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return varint_pack(byts)


class InetAddressType(CassandraType):
    typename = "inet"

    @staticmethod
    def deserialize(byts, protocol_version):
        if len(byts) == 16:
            return socket.inet_ntop(socket.AF_INET6, byts)
        return socket.inet_ntoa(byts)

    @staticmethod
    def serialize(addr, protocol_version):
        if isinstance(addr, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
            return addr.packed
        try:
            if ":" in addr:
                return socket.inet_pton(socket.AF_INET6, addr)
            return socket.inet_aton(addr)
        except (OSError, TypeError) as exc:
            raise ValueError("can't interpret %r as an inet address" % (addr,)) from exc


class CounterColumnType(LongType):
    typename = "counter"


class DateType(CassandraType):
    typename = "timestamp"

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

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.datetime_from_timestamp(int64_unpack(byts) / 1000.0)

    @staticmethod
    def serialize(v, protocol_version):
        if isinstance(v, datetime.datetime):
            ms = calendar.timegm(v.utctimetuple()) * 1000 + v.microsecond // 1000
        elif isinstance(v, datetime.date):
            ms = calendar.timegm(v.timetuple()) * 1000
        elif isinstance(v, (int, float)):
            ms = v
        else:
            raise TypeError("DateType arguments must be a datetime, date, or timestamp")
        return int64_pack(int(ms))

    @classmethod
    def serial_size(cls):
        return 8


class TimestampType(DateType):
    pass


class TimeUUIDType(DateType):
    typename = "timeuuid"

    def my_timestamp(self):
        return util.unix_time_from_uuid1(self.val)

    @staticmethod
    def deserialize(byts, protocol_version):
        return uuid.UUID(bytes=byts)

    @staticmethod
    def serialize(timeuuid, protocol_version):
        try:
            return timeuuid.bytes
        except AttributeError as exc:
            raise TypeError("Got a non-UUID object for a UUID value") from exc

    @classmethod
    def serial_size(cls):
        return 16


_DATE_EPOCH_DAYS = 2**31


class SimpleDateType(CassandraType):
    typename = "date"

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.Date(uint32_unpack(byts) - _DATE_EPOCH_DAYS)

    @staticmethod
    def serialize(val, protocol_version):
        days = val.days_from_epoch if isinstance(val, util.Date) else util.Date(val).days_from_epoch
        return uint32_pack(days + _DATE_EPOCH_DAYS)


class ShortType(CassandraType):
    typename = "smallint"

    @staticmethod
    def deserialize(byts, protocol_version):
        return int16_unpack(byts)

    @staticmethod
    def serialize(byts, protocol_version):
        return int16_pack(byts)


class TimeType(CassandraType):
    typename = "time"

    @staticmethod
    def deserialize(byts, protocol_version):
        return util.Time(int64_unpack(byts))

    @staticmethod
    def serialize(val, protocol_version):
        return int64_pack((val if isinstance(val, util.Time) else util.Time(val)).nanosecond_time)


class DurationType(CassandraType):
    typename = "duration"

    @staticmethod
    def deserialize(byts, protocol_version):
        months, days, nanoseconds = vints_unpack(byts)
        return util.Duration(months, days, nanoseconds)

    @staticmethod
    def serialize(duration, protocol_version):
        try:
            months, days, nanoseconds = duration.months, duration.days, duration.nanoseconds
        except AttributeError as exc:
            raise TypeError("DurationType arguments must be a Duration.") from exc
        return vints_pack([months, days, nanoseconds])


class UTF8Type(CassandraType):
    typename = "text"
    empty_binary_ok = True

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts.decode("utf8")

    @staticmethod
    def serialize(ustr, protocol_version):
        try:
            return ustr.encode("utf-8")
        except UnicodeDecodeError:
            return ustr


class VarcharType(UTF8Type):
    typename = "varchar"
