//! asyncio: requests awaited on an event loop, with no thread and no `call_soon` per
//! request in between.
//!
//! - [`LoopQueue`]: the completion queue of one event loop. The loop watches its eventfd
//!   with `loop.add_reader`; the runtime pushes finished requests and writes the eventfd
//!   once per batch (see `exec::completion::push_batched`); `drain` then settles the whole batch
//!   on the loop's thread. Requests submitted during one loop iteration reach the runtime
//!   together, with one wake-up (`defer` + `flush`).
//! - [`AioRequest`]: what `turbocql.aio.Session.execute` returns. A task awaiting it waits
//!   on a plain `asyncio.Future` (asyncio's fast path), which `drain` finishes and whose
//!   wake-up it runs at once: no coroutine frame and no extra `call_soon` per request.
//!   It also speaks the protocol asyncio uses for futures (`_asyncio_future_blocking`,
//!   `add_done_callback`, `result`, `cancel`, …), so it works with `asyncio.gather`,
//!   `wait_for`, `shield` and `ensure_future`.
//! - `super::execute::AioExecute` is `turbocql.aio.Session.execute` itself: the request
//!   built and started on the running loop in one call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::runtime::ProcessBound;
use crate::sync::Mutex;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::exec::completion::{push_batched, Completion, CompletionSink};
use crate::exec::page::Page;
use crate::pyrefs;

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The completion queue of one asyncio event loop, signalled through an eventfd.
/// Weak-referenceable: `turbocql.aio` finds a loop's queue without keeping it alive (the
/// loop's reader keeps it while the loop runs).
#[pyclass(frozen, weakref, module = "turbocql._engine")]
pub struct LoopQueue {
    /// Both leaked in a forked child: their completions and tasks hold slots of the
    /// parent's sessions, whose release wakes the parent's tasks (`runtime::ProcessBound`).
    inner: ProcessBound<Arc<LoopInner>>,
    /// Requests submitted during the current loop iteration, not yet on the runtime.
    pending: ProcessBound<Mutex<Vec<Task>>>,
    /// Set while `drain` runs: the tasks it wakes submit their next requests then, and
    /// `drain` hands those to the runtime itself when it ends (no `call_soon`, so no
    /// extra loop iteration per batch).
    draining: std::sync::atomic::AtomicBool,
}

impl LoopQueue {
    pub fn inner(&self) -> Arc<LoopInner> {
        self.inner.clone()
    }

    /// Queues `task` for the runtime. The first request of a loop iteration schedules
    /// `flush` with `call_soon` on `event_loop` (unless `drain` is running: it flushes when
    /// it ends), so the runtime is woken once per iteration rather than once per request
    /// (Python code between two submissions is slow enough for the runtime's worker to
    /// fall asleep in between).
    pub fn defer(slf: &Bound<'_, LoopQueue>, event_loop: &Bound<'_, PyAny>, task: Task) -> PyResult<()> {
        let py = slf.py();
        let first = {
            let mut pending = slf.get().pending.lock();
            pending.push(task);
            pending.len() == 1
        };
        // Relaxed: `draining` is read and written only on the loop's thread, holding the GIL.
        if first && !slf.get().draining.load(std::sync::atomic::Ordering::Relaxed) {
            event_loop.call_method1(intern!(py, "call_soon"), (slf.getattr(intern!(py, "flush"))?,))?;
        }
        Ok(())
    }
}

/// The shared part of a [`LoopQueue`], reachable from the runtime without the GIL.
pub struct LoopInner {
    items: Mutex<Vec<Completion>>,
    efd: libc::c_int,
}

impl CompletionSink for LoopInner {
    /// Queues a completion; the first of a batch wakes the loop.
    fn push(self: Arc<Self>, c: Completion) {
        let inner = self.clone();
        push_batched(&self.items, c, move || inner.signal());
    }
}

