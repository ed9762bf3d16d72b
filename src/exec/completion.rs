//! Completions: results of requests submitted without waiting (`execute_async`, asyncio),
//! handed back to Python in batches.
//!
//! A finished request pushes a [`Completion`] to its [`Target`]. The process-wide queue
//! serves the dispatcher (a Python daemon thread running [`run_dispatcher`]): it waits for
//! the queue with the GIL released, then takes every ready completion under one GIL
//! acquisition and hands each to its target: `target(page, exc)`, or through the [`Settle`]
//! function the layer above gave for a target of its own. Any other consumer (an
//! asyncio loop's queue, in `api`) is a [`CompletionSink`]: this layer knows nothing of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::sync::{Condvar, Mutex};
use pyo3::prelude::*;

use super::attempts::RunError;
use super::inflight::Slot;
use super::page::Page;
use super::run::Outcome;
use super::tracing::Finished;
use crate::runtime::ForkLocal;

/// A consumer of completions other than the dispatcher (an asyncio loop's queue).
pub trait CompletionSink: Send + Sync {
    fn push(self: Arc<Self>, c: Completion);
}

/// How the dispatcher thread hands a request's page (or its exception) to the target:
/// [`call_target`], or a function of the layer above that settles a target of its own
/// kind directly (the engine's futures: no call, no argument parsing).
pub type Settle = for<'py> fn(&Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) -> PyResult<()>;

/// `target(page, exc)`: any callable target.
pub fn call_target<'py>(target: &Bound<'py, PyAny>, page: Bound<'py, PyAny>, exc: Bound<'py, PyAny>) -> PyResult<()> {
    target.call1((page, exc)).map(|_| ())
}

/// Where a finished request goes.
pub enum Target {
    /// Handed to `target` by the dispatcher thread, through the [`Settle`].
    Dispatcher(Py<PyAny>, Settle),
    /// `target` handed to `sink`.
    Sink(Arc<dyn CompletionSink>, Py<PyAny>),
}

/// Hands a finished request to its target (any thread, no GIL). Its `slot` among the
/// session's requests in flight is given back once the target has it.
/// `span`: the request's span, to be made before its target is called (None when it is
/// not traced).
pub fn complete(target: Target, outcome: Result<Outcome, RunError>, hosts: Arc<str>, slot: Option<Slot>, span: Option<Box<Finished>>) {
    match target {
        Target::Dispatcher(t, settle) => push(Completion { target: t, settle, outcome, hosts, slot, span }),
        Target::Sink(sink, t) => sink.push(Completion { target: t, settle: call_target, outcome, hosts, slot, span }),
    }
}

/// One finished request.
pub struct Completion {
    pub target: Py<PyAny>,
    /// How the dispatcher hands it to `target` (a sink has its own way).
    pub settle: Settle,
    pub outcome: Result<Outcome, RunError>,
    pub hosts: Arc<str>,
    /// Held until the completion is consumed: a completion waiting in a queue still counts
    /// as in flight (`super::inflight`).
    pub slot: Option<Slot>,
    /// The request's span, when traced (`super::tracing`).
    pub span: Option<Box<Finished>>,
}

struct Queue {
    items: Mutex<Vec<Completion>>,
    ready: Condvar,
    stopping: AtomicBool,
}

/// The dispatcher's queue. A forked child gets a new, empty one: the parent's may be
/// locked by a thread that does not exist there, and its completions are the parent's.
static QUEUE: ForkLocal<Queue> = ForkLocal::new();

fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| Queue { items: Mutex::new(Vec::with_capacity(256)), ready: Condvar::new(), stopping: AtomicBool::new(false) })
}

/// In a forked child: a new, empty queue on next use.
pub fn after_fork() {
    QUEUE.forget();
}

/// Appends `c` to `items`. When it is the first of a batch, `signal` runs once the
/// runtime has run the other tasks that are ready now (responses read in the same pass),
/// so that their completions join the batch: fewer wake-ups of whoever consumes it.
pub(crate) fn push_batched(items: &Mutex<Vec<Completion>>, c: Completion, signal: impl FnOnce() + Send + 'static) {
    let was_empty = {
        let mut items = items.lock();
        items.push(c);
        items.len() == 1
    };
    if was_empty {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    tokio::task::yield_now().await;
                    signal();
                });
            }
            Err(_) => signal(),
        }
    }
}

/// Called from the runtime when a request for the dispatcher finishes.
pub fn push(c: Completion) {
    let q = queue();
    push_batched(&q.items, c, move || {
        let _guard = q.items.lock();
        q.ready.notify_one();
    });
}

/// Converts one completion and calls its target (GIL held).
fn deliver(py: Python<'_>, c: Completion) -> PyResult<()> {
    let (page, exc) = match Page::from_result(py, c.outcome, &c.hosts) {
        Ok(page) => (page.into_any(), py.None().into_bound(py)),
        Err(exc) => (py.None().into_bound(py), exc),
    };
    if let Some(span) = c.span {
        super::tracing::emit(py, span, Some(&exc).filter(|e| !e.is_none()));
    }
    (c.settle)(c.target.bind(py), page, exc)
}

/// The dispatcher loop: runs until [`stop_dispatcher`]. Exceptions escaping a target are
/// reported with `sys.unraisablehook` and never stop the loop.
#[pyfunction]
pub fn run_dispatcher(py: Python<'_>) -> PyResult<()> {
    let q = queue();
    loop {
        let batch = py.detach(|| {
            let mut items = q.items.lock();
            while items.is_empty() && !q.stopping.load(Ordering::Acquire) {
                q.ready.wait(&mut items);
            }
            std::mem::replace(&mut *items, Vec::with_capacity(256))
        });
        let stopping = q.stopping.load(Ordering::Acquire);
        for c in batch {
            if let Err(e) = deliver(py, c) {
                e.write_unraisable(py, None);
            }
        }
        if stopping {
            return Ok(());
        }
    }
}

/// Makes [`run_dispatcher`] return after the completions already queued (at interpreter
/// exit, from an `atexit` handler: a thread still waiting in the engine when Python
/// finalizes would be ended by Python as it takes the GIL back, in the middle of Rust code,
/// which aborts the process). Requests still running then end unreported.
#[pyfunction]
pub fn stop_dispatcher() {
    let q = queue();
    q.stopping.store(true, Ordering::Release);
    let _guard = q.items.lock();
    q.ready.notify_all();
}
