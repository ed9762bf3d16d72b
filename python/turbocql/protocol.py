"""Server error messages as exception classes, under the classic driver's names.

The classic driver raises some server errors as the protocol's own error-message classes
(``SyntaxException``, ``ServerError``, ...); they live here, as in ``cassandra.protocol``.
So do the names of its result decoders, :class:`ProtocolHandler` and
:class:`NumpyProtocolHandler`, for ``session.client_protocol_handler``.
"""

import socket

from turbocql import (  # noqa: F401 - classic names of cassandra.protocol
    AlreadyExists,
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
from turbocql import ConfigurationException as _ConfigurationException
from turbocql._query.messages import (  # noqa: F401 - classic names of cassandra.protocol
    CUSTOM_TYPE,
    RESULT_KIND_PREPARED,
    RESULT_KIND_ROWS,
    RESULT_KIND_SCHEMA_CHANGE,
    RESULT_KIND_SET_KEYSPACE,
    RESULT_KIND_VOID,
    BatchMessage,
    ExecuteMessage,
    QueryMessage,
    ResultMessage,
    _MessageType,
)
from turbocql._util.homes import publish as _publish
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
    int64_unpack,
    uint8_pack,
    uint16_pack,
    uint16_unpack,
    uint32_le_pack,
    uint32_le_unpack,
    uint32_pack,
    uint64_pack,
)
from turbocql.query import UNSET_VALUE as _UNSET_VALUE
from turbocql.query import ColumnMetadata  # noqa: F401 - a classic name of cassandra.protocol


class ErrorMessage(DriverException):
    """An ERROR frame from the server."""

    error_code: int | None = None
    summary = "Unknown"
    # The classic ErrorMessage's extra information (None for the errors that carry none).
    info = None

    @property
    def code(self):
        """The server's error code, as the classic ``ErrorMessage.code``."""
        return self.error_code

    @property
    def summary_msg(self):
        return str(self.args[0]) if self.args else ""

    def __str__(self):
        # As the classic driver: the summary in angle brackets.
        return "<%s>" % self.summary_msg

    @property
    def message(self):
        """The server's own message (without the code and summary around it)."""
        text = self.summary_msg
        start = text.find(' message="')
        return text[start + len(' message="') : -1] if start >= 0 and text.endswith('"') else text

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


class ConfigurationException(ErrorMessage, _ConfigurationException):
    """A configuration error from the server (code 0x2300). As the classic
    ``cassandra.protocol.ConfigurationException`` it is raised as the error message itself
    (``str`` in angle brackets, ``code``, ``message``); it is also a
    :class:`turbocql.ConfigurationException`."""

    summary = "Query invalid because of configuration issue"
    error_code = 0x2300


ConfigurationExceptionMessage = ConfigurationException


class PreparedQueryNotFound(ErrorMessage, RequestValidationException):
    summary = "Matching prepared statement not found on this node"
    error_code = 0x2500


class ProtocolHandler:
    """The default ``session.client_protocol_handler``: rows go through ``row_factory``."""

    message_types_by_opcode: dict = {}  # set below, once the message classes exist


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


class AlreadyExistsException(ErrorMessage, _ConfigurationException):
    summary = "Item already exists"
    error_code = 0x2400


class ClientWriteError(ErrorMessage, RequestExecutionException):
    summary = "Client write failure."
    error_code = 0x8000


class InternalError(Exception):
    """An internal error of the protocol layer."""


class NotSupportedError(Exception):
    """A protocol feature the connection does not support."""


# The protocol's primitive codecs ([int], [short], [string], [bytes]...), on file-like
# objects, as in cassandra.protocol: pure functions of the bytes, for code that reads or
# writes a protocol value itself (custom payloads, a paging state, tests).


def read_byte(f):
    return int8_unpack(f.read(1))


def write_byte(f, b):
    f.write(uint8_pack(b))


def read_int(f):
    return int32_unpack(f.read(4))


def write_int(f, i):
    f.write(int32_pack(i))


def write_uint(f, i):
    f.write(uint32_pack(i))


def read_long(f):
    return int64_unpack(f.read(8))


def write_long(f, i):
    f.write(uint64_pack(i))


def read_short(f):
    return uint16_unpack(f.read(2))


def write_short(f, s):
    f.write(uint16_pack(s))


read_consistency_level = read_short
write_consistency_level = write_short


