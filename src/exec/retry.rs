//! Retries: the classic retry policies (`turbocql.policies`) as the scylla crate's.
//!
//! [`Retry`] is what a classic retry policy object describes (its `_engine_policy()`):
//! the built-in `RetryPolicy`, `FallthroughRetryPolicy` and
//! `DowngradingConsistencyRetryPolicy` become the crate's own policies of the same
//! meaning; a user's subclass becomes [`PythonRetry`], which calls its `on_read_timeout`,
//! `on_write_timeout`, `on_unavailable` or `on_request_error` when an attempt fails (never
//! when it succeeds) and applies the decision (`RETRY`, `RETRY_NEXT_HOST`, `RETHROW`,
//! `IGNORE`, with a consistency level) in the engine. The subclass runs off the I/O
//! thread ([`crate::runtime::off_io`]): however long it takes, other requests go on.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scylla::errors::{DbError, RequestAttemptError, WriteType};
use scylla::policies::retry::{
    DefaultRetryPolicy, DowngradingConsistencyRetryPolicy, FallthroughRetryPolicy, RequestInfo, RetryDecision, RetryPolicy, RetrySession,
};
use scylla::statement::Consistency;

use super::attempts::Noted;
use super::options::consistency;
use crate::errors;
use crate::pyrefs::{self, Exc};
use crate::runtime;

#[derive(Debug)]
enum Kind {
    Default,
    Fallthrough,
    Downgrading,
    Python(Arc<Py<PyAny>>),
}

/// A retry policy for the engine (see the module doc).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Retry {
    kind: Kind,
}

#[pymethods]
impl Retry {
    /// The classic `RetryPolicy()`.
    #[staticmethod]
    fn default_policy() -> Self {
        Retry { kind: Kind::Default }
    }

    /// `FallthroughRetryPolicy()`: never retries.
    #[staticmethod]
    fn fallthrough() -> Self {
        Retry { kind: Kind::Fallthrough }
    }

    /// `DowngradingConsistencyRetryPolicy()`.
    #[staticmethod]
    fn downgrading_consistency() -> Self {
        Retry { kind: Kind::Downgrading }
    }

    /// A user's `RetryPolicy` subclass: its methods decide, called on failures only.
    #[staticmethod]
    fn python(policy: Py<PyAny>) -> Self {
        Retry { kind: Kind::Python(Arc::new(policy)) }
    }

    fn __repr__(&self) -> String {
        format!("Retry({:?})", self.kind)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Kind::Python(p) = &self.kind {
            visit.call(p.as_ref())?;
        }
        Ok(())
    }
}

impl Retry {
    /// The crate policy that decides as this classic policy does, its decisions noted
    /// (`super::attempts`: a plan run out by `RETRY_NEXT_HOST` is `NoHostAvailable`).
    pub fn build(&self) -> Arc<dyn RetryPolicy> {
        let inner: Arc<dyn RetryPolicy> = match &self.kind {
            Kind::Default => Arc::new(DefaultRetryPolicy::new()),
            Kind::Fallthrough => Arc::new(FallthroughRetryPolicy::new()),
            Kind::Downgrading => Arc::new(DowngradingConsistencyRetryPolicy::new()),
            Kind::Python(p) => Arc::new(PythonRetry { policy: p.clone() }),
        };
        Arc::new(Noted(inner))
    }

    /// The engine's default: the classic `RetryPolicy()`, noted.
    pub fn build_default() -> Arc<dyn RetryPolicy> {
        Retry { kind: Kind::Default }.build()
    }
}

/// A user's classic retry policy (see the module doc).
#[derive(Debug)]
pub struct PythonRetry {
    policy: Arc<Py<PyAny>>,
}

impl RetryPolicy for PythonRetry {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(PythonRetrySession { policy: self.policy.clone(), retry_num: 0 })
    }
}

struct PythonRetrySession {
    policy: Arc<Py<PyAny>>,
    /// How many times the request was retried (the classic `retry_num`).
    retry_num: u32,
}

/// `ConsistencyLevel` number of a crate consistency.
fn level(c: Consistency) -> u16 {
    match c {
        Consistency::Any => 0,
        Consistency::One => 1,
        Consistency::Two => 2,
        Consistency::Three => 3,
        Consistency::Quorum => 4,
        Consistency::All => 5,
        Consistency::LocalQuorum => 6,
        Consistency::EachQuorum => 7,
        Consistency::Serial => 8,
        Consistency::LocalSerial => 9,
        Consistency::LocalOne => 10,
    }
}

