"""Client-side encoding of Python values into CQL literals.

Holds :class:`Encoder` (the type -> encoder-function table used for simple,
unprepared statements), :class:`ValueSequence` (a list encoded as ``( ... )``
for ``IN %s``), :func:`cql_quote` and :func:`bind_params`, which substitutes
``%s`` / ``%(name)s`` markers in a query string with encoded values.

This module is pure Python and imports only the standard library.
"""

import datetime
import functools
import ipaddress
import math
import types
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from decimal import Decimal

__all__ = ["Encoder", "ValueSequence", "bind_params", "cql_quote"]

_EPOCH = datetime.datetime(1970, 1, 1)
_ONE_MS = datetime.timedelta(milliseconds=1)
_NO_OFFSET = datetime.timedelta(0)
_NS_PER_SECOND = 1_000_000_000

# Names of "sorted set" classes (e.g. a driver's SortedSet) that do not
# register themselves as collections.abc.Set but should encode as CQL sets.
_SORTED_SET_NAMES = frozenset(("SortedSet", "sortedset"))


def cql_quote(term):
    """Quote ``term`` as a CQL string literal if it is a ``str``.

    Single quotes inside the string are doubled.  Anything else is returned
    as ``str(term)`` unchanged.
    """
    if isinstance(term, str):
        return "'" + term.replace("'", "''") + "'"
    return str(term)


class ValueSequence(list):
    """A list that encodes as ``(a, b, ...)``, e.g. for ``WHERE k IN %s``."""

    __slots__ = ()


