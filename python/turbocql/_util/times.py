"""Timestamp and time-UUID helpers (re-exported by ``turbocql.util``): naive UTC
datetimes from seconds or milliseconds since the epoch and back, version 1 UUIDs from a
time (:func:`uuid_from_time`, :func:`min_uuid_from_time`, :func:`max_uuid_from_time`) and
their time (:func:`unix_time_from_uuid1`, :func:`datetime_from_uuid1`).
"""

import calendar
import datetime
import random
import uuid


def datetime_from_timestamp(timestamp):
    """A naive UTC datetime from seconds since the epoch (what the classic driver returns)."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=timestamp)


def utc_datetime_from_ms_timestamp(timestamp):
    """A naive UTC datetime from milliseconds since the epoch (OverflowError out of range)."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=timestamp)


def ms_timestamp_from_datetime(dt):
    """Milliseconds since the epoch of a naive (UTC) datetime, rounded. An aware datetime
    is taken at its UTC time (the classic driver raises TypeError for one)."""
    epoch = datetime.datetime(1970, 1, 1) if dt.tzinfo is None else datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    return int(round((dt - epoch).total_seconds() * 1e3))


# 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
_UUID_EPOCH_OFFSET = 0x01B21DD213814000


def unix_time_from_uuid1(uuid_arg):
    """Seconds since the epoch (a float, like :func:`time.time`) of a version 1 UUID."""
    return (uuid_arg.time - _UUID_EPOCH_OFFSET) / 1e7


def datetime_from_uuid1(uuid_arg):
    """The naive UTC datetime of a version 1 UUID."""
    return datetime_from_timestamp(unix_time_from_uuid1(uuid_arg))


def uuid_from_time(time_arg, node=None, clock_seq=None):
    """A version 1 UUID for ``time_arg`` (a datetime, naive meaning UTC, or seconds since
    the epoch), with the given 48-bit ``node`` and 14-bit ``clock_seq`` (random if None)."""
    if hasattr(time_arg, "utctimetuple"):
        seconds = calendar.timegm(time_arg.utctimetuple()) + time_arg.microsecond / 1e6
    else:
        seconds = time_arg
    timestamp = int(seconds * 1e9) // 100 + _UUID_EPOCH_OFFSET
    if clock_seq is None:
        clock_seq = random.getrandbits(14)
    elif clock_seq > 0x3FFF:
        raise ValueError("clock_seq is out of range (need a 14-bit value)")
    if node is None:
        node = random.getrandbits(48)
    fields = (
        timestamp & 0xFFFFFFFF,
        (timestamp >> 32) & 0xFFFF,
        (timestamp >> 48) & 0x0FFF,
        (clock_seq >> 8) & 0x3F,
        clock_seq & 0xFF,
        node,
    )
    return uuid.UUID(fields=fields, version=1)


# The node and clock sequence that sort first and last among time UUIDs of one instant,
# as Cassandra compares them (bytewise signed).
_MIN_NODE, _MIN_CLOCK_SEQ = 0x808080808080, 0x80
_MAX_NODE, _MAX_CLOCK_SEQ = 0x7F7F7F7F7F7F, 0x3F7F

LOWEST_TIME_UUID = uuid.UUID("00000000-0000-1000-8080-808080808080")
"""The time UUID Cassandra sorts first."""

HIGHEST_TIME_UUID = uuid.UUID("ffffffff-ffff-1fff-bf7f-7f7f7f7f7f7f")
"""The time UUID Cassandra sorts last."""


def min_uuid_from_time(timestamp):
    """The time UUID of ``timestamp`` that Cassandra sorts first (for range queries)."""
    return uuid_from_time(timestamp, _MIN_NODE, _MIN_CLOCK_SEQ)


def max_uuid_from_time(timestamp):
    """The time UUID of ``timestamp`` that Cassandra sorts last (for range queries)."""
    return uuid_from_time(timestamp, _MAX_NODE, _MAX_CLOCK_SEQ)
