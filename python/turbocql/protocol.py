"""Server error messages as exception classes, under the classic driver's names.

The classic driver raises some server errors as the protocol's own error-message classes
(``SyntaxException``, ``ServerError``, ...); they live here, as in ``cassandra.protocol``.
So do the names of its result decoders, :class:`ProtocolHandler` and
:class:`NumpyProtocolHandler`, for ``session.client_protocol_handler``.
"""

from turbocql import ConfigurationException, DriverException, RequestExecutionException, RequestValidationException


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
