//! Concurrent: `execute_concurrent` inside the engine.
//!
//! A [`ConcurrentRun`] reads its input lazily from a Python iterator (or, for parameters
//! given as columns, such as a 2-D numpy array of vectors, a window of rows at a time from
//! the arrays' memory: see `values::Columns`), converts the values of a chunk of requests
//! under one GIL acquisition, then, with the GIL released, keeps
//! `concurrency` requests in flight on the calling thread until it needs more input or
//! has results to hand over. Results come back in input order as
//! `ExecutionResult(success, result_or_exc)`; a whole list (`collect`) or one at a time
//! (`__next__`, for `results_generator=True`, with memory bounded by the concurrency).
//! Each result is a `ResultSet` made as `session.execute` makes one: a result with more
//! pages holds its request, and fetches them with it.
//!
//! A run's settings and the state it keeps between calls are [`state`]'s.

mod state;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use futures::stream::FuturesUnordered;
use futures::StreamExt;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyTuple};
use scylla::client::session::Session as ScyllaSession;

use self::state::{Done, Pending, Source, State};
pub use self::state::{ResultArgs, Settings};
use super::request::PyRequest;
use crate::codec::arrays::ArrayBuf;
use crate::codec::columns::Columns;
use crate::codec::named_rows;
use crate::errors;
use crate::exec::inflight::InFlight;
use crate::exec::options::{Options, Timeout};
use crate::exec::page::Page;
use crate::exec::replica_batch::{self, Grouper, Items};
use crate::exec::request::{self, Request};
use crate::exec::run::{run_owned, run_shared, Outcome};
use crate::exec::statement::{classify, Classified, Kind};
use crate::pyrefs::Exc;
use crate::runtime::{self, ProcessBound};

/// One `execute_concurrent` call in progress.
#[pyclass(module = "turbocql._engine")]
pub struct ConcurrentRun {
    /// Leaked in a forked child, as the requests in flight of `state` are (see `Drop`).
    session: ProcessBound<Arc<ScyllaSession>>,
    hosts: Arc<str>,
    /// The session's cap on requests in flight, handed to each result's request (its
    /// further pages are fetched as those of `session.execute`).
    in_flight: Arc<InFlight>,
    /// The statement of `execute_concurrent_with_args` and its options, resolved once;
    /// None: items are pairs.
    statement: Option<(Classified, Options)>,
    /// The Python statement of `statement` (a user's query plan is asked with it).
    query: Option<Py<PyAny>>,
    /// The session's defaults and encoder, for every item.
    defaults: Arc<crate::exec::options::Defaults>,
    encoder: Py<PyAny>,
    settings: Settings,
    state: Mutex<State>,
}

impl ConcurrentRun {
    /// Reads and converts more items from the input (GIL held): up to `n` requests' worth
    /// (`n` rows, or `n` replica batches' worth of rows when grouping).
    fn refill(&self, py: Python<'_>, st: &mut State, n: usize) -> PyResult<()> {
        if st.stop_reading {
            return Ok(());
        }
        let mut grouper = match (&self.settings.grouping, &self.statement) {
            (Some(g), Some(_)) if !self.settings.check_only => Some(Grouper::new(self.session.get_cluster_state(), *g)),
            _ => None,
        };
        let n = grouper.as_ref().map_or(n, |_| n.saturating_mul(self.settings.grouping.map_or(1, |g| g.max_rows)));
        let read = self.read(py, st, n, &mut grouper);
        if let (Some(g), Some((_, opts))) = (grouper, &self.statement) {
            g.flush(py, opts, &mut st.ready)?;
        }
        read
    }

