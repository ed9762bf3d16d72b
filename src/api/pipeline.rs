//! Pipelines: `WritePipeline` and `ReadPipeline` (docs/execution-paths.md), driven in the engine.
//!
//! `execute()` converts the values under the GIL and queues the request; a driver task
//! on the runtime keeps up to `max_in_flight` requests running. A write pipeline bounds
//! its unsent queue (`execute()` waits, GIL released, when it is full) and `confirm()`
//! waits for everything sent so far; a read pipeline sends no more than
//! `max_unconsumed` results ahead of the consumer and hands results back in submission
//! order. Every request ends in a result or an error: failures are never lost, and no
//! wait can outlive the requests' own timeouts.
//!
//! A write pipeline's failures are kept until they are handed over, so their memory is
//! bounded too: with an `error_handler`, `execute()` hands it those already there before
//! queueing more (at most `max_in_flight + max_unsent` wait between two calls); without
//! one only the first is kept (the one `confirm()` raises) and the others are counted.
//!
//! A read is paged as `session.execute` pages it (the statement's fetch size, else the
//! session's): a result with more pages keeps its request, and its `ResultSet` fetches
//! them with it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::sync::{Condvar, Mutex};
use futures::stream::FuturesUnordered;
use futures::StreamExt;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use scylla::client::session::Session as ScyllaSession;
use tokio::sync::{mpsc, Notify};

use super::request::PyRequest;
use crate::errors;
use crate::exec::attempts::RunError;
use crate::exec::inflight::InFlight;
use crate::exec::options::{Defaults, Timeout};
use crate::exec::page::Page;
use crate::exec::request::{self, Request};
use crate::exec::run::{run_owned, Outcome};
use crate::exec::statement::classify;
use crate::pyrefs::Exc;
use crate::runtime;

/// A read's outcome, with its request when the result has more pages.
type Finished = (Outcome, Option<Arc<Request>>);

/// Counters and results shared by the Python side and the driver task.
#[derive(Default)]
struct Progress {
    submitted: u64,
    finished: u64,
    consumed: u64,
    failures: VecDeque<(u64, RunError)>,
    /// Failures after the first, not kept (a write pipeline without an error handler).
    failures_dropped: u64,
    results: BTreeMap<u64, Result<Finished, RunError>>,
    closed: bool,
}

struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
    consumer_moved: Notify,
}

impl Shared {
    fn new() -> Arc<Shared> {
        Arc::new(Shared { progress: Mutex::new(Progress::default()), changed: Condvar::new(), consumer_moved: Notify::new() })
    }
}

/// The engine half of a pipeline; `turbocql.concurrent.WritePipeline` / `ReadPipeline`
/// wrap it.
#[pyclass(module = "turbocql._engine")]
pub struct PipelineCore {
    /// The session, hosts and cap on requests in flight a result's further pages are
    /// fetched with (as those of `session.execute`).
    session: Arc<ScyllaSession>,
    hosts: Arc<str>,
    in_flight: Arc<InFlight>,
    /// The session's defaults and encoder when the pipeline was made, and its timeout.
    defaults: Arc<Defaults>,
    encoder: Py<PyAny>,
    timeout: Timeout,
    tx: Mutex<Option<mpsc::Sender<(u64, Request)>>>,
    shared: Arc<Shared>,
    keep_results: bool,
    /// Called with each failure of a write pipeline, from `execute()` and (through
    /// `turbocql.concurrent`) `confirm()`.
    error_handler: Option<Py<PyAny>>,
    /// `runtime::generation()` when made: in a forked child its driver task does not run.
    generation: u64,
}

type Running = std::pin::Pin<Box<dyn std::future::Future<Output = (u64, Result<Finished, RunError>)> + Send>>;

