"""The statement base classes of ``turbocql.query`` (which re-exports every name here):
:class:`Statement` (the options every statement has, and their checks) and
:class:`SimpleStatement` (a query string), with the markers ``UNSET_VALUE`` and
``FETCH_SIZE_UNSET``. The engine reads these statements' attributes per request
(src/exec/statement.rs).
"""

from turbocql import ConsistencyLevel


class _UnsetValue:
    """Leaves a bound column untouched (protocol v4 'unset')."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "UNSET_VALUE"

    def __reduce__(self):
        return (_UnsetValue, ())


UNSET_VALUE = _UnsetValue()
"""Bind this to leave a column untouched instead of writing null."""

FETCH_SIZE_UNSET = object()
"""The default of ``Statement.fetch_size``: use ``Session.default_fetch_size``."""


class _SerialConsistencyLevel:
    """``statement.serial_consistency_level``: checked when assigned (SERIAL, LOCAL_SERIAL or
    None, else ValueError, as in the classic driver). It has no ``__get__``, so reading it
    (the engine does, per request) is a plain instance-dict lookup with no Python call."""

    def __set__(self, obj, value):
        if value is not None and value not in (8, 9):
            raise ValueError(
                "serial_consistency_level must be either ConsistencyLevel.SERIAL or ConsistencyLevel.LOCAL_SERIAL"
            )
        obj.__dict__["serial_consistency_level"] = value

    def __delete__(self, obj):
        obj.__dict__["serial_consistency_level"] = None


class _Refused:
    """A statement attribute the engine does not apply: None (the default) only; any other
    value raises ``UnsupportedOperation`` naming it, given to the constructor or assigned."""

    def __init__(self, why):
        self.why = why

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None
        return obj.__dict__.get(self.name)

    def __set__(self, obj, value):
        if value is not None:
            from turbocql import UnsupportedOperation

            raise UnsupportedOperation("%s.%s: %s" % (type(obj).__name__, self.name, self.why))
        obj.__dict__[self.name] = None


# The classic driver sends these with the request; the engine does not (see the audit,
# docs/audit-accepted-settings.md).
_RETRY_POLICY = _Refused(
    "a per-statement retry policy is not supported: the engine applies the execution profile's "
    "retry_policy (give the statement an execution_profile whose retry_policy is the one wanted)"
)
_CUSTOM_PAYLOAD = _Refused("custom payloads are not supported by turbocql (the scylla crate sends none)")


class Statement:
    """Options shared by every kind of statement."""

    retry_policy = _RETRY_POLICY
    consistency_level = None
    fetch_size = FETCH_SIZE_UNSET
    keyspace = None
    table = None
    custom_payload = _CUSTOM_PAYLOAD
    is_idempotent = False
    _routing_key = None

    def __init__(
        self,
        retry_policy=None,
        consistency_level=None,
        routing_key=None,
        serial_consistency_level=None,
        fetch_size=FETCH_SIZE_UNSET,
        keyspace=None,
        custom_payload=None,
        is_idempotent=False,
        table=None,
    ):
        # Made per request: the checking setters (Python calls) run only for a value they
        # could refuse; None, the default, is what their getters read when unset.
        if retry_policy is not None:
            self.retry_policy = retry_policy
        self.consistency_level = consistency_level
        if serial_consistency_level is None:
            self.__dict__["serial_consistency_level"] = None
        else:
            self.serial_consistency_level = serial_consistency_level
        self._routing_key = routing_key  # as given (the setter packs lists; __init__ does not)
        if fetch_size is not FETCH_SIZE_UNSET:
            self.fetch_size = fetch_size
        self.keyspace = keyspace
        self.table = table
        if custom_payload is not None:
            self.custom_payload = custom_payload
        self.is_idempotent = is_idempotent

    def _get_routing_key(self):
        return self._routing_key

    def _set_routing_key(self, key):
        """A serialized key, or a list/tuple of serialized components (one: itself;
        several: packed as a composite key), as in the classic driver."""
        if isinstance(key, (list, tuple)):
            key = key[0] if len(key) == 1 else _pack_routing_key(key)
        self._routing_key = key

    def _del_routing_key(self):
        self._routing_key = None

    routing_key = property(_get_routing_key, _set_routing_key, _del_routing_key)

    serial_consistency_level = _SerialConsistencyLevel()


def _pack_routing_key(parts):
    """A composite partition key's routing key: each component as [short length][bytes][0]."""
    return b"".join(len(p).to_bytes(2, "big") + p + b"\x00" for p in parts)


def _consistency_name(level):
    return ConsistencyLevel.value_to_name.get(level, "Not Set")


class SimpleStatement(Statement):
    """A query string, with optional ``%s`` / ``%(name)s`` parameters encoded client-side."""

    def __init__(
        self,
        query_string,
        retry_policy=None,
        consistency_level=None,
        routing_key=None,
        serial_consistency_level=None,
        fetch_size=FETCH_SIZE_UNSET,
        keyspace=None,
        custom_payload=None,
        is_idempotent=False,
    ):
        Statement.__init__(
            self,
            retry_policy,
            consistency_level,
            routing_key,
            serial_consistency_level,
            fetch_size,
            keyspace,
            custom_payload,
            is_idempotent,
        )
        self._query_string = query_string

    @property
    def query_string(self):
        return self._query_string

    def __str__(self):
        return '<SimpleStatement query="%s", consistency=%s>' % (
            self.query_string,
            _consistency_name(self.consistency_level),
        )

    __repr__ = __str__
