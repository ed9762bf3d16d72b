//! Tracing: OpenTelemetry spans of requests, made by `turbocql.tracing` (opt-in,
//! `turbocql.tracing.instrument(cluster)`).
//!
//! The engine does the timing and the bookkeeping; Python makes the span, once, when the
//! request has ended, with the request's real start and end times:
//! - at build (the caller's thread, GIL held), a request of an instrumented session gets a
//!   [`Recorder`] ([`attach`]; `super::recorder`), the crate's history listener of its
//!   statement: it notes each failed attempt (its node, its error and the retry policy's
//!   decision) and each speculative execution, as the crate reports them;
//! - at start ([`begin`], GIL held) the caller's OpenTelemetry context is taken (one Python
//!   call) with the wall-clock start;
//! - at the end ([`Begun::finish`], on the runtime's thread, no GIL) the outcome is described
//!   ([`Finished`]: coordinator, status code, events, statement);
//! - where the result is made into Python objects (the calling thread, the dispatcher, the
//!   asyncio loop), [`emit`] hands a [`FinishedRequest`] to the instrumentation's `record`,
//!   before the result is returned or any callback runs.
//!
//! A session that is not instrumented builds requests with no recorder: a request pays a
//! check of an `Option` where it starts and where it completes, and nothing else.
//!
//! Only `execute`, `execute_async` and asyncio's `execute` make a span per request; the
//! bulk paths (`execute_concurrent`, pipelines) get one span per call, made in Python.

use std::net::SocketAddr;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use scylla::client::session::Session as ScyllaSession;
use scylla::errors::ExecutionError;
use scylla::observability::history::HistoryListener;

use super::attempts::RunError;
use super::recorder::{attempt_error_kind, now_ns, Event, Recorder, TraceConf};
use super::request::{Request, RequestKind};
use super::run::{Outcome, Response};

/// Sets a new recorder of `conf`'s instrumentation as `req`'s statement's history listener.
pub fn attach(conf: &Arc<TraceConf>, req: &mut Request) {
    let rec = Arc::new(Recorder::new(conf));
    let listener: Arc<dyn HistoryListener> = rec.clone();
    match &mut req.kind {
        RequestKind::Prepared(stmt, _) => stmt.set_history_listener(listener),
        RequestKind::Query(stmt) => stmt.set_history_listener(listener),
        RequestKind::Batch(batch, _) => batch.set_history_listener(listener),
    }
    req.tracing = Some(rec);
}

/// A request started with tracing on: the caller's context and the start time.
pub struct Begun {
    rec: Arc<Recorder>,
    parent: Py<PyAny>,
    start_ns: u64,
}

/// `req`'s tracing, begun now (GIL held, on the caller's thread): None when its session is
/// not instrumented.
pub fn begin(py: Python<'_>, req: &Request) -> PyResult<Option<Begun>> {
    let Some(rec) = &req.tracing else { return Ok(None) };
    let parent = rec.conf.current_context.bind(py).call0()?.unbind();
    Ok(Some(Begun { rec: rec.clone(), parent, start_ns: now_ns() }))
}

/// A request that has ended, described for its span (made without the GIL).
pub struct Finished {
    conf: Arc<TraceConf>,
    parent: Py<PyAny>,
    start_ns: u64,
    end_ns: u64,
    operation: Option<String>,
    keyspace: Option<String>,
    table: Option<String>,
    query: Option<String>,
    coordinator: Option<SocketAddr>,
    status_code: Option<i32>,
    events: Vec<Event>,
}

/// The first word of a CQL statement, upper-cased (None for an empty one).
fn operation_of(text: &str) -> Option<String> {
    let word: String = text.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    (!word.is_empty()).then(|| word.to_ascii_uppercase())
}

impl Begun {
    /// Describes the request's outcome (any thread, no GIL): the events noted since it began.
    pub fn finish(self, req: &Request, session: &ScyllaSession, outcome: &Result<Outcome, RunError>) -> Box<Finished> {
        let end_ns = now_ns();
        let events = std::mem::take(&mut self.rec.notes.lock().events);
        let (text, keyspace, table) = match &req.kind {
            RequestKind::Prepared(stmt, _) => {
                (Some(stmt.get_statement().to_owned()), stmt.get_keyspace_name().map(str::to_owned), stmt.get_table_name().map(str::to_owned))
            }
            RequestKind::Query(stmt) => (Some(stmt.contents.clone()), None, None),
            RequestKind::Batch(..) => (None, None, None),
        };
        let operation = match &req.kind {
            RequestKind::Batch(..) => Some("BATCH".to_owned()),
            _ => text.as_deref().and_then(operation_of),
        };
        let keyspace = keyspace.or_else(|| session.get_keyspace().map(|k| k.to_string()));
        let (coordinator, status_code) = match outcome {
            Ok(out) => match &out.response {
                Response::Result(r) => {
                    (Some(SocketAddr::new(r.request_coordinator().node().address.ip(), r.request_coordinator().node().address.port())), None)
                }
                Response::SchemaChangeApplied { .. } => (events.last().and_then(|e| e.node), None),
            },
            Err(e) => (events.last().and_then(|e| e.node), status_of(e)),
        };
        let query = if self.rec.conf.query_text { text } else { None };
        Box::new(Finished {
            conf: self.rec.conf.clone(),
            parent: self.parent,
            start_ns: self.start_ns,
            end_ns,
            operation,
            keyspace,
            table,
            query,
            coordinator,
            status_code,
            events,
        })
    }
}

