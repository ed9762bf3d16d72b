//! Request: an engine request as a Python object (`_engine.Request`), what
//! `Session._build_request` returns. It runs its first page, and again for each further
//! page with that page's `paging_state`: [`PyRequest::run`] waits (GIL released),
//! `submit_to` hands the page to a target (a dispatcher callable, such as a
//! `ResponseFuture`, or an asyncio `AioRequest`), `aio` starts it on an asyncio loop.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use scylla::client::session::Session as ScyllaSession;
use scylla::errors::ExecutionError;
use scylla::statement::batch::BatchType;
use scylla::statement::{Consistency, SerialConsistency};

use super::aio::{AioRequest, LoopQueue};
use crate::errors;
use crate::exec::completion::{self, Settle, Target};
use crate::exec::inflight::InFlight;
use crate::exec::page::Page;
use crate::exec::request::{Request, RequestKind};
use crate::exec::run::run_shared;
use crate::pyrefs::Exc;
use crate::runtime::{self, ProcessBound};

/// A statement with its values converted and its options applied (see the module doc).
#[pyclass(frozen, module = "turbocql._engine", name = "Request")]
pub struct PyRequest {
    /// Leaked in a forked child (a ResultSet of the parent's may hold the last reference).
    session: ProcessBound<Arc<ScyllaSession>>,
    hosts: Arc<str>,
    in_flight: Arc<InFlight>,
    req: Arc<Request>,
}

impl PyRequest {
    pub fn new(session: Arc<ScyllaSession>, hosts: Arc<str>, in_flight: Arc<InFlight>, req: Request) -> Self {
        Self::shared(session, hosts, in_flight, Arc::new(req))
    }

    /// A request that has already run (one of `execute_concurrent` or of a pipeline whose
    /// result has more pages): its `ResultSet` fetches them with it.
    pub fn shared(session: Arc<ScyllaSession>, hosts: Arc<str>, in_flight: Arc<InFlight>, req: Arc<Request>) -> Self {
        PyRequest { session: ProcessBound::new(session), hosts, in_flight, req }
    }

