"""Server error messages as exception classes, under the classic driver's names.

The classic driver raises some server errors as the protocol's own error-message classes
(``SyntaxException``, ``ServerError``, ...); they live here, as in ``cassandra.protocol``.
So do the names of its result decoders, :class:`ProtocolHandler` and
:class:`NumpyProtocolHandler`, for ``session.client_protocol_handler``.
"""

from turbocql import (  # noqa: F401 - classic names of cassandra.protocol
    AlreadyExists,
    ConfigurationException,
    DriverException,
    FunctionFailure,
    InvalidRequest,
    ProtocolVersion,
    ReadFailure,
    ReadTimeout,
    RequestExecutionException,
    RequestValidationException,
    SchemaTargetType,
    Unauthorized,
    Unavailable,
    UnsupportedOperation,
    UserAggregateDescriptor,
    UserFunctionDescriptor,
    WriteFailure,
    WriteTimeout,
    WriteType,
)
from turbocql.cqltypes import (  # noqa: F401 - classic names of cassandra.protocol
    AsciiType,
    BooleanType,
    BytesType,
    ByteType,
    CounterColumnType,
    DateType,
    DecimalType,
    DoubleType,
    DurationType,
    FloatType,
    InetAddressType,
    Int32Type,
    IntegerType,
    ListType,
    LongType,
    MapType,
    SetType,
    ShortType,
    SimpleDateType,
    TimeType,
    TimeUUIDType,
    TupleType,
    UserType,
    UTF8Type,
    UUIDType,
    VarcharType,
    lookup_casstype,
)
from turbocql.marshal import (  # noqa: F401 - classic names of cassandra.protocol
    int8_unpack,
    int32_pack,
    int32_unpack,
    uint8_pack,
    uint16_pack,
    uint16_unpack,
    uint32_le_pack,
    uint32_le_unpack,
    uint32_pack,
    uint64_pack,
)
from turbocql.query import ColumnMetadata  # noqa: F401 - a classic name of cassandra.protocol


class ErrorMessage(DriverException):
    """An ERROR frame from the server."""

    error_code: int | None = None
    summary = "Unknown"

    @property
    def summary_msg(self):
        return str(self)

    def to_exception(self):
        return self


class ServerError(ErrorMessage):
    summary = "Server error"
    error_code = 0x0000


class ProtocolException(ErrorMessage):
    summary = "Protocol error"
    error_code = 0x000A


class BadCredentials(ErrorMessage):
    summary = "Bad credentials"
    error_code = 0x0100


class OverloadedErrorMessage(ErrorMessage, RequestExecutionException):
    summary = "Coordinator node overloaded"
    error_code = 0x1001


class IsBootstrappingErrorMessage(ErrorMessage, RequestExecutionException):
    summary = "Coordinator node is bootstrapping"
    error_code = 0x1002


class TruncateError(ErrorMessage, RequestExecutionException):
    summary = "Error during truncate"
    error_code = 0x1003


class SyntaxException(ErrorMessage, RequestValidationException):
    """A CQL syntax error."""

    summary = "Syntax error in CQL query"
    error_code = 0x2000


class UnauthorizedErrorMessage(ErrorMessage, RequestValidationException):
    summary = "Unauthorized"
    error_code = 0x2100


class InvalidRequestException(ErrorMessage, RequestValidationException):
    summary = "Invalid query"
    error_code = 0x2200


class ConfigurationExceptionMessage(ErrorMessage, ConfigurationException):
    summary = "Query invalid because of configuration issue"
    error_code = 0x2300


class PreparedQueryNotFound(ErrorMessage, RequestValidationException):
    summary = "Matching prepared statement not found on this node"
    error_code = 0x2500


class ProtocolHandler:
    """The default ``session.client_protocol_handler``: rows go through ``row_factory``."""


class NumpyProtocolHandler(ProtocolHandler):
    """``session.client_protocol_handler = NumpyProtocolHandler``: each page is decoded in
    the engine into one dict of column name -> numpy array, whatever the row factory (the
    same as ``session.row_factory = turbocql.query.numpy_factory``)."""


# The other error messages of the protocol, for classic code that names them. The engine
# raises the matching exceptions of the turbocql package (Unavailable, ReadTimeout, ...).


class UnavailableErrorMessage(ErrorMessage, RequestExecutionException):
    summary = "Unavailable exception"
    error_code = 0x1000


class WriteTimeoutErrorMessage(ErrorMessage, RequestExecutionException):
    summary = "Coordinator node timed out waiting for replica nodes' responses"
    error_code = 0x1100


class ReadTimeoutErrorMessage(ErrorMessage, RequestExecutionException):
    summary = "Coordinator node timed out waiting for replica nodes' responses"
    error_code = 0x1200


class ReadFailureMessage(ErrorMessage, RequestExecutionException):
    summary = "Replica(s) failed to execute read"
    error_code = 0x1300


class FunctionFailureMessage(ErrorMessage, RequestExecutionException):
    summary = "User Defined Function failure"
    error_code = 0x1400


class WriteFailureMessage(ErrorMessage, RequestExecutionException):
    summary = "Replica(s) failed to execute write"
    error_code = 0x1500


class CDCWriteException(ErrorMessage, RequestExecutionException):
    summary = "Failed to execute write due to CDC space exhaustion."
    error_code = 0x1600


class AlreadyExistsException(ErrorMessage, ConfigurationException):
    summary = "Item already exists"
    error_code = 0x2400


class ClientWriteError(ErrorMessage, RequestExecutionException):
    summary = "Client write failure."
    error_code = 0x8000


class InternalError(Exception):
    """An internal error of the protocol layer."""


class NotSupportedError(Exception):
    """A protocol feature the connection does not support."""
