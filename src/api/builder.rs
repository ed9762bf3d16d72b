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
//! `settings_changed`), and they are read again once the default profile they came from
//! is stale (`exec::profile::EngineProfile::mark_stale`), so a change takes effect at the
//! next call.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use scylla::client::execution_profile::{ExecutionProfile, ExecutionProfileHandle};
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};

use super::concurrent::{self, ConcurrentRun};
use super::pipeline::{self, PipelineCore};
use super::request::PyRequest;
use super::session::Session;
use crate::errors;
use crate::exec::metrics::{Counters, RequestMetrics};
use crate::exec::options::{duration, Defaults, RowShape, Timeout};
use crate::exec::profile::EngineProfile;
use crate::exec::recorder::{TraceConf, Tracing};
use crate::exec::replica_batch::Grouping;
use crate::exec::request;
use crate::exec::statement::classify;
use crate::exec::timestamps::ClientClock;
use crate::exec::tracing;
use crate::pyrefs::{self, Exc};

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

/// Where a call is routed: its `execution_profile` and `host` arguments (None: left out).
#[derive(Default)]
pub struct Route<'py> {
    pub execution_profile: Option<Bound<'py, PyAny>>,
    pub host: Option<Bound<'py, PyAny>>,
}

/// Raises for the classic `execute` arguments that the engine cannot honour, rather
/// than ignore them.
fn refuse_unsupported(py: Python<'_>, custom_payload: Option<&Bound<'_, PyAny>>, execute_as: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    if custom_payload.is_some_and(|p| !p.is_none()) {
        return Err(errors::make(py, Exc::UnsupportedOperation, ("custom_payload is not supported by turbocql (the scylla crate sends none)",), None));
    }
    if execute_as.is_some_and(|p| !p.is_none()) {
        return Err(errors::make(py, Exc::UnsupportedOperation, ("execute_as (proxy execution) is not supported by turbocql",), None));
    }
    Ok(())
}

/// A session's defaults at one settings version.
pub struct Snapshot {
    /// The session's settings version they were read at.
    version: u64,
    /// The default profile they were read from: read again once it is stale.
    profile: Py<EngineProfile>,
    pub defaults: Arc<Defaults>,
    pub row_factory: Py<PyAny>,
    pub encoder: Py<PyAny>,
    /// `client_protocol_handler` is `NumpyProtocolHandler`: rows as numpy columns,
    /// whatever the profile's row factory.
    numpy: bool,
    /// `Session._engine_tracing`: the cluster's tracing when instrumented.
    tracing: Option<Arc<TraceConf>>,
}

