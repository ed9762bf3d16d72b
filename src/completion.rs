//! Completions: results of requests submitted without waiting (`execute_async`, asyncio),
//! handed back to Python in batches.
//!
//! A finished request pushes a [`Completion`] onto one process-wide queue. The
//! dispatcher (a Python daemon thread running [`run_dispatcher`]) waits for the queue with
//! the GIL released, then takes every ready completion under one GIL acquisition and
//! calls each target as `target(page, exc)`.
//!
//! asyncio requests skip the dispatcher: their target is `(LoopQueue, future)`.
//! A [`LoopQueue`] belongs to one event loop, which watches its eventfd with
//! `loop.add_reader`; the runtime pushes the completion and writes the eventfd only when
//! the queue was empty, and the loop drains the whole batch on its own thread. One
//! wake-up of the loop per batch, and no thread in between.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use scylla::errors::ExecutionError;

use crate::errors;
use crate::session::{outcome_to_py, Outcome};

/// Where a finished request goes.
pub enum Target {
    /// A callable, called by the dispatcher thread.
    Dispatcher(Py<PyAny>),
    /// An asyncio future, delivered by its loop through its [`LoopQueue`].
    Loop(Arc<LoopInner>, Py<PyAny>),
}

impl Target {
    /// The `LoopQueue` and future of an asyncio target `(LoopQueue, future)`.
    pub fn loop_queue<'py>(target: &Py<PyAny>, py: Python<'py>) -> Option<(Bound<'py, LoopQueue>, Bound<'py, PyAny>)> {
        let t = target.bind(py).cast::<PyTuple>().ok()?;
        if t.len() != 2 {
            return None;
        }
        let q = t.get_item(0).ok()?.cast_into::<LoopQueue>().ok()?;
        Some((q, t.get_item(1).ok()?))
    }

    /// Reads a `submit` target (GIL held).
    pub fn from_py(target: Py<PyAny>, py: Python<'_>) -> Target {
        if let Ok(t) = target.bind(py).cast::<PyTuple>() {
            if t.len() == 2 {
                if let (Ok(q), Ok(f)) = (t.get_item(0), t.get_item(1)) {
                    if let Ok(q) = q.cast::<LoopQueue>() {
                        return Target::Loop(q.get().inner.clone(), f.unbind());
                    }
                }
            }
        }
        Target::Dispatcher(target)
    }
}

/// Hands a finished request to its target (any thread, no GIL).
pub fn complete(target: Target, outcome: Result<Outcome, ExecutionError>, hosts: Arc<str>) {
    match target {
        Target::Dispatcher(t) => push(Completion { target: t, outcome, hosts }),
        Target::Loop(q, fut) => LoopInner::push(q, Completion { target: fut, outcome, hosts }),
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
fn push_batched(items: &Mutex<Vec<Completion>>, c: Completion, signal: impl FnOnce() + Send + 'static) {
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
fn to_python<'py>(py: Python<'py>, outcome: Result<Outcome, ExecutionError>, hosts: &str) -> Result<Bound<'py, PyAny>, Bound<'py, PyAny>> {
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

/// The completion queue of one asyncio event loop, signalled through an eventfd.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct LoopQueue {
    inner: Arc<LoopInner>,
    /// Requests submitted during the current loop iteration, not yet on the runtime.
    pending: Mutex<Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>>,
}

impl LoopQueue {
    /// Queues `task` for the runtime. The first request of a loop iteration schedules
    /// `flush` with `call_soon`, so the runtime is woken once per iteration rather than
    /// once per request (Python code between two submissions is slow enough for the
    /// runtime's worker to fall asleep in between).
    /// `future` is the request's asyncio future (its loop gets the `flush`).
    pub fn defer(slf: &Bound<'_, LoopQueue>, py: Python<'_>, future: &Bound<'_, PyAny>, task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) -> PyResult<()> {
        let q = slf.get();
        let first = {
            let mut pending = q.pending.lock();
            pending.push(task);
            pending.len() == 1
        };
        if first {
            let event_loop = future.call_method0(pyo3::intern!(py, "get_loop"))?;
            event_loop.call_method1(pyo3::intern!(py, "call_soon"), (slf.getattr(pyo3::intern!(py, "flush"))?,))?;
        }
        Ok(())
    }
}

/// The shared part of a [`LoopQueue`], reachable from the runtime without the GIL.
pub struct LoopInner {
    items: Mutex<Vec<Completion>>,
    efd: libc::c_int,
}

impl LoopInner {
    /// Queues a completion; the first of a batch wakes the loop (see [`push_batched`]).
    fn push(this: Arc<LoopInner>, c: Completion) {
        let inner = this.clone();
        push_batched(&this.items, c, move || inner.signal());
    }

    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a valid u64 to our own eventfd.
        unsafe { libc::write(self.efd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

#[pymethods]
impl LoopQueue {
    #[new]
    fn new() -> PyResult<Self> {
        // SAFETY: plain eventfd creation; the fd is owned by LoopInner and closed in Drop.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(LoopQueue { inner: Arc::new(LoopInner { items: Mutex::new(Vec::new()), efd }), pending: Mutex::new(Vec::new()) })
    }

    /// Hands the requests of this loop iteration to the runtime, with one wake-up.
    fn flush(&self) {
        let tasks = std::mem::take(&mut *self.pending.lock());
        if !tasks.is_empty() {
            crate::runtime::get().spawn(async move {
                for t in tasks {
                    tokio::spawn(t);
                }
            });
        }
    }

    /// The eventfd the loop watches (`loop.add_reader(q.fileno(), q.drain)`).
    fn fileno(&self) -> i32 {
        self.inner.efd
    }

    /// Resolves every queued future (on the loop's thread). Futures already done
    /// (cancelled) are skipped. Returns how many were delivered.
    fn drain(&self, py: Python<'_>) -> PyResult<usize> {
        let mut counter: u64 = 0;
        // SAFETY: reading 8 bytes into a valid u64 from our own non-blocking eventfd.
        unsafe { libc::read(self.inner.efd, &mut counter as *mut u64 as *mut libc::c_void, 8) };
        let batch = std::mem::take(&mut *self.inner.items.lock());
        let n = batch.len();
        for c in batch {
            let fut = c.target.bind(py);
            if fut.call_method0(pyo3::intern!(py, "done")).and_then(|d| d.is_truthy()).unwrap_or(true) {
                continue;
            }
            let res = match to_python(py, c.outcome, &c.hosts) {
                Ok(page) => fut.call_method1(pyo3::intern!(py, "set_result"), (page,)),
                Err(exc) => fut.call_method1(pyo3::intern!(py, "set_exception"), (exc,)),
            };
            if let Err(e) = res {
                e.write_unraisable(py, None);
            }
        }
        Ok(n)
    }
}

impl Drop for LoopInner {
    fn drop(&mut self) {
        // SAFETY: closing the fd this object created and still owns.
        unsafe { libc::close(self.efd) };
    }
}
