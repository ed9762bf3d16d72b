//! Futures: [`ResponseFutureCore`], the engine half of `turbocql.cluster.ResponseFuture`.
//!
//! `Session.execute_async` makes one and submits its request with the future itself as
//! the target: the dispatcher thread settles it with the page or the exception ([`settle`],
//! as calling it with `(page, exc)` would, with no call and no Python frame); it wakes the
//! `result()` waiters (which wait with the GIL released) and runs the callbacks or
//! errbacks. Callbacks are kept: `start_fetching_next_page` runs them again with the next
//! page's rows.
//!
//! An APM agent (ddtrace's cassandra integration) replaces `_set_final_result` and
//! `_set_final_exception` on the future, as the classic driver's settling methods, to end
//! its span before the caller sees the result. The Python class tells the core
//! (`_hook_settling`); such a future calls them once settled, before `result()` returns
//! and before the callbacks run. A future without them pays nothing.

use crate::sync::{Condvar, Mutex};
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::PyTraverseError;
use std::time::{Duration, Instant};

use super::request::PyRequest;
use super::results::page_rows_of;
use crate::errors;
use crate::exec::completion;
use crate::exec::page::Page;
use crate::pyrefs::{self, Exc};
use crate::runtime;

/// A callback or errback: `(fn, args, kwargs)`.
type Callback = (Py<PyAny>, Py<PyTuple>, Option<Py<PyDict>>);

enum Status {
    Pending,
    /// The page tuple and the row factory's rows (None for a result without rows).
    Done(Py<PyAny>, Py<PyAny>),
    Failed(Py<PyAny>),
}

struct State {
    status: Status,
    /// The paging state of the last page, if more pages follow.
    paging_state: Option<Py<PyAny>>,
    callbacks: Vec<Callback>,
    errbacks: Vec<Callback>,
    /// `_set_final_result` / `_set_final_exception` were replaced on the instance.
    hooked: bool,
    /// Settled, but the hooks are running on this thread: `result()` waits, except in the
    /// hooks themselves.
    settling: Option<std::thread::ThreadId>,
}

impl State {
    fn waiting(&self) -> bool {
        matches!(self.status, Status::Pending) || self.settling.is_some_and(|t| t != std::thread::current().id())
    }

    /// Marks it settled; true when its hooks are to run now (the waiters are woken after them).
    fn settle(&mut self, settled: &Condvar) -> bool {
        if self.hooked {
            self.settling = Some(std::thread::current().id());
        } else {
            settled.notify_all();
        }
        self.hooked
    }
}

/// The dispatcher's [`completion::Settle`] for a future: [`ResponseFutureCore::__call__`] without the
/// call (any other target is called).
pub(crate) fn settle<'py>(target: &Bound<'py, PyAny>, page: Bound<'py, PyAny>, exc: Bound<'py, PyAny>) -> PyResult<()> {
    match target.cast::<ResponseFutureCore>() {
        Ok(future) => ResponseFutureCore::__call__(future, page.unbind(), exc.unbind()),
        Err(_) => completion::call_target(target, page, exc),
    }
}

/// The result of `Session.execute_async` (see the module doc).
#[pyclass(frozen, subclass, module = "turbocql._engine")]
pub struct ResponseFutureCore {
    #[pyo3(get)]
    session: Py<PyAny>,
    #[pyo3(get)]
    query: Py<PyAny>,
    row_factory: Mutex<Py<PyAny>>,
    #[pyo3(get)]
    timeout: Py<PyAny>,
    #[pyo3(get)]
    _request: Py<PyAny>,
    state: Mutex<State>,
    settled: Condvar,
    /// `runtime::generation()` when made: in a forked child it is never settled.
    generation: u64,
}

impl ResponseFutureCore {
    /// Calls each of `calls` with `first` then its own arguments, logging failures.
    fn run_callbacks(py: Python<'_>, calls: Vec<Callback>, first: &Py<PyAny>, what: &str) {
        for (f, args, kwargs) in calls {
            let mut all: Vec<Bound<'_, PyAny>> = Vec::with_capacity(args.bind(py).len() + 1);
            all.push(first.bind(py).clone());
            all.extend(args.bind(py).iter());
            let res = PyTuple::new(py, all).and_then(|a| f.bind(py).call(a, kwargs.as_ref().map(|k| k.bind(py))));
            if let Err(e) = res {
                Self::log_failure(py, what, &f, e);
            }
        }
    }

