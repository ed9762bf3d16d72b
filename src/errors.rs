//! Errors: turns the scylla crate's errors into the classic driver's exception classes.
//!
//! The classes themselves are Python classes (`turbocql/__init__.py`, `turbocql.protocol`,
//! `turbocql.cluster.NoHostAvailable`, `turbocql.connection.ConnectionException`), held by
//! [`crate::pyrefs`]. Server errors
//! keep their fields as attributes (`consistency`, `required_replicas`, ...), as in the
//! classic driver.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::net::SocketAddr;
use std::time::Duration;

use crate::pyrefs::{self, Exc};
use scylla::errors::{
    BrokenConnectionError, BrokenConnectionErrorKind, ConnectionError, ConnectionPoolError, ConnectionSetupRequestError, ConnectionSetupRequestErrorKind,
    DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError, UseKeyspaceError,
};
use scylla_cql::frame::frame_errors::{FrameBodyExtensionsParseError, FrameHeaderParseError};

/// Builds an instance of the classic driver's exception class `exc`.
pub fn make<'py>(py: Python<'py>, exc: Exc, args: impl pyo3::call::PyCallArgs<'py>, kwargs: Option<&Bound<'py, PyDict>>) -> PyErr {
    let cls = match pyrefs::exception(py, exc) {
        Ok(c) => c.clone(),
        Err(e) => return e,
    };
    match cls.call(args, kwargs) {
        Ok(obj) => PyErr::from_value(obj),
        Err(e) => e,
    }
}

