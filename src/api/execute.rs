//! Execute: `Session.execute` of the classic API and of asyncio and the classic
//! `Session.execute_async`, each in one engine call with no Python frame ([`SyncExecute`],
//! [`AioExecute`], [`AsyncExecute`]), and [`EngineMethod`], which hands them out as the
//! sessions' methods.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime;
use crate::sync::Mutex;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::{PyString, PyTuple};

use super::aio::LoopQueue;
use super::builder::{given, Given, RequestBuilder, Route};
use super::future::ResponseFutureCore;
use super::results::{new_instance, plain_subclass};
use crate::pyrefs;

/// A `paging_state` argument: the bytes of a `ResultSet.paging_state`, or None.
fn paging_state_bytes(arg: Option<Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    arg.filter(|p| !p.is_none()).map(|p| p.extract()).transpose()
}

/// `turbocql.cluster.Session.execute(query, parameters=None, timeout=_NOT_SET,
/// trace=False, custom_payload=None, execution_profile=..., paging_state=None, host=None,
/// execute_as=None)`, in one engine call: the request built by the session's
/// [`RequestBuilder`], run with the GIL released, and its `ResultSet` made (see
/// `results::make_result`), with no Python frame. Each session keeps one; the class's
/// `execute` is an [`EngineMethod`] that hands it out.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct SyncExecute {
    requests: Py<RequestBuilder>,
    /// `turbocql.cluster.ResultSet`.
    result_class: Py<PyAny>,
}

#[pymethods]
impl SyncExecute {
    #[new]
    fn new(requests: Py<RequestBuilder>, result_class: Py<PyAny>) -> Self {
        SyncExecute { requests, result_class }
    }

    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false, custom_payload=None, execution_profile=None, paging_state=None, host=None, execute_as=None))]
    #[allow(clippy::too_many_arguments)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        trace: bool,
        custom_payload: Option<Bound<'py, PyAny>>,
        execution_profile: Option<Bound<'py, PyAny>>,
        paging_state: Option<Bound<'py, PyAny>>,
        host: Option<Bound<'py, PyAny>>,
        execute_as: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let requests = self.requests.get();
        let route = Route { execution_profile, host };
        let (request, row_factory) = requests.build_classic(py, query, parameters, timeout, trace, route, custom_payload, execute_as)?;
        let state = paging_state_bytes(paging_state)?;
        let page = Bound::new(py, request.run(py, state.as_deref())?)?.into_any();
        let args = [requests.session(py).clone(), request.into_untracked(py)?.into_any(), row_factory, query.clone()];
        super::results::make_result(self.result_class.bind(py), page, &args)
    }

    /// The session, as a bound method's (see [`AsyncExecute`]'s).
    #[getter]
    fn __self__<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.requests.get().session(py).clone()
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.requests)?;
        visit.call(&self.result_class)
    }
}

/// `turbocql.cluster.Session.execute_async(query, parameters=None, trace=False,
/// custom_payload=None, timeout=_NOT_SET, execution_profile=..., paging_state=None,
/// host=None, execute_as=None)`, in one engine call: the request built by the session's
/// [`RequestBuilder`], its `ResponseFuture` made (its timeout the one in force, as classic),
/// the dispatcher thread started on first use, and the request started with the future as
/// its target, with no Python frame. Each session keeps one; the class's `execute_async` is
/// an [`EngineMethod`] that hands it out.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct AsyncExecute {
    requests: Py<RequestBuilder>,
    /// `turbocql.cluster.ResponseFuture`, built as `(session, request, query, row_factory,
    /// timeout)`.
    future_class: Py<PyAny>,
    /// `turbocql._session.dispatcher`: its `_dispatcher_thread` is None until
    /// `_start_dispatcher()` (and again in a forked child).
    dispatcher: Py<PyAny>,
    /// `runtime::generation() + 1` once the dispatcher was seen started in that generation
    /// (0: not yet).
    dispatcher_started: AtomicU64,
}

