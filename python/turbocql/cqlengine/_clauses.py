"""The clauses of SET and DELETE: one column's assignment, a deleted column; and the
assignments of collection columns that write only what changed: a set's additions and
removals, a list's appended and prepended items, a map's changed keys (and the keys a
DELETE removes). ``_analyze()`` compares the value with the previous one; a clause with
nothing to write renders as '' and binds no value."""

from turbocql.cqlengine import UnicodeMixin


class BaseClause(UnicodeMixin):
    """One ``"field" <op> %(n)s`` of a statement."""

    def __init__(self, field, value):
        self.field = field
        self.value = value
        self.context_id = None

    def __hash__(self):
        return hash(self.field) ^ hash(self.value)

    def __eq__(self, other):
        return isinstance(other, self.__class__) and self.field == other.field and self.value == other.value

    def __ne__(self, other):
        return not self.__eq__(other)

    def get_context_size(self):
        return 1

    def set_context_id(self, i):
        self.context_id = i

    def update_context(self, ctx):
        ctx[str(self.context_id)] = self.value


class AssignmentClause(BaseClause):
    """``"field" = %(n)s``."""

    def __unicode__(self):
        return f'"{self.field}" = %({self.context_id})s'

    def insert_tuple(self):
        return self.field, self.context_id


class FieldDeleteClause(BaseClause):
    """A column (or ``"m"[%(n)s]``, a map's keys) a DELETE removes."""

    def __init__(self, field, keys=None):
        super().__init__(field, None)
        self.keys = list(keys) if keys else []

    def __unicode__(self):
        if not self.keys:
            return f'"{self.field}"'
        return ", ".join(f'"{self.field}"[%({self.context_id + i})s]' for i in range(len(self.keys)))

    def get_context_size(self):
        return len(self.keys)

    def update_context(self, ctx):
        for i, k in enumerate(self.keys):
            ctx[str(self.context_id + i)] = k


class ContainerUpdateClause(AssignmentClause):
    """A collection's new value against ``previous``; ``operation`` forces one change."""

    def __init__(self, field, value, operation=None, previous=None):
        super().__init__(field, value)
        self.previous = previous
        self._operation = operation
        self._analyzed = False

    def _analyze(self):
        raise NotImplementedError

    def _parts(self):
        """(CQL template with {f} and {c}, value) of each change, in order."""
        raise NotImplementedError

    def get_context_size(self):
        if not self._analyzed:
            self._analyze()
        return len(self._parts())

    def update_context(self, ctx):
        if not self._analyzed:
            self._analyze()
        for i, (_, value) in enumerate(self._parts()):
            ctx[str(self.context_id + i)] = value

    def __unicode__(self):
        if not self._analyzed:
            self._analyze()
        return ", ".join(t.format(f=self.field, c=self.context_id + i) for i, (t, _) in enumerate(self._parts()))


_ASSIGN = '"{f}" = %({c})s'
_ADD = '"{f}" = "{f}" + %({c})s'
_SUB = '"{f}" = "{f}" - %({c})s'
_PREPEND = '"{f}" = %({c})s + "{f}"'


class SetUpdateClause(ContainerUpdateClause):
    """A set: the whole value, or ``+ additions`` and ``- removals``."""

    def __init__(self, field, value, operation=None, previous=None):
        super().__init__(field, value, operation, previous)
        self._assignments = None
        self._additions = None
        self._removals = None

    def _analyze(self):
        value, prev = self.value, self.previous
        if self._operation == "add":
            self._additions = value or None
        elif self._operation == "remove":
            self._removals = value or None
        elif value is None or value == prev:
            pass
        elif prev is None or not prev or not value:
            self._assignments = value
        else:
            self._additions = (value - prev) or None
            self._removals = (prev - value) or None
        self._analyzed = True

    def _parts(self):
        parts = []
        if self._assignments is not None:
            parts.append((_ASSIGN, self._assignments))
        if self._additions is not None:
            parts.append((_ADD, self._additions))
        if self._removals is not None:
            parts.append((_SUB, self._removals))
        return parts


class ListUpdateClause(ContainerUpdateClause):
    """A list: the whole value, or items prepended and appended around the previous one."""

    def __init__(self, field, value, operation=None, previous=None):
        super().__init__(field, value, operation, previous)
        self._assignments = None
        self._append = None
        self._prepend = None

    def _analyze(self):
        value, prev = self.value, self.previous
        if self._operation == "append":
            self._append = value or None
        elif self._operation == "prepend":
            self._prepend = value or None
        elif value is None or value == prev:
            pass
        elif not prev or len(value) <= len(prev):
            self._assignments = value
        else:
            at = _find(value, prev)
            if at is None:
                self._assignments = value
            else:
                self._prepend = value[:at] or None
                self._append = value[at + len(prev) :] or None
        self._analyzed = True

    def _parts(self):
        parts = []
        if self._assignments is not None:
            parts.append((_ASSIGN, self._assignments))
        if self._prepend is not None:
            parts.append((_PREPEND, self._prepend))
        if self._append is not None:
            parts.append((_ADD, self._append))
        return parts


def _find(seq, sub):
    for i in range(len(seq) - len(sub) + 1):
        if seq[i : i + len(sub)] == sub:
            return i
    return None


class MapUpdateClause(ContainerUpdateClause):
    """A map: ``"m"[k] = v`` for each key whose value is new or changed."""

    def __init__(self, field, value, operation=None, previous=None):
        super().__init__(field, value, operation, previous)
        self._updates = None
        # A blind assignment of an empty map (no previous value known): ``"m" = {}``.
        self._emptied = False

    def _analyze(self):
        prev = self.previous or {}
        if self._operation == "update":
            self._updates = sorted(self.value.keys())
        else:
            self._updates = sorted(k for k, v in (self.value or {}).items() if k not in prev or prev[k] != v)
            self._emptied = self.previous is None and not self.value
        self._analyzed = True

    def get_context_size(self):
        if not self._analyzed:
            self._analyze()
        return 1 if self._emptied else 2 * len(self._updates)

    def update_context(self, ctx):
        if not self._analyzed:
            self._analyze()
        if self._emptied:
            ctx[str(self.context_id)] = {}
        for i, key in enumerate(self._updates):
            ctx[str(self.context_id + 2 * i)] = key
            ctx[str(self.context_id + 2 * i + 1)] = self.value[key]

    def __unicode__(self):
        if not self._analyzed:
            self._analyze()
        c = self.context_id
        if self._emptied:
            return f'"{self.field}" = %({c})s'
        return ", ".join(f'"{self.field}"[%({c + 2 * i})s] = %({c + 2 * i + 1})s' for i in range(len(self._updates)))


class MapDeleteClause(FieldDeleteClause):
    """The keys of ``previous`` that ``value`` no longer has: ``"m"[k], ...``."""

    def __init__(self, field, value, previous=None):
        super().__init__(field)
        self.value = value or {}
        self.previous = previous or {}
        self._removals = None
        self._analyzed = False

    def _analyze(self):
        self._removals = sorted(k for k in self.previous if k not in self.value)
        self.keys = self._removals
        self._analyzed = True

    def get_context_size(self):
        if not self._analyzed:
            self._analyze()
        return len(self._removals)

    def update_context(self, ctx):
        if not self._analyzed:
            self._analyze()
        super().update_context(ctx)

    def __unicode__(self):
        if not self._analyzed:
            self._analyze()
        return super().__unicode__()
