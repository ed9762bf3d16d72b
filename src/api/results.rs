//! Results: [`ResultCore`], the engine half of `turbocql.cluster.ResultSet`.
//!
//! A result holds one page (`exec::page::Page`), and the rows the row factory makes of
//! it, built on first access. Building a result and reading `one()` or
//! `current_rows` run here, with no Python frame; paging, iteration and the rest of the
//! classic API are the Python subclass's (`turbocql.cluster.ResultSet`).

use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::{PyList, PyTuple, PyType};
use pyo3::PyClass;
use pyo3::PyTraverseError;

use crate::codec::named_rows::named_rows;
use crate::exec::page::Page;
use crate::pyrefs;

/// Whether `factory` is the default row factory (the engine's `named_rows`).
pub(crate) fn is_named_rows(py: Python<'_>, factory: &Bound<'_, PyAny>) -> bool {
    pyrefs::get(py).is_ok_and(|r| r.named_rows.is(factory))
}

/// The rows `factory` makes of `page`'s raw rows (`factory(column_names, raw_rows)`), or
/// None for a result without rows.
pub fn page_rows_of<'py>(py: Python<'py>, page: &Page, factory: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let raw = page.rows.bind(py).clone();
    if raw.is_none() {
        return Ok(None);
    }
    let names = page.column_names.bind(py);
    if is_named_rows(py, factory) {
        return Ok(Some(named_rows(names, &raw)?.into_any()));
    }
    // Rows made as named tuples when the page was decoded (the request's row factory
    // was the default) go to another factory as plain tuples, as they would have come.
    let raw = match raw.cast::<PyList>() {
        Ok(list) if list.get_item(0).is_ok_and(|r| !r.is_exact_instance_of::<PyTuple>() && r.is_instance_of::<PyTuple>()) => {
            let plain = PyList::empty(py);
            for row in list.iter() {
                plain.append(PyTuple::new(py, row.cast::<PyTuple>()?.iter())?)?;
            }
            plain.into_any()
        }
        _ => raw,
    };
    Ok(Some(factory.call1((names, raw))?))
}

/// `cls(page, *args)` for a result-set class `cls`, where `args` are the rest of
/// `ResultCore`'s arguments (`session, request, row_factory, query[, rows[,
/// response_future]]`). When `cls` is `ResultCore` or a subclass that keeps its
/// constructor (no `__new__`/`__init__` of its own, as `ResultSet` and `AsyncResultSet`),
/// the object is made directly, without parsing arguments; otherwise `cls` is called.
///
/// The result of a statement that may have changed the schema is made after the
/// session's `_own_schema_change(query)` (which reads the schema metadata again, as the
/// classic driver does before it returns its own DDL's result).
pub fn make_result<'py>(cls: &Bound<'py, PyAny>, page: Bound<'py, PyAny>, args: &[Bound<'py, PyAny>]) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    if let (Ok(p), [session, _, _, query, ..]) = (page.cast::<Page>(), args) {
        if p.get().take_schema_change() {
            if let Some(hook) = session.getattr_opt(pyo3::intern!(py, "_own_schema_change"))? {
                hook.call1((query,))?;
            }
        }
    }
    if let Some(tp) = plain_subclass::<ResultCore>(cls) {
        if (4..=6).contains(&args.len()) {
            let opt = |i: usize| args.get(i).filter(|a| !a.is_none()).map(|a| a.clone().unbind());
            let core = ResultCore {
                _page: page.cast_into::<Page>()?.unbind(),
                rows: opt(4),
                _session: args[0].clone().unbind(),
                _request: args[1].clone().unbind(),
                _row_factory: args[2].clone().unbind(),
                query: args[3].clone().unbind(),
                response_future: opt(5).unwrap_or_else(|| py.None()),
            };
            return new_instance(py, PyClassInitializer::from(core), tp);
        }
    }
    let mut items = Vec::with_capacity(args.len() + 1);
    items.push(page);
    items.extend(args.iter().cloned());
    cls.call1(PyTuple::new(py, items)?)
}

