//! Completions: results of requests submitted without waiting (`execute_async`, asyncio),
//! handed back to Python in batches.
//!
//! A finished request pushes a [`Completion`] onto one process-wide queue. The
//! dispatcher (a Python daemon thread running [`run_dispatcher`]) waits for the queue with
//! the GIL released, then takes every ready completion under one GIL acquisition:
//! - a plain target is a Python callable, called as `target(page, exc)`;
//! - an asyncio target is a tuple `(loop, future)`: completions for one loop are grouped
//!   and the loop is woken once per batch with `loop.call_soon_threadsafe(resolver, items)`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use scylla::errors::ExecutionError;

use crate::errors;
use crate::session::{outcome_to_py, Outcome};

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

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| Queue { items: Mutex::new(Vec::with_capacity(256)), ready: Condvar::new(), stopping: AtomicBool::new(false) })
}

/// Called from the runtime when a request finishes.
pub fn push(c: Completion) {
    let q = queue();
    let mut items = q.items.lock();
    items.push(c);
    if items.len() == 1 {
        q.ready.notify_one();
    }
}

/// Converts one completion and delivers it (GIL held).
fn deliver<'py>(py: Python<'py>, c: Completion, aio: &mut Vec<(Bound<'py, PyAny>, Bound<'py, PyList>)>) -> PyResult<()> {
    let (page, exc) = match c.outcome {
        Ok(out) => match outcome_to_py(py, out) {
            Ok(page) => (page.into_any(), py.None().into_bound(py)),
            Err(e) => (py.None().into_bound(py), e.into_value(py).into_bound(py).into_any()),
        },
        Err(e) => (py.None().into_bound(py), errors::execution_error(py, &e, &c.hosts).into_value(py).into_bound(py).into_any()),
    };
    let target = c.target.into_bound(py);
    if let Ok(t) = target.cast::<PyTuple>() {
        // asyncio: (loop, future)
        let lp = t.get_item(0)?;
        let fut = t.get_item(1)?;
        let item = PyTuple::new(py, [fut, page, exc])?;
        match aio.iter().position(|(l, _)| l.is(&lp)) {
            Some(i) => aio[i].1.append(item)?,
            None => aio.push((lp, PyList::new(py, [item])?)),
        }
        Ok(())
    } else {
        target.call1((page, exc)).map(|_| ())
    }
}

/// The dispatcher loop: runs until [`stop_dispatcher`]. Exceptions escaping a target are
/// reported with `sys.unraisablehook` and never stop the loop.
#[pyfunction]
pub fn run_dispatcher(py: Python<'_>) -> PyResult<()> {
    let q = queue();
    let resolver = errors::object(py, "aio_resolve")?.clone_ref(py);
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
        let mut aio = Vec::new();
        for c in batch {
            if let Err(e) = deliver(py, c, &mut aio) {
                e.write_unraisable(py, None);
            }
        }
        for (lp, items) in aio {
            if let Err(e) = lp.call_method1("call_soon_threadsafe", (resolver.bind(py), items)) {
                // A closed loop: its futures can no longer be resolved; report it once.
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
