//! Builder: [`RequestBuilder`], a session's requests and their defaults
//! (`turbocql.cluster.Session._build_request`).
//!
//! Every path asks it for requests: `execute`, `execute_async` and asyncio through
//! [`RequestBuilder::build`], `execute_concurrent*` and pipelines through the runs it
//! starts. Each request is made the same way: the statement classified
//! (`exec::statement::classify`), its options resolved against the session's defaults
//! (`exec::options::Defaults`), then built (`exec::request::build`).
//!
//! The defaults are read from the Python session's attributes (`default_timeout`,
//! `default_consistency_level`, `default_serial_consistency_level`, `default_fetch_size`,
//! `row_factory`, `client_protocol_handler`, `encoder`) once per settings version:
//! assigning any session attribute bumps it (`Session.__setattr__` calls
//! `settings_changed`), so a change takes effect at the next call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::concurrent::{self, ConcurrentRun};
use super::pipeline::{self, PipelineCore};
use super::request::PyRequest;
use super::session::Session;
use crate::exec::options::{consistency_of, duration, serial_consistency_of, Defaults, RowShape, Timeout};
use crate::exec::request;
use crate::exec::statement::classify;
use crate::pyrefs;

/// An argument as given, `None` included (`Given(None)`: left out).
pub struct Given<'py>(pub Option<Bound<'py, PyAny>>);

pub fn given<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Given<'py>> {
    Ok(Given(Some(obj.clone())))
}

impl Given<'_> {
    /// A `timeout` argument: left out or `_NOT_SET` (the default), None, or seconds.
    pub fn timeout(&self) -> PyResult<Timeout> {
        match &self.0 {
            None => Ok(Timeout::Default),
            Some(t) if t.is_none() => Ok(Timeout::Unbounded),
            Some(t) => {
                if t.is(pyrefs::get(t.py())?.NOT_SET.bind(t.py())) {
                    return Ok(Timeout::Default);
                }
                Ok(Timeout::After(duration(t.extract()?, "timeout")?))
            }
        }
    }
}

/// A session's defaults at one settings version.
pub struct Snapshot {
    version: u64,
    pub defaults: Arc<Defaults>,
    pub row_factory: Py<PyAny>,
    pub encoder: Py<PyAny>,
}

/// A session's requests (see the module doc).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct RequestBuilder {
    /// `turbocql.cluster.Session`.
    session: Py<PyAny>,
    engine: Py<Session>,
    /// Bumped by every assignment to a session attribute.
    version: AtomicU64,
    snapshot: Mutex<Option<Arc<Snapshot>>>,
}

impl RequestBuilder {
    /// The session's defaults now (read again after a settings change).
    pub fn snapshot(&self, py: Python<'_>) -> PyResult<Arc<Snapshot>> {
        let version = self.version.load(Ordering::Acquire);
        if let Some(s) = self.snapshot.lock().as_ref().filter(|s| s.version == version) {
            return Ok(s.clone());
        }
        let snap = Arc::new(self.read_defaults(py, version)?);
        *self.snapshot.lock() = Some(snap.clone());
        Ok(snap)
    }

    fn read_defaults(&self, py: Python<'_>, version: u64) -> PyResult<Snapshot> {
        let refs = pyrefs::get(py)?;
        let s = self.session.bind(py);
        let numpy_factory = refs.numpy_factory.bind(py);
        // Rows as numpy columns for NumpyProtocolHandler or numpy_factory; named tuples
        // made while decoding for the default factory; plain tuples for any other.
        let (row_factory, shape) = if s.getattr(pyo3::intern!(py, "client_protocol_handler"))?.is(refs.NumpyProtocolHandler.bind(py)) {
            (numpy_factory.clone(), RowShape::Columns)
        } else {
            let f = s.getattr(pyo3::intern!(py, "row_factory"))?;
            let shape = if f.is(numpy_factory) {
                RowShape::Columns
            } else if f.is(refs.named_rows.bind(py)) {
                RowShape::Named
            } else {
                RowShape::Tuples
            };
            (f, shape)
        };
        let fetch_size: Option<i32> = s.getattr(pyo3::intern!(py, "default_fetch_size"))?.extract()?;
        let timeout: Option<f64> = s.getattr(pyo3::intern!(py, "default_timeout"))?.extract()?;
        // None or not positive: unpaged.
        let page_size = fetch_size.filter(|n| *n > 0);
        let defaults = Defaults {
            consistency: consistency_of(&s.getattr(pyo3::intern!(py, "default_consistency_level"))?)?,
            serial: serial_consistency_of(&s.getattr(pyo3::intern!(py, "default_serial_consistency_level"))?)?,
            page_size,
            timeout: timeout.map(|t| duration(t, "default_timeout")).transpose()?,
            shape,
        };
        let encoder = s.getattr(pyo3::intern!(py, "encoder"))?.unbind();
        Ok(Snapshot { version, defaults: Arc::new(defaults), row_factory: row_factory.unbind(), encoder })
    }

