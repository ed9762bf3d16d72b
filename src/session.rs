//! Session: a connected scylla `Session`, prepared statements, and the requests Python
//! sends through them (single statements and batches, one page at a time).
//!
//! Every call converts its values under the GIL, then releases the GIL for the whole
//! round trip, so many Python threads can share one `Session`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session as ScyllaSession;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::Compression;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency, Statement};

use crate::aio::{AioRequest, LoopQueue};
use crate::completion;
use crate::errors;
use crate::rows;
use crate::runtime;
use crate::types::type_name;
use crate::values::{bind_row, BoundValues};

pub(crate) fn consistency(v: u16) -> PyResult<Consistency> {
    Ok(match v {
        0 => Consistency::Any,
        1 => Consistency::One,
        2 => Consistency::Two,
        3 => Consistency::Three,
        4 => Consistency::Quorum,
        5 => Consistency::All,
        6 => Consistency::LocalQuorum,
        7 => Consistency::EachQuorum,
        8 => Consistency::Serial,
        9 => Consistency::LocalSerial,
        10 => Consistency::LocalOne,
        other => return Err(PyValueError::new_err(format!("unknown consistency level {other}"))),
    })
}

fn serial_consistency(v: u16) -> PyResult<SerialConsistency> {
    match v {
        8 => Ok(SerialConsistency::Serial),
        9 => Ok(SerialConsistency::LocalSerial),
        other => Err(PyValueError::new_err(format!(
            "serial consistency must be SERIAL (8) or LOCAL_SERIAL (9), got {other}"
        ))),
    }
}

fn duration(seconds: f64, what: &str) -> PyResult<Duration> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(PyValueError::new_err(format!("{what} must be a positive number of seconds, got {seconds}")));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Per-request options, the same for every kind of statement.
#[derive(Clone, Default)]
pub(crate) struct Options {
    pub(crate) consistency: Option<Consistency>,
    serial: Option<SerialConsistency>,
    pub(crate) timeout: Option<Duration>,
    trace: bool,
    timestamp: Option<i64>,
    idempotent: bool,
    /// Rows come back as columns of numpy arrays.
    pub(crate) columnar: bool,
}

impl Options {
    pub(crate) fn new(consistency_level: Option<u16>, serial: Option<u16>, timeout: Option<f64>, trace: bool, timestamp: Option<i64>, idempotent: bool) -> PyResult<Self> {
        Ok(Options {
            consistency: consistency_level.map(consistency).transpose()?,
            serial: serial.map(serial_consistency).transpose()?,
            timeout: timeout.map(|t| duration(t, "timeout")).transpose()?,
            trace,
            timestamp,
            idempotent,
            columnar: false,
        })
    }
}

macro_rules! apply_options {
    ($stmt:expr, $o:expr) => {{
        if let Some(c) = $o.consistency {
            $stmt.set_consistency(c);
        }
        $stmt.set_serial_consistency($o.serial);
        $stmt.set_tracing($o.trace);
        $stmt.set_timestamp($o.timestamp);
        $stmt.set_is_idempotent($o.idempotent);
    }};
}

/// A prepared statement with its metadata.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Prepared {
    pub(crate) stmt: PreparedStatement,
}

#[pymethods]
impl Prepared {
    #[getter]
    fn query_string(&self) -> &str {
        self.stmt.get_statement()
    }
    #[getter]
    fn query_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.stmt.get_id())
    }
    #[getter]
    fn param_names(&self) -> Vec<String> {
        self.stmt.get_variable_col_specs().iter().map(|s| s.name().to_string()).collect()
    }
    #[getter]
    fn param_types(&self) -> Vec<String> {
        self.stmt.get_variable_col_specs().iter().map(|s| type_name(s.typ())).collect()
    }
    #[getter]
    fn result_column_names(&self) -> Vec<String> {
        self.stmt.get_current_result_set_col_specs().get().iter().map(|s| s.name().to_string()).collect()
    }
    #[getter]
    fn result_column_types(&self) -> Vec<String> {
        self.stmt.get_current_result_set_col_specs().get().iter().map(|s| type_name(s.typ())).collect()
    }
    #[getter]
    fn routing_key_indexes(&self) -> Vec<u16> {
        let mut pk: Vec<_> = self.stmt.get_variable_pk_indexes().to_vec();
        pk.sort_by_key(|p| p.sequence);
        pk.iter().map(|p| p.index).collect()
    }
    #[getter]
    fn keyspace(&self) -> Option<&str> {
        self.stmt.get_keyspace_name()
    }
    #[getter]
    fn table(&self) -> Option<&str> {
        self.stmt.get_table_name()
    }
    #[getter]
    fn is_lwt(&self) -> bool {
        self.stmt.is_confirmed_lwt()
    }
    /// Converts `values` as `execute` would, without sending anything (raises on bad input).
    fn check_values(&self, py: Python<'_>, values: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        bind_row(py, values.as_ref(), self.stmt.get_variable_col_specs().as_slice()).map(|_| ())
    }
}

