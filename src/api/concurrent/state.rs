//! An `execute_concurrent` run's settings and the state it keeps between calls: its
//! input, the requests ready and in flight, and each item's outcome until it is handed
//! back in input order.

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;

use futures::stream::FuturesUnordered;
use futures::Future;
use pyo3::prelude::*;
use pyo3::types::PyIterator;

use crate::codec::columns::Columns;
use crate::exec::attempts::RunError;
use crate::exec::replica_batch::{Grouping, Items};
use crate::exec::request::Request;
use crate::exec::run::Outcome;

/// A request in flight: its items, its outcome, and the request where it is needed again:
/// a replica batch's (split if the server refuses it: `replica_batch::split`), or one whose
/// result has more pages (its `ResultSet` fetches them).
pub(super) type Pending = Pin<Box<dyn Future<Output = (Items, Result<Outcome, RunError>, Option<Arc<Request>>)> + Send>>;

/// Per-item outcome before it reaches Python (an `Outcome` is a box: every variant is small).
pub(super) enum Done {
    /// With the request when the result has more pages.
    Ok(Outcome, Option<Arc<Request>>),
    /// Converted, not sent (`Settings::check_only`).
    Checked,
    Failed(RunError),
    /// Written in a replica batch whose outcome is at its first row's index.
    Grouped,
    /// Its replica batch failed (every row of it gets the error).
    GroupFailed(Arc<RunError>),
    Invalid(PyErr),
}

/// Where the parameters come from: an iterator of rows, or columns (one array or
/// sequence per bind marker) read a row at a time.
pub(super) enum Source {
    Rows(Py<PyIterator>),
    Columns { cols: Columns, next: usize },
}

pub(super) struct State {
    pub(super) source: Option<Source>,
    pub(super) next_index: usize,
    pub(super) ready: VecDeque<(Items, Request)>,
    pub(super) in_flight: FuturesUnordered<Pending>,
    pub(super) done: BTreeMap<usize, Done>,
    pub(super) next_out: usize,
    pub(super) failed: bool,
    /// An item failed to convert under `raise_on_first_error`: the run will raise once the
    /// items before it are done, so no more input is read (or sent) meanwhile.
    pub(super) stop_reading: bool,
    pub(super) void_result: Option<Py<PyAny>>,
}

/// How a run goes and what its results are made with.
pub struct Settings {
    pub concurrency: usize,
    pub raise_on_first_error: bool,
    /// A successful request's result: `result_set(page, session, request, row_factory,
    /// query)` (a `ResultSet`, made as `session.execute` makes it: `results::make_result`).
    pub result_set: Py<PyAny>,
    /// The session and row factory of every result.
    pub result_args: ResultArgs,
    /// `result_cls(success, result_or_exc)`: `ExecutionResult`.
    pub result_cls: Py<PyAny>,
    /// `result_cls` is a named-tuple class of two fields: its instances are made directly
    /// (`codec::named_rows::tuple_instance`), not through its Python-level `__new__`.
    pub result_cls_is_named_tuple: bool,
    /// Convert each item's values, send nothing.
    pub check_only: bool,
    /// Rows written in replica batches (`exec::replica_batch`; only `failures()` reads
    /// such a run: a row has no result of its own).
    pub grouping: Option<Grouping>,
}

impl State {
    /// Item `idx` could not be converted: its result is the error.
    pub(super) fn invalid(&mut self, idx: usize, e: PyErr, raise_on_first_error: bool) {
        self.done.insert(idx, Done::Invalid(e));
        self.stop_reading |= raise_on_first_error;
    }
}

/// The Python session and row factory of a run's results.
pub struct ResultArgs {
    pub session: Py<PyAny>,
    pub row_factory: Py<PyAny>,
}

impl ResultArgs {
    pub(super) fn traverse(&self, visit: &pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.session)?;
        visit.call(&self.row_factory)
    }

    pub(super) fn clear(&mut self, py: Python<'_>) {
        self.session = py.None();
        self.row_factory = py.None();
    }
}
