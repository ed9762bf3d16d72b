//! The tracing recorder's view of a request: what an instrumented session's requests note
//! while they run, below the request itself ([`super::request::Request`] holds a
//! [`Recorder`]; [`super::tracing`], above both the request and its run, turns the notes
//! into a span).
//!
//! - [`Tracing`] (`_engine.Tracing`) and its [`TraceConf`]: the instrumentation's `record`
//!   and OpenTelemetry's context getter, made by `turbocql.tracing`;
//! - [`Recorder`]: the crate's history listener of one request's statement, noting each
//!   failed attempt (its node, its error and the retry policy's decision) and each
//!   speculative execution as [`Event`]s.
//!
//! It knows nothing of requests, runs or outcomes: it imports from the crate, `errors` and
//! `sync` only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::prelude::*;
use scylla::errors::{RequestAttemptError, RequestError};
use scylla::frame::protocol_features::ProtocolFeatures;
use scylla::observability::history::{AttemptId, HistoryListener, RequestId, SpeculativeId};
use scylla::policies::retry::RetryDecision;

use crate::sync::Mutex;

/// An instrumented cluster's tracing (`_engine.Tracing`, made by `turbocql.tracing`).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Tracing {
    pub conf: Arc<TraceConf>,
}

/// What [`Tracing`] holds.
pub struct TraceConf {
    /// `record(finished_request)`: makes and ends the span.
    pub(super) record: Py<PyAny>,
    /// `opentelemetry.context.get_current`.
    pub(super) current_context: Py<PyAny>,
    /// `db.query.text` is recorded.
    pub(super) query_text: bool,
}

#[pymethods]
impl Tracing {
    #[new]
    fn new(record: Py<PyAny>, current_context: Py<PyAny>, include_query_text: bool) -> Self {
        Tracing { conf: Arc::new(TraceConf { record, current_context, query_text: include_query_text }) }
    }

    #[getter]
    fn include_query_text(&self) -> bool {
        self.conf.query_text
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.conf.record)?;
        visit.call(&self.conf.current_context)
    }
}

pub(super) fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// One event of a request's span.
pub(super) struct Event {
    /// `retry`, `ignore`, `attempt_failed` or `speculative_execution`.
    pub(super) name: &'static str,
    pub(super) time_ns: u64,
    pub(super) node: Option<SocketAddr>,
    /// The error of the failed attempt: its kind and its message.
    pub(super) error: Option<(&'static str, String)>,
    pub(super) code: Option<i32>,
}

#[derive(Default)]
pub(super) struct Notes {
    /// The node of each attempt, by `AttemptId`.
    attempts: Vec<SocketAddr>,
    /// Speculative fibers whose first attempt was seen.
    fibers_seen: Vec<usize>,
    fibers: usize,
    pub(super) events: Vec<Event>,
}

/// The history listener of one request's statement (see the module doc).
pub struct Recorder {
    pub(super) conf: Arc<TraceConf>,
    pub(super) notes: Mutex<Notes>,
}

impl Recorder {
    /// A recorder of one request, with no notes yet.
    pub fn new(conf: &Arc<TraceConf>) -> Self {
        Recorder { conf: conf.clone(), notes: Mutex::new(Notes::default()) }
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("turbocql::Recorder")
    }
}

/// The classic exception's name of a failed attempt, and the CQL error code a node sent.
pub(super) fn attempt_error_kind(e: &RequestAttemptError) -> (&'static str, Option<i32>) {
    match e {
        RequestAttemptError::DbError(db, _) => (crate::errors::db_error_class(db).name(), Some(db.code(&ProtocolFeatures::default()))),
        RequestAttemptError::BrokenConnectionError(_) => ("ConnectionException", None),
        _ => ("DriverException", None),
    }
}

impl HistoryListener for Recorder {
    fn log_request_start(&self) -> RequestId {
        RequestId(0)
    }

    fn log_request_success(&self, _request_id: RequestId) {}

    fn log_request_error(&self, _request_id: RequestId, _error: &RequestError) {}

    fn log_new_speculative_fiber(&self, _request_id: RequestId) -> SpeculativeId {
        let mut n = self.notes.lock();
        n.fibers += 1;
        SpeculativeId(n.fibers)
    }

    fn log_attempt_start(&self, _request_id: RequestId, speculative_id: Option<SpeculativeId>, node_addr: SocketAddr) -> AttemptId {
        let mut n = self.notes.lock();
        if let Some(SpeculativeId(fiber)) = speculative_id {
            if !n.fibers_seen.contains(&fiber) {
                n.fibers_seen.push(fiber);
                n.events.push(Event { name: "speculative_execution", time_ns: now_ns(), node: Some(node_addr), error: None, code: None });
            }
        }
        n.attempts.push(node_addr);
        AttemptId(n.attempts.len() - 1)
    }

    fn log_attempt_success(&self, _attempt_id: AttemptId) {}

    fn log_attempt_error(&self, attempt_id: AttemptId, error: &RequestAttemptError, retry_decision: &RetryDecision) {
        let name = match retry_decision {
            RetryDecision::RetrySameTarget(_) | RetryDecision::RetryNextTarget(_) => "retry",
            RetryDecision::IgnoreWriteError => "ignore",
            _ => "attempt_failed",
        };
        let (kind, code) = attempt_error_kind(error);
        let mut n = self.notes.lock();
        let node = n.attempts.get(attempt_id.0).copied();
        n.events.push(Event { name, time_ns: now_ns(), node, error: Some((kind, error.to_string())), code });
    }
}