/// The raw outcome of one request.
pub struct Outcome {
    result: QueryResult,
    paging: Option<PagingStateResponse>,
    /// Rows as a dict of numpy arrays (see `rows::page_columns`) rather than tuples.
    pub(crate) columnar: bool,
    /// Rows made as the default row factory's named tuples right away (the request's
    /// row factory is `named_tuple_factory`), rather than plain tuples.
    pub(crate) named: bool,
}

impl Outcome {
    /// True for a result with nothing to show (a write): no rows, no paging, no trace.
    pub(crate) fn is_void(&self) -> bool {
        !self.result.is_rows() && self.result.tracing_id().is_none() && self.result.warnings().next().is_none()
    }
}

/// A request ready to run: statement with converted values, and whether it is paged.
pub(crate) enum Request {
    Prepared(PreparedStatement, BoundValues),
    Query(Statement),
}

/// Builds a request from Python arguments (GIL held): converts the values, applies options.
pub(crate) fn build_request(
    py: Python<'_>,
    statement: &Bound<'_, PyAny>,
    values: Option<&Bound<'_, PyAny>>,
    opts: &Options,
    paged: Option<i32>,
) -> PyResult<Request> {
    if let Ok(p) = statement.cast::<Prepared>() {
        let p = p.get();
        let bound = bind_row(py, values, p.stmt.get_variable_col_specs().as_slice())?;
        Ok(prepared_request(p, bound, opts, paged))
    } else if let Ok(q) = statement.cast::<PyString>() {
        if values.is_some_and(|v| !v.is_none()) {
            return Err(PyTypeError::new_err("engine: values for a query string must be inlined by the caller"));
        }
        let mut stmt = Statement::new(q.to_cow()?.into_owned());
        apply_options!(stmt, opts);
        if let Some(n) = paged {
            stmt.set_page_size(n);
        }
        Ok(Request::Query(stmt))
    } else {
        Err(PyTypeError::new_err("statement must be a str or a prepared statement"))
    }
}

/// The request for a prepared statement with values already converted.
pub(crate) fn prepared_request(p: &Prepared, bound: BoundValues, opts: &Options, paged: Option<i32>) -> Request {
    let mut stmt = p.stmt.clone();
    apply_options!(stmt, opts);
    if let Some(n) = paged {
        stmt.set_page_size(n);
    }
    Request::Prepared(stmt, bound)
}

/// A request with everything it needs, not started yet. It is small: the driver's future
/// for it (over 13 KB) is only created, in a box, by [`Call::run`], so that handing a
/// request to the runtime moves a few hundred bytes rather than the whole future.
pub(crate) struct Call {
    session: Arc<ScyllaSession>,
    req: Arc<Request>,
    paged: bool,
    state: Option<PagingState>,
}

impl Call {
    pub(crate) fn run(self) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Outcome, ExecutionError>> + Send>> {
        Box::pin(async move { run_request(self.session, &self.req, self.paged, self.state).await })
    }
}

/// [`run_request`] of an owned request, boxed: what the engine's own loops
/// (`execute_concurrent`, pipelines) keep in flight, so that their in-flight sets hold
/// and move a pointer rather than the request's whole future.
pub(crate) fn run_request_boxed(session: Arc<ScyllaSession>, req: Request, paged: bool) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Outcome, ExecutionError>> + Send>> {
    Box::pin(async move { run_request(session, &req, paged, None).await })
}

/// Runs a request (one page, or unpaged).
pub(crate) async fn run_request(session: Arc<ScyllaSession>, req: &Request, paged: bool, state: Option<PagingState>) -> Result<Outcome, ExecutionError> {
    let state = state.unwrap_or_default();
    match (req, paged) {
        (Request::Prepared(stmt, values), true) => {
            let (result, paging) = session.execute_single_page(stmt, values, state).await?;
            Ok(Outcome { result, paging: Some(paging), columnar: false, named: false })
        }
        (Request::Prepared(stmt, values), false) => Ok(Outcome { result: session.execute_unpaged(stmt, values).await?, paging: None, columnar: false, named: false }),
        (Request::Query(stmt), true) => {
            let (result, paging) = session.query_single_page(stmt.clone(), (), state).await?;
            Ok(Outcome { result, paging: Some(paging), columnar: false, named: false })
        }
        (Request::Query(stmt), false) => Ok(Outcome { result: session.query_unpaged(stmt.clone(), ()).await?, paging: None, columnar: false, named: false }),
    }
}

/// Bounds `fut` by the client-side timeout, if any.
pub(crate) async fn timed<T>(timeout: Option<Duration>, fut: impl std::future::Future<Output = Result<T, ExecutionError>>) -> Result<T, ExecutionError> {
    match timeout {
        Some(t) => tokio::time::timeout(t, fut).await.map_err(|_| ExecutionError::RequestTimeout(t))?,
        None => fut.await,
    }
}

