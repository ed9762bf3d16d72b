//! Errors: turns the scylla crate's errors into the classic driver's exception classes.
//!
//! The classes themselves are Python classes (`turbocql/__init__.py`, `turbocql.protocol`,
//! `turbocql.cluster.NoHostAvailable`, `turbocql.connection.ConnectionException`); the
//! package hands them to the engine once, at import, through `_bootstrap`. Server errors
//! keep their fields as attributes (`consistency`, `required_replicas`, ...), as in the
//! classic driver.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::time::Duration;

use scylla::errors::{
    ConnectionPoolError, DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError,
    UseKeyspaceError,
};

/// FNV-1a: the registry is looked up on hot paths (every bound row, every uuid decoded)
/// with short fixed names, where the default SipHash costs more than the rest of the lookup.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

type Registry = HashMap<String, Py<PyAny>, std::hash::BuildHasherDefault<Fnv>>;

static OBJECTS: PyOnceLock<Registry> = PyOnceLock::new();

/// Stores the Python objects the engine needs (exception classes, UNSET_VALUE, UUID, ...).
pub fn register(py: Python<'_>, objects: &Bound<'_, PyDict>) -> PyResult<()> {
    let mut map = Registry::default();
    for (k, v) in objects.iter() {
        map.insert(k.extract::<String>()?, v.unbind());
    }
    OBJECTS
        .set(py, map)
        .map_err(|_| PyRuntimeError::new_err("turbocql engine already bootstrapped"))
}

/// A registered Python object by name; a RuntimeError if the package did not register it.
pub fn object<'py>(py: Python<'py>, name: &str) -> PyResult<&'py Py<PyAny>> {
    OBJECTS
        .get(py)
        .and_then(|m| m.get(name))
        .ok_or_else(|| PyRuntimeError::new_err(format!("turbocql engine: '{name}' not registered")))
}