/// `cls` as a type object, if it is `T` or a subclass whose construction is `T`'s own (same
/// `tp_new`, `tp_init` inherited from `object`): one whose instances [`new_instance`] may make.
pub(crate) fn plain_subclass<T: PyClass>(cls: &Bound<'_, PyAny>) -> Option<*mut ffi::PyTypeObject> {
    let py = cls.py();
    let ty = cls.cast::<PyType>().ok()?;
    let base = py.get_type::<T>();
    if !ty.is_subclass(&base).ok()? {
        return None;
    }
    let (tp, bp) = (ty.as_type_ptr(), base.as_type_ptr());
    // The slot values themselves are compared: a subclass that defines neither method
    // holds copies of the base's pointers.
    // SAFETY: reading slots of two live type objects.
    let same = unsafe {
        (*tp).tp_new.map(|f| f as usize) == (*bp).tp_new.map(|f| f as usize) && (*tp).tp_init.map(|f| f as usize) == (*bp).tp_init.map(|f| f as usize)
    };
    same.then_some(tp)
}

/// An instance of `tp` (from [`plain_subclass::<T>`]) made of `value`, as calling the class
/// would make it, without the call's argument tuple and parsing.
pub(crate) fn new_instance<'py, T: PyClass>(py: Python<'py>, value: PyClassInitializer<T>, tp: *mut ffi::PyTypeObject) -> PyResult<Bound<'py, PyAny>> {
    // PyO3 has no public constructor for an instance of a Python subclass (PyO3 issue
    // 4608): `tp_new_impl` is what its `#[new]` slot calls (hidden `impl_` API, checked at
    // each PyO3 upgrade).
    // SAFETY: `tp` is `T`'s type or a subclass of it that keeps its construction (checked
    // by `plain_subclass`), which is what `tp_new_impl` requires.
    let obj = unsafe { pyo3::impl_::pymethods::tp_new_impl::<_, T>(py, value, tp)? };
    // SAFETY: a new, owned reference to a live object.
    Ok(unsafe { Bound::from_owned_ptr(py, obj) })
}

/// One page of a request's result and its rows (see the module doc).
#[pyclass(subclass, module = "turbocql._engine")]
pub struct ResultCore {
    #[pyo3(get, set)]
    _page: Py<Page>,
    /// The row factory's output for the page, once built (or set).
    rows: Option<Py<PyAny>>,
    #[pyo3(get)]
    _session: Py<PyAny>,
    #[pyo3(get)]
    _request: Py<PyAny>,
    #[pyo3(get)]
    _row_factory: Py<PyAny>,
    #[pyo3(get, set)]
    query: Py<PyAny>,
    #[pyo3(get, set)]
    response_future: Py<PyAny>,
}

impl ResultCore {
    fn page(&self) -> &Page {
        self._page.get()
    }
}