/// `(rows, column_names, column_types, paging_state, tracing_id, warnings)` of an outcome.
pub fn outcome_to_py<'py>(py: Python<'py>, out: Outcome) -> PyResult<Bound<'py, PyTuple>> {
    let tracing_id = match out.result.tracing_id() {
        Some(id) => {
            let kw = PyDict::new(py);
            kw.set_item("bytes", PyBytes::new(py, id.as_bytes()))?;
            errors::object(py, "UUID")?.bind(py).call((), Some(&kw))?
        }
        None => py.None().into_bound(py),
    };
    let warnings: Vec<String> = out.result.warnings().map(|w| w.to_string()).collect();
    let warnings = if warnings.is_empty() { py.None().into_bound(py) } else { PyList::new(py, warnings)?.into_any() };
    let paging_state = match out.paging {
        Some(PagingStateResponse::HasMorePages { state }) => match state.as_bytes_slice() {
            Some(b) => PyBytes::new(py, b).into_any(),
            None => py.None().into_bound(py),
        },
        _ => py.None().into_bound(py),
    };
    let none = || py.None().into_bound(py);
    let (rows, names, types) = match out.result.into_rows_result() {
        Ok(r) => {
            let (names, types) = rows::column_meta(py, &r)?;
            let rows = if out.columnar {
                rows::page_columns(py, &r)?.into_any()
            } else if out.named {
                rows::page_named_rows(py, &r, &names)?.into_any()
            } else {
                rows::page_rows(py, &r)?.into_any()
            };
            (rows, names.into_any(), types.into_any())
        }
        Err(_) => (none(), none(), none()),
    };
    PyTuple::new(py, [rows, names, types, paging_state, tracing_id, warnings])
}

/// Starts `task` on the runtime. Requests of an asyncio loop (`aio`) are handed over
/// once per loop iteration (see `aio::LoopQueue::defer`) and can be cancelled through
/// their `AioRequest`, which aborts the task; the others start at once.
fn start_task(py: Python<'_>, aio: Option<Bound<'_, AioRequest>>, task: impl std::future::Future<Output = ()> + Send + 'static) -> PyResult<()> {
    match aio {
        Some(req) => {
            let (abort, registration) = futures::future::AbortHandle::new_pair();
            let task = async move {
                let _ = futures::future::Abortable::new(task, registration).await;
            };
            let (queue, event_loop) = {
                let mut r = req.borrow_mut();
                r.set_abort(abort);
                (r.queue(py).clone(), r.event_loop(py).clone())
            };
            LoopQueue::defer(&queue, &event_loop, Box::pin(task))
        }
        None => {
            runtime::get().spawn(task);
            Ok(())
        }
    }
}

/// A statement with its values converted and its options applied (`Session.request`).
/// It runs the first page, and again for each further page with that page's
/// `paging_state`: `run` waits (GIL released), `submit_to` hands the result to a target
/// (dispatcher callable or `AioRequest`), `aio` starts it on an asyncio loop.
#[pyclass(frozen, module = "turbocql._engine", name = "Request")]
pub struct PyRequest {
    session: Arc<ScyllaSession>,
    hosts: Arc<str>,
    req: Arc<Request>,
    paged: bool,
    timeout: Option<Duration>,
    /// Pages decoded as numpy columns (`numpy_factory`).
    columnar: bool,
    /// Pages' rows made as named tuples at once (see [`Outcome::named`]).
    named: bool,
}

impl PyRequest {
    fn call(&self, paging_state: Option<&[u8]>) -> Call {
        Call { session: self.session.clone(), req: self.req.clone(), paged: self.paged, state: paging_state.map(paging_state_from) }
    }

    fn start(&self, py: Python<'_>, target: Py<PyAny>, paging_state: Option<&[u8]>) -> PyResult<()> {
        let call = self.call(paging_state);
        let (timeout, hosts, columnar, named) = (self.timeout, self.hosts.clone(), self.columnar, self.named);
        let aio = target.bind(py).cast::<AioRequest>().ok().cloned();
        let target = completion::Target::from_py(target, py);
        let task = async move {
            let outcome = timed(timeout, call.run()).await.map(|mut o| {
                o.columnar = columnar;
                o.named = named;
                o
            });
            completion::complete(target, outcome, hosts);
        };
        start_task(py, aio, task)
    }
}

#[pymethods]
impl PyRequest {
    /// Runs it and waits (GIL released); returns
    /// `(rows, column_names, column_types, paging_state, tracing_id, warnings)`.
    #[pyo3(signature = (paging_state=None))]
    pub(crate) fn run<'py>(&self, py: Python<'py>, paging_state: Option<&[u8]>) -> PyResult<Bound<'py, PyTuple>> {
        let call = self.call(paging_state);
        let timeout = self.timeout;
        let res = py.detach(|| runtime::block_on(timed(timeout, call.run())));
        let mut out = res.map_err(|e| errors::execution_error(py, &e, &self.hosts))?;
        out.columnar = self.columnar;
        out.named = self.named;
        outcome_to_py(py, out)
    }

    /// Starts it without waiting: `target(page, exc)` is called by the dispatcher (see
    /// `completion`), or `target` is an `AioRequest`, settled by its loop.
    #[pyo3(signature = (target, paging_state=None))]
    fn submit_to(&self, py: Python<'_>, target: Py<PyAny>, paging_state: Option<&[u8]>) -> PyResult<()> {
        self.start(py, target, paging_state)
    }

    /// Starts it on asyncio loop `event_loop` (its queue `queue`) and returns the
    /// `AioRequest`, whose awaiting gives `wrap(page, *args)`.
    #[pyo3(signature = (event_loop, queue, wrap, args, paging_state=None))]
    pub(crate) fn aio<'py>(&self, py: Python<'py>, event_loop: Py<PyAny>, queue: Py<LoopQueue>, wrap: Py<PyAny>, args: Py<PyTuple>, paging_state: Option<&[u8]>) -> PyResult<Bound<'py, AioRequest>> {
        let req = Bound::new(py, AioRequest::new(event_loop, queue, wrap, args))?;
        self.start(py, req.clone().into_any().unbind(), paging_state)?;
        Ok(req)
    }
}