/// A profile's defaults, with the session's page size and numpy choice.
fn profile_defaults(
    profile: &EngineProfile,
    page_size: Option<i32>,
    numpy: bool,
    clock: Option<Arc<Py<ClientClock>>>,
    metrics: Option<Arc<Counters>>,
) -> Defaults {
    Defaults {
        consistency: profile.consistency,
        serial: profile.serial,
        page_size,
        timeout: profile.timeout,
        shape: if numpy { RowShape::Columns } else { profile.shape },
        profile: Some(profile.handle.clone()),
        plan: profile.plan.clone(),
        clock,
        metrics,
    }
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
        if let Some(s) = self.snapshot.lock().as_ref().filter(|s| s.version == version && !s.profile.get().stale()) {
            return Ok(s.clone());
        }
        let snap = Arc::new(self.read_defaults(py, version)?);
        *self.snapshot.lock() = Some(snap.clone());
        Ok(snap)
    }

    fn read_defaults(&self, py: Python<'_>, version: u64) -> PyResult<Snapshot> {
        let refs = pyrefs::get(py)?;
        let s = self.session.bind(py);
        // The default execution profile (in legacy mode, the one the session's
        // `default_*` attributes and the cluster's policies make).
        let engine_profile = s.call_method1(pyo3::intern!(py, "_engine_profile_for"), (py.None(),))?.cast_into::<EngineProfile>()?;
        let profile = engine_profile.get();
        let fetch_size: Option<i32> = s.getattr(pyo3::intern!(py, "default_fetch_size"))?.extract()?;
        // None or not positive: unpaged.
        let page_size = fetch_size.filter(|n| *n > 0);
        let numpy = s.getattr(pyo3::intern!(py, "client_protocol_handler"))?.is(refs.NumpyProtocolHandler.bind(py));
        // `Session._client_clock`: None when `use_client_timestamp` is off.
        let clock = s.getattr(pyo3::intern!(py, "_client_clock"))?;
        let clock = if clock.is_none() { None } else { Some(Arc::new(clock.cast_into::<ClientClock>()?.unbind())) };
        // `Session._engine_metrics`: the cluster's metrics when enabled (not on the
        // cluster's own reads of the system tables, which the classic driver does not count).
        let metrics = match s.getattr_opt(pyo3::intern!(py, "_engine_metrics"))? {
            Some(m) if !m.is_none() => Some(m.cast_into::<RequestMetrics>()?.get().counters.clone()),
            _ => None,
        };
        let defaults = profile_defaults(profile, page_size, numpy, clock, metrics);
        // `Session._engine_tracing`: the cluster's `_engine.Tracing` once instrumented
        // (`turbocql.tracing.instrument`), else None.
        let tracing = match s.getattr_opt(pyo3::intern!(py, "_engine_tracing"))? {
            Some(t) if !t.is_none() => Some(t.cast_into::<Tracing>()?.get().conf.clone()),
            _ => None,
        };
        let row_factory = if numpy { refs.numpy_factory.clone_ref(py) } else { profile.row_factory.clone_ref(py) };
        let encoder = s.getattr(pyo3::intern!(py, "encoder"))?.unbind();
        Ok(Snapshot { version, profile: engine_profile.clone().unbind(), defaults: Arc::new(defaults), row_factory, encoder, numpy, tracing })
    }

    /// The defaults and row factory of a call's `execution_profile` argument (None or
    /// `EXEC_PROFILE_DEFAULT`: the session's default profile).
    pub fn defaults_for<'py>(
        &self,
        py: Python<'py>,
        snap: &Snapshot,
        execution_profile: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<(Defaults, Bound<'py, PyAny>)>> {
        let Some(ep) = execution_profile.filter(|ep| !ep.is_none()) else {
            return Ok(None);
        };
        if ep.is(pyrefs::get(py)?.EXEC_PROFILE_DEFAULT.bind(py)) {
            return Ok(None);
        }
        let profile = self.session.bind(py).call_method1(pyo3::intern!(py, "_engine_profile_for"), (ep,))?;
        let profile = profile.cast::<EngineProfile>()?.get();
        let defaults = profile_defaults(profile, snap.defaults.page_size, snap.numpy, snap.defaults.clock.clone(), snap.defaults.metrics.clone());
        let row_factory = if snap.numpy { snap.row_factory.bind(py).clone() } else { profile.row_factory.bind(py).clone() };
        Ok(Some((defaults, row_factory)))
    }

    pub fn session<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.session.bind(py)
    }

    /// [`RequestBuilder::build`] for a classic `execute` / `execute_async` call, whose
    /// `custom_payload` and `execute_as` are refused (`UnsupportedOperation`) rather than ignored.
    #[allow(clippy::too_many_arguments)]
    pub fn build_classic<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        timeout: Given<'py>,
        trace: bool,
        route: Route<'py>,
        custom_payload: Option<Bound<'py, PyAny>>,
        execute_as: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(PyRequest, Bound<'py, PyAny>)> {
        refuse_unsupported(py, custom_payload.as_ref(), execute_as.as_ref())?;
        self.build(py, query, parameters, timeout, trace, route)
    }

    /// The request of `query` with `parameters`, and the row factory of its results.
    pub fn build<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        timeout: Given<'py>,
        trace: bool,
        route: Route<'py>,
    ) -> PyResult<(PyRequest, Bound<'py, PyAny>)> {
        let statement = classify(py, query)?;
        let snap = self.snapshot(py)?;
        let timeout = timeout.timeout()?;
        let (mut opts, row_factory) = match self.defaults_for(py, &snap, route.execution_profile.as_ref())? {
            None => (snap.defaults.resolve(&statement.own, timeout, trace), snap.row_factory.bind(py).clone()),
            Some((defaults, row_factory)) => (defaults.resolve(&statement.own, timeout, trace), row_factory),
        };
        if let Some(host) = route.host.filter(|h| !h.is_none()) {
            opts.profile = Some(self.single_host(py, opts.profile.take(), &host)?);
        }
        let mut req = request::build(py, &statement, parameters.as_ref(), &opts, snap.encoder.bind(py))?;
        let engine = self.engine.get();
        let session = engine.get(py)?;
        req.route(py, &opts, query, &session)?;
        if let Some(conf) = &snap.tracing {
            tracing::attach(conf, &mut req);
        }
        Ok((PyRequest::new(session, engine.hosts_arc(), engine.in_flight(), req), row_factory))
    }

    /// `profile` sending to `host` only (a `Host` or an address), as the classic
    /// `execute(..., host=...)`: no other host is tried.
    fn single_host(&self, py: Python<'_>, profile: Option<ExecutionProfileHandle>, host: &Bound<'_, PyAny>) -> PyResult<ExecutionProfileHandle> {
        let addr: String = self.session.bind(py).call_method1(pyo3::intern!(py, "_host_address"), (host,))?.extract()?;
        let addr: SocketAddr = addr.parse().map_err(|_| PyValueError::new_err(format!("not a host address: {addr:?}")))?;
        let builder = match profile {
            Some(p) => p.pointee_to_builder(),
            None => ExecutionProfile::builder().request_timeout(None),
        };
        let target = SingleTargetLoadBalancingPolicy::new(NodeIdentifier::NodeAddress(addr), None);
        Ok(builder.load_balancing_policy(target).build().into_handle())
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

    /// `(request, row_factory)` of `query` (see [`RequestBuilder::build`]); raises
    /// `UnsupportedOperation` for a `custom_payload` or `execute_as`.
    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false, execution_profile=None, host=None, custom_payload=None, execute_as=None))]
    #[allow(clippy::too_many_arguments)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        trace: bool,
        execution_profile: Option<Bound<'py, PyAny>>,
        host: Option<Bound<'py, PyAny>>,
        custom_payload: Option<Bound<'py, PyAny>>,
        execute_as: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let route = Route { execution_profile, host };
        let (request, row_factory) = self.build_classic(py, query, parameters, timeout, trace, route, custom_payload, execute_as)?;
        PyTuple::new(py, [request.into_untracked(py)?.into_any(), row_factory])
    }

    /// The session's row factory now.
    #[getter]
    fn row_factory(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.snapshot(py)?.row_factory.clone_ref(py))
    }

    /// The row factory of requests run with `execution_profile`.
    #[pyo3(signature = (execution_profile=None))]
    fn row_factory_for<'py>(&self, py: Python<'py>, execution_profile: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let snap = self.snapshot(py)?;
        Ok(match self.defaults_for(py, &snap, execution_profile.as_ref())? {
            Some((_, row_factory)) => row_factory,
            None => snap.row_factory.bind(py).clone(),
        })
    }

    /// Starts `execute_concurrent` (see `super::concurrent`): `statement` with each item of
    /// `parameters` as its values, or, with `statement=None`, items that are
    /// `(statement, parameters)` pairs. Results are `result_cls(success, result or
    /// exception)`, where a result is `result_set(page, session, request, row_factory,
    /// statement)`, as `session.execute` makes it (the request is there when the result has
    /// more pages; `statement` is None for pairs). With `check_only`, each item's values are converted and nothing is
    /// sent: its result is `result_cls(True, None)` or the conversion's error (the dry run
    /// of `turbocql load`). With `batch_rows`, rows whose partitions have the same replicas
    /// are written in UNLOGGED batches of up to `batch_rows` rows and `batch_bytes` bytes of
    /// values (`exec::replica_batch`), and the run is read by `failures()` only.
    #[pyo3(signature = (statement, parameters, concurrency, raise_on_first_error, result_set, result_cls, execution_profile=None, check_only=false, batch_rows=None, batch_bytes=3584))]
    #[allow(clippy::too_many_arguments)]
    fn execute_concurrent(
        &self,
        py: Python<'_>,
        statement: Option<&Bound<'_, PyAny>>,
        parameters: &Bound<'_, PyAny>,
        concurrency: usize,
        raise_on_first_error: bool,
        result_set: Py<PyAny>,
        result_cls: Py<PyAny>,
        execution_profile: Option<Bound<'_, PyAny>>,
        check_only: bool,
        batch_rows: Option<usize>,
        batch_bytes: usize,
    ) -> PyResult<ConcurrentRun> {
        let query = statement.map(|s| s.clone().unbind());
        let statement = statement.map(|s| classify(py, s)).transpose()?;
        let snap = self.snapshot(py)?;
        let (defaults, row_factory) = match self.defaults_for(py, &snap, execution_profile.as_ref())? {
            None => (snap.defaults.clone(), snap.row_factory.clone_ref(py)),
            Some((d, row_factory)) => (Arc::new(d), row_factory.unbind()),
        };
        let engine = self.engine.get();
        let grouping = match batch_rows {
            None | Some(0 | 1) => None,
            Some(max_rows) => Some(Grouping { max_rows, max_bytes: batch_bytes }),
        };
        let result_args = concurrent::ResultArgs { session: self.session.clone_ref(py), row_factory };
        let result_cls_is_named_tuple = crate::codec::named_rows::is_named_tuple_class(result_cls.bind(py), 2);
        let settings =
            concurrent::Settings { concurrency, raise_on_first_error, result_set, result_args, result_cls, result_cls_is_named_tuple, check_only, grouping };
        concurrent::start(
            engine.get(py)?,
            engine.hosts_arc(),
            engine.in_flight(),
            statement.map(|s| (s, query.expect("a classified statement has its object"))),
            parameters,
            defaults,
            snap.encoder.clone_ref(py),
            settings,
        )
    }

    /// Starts a pipeline (see `super::pipeline`): a write pipeline when `max_unconsumed`
    /// is None.
    #[pyo3(signature = (max_in_flight, max_unsent, max_unconsumed=None, timeout=Given(None), execution_profile=None, error_handler=None))]
    fn pipeline(
        &self,
        py: Python<'_>,
        max_in_flight: usize,
        max_unsent: usize,
        max_unconsumed: Option<usize>,
        #[pyo3(from_py_with = given)] timeout: Given<'_>,
        execution_profile: Option<Bound<'_, PyAny>>,
        error_handler: Option<Py<PyAny>>,
    ) -> PyResult<PipelineCore> {
        let snap = self.snapshot(py)?;
        let defaults = self.defaults_for(py, &snap, execution_profile.as_ref())?.map_or_else(|| snap.defaults.clone(), |(d, _)| Arc::new(d));
        let engine = self.engine.get();
        let limits = pipeline::Limits { max_in_flight, max_unsent, max_unconsumed };
        pipeline::start(
            engine.get(py)?,
            engine.hosts_arc(),
            engine.in_flight(),
            defaults,
            snap.encoder.clone_ref(py),
            timeout.timeout()?,
            limits,
            error_handler,
        )
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.session)?;
        visit.call(&self.engine)?;
        if let Some(snap) = self.snapshot.try_lock().as_ref().and_then(|s| s.as_ref()) {
            visit.call(&snap.row_factory)?;
            visit.call(&snap.encoder)?;
            visit.call(&snap.profile)?;
        }
        Ok(())
    }

    fn __clear__(&self) {
        // Dropped after the lock is released: dropping can run Python code.
        let _dropped = self.snapshot.lock().take();
    }
}