impl LoopInner {
    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a valid u64 to our own eventfd.
        unsafe { libc::write(self.efd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

impl Drop for LoopInner {
    fn drop(&mut self) {
        // SAFETY: closing the fd this object created and still owns.
        unsafe { libc::close(self.efd) };
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
        Ok(LoopQueue {
            inner: ProcessBound::new(Arc::new(LoopInner { items: Mutex::new(Vec::new()), efd })),
            pending: ProcessBound::new(Mutex::new(Vec::new())),
            draining: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The requests whose completions wait here for a drain (a loop closed with requests
    /// pending never drains them: the cycle request -> queue -> completion -> request is
    /// then collected).
    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(items) = self.inner.items.try_lock() {
            for c in items.iter() {
                visit.call(&c.target)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        if self.inner.inherited() {
            return; // a thread of the parent's may have held the lock at the fork
        }
        // Dropped after the lock is released: dropping a request can run Python code.
        let _dropped = std::mem::take(&mut *self.inner.items.lock());
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

    /// Settles every queued request (on the loop's thread) and wakes the tasks awaiting
    /// them; the requests those tasks submit meanwhile go to the runtime when it ends.
    /// Requests cancelled meanwhile are skipped. Returns how many were taken.
    fn drain(&self, py: Python<'_>) -> PyResult<usize> {
        use std::sync::atomic::Ordering;
        let mut counter: u64 = 0;
        // SAFETY: reading 8 bytes into a valid u64 from our own non-blocking eventfd.
        unsafe { libc::read(self.inner.efd, &mut counter as *mut u64 as *mut libc::c_void, 8) };
        let batch = std::mem::take(&mut *self.inner.items.lock());
        let n = batch.len();
        // Relaxed: on the loop's thread only, holding the GIL (see `defer`).
        let nested = self.draining.swap(true, Ordering::Relaxed);
        for c in batch {
            let Ok(req) = c.target.bind(py).cast::<AioRequest>() else { continue };
            if !req.borrow().is_pending() {
                continue;
            }
            let outcome = Page::from_result(py, c.outcome, &c.hosts).map(|p| p.into_any().unbind()).map_err(|e| e.unbind());
            if let Some(span) = c.span {
                crate::exec::tracing::emit(py, span, outcome.as_ref().err().map(|e| e.bind(py)));
            }
            AioRequest::settle(req, State::Done(outcome));
        }
        if !nested {
            // Relaxed: as above.
            self.draining.store(false, Ordering::Relaxed);
            self.flush();
        }
        Ok(n)
    }
}

enum State {
    Pending,
    /// The raw page, or the exception instance.
    Done(Result<Py<PyAny>, Py<PyAny>>),
    /// With the message given to `cancel`.
    Cancelled(Option<Py<PyAny>>),
}

pub(crate) enum Step<'py> {
    Yield(Bound<'py, PyAny>),
    Return(Py<PyAny>),
}

/// A request submitted from an event loop: awaitable, and future-like for asyncio.
///
/// `turbocql.aio` creates it with the loop, the loop's [`LoopQueue`], and `wrap`/`args`:
/// awaiting it returns `wrap(page, *args)` (the result set), or raises the request's
/// exception; `result()` returns the same.
#[pyclass(module = "turbocql._engine")]
pub struct AioRequest {
    event_loop: Py<PyAny>,
    queue: Py<LoopQueue>,
    wrap: Py<PyAny>,
    args: Py<PyTuple>,
    state: State,
    /// `wrap(page, *args)`, once built.
    wrapped: Option<Py<PyAny>>,
    callbacks: Vec<(Py<PyAny>, Option<Py<PyAny>>)>,
    abort: Option<futures::future::AbortHandle>,
    /// Handed to an awaiting task already.
    yielded: bool,
    /// The `asyncio.Future` an awaiting task waits on (see [`AioRequest::step`]).
    waiter: Option<Py<PyAny>>,
    /// asyncio's marker: set while a task waits on this object.
    #[pyo3(get, set)]
    _asyncio_future_blocking: bool,
}

impl AioRequest {
    pub fn queue<'py>(&self, py: Python<'py>) -> &Bound<'py, LoopQueue> {
        self.queue.bind(py)
    }

    pub fn event_loop<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.event_loop.bind(py)
    }

    fn is_pending(&self) -> bool {
        matches!(self.state, State::Pending)
    }

    pub fn set_abort(&mut self, abort: futures::future::AbortHandle) {
        self.abort = Some(abort);
    }

    /// Settles a pending request and runs its done-callbacks now, each in its context
    /// (the loop is already running this batch: no further `call_soon` needed).
    fn settle(slf: &Bound<'_, AioRequest>, state: State) {
        let py = slf.py();
        let (callbacks, waiter) = {
            let mut r = slf.borrow_mut();
            r.state = state;
            (std::mem::take(&mut r.callbacks), r.waiter.take())
        };
        for (cb, ctx) in callbacks {
            let res = match ctx {
                Some(ctx) => ctx.bind(py).call_method1(intern!(py, "run"), (cb, slf)),
                None => cb.bind(py).call1((slf,)),
            };
            if let Err(e) = res {
                e.write_unraisable(py, Some(slf.as_any()));
            }
        }
        // The awaiting task last: callbacks added before the await run first, as asyncio
        // runs a future's callbacks in the order they were added.
        if let Some(w) = waiter {
            if let Err(e) = Self::wake(w.bind(py)) {
                e.write_unraisable(py, Some(slf.as_any()));
            }
        }
    }

    /// Schedules `callback(self)` on the loop, in `context` if given.
    fn call_soon(slf: &Bound<'_, Self>, event_loop: &Bound<'_, PyAny>, callback: Py<PyAny>, context: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let kw = PyDict::new(py);
        if let Some(ctx) = context {
            kw.set_item(intern!(py, "context"), ctx)?;
        }
        event_loop.call_method(intern!(py, "call_soon"), (callback, slf), Some(&kw))?;
        Ok(())
    }

    /// The settled value: `wrap(page, *args)`, built once; or the error.
    fn value(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let r = slf.borrow();
        match &r.state {
            State::Pending => Err(Self::invalid_state(py, "Result is not ready.")),
            State::Done(Ok(page)) => {
                if let Some(v) = &r.wrapped {
                    return Ok(v.clone_ref(py));
                }
                let args: Vec<Bound<'_, PyAny>> = r.args.bind(py).iter().collect();
                let page = page.bind(py).clone();
                let wrap = r.wrap.clone_ref(py);
                drop(r);
                let value = super::results::make_result(wrap.bind(py), page, &args)?.unbind();
                slf.borrow_mut().wrapped = Some(value.clone_ref(py));
                Ok(value)
            }
            State::Done(Err(exc)) => Err(PyErr::from_value(exc.bind(py).clone())),
            State::Cancelled(msg) => Err(Self::cancelled_error(py, msg)),
        }
    }

    /// Wakes the task waiting on `waiter` (the request is settled). The task's wake-up
    /// is taken off the future and run here, in its context, as asyncio would run it on
    /// the next loop iteration: the loop is running this batch already, so no
    /// `call_soon` and no handle per request. A waiter done already (its task was
    /// cancelled) is left alone; any other shape is settled the ordinary way.
    fn wake(w: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = w.py();
        let callbacks = w.getattr(intern!(py, "_callbacks"))?;
        if let Ok(list) = callbacks.cast::<pyo3::types::PyList>() {
            if list.len() == 1 {
                let (cb, ctx): (Bound<'_, PyAny>, Bound<'_, PyAny>) = list.get_item(0)?.extract()?;
                w.call_method1(intern!(py, "remove_done_callback"), (&cb,))?;
                w.call_method1(intern!(py, "set_result"), (py.None(),))?;
                ctx.call_method1(intern!(py, "run"), (cb, w))?;
                return Ok(());
            }
        }
        if !w.call_method0(intern!(py, "done"))?.is_truthy()? {
            w.call_method1(intern!(py, "set_result"), (py.None(),))?;
        }
        Ok(())
    }

    /// One step of `await`: while pending, the first step yields a new `asyncio.Future`
    /// of the loop for the task to wait on (asyncio's own future: the task takes its
    /// fast path, with no attribute lookups on this object); `settle` finishes it and
    /// the next step returns the value. Cancelling the task reaches the request through
    /// `throw`.
    pub(crate) fn step<'py>(slf: &Bound<'py, Self>) -> PyResult<Step<'py>> {
        let py = slf.py();
        let mut r = slf.try_borrow_mut()?;
        match &r.state {
            State::Pending => {
                if r.yielded {
                    return Err(PyRuntimeError::new_err("await wasn't used with future"));
                }
                r.yielded = true;
                let event_loop = r.event_loop.clone_ref(py);
                drop(r);
                let kw = PyDict::new(py);
                kw.set_item(intern!(py, "loop"), event_loop)?;
                let waiter = pyrefs::get(py)?.asyncio_Future.bind(py).call((), Some(&kw))?;
                waiter.setattr(intern!(py, "_asyncio_future_blocking"), true)?;
                slf.borrow_mut().waiter = Some(waiter.clone().unbind());
                Ok(Step::Yield(waiter))
            }
            State::Done(_) | State::Cancelled(_) => {
                drop(r);
                Ok(Step::Return(Self::value(slf)?))
            }
        }
    }

    fn cancelled_error(py: Python<'_>, msg: &Option<Py<PyAny>>) -> PyErr {
        match pyrefs::get(py).map(|r| r.asyncio_CancelledError.bind(py)) {
            Ok(cls) => {
                let args = match msg {
                    Some(m) => PyTuple::new(py, [m.bind(py)]),
                    None => Ok(PyTuple::empty(py)),
                };
                match args.and_then(|a| cls.call1(a)) {
                    Ok(exc) => PyErr::from_value(exc),
                    Err(e) => e,
                }
            }
            Err(e) => e,
        }
    }

    fn invalid_state(py: Python<'_>, msg: &str) -> PyErr {
        match pyrefs::get(py).and_then(|r| r.asyncio_InvalidStateError.bind(py).call1((msg,))) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    }
}

#[pymethods]
impl AioRequest {
    #[new]
    pub fn new(event_loop: Py<PyAny>, queue: Py<LoopQueue>, wrap: Py<PyAny>, args: Py<PyTuple>) -> Self {
        AioRequest {
            event_loop,
            queue,
            wrap,
            args,
            state: State::Pending,
            wrapped: None,
            callbacks: Vec::new(),
            abort: None,
            yielded: false,
            waiter: None,
            _asyncio_future_blocking: false,
        }
    }

    fn __await__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// First step of `await`: hand this object to the task (which waits on it); once
    /// settled: the result set, or the exception raised. (`await` itself goes through
    /// `super::aio_send::am_send`, which returns the value without a `StopIteration`.)
    fn __next__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, PyAny>> {
        match Self::step(&slf)? {
            Step::Yield(obj) => Ok(obj),
            Step::Return(value) => Err(PyStopIteration::new_err((value,))),
        }
    }

    fn get_loop(&self, py: Python<'_>) -> Py<PyAny> {
        self.event_loop.clone_ref(py)
    }

    fn done(&self) -> bool {
        !self.is_pending()
    }

    fn cancelled(&self) -> bool {
        matches!(self.state, State::Cancelled(_))
    }

    /// The result set; raises the request's exception, `CancelledError`, or
    /// `InvalidStateError` while pending.
    fn result(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::value(slf)
    }

    fn exception(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.state {
            State::Pending => Err(Self::invalid_state(py, "Exception is not set.")),
            State::Done(Ok(_)) => Ok(None),
            State::Done(Err(exc)) => Ok(Some(exc.clone_ref(py))),
            State::Cancelled(msg) => Err(Self::cancelled_error(py, msg)),
        }
    }

    /// As `asyncio.Future.add_done_callback`: `fn(self)` runs once settled (at once, via
    /// the loop, if already settled).
    #[pyo3(signature = (callback, *, context=None))]
    fn add_done_callback(slf: &Bound<'_, Self>, callback: Py<PyAny>, context: Option<Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let mut r = slf.borrow_mut();
        if r.is_pending() {
            r.callbacks.push((callback, context));
            return Ok(());
        }
        let event_loop = r.event_loop.clone_ref(py);
        drop(r);
        Self::call_soon(slf, event_loop.bind(py), callback, context)
    }

    fn remove_done_callback(&mut self, py: Python<'_>, callback: &Bound<'_, PyAny>) -> PyResult<usize> {
        let before = self.callbacks.len();
        let mut kept = Vec::with_capacity(before);
        for (cb, ctx) in std::mem::take(&mut self.callbacks) {
            if cb.bind(py).eq(callback)? {
                continue;
            }
            kept.push((cb, ctx));
        }
        self.callbacks = kept;
        Ok(before - self.callbacks.len())
    }

    /// Cancels the request: the engine drops it and frees what it holds; the waiting
    /// task gets `CancelledError`. False if it had already finished.
    #[pyo3(signature = (msg=None))]
    fn cancel(slf: &Bound<'_, Self>, msg: Option<Py<PyAny>>) -> PyResult<bool> {
        let py = slf.py();
        let (callbacks, event_loop, waiter) = {
            let mut r = slf.borrow_mut();
            if !r.is_pending() {
                return Ok(false);
            }
            if let Some(abort) = r.abort.take() {
                abort.abort();
            }
            let waiter = r.waiter.take();
            r.state = State::Cancelled(msg.as_ref().map(|m| m.clone_ref(py)));
            (std::mem::take(&mut r.callbacks), r.event_loop.clone_ref(py), waiter)
        };
        if let Some(w) = waiter {
            // The awaiting task gets CancelledError (with `msg`) through its future.
            w.bind(py).call_method1(intern!(py, "cancel"), (msg,))?;
        }
        for (cb, ctx) in callbacks {
            Self::call_soon(slf, event_loop.bind(py), cb, ctx)?;
        }
        Ok(true)
    }

    /// An exception thrown into the coroutine awaiting this request (the task was
    /// cancelled, typically): the await is abandoned, so the request is cancelled (the
    /// engine drops it) and the exception raised on.
    #[pyo3(signature = (typ, val=None, tb=None))]
    fn throw(slf: &Bound<'_, Self>, typ: &Bound<'_, PyAny>, val: Option<&Bound<'_, PyAny>>, tb: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let py = slf.py();
        Self::cancel(slf, None)?;
        let exc = if typ.is_instance_of::<pyo3::exceptions::PyBaseException>() {
            typ.clone()
        } else {
            match val {
                Some(v) if v.is_instance(typ)? => v.clone(),
                Some(v) if !v.is_none() => typ.call1((v,))?,
                _ => typ.call0()?,
            }
        };
        if let Some(tb) = tb.filter(|t| !t.is_none()) {
            exc.call_method1(intern!(py, "with_traceback"), (tb,))?;
        }
        Err(PyErr::from_value(exc))
    }

    /// The awaiting coroutine is closed: the request is cancelled.
    fn close(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::cancel(slf, None).map(|_| ())
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.event_loop)?;
        visit.call(&self.queue)?;
        visit.call(&self.wrap)?;
        visit.call(&self.args)?;
        match &self.state {
            State::Done(Ok(v)) | State::Done(Err(v)) | State::Cancelled(Some(v)) => visit.call(v)?,
            State::Pending | State::Cancelled(None) => {}
        }
        if let Some(w) = &self.wrapped {
            visit.call(w)?;
        }
        for (cb, ctx) in &self.callbacks {
            visit.call(cb)?;
            if let Some(ctx) = ctx {
                visit.call(ctx)?;
            }
        }
        if let Some(w) = &self.waiter {
            visit.call(w)?;
        }
        Ok(())
    }

    /// Drops what can refer back to this request: callbacks, the result set, the waiter.
    fn __clear__(&mut self) {
        self.callbacks.clear();
        self.wrapped = None;
        self.waiter = None;
        if !self.is_pending() {
            self.state = State::Cancelled(None);
        }
    }

    fn __repr__(&self) -> &'static str {
        match self.state {
            State::Pending => "<AioRequest pending>",
            State::Done(Ok(_)) => "<AioRequest finished>",
            State::Done(Err(_)) => "<AioRequest failed>",
            State::Cancelled(_) => "<AioRequest cancelled>",
        }
    }
}