/// An argument as given, `None` included (`Given(None)`: not given).
pub struct Given<'py>(pub Option<Bound<'py, PyAny>>);

pub fn given<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Given<'py>> {
    Ok(Given(Some(obj.clone())))
}

/// `turbocql.cluster.Session._build_request(query, parameters=None, timeout=_NOT_SET,
/// trace=False)` → `(request, row_factory)`: the engine request of any statement and the
/// row factory of its results. A `PreparedStatement`'s is built here, with no Python frame
/// (what `Session._row_mode` and `Session._request` do): its options (statement first, then
/// the session's defaults) are resolved once and kept on the statement as
/// [`StatementOpts`], stamped with this builder and its settings version. Assigning any
/// attribute of the statement drops them (`PreparedStatement.__setattr__`); assigning any
/// attribute of the session bumps the version (`Session.__setattr__` calls
/// `settings_changed`), so a change takes effect at the next call. Other statements go to
/// `fallback` (`Session._request_and_factory`, same arguments and result).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct RequestBuilder {
    /// `turbocql.cluster.Session`.
    session: Py<PyAny>,
    engine: Py<Session>,
    fallback: Py<PyAny>,
    prepared_type: Py<pyo3::types::PyType>,
    not_set: Py<PyAny>,
    fetch_size_unset: Py<PyAny>,
    numpy_factory: Py<PyAny>,
    numpy_handler: Py<PyAny>,
    /// Bumped by every assignment to a session attribute.
    version: std::sync::atomic::AtomicU64,
    /// Unique among the builders of this process (what a statement's cache is stamped with).
    id: u64,
}

static BUILDER_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A prepared statement's options as resolved by one [`RequestBuilder`] at one settings
/// version (kept in the statement's `_engine_opts`).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct StatementOpts {
    builder: u64,
    version: u64,
    prepared: Py<PyAny>,
    consistency: Option<u16>,
    serial_consistency: Option<u16>,
    fetch_size: Option<i32>,
    idempotent: bool,
    default_timeout: Option<f64>,
    row_factory: Py<PyAny>,
    columnar: bool,
    /// `row_factory` is the default named-tuple factory: rows are made as its tuples
    /// when the page is decoded.
    named: bool,
}

impl RequestBuilder {
    /// The options of prepared statement `query` for this session now: from the
    /// statement's cache if it is this builder's at the current version, else resolved
    /// (statement, then session defaults) and cached.
    fn opts<'py>(&self, py: Python<'py>, query: &Bound<'py, PyAny>) -> PyResult<Bound<'py, StatementOpts>> {
        let version = self.version.load(std::sync::atomic::Ordering::Acquire);
        let key = pyo3::intern!(py, "_engine_opts");
        if let Ok(cached) = query.getattr(key)?.cast_into::<StatementOpts>() {
            let o = cached.get();
            if o.builder == self.id && o.version == version {
                return Ok(cached);
            }
        }
        let s = self.session.bind(py);
        // The row mode (Session._row_mode): numpy columns, or the row factory's rows.
        let (row_factory, columnar) = if s.getattr(pyo3::intern!(py, "client_protocol_handler"))?.is(self.numpy_handler.bind(py)) {
            (self.numpy_factory.bind(py).clone(), true)
        } else {
            let f = s.getattr(pyo3::intern!(py, "row_factory"))?;
            let columnar = f.is(self.numpy_factory.bind(py));
            (f, columnar)
        };
        // The statement's option, unless `unset`: then the session's `default`.
        let option = |own: Bound<'py, PyAny>, unset: &Bound<'py, PyAny>, default: &Bound<'py, PyString>| -> PyResult<Bound<'py, PyAny>> {
            if own.is(unset) {
                s.getattr(default)
            } else {
                Ok(own)
            }
        };
        let none = py.None().into_bound(py);
        let cl = option(query.getattr(pyo3::intern!(py, "consistency_level"))?, &none, pyo3::intern!(py, "default_consistency_level"))?;
        let serial = option(query.getattr(pyo3::intern!(py, "serial_consistency_level"))?, &none, pyo3::intern!(py, "default_serial_consistency_level"))?;
        let fetch_size = option(query.getattr(pyo3::intern!(py, "fetch_size"))?, self.fetch_size_unset.bind(py), pyo3::intern!(py, "default_fetch_size"))?;
        let opts = StatementOpts {
            builder: self.id,
            version,
            prepared: query.getattr(pyo3::intern!(py, "_prepared"))?.unbind(),
            consistency: cl.extract()?,
            serial_consistency: serial.extract()?,
            fetch_size: fetch_size.extract()?,
            idempotent: query.getattr(pyo3::intern!(py, "is_idempotent"))?.is_truthy()?,
            default_timeout: s.getattr(pyo3::intern!(py, "default_timeout"))?.extract()?,
            named: !columnar && crate::results::is_named_rows(py, &row_factory),
            row_factory: row_factory.unbind(),
            columnar,
        };
        let opts = Bound::new(py, opts)?;
        query.setattr(key, &opts)?;
        Ok(opts)
    }