    /// It as a Python object, left out of the cycle collector's lists. PyO3 makes every
    /// class a GC type, so each request's object would be walked by every collection while
    /// its future or result lives (thousands at once with unthrottled futures). It holds no
    /// Python object (its fields are Rust values and `Arc`s, whose Python objects, a
    /// recorder's span or a user's policy, the collector could not reach through it anyway),
    /// so it can be in no cycle the collector must find. `PyObject_GC_UnTrack` is a no-op on
    /// an untracked object, so the dealloc's own untracking stays valid.
    pub fn into_untracked(self, py: Python<'_>) -> PyResult<Bound<'_, PyRequest>> {
        let obj = Bound::new(py, self)?;
        // SAFETY: a live object of a GC type (PyO3's classes are), with the GIL held.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
        Ok(obj)
    }

    /// Its client-side timeout in seconds (None: none).
    pub fn timeout_seconds(&self) -> Option<f64> {
        self.req.timeout.map(|t| t.as_secs_f64())
    }

    /// `DriverException` in a forked child: the session's connections are the parent's.
    fn check_process(&self, py: Python<'_>) -> PyResult<()> {
        if self.session.inherited() {
            return Err(errors::make(py, Exc::DriverException, (format!("This request was {}", runtime::FORKED),), None));
        }
        Ok(())
    }

    /// Starts it; its page goes to `target` (see [`target_of`]). It takes a slot among the
    /// session's requests in flight (`exec::inflight`): with none free, a dispatcher target
    /// waits for one here (GIL released) for at most the request's timeout, an asyncio one
    /// in the runtime, or is refused (`ConnectionBusy`) when as many already wait.
    pub fn start(&self, py: Python<'_>, target: Py<PyAny>, state: Option<&[u8]>) -> PyResult<()> {
        self.start_settled(py, target, completion::call_target, state)
    }

    /// [`Self::start`], a dispatcher target being handed its page by `settle`.
    pub fn start_settled(&self, py: Python<'_>, target: Py<PyAny>, settle: Settle, state: Option<&[u8]>) -> PyResult<()> {
        self.check_process(py)?;
        let (session, req, hosts) = (self.session.clone(), self.req.clone(), self.hosts.clone());
        let state = state.map(<[u8]>::to_vec);
        let aio = target.bind(py).cast::<AioRequest>().ok().cloned();
        let mut slot = self.in_flight.try_take();
        let mut waits_in_runtime = None;
        if slot.is_none() {
            let limit = self.in_flight.clone();
            if aio.is_some() {
                if limit.waiting() >= limit.max() {
                    return Err(errors::make(py, Exc::ConnectionBusy, (busy_message(&limit),), None));
                }
                waits_in_runtime = Some(limit);
            } else {
                let within = req.timeout;
                slot = py.detach(|| runtime::block_on(limit.take(within)));
                if slot.is_none() {
                    let exc = errors::make(py, Exc::OperationTimedOut, (format!("{} for the request's whole timeout", busy_message(&limit)),), None);
                    target.bind(py).call1((py.None(), exc))?;
                    return Ok(());
                }
            }
        }
        let target = target_of(py, target, settle);
        // Traced (an instrumented session's request): the caller's context and the start.
        let traced = crate::exec::tracing::begin(py, &req)?;
        match waits_in_runtime {
            // The run's future is boxed once a slot is there: a request waiting for one
            // holds a future of a few hundred bytes, not the run's several KB.
            Some(limit) => launch(py, aio, async move {
                let Some(slot) = limit.take(req.timeout).await else {
                    let waited = req.timeout.unwrap_or_default();
                    let out = Err(ExecutionError::RequestTimeout(waited).into());
                    let span = traced.map(|t| t.finish(&req, &session, &out));
                    return completion::complete(target, out, hosts, None, span);
                };
                let run = Box::pin(run_shared(session.clone(), req.clone(), state.as_deref()));
                let out = run.await;
                let span = traced.map(|t| t.finish(&req, &session, &out));
                completion::complete(target, out, hosts, Some(slot), span)
            }),
            // The request's future (several KB) is made and freed by the runtime's thread,
            // not the caller's: what is handed over is a few pointers.
            None => match traced {
                None => launch(py, aio, async move { completion::complete(target, run_shared(session, req, state.as_deref()).await, hosts, slot, None) }),
                Some(t) => launch(py, aio, async move {
                    let out = run_shared(session.clone(), req.clone(), state.as_deref()).await;
                    let span = Some(t.finish(&req, &session, &out));
                    completion::complete(target, out, hosts, slot, span)
                }),
            },
        }
    }
}

/// Hands `task` to the runtime: an asyncio request's once per loop iteration, abortable
/// through its AioRequest (cancelling the awaiting task aborts it); any other at once.
fn launch<F: std::future::Future<Output = ()> + Send + 'static>(py: Python<'_>, aio: Option<Bound<'_, AioRequest>>, task: F) -> PyResult<()> {
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

fn busy_message(limit: &InFlight) -> String {
    format!("the session already has max_requests_in_flight ({}) requests in flight (the cluster answers more slowly than requests are sent)", limit.max())
}

/// Where a request started with `target` completes: an `AioRequest` is settled by its
/// loop's queue; anything else by the dispatcher thread, through `settle`.
pub fn target_of(py: Python<'_>, target: Py<PyAny>, settle: Settle) -> Target {
    if let Ok(req) = target.bind(py).cast::<AioRequest>() {
        let sink = req.borrow().queue(py).get().inner();
        return Target::Sink(sink, target);
    }
    Target::Dispatcher(target, settle)
}

#[pymethods]
impl PyRequest {
    /// Runs it and waits (GIL released) for its page (from `paging_state`, if given).
    #[pyo3(signature = (paging_state=None))]
    pub fn run(&self, py: Python<'_>, paging_state: Option<&[u8]>) -> PyResult<Page> {
        self.check_process(py)?;
        let traced = crate::exec::tracing::begin(py, &self.req)?;
        let run = run_shared(self.session.clone(), self.req.clone(), paging_state);
        let out = py.detach(|| runtime::block_on(run));
        if let Some(t) = traced {
            let span = t.finish(&self.req, &self.session, &out);
            let out = out.map_err(|e| e.to_py(py, &self.hosts));
            crate::exec::tracing::emit(py, span, out.as_ref().err().map(|e| e.value(py).as_any()));
            return Page::from_outcome(py, out?);
        }
        Page::from_outcome(py, out.map_err(|e| e.to_py(py, &self.hosts))?)
    }

    /// Its client-side timeout in seconds (the call's, else its profile's or the
    /// session's), None for none: `ResponseFuture.timeout`.
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.timeout_seconds()
    }