/// The classic `WriteType` number.
fn write_type(w: &WriteType) -> u8 {
    match w {
        WriteType::Simple => 0,
        WriteType::Batch => 1,
        WriteType::UnloggedBatch => 2,
        WriteType::Counter => 3,
        WriteType::BatchLog => 4,
        WriteType::Cas => 5,
        WriteType::View => 6,
        WriteType::Cdc => 7,
        _ => 0,
    }
}

impl PythonRetrySession {
    /// Calls the policy method that the classic driver calls for this error; None for the
    /// errors it never retries (a bad request, an error of the driver itself).
    fn ask(&self, py: Python<'_>, info: &RequestInfo) -> PyResult<Option<RetryDecision>> {
        let policy = self.policy.bind(py);
        let kw = PyDict::new(py);
        kw.set_item("retry_num", self.retry_num)?;
        let cl = level(info.consistency);
        let decision = match info.error {
            RequestAttemptError::DbError(DbError::ReadTimeout { consistency, received, required, data_present }, _) => {
                kw.set_item("consistency", level(*consistency))?;
                kw.set_item("required_responses", *required)?;
                kw.set_item("received_responses", *received)?;
                kw.set_item("data_retrieved", *data_present)?;
                policy.call_method("on_read_timeout", (py.None(),), Some(&kw))?
            }
            RequestAttemptError::DbError(DbError::WriteTimeout { consistency, received, required, write_type: w }, _) => {
                kw.set_item("consistency", level(*consistency))?;
                kw.set_item("write_type", write_type(w))?;
                kw.set_item("required_responses", *required)?;
                kw.set_item("received_responses", *received)?;
                policy.call_method("on_write_timeout", (py.None(),), Some(&kw))?
            }
            RequestAttemptError::DbError(DbError::Unavailable { consistency, required, alive }, _) => {
                kw.set_item("consistency", level(*consistency))?;
                kw.set_item("required_replicas", *required)?;
                kw.set_item("alive_replicas", *alive)?;
                policy.call_method("on_unavailable", (py.None(),), Some(&kw))?
            }
            RequestAttemptError::DbError(e @ (DbError::Overloaded | DbError::IsBootstrapping | DbError::ServerError | DbError::TruncateError), msg) => {
                kw.set_item("error", errors::db_error(py, e, msg).into_value(py))?;
                policy.call_method("on_request_error", (py.None(), cl), Some(&kw))?
            }
            RequestAttemptError::BrokenConnectionError(e) => {
                let exc = errors::make(py, Exc::ConnectionException, (format!("connection broken: {e}"),), None);
                kw.set_item("error", exc.into_value(py))?;
                policy.call_method("on_request_error", (py.None(), cl), Some(&kw))?
            }
            _ => return Ok(None),
        };
        let (kind, new_cl): (u8, Option<u16>) = decision.extract()?;
        let new_cl = new_cl.map(consistency).transpose()?;
        Ok(Some(match kind {
            0 => RetryDecision::RetrySameTarget(new_cl),
            1 => RetryDecision::DontRetry,
            2 => RetryDecision::IgnoreWriteError,
            3 => RetryDecision::RetryNextTarget(new_cl),
            other => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown retry decision {other}"))),
        }))
    }
}

impl RetrySession for PythonRetrySession {
    fn decide_should_retry(&mut self, info: RequestInfo) -> RetryDecision {
        // Off the I/O thread (`runtime::off_io`): a policy that sleeps, or waits for the
        // GIL, holds up this request only. At interpreter exit (no Python any more) the
        // error stands.
        let decision = runtime::off_io(|| {
            Python::try_attach(|py| {
                self.ask(py, &info).unwrap_or_else(|e| {
                    // A policy that raises: the error stands (the request fails with it), and
                    // what the policy raised is logged.
                    if let Ok(refs) = pyrefs::get(py) {
                        let args = ("retry policy %r raised %r; the request fails with its error", self.policy.bind(py), e.value(py));
                        let _ = refs.cluster_log.bind(py).call_method1("error", args);
                    }
                    None
                })
            })
        });
        let decision = decision.flatten().unwrap_or(RetryDecision::DontRetry);
        if matches!(decision, RetryDecision::RetrySameTarget(_) | RetryDecision::RetryNextTarget(_)) {
            self.retry_num += 1;
        }
        decision
    }

    fn reset(&mut self) {
        self.retry_num = 0;
    }
}
