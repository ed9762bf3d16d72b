"""Value types the classic driver uses for CQL values Python lacks (``cassandra.util``):
:class:`Date`, :class:`Time`, :class:`Duration`, :class:`SortedSet` (set columns) and
:class:`OrderedMap` (map columns); the time-UUID and timestamp helpers
(:func:`uuid_from_time`, :func:`unix_time_from_uuid1`, :func:`ms_timestamp_from_datetime`,
...), the geometric values (:class:`Point`, :class:`LineString`, :class:`Polygon`),
:class:`DateRange` and :class:`Version`.
"""

import calendar
import datetime
import functools
import math
import random
import re
import socket
import uuid
from collections import OrderedDict  # noqa: F401 - classic code imports it from here
from collections.abc import ItemsView, KeysView, Mapping

from turbocql import DriverException  # noqa: F401 - a classic name of cassandra.util

_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_NS_PER_DAY = 86_400 * 1_000_000_000


@functools.total_ordering
class Date:
    """A CQL ``date``: days since 1970-01-01, over the type's full range (beyond
    :class:`datetime.date`'s years 1..9999). Made from int days, a :class:`datetime.date`
    (a datetime's date part) or a ``[+]yyyy-mm-dd`` string."""

    __slots__ = ("days_from_epoch",)

    def __init__(self, value):
        if isinstance(value, Date):
            self.days_from_epoch = value.days_from_epoch
        elif isinstance(value, datetime.date):  # a datetime too: its (local) date
            self.days_from_epoch = value.toordinal() - _EPOCH_ORDINAL
        elif isinstance(value, int) and not isinstance(value, bool):
            self.days_from_epoch = value
        elif isinstance(value, str):
            # The server writes a positive year with a '+' (as ISO 8601 extended years do).
            text = value[1:] if value.startswith("+") else value
            self.days_from_epoch = datetime.datetime.strptime(text, "%Y-%m-%d").toordinal() - _EPOCH_ORDINAL
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
        try:
            return self.days_from_epoch < Date(other).days_from_epoch
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.days_from_epoch)

    def __repr__(self):
        return "Date(%d)" % self.days_from_epoch

    def __str__(self):
        try:
            return str(self.date())
        except (ValueError, OverflowError):
            return str(self.days_from_epoch)


@functools.total_ordering
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
            m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{0,9}))?)?", value.strip())
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
        try:
            return self.nanosecond_time < Time(other).nanosecond_time
        except TypeError:
            return NotImplemented

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

    def __str__(self):
        # CQL's duration literal; one sign for the whole value, as the server reads it.
        negative = self.months < 0 or self.days < 0 or self.nanoseconds < 0
        return "%s%dmo%dd%dns" % ("-" if negative else "", abs(self.months), abs(self.days), abs(self.nanoseconds))