    pub fn session<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.session.bind(py)
    }

    /// The request of `query` (an `_engine.Request`, or the fallback's request object,
    /// e.g. a batch's) and the row factory of its results.
    pub fn build<'py>(&self, py: Python<'py>, query: &Bound<'py, PyAny>, parameters: Option<Bound<'py, PyAny>>, timeout: Given<'py>, trace: bool) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        if !query.get_type().is(self.prepared_type.bind(py)) {
            // Not a PreparedStatement (subclasses too): the Python implementation.
            let timeout = timeout.0.unwrap_or_else(|| self.not_set.bind(py).clone());
            return self.fallback.bind(py).call1((query, parameters, timeout, trace))?.extract();
        }
        let opts = self.opts(py, query)?;
        let o = opts.get();
        let timeout = match timeout.0 {
            Some(t) if !t.is(self.not_set.bind(py)) => t.extract()?,
            _ => o.default_timeout,
        };
        let mut request = self.engine.get().request(
            py,
            o.prepared.bind(py),
            parameters,
            o.consistency,
            o.serial_consistency,
            o.fetch_size,
            timeout,
            trace,
            None,
            o.idempotent,
            o.columnar,
        )?;
        request.named = o.named;
        let row_factory = o.row_factory.bind(py).clone();
        Ok((Bound::new(py, request)?.into_any(), row_factory))
    }
}

#[pymethods]
impl RequestBuilder {
    /// `constants`: `(PreparedStatement, _NOT_SET, FETCH_SIZE_UNSET, numpy_factory,
    /// NumpyProtocolHandler)`.
    #[new]
    fn new(py: Python<'_>, session: Py<PyAny>, fallback: Py<PyAny>, constants: (Py<pyo3::types::PyType>, Py<PyAny>, Py<PyAny>, Py<PyAny>, Py<PyAny>)) -> PyResult<Self> {
        let engine = session.bind(py).getattr(pyo3::intern!(py, "_session"))?.cast_into::<Session>()?.unbind();
        let (prepared_type, not_set, fetch_size_unset, numpy_factory, numpy_handler) = constants;
        Ok(RequestBuilder { session, engine, fallback, prepared_type, not_set, fetch_size_unset, numpy_factory, numpy_handler, version: Default::default(), id: BUILDER_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) })
    }

    /// A session attribute was assigned: statements' cached options are stale.
    fn settings_changed(&self) {
        self.version.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false))]
    fn __call__<'py>(&self, py: Python<'py>, query: &Bound<'py, PyAny>, parameters: Option<Bound<'py, PyAny>>, #[pyo3(from_py_with = given)] timeout: Given<'py>, trace: bool) -> PyResult<Bound<'py, PyTuple>> {
        let (request, row_factory) = self.build(py, query, parameters, timeout, trace)?;
        PyTuple::new(py, [request, row_factory])
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.session)?;
        visit.call(&self.fallback)
    }
}

#[pymethods]
impl StatementOpts {
    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.prepared)?;
        visit.call(&self.row_factory)
    }
}

/// `turbocql.cluster.Session.execute(query, parameters=None, timeout=_NOT_SET,
/// trace=False, custom_payload=None, execution_profile=..., paging_state=None, host=None,
/// execute_as=None)`, in one engine call: the request built by the session's
/// [`RequestBuilder`], run with the GIL released, and its `ResultSet` made (see
/// `results::make_result`), with no Python frame. Each session keeps one; the class's
/// `execute` is an [`EngineMethod`] that hands it out.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct SyncExecute {
    requests: Py<RequestBuilder>,
    /// `turbocql.cluster.ResultSet`.
    result_class: Py<PyAny>,
}

#[pymethods]
impl SyncExecute {
    #[new]
    fn new(requests: Py<RequestBuilder>, result_class: Py<PyAny>) -> Self {
        SyncExecute { requests, result_class }
    }

    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false, custom_payload=None, execution_profile=None, paging_state=None, host=None, execute_as=None))]
    #[allow(clippy::too_many_arguments, unused_variables)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        trace: bool,
        custom_payload: Option<Bound<'py, PyAny>>,
        execution_profile: Option<Bound<'py, PyAny>>,
        paging_state: Option<Bound<'py, PyAny>>,
        host: Option<Bound<'py, PyAny>>,
        execute_as: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let requests = self.requests.get();
        let (request, row_factory) = requests.build(py, query, parameters, timeout, trace)?;
        let page = match request.cast::<PyRequest>() {
            Ok(r) => {
                let state: Option<Vec<u8>> = paging_state.map(|p| p.extract()).transpose()?;
                r.get().run(py, state.as_deref())?.into_any()
            }
            // A batch (`cluster._BatchRequest`): same method, in Python.
            Err(_) => request.call_method1(pyo3::intern!(py, "run"), (paging_state,))?,
        };
        let args = [requests.session(py).clone(), request, row_factory, query.clone()];
        crate::results::make_result(self.result_class.bind(py), page, &args)
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.requests)?;
        visit.call(&self.result_class)
    }
}

