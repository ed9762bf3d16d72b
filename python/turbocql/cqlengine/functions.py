"""Values of a WHERE clause computed by the server: ``token()``, ``minTimeuuid()``,
``maxTimeuuid()``; ``QueryValue`` is a plain bound value."""

from datetime import datetime

from turbocql.cqlengine import UnicodeMixin, ValidationError


class QueryValue(UnicodeMixin):
    """A value bound as ``%(n)s``; ``context_id`` is its name in the statement's parameters."""

    format_string = "%({0})s"

    def __init__(self, value):
        self.value = value
        self.context_id = None

    def __unicode__(self):
        return self.format_string.format(self.context_id)

    def set_context_id(self, ctx_id):
        self.context_id = ctx_id

    def get_context_size(self):
        return 1

    def update_context(self, ctx):
        ctx[str(self.context_id)] = self.value


class BaseQueryFunction(QueryValue):
    """A CQL function applied to bound values."""


def _epoch_ms(value):
    if not isinstance(value, datetime):
        raise ValidationError("datetime instance is required")
    if value.tzinfo is not None:
        value = value.replace(tzinfo=None) - value.utcoffset()
    return int((value - datetime(1970, 1, 1)).total_seconds() * 1000)


class TimeUUIDQueryFunction(BaseQueryFunction):
    def __init__(self, value):
        super().__init__(value)

    def update_context(self, ctx):
        ctx[str(self.context_id)] = _epoch_ms(self.value)


class MinTimeUUID(TimeUUIDQueryFunction):
    """``minTimeuuid(t)``: the smallest timeuuid of datetime ``t``."""

    format_string = "MinTimeUUID(%({0})s)"


class MaxTimeUUID(TimeUUIDQueryFunction):
    """``maxTimeuuid(t)``: the largest timeuuid of datetime ``t``."""

    format_string = "MaxTimeUUID(%({0})s)"


class Token(BaseQueryFunction):
    """``token(v1, v2, ...)``: compared with a model's ``pk__token``."""

    def __init__(self, *values):
        if len(values) == 1 and isinstance(values[0], (list, tuple)):
            values = values[0]
        super().__init__(values)
        self._columns = None

    def set_columns(self, columns):
        self._columns = columns

    def get_context_size(self):
        return len(self.value)

    def __unicode__(self):
        names = [f"%({self.context_id + i})s" for i in range(self.get_context_size())]
        return "token({})".format(", ".join(names))

    def update_context(self, ctx):
        columns = self._columns or [None] * len(self.value)
        for i, (col, val) in enumerate(zip(columns, self.value)):
            ctx[str(self.context_id + i)] = col.to_database(val) if col is not None else val


def get_total_seconds(td):
    """The seconds of a timedelta, as a float."""
    return td.total_seconds()