    /// `log.exception("Failed executing callback %r", fn)`, as the classic driver does.
    fn log_failure(py: Python<'_>, what: &str, f: &Py<PyAny>, e: PyErr) {
        let logged = pyrefs::get(py).and_then(|refs| {
            let log = &refs.cluster_log;
            let kw = PyDict::new(py);
            kw.set_item("exc_info", e.value(py))?;
            log.bind(py).call_method(intern!(py, "error"), (format!("Failed executing {what} %r"), f), Some(&kw))?;
            Ok(())
        });
        if let Err(le) = logged {
            le.write_unraisable(py, None);
        }
    }

    /// After a hooked future settled: calls its `method` (an agent's wrapper of the classic
    /// settling method) with `arg`, then lets `result()` return.
    fn run_hook(slf: &Bound<'_, Self>, method: &Bound<'_, pyo3::types::PyString>, arg: &Py<PyAny>) {
        let py = slf.py();
        if let Err(e) = slf.getattr(method).and_then(|m| m.call1((arg,))) {
            if let Ok(m) = slf.getattr(method) {
                Self::log_failure(py, "settling hook", &m.unbind(), e);
            }
        }
        let this = slf.get();
        let mut st = this.state.lock();
        st.settling = None;
        this.settled.notify_all();
    }

    fn add(list: &mut Vec<Callback>, f: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) {
        let kwargs = kwargs.filter(|k| !k.is_empty()).map(|k| k.clone().unbind());
        list.push((f.clone().unbind(), args.clone().unbind(), kwargs));
    }

    fn take_callbacks(&self) -> (Vec<Callback>, Vec<Callback>) {
        let mut st = self.state.lock();
        (std::mem::take(&mut st.callbacks), std::mem::take(&mut st.errbacks))
    }

    fn clone_calls(py: Python<'_>, calls: &[Callback]) -> Vec<Callback> {
        calls.iter().map(|(f, a, k)| (f.clone_ref(py), a.clone_ref(py), k.as_ref().map(|k| k.clone_ref(py)))).collect()
    }
}

#[pymethods]
impl ResponseFutureCore {
    #[new]
    pub(crate) fn new(session: Py<PyAny>, request: Py<PyAny>, query: Py<PyAny>, row_factory: Py<PyAny>, timeout: Py<PyAny>) -> Self {
        ResponseFutureCore {
            session,
            query,
            row_factory: Mutex::new(row_factory),
            timeout,
            _request: request,
            state: Mutex::new(State {
                status: Status::Pending,
                paging_state: None,
                callbacks: Vec::new(),
                errbacks: Vec::new(),
                hooked: false,
                settling: None,
            }),
            settled: Condvar::new(),
            generation: runtime::generation(),
        }
    }