/// Builds an instance of the registered exception class `name`.
pub fn make<'py>(py: Python<'py>, name: &str, args: impl pyo3::call::PyCallArgs<'py>, kwargs: Option<&Bound<'py, PyDict>>) -> PyErr {
    let cls = match object(py, name) {
        Ok(c) => c.bind(py).clone(),
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

/// A server-side error (an ERROR frame) as the classic driver's exception.
pub fn db_error(py: Python<'_>, err: &DbError, msg: &str) -> PyErr {
    let i = |v: i32| v.into_pyobject(py).unwrap().into_any();
    let s = |v: &str| v.into_pyobject(py).unwrap().into_any();
    let b = |v: bool| pyo3::types::PyBool::new(py, v).to_owned().into_any();
    match err {
        DbError::SyntaxError => make(py, "SyntaxException", (server_message(0x2000, "Syntax error in CQL query", msg),), None),
        DbError::Invalid => make(py, "InvalidRequest", (server_message(0x2200, "Invalid query", msg),), None),
        DbError::AlreadyExists { keyspace, table } => {
            let kw = kwargs(py, &[("keyspace", s(keyspace)), ("table", if table.is_empty() { py.None().into_bound(py) } else { s(table) })]);
            make(py, "AlreadyExists", (), Some(&kw))
        }
        DbError::FunctionFailure { keyspace, function, arg_types } => make(
            py,
            "FunctionFailure",
            (server_message(0x1400, "Function failure", msg), keyspace.clone(), function.clone(), arg_types.clone()),
            None,
        ),
        DbError::AuthenticationError => make(py, "AuthenticationFailed", (server_message(0x0100, "Bad credentials", msg),), None),
        DbError::Unauthorized => make(py, "Unauthorized", (server_message(0x2100, "Unauthorized", msg),), None),
        DbError::ConfigError => make(py, "ConfigurationException", (server_message(0x2300, "Query invalid because of configuration issue", msg),), None),
        DbError::Unavailable { consistency, required, alive } => {
            let kw = kwargs(py, &[("consistency", i(*consistency as i32)), ("required_replicas", i(*required)), ("alive_replicas", i(*alive))]);
            make(py, "Unavailable", (server_message(0x1000, "Unavailable exception", msg),), Some(&kw))
        }
        DbError::ReadTimeout { consistency, received, required, data_present } => {
            let kw = kwargs(py, &[
                ("consistency", i(*consistency as i32)),
                ("required_responses", i(*required)),
                ("received_responses", i(*received)),
                ("data_retrieved", b(*data_present)),
            ]);
            make(py, "ReadTimeout", (server_message(0x1200, "Coordinator node timed out waiting for replica nodes' responses", msg),), Some(&kw))
        }
        DbError::WriteTimeout { consistency, received, required, write_type } => {
            let kw = kwargs(py, &[
                ("consistency", i(*consistency as i32)),
                ("required_responses", i(*required)),
                ("received_responses", i(*received)),
                ("write_type", s(write_type.as_str())),
            ]);
            make(py, "WriteTimeout", (server_message(0x1100, "Coordinator node timed out waiting for replica nodes' responses", msg),), Some(&kw))
        }
        DbError::ReadFailure { consistency, received, required, numfailures, data_present } => {
            let kw = kwargs(py, &[
                ("consistency", i(*consistency as i32)),
                ("required_responses", i(*required)),
                ("received_responses", i(*received)),
                ("failures", i(*numfailures)),
                ("data_retrieved", b(*data_present)),
            ]);
            make(py, "ReadFailure", (server_message(0x1300, "Replica(s) failed to execute read", msg),), Some(&kw))
        }
        DbError::WriteFailure { consistency, received, required, numfailures, write_type } => {
            let kw = kwargs(py, &[
                ("consistency", i(*consistency as i32)),
                ("required_responses", i(*required)),
                ("received_responses", i(*received)),
                ("failures", i(*numfailures)),
                ("write_type", s(write_type.as_str())),
            ]);
            make(py, "WriteFailure", (server_message(0x1500, "Replica(s) failed to execute write", msg),), Some(&kw))
        }
        DbError::Overloaded => make(py, "OverloadedErrorMessage", (server_message(0x1001, "Coordinator node overloaded", msg),), None),
        DbError::IsBootstrapping => make(py, "IsBootstrappingErrorMessage", (server_message(0x1002, "Coordinator node is bootstrapping", msg),), None),
        DbError::TruncateError => make(py, "TruncateError", (server_message(0x1003, "Error during truncate", msg),), None),
        DbError::ProtocolError => make(py, "ProtocolException", (server_message(0x000a, "Protocol error", msg),), None),
        DbError::Unprepared { .. } => make(py, "PreparedQueryNotFound", (server_message(0x2500, "Query not prepared", msg),), None),
        DbError::ServerError => make(py, "ServerError", (server_message(0x0000, "Server error", msg),), None),
        other => make(py, "ServerError", (server_message(0x0000, "Server error", &format!("{other}: {msg}")),), None),
    }
}

/// `NoHostAvailable(message, {host: ConnectionException})`.
pub fn no_host(py: Python<'_>, message: &str, host: &str, cause: &str) -> PyErr {
    let errors = PyDict::new(py);
    let conn_exc = make(py, "ConnectionException", (cause.to_string(), host.to_string()), None);
    let _ = errors.set_item(host, conn_exc.value(py));
    make(py, "NoHostAvailable", (message.to_string(), errors), None)
}

/// A client-side timeout, as `OperationTimedOut`.
pub fn timed_out(py: Python<'_>, timeout: Duration, host: &str) -> PyErr {
    let msg = format!(
        "Client request timeout after {:.3} s. See Session.execute[_async](timeout)",
        timeout.as_secs_f64()
    );
    let kw = kwargs(py, &[
        ("errors", msg.into_pyobject(py).unwrap().into_any()),
        ("last_host", host.into_pyobject(py).unwrap().into_any()),
    ]);
    make(py, "OperationTimedOut", (), Some(&kw))
}

fn attempt_error(py: Python<'_>, err: &RequestAttemptError, host: &str) -> PyErr {
    match err {
        RequestAttemptError::DbError(db, msg) => db_error(py, db, msg),
        RequestAttemptError::SerializationError(e) => PyValueError::new_err(format!("{e}")),
        RequestAttemptError::BrokenConnectionError(e) => {
            no_host(py, "Unable to complete the operation against any hosts", host, &format!("Connection broken: {e}"))
        }
        other => make(py, "DriverException", (format!("{other}"),), None),
    }
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
        other => make(py, "DriverException", (format!("{other}"),), None),
    }
}

fn pool_error(py: Python<'_>, err: &ConnectionPoolError, host: &str) -> PyErr {
    no_host(py, "Unable to complete the operation against any hosts", host, &format!("{err}"))
}

pub fn prepare_error(py: Python<'_>, err: &PrepareError, host: &str) -> PyErr {
    match err {
        PrepareError::AllAttemptsFailed { first_attempt } => attempt_error(py, first_attempt, host),
        PrepareError::ConnectionPoolError(e) => pool_error(py, e, host),
        other => make(py, "DriverException", (format!("{other}"),), None),
    }
}

pub fn use_keyspace_error(py: Python<'_>, err: &UseKeyspaceError, host: &str) -> PyErr {
    match err {
        UseKeyspaceError::RequestError(e) => attempt_error(py, e, host),
        UseKeyspaceError::RequestTimeout(d) => timed_out(py, *d, host),
        UseKeyspaceError::BadKeyspaceName(e) => make(py, "InvalidRequest", (format!("{e}"),), None),
        other => make(py, "DriverException", (format!("{other}"),), None),
    }
}

/// A failed `Cluster.connect()`: a bad keyspace is `InvalidRequest`, bad credentials are
/// `AuthenticationFailed` inside `NoHostAvailable` (as in the classic driver), the rest is
/// `NoHostAvailable` naming the cause.
pub fn new_session_error(py: Python<'_>, err: &NewSessionError, hosts: &str) -> PyErr {
    if let NewSessionError::UseKeyspaceError(e) = err {
        return use_keyspace_error(py, e, hosts);
    }
    let text = format!("{err}");
    let debug = format!("{err:?}");
    if debug.contains("AuthenticationError") || debug.contains("Authentication") {
        let errors = PyDict::new(py);
        let auth = make(py, "AuthenticationFailed", (format!("Failed to authenticate to {hosts}: {text}"),), None);
        let _ = errors.set_item(hosts, auth.value(py));
        return make(py, "NoHostAvailable", (format!("Unable to connect to any servers: authentication failed ({text})"), errors), None);
    }
    no_host(py, &format!("Unable to connect to any servers ({text})"), hosts, &text)
}

/// A value that does not fit its column: TypeError or ValueError naming column and type.
pub fn bad_value(is_type_error: bool, msg: String) -> PyErr {
    if is_type_error {
        PyTypeError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}
