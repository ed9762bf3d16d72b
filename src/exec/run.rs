//! Run: a [`Request`] sent through the scylla crate's session, one page (or unpaged),
//! under its client-side timeout, giving an [`Outcome`] or a [`RunError`] (a plan run out
//! told apart by `super::attempts`).
//!
//! An idempotent request that failed only because its connections were lost (every host
//! of its plan broke under it, as a single node does when its connection is reset) is sent
//! again once its pool has reconnected: waits of 50 ms doubling to 500 ms, while its
//! timeout (or, without one, [`RESEND_BUDGET`]) leaves room for the wait; then it ends
//! with the last error (`NoHostAvailable`). The retry policy still decides each attempt:
//! only a plan it ran out with `RETRY_NEXT_HOST` counts, never its `RETHROW`.

use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use scylla::client::session::Session as ScyllaSession;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::response::{PagingState, PagingStateResponse};

use super::attempts::{self, after_failure, RetriedOn, RunError};
use super::metrics;
use super::options::RowShape;
use super::request::{Request, RequestKind};
use super::statement;

/// How long an idempotent request without a timeout waits for its lost connections.
pub const RESEND_BUDGET: Duration = Duration::from_secs(10);
const FIRST_RESEND_WAIT: Duration = Duration::from_millis(50);
const LAST_RESEND_WAIT: Duration = Duration::from_millis(500);

/// The raw outcome of one request, not yet converted for Python (see `super::page`), boxed:
/// its parts are about 300 bytes, and an outcome moves by value through several layers (the
/// timeout, the run wrappers, `block_on` or the completion queue, the page), each move a
/// memcpy of all of it; boxed, one allocation and then a pointer moves.
pub type Outcome = Box<OutcomeParts>;

/// What an [`Outcome`] holds.
pub struct OutcomeParts {
    pub(crate) response: Response,
    pub(crate) paging: Option<PagingStateResponse>,
    pub(crate) shape: RowShape,
    /// The nodes of the attempts that failed before this answer (None when none did).
    pub(crate) retried_on: Option<RetriedOn>,
    /// A result without rows of a statement that may have changed the schema
    /// ([`super::statement::may_change_schema`]).
    pub(crate) schema_change: bool,
}

/// What the node answered.
// The large variant is the common one, and it sits in the boxed outcome: boxing it too would
// cost a second allocation per request.
#[allow(clippy::large_enum_variant)]
pub enum Response {
    Result(QueryResult),
    /// A schema change the node applied, after which the crate's wait failed (the classic
    /// driver returns such a result with `is_schema_agreed` False and a warning, where the
    /// crate fails the request): with `agreed` false, the nodes were not seen to agree on
    /// the schema within `max_schema_agreement_wait`; with `agreed` true, they agreed and
    /// the crate's metadata refresh that follows failed. `why` says what failed.
    SchemaChangeApplied {
        agreed: bool,
        why: String,
    },
}

impl OutcomeParts {
    /// True for a result with nothing to show (a write): no rows, no paging, no trace.
    pub fn is_void(&self) -> bool {
        match &self.response {
            Response::Result(r) => !r.is_rows() && r.tracing_id().is_none() && r.warnings().next().is_none(),
            Response::SchemaChangeApplied { .. } => true,
        }
    }

    /// True when the server has more pages of this result.
    pub fn has_more_pages(&self) -> bool {
        matches!(self.paging, Some(PagingStateResponse::HasMorePages { .. }))
    }
}

/// A request's attempt, boxed: the crate's future for a request is several KB, so it is
/// made once, in place, and only this pointer moves (into the timeout, the engine's loops'
/// in-flight sets, the runtime's tasks). A success gives the request back with its outcome.
type Attempt<R> = Pin<Box<dyn Future<Output = Result<(Outcome, R), RunError>> + Send>>;

/// Runs a shared request from the page at paging state `state` (the raw bytes of a
/// `ResultSet.paging_state`; None: the first page), under its timeout.
pub fn run_shared(session: Arc<ScyllaSession>, req: Arc<Request>, state: Option<&[u8]>) -> impl Future<Output = Result<Outcome, RunError>> + Send {
    let timeout = req.timeout;
    let state = state.map(PagingState::new_from_raw_bytes);
    let run = timed(timeout, run(session, req, state));
    async move { run.await.map(|(out, _)| out) }
}

/// Runs an owned request from its first page, under its timeout. A result with more pages
/// comes with its request, now shared: its `ResultSet` fetches them with it, as one of
/// `session.execute` does; any other result drops the request here, where it ran.
pub fn run_owned(session: Arc<ScyllaSession>, req: Request) -> impl Future<Output = Result<(Outcome, Option<Arc<Request>>), RunError>> + Send {
    let timeout = req.timeout;
    let run = timed(timeout, run(session, req, None));
    async move { run.await.map(|(out, req)| if out.has_more_pages() { (out, Some(Arc::new(req))) } else { (out, None) }) }
}

/// The request's attempt, sent again while it is idempotent and its connections were lost
/// (see the module doc). The attempt is awaited right here, not in a nested `async fn`: each
/// level of nesting moves the crate's several-KB future once more.
fn run<R: Borrow<Request> + Send + 'static>(session: Arc<ScyllaSession>, req: R, state: Option<PagingState>) -> Attempt<R> {
    in_place(|| async move {
        let request = req.borrow();
        // With metrics: the request timed from here to its end (or its drop, at a client
        // timeout), its attempts counted under the cluster's counters. Without, the attempt
        // is awaited as it is, with no wrapper around it.
        let _timed = request.metrics.as_ref().map(metrics::Timed::start);
        let again = request.is_idempotent().then(|| (state.clone(), Instant::now() + request.timeout.unwrap_or(RESEND_BUDGET)));
        let result = match &request.metrics {
            None => attempt(&session, request, state).await,
            Some(m) => metrics::counted(m, attempt(&session, request, state)).await,
        };
        let result = match again {
            Some((state, deadline)) if matches!(&result, Err(e) if e.connection_lost()) => Box::pin(resend(&session, request, state, deadline, result)).await,
            _ => result,
        };
        result.map(|out| (out, req))
    })
}