/// A method of a Python class whose calls go to an engine object kept on each instance
/// (attribute `attr`, e.g. a session's [`SyncExecute`]): `instance.method` is that
/// object, so a call runs no Python frame. On the class (`Session.execute`) it is the
/// Python function, with its signature and docstring, and an instance without the
/// attribute gets the function bound as usual. Being a class attribute, it can be
/// replaced on the class (`mock.patch.object(Session, "execute")`) or overridden by a
/// subclass like any method.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct EngineMethod {
    function: Py<PyAny>,
    attr: Py<PyString>,
}

#[pymethods]
impl EngineMethod {
    #[new]
    fn new(function: Py<PyAny>, attr: Bound<'_, PyString>) -> PyResult<Self> {
        let py = attr.py();
        let attr = PyString::intern(py, attr.to_str()?).unbind();
        Ok(EngineMethod { function, attr })
    }

    fn __get__<'py>(&self, py: Python<'py>, obj: Option<Bound<'py, PyAny>>, objtype: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(self.function.bind(py).clone());
        };
        match obj.getattr_opt(self.attr.bind(py))? {
            Some(engine) => Ok(engine),
            None => self.function.bind(py).call_method1(pyo3::intern!(py, "__get__"), (obj, objtype)),
        }
    }

    /// The Python function (`functools.wraps`-style access for tools).
    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.function.clone_ref(py)
    }

    #[getter]
    fn __doc__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.function.bind(py).getattr(pyo3::intern!(py, "__doc__"))
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.function)
    }
}

/// A connected session.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Session {
    inner: RwLock<Option<Arc<ScyllaSession>>>,
    hosts: String,
    hosts_arc: Arc<str>,
}

impl Session {
    pub(crate) fn hosts_arc(&self) -> Arc<str> {
        self.hosts_arc.clone()
    }

    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<Arc<ScyllaSession>> {
        self.inner
            .read()
            .clone()
            .ok_or_else(|| errors::make(py, "DriverException", ("This session has been shut down",), None))
    }

    /// Runs `fut` with the GIL released, under the client-side timeout if any.
    fn wait<T: Send>(&self, py: Python<'_>, timeout: Option<Duration>, fut: impl std::future::Future<Output = Result<T, ExecutionError>> + Send) -> PyResult<T> {
        let res = py.detach(|| runtime::block_on(timed(timeout, fut)));
        res.map_err(|e| errors::execution_error(py, &e, &self.hosts))
    }
}

fn paging_state(raw: Option<&[u8]>) -> PagingState {
    match raw {
        Some(b) => PagingState::new_from_raw_bytes(b),
        None => PagingState::start(),
    }
}

#[pymethods]
impl Session {
    /// Prepares `query` on the cluster.
    #[pyo3(signature = (query, timeout=None))]
    fn prepare(&self, py: Python<'_>, query: String, timeout: Option<f64>) -> PyResult<Prepared> {
        let session = self.get(py)?;
        let timeout = timeout.map(|t| duration(t, "timeout")).transpose()?;
        let fut = async move { session.prepare(query).await.map_err(ExecutionError::PrepareError) };
        let stmt = self.wait(py, timeout, fut)?;
        Ok(Prepared { stmt })
    }