#[pymethods]
impl AsyncExecute {
    #[new]
    fn new(requests: Py<RequestBuilder>, future_class: Py<PyAny>, dispatcher: Py<PyAny>) -> Self {
        AsyncExecute { requests, future_class, dispatcher, dispatcher_started: AtomicU64::new(0) }
    }

    #[pyo3(signature = (query, parameters=None, trace=false, custom_payload=None, timeout=Given(None), execution_profile=None, paging_state=None, host=None, execute_as=None))]
    #[allow(clippy::too_many_arguments)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        trace: bool,
        custom_payload: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        execution_profile: Option<Bound<'py, PyAny>>,
        paging_state: Option<Bound<'py, PyAny>>,
        host: Option<Bound<'py, PyAny>>,
        execute_as: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let requests = self.requests.get();
        let route = Route { execution_profile, host };
        let (request, row_factory) = requests.build_classic(py, query, parameters, timeout, trace, route, custom_payload, execute_as)?;
        let state = paging_state_bytes(paging_state)?;
        let request = request.into_untracked(py)?;
        let timeout = request.get().timeout_seconds();
        let session = requests.session(py);
        let future = match plain_subclass::<ResponseFutureCore>(self.future_class.bind(py)) {
            Some(tp) => {
                let timeout = timeout.into_pyobject(py)?.into_any().unbind();
                let core = ResponseFutureCore::new(
                    session.clone().unbind(),
                    request.clone().into_any().unbind(),
                    query.clone().unbind(),
                    row_factory.unbind(),
                    timeout,
                );
                new_instance(py, PyClassInitializer::from(core), tp)?
            }
            // A class with a constructor of its own: called as documented.
            None => self.future_class.bind(py).call1((session, &request, query, row_factory, timeout))?,
        };
        // Once the dispatcher is known started in this process, its module is not asked
        // again: a forked child (another generation) asks again. Relaxed: the flag publishes
        // no data (the thread is the module's), it is read and written with the GIL held,
        // and a stale read only asks the module again (`_start_dispatcher` starts one
        // thread under its lock).
        let generation = runtime::generation() + 1;
        if self.dispatcher_started.load(Ordering::Relaxed) != generation {
            let dispatcher = self.dispatcher.bind(py);
            if dispatcher.getattr(intern!(py, "_dispatcher_thread"))?.is_none() {
                dispatcher.call_method0(intern!(py, "_start_dispatcher"))?;
            }
            // Relaxed: as the load above.
            self.dispatcher_started.store(generation, Ordering::Relaxed);
        }
        request.get().start_settled(py, future.clone().unbind(), super::future::settle, state.as_deref())?;
        Ok(future)
    }

    /// The session, as a bound method's: an agent that wraps `session.execute_async` on the
    /// instance (ddtrace's cassandra integration, with wrapt) finds the session there.
    #[getter]
    fn __self__<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.requests.get().session(py).clone()
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.requests)?;
        visit.call(&self.future_class)?;
        visit.call(&self.dispatcher)
    }
}

/// A method of a Python class whose calls go to an engine object kept on each instance
/// (attribute `attr`, e.g. a session's [`SyncExecute`]): `instance.method` is that
/// object, so a call runs no Python frame. On the class (`Session.execute`) it is the
/// Python function, with its signature and docstring, and an instance without the
/// attribute gets the function bound as usual. Being a class attribute, it can be
/// replaced on the class (`mock.patch.object(Session, "execute")`) or overridden by a
/// subclass like any method.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct EngineMethod {
    function: Py<PyAny>,
    attr: Py<PyString>,
}

#[pymethods]
impl EngineMethod {
    #[new]
    fn new(function: Py<PyAny>, attr: Bound<'_, PyString>) -> PyResult<Self> {
        let py = attr.py();
        let attr = PyString::intern(py, attr.to_str()?).unbind();
        Ok(EngineMethod { function, attr })
    }