    /// Reads up to `n` items into `st.ready` (through `grouper` when grouping).
    fn read(&self, py: Python<'_>, st: &mut State, n: usize, grouper: &mut Option<Grouper>) -> PyResult<()> {
        let source = match st.source.take() {
            None => return Ok(()),
            Some(Source::Columns { cols, next }) => {
                let Some((Classified { kind: Kind::Prepared(p), .. }, opts)) = &self.statement else {
                    unreachable!("columns are read for a prepared statement only")
                };
                let p = p.get();
                let specs = p.stmt.get_variable_col_specs();
                let end = cols.rows().min(next + n);
                for row in next..end {
                    let idx = st.next_index;
                    st.next_index += 1;
                    let made = cols.bind(py, specs.as_slice(), row).and_then(|bound| request::with_values(py, p, bound, opts)).and_then(|kind| {
                        let mut req = Request::new(kind, opts);
                        self.query.as_ref().map(|q| req.route(py, opts, q.bind(py), &self.session)).transpose()?;
                        Ok(req)
                    });
                    self.queue(py, st, idx, made, grouper)?;
                }
                if end < cols.rows() {
                    st.source = Some(Source::Columns { cols, next: end });
                }
                return Ok(());
            }
            Some(Source::Rows(it)) => {
                let source = it.clone_ref(py);
                st.source = Some(Source::Rows(it));
                source
            }
        };
        let mut source = source.into_bound(py);
        for _ in 0..n {
            let Some(item) = source.next() else {
                st.source = None;
                break;
            };
            let item = item?;
            let idx = st.next_index;
            st.next_index += 1;
            let made = self.convert(py, &item);
            self.queue(py, st, idx, made, grouper)?;
        }
        Ok(())
    }

    /// Item `idx`'s request (or its conversion's error) to where it goes next.
    fn queue(&self, py: Python<'_>, st: &mut State, idx: usize, made: PyResult<Request>, grouper: &mut Option<Grouper>) -> PyResult<()> {
        match made {
            Ok(_) if self.settings.check_only => {
                st.done.insert(idx, Done::Checked);
            }
            Ok(req) => match (grouper, &self.statement) {
                (Some(g), Some((_, opts))) => g.add(py, idx, req, opts, &mut st.ready)?,
                _ => st.ready.push_back((Items::One(idx), req)),
            },
            Err(e) => st.invalid(idx, e, self.settings.raise_on_first_error),
        }
        Ok(())
    }