    /// A query string or a `Prepared` with `values`, ready to run (values converted and
    /// checked now: bad values raise before anything is sent). `fetch_size` None or 0
    /// means unpaged. See [`PyRequest`].
    #[pyo3(signature = (statement, values=None, consistency_level=None, serial_consistency_level=None, fetch_size=None, timeout=None, trace=false, timestamp=None, idempotent=false, columnar=false))]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn request(
        &self,
        py: Python<'_>,
        statement: &Bound<'_, PyAny>,
        values: Option<Bound<'_, PyAny>>,
        consistency_level: Option<u16>,
        serial_consistency_level: Option<u16>,
        fetch_size: Option<i32>,
        timeout: Option<f64>,
        trace: bool,
        timestamp: Option<i64>,
        idempotent: bool,
        columnar: bool,
    ) -> PyResult<PyRequest> {
        let opts = Options::new(consistency_level, serial_consistency_level, timeout, trace, timestamp, idempotent)?;
        let session = self.get(py)?;
        let paged = fetch_size.filter(|n| *n > 0);
        let req = Arc::new(build_request(py, statement, values.as_ref(), &opts, paged)?);
        Ok(PyRequest { session, hosts: self.hosts_arc.clone(), req, paged: paged.is_some(), timeout: opts.timeout, columnar, named: false })
    }

    /// Executes a batch of `(statement, values)` pairs; statements are str (values inlined)
    /// or `Prepared`. `batch_type`: 0 logged, 1 unlogged, 2 counter.
    #[pyo3(signature = (batch_type, items, consistency_level=None, serial_consistency_level=None, timeout=None, trace=false, timestamp=None, idempotent=false))]
    #[allow(clippy::too_many_arguments)]
    fn execute_batch<'py>(
        &self,
        py: Python<'py>,
        batch_type: u8,
        items: Vec<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)>,
        consistency_level: Option<u16>,
        serial_consistency_level: Option<u16>,
        timeout: Option<f64>,
        trace: bool,
        timestamp: Option<i64>,
        idempotent: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let opts = Options::new(consistency_level, serial_consistency_level, timeout, trace, timestamp, idempotent)?;
        let session = self.get(py)?;
        let (batch, values) = build_batch(py, batch_type, &items, &opts)?;
        let fut = async move { session.batch(&batch, &values).await };
        let result = self.wait(py, opts.timeout, fut)?;
        outcome_to_py(py, Outcome { result, paging: None, columnar: false, named: false })
    }

    /// Like `execute_batch`, without waiting (see `Request.submit_to`).
    #[pyo3(signature = (target, batch_type, items, consistency_level=None, serial_consistency_level=None, timeout=None, trace=false, timestamp=None, idempotent=false))]
    #[allow(clippy::too_many_arguments)]
    fn submit_batch<'py>(
        &self,
        py: Python<'py>,
        target: Py<PyAny>,
        batch_type: u8,
        items: Vec<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)>,
        consistency_level: Option<u16>,
        serial_consistency_level: Option<u16>,
        timeout: Option<f64>,
        trace: bool,
        timestamp: Option<i64>,
        idempotent: bool,
    ) -> PyResult<()> {
        let opts = Options::new(consistency_level, serial_consistency_level, timeout, trace, timestamp, idempotent)?;
        let session = self.get(py)?;
        let (batch, values) = build_batch(py, batch_type, &items, &opts)?;
        let hosts = self.hosts_arc.clone();
        let aio = target.bind(py).cast::<AioRequest>().ok().cloned();
        let target = completion::Target::from_py(target, py);
        let task = async move {
            let outcome = timed(opts.timeout, async { session.batch(&batch, &values).await.map(|result| Outcome { result, paging: None, columnar: false, named: false }) }).await;
            completion::complete(target, outcome, hosts);
        };
        start_task(py, aio, task)
    }

    /// Starts `execute_concurrent`: `statement` (a `Prepared` or str) with each item of
    /// `parameters` as its values, or, with `statement=None`, items that are
    /// `(statement, values[, consistency_level])` tuples. See `concurrent`.
    #[pyo3(signature = (statement, parameters, concurrency, raise_on_first_error, make_result, result_cls, consistency_level=None, serial_consistency_level=None, fetch_size=None, timeout=None, idempotent=false, columnar=false))]
    #[allow(clippy::too_many_arguments)]
    fn execute_concurrent(
        &self,
        py: Python<'_>,
        statement: Option<Py<PyAny>>,
        parameters: &Bound<'_, PyAny>,
        concurrency: usize,
        raise_on_first_error: bool,
        make_result: Py<PyAny>,
        result_cls: Py<PyAny>,
        consistency_level: Option<u16>,
        serial_consistency_level: Option<u16>,
        fetch_size: Option<i32>,
        timeout: Option<f64>,
        idempotent: bool,
        columnar: bool,
    ) -> PyResult<crate::concurrent::ConcurrentRun> {
        let mut opts = Options::new(consistency_level, serial_consistency_level, timeout, false, None, idempotent)?;
        opts.columnar = columnar;
        let session = self.get(py)?;
        crate::concurrent::start(session, self.hosts_arc(), statement, parameters, opts, fetch_size, concurrency, raise_on_first_error, make_result, result_cls)
    }

    /// Starts a pipeline (see `pipeline`): a write pipeline when `max_unconsumed` is None.
    #[pyo3(signature = (max_in_flight, max_unsent, max_unconsumed=None, consistency_level=None, serial_consistency_level=None, timeout=None))]
    fn pipeline(
        &self,
        py: Python<'_>,
        max_in_flight: usize,
        max_unsent: usize,
        max_unconsumed: Option<usize>,
        consistency_level: Option<u16>,
        serial_consistency_level: Option<u16>,
        timeout: Option<f64>,
    ) -> PyResult<crate::pipeline::PipelineCore> {
        let opts = Options::new(consistency_level, serial_consistency_level, timeout, false, None, false)?;
        crate::pipeline::start(self.get(py)?, self.hosts_arc(), opts, max_in_flight, max_unsent, max_unconsumed)
    }

    /// Switches every connection of the session to `keyspace` (case-sensitive).
    #[pyo3(signature = (keyspace, timeout=None))]
    fn set_keyspace(&self, py: Python<'_>, keyspace: String, timeout: Option<f64>) -> PyResult<()> {
        let session = self.get(py)?;
        let timeout = timeout.map(|t| duration(t, "timeout")).transpose()?;
        let fut = async move { session.use_keyspace(keyspace, true).await.map_err(ExecutionError::UseKeyspaceError) };
        self.wait(py, timeout, fut)
    }

    /// The session's current keyspace, if any.
    #[getter]
    fn keyspace(&self) -> Option<String> {
        self.inner.read().as_ref().and_then(|s| s.get_keyspace()).map(|k| k.to_string())
    }

    /// The contact points, as `host:port` text.
    #[getter]
    fn hosts(&self) -> &str {
        &self.hosts
    }

    #[getter]
    fn is_shutdown(&self) -> bool {
        self.inner.read().is_none()
    }

    /// Closes every connection; later requests raise.
    fn shutdown(&self, py: Python<'_>) {
        let taken = self.inner.write().take();
        if let Some(s) = taken {
            // Dropping the session closes its connections; do it where tokio can run.
            py.detach(|| runtime::block_on(async move { drop(s) }));
        }
    }
}