async fn drive(
    session: Arc<ScyllaSession>,
    mut rx: mpsc::Receiver<(u64, Request)>,
    shared: Arc<Shared>,
    max_in_flight: usize,
    max_unconsumed: Option<u64>,
    keep_failures: bool,
) {
    let mut in_flight = FuturesUnordered::new();
    let mut open = true;
    loop {
        let room_ahead = match max_unconsumed {
            // Sent and not yet consumed: in flight, or finished and waiting for the consumer.
            Some(limit) => (in_flight.len() as u64 + shared.progress.lock().results.len() as u64) < limit,
            None => true,
        };
        let can_send = open && in_flight.len() < max_in_flight && room_ahead;
        tokio::select! {
            biased;
            Some((idx, res)) = in_flight.next(), if !in_flight.is_empty() => {
                let mut p = shared.progress.lock();
                p.finished += 1;
                match (res, max_unconsumed.is_some()) {
                    (r, true) => { p.results.insert(idx, r); }
                    (Err(e), false) if keep_failures || p.failures.is_empty() => p.failures.push_back((idx, e)),
                    (Err(_), false) => p.failures_dropped += 1,
                    (Ok(_), false) => {}
                }
                drop(p);
                shared.changed.notify_all();
            }
            msg = rx.recv(), if can_send => match msg {
                Some((idx, req)) => {
                    // The request's future (several KB) stays in its own box: what is
                    // pushed, and moved around by FuturesUnordered, is small.
                    let run = run_owned(session.clone(), req);
                    in_flight.push(Box::pin(async move { (idx, run.await) }) as Running);
                }
                None => open = false,
            },
            _ = shared.consumer_moved.notified(), if open && !room_ahead => {}
            else => {
                if !open && in_flight.is_empty() {
                    break;
                }
            }
        }
        if !open && in_flight.is_empty() {
            break;
        }
    }
    shared.progress.lock().closed = true;
    shared.changed.notify_all();
}

impl PipelineCore {
    /// `DriverException` in a forked child: the pipeline's driver task ran on the parent's
    /// runtime, and nothing would ever finish.
    fn check_process(&self, py: Python<'_>) -> PyResult<()> {
        if self.generation != runtime::generation() {
            return Err(errors::make(py, Exc::DriverException, (format!("This pipeline was {}", runtime::FORKED),), None));
        }
        Ok(())
    }

    /// The `result_set` of a result (see `next_result`), or the request's exception.
    fn take_result(&self, py: Python<'_>, result_set: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>, res: Result<Finished, RunError>) -> PyResult<Py<PyAny>> {
        match res {
            Ok((out, req)) => {
                let request = match req {
                    Some(req) => PyRequest::shared(self.session.clone(), self.hosts.clone(), self.in_flight.clone(), req).into_untracked(py)?.into_any(),
                    None => py.None().into_bound(py),
                };
                let mut all = args.iter().collect::<Vec<_>>();
                // after the session
                all.insert(1.min(all.len()), request);
                let page = Bound::new(py, Page::from_outcome(py, out)?)?.into_any();
                Ok(super::results::make_result(result_set, page, &all)?.unbind())
            }
            Err(e) => Err(e.to_py(py, &self.hosts)),
        }
    }

    /// The next result in submission order if it is there (`Ok(None)`: wait for it);
    /// `Err(())` once every queued request has been consumed or the pipeline is closed.
    fn pop_ready(&self, p: &mut Progress) -> Result<Option<Result<Finished, RunError>>, ()> {
        if p.consumed >= p.submitted {
            return Err(());
        }
        let idx = p.consumed;
        if let Some(r) = p.results.remove(&idx) {
            p.consumed += 1;
            self.shared.consumer_moved.notify_one();
            return Ok(Some(r));
        }
        if p.closed {
            return Err(());
        }
        Ok(None)
    }
}

impl Drop for PipelineCore {
    /// In a forked child, the sender is left alone: dropping the last one would wake the
    /// parent's driver task (`runtime::ProcessBound` says why not).
    fn drop(&mut self) {
        if self.generation != runtime::generation() {
            std::mem::forget(self.tx.get_mut().take());
        }
    }
}

