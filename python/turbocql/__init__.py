"""turbocql: a Python driver for Apache Cassandra and ScyllaDB with a Rust engine.

The classic driver's API under the name ``turbocql``: this module holds what
``cassandra/__init__.py`` holds there, namely :class:`ConsistencyLevel`, :class:`WriteType`
and the exception classes. Sessions live in :mod:`turbocql.cluster`, statements in
:mod:`turbocql.query`.
"""

import logging
from typing import ClassVar

__version_info__ = (0, 1, 0)
__version__ = ".".join(map(str, __version_info__))


class ConsistencyLevel:
    """Consistency levels, with the protocol's numeric values."""

    ANY = 0
    ONE = 1
    TWO = 2
    THREE = 3
    QUORUM = 4
    ALL = 5
    LOCAL_QUORUM = 6
    EACH_QUORUM = 7
    SERIAL = 8
    LOCAL_SERIAL = 9
    LOCAL_ONE = 10

    # Filled in below, from the levels above.
    value_to_name: ClassVar[dict[int, str]]
    name_to_value: ClassVar[dict[str, int]]

    @staticmethod
    def is_serial(cl):
        return cl in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL)


ConsistencyLevel.value_to_name = {v: k for k, v in vars(ConsistencyLevel).items() if k.isupper() and isinstance(v, int)}
ConsistencyLevel.name_to_value = {v: k for k, v in ConsistencyLevel.value_to_name.items()}


def consistency_value_to_name(value):
    return ConsistencyLevel.value_to_name[value] if value is not None else "Not Set"


class ProtocolVersion:
    """Native protocol versions. The engine speaks v4 (see docs/migrating.md)."""

    V1, V2, V3, V4, V5, V6 = 1, 2, 3, 4, 5, 6
    DSE_V1, DSE_V2 = 0x41, 0x42
    SUPPORTED_VERSIONS = (V4,)
    BETA_VERSIONS = ()
    MIN_SUPPORTED = V4
    MAX_SUPPORTED = V4

    # What each protocol version has (the classic class's predicates, on version numbers).
    @classmethod
    def get_lower_supported(cls, previous_version):
        """The highest supported non-beta version below ``previous_version``, or 0."""
        lower = [v for v in cls.SUPPORTED_VERSIONS if v not in cls.BETA_VERSIONS and v < previous_version]
        return max(lower) if lower else 0

    @classmethod
    def uses_int_query_flags(cls, version):
        return version >= cls.V5

    @classmethod
    def uses_prepare_flags(cls, version):
        return version >= cls.V5 and version != cls.DSE_V1

    @classmethod
    def uses_prepared_metadata(cls, version):
        return version >= cls.V5 and version != cls.DSE_V1

    @classmethod
    def uses_error_code_map(cls, version):
        return version >= cls.V5

    @classmethod
    def uses_keyspace_flag(cls, version):
        return version >= cls.V5 and version != cls.DSE_V1

    @classmethod
    def has_continuous_paging_support(cls, version):
        return version >= cls.DSE_V1

    @classmethod
    def has_continuous_paging_next_pages(cls, version):
        return version >= cls.DSE_V2

    @classmethod
    def has_checksumming_support(cls, version):
        return cls.V5 <= version < cls.DSE_V1


class WriteType:
    """The kind of write that timed out or failed (``WriteTimeout.write_type``)."""

    SIMPLE = 0
    BATCH = 1
    UNLOGGED_BATCH = 2
    COUNTER = 3
    BATCH_LOG = 4
    CAS = 5
    VIEW = 6
    CDC = 7

    # Filled in below, from the kinds above.
    name_to_value: ClassVar[dict[str, int]]
    value_to_name: ClassVar[dict[int, str]]


WriteType.name_to_value = {k: v for k, v in vars(WriteType).items() if k.isupper() and isinstance(v, int)}
WriteType.value_to_name = {v: k for k, v in WriteType.name_to_value.items()}


class DriverException(Exception):
    """Base class for exceptions raised by this driver."""


class RequestExecutionException(DriverException):
    """The request was valid but could not be executed."""


class Unavailable(RequestExecutionException):
    """Not enough replicas were alive to satisfy the consistency level."""

    consistency = None
    required_replicas = None
    alive_replicas = None

    def __init__(self, summary_message, consistency=None, required_replicas=None, alive_replicas=None):
        self.consistency = consistency
        self.required_replicas = required_replicas
        self.alive_replicas = alive_replicas
        Exception.__init__(
            self,
            summary_message
            + " info="
            + repr(
                {
                    "consistency": consistency_value_to_name(consistency),
                    "required_replicas": required_replicas,
                    "alive_replicas": alive_replicas,
                }
            ),
        )


class Timeout(RequestExecutionException):
    """Replicas failed to answer the coordinator in time."""

    consistency = None
    required_responses = None
    received_responses = None

    def __init__(self, summary_message, consistency=None, required_responses=None, received_responses=None, **kwargs):
        self.consistency = consistency
        self.required_responses = required_responses
        self.received_responses = received_responses
        if "write_type" in kwargs:
            # The message names the write type ('SIMPLE', ...), as the classic driver's does.
            wt = kwargs["write_type"]
            kwargs["write_type"] = WriteType.value_to_name.get(wt, wt) if isinstance(wt, int) else wt
        info = {
            "consistency": consistency_value_to_name(consistency),
            "required_responses": required_responses,
            "received_responses": received_responses,
        }
        info.update(kwargs)
        Exception.__init__(self, summary_message + " info=" + repr(info))