    /// The request of one input item: values for the run's statement, or a
    /// `(statement, parameters)` pair.
    fn convert(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Request> {
        let encoder = self.encoder.bind(py);
        match &self.statement {
            Some((statement, opts)) => {
                let mut req = request::build(py, statement, Some(item), opts, encoder)?;
                if let Some(q) = &self.query {
                    req.route(py, opts, q.bind(py), &self.session)?;
                }
                Ok(req)
            }
            None => {
                let pair = item.cast::<PyTuple>().ok().filter(|t| t.len() == 2);
                let Some(pair) = pair else {
                    return Err(PyTypeError::new_err("execute_concurrent items must be (statement, parameters) pairs"));
                };
                let query = pair.get_item(0)?;
                let statement = classify(py, &query)?;
                let opts = self.defaults.resolve(&statement.own, Timeout::Default, false);
                let mut req = request::build(py, &statement, Some(&pair.get_item(1)?), &opts, encoder)?;
                req.route(py, &opts, &query, &self.session)?;
                Ok(req)
            }
        }
    }

    /// Runs requests with the GIL released until one of the stop conditions holds.
    ///
    /// The loop runs as a task on the runtime's worker, next to the connections, so the
    /// calling thread sleeps until the whole batch is over: one wake-up per batch, not
    /// one per response.
    fn drive(&self, py: Python<'_>, st: &mut State, want_next: bool) {
        let session = self.session.clone();
        let concurrency = self.settings.concurrency;
        let stop_on_error = self.settings.raise_on_first_error;
        let input_open = st.source.is_some();
        let next_out = st.next_out;
        let mut ready = std::mem::take(&mut st.ready);
        let mut in_flight = std::mem::take(&mut st.in_flight);
        let mut done = std::mem::take(&mut st.done);
        let task = async move {
            let mut completed = 0usize;
            loop {
                while in_flight.len() < concurrency {
                    let Some((items, req)) = ready.pop_front() else { break };
                    let s = session.clone();
                    let pending: Pending = match items {
                        Items::One(_) => {
                            let run = run_owned(s, req);
                            Box::pin(async move {
                                match run.await {
                                    Ok((out, req)) => (items, Ok(out), req),
                                    Err(e) => (items, Err(e), None),
                                }
                            })
                        }
                        Items::Group(_) => {
                            let req = Arc::new(req);
                            let run = run_shared(s, req.clone(), None);
                            Box::pin(async move { (items, run.await, Some(req)) })
                        }
                    };
                    in_flight.push(pending);
                }
                let Some((items, res, kept)) = in_flight.next().await else { break };
                // With an error, only a replica batch's request is kept: split it if it was refused.
                let kept = match (&res, kept) {
                    (Err(e), Some(batch)) => {
                        let rows = Arc::try_unwrap(batch).ok().and_then(|batch| replica_batch::split(&items, batch, e));
                        if let Some(rows) = rows {
                            rows.into_iter().rev().for_each(|row| ready.push_front(row));
                            continue;
                        }
                        None
                    }
                    (_, kept) => kept,
                };
                let failed = res.is_err();
                completed += items.len();
                match (items, res) {
                    (Items::One(idx), Ok(o)) => {
                        done.insert(idx, Done::Ok(o, kept));
                    }
                    (Items::One(idx), Err(e)) => {
                        done.insert(idx, Done::Failed(e));
                    }
                    (Items::Group(ix), Ok(o)) => {
                        done.insert(ix[0], Done::Ok(o, None));
                        done.extend(ix[1..].iter().map(|&i| (i, Done::Grouped)));
                    }
                    (Items::Group(ix), Err(e)) => {
                        let e = Arc::new(e);
                        done.extend(ix.iter().map(|&i| (i, Done::GroupFailed(e.clone()))));
                    }
                }
                if failed && stop_on_error {
                    break;
                }
                let starving = input_open && ready.is_empty() && in_flight.len() < concurrency;
                if want_next {
                    // Stream: stop once the next result is in and a batch has gathered
                    // (or the window is running dry).
                    if done.contains_key(&next_out) && (completed >= 64 || starving || in_flight.is_empty()) {
                        break;
                    }
                } else if starving || completed >= 1024 {
                    break;
                }
            }
            (ready, in_flight, done)
        };
        // Unconstrained: every request of the window is polled from this one task, so tokio's
        // per-task budget (128 operations) would run out early in each poll; past it every
        // operation of the crate's futures returns Pending and wakes itself, and the window is
        // polled over and over for nothing (with 10,000 requests in flight it was the most of the
        // client's CPU). FuturesUnordered yields on its own once it has polled each future.
        let handle = runtime::get().spawn(tokio::task::unconstrained(task));
        let (ready, in_flight, done) = py.detach(|| runtime::block_on(handle)).expect("turbocql: concurrent task panicked");
        st.ready = ready;
        st.in_flight = in_flight;
        st.done = done;
    }

    /// The `ResultSet` of `out`, with its request when it has more pages.
    fn make_result(&self, py: Python<'_>, out: Outcome, req: Option<Arc<Request>>) -> PyResult<Py<PyAny>> {
        let page = Bound::new(py, Page::from_outcome(py, out)?)?.into_any();
        let request = match req {
            Some(req) => PyRequest::shared(self.session.clone(), self.hosts.clone(), self.in_flight.clone(), req).into_untracked(py)?.into_any(),
            None => py.None().into_bound(py),
        };
        let a = &self.settings.result_args;
        let query = self.query.as_ref().map_or_else(|| py.None().into_bound(py), |q| q.bind(py).clone());
        let args = [a.session.bind(py).clone(), request, a.row_factory.bind(py).clone(), query];
        Ok(super::results::make_result(self.settings.result_set.bind(py), page, &args)?.unbind())
    }

    /// The Python `ExecutionResult` for a finished item (GIL held).
    fn to_result(&self, py: Python<'_>, st: &mut State, done: Done) -> PyResult<Py<PyAny>> {
        let (ok, obj): (bool, Py<PyAny>) = match done {
            Done::Ok(out, req) => {
                if out.is_void() {
                    if st.void_result.is_none() {
                        st.void_result = Some(self.make_result(py, out, None)?);
                    }
                    (true, st.void_result.as_ref().unwrap().clone_ref(py))
                } else {
                    (true, self.make_result(py, out, req)?)
                }
            }
            Done::Checked => (true, py.None()),
            Done::Failed(e) => (false, e.to_py(py, &self.hosts).into_value(py).into_any()),
            Done::Grouped | Done::GroupFailed(_) => unreachable!("a run with replica batches is read by failures()"),
            Done::Invalid(e) => (false, e.into_value(py).into_any()),
        };
        if !ok {
            st.failed = true;
            if self.settings.raise_on_first_error {
                return Err(PyErr::from_value(obj.into_bound(py)));
            }
        }
        let cls = self.settings.result_cls.bind(py);
        if self.settings.result_cls_is_named_tuple {
            // `ExecutionResult`'s own `__new__` is a Python function: about 2,000
            // instructions a result, as much as the rest of making it.
            let ok = pyo3::types::PyBool::new(py, ok).to_owned().into_any();
            return Ok(named_rows::tuple_instance(cls, [ok, obj.into_bound(py)])?.unbind());
        }
        Ok(cls.call1((ok, obj))?.unbind())
    }

    /// Refuses results per item where rows were written in replica batches.
    fn per_item_results(&self) -> PyResult<()> {
        match self.settings.grouping {
            Some(_) => Err(PyValueError::new_err("a run with replica batches (batch_rows) has no result per item: read its failures()")),
            None => Ok(()),
        }
    }

    /// `DriverException` in a forked child: its requests in flight, and the connections
    /// its next ones would use, belong to the parent's runtime.
    fn check_process(&self, py: Python<'_>) -> PyResult<()> {
        if self.session.inherited() {
            return Err(errors::make(py, Exc::DriverException, (format!("This execute_concurrent run was {}", runtime::FORKED),), None));
        }
        Ok(())
    }

    fn window(&self) -> usize {
        self.settings.concurrency.max(64) * 2
    }

    /// Runs every item, handing each finished one to `deliver` (with its index) in input
    /// order; stops at `deliver`'s first error.
    fn run_all(&self, py: Python<'_>, st: &mut State, mut deliver: impl FnMut(&mut State, usize, Done) -> PyResult<()>) -> PyResult<()> {
        loop {
            let room = self.window().saturating_sub(st.ready.len() + st.in_flight.len());
            if room > 0 {
                self.refill(py, st, room)?;
            }
            while let Some(done) = st.done.remove(&st.next_out) {
                let idx = st.next_out;
                st.next_out += 1;
                deliver(st, idx, done)?;
            }
            if st.ready.is_empty() && st.in_flight.is_empty() && st.source.is_none() {
                return Ok(());
            }
            if st.ready.is_empty() && st.in_flight.is_empty() {
                continue; // only input left to read
            }
            self.drive(py, st, false);
        }
    }
}

#[pymethods]
impl ConcurrentRun {
    /// Runs everything and returns the list of results in input order.
    fn collect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_process(py)?;
        self.per_item_results()?;
        let mut guard = self.state.lock().map_err(|_| PyRuntimeError::new_err("concurrent run poisoned"))?;
        let out = PyList::empty(py);
        self.run_all(py, &mut guard, |st, _, done| out.append(self.to_result(py, st, done)?))?;
        debug_assert!(guard.done.is_empty());
        Ok(out)
    }

