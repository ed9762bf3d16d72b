"""The values of CQL collections, as the classic driver's classes (re-exported by
``turbocql.util``): :class:`SortedSet` (``set`` columns) and :class:`OrderedMap` (``map``
columns, with keys that need not be hashable), and :class:`OrderedMapSerializedKey`.
"""

from collections.abc import ItemsView, KeysView, Mapping


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
        """As ``dict.update``; a key that is not hashable is kept too (as by the classic driver)."""
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
