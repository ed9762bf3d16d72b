//! Python references: every Python object the engine uses, held in one place.
//!
//! The package hands them over once, at import, in two steps: `turbocql.cqltypes` the
//! codec's ([`CodecRefs`], `_bootstrap_codec`) as soon as its classes exist, and
//! `turbocql/cluster.py` the rest ([`PyRefs`], `_bootstrap`) at the end of its import, so no engine module imports a Python module or looks an object up by
//! name on its own. The engine imports no module of `turbocql`: what it needs of the
//! package is handed over. The modules it does import, optional (`numpy`) or needed only
//! to set up TLS (`ssl`, `_ssl`), are imported here, once, at their first use
//! (`scripts/engine_rules.py` holds every other file to this). They are plain Python objects, valid in a forked child as in the
//! parent, so nothing here needs resetting after `fork()` (the runtime and the completion
//! queue do: see [`crate::runtime::ForkLocal`]).
//!
//! The exception classes are named by [`Exc`]; the other objects are fields of [`PyRefs`]
//! and [`CodecRefs`].

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

macro_rules! exceptions {
    ($($name:ident),* $(,)?) => {
        /// The classic driver's exception classes the engine raises.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Exc { $($name),* }

        impl Exc {
            pub const ALL: &'static [Exc] = &[$(Exc::$name),*];

            /// The class's name, as it is handed over by `_bootstrap`.
            pub fn name(self) -> &'static str {
                match self { $(Exc::$name => stringify!($name)),* }
            }
        }
    };
}

exceptions!(
    DriverException,
    InvalidRequest,
    AlreadyExists,
    FunctionFailure,
    AuthenticationFailed,
    Unauthorized,
    ConfigurationException,
    Unavailable,
    ReadTimeout,
    WriteTimeout,
    ReadFailure,
    WriteFailure,
    OperationTimedOut,
    SyntaxException,
    OverloadedErrorMessage,
    IsBootstrappingErrorMessage,
    TruncateError,
    ProtocolException,
    PreparedQueryNotFound,
    ServerError,
    NoHostAvailable,
    ConnectionException,
    QueryExhausted,
    UnsupportedOperation,
    ConnectionBusy,
    ErrorMessage,
);

