//! Attempts: what each host of a request's query plan answered, so that a retry policy that
//! moves past the last host (`RETRY_NEXT_HOST`) ends the request as the classic driver does,
//! with `NoHostAvailable({host: error})`, not with the last host's error alone.
//!
//! The crate keeps only the last attempt's error and not the decision that ended the plan.
//! Every retry policy the engine builds is wrapped in [`Noted`], whose session (one per
//! request, made by the crate at its first failure) keeps each failed attempt's node and
//! error and whether its last decision moved to the next host. The node comes from the
//! load-balancing wrapper (`super::health::Watched::on_request_failure`), which the crate
//! calls on the same thread just before it asks the retry session (scylla 1.9.0,
//! client/execution.rs): a thread-local hands it over. When the session ends (with the
//! request, in the same poll that returns the crate's error), it leaves its plan in a second
//! thread-local, which [`after_failure`] takes. A request that succeeds at once never
//! touches either.
//!
//! The same session also leaves the nodes whose attempts failed in a third thread-local,
//! which the request takes in the poll that ends it ([`retried_on`]): a request that
//! succeeded after failures knows every host it was sent to (`ResponseFuture.attempted_hosts`).
//! A request whose future is dropped before it ends (a client timeout) has its note
//! cleared by [`forget_retried`], so that the next request on the thread does not read it.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Arc;

use pyo3::prelude::*;
use scylla::cluster::Node;
use scylla::errors::{ConnectionPoolError, DbError, ExecutionError, RequestAttemptError};
use scylla::policies::retry::{RequestInfo, RetryDecision, RetryPolicy, RetrySession};

use crate::errors;

/// The failed attempts of one request, and whether its last decision moved to the next host.
#[derive(Default)]
struct Tried {
    failures: Vec<(Arc<Node>, RequestAttemptError)>,
    moved_on: bool,
}

/// The nodes a request's failed attempts were sent to, in the order tried.
pub type RetriedOn = Box<[Arc<Node>]>;

thread_local! {
    /// The node of the attempt that failed last on this thread, until its retry decision.
    static FAILED_ON: RefCell<Option<Arc<Node>>> = const { RefCell::new(None) };
    /// The attempts of the retry session that ended last on this thread (None: its last
    /// decision did not move to the next host).
    static ENDED: RefCell<Option<Tried>> = const { RefCell::new(None) };
    /// The nodes of the failed attempts of the retry session that ended last on this thread.
    static RETRIED: RefCell<Option<RetriedOn>> = const { RefCell::new(None) };
}

fn address(node: &Node) -> SocketAddr {
    SocketAddr::new(node.address.ip(), node.address.port())
}

/// The nodes of the failed attempts of the request that succeeds in this poll (None when
/// none failed). A request that fails clears them (`after_failure`).
pub fn retried_on() -> Option<RetriedOn> {
    RETRIED.with(|r| r.borrow_mut().take())
}

/// Clears the note of a request that did not end (its future was dropped).
pub fn forget_retried() {
    RETRIED.with(|r| r.borrow_mut().take());
}

/// How a request failed: the crate's error, or its plan run out by `RETRY_NEXT_HOST`.
pub enum RunError {
    /// Boxed: the crate's error is 256 bytes, and every result carries room for it.
    Execution(Box<ExecutionError>),
    /// Every host's last error, in the order tried (the classic `NoHostAvailable.errors`).
    PlanExhausted(Box<[(SocketAddr, RequestAttemptError)]>),
}

impl RunError {
    /// The classic driver's exception for it (`hosts`: the session's contact points, named
    /// where the crate's error names no host).
    pub fn to_py(&self, py: Python<'_>, hosts: &str) -> PyErr {
        match self {
            RunError::Execution(e) => errors::execution_error(py, e, hosts),
            RunError::PlanExhausted(tried) => errors::plan_exhausted(py, tried),
        }
    }
}

