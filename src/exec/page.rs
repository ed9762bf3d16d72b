//! Page: one response of a request as Python sees it ([`Page`]): its rows in the
//! request's [`RowShape`], column names and types, paging state, trace id and warnings.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use scylla::response::PagingStateResponse;

use super::attempts::{RetriedOn, RunError};
use super::options::RowShape;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use scylla::cluster::Node;

use super::routing::host_object;
use super::run::{Outcome, Response};
use crate::codec::{arrow, columnar, named_rows, rows};
use crate::pyrefs;

/// One page of a result (`ResultSet._page`).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Page {
    /// A list of rows (tuples, or the default factory's named tuples), a dict of numpy
    /// columns, a `pyarrow.RecordBatch`, or None for a result without rows.
    #[pyo3(get)]
    pub rows: Py<PyAny>,
    /// Tuples of str, or None.
    #[pyo3(get)]
    pub column_names: Py<PyAny>,
    #[pyo3(get)]
    pub column_types: Py<PyAny>,
    /// bytes where the next page starts, or None on the last page.
    #[pyo3(get)]
    pub paging_state: Py<PyAny>,
    /// The server's trace id (a UUID), or None.
    #[pyo3(get)]
    pub trace_id: Py<PyAny>,
    /// The server's warnings (a list of str), or None.
    #[pyo3(get)]
    pub warnings: Py<PyAny>,
    /// False after a schema change whose wait for schema agreement ended without it
    /// (`ResponseFuture.is_schema_agreed`).
    #[pyo3(get)]
    pub schema_agreed: bool,
    /// The node that answered (`ResponseFuture.coordinator_host`), kept as the crate's node
    /// and made a `Host` only when asked for: a request pays an `Arc` clone, not a Python call.
    pub coordinator: Option<Arc<Node>>,
    /// The nodes of the attempts that failed before the answer (None when none did), for
    /// `ResponseFuture.attempted_hosts`.
    pub retried_on: Option<RetriedOn>,
    /// Set for the result of a statement that may have changed the schema, until
    /// [`Page::take_schema_change`] takes it (the result is made once per page).
    pub schema_change: AtomicBool,
}

impl Page {
    /// Whether this is a schema-changing statement's result not yet reported (then it
    /// is not any more).
    pub fn take_schema_change(&self) -> bool {
        // Relaxed: the flag publishes nothing, and the swap (a read-modify-write) lets one
        // caller only take it; the load spares the common case a write.
        self.schema_change.load(Ordering::Relaxed) && self.schema_change.swap(false, Ordering::Relaxed)
    }

    /// A page with no rows and nothing else.
    pub fn empty(py: Python<'_>) -> Page {
        Page {
            rows: py.None(),
            column_names: py.None(),
            column_types: py.None(),
            paging_state: py.None(),
            trace_id: py.None(),
            warnings: py.None(),
            schema_agreed: true,
            coordinator: None,
            retried_on: None,
            schema_change: AtomicBool::new(false),
        }
    }