/// The CQL error code of a failed request, when a node sent one.
fn status_of(e: &RunError) -> Option<i32> {
    match e {
        RunError::Execution(e) => match &**e {
            ExecutionError::LastAttemptError(a) => attempt_error_kind(a).1,
            _ => None,
        },
        RunError::PlanExhausted(tried) => tried.last().and_then(|(_, a)| attempt_error_kind(a).1),
    }
}

/// A failed attempt, a retry or a speculative execution of a request (`FinishedRequest.events`).
#[pyclass(frozen, module = "turbocql._engine", get_all)]
pub struct TraceEvent {
    /// `retry`, `ignore`, `attempt_failed` or `speculative_execution`.
    name: &'static str,
    /// Nanoseconds since the epoch.
    time_ns: u64,
    /// The node's address and port (None when unknown).
    address: Option<String>,
    port: Option<u16>,
    /// The failed attempt's error: the classic exception's name and the message.
    error_type: Option<&'static str>,
    message: Option<String>,
    /// The CQL error code the node sent, as a hex string (`0x1200`).
    status_code: Option<String>,
}

/// A request that has ended, as `turbocql.tracing` makes its span of it.
#[pyclass(frozen, module = "turbocql._engine", get_all)]
pub struct FinishedRequest {
    /// The OpenTelemetry context current where the request was started.
    parent: Py<PyAny>,
    /// Nanoseconds since the epoch.
    start_ns: u64,
    end_ns: u64,
    /// The statement's first word (SELECT, INSERT, ...), or BATCH.
    operation: Option<String>,
    keyspace: Option<String>,
    /// A prepared statement's table.
    table: Option<String>,
    /// The CQL text (None when not recorded, and for a batch).
    query: Option<String>,
    /// The coordinator's address and port: the node that answered, or the last one tried.
    address: Option<String>,
    port: Option<u16>,
    /// The exception the request ended with, or None.
    error: Py<PyAny>,
    /// The CQL error code the node sent, as a hex string (`0x2200`).
    status_code: Option<String>,
    events: Py<PyList>,
}

#[pymethods]
impl FinishedRequest {
    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.parent)?;
        visit.call(&self.error)?;
        visit.call(&self.events)
    }
}

fn hex(code: Option<i32>) -> Option<String> {
    code.map(|c| format!("0x{c:04X}"))
}

/// Hands a finished request to its instrumentation's `record` (GIL held); `error`: the
/// exception it ended with. An exception of `record` is reported as unraisable: the
/// request's result is not touched.
pub fn emit(py: Python<'_>, f: Box<Finished>, error: Option<&Bound<'_, PyAny>>) {
    let result = (|| -> PyResult<()> {
        let f = *f;
        let events = PyList::empty(py);
        for e in f.events {
            let (error_type, message) = match e.error {
                Some((t, m)) => (Some(t), Some(m)),
                None => (None, None),
            };
            let ev = TraceEvent {
                name: e.name,
                time_ns: e.time_ns,
                address: e.node.map(|n| n.ip().to_string()),
                port: e.node.map(|n| n.port()),
                error_type,
                message,
                status_code: hex(e.code),
            };
            events.append(Bound::new(py, ev)?)?;
        }
        let rec = FinishedRequest {
            parent: f.parent,
            start_ns: f.start_ns,
            end_ns: f.end_ns.max(f.start_ns),
            operation: f.operation,
            keyspace: f.keyspace,
            table: f.table,
            query: f.query,
            address: f.coordinator.map(|n| n.ip().to_string()),
            port: f.coordinator.map(|n| n.port()),
            error: error.map_or_else(|| py.None(), |e| e.clone().unbind()),
            status_code: hex(f.status_code),
            events: events.unbind(),
        };
        f.conf.record.bind(py).call1((rec,))?;
        Ok(())
    })();
    if let Err(e) = result {
        e.write_unraisable(py, None);
    }
}