class Encoder:
    """Converts Python values into CQL literal strings.

    :attr:`mapping` maps an exact Python type to the function that encodes
    values of that type; it may be edited freely, e.g. to encode tuples as
    CQL tuples instead of lists::

        encoder.mapping[tuple] = encoder.cql_encode_tuple

    Values whose exact type is not in the mapping are looked up by their
    base classes, then by duck typing (mappings, sets, duration/date/time
    look-alikes, numpy scalars and arrays), and finally encoded with
    :meth:`cql_encode_object` (``str(value)``).
    """

    mapping = None
    """Dict from Python type to a one-argument encoder function."""

    def __init__(self):
        self.mapping = {
            type(None): self.cql_encode_none,
            bool: self.cql_encode_bool,
            int: self.cql_encode_int,
            float: self.cql_encode_float,
            Decimal: self.cql_encode_decimal,
            str: self.cql_encode_str,
            bytes: self.cql_encode_bytes,
            bytearray: self.cql_encode_bytes,
            memoryview: self.cql_encode_bytes,
            uuid.UUID: self.cql_encode_object,
            datetime.datetime: self.cql_encode_datetime,
            datetime.date: self.cql_encode_date,
            datetime.time: self.cql_encode_time,
            ipaddress.IPv4Address: self.cql_encode_ipaddress,
            ipaddress.IPv6Address: self.cql_encode_ipaddress,
            list: self.cql_encode_list_collection,
            # Like the classic driver, plain tuples encode as CQL lists; map
            # tuple to cql_encode_tuple to target CQL tuple columns instead.
            tuple: self.cql_encode_list_collection,
            types.GeneratorType: self.cql_encode_list_collection,
            set: self.cql_encode_set_collection,
            frozenset: self.cql_encode_set_collection,
            dict: self.cql_encode_map_collection,
            OrderedDict: self.cql_encode_map_collection,
            ValueSequence: self.cql_encode_sequence,
        }

    # -- dispatch ---------------------------------------------------------

    def cql_encode_all_types(self, val, as_text_type=False):
        """Encode any value as a CQL literal string.

        ``as_text_type`` is accepted for compatibility; the result is always
        a ``str``.
        """
        encode = self.mapping.get(type(val))
        if encode is None:
            encode = self._fallback_encoder(val)
        return encode(val)

    def _fallback_encoder(self, val):
        mapping = self.mapping
        cls = type(val)
        for base in cls.__mro__[1:]:
            encode = mapping.get(base)
            if encode is not None:
                return encode
        if isinstance(val, Mapping):
            return self.cql_encode_map_collection
        if isinstance(val, AbstractSet) or cls.__name__ in _SORTED_SET_NAMES:
            return self.cql_encode_set_collection
        if cls.__module__ == "numpy" and hasattr(val, "tolist"):
            return self._cql_encode_numpy
        if hasattr(val, "nanosecond_time"):
            return self.cql_encode_time
        if hasattr(val, "days_from_epoch"):
            return self.cql_encode_date_ext
        if all(hasattr(val, a) for a in ("months", "days", "nanoseconds")):
            return self.cql_encode_duration
        return self.cql_encode_object

    def _cql_encode_numpy(self, val):
        # numpy scalars and arrays: convert to the equivalent Python objects
        # (float, int, list, datetime, ...) and encode those.
        return self.cql_encode_all_types(val.tolist())

    # -- scalars ----------------------------------------------------------

    def cql_encode_none(self, val):
        """``None`` -> ``NULL``."""
        return "NULL"

    def cql_encode_object(self, val):
        """Default for unknown types: ``str(val)``, unquoted."""
        return str(val)

    def cql_encode_str(self, val):
        """``str`` -> single-quoted literal with ``'`` doubled."""
        if not isinstance(val, str):
            val = str(val)
        return "'" + str.replace(val, "'", "''") + "'"

    # Python 3 has a single text type; kept for API compatibility.
    cql_encode_unicode = cql_encode_str

    def cql_encode_str_quoted(self, val):
        """Quote ``str(val)`` as a CQL string (used for e.g. WKT geometries)."""
        return self.cql_encode_str(str(val))

    def cql_encode_bytes(self, val):
        """``bytes``/``bytearray``/``memoryview`` -> ``0x`` + hex digits."""
        return "0x" + bytes(val).hex()

    def cql_encode_bool(self, val):
        """``True``/``False`` -> ``true``/``false``."""
        return "true" if val else "false"

    def cql_encode_int(self, val):
        """``int`` (and subclasses such as ``IntEnum``) -> decimal digits."""
        return int.__repr__(int(val))

    def cql_encode_float(self, val):
        """``float`` -> shortest round-tripping repr; NaN/Infinity/-Infinity."""
        val = float(val)
        if math.isnan(val):
            return "NaN"
        if math.isinf(val):
            return "Infinity" if val > 0 else "-Infinity"
        return float.__repr__(val)

    def cql_encode_decimal(self, val):
        """``Decimal`` -> its exact decimal string (no float rounding)."""
        if val.is_nan():
            return "NaN"
        if val.is_infinite():
            return "-Infinity" if val.is_signed() else "Infinity"
        return str(val)

    def cql_encode_datetime(self, val):
        """``datetime`` -> integer milliseconds since the Unix epoch.

        Naive values are taken as UTC; aware values are converted to UTC.
        Sub-millisecond parts are floored (towards the past).
        """
        offset = val.utcoffset() or _NO_OFFSET
        delta = (val.replace(tzinfo=None) - _EPOCH) - offset
        return str(delta // _ONE_MS)

    def cql_encode_date(self, val):
        """``date`` -> ``'YYYY-MM-DD'``."""
        return "'" + datetime.date.isoformat(val) + "'"

    def cql_encode_date_ext(self, val):
        """A date object with ``days_from_epoch`` -> CQL date as its unsigned
        day number (works outside ``datetime.date``'s year range)."""
        return str(int(val.days_from_epoch) + 2**31)

    def cql_encode_time(self, val):
        """``time`` -> ``'HH:MM:SS[.ffffff]'`` (as ``time.isoformat()``).

        Objects with a ``nanosecond_time`` attribute (nanoseconds since
        midnight) are encoded as ``'HH:MM:SS.nnnnnnnnn'``.
        """
        if isinstance(val, datetime.time):
            return "'" + val.isoformat() + "'"
        ns = getattr(val, "nanosecond_time", None)
        if ns is None:
            return "'" + str(val) + "'"
        seconds, nanos = divmod(int(ns), _NS_PER_SECOND)
        minutes, secs = divmod(seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return "'%02d:%02d:%02d.%09d'" % (hours, minutes, secs, nanos)

    def cql_encode_duration(self, val):
        """A duration (``months``, ``days``, ``nanoseconds``) -> e.g.
        ``1mo2d3ns`` (``-1mo2d3ns`` when negative)."""
        months, days, nanos = int(val.months), int(val.days), int(val.nanoseconds)
        if min(months, days, nanos) < 0 < max(months, days, nanos):
            raise ValueError(
                "a duration's months, days and nanoseconds must all have the same sign, got %r"
                % ((months, days, nanos),)
            )
        sign = "-" if min(months, days, nanos) < 0 else ""
        return "%s%dmo%dd%dns" % (sign, abs(months), abs(days), abs(nanos))

    def cql_encode_ipaddress(self, val):
        """``IPv4Address``/``IPv6Address`` -> quoted compressed form."""
        return "'" + val.compressed + "'"

    # -- collections ------------------------------------------------------

    def _join(self, items):
        encode = self.cql_encode_all_types
        return ", ".join([encode(v) for v in items])

    def cql_encode_sequence(self, val):
        """Iterable -> ``(a, b, ...)``; suitable for ``IN`` value lists."""
        return "(" + self._join(val) + ")"

    def cql_encode_tuple(self, val):
        """Iterable -> ``(a, b, ...)``; suitable for CQL tuple columns."""
        return "(" + self._join(val) + ")"

    def cql_encode_list_collection(self, val):
        """Iterable -> ``[a, b, ...]`` (CQL list)."""
        return "[" + self._join(val) + "]"

    def cql_encode_set_collection(self, val):
        """Iterable -> ``{a, b, ...}`` (CQL set)."""
        return "{" + self._join(val) + "}"

    def cql_encode_map_collection(self, val):
        """Mapping -> ``{k1: v1, k2: v2, ...}`` (CQL map)."""
        encode = self.cql_encode_all_types
        return "{" + ", ".join([encode(k) + ": " + encode(v) for k, v in val.items()]) + "}"


# -- query parameter binding ----------------------------------------------


@functools.lru_cache(maxsize=512)
def _parse_query(query):
    """Split ``query`` into a tuple of literal text and markers.

    Items are ``str`` (literal text, ``%%`` already unescaped), ``0`` for a
    positional ``%s`` marker, or a 1-tuple ``(name,)`` for ``%(name)s``.
    """
    parts = []
    literal = []
    i = 0
    n = len(query)
    while True:
        j = query.find("%", i)
        if j < 0:
            literal.append(query[i:])
            break
        literal.append(query[i:j])
        if j + 1 >= n:
            raise ValueError(
                "incomplete format: lone '%%' at the end of the query (index %d); "
                "write '%%%%' for a literal percent sign" % j
            )
        c = query[j + 1]
        if c == "%":
            literal.append("%")
            i = j + 2
            continue
        if c == "s":
            marker = 0
            i = j + 2
        elif c == "(":
            # Key runs to the matching ')' (nested parentheses allowed, as in
            # Python %-formatting).
            depth = 1
            k = j + 2
            while k < n and depth:
                if query[k] == "(":
                    depth += 1
                elif query[k] == ")":
                    depth -= 1
                k += 1
            if depth:
                raise ValueError("incomplete format key: unterminated '%%(' at index %d" % j)
            name = query[j + 2 : k - 1]
            if k >= n or query[k] != "s":
                bad = query[k] if k < n else "end of query"
                raise ValueError(
                    "unsupported format after '%%(%s)' at index %d: %r; only %%(name)s is supported" % (name, j, bad)
                )
            marker = (name,)
            i = k + 1
        else:
            raise ValueError(
                "unsupported format character %r (0x%x) at index %d; use %%s or "
                "%%(name)s markers, and '%%%%' for a literal percent sign" % (c, ord(c), j + 1)
            )
        parts.append("".join(literal))
        literal = []
        parts.append(marker)
    parts.append("".join(literal))
    return tuple(p for p in parts if p != "")


def _plural(count, word):
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


def bind_params(query, params, encoder):
    """Return ``query`` with its markers replaced by encoded ``params``.

    * positional: ``%s`` markers and ``params`` a sequence (any non-string
      iterable), one value per marker, in order;
    * named: ``%(name)s`` markers and ``params`` a mapping; keys not used
      by the query are ignored and a name may be used several times.

    ``%%`` is a literal ``%``.  Values are encoded with
    ``encoder.cql_encode_all_types``.

    Raises ``TypeError`` when the number of values does not match the
    number of ``%s`` markers or when the marker style does not match the
    kind of ``params``, ``KeyError`` (whose argument is the key) when a
    named marker has no value, and ``ValueError`` for a malformed marker.
    """
    parts = _parse_query(query)
    encode = encoder.cql_encode_all_types
    out = []
    if isinstance(params, Mapping):
        encoded = {}
        for part in parts:
            if part.__class__ is str:
                out.append(part)
            elif part == 0:
                raise TypeError(
                    "format requires a sequence: the query uses positional %%s "
                    "markers but the parameters are a mapping (%s); use "
                    "%%(name)s markers or pass a sequence" % (type(params).__name__)
                )
            else:
                name = part[0]
                text = encoded.get(name)
                if text is None:
                    try:
                        value = params[name]
                    except KeyError:
                        err = KeyError(name)
                        err.add_note(
                            "no value was given for the named marker %%(%s)s "
                            "(parameters have keys: %s)" % (name, ", ".join(sorted(repr(k) for k in params)))
                        )
                        raise err from None
                    text = encoded[name] = encode(value)
                out.append(text)
        return "".join(out)

    if isinstance(params, (str, bytes, bytearray)):
        raise TypeError(
            "parameters must be a sequence or a mapping, not %s; wrap a "
            "single value in a tuple: (value,)" % type(params).__name__
        )
    try:
        values = params if isinstance(params, (list, tuple)) else list(params)
    except TypeError:
        raise TypeError("parameters must be a sequence or a mapping, not %s" % type(params).__name__) from None
    markers = 0
    for part in parts:
        if part.__class__ is tuple:
            raise TypeError(
                "format requires a mapping: the query uses named %%(%s)s "
                "markers but the parameters are a %s; pass a dict" % (part[0], type(params).__name__)
            )
        if part == 0:
            markers += 1
    if markers != len(values):
        prefix = (
            "not enough arguments for format string"
            if markers > len(values)
            else "not all arguments converted during string formatting"
        )
        raise TypeError(
            "%s: the query has %s but %s given"
            % (
                prefix,
                _plural(markers, "%s marker"),
                _plural(len(values), "value") + (" was" if len(values) == 1 else " were"),
            )
        )
    it = iter(values)
    for part in parts:
        if part.__class__ is str:
            out.append(part)
        else:
            out.append(encode(next(it)))
    return "".join(out)