macro_rules! objects {
    ($(#[$sdoc:meta])* $name:ident $({ $($xfield:ident: $xtype:ty = $xinit:expr),* $(,)? })?; $($(#[$doc:meta])* $field:ident),* $(,)?) => {
        $(#[$sdoc])*
        #[allow(non_snake_case)]
        pub struct $name {
            $($($xfield: $xtype,)*)?
            $($(#[$doc])* pub $field: Py<PyAny>,)*
        }

        impl $name {
            fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Self> {
                Ok($name { $($($xfield: $xinit(d)?,)*)? $($field: take(d, stringify!($field))?,)* })
            }
        }
    };
}

fn take_exceptions(d: &Bound<'_, PyDict>) -> PyResult<Vec<Py<PyAny>>> {
    Exc::ALL.iter().map(|e| take(d, e.name())).collect()
}

objects!(
    /// The Python objects the codec uses to make values: classes of the standard library,
    /// of `turbocql.util` and of `turbocql.cqltypes`. `turbocql.cqltypes` hands them over
    /// (`_bootstrap_codec`) as soon as its classes exist, so a value converts through the
    /// engine without the rest of the package (`turbocql.cqltypes` alone, as the classic
    /// unit tests use it).
    CodecRefs;
    /// `uuid.UUID`.
    UUID,
    /// `decimal.Decimal`.
    Decimal,
    /// `turbocql.util.Date`, `Time`, `Duration`, `SortedSet`, `OrderedMap`.
    Date,
    Time,
    Duration,
    SortedSet,
    OrderedMap,
    /// `turbocql.cqltypes.EMPTY`: an empty cell of a type whose class has
    /// `support_empty_values` set.
    EMPTY,
    /// `turbocql.cqltypes.DateType`: its `deserialize` reads the timestamps datetime
    /// cannot hold (it raises, unless replaced, as cqlsh does).
    DateType,
);

objects!(
    /// The Python objects the engine uses to run requests, besides the codec's
    /// ([`CodecRefs`]): the exception classes (by [`Exc`]) and the package's objects.
    PyRefs { exceptions: Vec<Py<PyAny>> = take_exceptions };
    /// `turbocql.query.UNSET_VALUE`: leaves a bound column untouched.
    UNSET_VALUE,
    /// `turbocql.cluster._make_udt(keyspace, name, field_names, values)`.
    make_udt,
    /// `turbocql.query._row_class(colnames)`: the named-tuple class of a column list.
    row_class,
    /// `turbocql.query` statement classes and markers.
    PreparedStatement,
    BoundStatement,
    SimpleStatement,
    BatchStatement,
    FETCH_SIZE_UNSET,
    /// `turbocql.cluster._NOT_SET`: an argument left out (`timeout` of `execute`).
    NOT_SET,
    /// `turbocql.encoder.bind_params(query, params, encoder)`: `%s` parameters inlined.
    bind_params,
    /// `turbocql.query.numpy_factory` and `turbocql.protocol.NumpyProtocolHandler`.
    numpy_factory,
    NumpyProtocolHandler,
    /// `turbocql.query.arrow_factory` (pages as `pyarrow.RecordBatch`, made by
    /// `turbocql._query.arrow`, imported at its first use: pyarrow is optional).
    arrow_factory,
    /// `turbocql.query.cql_text_factory` (pages as a `pyarrow.RecordBatch` of each value's
    /// CQL text).
    cql_text_factory,
    /// `turbocql._cluster.bootstrap._arrow_record_batch(names, columns)`: an Arrow page's
    /// `ArrowColumn`s as a `pyarrow.RecordBatch` (`turbocql._query.arrow`, imported by it at the
    /// first Arrow page: pyarrow is optional).
    arrow_record_batch,
    /// The engine's own `named_rows` (`turbocql.query.named_tuple_factory`).
    named_rows,
    /// `turbocql.cluster.ResultSet`.
    ResultSet,
    /// `turbocql.cluster.EXEC_PROFILE_DEFAULT`: the default execution profile's key.
    EXEC_PROFILE_DEFAULT,
    /// `turbocql.pool._host_of(host_id, address, port, datacenter, rack, is_up)`: the
    /// one `Host` object of a node.
    host_of,
    /// The loggers of `turbocql._loggers` the engine logs on: `cluster` (failed callbacks,
    /// unresponsive nodes, schema agreement), `pool` (reconnection attempts), `protocol`
    /// (server warnings). `LoggerAdapter`s that follow the shim's re-pointing
    /// (`turbocql.X`, or `cassandra.X` under turbocql.compat): hold them, never the
    /// `logging.Logger` they point to.
    cluster_log,
    pool_log,
    protocol_log,
    /// `asyncio.Future`, `asyncio.CancelledError`, `asyncio.InvalidStateError`,
    /// `asyncio.get_running_loop`.
    asyncio_Future,
    asyncio_CancelledError,
    asyncio_InvalidStateError,
    asyncio_get_running_loop,
);

fn take(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Py<PyAny>> {
    match d.get_item(key)? {
        Some(v) => Ok(v.unbind()),
        None => Err(PyRuntimeError::new_err(format!("turbocql engine: _bootstrap is missing {key:?}"))),
    }
}

static REFS: PyOnceLock<PyRefs> = PyOnceLock::new();
static CODEC_REFS: PyOnceLock<CodecRefs> = PyOnceLock::new();

/// Stores the objects (once, at import).
pub fn register(objects: &Bound<'_, PyDict>) -> PyResult<()> {
    let refs = PyRefs::from_dict(objects)?;
    REFS.set(objects.py(), refs).map_err(|_| PyRuntimeError::new_err("turbocql engine already bootstrapped"))
}

/// Stores the codec's objects (once, at `turbocql.cqltypes`'s import).
pub fn register_codec(objects: &Bound<'_, PyDict>) -> PyResult<()> {
    let refs = CodecRefs::from_dict(objects)?;
    CODEC_REFS.set(objects.py(), refs).map_err(|_| PyRuntimeError::new_err("turbocql engine: codec already bootstrapped"))
}

/// The objects; a RuntimeError before `_bootstrap`.
#[inline]
pub fn get(py: Python<'_>) -> PyResult<&PyRefs> {
    REFS.get(py).ok_or_else(|| PyRuntimeError::new_err("turbocql engine: not bootstrapped (import turbocql.cluster first)"))
}

/// The codec's objects; a RuntimeError before `_bootstrap_codec`.
#[inline]
pub fn codec(py: Python<'_>) -> PyResult<&CodecRefs> {
    CODEC_REFS.get(py).ok_or_else(|| PyRuntimeError::new_err("turbocql engine: codec not bootstrapped (import turbocql.cqltypes first)"))
}

/// An exception class.
pub fn exception<'py>(py: Python<'py>, exc: Exc) -> PyResult<&'py Bound<'py, PyAny>> {
    Ok(get(py)?.exceptions[exc as usize].bind(py))
}

/// A module imported once, at its first use, and kept.
fn imported<'py>(py: Python<'py>, cell: &'static PyOnceLock<Py<PyModule>>, name: &str) -> PyResult<&'py Bound<'py, PyModule>> {
    cell.get_or_try_init(py, || py.import(name).map(Bound::unbind)).map(|m| m.bind(py))
}

/// `numpy`, imported on first use (an optional dependency).
pub fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    imported(py, &NUMPY, "numpy")
}

/// `ssl`, imported on first use (a TLS context being read, a TLS error being raised).
pub fn ssl(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static SSL: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    imported(py, &SSL, "ssl")
}

/// `_ssl`, the extension behind `ssl` (whose OpenSSL the engine may share), on first use.
pub fn ssl_extension(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static SSL_EXTENSION: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    imported(py, &SSL_EXTENSION, "_ssl")
}