    /// Settles it with a page (`exc` None) or an exception, then runs the callbacks or
    /// errbacks. Called by the dispatcher thread.
    fn __call__(slf: &Bound<'_, Self>, page: Py<PyAny>, exc: Py<PyAny>) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        if !exc.is_none(py) {
            let (errbacks, hooked, _old) = {
                let mut st = this.state.lock();
                let old = std::mem::replace(&mut st.status, Status::Failed(exc.clone_ref(py)));
                let hooked = st.settle(&this.settled);
                (Self::clone_calls(py, &st.errbacks), hooked, old)
            };
            if hooked {
                Self::run_hook(slf, intern!(py, "_set_final_exception"), &exc);
            }
            Self::run_callbacks(py, errbacks, &exc, "errback");
            return Ok(());
        }
        let factory = this.row_factory.lock().clone_ref(py);
        let rows = match page.bind(py).cast::<Page>().map_err(PyErr::from).and_then(|p| page_rows_of(py, p.get(), factory.bind(py))) {
            Ok(rows) => rows.map(|r| r.unbind()).unwrap_or_else(|| py.None()),
            Err(e) => {
                // The row factory failed: the request fails with its error.
                let exc = e.into_value(py).into_any();
                return Self::__call__(slf, py.None(), exc);
            }
        };
        let paging_state = page.bind(py).cast::<Page>()?.get().paging_state.bind(py).clone();
        let (callbacks, hooked, _old) = {
            let mut st = this.state.lock();
            st.paging_state = (!paging_state.is_none()).then(|| paging_state.unbind());
            let old = std::mem::replace(&mut st.status, Status::Done(page, rows.clone_ref(py)));
            let hooked = st.settle(&this.settled);
            (Self::clone_calls(py, &st.callbacks), hooked, old)
        };
        if hooked {
            Self::run_hook(slf, intern!(py, "_set_final_result"), &rows);
        }
        Self::run_callbacks(py, callbacks, &rows, "callback");
        Ok(())
    }

    /// Called when `_set_final_result` or `_set_final_exception` is replaced on the
    /// instance: from now on, settling calls them (see the module doc).
    fn _hook_settling(&self) {
        self.state.lock().hooked = true;
    }

    /// Settles a new future with `page` without running anything: the future of a result
    /// that `Session.execute` made (`ResultSet.response_future`).
    fn _settle_with(&self, py: Python<'_>, page: Bound<'_, Page>) -> PyResult<()> {
        let factory = self.row_factory.lock().clone_ref(py);
        let rows = page_rows_of(py, page.get(), factory.bind(py))?.map(|r| r.unbind()).unwrap_or_else(|| py.None());
        let paging_state = page.get().paging_state.clone_ref(py);
        let mut st = self.state.lock();
        st.paging_state = (!paging_state.is_none(py)).then_some(paging_state);
        let _old = std::mem::replace(&mut st.status, Status::Done(page.into_any().unbind(), rows));
        Ok(())
    }

    /// The settled page (None while pending or after a failure), without waiting: what
    /// an agent's settling hook reads (`coordinator_host`, `ResultSet(future, rows)`).
    #[getter]
    fn _final_page(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match &self.state.lock().status {
            Status::Done(page, _) => Some(page.clone_ref(py)),
            _ => None,
        }
    }

    #[getter]
    fn row_factory(&self, py: Python<'_>) -> Py<PyAny> {
        self.row_factory.lock().clone_ref(py)
    }

    #[setter]
    fn set_row_factory(&self, factory: Py<PyAny>) {
        let _old = std::mem::replace(&mut *self.row_factory.lock(), factory);
    }

    #[getter]
    fn done(&self) -> bool {
        !self.state.lock().waiting()
    }

    /// Waits for the result (GIL released) and returns a `ResultSet`, or raises the
    /// request's exception. `timeout` (seconds) bounds this wait only:
    /// `OperationTimedOut` if it passes; the request's own timeout still applies.
    #[pyo3(signature = (timeout=None))]
    fn result(slf: &Bound<'_, Self>, timeout: Option<f64>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let pending = this.state.lock().waiting();
        if pending && this.generation != runtime::generation() {
            return Err(errors::make(py, Exc::DriverException, (format!("This ResponseFuture was {}", runtime::FORKED),), None));
        }
        if pending {
            let deadline = match timeout {
                Some(t) if t.is_finite() && t >= 0.0 => Some(Instant::now() + Duration::from_secs_f64(t)),
                Some(t) if t.is_nan() || t < 0.0 => Some(Instant::now()),
                _ => None,
            };
            let settled = py.detach(|| {
                let mut st = this.state.lock();
                while st.waiting() {
                    match deadline {
                        None => this.settled.wait(&mut st),
                        Some(d) => {
                            if this.settled.wait_until(&mut st, d).timed_out() && st.waiting() {
                                return false;
                            }
                        }
                    }
                }
                true
            });
            if !settled {
                let kw = PyDict::new(py);
                kw.set_item("errors", format!("ResponseFuture.result(timeout={}) elapsed", timeout.unwrap_or_default()))?;
                kw.set_item("last_host", this.session.bind(py).getattr(intern!(py, "hosts"))?)?;
                return Err(errors::make(py, Exc::OperationTimedOut, (), Some(&kw)));
            }
        }
        let (page, rows) = match &this.state.lock().status {
            Status::Done(page, rows) => (page.clone_ref(py), rows.clone_ref(py)),
            Status::Failed(exc) => return Err(PyErr::from_value(exc.bind(py).clone())),
            Status::Pending => unreachable!("settled above"),
        };
        let rows = if rows.is_none(py) { PyList::empty(py).into_any().unbind() } else { rows };
        let result_set = &pyrefs::get(py)?.ResultSet;
        let row_factory = this.row_factory.lock().clone_ref(py);
        let args = [
            this.session.bind(py).clone(),
            this._request.bind(py).clone(),
            row_factory.into_bound(py),
            this.query.bind(py).clone(),
            rows.into_bound(py),
            slf.clone().into_any(),
        ];
        Ok(super::results::make_result(result_set.bind(py), page.into_bound(py), &args)?.unbind())
    }

    /// Calls `fn(rows, *args, **kwargs)` on success (at once if already done).
    #[pyo3(signature = (r#fn, *args, **kwargs))]
    fn add_callback<'py>(
        slf: &Bound<'py, Self>,
        r#fn: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::add_callbacks_impl(slf, Some((r#fn, args, kwargs)), None)?;
        Ok(slf.clone())
    }

    /// Calls `fn(exception, *args, **kwargs)` on failure (at once if already failed).
    #[pyo3(signature = (r#fn, *args, **kwargs))]
    fn add_errback<'py>(
        slf: &Bound<'py, Self>,
        r#fn: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::add_callbacks_impl(slf, None, Some((r#fn, args, kwargs)))?;
        Ok(slf.clone())
    }

    /// `add_callback` and `add_errback` together (under one lock: the request cannot
    /// finish in between).
    #[pyo3(signature = (callback, errback, callback_args=None, callback_kwargs=None, errback_args=None, errback_kwargs=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_callbacks<'py>(
        slf: &Bound<'py, Self>,
        callback: &Bound<'py, PyAny>,
        errback: &Bound<'py, PyAny>,
        callback_args: Option<&Bound<'py, PyAny>>,
        callback_kwargs: Option<&Bound<'py, PyDict>>,
        errback_args: Option<&Bound<'py, PyAny>>,
        errback_kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let as_tuple = |a: Option<&Bound<'py, PyAny>>| -> PyResult<Bound<'py, PyTuple>> {
            match a {
                None => Ok(PyTuple::empty(py)),
                Some(a) => match a.cast::<PyTuple>() {
                    Ok(t) => Ok(t.clone()),
                    Err(_) => pyo3::types::PySequenceMethods::to_tuple(a.cast::<pyo3::types::PySequence>()?),
                },
            }
        };
        let (cargs, eargs) = (as_tuple(callback_args)?, as_tuple(errback_args)?);
        Self::add_callbacks_impl(slf, Some((callback, &cargs, callback_kwargs)), Some((errback, &eargs, errback_kwargs)))?;
        Ok(slf.clone())
    }

    fn clear_callbacks(&self) {
        // Dropped after the lock is released: dropping a callback can run Python code.
        let _dropped = self.take_callbacks();
    }

    /// Whether another page follows the last one fetched.
    #[getter]
    fn has_more_pages(&self) -> bool {
        self.state.lock().paging_state.is_some()
    }

    /// Fetches the next page; the callbacks run again with its rows. `QueryExhausted` on
    /// the last page.
    fn start_fetching_next_page(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let (state, _old) = {
            let mut st = this.state.lock();
            match st.paging_state.take() {
                None => (None, None),
                Some(ps) => (Some(ps), Some(std::mem::replace(&mut st.status, Status::Pending))),
            }
        };
        let Some(state) = state else {
            return Err(PyErr::from_value(pyrefs::exception(py, Exc::QueryExhausted)?.call0()?));
        };
        let state = state.bind(py).cast::<pyo3::types::PyBytes>()?.as_bytes();
        this._request.bind(py).cast::<PyRequest>()?.get().start_settled(py, slf.clone().into_any().unbind(), settle, Some(state))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.session)?;
        visit.call(&self.query)?;
        if let Some(f) = self.row_factory.try_lock() {
            visit.call(&*f)?;
        }
        visit.call(&self.timeout)?;
        visit.call(&self._request)?;
        // try_lock: a traversal never waits (a holder of the lock holds the GIL too).
        if let Some(st) = self.state.try_lock() {
            match &st.status {
                Status::Done(page, rows) => {
                    visit.call(page)?;
                    visit.call(rows)?;
                }
                Status::Failed(exc) => visit.call(exc)?,
                Status::Pending => {}
            }
            for (f, a, k) in st.callbacks.iter().chain(st.errbacks.iter()) {
                visit.call(f)?;
                visit.call(a)?;
                if let Some(k) = k {
                    visit.call(k)?;
                }
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let _dropped = self.take_callbacks();
    }
}