#[pymethods]
impl PipelineCore {
    /// Queues `statement` with `parameters` (converted now: bad values raise here).
    #[pyo3(signature = (statement, parameters=None))]
    fn execute(&self, py: Python<'_>, statement: &Bound<'_, PyAny>, parameters: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        self.check_process(py)?;
        if let Some(handler) = &self.error_handler {
            let failures = std::mem::take(&mut self.shared.progress.lock().failures);
            for (_, e) in failures {
                handler.bind(py).call1((e.to_py(py, &self.hosts).into_value(py),))?;
            }
        }
        let query = statement;
        let statement = classify(py, query)?;
        let opts = self.defaults.resolve(&statement.own, self.timeout, false);
        let mut req = request::build(py, &statement, parameters.as_ref(), &opts, self.encoder.bind(py))?;
        req.route(py, &opts, query, &self.session)?;
        let tx = self.tx.lock().clone().ok_or_else(|| PyRuntimeError::new_err("the pipeline is closed"))?;
        let idx = {
            let mut p = self.shared.progress.lock();
            p.submitted += 1;
            p.submitted - 1
        };
        match tx.try_send((idx, req)) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(item)) => {
                // The unsent queue is full: wait for room with the GIL released.
                py.detach(|| tx.blocking_send(item)).map_err(|_| PyRuntimeError::new_err("the pipeline is closed"))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(PyRuntimeError::new_err("the pipeline is closed")),
        }
    }

    /// Waits (GIL released) until every request queued so far has finished, then returns
    /// their failures as a list of exceptions, oldest first.
    fn confirm(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.check_process(py)?;
        let failures = py.detach(|| {
            let mut p = self.shared.progress.lock();
            while p.finished < p.submitted && !p.closed {
                self.shared.changed.wait(&mut p);
            }
            std::mem::take(&mut p.failures)
        });
        Ok(failures.into_iter().map(|(_, e)| e.to_py(py, &self.hosts).into_value(py).into_any()).collect())
    }

    /// The next result in submission order, as `result_set(page, session, request,
    /// row_factory, query)` (`ResultSet`'s arguments) where `args` is `(session,
    /// row_factory, query)` and the request is there when the result has more pages (else
    /// None); raises the request's
    /// exception for a failed one, and StopIteration once every queued request has been
    /// consumed. Waits with the GIL released only when the result is not there yet.
    #[pyo3(signature = (result_set, args))]
    fn next_result(&self, py: Python<'_>, result_set: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if !self.keep_results {
            return Err(PyRuntimeError::new_err("results() is for read pipelines"));
        }
        self.check_process(py)?;
        let ready = self.pop_ready(&mut self.shared.progress.lock());
        let res = match ready {
            Ok(Some(r)) => Ok(r),
            Err(()) => Err(()),
            Ok(None) => py.detach(|| {
                let mut p = self.shared.progress.lock();
                loop {
                    match self.pop_ready(&mut p) {
                        Ok(Some(r)) => return Ok(r),
                        Err(()) => return Err(()),
                        Ok(None) => self.shared.changed.wait(&mut p),
                    }
                }
            }),
        };
        match res {
            Err(()) => Err(PyStopIteration::new_err(())),
            Ok(r) => self.take_result(py, result_set, args, r),
        }
    }

    /// Number of requests queued and not yet finished.
    #[getter]
    fn pending(&self) -> u64 {
        let p = self.shared.progress.lock();
        p.submitted - p.finished
    }

    /// Stops accepting requests; those queued still run.
    fn close(&self) {
        self.tx.lock().take();
    }

    /// Failures after the first that a pipeline without an error handler did not keep.
    #[getter]
    fn failures_dropped(&self) -> u64 {
        self.shared.progress.lock().failures_dropped
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(h) = &self.error_handler {
            visit.call(h)?;
        }
        visit.call(&self.encoder)
    }
}

/// A pipeline's sizes (`max_unconsumed` None for a write pipeline).
pub struct Limits {
    pub max_in_flight: usize,
    pub max_unsent: usize,
    pub max_unconsumed: Option<usize>,
}

/// Starts a pipeline on `session`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    session: Arc<ScyllaSession>,
    hosts: Arc<str>,
    in_flight: Arc<InFlight>,
    defaults: Arc<Defaults>,
    encoder: Py<PyAny>,
    timeout: Timeout,
    limits: Limits,
    error_handler: Option<Py<PyAny>>,
) -> PyResult<PipelineCore> {
    let Limits { max_in_flight, max_unsent, max_unconsumed } = limits;
    if max_in_flight == 0 || max_unsent == 0 || max_unconsumed == Some(0) {
        return Err(pyo3::exceptions::PyValueError::new_err("pipeline sizes must be greater than 0"));
    }
    let (tx, rx) = mpsc::channel(max_unsent);
    let shared = Shared::new();
    // Unconstrained for the reason `concurrent` gives: one task polls every request in flight.
    runtime::get().spawn(tokio::task::unconstrained(drive(
        session.clone(),
        rx,
        shared.clone(),
        max_in_flight,
        max_unconsumed.map(|n| n as u64),
        error_handler.is_some(),
    )));
    Ok(PipelineCore {
        session,
        hosts,
        in_flight,
        defaults,
        encoder,
        timeout,
        tx: Mutex::new(Some(tx)),
        shared,
        keep_results: max_unconsumed.is_some(),
        error_handler,
        generation: runtime::generation(),
    })
}
