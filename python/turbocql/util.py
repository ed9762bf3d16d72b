"""Value types the classic driver uses for CQL values Python lacks (``cassandra.util``):
:class:`Date`, :class:`Time`, :class:`Duration`, :class:`SortedSet` (set columns) and
:class:`OrderedMap` (map columns); the time-UUID and timestamp helpers
(:func:`uuid_from_time`, :func:`unix_time_from_uuid1`, :func:`ms_timestamp_from_datetime`,
...), the geometric values (:class:`Point`, :class:`LineString`, :class:`Polygon`),
:class:`DateRange` and :class:`Version`.

The classic module's names, gathered from the modules of ``turbocql._util`` that hold them
by concern: the values in ``values``, the collections in ``containers``, the time helpers in
``times``, the geometric values in ``geo``. :class:`Version` (a server's version, not a CQL
value) is here.
"""

import re
import socket
from collections import OrderedDict  # noqa: F401 - classic code imports it from here
from collections.abc import ItemsView, KeysView, Mapping  # noqa: F401 - names this module had

from turbocql import DriverException  # noqa: F401 - a classic name of cassandra.util
from turbocql._util.containers import (  # noqa: F401 - private names: former callers and pickles
    _MAP_IMAGE,
    _OBJECT_IMAGE,
    OrderedMap,
    OrderedMapSerializedKey,
    SortedSet,
    _hashable,
    _key_image,
    _MapImage,
    _rebuild,
    _same_items_in_order,
    _unhashable_classes,
    _unhashable_keys,
    _UnhashableItemsView,
    _UnhashableKeysMixin,
    _UnhashableKeysView,
    sortedset,
)
from turbocql._util.geo import (  # noqa: F401
    _WKT_RE,
    Distance,
    LineString,
    Point,
    Polygon,
    _LinearRing,
    _wkt_coords,
    _wkt_number,
    _wkt_parse,
    _wkt_points,
    list_contents_to_tuple,
)
from turbocql._util.homes import publish as _publish
from turbocql._util.times import (  # noqa: F401
    _MAX_CLOCK_SEQ,
    _MAX_NODE,
    _MIN_CLOCK_SEQ,
    _MIN_NODE,
    _UUID_EPOCH_OFFSET,
    HIGHEST_TIME_UUID,
    LOWEST_TIME_UUID,
    datetime_from_timestamp,
    datetime_from_uuid1,
    max_uuid_from_time,
    min_uuid_from_time,
    ms_timestamp_from_datetime,
    unix_time_from_uuid1,
    utc_datetime_from_ms_timestamp,
    uuid_from_time,
)
from turbocql._util.values import (  # noqa: F401
    _BOUND_FORMATS,
    _EPOCH_ORDINAL,
    _NS_PER_DAY,
    OPEN_BOUND,
    Date,
    DateRange,
    DateRangeBound,
    DateRangePrecision,
    Duration,
    Time,
)

inet_pton = socket.inet_pton
inet_ntop = socket.inet_ntop


_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-(.+))?$")


class Version:
    """A server version such as ``4.0.11``, ``3.11.4.1`` or ``5.0-beta1``, ordered as
    versions are: major, minor, patch, build, then a pre-release before the release."""

    def __init__(self, version):
        self._version = version
        m = _VERSION_RE.match(version)
        if m is None:
            raise ValueError("Version string %s did not match expected format" % (version,))
        self.major = int(m.group(1))
        self.minor = int(m.group(2))
        self.patch = int(m.group(3) or 0)
        self.build = int(m.group(4) or 0)
        self.prerelease = m.group(5) or ""

    def _key(self):
        return (self.major, self.minor, self.patch, self.build)

    def __hash__(self):
        return hash((self._key(), self.prerelease))

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key() and self.prerelease == other.prerelease

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        if self._key() != other._key():
            return self._key() < other._key()
        if self.prerelease and other.prerelease:
            return self.prerelease < other.prerelease
        return bool(self.prerelease) and not other.prerelease

    def __gt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return other < self

    def __le__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return not other < self

    def __ge__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return not self < other

    def __str__(self):
        return self._version

    def __repr__(self):
        parts = [str(self.major), str(self.minor), str(self.patch)]
        if self.build:
            parts.append(str(self.build))
        if self.prerelease:
            parts.append(self.prerelease)
        return "Version(%s)" % ", ".join(parts)


# This module is the home of the classes and functions of cassandra.util that live in
# turbocql._util: pickles name turbocql.util whatever module holds the code, so they load
# across turbocql versions, and reprs and docs name the public module. _rebuild and
# _LinearRing are named by pickles of OrderedMap and Polygon.
_publish(
    __name__,
    [
        "Date",
        "DateRange",
        "DateRangeBound",
        "DateRangePrecision",
        "Distance",
        "Duration",
        "LineString",
        "OrderedMap",
        "OrderedMapSerializedKey",
        "Point",
        "Polygon",
        "SortedSet",
        "Time",
        "_LinearRing",
        "_rebuild",
        "datetime_from_timestamp",
        "datetime_from_uuid1",
        "list_contents_to_tuple",
        "max_uuid_from_time",
        "min_uuid_from_time",
        "ms_timestamp_from_datetime",
        "unix_time_from_uuid1",
        "utc_datetime_from_ms_timestamp",
        "uuid_from_time",
    ],
)