class SortedSet:
    """The value of a CQL ``set``: sorted, and able to hold unhashable elements (frozen
    lists, maps). The classic driver's ``SortedSet``: a sorted list with the API of
    ``set`` (``copy``, ``union``, ``intersection``, ``difference``, the operators and
    their in-place forms, comparisons as subset tests); compares equal to any sized
    container with the same elements."""

    __slots__ = ("_items",)

    def __init__(self, iterable=()):
        self._items = []
        for item in iterable:
            self.add(item)

    def _find(self, item):
        """The insertion point of ``item``; elements that cannot be ordered against it
        are scanned one by one (as the classic driver does)."""
        items = self._items
        lo, hi = 0, len(items)
        try:
            while lo < hi:
                mid = (lo + hi) // 2
                if items[mid] < item:
                    lo = mid + 1
                else:
                    hi = mid
        except TypeError:
            lo = 0
            compared_one = False
            while lo < hi:
                try:
                    if items[lo] == item or items[lo] >= item:
                        break
                    compared_one = True
                except TypeError:
                    if compared_one:
                        break
                lo += 1
        return lo

    def add(self, item):
        items = self._items
        i = self._find(item)
        if i == len(items) or items[i] != item:
            items.insert(i, item)

    def update(self, iterable):
        for item in iterable:
            self.add(item)

    def discard(self, item):
        i = self._find(item)
        if i < len(self._items) and self._items[i] == item:
            del self._items[i]

    def remove(self, item):
        i = self._find(item)
        if i < len(self._items) and self._items[i] == item:
            del self._items[i]
            return
        raise KeyError("%r" % (item,))

    def pop(self):
        if not self._items:
            raise KeyError("pop from empty set")
        return self._items.pop()

    def clear(self):
        del self._items[:]

    def copy(self):
        new = self.__class__()
        new._items = list(self._items)
        return new

    def __contains__(self, item):
        i = self._find(item)
        return i < len(self._items) and self._items[i] == item

    def __iter__(self):
        return iter(self._items)

    def __reversed__(self):
        return reversed(self._items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def __delitem__(self, i):
        del self._items[i]

    def __reduce__(self):
        return self.__class__, (self._items,)

    def __eq__(self, other):
        if isinstance(other, SortedSet):
            return self._items == other._items
        try:
            return len(other) == len(self._items) and all(item in self for item in other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # mutable, as set

    def _intersect(self, other):
        new = self.__class__()
        new._items = [item for item in self._items if item in other]
        return new

    def _diff(self, other):
        new = self.__class__()
        new._items = [item for item in self._items if item not in other]
        return new

    def union(self, *others):
        new = self.copy()
        for other in others:
            new.update(other)
        return new

    def intersection(self, *others):
        new = self.copy()
        for other in others:
            new = new._intersect(other)
        return new

    def difference(self, *others):
        new = self.copy()
        for other in others:
            new = new._diff(other)
        return new

    def symmetric_difference(self, other):
        other = other if isinstance(other, SortedSet) else SortedSet(other)
        return self._diff(other).union(other._diff(self))

    def isdisjoint(self, other):
        return not any(item in other for item in self._items)

    def issubset(self, other):
        return all(item in other for item in self._items)

    def issuperset(self, other):
        return all(item in self for item in other)

    def __le__(self, other):
        return self.issubset(other)

    def __lt__(self, other):
        return len(other) > len(self._items) and self.issubset(other)

    def __ge__(self, other):
        return self.issuperset(other)

    def __gt__(self, other):
        return len(self._items) > len(other) and self.issuperset(other)

    def __and__(self, other):
        return self._intersect(other)

    __rand__ = __and__

    def __or__(self, other):
        return self.union(other)

    __ror__ = __or__

    def __sub__(self, other):
        return self._diff(other)

    def __rsub__(self, other):
        return SortedSet(other)._diff(self)

    def __xor__(self, other):
        return self.symmetric_difference(other)

    __rxor__ = __xor__

    def __iand__(self, other):
        self._items = self._intersect(other)._items
        return self

    def __ior__(self, other):
        self.update(other)
        return self

    def __isub__(self, other):
        self._items = self._diff(other)._items
        return self

    def __ixor__(self, other):
        self._items = self.symmetric_difference(other)._items
        return self

    def __repr__(self):
        return "%s(%r)" % (self.__class__.__name__, self._items)


class OrderedMap(dict):
    """The value of a CQL ``map``, in the order the server returns it (key order).

    Hashable keys (the usual case, and the one the row decoder builds per map value): a
    plain ``dict``, at ``dict`` speed. Keys that are not hashable (a frozen map, list or
    set, a UDT or tuple holding one, a ``bytearray``) are kept as they are, as the classic
    driver's ``OrderedMap`` keeps them: the map then indexes each key by a hashable image
    of it (lists and tuples as tuples, sets as frozensets, maps by their items, a
    ``bytearray`` as ``bytes``, an object by its attributes), so a lookup by any equal key
    finds it (``m[{1: 2}]``, ``m[[1, 2]]`` or ``m[(1, 2)]``), iteration gives the original
    keys in insertion (server) order, and it compares equal to a mapping with the same
    items. Such a map's ``repr`` is the classic one, ``OrderedMap([(key, value), ...])``.
    """

    def __init__(self, items=(), **kwargs):
        if type(items) is list and not kwargs:  # the row decoder's call: [(key, value), ...]
            try:
                dict.__init__(self, items)
                return
            except TypeError:  # an unhashable key (or a malformed pair, which fails again below)
                dict.clear(self)
        else:
            if not hasattr(items, "keys"):
                items = list(items)  # an iterator could not be read twice
            try:
                dict.__init__(self, items, **kwargs)
                return
            except TypeError:
                dict.clear(self)
        _unhashable_keys(self)
        self.update(items, **kwargs)

    def __setitem__(self, key, value):
        try:
            dict.__setitem__(self, key, value)
        except TypeError:
            _unhashable_keys(self)
            self[key] = value

    def update(self, other=(), /, **kwargs):
        if not hasattr(other, "keys"):
            other = list(other)  # an iterator could not be read twice
        try:
            dict.update(self, other, **kwargs)
        except TypeError:
            _unhashable_keys(self)
            self.update(other, **kwargs)

    def setdefault(self, key, default=None):
        try:
            return dict.setdefault(self, key, default)
        except TypeError:
            _unhashable_keys(self)
            return self.setdefault(key, default)

    def _insert(self, key, value):
        """Sets ``key`` (the classic driver's name of the insertion)."""
        self[key] = value

    @property
    def _items(self):
        """The ``(key, value)`` pairs in order (the classic driver's storage, read-only)."""
        return list(self.items())

    def __eq__(self, other):
        # Two ordered maps are equal only with their items in the same order, as in the
        # classic driver; against any other mapping the order does not matter.
        if isinstance(other, OrderedMap):
            if isinstance(other, _UnhashableKeysMixin):
                return _same_items_in_order(self, other)
            return dict.__eq__(self, other) and list(dict.keys(self)) == list(dict.keys(other))
        return dict.__eq__(self, other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # mutable, as dict


def _same_items_in_order(a, b):
    return len(a) == len(b) and all(ka == kb and va == vb for (ka, va), (kb, vb) in zip(a.items(), b.items()))


class _MapImage:
    """Tags the hashable image of a map key (a frozenset of its items' images)."""

    __slots__ = ()

    def __repr__(self):
        return "<map>"


_MAP_IMAGE = _MapImage()
_OBJECT_IMAGE = ("<object>",)


def _key_image(value):
    """A hashable value that equal keys share: ``value`` itself when it is hashable."""
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if isinstance(value, (set, SortedSet, frozenset)):
        return frozenset(_key_image(v) for v in value)
    if isinstance(value, (list, tuple)):
        return tuple(_key_image(v) for v in value)
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return (_MAP_IMAGE, frozenset((_key_image(k), _key_image(v)) for k, v in value.items()))
    attributes = getattr(value, "__dict__", None)
    if attributes is not None:
        return (_OBJECT_IMAGE, type(value), frozenset((k, _key_image(v)) for k, v in attributes.items()))
    raise TypeError("unhashable type: %r (not usable as a map key)" % type(value).__name__)


def _hashable(value):
    """The hashable image of a map key (kept for callers of the former helper)."""
    return _key_image(value)


class _UnhashableKeysMixin:
    """What an :class:`OrderedMap` becomes when it gets an unhashable key.

    The ``dict`` underneath maps each key's image (:func:`_key_image`) to its value, in
    insertion order; ``_keys`` maps the image to the original key. Every ``dict`` method
    is redone on top of that, so Python code sees the original keys (C code reading the
    ``dict`` directly sees the images).
    """

    __slots__ = ()
    _keys: dict

    def _base(self):
        return type(self).__mro__[2]

    def __getitem__(self, key):
        try:
            return dict.__getitem__(self, _key_image(key))
        except KeyError:
            raise KeyError(key) from None

    def __setitem__(self, key, value):
        image = _key_image(key)
        if image not in self._keys:
            self._keys[image] = key
        dict.__setitem__(self, image, value)

    def __delitem__(self, key):
        image = _key_image(key)
        try:
            dict.__delitem__(self, image)
        except KeyError:
            raise KeyError(key) from None
        del self._keys[image]

    def __contains__(self, key):
        try:
            return dict.__contains__(self, _key_image(key))
        except TypeError:
            return False

    def get(self, key, default=None):
        try:
            return dict.get(self, _key_image(key), default)
        except TypeError:
            return default

    def __iter__(self):
        return iter(self._keys.values())

    def __reversed__(self):
        return reversed(self._keys.values())

    def keys(self):
        return _UnhashableKeysView(self)

    def items(self):
        return _UnhashableItemsView(self)

    def values(self):
        return dict.values(self)

    def pop(self, key, *default):
        image = _key_image(key)
        if dict.__contains__(self, image):
            del self._keys[image]
            return dict.pop(self, image)
        if default:
            return default[0]
        raise KeyError(key)

    def popitem(self):
        image, value = dict.popitem(self)
        return self._keys.pop(image), value

    def setdefault(self, key, default=None):
        image = _key_image(key)
        if not dict.__contains__(self, image):
            self[key] = default
        return dict.__getitem__(self, image)

    def update(self, other=(), /, **kwargs):
        if isinstance(other, _UnhashableKeysMixin):
            pairs = other.items()
        elif hasattr(other, "keys"):
            pairs = ((k, other[k]) for k in other.keys())
        else:
            pairs = other
        for key, value in pairs:
            self[key] = value
        for key, value in kwargs.items():
            self[key] = value

    def clear(self):
        dict.clear(self)
        self._keys.clear()

    def copy(self):
        return _rebuild(self._base(), list(self.items()), self._state())

    def _state(self):
        return {k: v for k, v in self.__dict__.items() if k != "_keys"}

    def __reduce__(self):
        return (_rebuild, (self._base(), list(self.items()), self._state()))

    def __eq__(self, other):
        if isinstance(other, OrderedMap):
            return _same_items_in_order(self, other)
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(other) != len(self):
            return False
        for key, value in self.items():
            try:
                found = other[key]
            except TypeError:
                try:
                    found = other[_key_image(key)]
                except (KeyError, TypeError):
                    return False
            except KeyError:
                return False
            if not (found == value):
                return False
        return True

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = _rebuild(self._base(), list(other.items()), self._state())
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

    def __repr__(self):
        return "%s([%s])" % (self._base().__name__, ", ".join("(%r, %r)" % item for item in self.items()))

    def __str__(self):
        return "{%s}" % ", ".join("%r: %r" % item for item in self.items())


class _UnhashableKeysView(KeysView):
    def __init__(self, owner):
        super().__init__(owner)

    def __iter__(self):
        return iter(self._mapping._keys.values())


class _UnhashableItemsView(ItemsView):
    def __init__(self, owner):
        super().__init__(owner)

    def __iter__(self):
        owner = self._mapping
        return zip(owner._keys.values(), dict.values(owner))

    def __contains__(self, item):
        key, value = item
        try:
            return self._mapping[key] == value
        except (KeyError, TypeError):
            return False


_unhashable_classes: dict = {}


def _unhashable_keys(m):
    """Turns ``m`` (an :class:`OrderedMap`, or an instance of a subclass) into its
    unhashable-keys form in place, keeping the items it holds."""
    cls = type(m)
    if issubclass(cls, _UnhashableKeysMixin):
        return
    target = _unhashable_classes.get(cls)
    if target is None:
        target = type(
            cls.__name__, (_UnhashableKeysMixin, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        )
        _unhashable_classes[cls] = target
    pairs = list(dict.items(m))
    dict.clear(m)
    m.__class__ = target
    m._keys = {}
    for key, value in pairs:
        m[key] = value


def _rebuild(cls, pairs, state):
    """Unpickles (and copies) an :class:`OrderedMap` with unhashable keys."""
    m = cls.__new__(cls)
    m.__dict__.update(state)
    _unhashable_keys(m)
    for key, value in pairs:
        m[key] = value
    return m


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


def list_contents_to_tuple(to_convert):
    """A list as a tuple, the lists directly in it too (one level, as the classic
    function); any other value as it is."""
    if isinstance(to_convert, list):
        return tuple(tuple(item) if isinstance(item, list) else item for item in to_convert)
    return to_convert


inet_pton = socket.inet_pton
inet_ntop = socket.inet_ntop

sortedset = SortedSet
"""The classic driver's lower-case name of :class:`SortedSet`."""


class OrderedMapSerializedKey(OrderedMap):
    """A map column's value as the classic driver decodes it, keeping the key's CQL type
    (``cass_key_type``) and the protocol version it was read with."""

    def __init__(self, cass_type, protocol_version):
        OrderedMap.__init__(self)
        self.cass_key_type = cass_type
        self.protocol_version = protocol_version

    def _insert_unchecked(self, key, flat_key, value):
        self[key] = value


# Geometric values (DSE geo types; the classic driver's classes)


def _wkt_number(text):
    return float(text)


_WKT_RE = re.compile(r"^\s*(POINT|LINESTRING|POLYGON)\s*(EMPTY|\(.*\))\s*$", re.IGNORECASE | re.DOTALL)


def _wkt_parse(cls, kind, text):
    m = _WKT_RE.match(text)
    if not m:
        raise ValueError("Invalid WKT geometry: '%s'" % (text,))
    found = m.group(1).upper()
    if found != kind:
        names = {"POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon"}
        raise ValueError("Invalid WKT geometry type. Expected '%s', got '%s': '%s'" % (names[kind], names[found], text))
    body = m.group(2)
    return None if body.upper() == "EMPTY" else body.strip()[1:-1]


def _wkt_points(text):
    return tuple(tuple(_wkt_number(c) for c in point.split()) for point in text.split(","))


def _wkt_coords(coords):
    return ", ".join("%r %r" % (x, y) for x, y in coords)


class Point:
    """A point (x, y): a DSE ``PointType`` value."""

    def __init__(self, x=math.nan, y=math.nan):
        self.x = x
        self.y = y

    def __eq__(self, other):
        return isinstance(other, Point) and self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    def __str__(self):
        return "POINT (%r %r)" % (self.x, self.y)

    def __repr__(self):
        return "%s(%r, %r)" % (self.__class__.__name__, self.x, self.y)

    @staticmethod
    def from_wkt(s):
        """A Point from its well-known text (``POINT (1 2)``)."""
        body = _wkt_parse(Point, "POINT", s)
        if body is None:
            return Point(math.nan, math.nan)
        (x, y) = _wkt_points(body)[0]
        return Point(x, y)


class LineString:
    """A line through points ((x, y), ...): a DSE ``LineStringType`` value."""

    def __init__(self, coords=()):
        self.coords = tuple(coords)

    def __eq__(self, other):
        return isinstance(other, LineString) and self.coords == other.coords

    def __hash__(self):
        return hash(self.coords)

    def __str__(self):
        return "LINESTRING EMPTY" if not self.coords else "LINESTRING (%s)" % _wkt_coords(self.coords)

    def __repr__(self):
        return "%s(%r)" % (self.__class__.__name__, self.coords)

    @staticmethod
    def from_wkt(s):
        """A LineString from its well-known text (``LINESTRING (1 2, 3 4)``)."""
        body = _wkt_parse(LineString, "LINESTRING", s)
        return LineString() if body is None else LineString(_wkt_points(body))


class _LinearRing:
    def __init__(self, coords=()):
        self.coords = list_contents_to_tuple([tuple(c) for c in coords])

    def __eq__(self, other):
        return isinstance(other, _LinearRing) and self.coords == other.coords

    def __hash__(self):
        return hash(self.coords)

    def __str__(self):
        return "LINEARRING EMPTY" if not self.coords else "LINEARRING (%s)" % _wkt_coords(self.coords)

    def __repr__(self):
        return "%s(%r)" % (self.__class__.__name__, self.coords)


class Polygon:
    """A polygon: an exterior ring and interior rings (holes), each a sequence of
    (x, y); a DSE ``PolygonType`` value."""

    def __init__(self, exterior=(), interiors=None):
        self.exterior = _LinearRing(exterior)
        self.interiors = tuple(_LinearRing(ring) for ring in interiors) if interiors else ()

    def __eq__(self, other):
        return isinstance(other, Polygon) and self.exterior == other.exterior and self.interiors == other.interiors

    def __hash__(self):
        return hash((self.exterior, self.interiors))

    def __str__(self):
        if not self.exterior.coords:
            return "POLYGON EMPTY"
        rings = [self.exterior.coords] + [ring.coords for ring in self.interiors]
        return "POLYGON (%s)" % ", ".join("(%s)" % _wkt_coords(ring) for ring in rings)

    def __repr__(self):
        return "%s(%r, %r)" % (self.__class__.__name__, self.exterior.coords, [r.coords for r in self.interiors])

    @staticmethod
    def from_wkt(s):
        """A Polygon from its well-known text (``POLYGON ((1 2, 3 4, 5 6, 1 2))``)."""
        body = _wkt_parse(Polygon, "POLYGON", s)
        if body is None:
            return Polygon()
        rings = [_wkt_points(ring) for ring in re.findall(r"\(([^()]*)\)", body)]
        return Polygon(rings[0], rings[1:])


class Distance:
    """A circle: a center (x, y) and a radius (DSE search predicates)."""

    def __init__(self, x=math.nan, y=math.nan, radius=math.nan):
        self.x = x
        self.y = y
        self.radius = radius

    def __eq__(self, other):
        return isinstance(other, Distance) and self.x == other.x and self.y == other.y and self.radius == other.radius

    def __hash__(self):
        return hash((self.x, self.y, self.radius))

    def __str__(self):
        return "DISTANCE ((%r %r) %r)" % (self.x, self.y, self.radius)

    def __repr__(self):
        return "%s(%r, %r, %r)" % (self.__class__.__name__, self.x, self.y, self.radius)


# Date ranges (DSE ``DateRangeType``)


class DateRangePrecision:
    """The precisions of a :class:`DateRangeBound`, coarsest first."""

    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    MILLISECOND = "MILLISECOND"

    PRECISIONS = (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, MILLISECOND)

    @classmethod
    def _to_int(cls, precision):
        return cls.PRECISIONS.index(precision.upper())

    @classmethod
    def _round_to_precision(cls, ms, precision, up):
        dt = utc_datetime_from_ms_timestamp(ms)
        level = cls._to_int(precision)
        if level == 6:
            return ms
        start = datetime.datetime(
            dt.year,
            dt.month if level >= 1 else 1,
            dt.day if level >= 2 else 1,
            dt.hour if level >= 3 else 0,
            dt.minute if level >= 4 else 0,
            dt.second if level >= 5 else 0,
        )
        if not up:
            return ms_timestamp_from_datetime(start)
        if level == 0:
            end = start.replace(year=start.year + 1)
        elif level == 1:
            end = (
                start.replace(year=start.year + 1, month=1)
                if start.month == 12
                else start.replace(month=start.month + 1)
            )
        else:
            end = start + datetime.timedelta(**{("days", "hours", "minutes", "seconds")[level - 2]: 1})
        return ms_timestamp_from_datetime(end) - 1

    @classmethod
    def round_up_to_precision(cls, ms, precision):
        """The last millisecond of the ``precision`` unit (year, month, ...) holding ``ms``."""
        return cls._round_to_precision(ms, precision, True)

    @classmethod
    def round_down_to_precision(cls, ms, precision):
        """The first millisecond of the ``precision`` unit (year, month, ...) holding ``ms``."""
        return cls._round_to_precision(ms, precision, False)


_BOUND_FORMATS = {
    "YEAR": "%Y",
    "MONTH": "%Y-%m",
    "DAY": "%Y-%m-%d",
    "HOUR": "%Y-%m-%dT%HZ",
    "MINUTE": "%Y-%m-%dT%H:%MZ",
    "SECOND": "%Y-%m-%dT%H:%M:%SZ",
    "MILLISECOND": "%Y-%m-%dT%H:%M:%S",
}


class DateRangeBound:
    """One end of a :class:`DateRange`: a time (``milliseconds`` since the epoch) and its
    ``precision`` (a :class:`DateRangePrecision` name). ``DateRangeBound(None, None)`` is
    the open bound (``*``)."""

    def __init__(self, value, precision):
        if value is None:
            milliseconds = None
        elif isinstance(value, int):
            milliseconds = value
        elif isinstance(value, datetime.datetime):
            milliseconds = ms_timestamp_from_datetime(value)
        else:
            raise ValueError("%s.value: expected int, datetime or None; got %r" % (type(self).__name__, value))
        if precision is not None:
            precision = precision.upper()
            if precision not in DateRangePrecision.PRECISIONS:
                raise ValueError(
                    "%s.precision: expected value in %r; got %r"
                    % (type(self).__name__, DateRangePrecision.PRECISIONS, precision)
                )
        if (milliseconds is None) != (precision is None):
            raise ValueError("%s: value and precision must be both None or both set" % (type(self).__name__,))
        self.milliseconds = milliseconds
        self.precision = precision
        self.validate()

    def validate(self):
        """Nothing to check beyond the constructor's checks (kept for the classic API)."""

    @classmethod
    def from_value(cls, value):
        """A bound from a bound, a ``(value, precision)`` pair or a dict with
        ``milliseconds`` and ``precision``."""
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(value["milliseconds"], value["precision"])
        ms, precision = value
        return cls(ms, precision)

    def datetime(self):
        """The bound's time as a naive UTC datetime."""
        return utc_datetime_from_ms_timestamp(self.milliseconds)

    def round_up(self):
        """Moves the bound to the last millisecond of its precision unit; returns it."""
        if self.milliseconds is not None:
            self.milliseconds = DateRangePrecision.round_up_to_precision(self.milliseconds, self.precision)
        return self

    def round_down(self):
        """Moves the bound to the first millisecond of its precision unit; returns it."""
        if self.milliseconds is not None:
            self.milliseconds = DateRangePrecision.round_down_to_precision(self.milliseconds, self.precision)
        return self

    def __eq__(self, other):
        if not isinstance(other, DateRangeBound):
            return NotImplemented
        return (self.milliseconds, self.precision) == (other.milliseconds, other.precision)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the classic class

    def __lt__(self, other):
        return (str(self.milliseconds), str(self.precision)) < (str(other.milliseconds), str(other.precision))

    def __str__(self):
        if self.milliseconds is None:
            return "*"
        try:
            dt = self.datetime()
        except OverflowError:
            return "%sms" % (self.milliseconds,)
        if not 1 <= dt.year <= 9999:
            return "%sms" % (self.milliseconds,)
        text = dt.strftime(_BOUND_FORMATS[self.precision])
        if self.precision == "MILLISECOND":
            text += ".%03dZ" % (dt.microsecond // 1000,)
        return text

    def __repr__(self):
        return "%s(milliseconds=%r, precision=%r)" % (type(self).__name__, self.milliseconds, self.precision)


OPEN_BOUND = DateRangeBound(None, None)
"""The open bound (``*``) of a :class:`DateRange`."""


class DateRange:
    """A DSE ``DateRangeType`` value: one ``value`` (a bound), or a ``lower_bound`` and an
    ``upper_bound`` (either may be :data:`OPEN_BOUND`). Bounds are rounded to their
    precision: lower bounds and values down, upper bounds up (the given bounds are
    changed, as in the classic driver)."""

    def __init__(self, lower_bound=None, upper_bound=None, value=None):
        self.lower_bound = None if lower_bound is None else DateRangeBound.from_value(lower_bound).round_down()
        self.upper_bound = None if upper_bound is None else DateRangeBound.from_value(upper_bound).round_up()
        self.value = None if value is None else DateRangeBound.from_value(value).round_down()
        if self.value is None and (self.lower_bound is not None or self.upper_bound is not None):
            if self.lower_bound is None:
                self.lower_bound = OPEN_BOUND
            if self.upper_bound is None:
                self.upper_bound = OPEN_BOUND
        self.validate()

    def validate(self):
        """Raises ValueError unless exactly one of ``value`` and the bounds is set."""
        if self.value is None:
            if self.lower_bound is None and self.upper_bound is None:
                raise ValueError(
                    "%s instances where value attribute is None must set lower_bound or upper_bound; got %r"
                    % (type(self).__name__, self)
                )
        elif self.lower_bound is not None or self.upper_bound is not None:
            raise ValueError(
                "%s instances where value attribute is not None must not set lower_bound or upper_bound; got %r"
                % (type(self).__name__, self)
            )

    def __eq__(self, other):
        if not isinstance(other, DateRange):
            return NotImplemented
        return (self.lower_bound, self.upper_bound, self.value) == (other.lower_bound, other.upper_bound, other.value)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the classic class

    def __str__(self):
        if self.value is not None:
            return str(self.value)
        return "[%s TO %s]" % (self.lower_bound, self.upper_bound)

    def __repr__(self):
        return "%s(lower_bound=%r, upper_bound=%r, value=%r)" % (
            type(self).__name__,
            self.lower_bound,
            self.upper_bound,
            self.value,
        )


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