fn kwargs<'py>(py: Python<'py>, items: &[(&str, Bound<'py, PyAny>)]) -> Bound<'py, PyDict> {
    let d = PyDict::new(py);
    for (k, v) in items {
        let _ = d.set_item(k, v);
    }
    d
}

fn server_message(code: i32, summary: &str, msg: &str) -> String {
    format!("Error from server: code={code:04x} [{summary}] message=\"{msg}\"")
}

/// The classic driver's exception class for a server-side error (also named in the spans of
/// `exec::tracing`, where no Python exception is made).
pub fn db_error_class(err: &DbError) -> Exc {
    match err {
        DbError::SyntaxError => Exc::SyntaxException,
        DbError::Invalid => Exc::InvalidRequest,
        DbError::AlreadyExists { .. } => Exc::AlreadyExists,
        DbError::FunctionFailure { .. } => Exc::FunctionFailure,
        DbError::AuthenticationError => Exc::AuthenticationFailed,
        DbError::Unauthorized => Exc::Unauthorized,
        DbError::ConfigError => Exc::ConfigurationException,
        DbError::Unavailable { .. } => Exc::Unavailable,
        DbError::ReadTimeout { .. } => Exc::ReadTimeout,
        DbError::WriteTimeout { .. } => Exc::WriteTimeout,
        DbError::ReadFailure { .. } => Exc::ReadFailure,
        DbError::WriteFailure { .. } => Exc::WriteFailure,
        DbError::Overloaded => Exc::OverloadedErrorMessage,
        DbError::IsBootstrapping => Exc::IsBootstrappingErrorMessage,
        DbError::TruncateError => Exc::TruncateError,
        DbError::ProtocolError => Exc::ProtocolException,
        DbError::Unprepared { .. } => Exc::PreparedQueryNotFound,
        DbError::Other(_) => Exc::ErrorMessage,
        _ => Exc::ServerError,
    }
}

/// A server-side error (an ERROR frame) as the classic driver's exception.
pub fn db_error(py: Python<'_>, err: &DbError, msg: &str) -> PyErr {
    let i = |v: i32| v.into_pyobject(py).unwrap().into_any();
    let s = |v: &str| v.into_pyobject(py).unwrap().into_any();
    let b = |v: bool| pyo3::types::PyBool::new(py, v).to_owned().into_any();
    let class = db_error_class(err);
    match err {
        DbError::SyntaxError => make(py, class, (server_message(0x2000, "Syntax error in CQL query", msg),), None),
        DbError::Invalid => make(py, class, (server_message(0x2200, "Invalid query", msg),), None),
        DbError::AlreadyExists { keyspace, table } => {
            // An empty table (a keyspace that exists) stays '', as the classic driver keeps it.
            let kw = kwargs(py, &[("keyspace", s(keyspace)), ("table", s(table))]);
            make(py, class, (), Some(&kw))
        }
        DbError::FunctionFailure { keyspace, function, arg_types } => {
            make(py, class, (server_message(0x1400, "User Defined Function failure", msg), keyspace.clone(), function.clone(), arg_types.clone()), None)
        }
        DbError::AuthenticationError => make(py, class, (server_message(0x0100, "Bad credentials", msg),), None),
        DbError::Unauthorized => make(py, class, (server_message(0x2100, "Unauthorized", msg),), None),
        DbError::ConfigError => make(py, class, (server_message(0x2300, "Query invalid because of configuration issue", msg),), None),
        DbError::Unavailable { consistency, required, alive } => {
            let kw = kwargs(py, &[("consistency", i(*consistency as i32)), ("required_replicas", i(*required)), ("alive_replicas", i(*alive))]);
            make(py, class, (server_message(0x1000, "Unavailable exception", msg),), Some(&kw))
        }
        DbError::ReadTimeout { consistency, received, required, data_present } => {
            let kw = kwargs(
                py,
                &[
                    ("consistency", i(*consistency as i32)),
                    ("required_responses", i(*required)),
                    ("received_responses", i(*received)),
                    ("data_retrieved", b(*data_present)),
                ],
            );
            make(py, class, (server_message(0x1200, "Coordinator node timed out waiting for replica nodes' responses", msg),), Some(&kw))
        }
        DbError::WriteTimeout { consistency, received, required, write_type } => {
            let kw = kwargs(
                py,
                &[
                    ("consistency", i(*consistency as i32)),
                    ("required_responses", i(*required)),
                    ("received_responses", i(*received)),
                    ("write_type", s(write_type.as_str())),
                ],
            );
            make(py, class, (server_message(0x1100, "Coordinator node timed out waiting for replica nodes' responses", msg),), Some(&kw))
        }
        DbError::ReadFailure { consistency, received, required, numfailures, data_present } => {
            let kw = kwargs(
                py,
                &[
                    ("consistency", i(*consistency as i32)),
                    ("required_responses", i(*required)),
                    ("received_responses", i(*received)),
                    ("failures", i(*numfailures)),
                    ("data_retrieved", b(*data_present)),
                ],
            );
            make(py, class, (server_message(0x1300, "Replica(s) failed to execute read", msg),), Some(&kw))
        }
        DbError::WriteFailure { consistency, received, required, numfailures, write_type } => {
            let kw = kwargs(
                py,
                &[
                    ("consistency", i(*consistency as i32)),
                    ("required_responses", i(*required)),
                    ("received_responses", i(*received)),
                    ("failures", i(*numfailures)),
                    ("write_type", s(write_type.as_str())),
                ],
            );
            make(py, class, (server_message(0x1500, "Replica(s) failed to execute write", msg),), Some(&kw))
        }
        DbError::Overloaded => make(py, class, (server_message(0x1001, "Coordinator node overloaded", msg),), None),
        DbError::IsBootstrapping => make(py, class, (server_message(0x1002, "Coordinator node is bootstrapping", msg),), None),
        DbError::TruncateError => make(py, class, (server_message(0x1003, "Error during truncate", msg),), None),
        DbError::ProtocolError => make(py, class, (server_message(0x000a, "Protocol error", msg),), None),
        DbError::Unprepared { statement_id } => {
            let err = make(py, class, (server_message(0x2500, "Matching prepared statement not found on this node", msg),), None);
            // The classic ErrorMessage's `info`: the id the node does not know.
            let _ = err.value(py).setattr("info", pyo3::types::PyBytes::new(py, statement_id));
            err
        }
        DbError::ServerError => make(py, class, (server_message(0x0000, "Server error", msg),), None),
        DbError::Other(code) => {
            // A code this driver does not know: the plain ErrorMessage keeping it (`code`), as
            // the classic driver raises it.
            let err = make(py, class, (server_message(*code, "Unknown", msg),), None);
            let _ = err.value(py).setattr("error_code", *code);
            err
        }
        other => make(py, class, (server_message(0x0000, "Server error", &format!("{other}: {msg}")),), None),
    }
}

/// `NoHostAvailable(message, {host: ConnectionException})`.
pub fn no_host(py: Python<'_>, message: &str, host: &str, cause: &str) -> PyErr {
    let errors = PyDict::new(py);
    let conn_exc = make(py, Exc::ConnectionException, (cause.to_string(), host.to_string()), None);
    let _ = errors.set_item(host, conn_exc.value(py));
    make(py, Exc::NoHostAvailable, (message.to_string(), errors), None)
}

/// A client-side timeout, as `OperationTimedOut`.
pub fn timed_out(py: Python<'_>, timeout: Duration, host: &str) -> PyErr {
    let msg = format!("Client request timeout after {:.3} s. See Session.execute[_async](timeout)", timeout.as_secs_f64());
    let kw = kwargs(py, &[("errors", msg.into_pyobject(py).unwrap().into_any()), ("last_host", host.into_pyobject(py).unwrap().into_any())]);
    make(py, Exc::OperationTimedOut, (), Some(&kw))
}

fn attempt_error(py: Python<'_>, err: &RequestAttemptError, host: &str) -> PyErr {
    match err {
        RequestAttemptError::DbError(db, msg) => db_error(py, db, msg),
        RequestAttemptError::SerializationError(e) => PyValueError::new_err(format!("{e}")),
        RequestAttemptError::BrokenConnectionError(e) => no_host(py, "Unable to complete the operation against any hosts", host, &broken(e)),
        // The classic driver's name for a connection with every stream id in use (ids of
        // timed-out requests stay taken until the node answers them).
        RequestAttemptError::UnableToAllocStreamId => make(
            py,
            Exc::ConnectionBusy,
            (format!("Connection to {host} has every stream id in use (requests sent to it wait for answers, or timed out and were never answered)"),),
            None,
        ),
        RequestAttemptError::BodyExtensionsParseError(
            FrameBodyExtensionsParseError::Lz4DecompressError(e) | FrameBodyExtensionsParseError::SnapDecompressError(e),
        ) if decompresses_too_large(e.as_ref()) => {
            make(py, Exc::DriverException, (format!("A response of {host} was refused: {} (Cluster max_frame_length)", e),), None)
        }
        other => make(py, Exc::DriverException, (format!("{other}"),), None),
    }
}

/// Whether a decompression error is the patched scylla-cql's frame limit refusing the
/// uncompressed length a compressed body declares.
fn decompresses_too_large(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()).is_some_and(|inner| inner.is::<scylla_cql::frame::FrameTooLarge>())
}

/// What a `ConnectionException` of a broken connection says; a frame refused by the frame
/// limit also names the setting that raises it.
fn broken(e: &BrokenConnectionError) -> String {
    match frame_too_large(e) {
        Some(_) => format!("Connection broken: {e} (Cluster max_frame_length)"),
        None => format!("Connection broken: {e}"),
    }
}

/// The refusal of the patched scylla-cql's frame limit (src/api/frame_limit.rs), if `e` is one.
fn frame_too_large(e: &BrokenConnectionError) -> Option<scylla_cql::frame::FrameTooLarge> {
    match e.downcast_ref::<BrokenConnectionErrorKind>()? {
        BrokenConnectionErrorKind::FrameHeaderParseError(FrameHeaderParseError::HeaderIoError(io)) => {
            io.get_ref()?.downcast_ref::<scylla_cql::frame::FrameTooLarge>().copied()
        }
        _ => None,
    }
}

/// A query plan run out by `RETRY_NEXT_HOST` decisions: the classic
/// `NoHostAvailable("Unable to complete the operation against any hosts", {host: error})`,
/// each host's last error as the exception it would raise on its own ("ip:port" keys, the
/// classic `str(Host)`).
pub fn plan_exhausted(py: Python<'_>, tried: &[(SocketAddr, RequestAttemptError)]) -> PyErr {
    let errors = PyDict::new(py);
    for (addr, e) in tried {
        let host = addr.to_string();
        let exc = match e {
            RequestAttemptError::BrokenConnectionError(b) => make(py, Exc::ConnectionException, (broken(b), host.clone()), None),
            other => attempt_error(py, other, &host),
        };
        let _ = errors.set_item(host, exc.value(py));
    }
    make(py, Exc::NoHostAvailable, ("Unable to complete the operation against any hosts", errors), None)
}

/// Any failure of a request (execute, batch) as the classic driver's exception.
pub fn execution_error(py: Python<'_>, err: &ExecutionError, host: &str) -> PyErr {
    match err {
        ExecutionError::RequestTimeout(d) => timed_out(py, *d, host),
        ExecutionError::LastAttemptError(e) => attempt_error(py, e, host),
        ExecutionError::PrepareError(e) => prepare_error(py, e, host),
        ExecutionError::ConnectionPoolError(e) => pool_error(py, e, host),
        ExecutionError::EmptyPlan => no_host(py, "Unable to complete the operation against any hosts", host, "no host is up"),
        ExecutionError::UseKeyspaceError(e) => use_keyspace_error(py, e, host),
        ExecutionError::BadQuery(e) => PyValueError::new_err(format!("{e}")),
        other => make(py, Exc::DriverException, (format!("{other}"),), None),
    }
}

fn pool_error(py: Python<'_>, err: &ConnectionPoolError, host: &str) -> PyErr {
    no_host(py, "Unable to complete the operation against any hosts", host, &format!("{err}"))
}

pub fn prepare_error(py: Python<'_>, err: &PrepareError, host: &str) -> PyErr {
    match err {
        PrepareError::AllAttemptsFailed { first_attempt } => attempt_error(py, first_attempt, host),
        PrepareError::ConnectionPoolError(e) => pool_error(py, e, host),
        other => make(py, Exc::DriverException, (format!("{other}"),), None),
    }
}

pub fn use_keyspace_error(py: Python<'_>, err: &UseKeyspaceError, host: &str) -> PyErr {
    match err {
        UseKeyspaceError::RequestError(e) => attempt_error(py, e, host),
        UseKeyspaceError::RequestTimeout(d) => timed_out(py, *d, host),
        UseKeyspaceError::BadKeyspaceName(e) => make(py, Exc::InvalidRequest, (format!("{e}"),), None),
        other => make(py, Exc::DriverException, (format!("{other}"),), None),
    }
}

/// Why a handshake failed on our side, for the connect error.
#[derive(Clone, Debug)]
pub enum TlsFailure {
    /// The server's certificate was rejected, for this reason (OpenSSL's words).
    CertificateRejected(String),
    /// The server asked for a client certificate the engine cannot obtain.
    ClientCertificateUnavailable(String),
}

/// A failed `Cluster.connect()`: a bad keyspace is `InvalidRequest`, bad credentials are
/// `AuthenticationFailed` inside `NoHostAvailable` (as in the classic driver), the rest is
/// `NoHostAvailable` naming the cause.
///
/// A failed TLS handshake is `NoHostAvailable` holding `ssl.SSLCertVerificationError`
/// (the certificate was rejected: `tls_failure` says why) or `ssl.SSLError`, as the classic
/// driver's errors hold what Python's ssl module raised.
pub fn new_session_error(py: Python<'_>, err: &NewSessionError, hosts: &str, tls_failure: Option<TlsFailure>) -> PyErr {
    if let NewSessionError::UseKeyspaceError(e) = err {
        return use_keyspace_error(py, e, hosts);
    }
    let text = format!("{err}");
    if let Some(tls) = tls_error(py, err, tls_failure) {
        let errors = PyDict::new(py);
        let _ = errors.set_item(hosts, tls.value(py));
        return make(py, Exc::NoHostAvailable, (format!("Unable to connect to any servers: TLS handshake failed ({})", tls.value(py)), errors), None);
    }
    if let Some(why) = find_cause::<ConnectionSetupRequestError>(err).and_then(|e| authentication_failure(e.get_error())) {
        let errors = PyDict::new(py);
        let auth = make(py, Exc::AuthenticationFailed, (format!("Failed to authenticate to {hosts}: {why}"),), None);
        let _ = errors.set_item(hosts, auth.value(py));
        return make(py, Exc::NoHostAvailable, (format!("Unable to connect to any servers: authentication failed ({why})"), errors), None);
    }
    no_host(py, &format!("Unable to connect to any servers ({text})"), hosts, &text)
}

/// Why the handshake's authentication failed, if that is what failed: the server refused
/// the credentials, it requires authentication and none was given, or the application's
/// authenticator failed.
fn authentication_failure(kind: &ConnectionSetupRequestErrorKind) -> Option<String> {
    match kind {
        ConnectionSetupRequestErrorKind::DbError(DbError::AuthenticationError, msg) => Some(server_message(0x0100, "Bad credentials", msg)),
        ConnectionSetupRequestErrorKind::MissingAuthentication => Some("Remote end requires authentication".to_string()),
        ConnectionSetupRequestErrorKind::StartAuthSessionError(e)
        | ConnectionSetupRequestErrorKind::AuthChallengeEvaluationError(e)
        | ConnectionSetupRequestErrorKind::AuthFinishError(e) => Some(e.clone()),
        _ => None,
    }
}

/// The first error of type `T` among `err`'s causes (`err` itself included). The crate's
/// error sources stop at a broken pool (its last connection's error is a field, not a
/// source), and a connection error's transparent variants give their inner error's source,
/// skipping the inner error itself; the walk steps into both.
fn find_cause<'a, T: std::error::Error + 'static>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        next = match (e.downcast_ref::<ConnectionPoolError>(), e.downcast_ref::<ConnectionError>()) {
            (Some(ConnectionPoolError::Broken { last_connection_error }), _) => Some(last_connection_error),
            (_, Some(ConnectionError::ConnectionSetupRequestError(inner))) => Some(inner),
            (_, Some(ConnectionError::BrokenConnection(inner))) => Some(inner),
            _ => e.source(),
        };
    }
    None
}

/// The `ssl` exception of a failed TLS handshake, if `err` is one: what the engine's
/// verifier recorded, else the rustls error found in the error's sources.
fn tls_error(py: Python<'_>, err: &NewSessionError, tls_failure: Option<TlsFailure>) -> Option<PyErr> {
    let ssl = crate::pyrefs::ssl(py).ok()?;
    let (cls, msg) = match tls_failure {
        Some(TlsFailure::CertificateRejected(reason)) => {
            ("SSLCertVerificationError", format!("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: {reason}"))
        }
        Some(TlsFailure::ClientCertificateUnavailable(reason)) => ("SSLError", format!("[SSL] {reason}")),
        None => ("SSLError", format!("[SSL] {}", rustls_error(err)?)),
    };
    ssl.getattr(cls).ok()?.call1((1, msg)).ok().map(|e| PyErr::from_value(e))
}

/// The rustls error at the root of a connect failure, if there is one: inside the TLS
/// layer's `io::Error`, whose own source skips the rustls error it wraps.
fn rustls_error<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    match find_cause::<ConnectionError>(err)? {
        ConnectionError::IoError(io) => io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    }
}
