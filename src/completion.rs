//! Completions: results of requests submitted without waiting (`execute_async`, asyncio),
//! handed back to Python in batches.
//!
//! A finished request pushes a [`Completion`] onto one process-wide queue. The
//! dispatcher (a Python daemon thread running [`run_dispatcher`]) waits for the queue with
//! the GIL released, then takes every ready completion under one GIL acquisition and
//! calls each target as `target(page, exc)`.
//!
//! asyncio requests skip the dispatcher: their target is an `aio::AioRequest`, whose
//! completion goes to its event loop's `aio::LoopQueue` (one wake-up of the loop per
//! batch, and no thread in between).

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use scylla::errors::ExecutionError;

use crate::aio::{AioRequest, LoopInner};
use crate::errors;
use crate::session::{outcome_to_py, Outcome};

/// Where a finished request goes.
pub enum Target {
    /// A callable, called by the dispatcher thread.
    Dispatcher(Py<PyAny>),
    /// An asyncio request, settled by its loop through its `LoopQueue`.
    Loop(Arc<LoopInner>, Py<PyAny>),
}

impl Target {
    /// Reads a `submit` target (GIL held): an `AioRequest` or a callable.
    pub fn from_py(target: Py<PyAny>, py: Python<'_>) -> Target {
        if let Ok(req) = target.bind(py).cast::<AioRequest>() {
            let inner = req.borrow().queue(py).get().inner();
            return Target::Loop(inner, target);
        }
        Target::Dispatcher(target)
    }
}

/// Hands a finished request to its target (any thread, no GIL).
pub fn complete(target: Target, outcome: Result<Outcome, ExecutionError>, hosts: Arc<str>) {
    match target {
        Target::Dispatcher(t) => push(Completion { target: t, outcome, hosts }),
        Target::Loop(q, req) => LoopInner::push(q, Completion { target: req, outcome, hosts }),
    }
}

/// One finished request.
pub struct Completion {
    pub target: Py<PyAny>,
    pub outcome: Result<Outcome, ExecutionError>,
    pub hosts: Arc<str>,
}

struct Queue {
    items: Mutex<Vec<Completion>>,
    ready: Condvar,
    stopping: AtomicBool,
}

static QUEUE: AtomicPtr<Queue> = AtomicPtr::new(std::ptr::null_mut());

fn queue() -> &'static Queue {
    let p = QUEUE.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: the pointer comes from Box::leak and is never freed.
        return unsafe { &*p };
    }
    let fresh = Box::into_raw(Box::new(Queue { items: Mutex::new(Vec::with_capacity(256)), ready: Condvar::new(), stopping: AtomicBool::new(false) }));
    match QUEUE.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => unsafe { &*fresh },
        Err(existing) => {
            // SAFETY: `fresh` was never shared; `existing` is a leaked, live queue.
            drop(unsafe { Box::from_raw(fresh) });
            unsafe { &*existing }
        }
    }
}

/// In a forked child: a new, empty queue (the parent's may be locked by a thread that
/// does not exist here; its completions belong to the parent).
pub fn after_fork() {
    QUEUE.store(std::ptr::null_mut(), Ordering::Release);
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

/// A finished request as Python objects: `Ok(page)` or `Err(exception instance)`.
pub(crate) fn to_python<'py>(py: Python<'py>, outcome: Result<Outcome, ExecutionError>, hosts: &str) -> Result<Bound<'py, PyAny>, Bound<'py, PyAny>> {
    match outcome {
        Ok(out) => match outcome_to_py(py, out) {
            Ok(page) => Ok(page.into_any()),
            Err(e) => Err(e.into_value(py).into_bound(py).into_any()),
        },
        Err(e) => Err(errors::execution_error(py, &e, hosts).into_value(py).into_bound(py).into_any()),
    }
}

/// Converts one completion and calls its target (GIL held).
fn deliver(py: Python<'_>, c: Completion) -> PyResult<()> {
    let (page, exc) = match to_python(py, c.outcome, &c.hosts) {
        Ok(page) => (page, py.None().into_bound(py)),
        Err(exc) => (py.None().into_bound(py), exc),
    };
    c.target.bind(py).call1((page, exc)).map(|_| ())
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
        if batch.is_empty() && q.stopping.load(Ordering::Acquire) {
            return Ok(());
        }
        for c in batch {
            if let Err(e) = deliver(py, c) {
                e.write_unraisable(py, None);
            }
        }
    }
}

/// Makes [`run_dispatcher`] return once the queue is empty (used at interpreter exit).
#[pyfunction]
pub fn stop_dispatcher() {
    let q = queue();
    q.stopping.store(true, Ordering::Release);
    let _guard = q.items.lock();
    q.ready.notify_all();
}