/// Builds a batch; every value is converted before anything is sent, so one bad value
/// sends nothing.
fn build_batch(py: Python<'_>, batch_type: u8, items: &[(Bound<'_, PyAny>, Option<Bound<'_, PyAny>>)], opts: &Options) -> PyResult<(Batch, Vec<BoundValues>)> {
    let kind = match batch_type {
        0 => BatchType::Logged,
        1 => BatchType::Unlogged,
        2 => BatchType::Counter,
        other => return Err(PyValueError::new_err(format!("unknown batch type {other}"))),
    };
    let mut batch = Batch::new(kind);
    let mut all_values = Vec::with_capacity(items.len());
    for (i, (stmt, vals)) in items.iter().enumerate() {
        if let Ok(p) = stmt.cast::<Prepared>() {
            let p = p.get();
            let bound = bind_row(py, vals.as_ref(), p.stmt.get_variable_col_specs().as_slice())
                .map_err(|e| annotate(py, e, &format!("batch statement {i}")))?;
            batch.append_statement(BatchStatement::PreparedStatement(p.stmt.clone()));
            all_values.push(bound);
        } else if let Ok(q) = stmt.cast::<PyString>() {
            batch.append_statement(BatchStatement::Query(Statement::new(q.to_cow()?.into_owned())));
            all_values.push(BoundValues::default());
        } else {
            return Err(PyTypeError::new_err(format!("batch statement {i} must be a str or a prepared statement")));
        }
    }
    apply_options!(batch, opts);
    Ok((batch, all_values))
}

fn paging_state_from(b: &[u8]) -> PagingState {
    paging_state(Some(b))
}

fn annotate(py: Python<'_>, e: PyErr, context: &str) -> PyErr {
    let msg = format!("{context}: {}", e.value(py));
    if e.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(msg)
    } else if e.is_instance_of::<PyValueError>(py) {
        PyValueError::new_err(msg)
    } else {
        e
    }
}

fn node_addr(host: &str, port: u16) -> String {
    match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port).to_string(),
        Err(_) if host.contains(':') => host.to_string(),
        Err(_) => format!("{host}:{port}"),
    }
}

/// Connects to the cluster and returns a `Session`.
///
/// Raises `NoHostAvailable` if no contact point answers within `connect_timeout`,
/// `InvalidRequest` for an unknown `keyspace`.
#[pyfunction]
#[pyo3(signature = (contact_points, port=9042, username=None, password=None, keyspace=None, compression=None, connect_timeout=5.0, tcp_nodelay=true))]
#[allow(clippy::too_many_arguments)]
pub fn connect(
    py: Python<'_>,
    contact_points: Vec<String>,
    port: u16,
    username: Option<String>,
    password: Option<String>,
    keyspace: Option<String>,
    compression: Option<&str>,
    connect_timeout: f64,
    tcp_nodelay: bool,
) -> PyResult<Session> {
    if contact_points.is_empty() {
        return Err(PyValueError::new_err("contact_points must name at least one host"));
    }
    let connect_timeout = duration(connect_timeout, "connect_timeout")?;
    let nodes: Vec<String> = contact_points.iter().map(|h| node_addr(h, port)).collect();
    let hosts = nodes.join(", ");
    let profile = ExecutionProfile::builder()
        .consistency(Consistency::LocalOne)
        .request_timeout(None)
        .build()
        .into_handle();
    let mut builder = SessionBuilder::new()
        .known_nodes(&nodes)
        .connection_timeout(connect_timeout)
        .tcp_nodelay(tcp_nodelay)
        .default_execution_profile_handle(profile)
        .metadata_request_clientside_timeout(connect_timeout)
        .compression(match compression {
            None => None,
            Some("lz4") => Some(Compression::Lz4),
            Some("snappy") => Some(Compression::Snappy),
            Some(other) => return Err(PyValueError::new_err(format!("unknown compression {other:?}: use 'lz4', 'snappy' or None"))),
        });
    if let Some(u) = username {
        builder = builder.user(u, password.unwrap_or_default());
    }
    if let Some(ks) = keyspace {
        builder = builder.use_keyspace(ks, true);
    }
    // The whole handshake (TCP, STARTUP, auth, metadata) is bounded by the connect timeout.
    let overall = connect_timeout + Duration::from_millis(500);
    let res = py.detach(|| runtime::block_on(async move { tokio::time::timeout(overall, builder.build()).await }));
    match res {
        Err(_) => Err(errors::no_host(
            py,
            &format!("Unable to connect to any servers within {:.3} s (connect_timeout)", connect_timeout.as_secs_f64()),
            &hosts,
            "connect timeout",
        )),
        Ok(Err(e)) => Err(errors::new_session_error(py, &e, &hosts)),
        Ok(Ok(s)) => Ok(Session { inner: RwLock::new(Some(Arc::new(s))), hosts_arc: Arc::from(hosts.as_str()), hosts }),
    }
}