/// `Box::pin(make())`, with the box allocated first and `make()`'s value written into it, so
/// that the compiler builds the future where it stays. `Box::pin(async { .. })` built the
/// attempt's whole state on the stack (4,128 bytes, the crate's request future inline) and
/// copied it into the box: about 460 instructions of memcpy per request.
#[inline(always)]
fn in_place<F: Future, M: FnOnce() -> F>(make: M) -> Pin<Box<F>> {
    Box::into_pin(Box::write(Box::<F>::new_uninit(), make()))
}

/// Sends the request again after waits, while its connections are lost and `deadline`
/// leaves room for the wait; `result` is the failure so far.
async fn resend(
    session: &ScyllaSession,
    req: &Request,
    state: Option<PagingState>,
    deadline: Instant,
    mut result: Result<Outcome, RunError>,
) -> Result<Outcome, RunError> {
    let mut wait = FIRST_RESEND_WAIT;
    while matches!(&result, Err(e) if e.connection_lost()) && Instant::now() + wait < deadline {
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(LAST_RESEND_WAIT);
        result = match &req.metrics {
            None => attempt(session, req, state.clone()).await,
            Some(m) => metrics::counted(m, attempt(session, req, state.clone())).await,
        };
    }
    result
}

async fn attempt(session: &ScyllaSession, req: &Request, state: Option<PagingState>) -> Result<Outcome, RunError> {
    let shape = req.shape;
    let state = state.unwrap_or_default();
    let (response, paging) = match (&req.kind, req.paged) {
        (RequestKind::Prepared(stmt, values), true) => paged(session.execute_single_page(stmt, values, state).await)?,
        (RequestKind::Prepared(stmt, values), false) => unpaged(session.execute_unpaged(stmt, values).await)?,
        (RequestKind::Query(stmt), true) => paged(session.query_single_page(stmt.clone(), (), state).await)?,
        (RequestKind::Query(stmt), false) => unpaged(session.query_unpaged(stmt.clone(), ()).await)?,
        (RequestKind::Batch(batch, values), _) => unpaged(session.batch(batch, values).await)?,
    };
    let schema_change = match &response {
        Response::SchemaChangeApplied { .. } => true,
        Response::Result(r) => !r.is_rows() && may_change_schema(&req.kind),
    };
    // Taken in the poll that ended the request (a failure takes it in `after_failure`).
    Ok(Box::new(OutcomeParts { response, paging, shape, retried_on: attempts::retried_on(), schema_change }))
}

/// Whether the request's CQL may change the schema (a batch holds none that does).
fn may_change_schema(kind: &RequestKind) -> bool {
    match kind {
        RequestKind::Query(stmt) => statement::may_change_schema(&stmt.contents),
        RequestKind::Prepared(stmt, _) => statement::may_change_schema(stmt.get_statement()),
        RequestKind::Batch(..) => false,
    }
}

fn paged(res: Result<(QueryResult, PagingStateResponse), ExecutionError>) -> Result<(Response, Option<PagingStateResponse>), RunError> {
    match res {
        Ok((result, paging)) => Ok((Response::Result(result), Some(paging))),
        Err(e) => Ok((schema_change_applied(e)?, None)),
    }
}

fn unpaged(res: Result<QueryResult, ExecutionError>) -> Result<(Response, Option<PagingStateResponse>), RunError> {
    Ok((res.map(Response::Result).or_else(schema_change_applied)?, None))
}

/// A request whose only failure came after the node had applied its schema change: the
/// wait for schema agreement, or the metadata refresh after it (see [`Response`]).
fn schema_change_applied(e: ExecutionError) -> Result<Response, RunError> {
    match e {
        ExecutionError::SchemaAgreementError(e) => Ok(Response::SchemaChangeApplied { agreed: false, why: e.to_string() }),
        ExecutionError::MetadataError(e) => Ok(Response::SchemaChangeApplied { agreed: true, why: e.to_string() }),
        e => Err(after_failure(e)),
    }
}

/// The resolution of tokio's timers.
const TIMER_TICK: Duration = Duration::from_millis(1);

/// Bounds `fut` by the client-side timeout, if any.
pub async fn timed<T, E: From<ExecutionError>>(timeout: Option<Duration>, fut: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    match timeout {
        Some(t) if t < TIMER_TICK => {
            // Shorter than the runtime timer's tick: due once the request is sent (its first
            // poll), as the classic driver's timer of that length is before any answer comes;
            // a timer would give it up to a whole tick. An answer within that first poll (a
            // thread descheduled between sending and looking, on a loaded machine) is late all
            // the same: the classic timer would have fired first. A failure before sending is
            // its own.
            let mut fut = std::pin::pin!(fut);
            match futures::poll!(fut.as_mut()) {
                std::task::Poll::Ready(Err(e)) => Err(e),
                _ => {
                    attempts::forget_retried();
                    Err(E::from(ExecutionError::RequestTimeout(t)))
                }
            }
        }
        Some(t) => {
            let bounded = tokio::time::timeout(t, fut).await;
            if bounded.is_err() {
                // The request's future was dropped unfinished: its note is nobody's.
                attempts::forget_retried();
            }
            bounded.map_err(|_| E::from(ExecutionError::RequestTimeout(t)))?
        }
        None => fut.await,
    }
}