impl ResponseFutureCore {
    /// Registers a callback and/or an errback under the lock; one that applies to an
    /// already settled future runs at once, in this thread.
    #[allow(clippy::type_complexity)]
    fn add_callbacks_impl<'py>(
        slf: &Bound<'py, Self>,
        callback: Option<(&Bound<'py, PyAny>, &Bound<'py, PyTuple>, Option<&Bound<'py, PyDict>>)>,
        errback: Option<(&Bound<'py, PyAny>, &Bound<'py, PyTuple>, Option<&Bound<'py, PyDict>>)>,
    ) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let now = {
            let mut st = this.state.lock();
            if let Some((f, a, k)) = callback {
                Self::add(&mut st.callbacks, f, a, k);
            }
            if let Some((f, a, k)) = errback {
                Self::add(&mut st.errbacks, f, a, k);
            }
            match &st.status {
                Status::Done(_, rows) => callback.map(|c| (c, rows.clone_ref(py))),
                Status::Failed(exc) => errback.map(|e| (e, exc.clone_ref(py))),
                Status::Pending => None,
            }
        };
        if let Some(((f, args, kwargs), first)) = now {
            let mut all: Vec<Bound<'py, PyAny>> = Vec::with_capacity(args.len() + 1);
            all.push(first.into_bound(py));
            all.extend(args.iter());
            f.call(PyTuple::new(py, all)?, kwargs)?;
        }
        Ok(())
    }
}