    pub fn session<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.session.bind(py)
    }

    /// The request of `query` with `parameters`, and the row factory of its results.
    pub fn build<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        timeout: Given<'py>,
        trace: bool,
    ) -> PyResult<(PyRequest, Bound<'py, PyAny>)> {
        let statement = classify(py, query)?;
        let snap = self.snapshot(py)?;
        let opts = snap.defaults.resolve(&statement.own, timeout.timeout()?, trace);
        let req = request::build(py, &statement, parameters.as_ref(), &opts, snap.encoder.bind(py))?;
        let engine = self.engine.get();
        Ok((PyRequest::new(engine.get(py)?, engine.hosts_arc(), req), snap.row_factory.bind(py).clone()))
    }
}

#[pymethods]
impl RequestBuilder {
    #[new]
    fn new(py: Python<'_>, session: Py<PyAny>) -> PyResult<Self> {
        let engine = session.bind(py).getattr(pyo3::intern!(py, "_session"))?.cast_into::<Session>()?.unbind();
        Ok(RequestBuilder { session, engine, version: AtomicU64::new(0), snapshot: Mutex::new(None) })
    }

    /// A session attribute was assigned: the defaults are read again at the next call
    /// (and the old ones, a row factory among them, are not kept until then).
    fn settings_changed(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
        let _dropped = self.snapshot.lock().take();
    }

    /// `(request, row_factory)` of `query` (see [`RequestBuilder::build`]).
    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        trace: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (request, row_factory) = self.build(py, query, parameters, timeout, trace)?;
        PyTuple::new(py, [Bound::new(py, request)?.into_any(), row_factory])
    }

    /// The session's row factory now.
    #[getter]
    fn row_factory(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.snapshot(py)?.row_factory.clone_ref(py))
    }

    /// Starts `execute_concurrent` (see `super::concurrent`): `statement` with each item of
    /// `parameters` as its values, or, with `statement=None`, items that are
    /// `(statement, parameters)` pairs. Results are `result_cls(success, make_result(page)
    /// or exception)`.
    #[pyo3(signature = (statement, parameters, concurrency, raise_on_first_error, make_result, result_cls))]
    #[allow(clippy::too_many_arguments)]
    fn execute_concurrent(
        &self,
        py: Python<'_>,
        statement: Option<&Bound<'_, PyAny>>,
        parameters: &Bound<'_, PyAny>,
        concurrency: usize,
        raise_on_first_error: bool,
        make_result: Py<PyAny>,
        result_cls: Py<PyAny>,
    ) -> PyResult<ConcurrentRun> {
        let statement = statement.map(|s| classify(py, s)).transpose()?;
        let snap = self.snapshot(py)?;
        let engine = self.engine.get();
        let settings = concurrent::Settings { concurrency, raise_on_first_error, make_result, result_cls };
        concurrent::start(engine.get(py)?, engine.hosts_arc(), statement, parameters, snap.defaults.clone(), snap.encoder.clone_ref(py), settings)
    }

    /// Starts a pipeline (see `super::pipeline`): a write pipeline when `max_unconsumed`
    /// is None.
    #[pyo3(signature = (max_in_flight, max_unsent, max_unconsumed=None, timeout=Given(None)))]
    fn pipeline(
        &self,
        py: Python<'_>,
        max_in_flight: usize,
        max_unsent: usize,
        max_unconsumed: Option<usize>,
        #[pyo3(from_py_with = given)] timeout: Given<'_>,
    ) -> PyResult<PipelineCore> {
        let snap = self.snapshot(py)?;
        let engine = self.engine.get();
        let limits = pipeline::Limits { max_in_flight, max_unsent, max_unconsumed };
        pipeline::start(engine.get(py)?, engine.hosts_arc(), snap.defaults.clone(), snap.encoder.clone_ref(py), timeout.timeout()?, limits)
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.session)?;
        visit.call(&self.engine)?;
        if let Some(snap) = self.snapshot.try_lock().as_ref().and_then(|s| s.as_ref()) {
            visit.call(&snap.row_factory)?;
            visit.call(&snap.encoder)?;
        }
        Ok(())
    }

    fn __clear__(&self) {
        // Dropped after the lock is released: dropping can run Python code.
        let _dropped = self.snapshot.lock().take();
    }
}