    /// Runs everything and returns only the failures, `[(index, exception)]` in input
    /// order: no Python object is made for an item that succeeded (the bulk loader's way,
    /// where results are not read). Stops at the first failure under `raise_on_first_error`
    /// like `collect`.
    fn failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_process(py)?;
        let mut guard = self.state.lock().map_err(|_| PyRuntimeError::new_err("concurrent run poisoned"))?;
        let out = PyList::empty(py);
        self.run_all(py, &mut guard, |st, idx, done| {
            let exc = match done {
                Done::Ok(..) | Done::Checked | Done::Grouped => return Ok(()),
                Done::Failed(e) => e.to_py(py, &self.hosts).into_value(py).into_any(),
                Done::GroupFailed(e) => e.to_py(py, &self.hosts).into_value(py).into_any(),
                Done::Invalid(e) => e.into_value(py).into_any(),
            };
            st.failed = true;
            if self.settings.raise_on_first_error {
                return Err(PyErr::from_value(exc.into_bound(py)));
            }
            out.append((idx, exc))
        })?;
        Ok(out)
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some((s, _)) = &self.statement {
            s.traverse(&visit)?;
        }
        if let Some(q) = &self.query {
            visit.call(q)?;
        }
        visit.call(&self.encoder)?;
        visit.call(&self.settings.result_set)?;
        self.settings.result_args.traverse(&visit)?;
        visit.call(&self.settings.result_cls)?;
        // try_lock: a traversal never waits (the lock's holder holds the GIL or is
        // driving requests with nothing to visit).
        if let Ok(st) = self.state.try_lock() {
            match &st.source {
                Some(Source::Rows(it)) => visit.call(it)?,
                Some(Source::Columns { cols, .. }) => cols.traverse(&visit)?,
                None => {}
            }
            if let Some(v) = &st.void_result {
                visit.call(v)?;
            }
        }
        Ok(())
    }

    /// Drops what can refer back to the run: its input, results and callables. It is
    /// garbage, so nothing reads them again.
    fn __clear__(&mut self, py: Python<'_>) {
        if let Ok(st) = self.state.get_mut() {
            st.source = None;
            st.void_result = None;
        }
        self.statement = None;
        self.query = None;
        self.settings.result_set = py.None();
        self.settings.result_args.clear(py);
        self.settings.result_cls = py.None();
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next result in input order (`results_generator=True`).
    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.check_process(py)?;
        self.per_item_results()?;
        let mut guard = self.state.lock().map_err(|_| PyRuntimeError::new_err("concurrent run poisoned"))?;
        let st = &mut *guard;
        if st.failed && self.settings.raise_on_first_error {
            return Err(PyStopIteration::new_err(()));
        }
        loop {
            if let Some(done) = st.done.remove(&st.next_out) {
                st.next_out += 1;
                return self.to_result(py, st, done);
            }
            // Keep the window (in flight + buffered) bounded.
            let buffered = st.ready.len() + st.in_flight.len() + st.done.len();
            let room = self.window().saturating_sub(buffered);
            if room > 0 {
                self.refill(py, st, room)?;
            }
            if st.ready.is_empty() && st.in_flight.is_empty() && !st.done.contains_key(&st.next_out) {
                if st.source.is_none() {
                    return Err(PyStopIteration::new_err(()));
                }
                continue;
            }
            self.drive(py, st, true);
        }
    }
}

