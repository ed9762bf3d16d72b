"""The CQL values Python lacks, as the classic driver's classes (re-exported by
``turbocql.util``): :class:`Date`, :class:`Time` and :class:`Duration`, and the DSE
``DateRangeType`` value, :class:`DateRange` with its :class:`DateRangeBound` and
:class:`DateRangePrecision`.
"""

import datetime
import functools
import re

from turbocql._util.times import ms_timestamp_from_datetime, utc_datetime_from_ms_timestamp

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