class ReadTimeout(Timeout):
    """Replicas did not answer a read in time."""

    data_retrieved = None

    def __init__(self, message, data_retrieved=None, **kwargs):
        Timeout.__init__(self, message, **kwargs)
        self.data_retrieved = data_retrieved


class WriteTimeout(Timeout):
    """Replicas did not acknowledge a write in time."""

    write_type = None

    def __init__(self, message, write_type=None, **kwargs):
        if isinstance(write_type, str):
            write_type = WriteType.name_to_value.get(write_type, write_type)
        kwargs["write_type"] = write_type
        Timeout.__init__(self, message, **kwargs)
        self.write_type = write_type


class CDCWriteFailure(RequestExecutionException):
    """A write was rejected because the CDC space is full."""


class CoordinationFailure(RequestExecutionException):
    """Replicas answered the coordinator with failures."""

    consistency = None
    required_responses = None
    received_responses = None
    failures = None
    error_code_map = None

    def __init__(
        self,
        summary_message,
        consistency=None,
        required_responses=None,
        received_responses=None,
        failures=None,
        error_code_map=None,
    ):
        self.consistency = consistency
        self.required_responses = required_responses
        self.received_responses = received_responses
        self.failures = failures
        self.error_code_map = error_code_map
        info = {
            "consistency": consistency_value_to_name(consistency),
            "required_responses": required_responses,
            "received_responses": received_responses,
            "failures": failures,
        }
        Exception.__init__(self, summary_message + " info=" + repr(info))


class ReadFailure(CoordinationFailure):
    data_retrieved = None

    def __init__(self, message, data_retrieved=None, **kwargs):
        CoordinationFailure.__init__(self, message, **kwargs)
        self.data_retrieved = data_retrieved


class WriteFailure(CoordinationFailure):
    write_type = None

    def __init__(self, message, write_type=None, **kwargs):
        CoordinationFailure.__init__(self, message, **kwargs)
        if isinstance(write_type, str):
            write_type = WriteType.name_to_value.get(write_type, write_type)
        self.write_type = write_type


class FunctionFailure(RequestExecutionException):
    """A user-defined function failed on the server."""

    keyspace = None
    function = None
    arg_types = None

    def __init__(self, summary_message, keyspace, function, arg_types):
        self.keyspace = keyspace
        self.function = function
        self.arg_types = arg_types
        Exception.__init__(self, summary_message)


class RequestValidationException(DriverException):
    """The server rejected the request as invalid."""


class ConfigurationException(RequestValidationException):
    """The request is invalid because of a configuration issue."""


class AlreadyExists(ConfigurationException):
    """A keyspace or table being created already exists."""

    keyspace = None
    table = None

    def __init__(self, keyspace=None, table=None):
        if table:
            message = "Table '%s.%s' already exists" % (keyspace, table)
        else:
            message = "Keyspace '%s' already exists" % (keyspace,)
        Exception.__init__(self, message)
        self.keyspace = keyspace
        self.table = table


class InvalidRequest(RequestValidationException):
    """The request was invalid (unknown keyspace or table, wrong values...)."""


class Unauthorized(RequestValidationException):
    """The user lacks the permission for the request."""


class AuthenticationFailed(DriverException):
    """Authentication with the server failed (bad credentials)."""


class OperationTimedOut(DriverException):
    """The client-side timeout elapsed before the server answered."""

    errors = None
    last_host = None

    def __init__(self, errors=None, last_host=None):
        self.errors = errors
        self.last_host = last_host
        message = "errors=%s, last_host=%s" % (self.errors, self.last_host)
        Exception.__init__(self, message)


class UnsupportedOperation(DriverException):
    """The operation is not supported by this driver or protocol version."""


class UnresolvableContactPoints(DriverException):
    """None of the contact points could be resolved."""


class DependencyException(Exception):
    """An optional dependency is missing."""

    def __init__(self, msg, excs=[]):  # noqa: B006 - classic signature
        complete_msg = msg
        if excs:
            complete_msg += "\nThe following exceptions were observed: \n - " + "\n - ".join(str(e) for e in excs)
        Exception.__init__(self, complete_msg)


class NullHandler(logging.Handler):
    """A logging handler that drops records (the classic driver's)."""

    def emit(self, record):
        pass


class SchemaChangeType:
    """The kinds of schema change of a SCHEMA_CHANGE event."""

    DROPPED = "DROPPED"
    CREATED = "CREATED"
    UPDATED = "UPDATED"


class SchemaTargetType:
    """The kinds of schema element a schema change is about."""

    KEYSPACE = "KEYSPACE"
    TABLE = "TABLE"
    TYPE = "TYPE"
    FUNCTION = "FUNCTION"
    AGGREGATE = "AGGREGATE"


class SignatureDescriptor:
    """A function's name and argument types; ``signature`` spells them ``name(t1,t2)``."""

    def __init__(self, name, argument_types):
        self.name = name
        self.argument_types = argument_types

    @property
    def signature(self):
        return self.format_signature(self.name, self.argument_types)

    @staticmethod
    def format_signature(name, argument_types):
        return "%s(%s)" % (name, ",".join(t for t in argument_types))

    def __repr__(self):
        return "%s(%s, %s)" % (self.__class__.__name__, self.name, self.argument_types)


class UserFunctionDescriptor(SignatureDescriptor):
    """Describes a user-defined function by name and argument types."""


class UserAggregateDescriptor(SignatureDescriptor):
    """Describes a user-defined aggregate by name and argument types."""