#[pymethods]
impl ResultCore {
    /// `rows`, when given, are the page's rows already made by the row factory.
    ///
    /// Also the classic form, `ResultSet(response_future, initial_response)`, as agents
    /// build one (ddtrace's cassandra integration): the future's settled page, with
    /// `initial_response` as its rows.
    #[new]
    #[pyo3(signature = (page, session, request=None, row_factory=None, query=None, rows=None, response_future=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        page: Bound<'_, PyAny>,
        session: Py<PyAny>,
        request: Option<Py<PyAny>>,
        row_factory: Option<Py<PyAny>>,
        query: Option<Py<PyAny>>,
        rows: Option<Py<PyAny>>,
        response_future: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        // A response future is told by its `_final_page` (this module is below the futures').
        let settled = if page.is_instance_of::<Page>() { None } else { page.getattr_opt(intern!(py, "_final_page"))? };
        if let Some(settled) = settled {
            let future = page;
            let page = match settled.cast_into::<Page>() {
                Ok(p) => p.unbind(),
                Err(_) => Py::new(py, Page::empty(py))?,
            };
            let rows = if session.is_none(py) { PyList::empty(py).into_any().unbind() } else { session };
            return Ok(ResultCore {
                _page: page,
                rows: Some(rows),
                _session: future.getattr(intern!(py, "session"))?.unbind(),
                _request: future.getattr(intern!(py, "_request"))?.unbind(),
                _row_factory: future.getattr(intern!(py, "row_factory"))?.unbind(),
                query: future.getattr(intern!(py, "query"))?.unbind(),
                response_future: future.unbind(),
            });
        }
        let (Some(request), Some(row_factory), Some(query)) = (request, row_factory, query) else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "ResultSet(page, session, request, row_factory, query[, rows, response_future]) or ResultSet(response_future, initial_response)",
            ));
        };
        Ok(ResultCore {
            _page: page.cast_into::<Page>()?.unbind(),
            rows,
            _session: session,
            _request: request,
            _row_factory: row_factory,
            query,
            response_future: response_future.unwrap_or_else(|| py.None()),
        })
    }

    /// The current page's rows, made by the row factory on first access (`[]` for a
    /// result without rows).
    #[getter]
    fn _current_rows(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(rows) = &self.rows {
            return Ok(rows.clone_ref(py));
        }
        let rows = match page_rows_of(py, self.page(), self._row_factory.bind(py))? {
            Some(rows) => rows.unbind(),
            None => PyList::empty(py).into_any().unbind(),
        };
        self.rows = Some(rows.clone_ref(py));
        Ok(rows)
    }

    #[setter(_current_rows)]
    fn set_current_rows(&mut self, rows: Py<PyAny>) {
        self.rows = Some(rows);
    }

    /// Replaces the page (its rows are made again on next access).
    fn _reset_page(&mut self, page: Py<Page>) {
        self._page = page;
        self.rows = None;
    }

    /// The current page's rows (`[]` if none).
    #[getter]
    fn current_rows(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let rows = self._current_rows(py)?;
        if rows.bind(py).is_truthy()? {
            Ok(rows)
        } else {
            Ok(PyList::empty(py).into_any().unbind())
        }
    }

    /// The first row of the current page, or None.
    ///
    /// A row factory may return any iterable (a generator, as the classic driver allows):
    /// rows that cannot be indexed give their first item by iteration, which consumes it,
    /// as in the classic driver; an iterable already exhausted gives None.
    fn one(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let rows = self._current_rows(py)?;
        let rows = rows.bind(py);
        if let Ok(list) = rows.cast::<PyList>() {
            return Ok(list.get_item(0).map(|r| r.unbind()).unwrap_or_else(|_| py.None()));
        }
        if let Ok(tuple) = rows.cast::<PyTuple>() {
            return Ok(tuple.get_item(0).map(|r| r.unbind()).unwrap_or_else(|_| py.None()));
        }
        if !rows.is_truthy()? {
            return Ok(py.None());
        }
        match rows.get_item(0) {
            Ok(row) => Ok(row.unbind()),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => match rows.try_iter()?.next() {
                Some(row) => Ok(row?.unbind()),
                None => Ok(py.None()),
            },
            Err(e) => Err(e),
        }
    }

    #[getter]
    fn column_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.page().column_names.bind(py).clone())
    }

    #[getter]
    fn column_types<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.page().column_types.bind(py).clone())
    }

    /// Where the next page starts (bytes), or None on the last page.
    #[getter]
    fn paging_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.page().paging_state.bind(py).clone())
    }

    #[getter]
    fn has_more_pages(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(!self.page().paging_state.is_none(py))
    }

    #[getter]
    fn _trace_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.page().trace_id.bind(py).clone())
    }

    /// The server's warnings for this request (a list of str), or None.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.page().warnings.bind(py).clone())
    }

    /// False after a schema change whose wait for schema agreement ended without it.
    #[getter]
    fn _schema_agreed(&self) -> bool {
        self.page().schema_agreed
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self._page)?;
        if let Some(rows) = &self.rows {
            visit.call(rows)?;
        }
        visit.call(&self._session)?;
        visit.call(&self._request)?;
        visit.call(&self._row_factory)?;
        visit.call(&self.query)?;
        visit.call(&self.response_future)
    }

    fn __clear__(&mut self, py: Python<'_>) {
        self.rows = None;
        self.response_future = py.None();
        self.query = py.None();
        self._request = py.None();
        self._session = py.None();
        if let Ok(empty) = Py::new(py, Page::empty(py)) {
            self._page = empty;
        }
    }
}
