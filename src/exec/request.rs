//! Request: what is sent, built by [`build`], the one function every path calls, from a
//! classified statement (`super::statement`), the call's parameters and its options.
//!
//! Values are converted here, under the GIL, before anything is sent: a value that does
//! not fit raises now (TypeError / ValueError naming the column), and one bad value in a
//! batch sends nothing.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Statement;

use super::metrics::Counters;
use super::options::{apply_options, Options, RowShape};
use super::prepared::Prepared;
use super::recorder::Recorder;
use super::routing::{plan_of, PlanSource};
use super::statement::{Classified, Kind};
use crate::codec::values::{bind_row, BoundValues};
use crate::pyrefs;
use scylla::client::session::Session as ScyllaSession;

/// A request ready to run: statement with its values and options, and how its result is
/// handed back.
pub struct Request {
    pub kind: RequestKind,
    /// Fetched a page at a time (the statement's page size is set).
    pub paged: bool,
    /// Client-side timeout.
    pub timeout: Option<Duration>,
    pub shape: RowShape,
    /// The cluster's metrics, when enabled.
    pub metrics: Option<Arc<Counters>>,
    /// Its span's recorder, when its session is instrumented (`super::tracing`); set by
    /// the per-request paths only.
    pub tracing: Option<Arc<Recorder>>,
}

impl Request {
    /// `kind` run with `opts` (a batch is never paged).
    pub fn new(kind: RequestKind, opts: &Options) -> Request {
        let paged = opts.page_size.is_some() && !matches!(kind, RequestKind::Batch(..));
        Request { kind, paged, timeout: opts.timeout, shape: opts.shape, metrics: opts.metrics.clone(), tracing: None }
    }

    /// The statement's `is_idempotent` (a batch's own flag).
    pub fn is_idempotent(&self) -> bool {
        match &self.kind {
            RequestKind::Prepared(stmt, _) => stmt.get_is_idempotent(),
            RequestKind::Query(stmt) => stmt.get_is_idempotent(),
            RequestKind::Batch(batch, _) => batch.get_is_idempotent(),
        }
    }

    /// The request's own plan, where its profile's crate policy alone does not make it:
    /// a user's policy's plan for `query` (the Python statement), or under a token-aware
    /// policy a simple statement's (or batch's) `routing_key` replicas first. The
    /// working keyspace is `session`'s.
    pub fn route(&mut self, py: Python<'_>, opts: &Options, query: &Bound<'_, PyAny>, session: &ScyllaSession) -> PyResult<()> {
        let handle = match &opts.plan {
            PlanSource::Policy => return Ok(()),
            PlanSource::Custom(policy) => plan_of(py, policy, query, opts.profile.as_ref())?,
            // The crate computes a prepared statement's token itself.
            PlanSource::KeyRouted(_) if matches!(self.kind, RequestKind::Prepared(..)) => return Ok(()),
            PlanSource::KeyRouted(routing) => match routing.handle_for(py, query, session, opts.profile.as_ref())? {
                Some(handle) => handle,
                None => return Ok(()),
            },
        };
        let handle = Some(handle);
        match &mut self.kind {
            RequestKind::Prepared(stmt, _) => stmt.set_execution_profile_handle(handle),
            RequestKind::Query(stmt) => stmt.set_execution_profile_handle(handle),
            RequestKind::Batch(batch, _) => batch.set_execution_profile_handle(handle),
        }
        Ok(())
    }
}

pub enum RequestKind {
    Prepared(PreparedStatement, BoundValues),
    Query(Statement),
    Batch(Batch, Vec<BoundValues>),
}

/// The request of `statement` with `parameters` (None: none given) and `opts`.
/// `encoder` fills a simple statement's `%s` markers (`Session.encoder`).
pub fn build(py: Python<'_>, statement: &Classified, parameters: Option<&Bound<'_, PyAny>>, opts: &Options, encoder: &Bound<'_, PyAny>) -> PyResult<Request> {
    let given = |p: Option<&Bound<'_, PyAny>>| -> PyResult<bool> {
        match p {
            Some(p) => p.is_truthy(),
            None => Ok(false),
        }
    };
    let kind = match &statement.kind {
        Kind::Prepared(p) => prepared(py, p.get(), parameters.filter(|p| !p.is_none()), opts)?,
        Kind::Simple(text) => {
            let text = text.bind(py);
            // As the classic driver: parameters are inlined only when there are some.
            let cql = if given(parameters)? {
                let bound = pyrefs::get(py)?.bind_params.bind(py).call1((text, parameters, encoder))?;
                bound.cast_into::<PyString>()?.to_cow()?.into_owned()
            } else {
                text.to_cow()?.into_owned()
            };
            let mut stmt = Statement::new(cql);
            apply_options!(py, stmt, opts);
            if let Some(n) = opts.page_size {
                stmt.set_page_size(n);
            }
            RequestKind::Query(stmt)
        }
        Kind::Bound(p, values) => {
            if given(parameters)? {
                return Err(PyValueError::new_err("parameters cannot be passed with a BoundStatement (bind them)"));
            }
            prepared(py, p.get(), Some(values.bind(py)), opts)?
        }
        Kind::Batch(b) => {
            if given(parameters)? {
                return Err(PyValueError::new_err("parameters cannot be passed with a BatchStatement (add them to the batch)"));
            }
            batch(py, b.bind(py), opts)?
        }
    };
    Ok(Request::new(kind, opts))
}

/// A prepared statement's request, `values` converted now.
pub fn prepared(py: Python<'_>, p: &Prepared, values: Option<&Bound<'_, PyAny>>, opts: &Options) -> PyResult<RequestKind> {
    let bound = bind_row(py, values, p.stmt.get_variable_col_specs().as_slice(), p.stmt.get_variable_pk_indexes())?;
    with_values(py, p, bound, opts)
}

/// A prepared statement's request with values converted already.
pub fn with_values(py: Python<'_>, p: &Prepared, bound: BoundValues, opts: &Options) -> PyResult<RequestKind> {
    let mut stmt = p.stmt.clone();
    apply_options!(py, stmt, opts);
    if let Some(n) = opts.page_size {
        stmt.set_page_size(n);
    }
    Ok(RequestKind::Prepared(stmt, bound))
}

/// A `BatchStatement`'s request: its type and `(statement, values)` items, where each
/// statement is CQL text (values inlined when it was added) or a `Prepared`.
fn batch(py: Python<'_>, b: &Bound<'_, PyAny>, opts: &Options) -> PyResult<RequestKind> {
    let kind = match b.getattr(pyo3::intern!(py, "batch_type"))?.getattr(pyo3::intern!(py, "value"))?.extract::<u8>()? {
        0 => BatchType::Logged,
        1 => BatchType::Unlogged,
        2 => BatchType::Counter,
        other => return Err(PyValueError::new_err(format!("unknown batch type {other}"))),
    };
    let items = b.getattr(pyo3::intern!(py, "_items"))?;
    let items = items.cast::<PyList>()?;
    let mut batch = Batch::new(kind);
    let mut all_values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item = item.cast_into::<PyTuple>()?;
        let (stmt, vals) = (item.get_item(0)?, item.get_item(1)?);
        if let Ok(p) = stmt.cast::<Prepared>() {
            let p = p.get();
            let vals = Some(&vals).filter(|v| !v.is_none());
            let bound = bind_row(py, vals, p.stmt.get_variable_col_specs().as_slice(), p.stmt.get_variable_pk_indexes())
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
    apply_options!(py, batch, opts);
    Ok(RequestKind::Batch(batch, all_values))
}

/// `e` with `context` before its message (same exception type for TypeError/ValueError).
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