impl RunError {
    /// True when the request failed only because its connections were lost: every host of
    /// its plan broke under it, or the pool it was sent to had no connection (reconnecting).
    /// A retry policy's own `RETHROW` (an `Execution` error of the last attempt) is not this.
    pub fn connection_lost(&self) -> bool {
        match self {
            RunError::PlanExhausted(tried) => tried.iter().all(|(_, e)| matches!(e, RequestAttemptError::BrokenConnectionError(_))),
            RunError::Execution(e) => {
                matches!(**e, ExecutionError::ConnectionPoolError(ConnectionPoolError::Broken { .. } | ConnectionPoolError::Initializing))
            }
        }
    }
}

impl RunError {
    /// True when the server refused the request for what it holds (`Invalid`: a key too
    /// long, a batch too large), not for the cluster's state.
    pub fn refused_as_invalid(&self) -> bool {
        matches!(self, RunError::Execution(e) if matches!(&**e, ExecutionError::LastAttemptError(RequestAttemptError::DbError(DbError::Invalid, _))))
    }
}

impl From<ExecutionError> for RunError {
    fn from(e: ExecutionError) -> Self {
        RunError::Execution(Box::new(e))
    }
}

/// A request's error as it reached the engine, in the poll that got it from the crate.
pub fn after_failure(err: ExecutionError) -> RunError {
    forget_retried();
    classify(err, ENDED.with(|e| e.borrow_mut().take()).unwrap_or_default())
}

/// The crate ends a plan with the last attempt's error both when the policy said `RETHROW`
/// and when it said `RETRY_NEXT_HOST` with no host left; only the second is `NoHostAvailable`.
fn classify(err: ExecutionError, tried: Tried) -> RunError {
    if tried.moved_on && !tried.failures.is_empty() && matches!(err, ExecutionError::LastAttemptError(_)) {
        // A host tried twice (`RETRY` on the same host) keeps its last error, as the classic
        // driver's dict does.
        let mut hosts: Vec<(SocketAddr, RequestAttemptError)> = Vec::with_capacity(tried.failures.len());
        for (node, e) in tried.failures {
            let addr = address(&node);
            match hosts.iter_mut().find(|(a, _)| *a == addr) {
                Some(slot) => slot.1 = e,
                None => hosts.push((addr, e)),
            }
        }
        return RunError::PlanExhausted(hosts.into_boxed_slice());
    }
    RunError::from(err)
}

/// Notes the node of a failed attempt (outside a request, as for the health probe, the
/// next attempt's note replaces it unread).
pub fn note_failure(node: &Arc<Node>) {
    FAILED_ON.with(|f| *f.borrow_mut() = Some(node.clone()));
}

/// A retry policy whose decisions are noted (see the module doc).
#[derive(Debug)]
pub struct Noted(pub Arc<dyn RetryPolicy>);

impl RetryPolicy for Noted {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(NotedSession { inner: self.0.new_session(), tried: Tried::default() })
    }
}

struct NotedSession {
    inner: Box<dyn RetrySession>,
    tried: Tried,
}

impl RetrySession for NotedSession {
    fn decide_should_retry(&mut self, info: RequestInfo) -> RetryDecision {
        let failed = FAILED_ON.with(|f| f.borrow_mut().take()).map(|node| (node, info.error.clone()));
        let decision = self.inner.decide_should_retry(info);
        super::metrics::note_decision(&decision);
        self.tried.failures.extend(failed);
        self.tried.moved_on = matches!(decision, RetryDecision::RetryNextTarget(_));
        decision
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.tried = Tried::default();
    }
}

impl Drop for NotedSession {
    fn drop(&mut self) {
        let tried = std::mem::take(&mut self.tried);
        let retried: Option<RetriedOn> = (!tried.failures.is_empty()).then(|| tried.failures.iter().map(|(n, _)| n.clone()).collect());
        RETRIED.with(|r| *r.borrow_mut() = retried);
        ENDED.with(|e| *e.borrow_mut() = tried.moved_on.then_some(tried));
    }
}