def read_binary_string(f):
    return f.read(read_short(f))


def read_string(f):
    return read_binary_string(f).decode("utf8")


def write_string(f, s):
    if isinstance(s, str):
        s = s.encode("utf8")
    write_short(f, len(s))
    f.write(s)


def read_binary_longstring(f):
    return f.read(read_int(f))


def read_longstring(f):
    return read_binary_longstring(f).decode("utf8")


def write_longstring(f, s):
    if isinstance(s, str):
        s = s.encode("utf8")
    write_int(f, len(s))
    f.write(s)


def read_stringlist(f):
    return [read_string(f) for _ in range(read_short(f))]


def write_stringlist(f, stringlist):
    write_short(f, len(stringlist))
    for s in stringlist:
        write_string(f, s)


def read_stringmap(f):
    return {read_string(f): read_string(f) for _ in range(read_short(f))}


def write_stringmap(f, strmap):
    write_short(f, len(strmap))
    for k, v in strmap.items():
        write_string(f, k)
        write_string(f, v)


def read_value(f):
    size = read_int(f)
    return None if size < 0 else f.read(size)


def write_value(f, v):
    if v is None:
        write_int(f, -1)
    elif v is _UNSET_VALUE:
        write_int(f, -2)
    else:
        write_int(f, len(v))
        f.write(v)


def read_bytesmap(f):
    return {read_string(f): read_value(f) for _ in range(read_short(f))}


def write_bytesmap(f, bytesmap):
    write_short(f, len(bytesmap))
    for k, v in bytesmap.items():
        write_string(f, k)
        write_value(f, v)


def read_stringmultimap(f):
    return {read_string(f): read_stringlist(f) for _ in range(read_short(f))}


def write_stringmultimap(f, strmmap):
    write_short(f, len(strmmap))
    for k, v in strmmap.items():
        write_string(f, k)
        write_stringlist(f, v)


def read_inet_addr_only(f):
    size = read_byte(f)
    addrbytes = f.read(size)
    if size == 4:
        return socket.inet_ntop(socket.AF_INET, addrbytes)
    if size == 16:
        return socket.inet_ntop(socket.AF_INET6, addrbytes)
    raise InternalError("bad inet address: %r" % (addrbytes,))


def read_inet(f):
    addr = read_inet_addr_only(f)
    return addr, read_int(f)


def write_inet(f, addrtuple):
    addr, port = addrtuple
    addrbytes = socket.inet_pton(socket.AF_INET6 if ":" in addr else socket.AF_INET, addr)
    write_byte(f, len(addrbytes))
    f.write(addrbytes)
    write_int(f, port)


class LazyProtocolHandler(ProtocolHandler):
    """The classic driver's lazily decoding handler (Cython). turbocql's engine decodes each
    page in Rust as it arrives, so this behaves as :class:`ProtocolHandler`: iterating the
    result set gives the same rows in the same order."""


ProtocolHandler.message_types_by_opcode = {
    0x00: ErrorMessage,
    0x07: QueryMessage,  # their opcodes
    0x08: ResultMessage,
}
_STANDARD_HANDLERS = (ProtocolHandler, NumpyProtocolHandler, LazyProtocolHandler)


def _check_protocol_handler(handler):
    """Raises UnsupportedOperation for a ``client_protocol_handler`` that would change how
    frames are written or read (its own ``message_types_by_opcode``, ``encode_message`` or
    ``decode_message``): the engine does that, and would silently ignore it."""
    if handler in _STANDARD_HANDLERS:
        return
    for attr in ("message_types_by_opcode", "my_opcodes", "encode_message", "decode_message"):
        value = getattr(handler, attr, None)
        default = getattr(ProtocolHandler, attr, None)
        if value is not None and value is not default and value != default:
            raise UnsupportedOperation(
                "client_protocol_handler %r sets %s: turbocql's engine encodes and decodes "
                "every frame itself, so a custom protocol handler cannot apply "
                "(ProtocolHandler, LazyProtocolHandler and NumpyProtocolHandler are supported)"
                % (getattr(handler, "__name__", handler), attr)
            )


# This module is the home of the classic message classes of turbocql._query.messages (reprs,
# pickles name turbocql.protocol).
_publish(__name__, ["BatchMessage", "ExecuteMessage", "QueryMessage", "ResultMessage"])
