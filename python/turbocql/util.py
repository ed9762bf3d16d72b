"""Value types the classic driver uses for CQL values Python lacks (``cassandra.util``):
:class:`Date`, :class:`Time`, :class:`Duration`, :class:`SortedSet` (set columns) and
:class:`OrderedMap` (map columns).
"""

import bisect
import datetime
import re

_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_NS_PER_DAY = 86_400 * 1_000_000_000


class Date:
    """A CQL ``date``: days since 1970-01-01, over the type's full range (beyond
    :class:`datetime.date`'s years 1..9999)."""

    __slots__ = ("days_from_epoch",)

    def __init__(self, value):
        if isinstance(value, Date):
            self.days_from_epoch = value.days_from_epoch
        elif isinstance(value, datetime.datetime):
            raise TypeError("Date takes a date, not a datetime")
        elif isinstance(value, datetime.date):
            self.days_from_epoch = value.toordinal() - _EPOCH_ORDINAL
        elif isinstance(value, int) and not isinstance(value, bool):
            self.days_from_epoch = value
        elif isinstance(value, str):
            self.days_from_epoch = datetime.date.fromisoformat(value).toordinal() - _EPOCH_ORDINAL
        else:
            raise TypeError("Date takes a date, an ISO date string or int days, not %s" % type(value).__name__)

    def date(self):
        """The value as :class:`datetime.date` (ValueError outside years 1..9999)."""
        return datetime.date.fromordinal(self.days_from_epoch + _EPOCH_ORDINAL)

    def __eq__(self, other):
        if isinstance(other, Date):
            return self.days_from_epoch == other.days_from_epoch
        if isinstance(other, datetime.date) and not isinstance(other, datetime.datetime):
            return self.days_from_epoch == other.toordinal() - _EPOCH_ORDINAL
        if isinstance(other, int) and not isinstance(other, bool):
            return self.days_from_epoch == other
        return NotImplemented

    def __lt__(self, other):
        return self.days_from_epoch < Date(other).days_from_epoch

    def __hash__(self):
        return hash(self.days_from_epoch)

    def __repr__(self):
        return "Date(%d)" % self.days_from_epoch

    def __str__(self):
        try:
            return str(self.date())
        except (ValueError, OverflowError):
            return str(self.days_from_epoch)


class Time:
    """A CQL ``time``: nanoseconds since midnight."""

    __slots__ = ("nanosecond_time",)

    def __init__(self, value):
        if isinstance(value, Time):
            ns = value.nanosecond_time
        elif isinstance(value, datetime.time):
            ns = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000_000 + value.microsecond * 1000
        elif isinstance(value, int) and not isinstance(value, bool):
            ns = value
        elif isinstance(value, str):
            m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?", value.strip())
            if not m:
                raise ValueError("Time string must be HH:MM[:SS[.fffffffff]], got %r" % value)
            h, mi, s, frac = m.groups()
            ns = ((int(h) * 60 + int(mi)) * 60 + int(s or 0)) * 1_000_000_000 + int((frac or "0").ljust(9, "0"))
        else:
            raise TypeError("Time takes a time, a string or int nanoseconds, not %s" % type(value).__name__)
        if not 0 <= ns < _NS_PER_DAY:
            raise ValueError("Time must be within one day, got %d ns" % ns)
        self.nanosecond_time = ns

    hour = property(lambda self: self.nanosecond_time // 3_600_000_000_000)
    minute = property(lambda self: self.nanosecond_time // 60_000_000_000 % 60)
    second = property(lambda self: self.nanosecond_time // 1_000_000_000 % 60)
    nanosecond = property(lambda self: self.nanosecond_time % 1_000_000_000)

    def time(self):
        """The value as :class:`datetime.time` (microsecond precision)."""
        return datetime.time(self.hour, self.minute, self.second, self.nanosecond // 1000)

    def __eq__(self, other):
        if isinstance(other, Time):
            return self.nanosecond_time == other.nanosecond_time
        if isinstance(other, (datetime.time, int)) and not isinstance(other, bool):
            return self.nanosecond_time == Time(other).nanosecond_time
        return NotImplemented

    def __lt__(self, other):
        return self.nanosecond_time < Time(other).nanosecond_time

    def __hash__(self):
        return hash(self.nanosecond_time)

    def __repr__(self):
        return "Time(%d)" % self.nanosecond_time

    def __str__(self):
        return "%02d:%02d:%02d.%09d" % (self.hour, self.minute, self.second, self.nanosecond)


class Duration:
    """A CQL ``duration``: months, days and nanoseconds, kept apart as CQL keeps them."""

    __slots__ = ("months", "days", "nanoseconds")

    def __init__(self, months=0, days=0, nanoseconds=0):
        self.months = months
        self.days = days
        self.nanoseconds = nanoseconds

    def __eq__(self, other):
        if not isinstance(other, Duration):
            return NotImplemented
        return (self.months, self.days, self.nanoseconds) == (other.months, other.days, other.nanoseconds)

    def __hash__(self):
        return hash((self.months, self.days, self.nanoseconds))

    def __repr__(self):
        return "Duration(%d, %d, %d)" % (self.months, self.days, self.nanoseconds)

    __str__ = __repr__


class SortedSet:
    """The value of a CQL ``set``: sorted, and able to hold unhashable elements (frozen
    lists, maps). Compares equal to a ``set`` with the same elements."""

    __slots__ = ("_items",)

    def __init__(self, iterable=()):
        self._items = []
        for item in iterable:
            self.add(item)

    def add(self, item):
        i = bisect.bisect_left(self._items, item)
        if i == len(self._items) or self._items[i] != item:
            self._items.insert(i, item)

    def discard(self, item):
        i = bisect.bisect_left(self._items, item)
        if i < len(self._items) and self._items[i] == item:
            del self._items[i]

    def remove(self, item):
        if item not in self:
            raise KeyError(item)
        self.discard(item)

    def __contains__(self, item):
        i = bisect.bisect_left(self._items, item)
        return i < len(self._items) and self._items[i] == item

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def __eq__(self, other):
        if isinstance(other, SortedSet):
            return self._items == other._items
        if isinstance(other, (set, frozenset)):
            return len(self._items) == len(other) and all(item in other for item in self._items)
        if isinstance(other, (list, tuple)):
            return self._items == sorted(other)
        return NotImplemented

    def __repr__(self):
        return "SortedSet(%r)" % (self._items,)


class OrderedMap(dict):
    """The value of a CQL ``map``, in the order the server returns it (key order).

    A plain ``dict`` for hashable keys; unhashable keys (frozen lists, sets, maps) are
    stored as tuples / frozensets."""

    def __init__(self, items=()):
        try:
            dict.__init__(self, items)
        except TypeError:
            dict.__init__(self, ((_hashable(k), v) for k, v in items))


def _hashable(value):
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, (set, SortedSet)):
        return frozenset(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple((_hashable(k), _hashable(v)) for k, v in value.items())
    return value


def datetime_from_timestamp(timestamp):
    """A naive UTC datetime from seconds since the epoch (what the classic driver returns)."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=timestamp)