    /// What it sends, in the classic message's terms (`ResponseFuture.message`).
    #[getter]
    fn sent(&self, py: Python<'_>) -> SentRequest {
        SentRequest::of(py, &self.req.kind)
    }

    /// Starts it without waiting: `target(page, exc)` is called by the dispatcher (see
    /// `exec::completion`), or `target` is an `AioRequest`, settled by its loop.
    #[pyo3(signature = (target, paging_state=None))]
    fn submit_to(&self, py: Python<'_>, target: Py<PyAny>, paging_state: Option<&[u8]>) -> PyResult<()> {
        self.start(py, target, paging_state)
    }

    /// Starts it on asyncio loop `event_loop` (its queue `queue`) and returns the
    /// `AioRequest`, whose awaiting gives `wrap(page, *args)`.
    #[pyo3(signature = (event_loop, queue, wrap, args, paging_state=None))]
    pub fn aio<'py>(
        &self,
        py: Python<'py>,
        event_loop: Py<PyAny>,
        queue: Py<LoopQueue>,
        wrap: Py<PyAny>,
        args: Py<PyTuple>,
        paging_state: Option<&[u8]>,
    ) -> PyResult<Bound<'py, AioRequest>> {
        let req = Bound::new(py, AioRequest::new(event_loop, queue, wrap, args))?;
        self.start(py, req.clone().into_any().unbind(), paging_state)?;
        Ok(req)
    }
}

/// A request's frame fields as the classic driver's `QueryMessage` / `ExecuteMessage` /
/// `BatchMessage` hold them (`ResponseFuture.message` builds one of those from it): what
/// the statement carries when sent. A consistency left to the execution profile is None.
#[pyclass(frozen, get_all, module = "turbocql._engine")]
pub struct SentRequest {
    /// `"QUERY"`, `"EXECUTE"` or `"BATCH"`.
    pub opcode_name: &'static str,
    /// The CQL text (a prepared statement's too).
    pub query: Option<String>,
    /// A prepared statement's id.
    pub query_id: Option<Py<PyBytes>>,
    /// A `ConsistencyLevel` number.
    pub consistency_level: Option<u16>,
    pub serial_consistency_level: Option<u16>,
    /// Rows per page; None when unpaged (and for a batch).
    pub fetch_size: Option<i32>,
    /// The client timestamp, in microseconds.
    pub timestamp: Option<i64>,
    /// `BatchType` number (0 logged, 1 unlogged, 2 counter).
    pub batch_type: Option<u8>,
}

impl SentRequest {
    fn of(py: Python<'_>, kind: &RequestKind) -> SentRequest {
        let level = |c: Option<Consistency>| c.map(|c| c as u16);
        let serial = |c: Option<SerialConsistency>| c.map(|c| c as i16 as u16);
        let paged = |size: i32| (size > 0).then_some(size);
        match kind {
            RequestKind::Query(stmt) => SentRequest {
                opcode_name: "QUERY",
                query: Some(stmt.contents.clone()),
                query_id: None,
                consistency_level: level(stmt.get_consistency()),
                serial_consistency_level: serial(stmt.get_serial_consistency()),
                fetch_size: paged(stmt.get_page_size()),
                timestamp: stmt.get_timestamp(),
                batch_type: None,
            },
            RequestKind::Prepared(stmt, _) => SentRequest {
                opcode_name: "EXECUTE",
                query: Some(stmt.get_statement().to_owned()),
                query_id: Some(PyBytes::new(py, stmt.get_id()).unbind()),
                consistency_level: level(stmt.get_consistency()),
                serial_consistency_level: serial(stmt.get_serial_consistency()),
                fetch_size: paged(stmt.get_page_size()),
                timestamp: stmt.get_timestamp(),
                batch_type: None,
            },
            RequestKind::Batch(batch, _) => SentRequest {
                opcode_name: "BATCH",
                query: None,
                query_id: None,
                consistency_level: level(batch.get_consistency()),
                serial_consistency_level: serial(batch.get_serial_consistency()),
                fetch_size: None,
                timestamp: batch.get_timestamp(),
                batch_type: Some(match batch.get_type() {
                    BatchType::Logged => 0,
                    BatchType::Unlogged => 1,
                    BatchType::Counter => 2,
                }),
            },
        }
    }
}