    /// The page of a request's outcome.
    pub fn from_outcome(py: Python<'_>, out: Outcome) -> PyResult<Page> {
        let retried_on = out.retried_on;
        let schema_change = AtomicBool::new(out.schema_change);
        let result = match out.response {
            Response::Result(result) => result,
            Response::SchemaChangeApplied { agreed, why } => {
                let log = pyrefs::get(py)?.cluster_log.bind(py);
                // The classic driver's words for the same wait ("schema disagreement").
                let what = if agreed {
                    "the metadata refresh after it failed"
                } else {
                    "the nodes were not seen to agree on the schema within max_schema_agreement_wait (a schema disagreement)"
                };
                log.call_method1("warning", ("A schema change was applied, but %s: %s", what, why))?;
                return Ok(Page { schema_agreed: agreed, retried_on, schema_change, ..Page::empty(py) });
            }
        };
        let coordinator = Some(result.request_coordinator().node().clone());
        let trace_id = match result.tracing_id() {
            Some(id) => {
                let kw = PyDict::new(py);
                kw.set_item("bytes", PyBytes::new(py, id.as_bytes()))?;
                pyrefs::codec(py)?.UUID.bind(py).call((), Some(&kw))?.unbind()
            }
            None => py.None(),
        };
        let warnings: Vec<String> = result.warnings().map(|w| w.to_string()).collect();
        let warnings = if warnings.is_empty() {
            py.None()
        } else {
            // Logged as the classic driver logs them (its protocol module's logger).
            let log = pyrefs::get(py)?.protocol_log.bind(py);
            for w in &warnings {
                log.call_method1("warning", ("Server warning: %s", w))?;
            }
            PyList::new(py, warnings)?.into_any().unbind()
        };
        let paging_state = match out.paging {
            Some(PagingStateResponse::HasMorePages { state }) => match state.as_bytes_slice() {
                Some(b) => PyBytes::new(py, b).into_any().unbind(),
                None => py.None(),
            },
            _ => py.None(),
        };
        let shape = out.shape;
        let (rows, column_names, column_types) = match result.into_rows_result() {
            Ok(r) => {
                let (names, types) = rows::column_meta(py, &r)?;
                let rows = match shape {
                    RowShape::Columns => columnar::page_columns(py, &r)?.into_any(),
                    RowShape::Arrow | RowShape::Text => {
                        let cols = if shape == RowShape::Arrow { arrow::page_arrow_columns(py, &r)? } else { arrow::page_text_columns(py, &r)? };
                        let cols = cols.into_iter().map(|c| Py::new(py, c)).collect::<PyResult<Vec<_>>>()?;
                        pyrefs::get(py)?.arrow_record_batch.bind(py).call1((&names, cols))?
                    }
                    RowShape::Named => named_rows::page_named_rows(py, &r, &names)?.into_any(),
                    RowShape::Tuples => rows::page_rows(py, &r)?.into_any(),
                };
                (rows.unbind(), names.into_any().unbind(), types.into_any().unbind())
            }
            Err(_) => (py.None(), py.None(), py.None()),
        };
        Ok(Page { rows, column_names, column_types, paging_state, trace_id, warnings, schema_agreed: true, coordinator, retried_on, schema_change })
    }

    /// The node that answered, as its `turbocql.pool.Host` (None when unknown).
    pub fn coordinator_host<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.coordinator {
            Some(node) => Ok(Some(host_object(py, pyrefs::get(py)?, node)?)),
            None => Ok(None),
        }
    }

    /// A finished request as Python objects: `Ok(page)` or `Err(exception instance)`.
    pub fn from_result<'py>(py: Python<'py>, outcome: Result<Outcome, RunError>, hosts: &str) -> Result<Bound<'py, Page>, Bound<'py, PyAny>> {
        let page = match outcome {
            Ok(out) => Page::from_outcome(py, out).and_then(|p| Bound::new(py, p)),
            Err(e) => Err(e.to_py(py, hosts)),
        };
        page.map_err(|e| e.into_value(py).into_bound(py).into_any())
    }
}

#[pymethods]
impl Page {
    /// The same page, as the last one (no paging state): a result whose every page has
    /// been read into one list.
    fn as_last(&self, py: Python<'_>) -> Page {
        Page {
            rows: self.rows.clone_ref(py),
            column_names: self.column_names.clone_ref(py),
            column_types: self.column_types.clone_ref(py),
            paging_state: py.None(),
            trace_id: self.trace_id.clone_ref(py),
            warnings: self.warnings.clone_ref(py),
            schema_agreed: self.schema_agreed,
            coordinator: self.coordinator.clone(),
            retried_on: self.retried_on.clone(),
            schema_change: AtomicBool::new(false),
        }
    }

    /// The node that answered, as its `turbocql.pool.Host`; None when the engine does not
    /// know it (a schema change whose agreement wait failed, a page made by the engine).
    #[getter]
    fn coordinator<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.coordinator_host(py)
    }

    /// The hosts whose attempts failed before the answer, in the order tried (a list of
    /// `turbocql.pool.Host`, empty when the first attempt answered).
    #[getter]
    fn retried_on<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let refs = pyrefs::get(py)?;
        self.retried_on.iter().flat_map(|nodes| nodes.iter()).map(|node| host_object(py, refs, node)).collect()
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        // The rows are a list (or dict) the user can reach and change; the rest is
        // immutable, with no references back.
        visit.call(&self.rows)
    }
}