impl Drop for ConcurrentRun {
    /// In a forked child, the requests in flight between two windows (a paused
    /// `results_generator`) are the crate's futures on the parent's connections: dropping
    /// them would wake the parent's tasks (`runtime::ProcessBound` says why not).
    fn drop(&mut self) {
        if self.session.inherited() {
            let st = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
            std::mem::forget(std::mem::take(&mut st.in_flight));
        }
    }
}

/// Parameters given as columns: a dict of bind-marker name → array or sequence, Arrow
/// data (a record batch or table, by column name), or a single numeric array for a
/// statement with one vector (or number) marker. None for parameters that are rows.
fn columns(source: &Bound<'_, PyAny>, specs: &[scylla::frame::response::result::ColumnSpec<'_>]) -> PyResult<Option<Columns>> {
    if let Ok(d) = source.cast::<PyDict>() {
        return Columns::from_dict(d, specs).map(Some);
    }
    if let Some(cols) = Columns::from_arrow(source, specs)? {
        return Ok(Some(cols));
    }
    match ArrayBuf::get(source)? {
        Some(a) if a.num().is_some() && matches!(a.ndim(), 1 | 2) => Columns::from_array(source, specs),
        _ => Ok(None),
    }
}

/// Starts an `execute_concurrent` run (nothing is sent before `collect` / `__next__`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    session: Arc<ScyllaSession>,
    hosts: Arc<str>,
    in_flight: Arc<InFlight>,
    statement: Option<(Classified, Py<PyAny>)>,
    source: &Bound<'_, PyAny>,
    defaults: Arc<crate::exec::options::Defaults>,
    encoder: Py<PyAny>,
    settings: Settings,
) -> PyResult<ConcurrentRun> {
    if settings.concurrency == 0 {
        return Err(PyValueError::new_err("concurrency must be greater than 0"));
    }
    let (statement, query) = match statement {
        Some((s, q)) => {
            let opts = defaults.resolve(&s.own, Timeout::Default, false);
            (Some((s, opts)), Some(q))
        }
        None => (None, None),
    };
    let cols = match &statement {
        Some((Classified { kind: Kind::Prepared(p), .. }, _)) => columns(source, p.get().stmt.get_variable_col_specs().as_slice())?,
        _ => None,
    };
    let source = match cols {
        Some(cols) => Source::Columns { cols, next: 0 },
        None => Source::Rows(PyIterator::from_object(source)?.unbind()),
    };
    Ok(ConcurrentRun {
        session: ProcessBound::new(session),
        hosts,
        in_flight,
        statement,
        query,
        defaults,
        encoder,
        settings,
        state: Mutex::new(State {
            source: Some(source),
            next_index: 0,
            ready: VecDeque::new(),
            in_flight: FuturesUnordered::new(),
            done: BTreeMap::new(),
            next_out: 0,
            failed: false,
            stop_reading: false,
            void_result: None,
        }),
    })
}