    fn __get__<'py>(&self, py: Python<'py>, obj: Option<Bound<'py, PyAny>>, objtype: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(self.function.bind(py).clone());
        };
        match obj.getattr_opt(self.attr.bind(py))? {
            Some(engine) => Ok(engine),
            None => self.function.bind(py).call_method1(pyo3::intern!(py, "__get__"), (obj, objtype)),
        }
    }

    /// The Python function (`functools.wraps`-style access for tools).
    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.function.clone_ref(py)
    }

    #[getter]
    fn __doc__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.function.bind(py).getattr(pyo3::intern!(py, "__doc__"))
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.function)
    }
}

/// `turbocql.aio.Session.execute(query, parameters=None, timeout=_NOT_SET, trace=False,
/// paging_state=None, execution_profile=EXEC_PROFILE_DEFAULT, host=None)` (see the
/// module doc).
#[pyclass(frozen, module = "turbocql._engine")]
pub struct AioExecute {
    /// The session's request builder (`Session._build_request`).
    requests: Py<RequestBuilder>,
    /// `AsyncResultSet`, built as `(page, session, request, row_factory, query)`.
    result_class: Py<PyAny>,
    /// `turbocql.aio._loop_queue(loop)`.
    loop_queue: Py<PyAny>,
    /// `(thread, loop, queue)` of the last call: `asyncio.get_running_loop()` costs a
    /// `getpid()` system call on each call, so the loop is remembered per thread.
    last: Mutex<Option<(libc::pthread_t, Py<PyAny>, Py<LoopQueue>)>>,
}

impl AioExecute {
    /// The running loop of this thread and its queue.
    fn running_loop(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<LoopQueue>)> {
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        let cached = self.last.lock().as_ref().filter(|(t, _, _)| *t == thread).map(|(_, l, q)| (l.clone_ref(py), q.clone_ref(py)));
        if let Some((event_loop, queue)) = cached {
            if event_loop.bind(py).call_method0(intern!(py, "is_running"))?.is_truthy()? {
                return Ok((event_loop, queue));
            }
        }
        let event_loop = pyrefs::get(py)?.asyncio_get_running_loop.bind(py).call0()?;
        let queue = self.loop_queue.bind(py).call1((&event_loop,))?.cast_into::<LoopQueue>()?.unbind();
        let event_loop = event_loop.unbind();
        *self.last.lock() = Some((thread, event_loop.clone_ref(py), queue.clone_ref(py)));
        Ok((event_loop, queue))
    }
}

#[pymethods]
impl AioExecute {
    #[new]
    fn new(requests: Py<RequestBuilder>, result_class: Py<PyAny>, loop_queue: Py<PyAny>) -> Self {
        AioExecute { requests, result_class, loop_queue, last: Mutex::new(None) }
    }

    #[pyo3(signature = (query, parameters=None, timeout=Given(None), trace=false, paging_state=None, execution_profile=None, host=None))]
    #[allow(clippy::too_many_arguments)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        parameters: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = given)] timeout: Given<'py>,
        trace: bool,
        paging_state: Option<&[u8]>,
        execution_profile: Option<Bound<'py, PyAny>>,
        host: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let requests = self.requests.get();
        let (request, row_factory) = requests.build(py, query, parameters, timeout, trace, Route { execution_profile, host })?;
        let (event_loop, queue) = self.running_loop(py)?;
        let request = request.into_untracked(py)?;
        let args = PyTuple::new(py, [requests.session(py).clone(), request.clone().into_any(), row_factory, query.clone()])?.unbind();
        let wrap = self.result_class.clone_ref(py);
        Ok(request.get().aio(py, event_loop, queue, wrap, args, paging_state)?.into_any())
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.requests)?;
        visit.call(&self.result_class)?;
        visit.call(&self.loop_queue)?;
        if let Some(last) = self.last.try_lock() {
            if let Some((_, event_loop, queue)) = last.as_ref() {
                visit.call(event_loop)?;
                visit.call(queue)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let _dropped = self.last.lock().take();
    }
}
