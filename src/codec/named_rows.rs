//! Named rows: the default row factory (`named_tuple_factory`), rows made as named-tuple
//! instances in Rust, one allocation per row and no Python-level call, straight from a
//! page's bytes ([`page_named_rows`]) or from rows already decoded ([`named_rows`]).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::rows::page_rows_by;
use crate::pyrefs;

/// `rows` (sequences) as instances of `cls`, a tuple subclass without instance fields (a
/// named-tuple class): one allocation and a copy of the item pointers per row, with no
/// Python-level call. Each row must have as many items as `cls._fields`.
#[pyfunction]
pub fn rows_as<'py>(cls: &Bound<'py, pyo3::types::PyType>, rows: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let py = cls.py();
    check_plain_tuple_class(cls)?;
    let width = cls.getattr(pyo3::intern!(py, "_fields"))?.len()?;
    let out = PyList::empty(py);
    for row in rows.try_iter()? {
        let row = row?;
        let row = match row.cast_exact::<PyTuple>() {
            Ok(t) => t.clone(),
            Err(_) => pyo3::types::PySequenceMethods::to_tuple(row.cast::<pyo3::types::PySequence>()?)?,
        };
        if row.len() != width {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!("Expected {width} arguments, got {}", row.len())));
        }
        out.append(make_row(cls, row.iter())?)?;
    }
    Ok(out)
}

/// Checks that `cls` is a tuple subclass with the tuple's exact layout (no instance
/// fields, no `__dict__`), as [`make_row`] needs.
fn check_plain_tuple_class(cls: &Bound<'_, pyo3::types::PyType>) -> PyResult<()> {
    let tp = cls.as_type_ptr();
    // SAFETY: reading fields of a live type object.
    let plain = unsafe {
        ffi::PyType_IsSubtype(tp, std::ptr::addr_of_mut!(ffi::PyTuple_Type)) != 0
            && (*tp).tp_basicsize == ffi::PyTuple_Type.tp_basicsize
            && (*tp).tp_itemsize == ffi::PyTuple_Type.tp_itemsize
            && (*tp).tp_dictoffset == 0
    };
    if plain {
        Ok(())
    } else {
        Err(pyo3::exceptions::PyTypeError::new_err(format!("{} is not a tuple subclass without instance fields", cls.name()?)))
    }
}

/// Whether `cls` is a named-tuple class of `fields` fields whose instances [`tuple_instance`]
/// can make: a tuple subclass without instance fields (a `collections.namedtuple` class,
/// whose `__new__` is `tuple.__new__(cls, items)`).
pub fn is_named_tuple_class(cls: &Bound<'_, PyAny>, fields: usize) -> bool {
    let Ok(cls) = cls.cast::<pyo3::types::PyType>() else {
        return false;
    };
    check_plain_tuple_class(cls).is_ok() && cls.getattr(pyo3::intern!(cls.py(), "_fields")).and_then(|f| f.len()).is_ok_and(|n| n == fields)
}

/// An instance of `cls` (a class [`is_named_tuple_class`] accepted, for `N` fields) holding
/// `items`, made as a row is: one allocation, no Python-level `__new__`.
pub fn tuple_instance<'py, const N: usize>(cls: &Bound<'py, PyAny>, items: [Bound<'py, PyAny>; N]) -> PyResult<Bound<'py, PyAny>> {
    make_row(cls.cast::<pyo3::types::PyType>()?, items.into_iter())
}

/// An instance of `cls` (checked by [`check_plain_tuple_class`]) holding `items`: one
/// allocation, no Python-level call. A row whose every value is of a type the cycle
/// collector does not track (str, int, float, bytes, None...) is
/// untracked: it can be in no reference cycle, so no collection walks it. CPython does the
/// same for a plain tuple at its first collection (`_PyTuple_MaybeUntrack`), never for an
/// instance of a subclass, as a named row is: every row kept alive (a result list, unthrottled
/// futures, a scan held in memory) was walked by every full collection. A row holding a
/// list, a set, a dict, a UDT or a UUID stays tracked.
fn make_row<'py>(cls: &Bound<'py, pyo3::types::PyType>, items: impl ExactSizeIterator<Item = Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let width = items.len();
    // SAFETY: `cls` is a tuple subclass with the tuple's exact layout (checked by the
    // caller); GenericAlloc returns a zeroed instance of `width` slots, each filled once
    // here with a new reference before the object is used. `items.len()` must be exact (a
    // longer iterator would write past the object): the callers pass a tuple's iterator, a
    // Vec's drain or an array's iterator. From CPython 3.14 a tuple caches its hash, -1 meaning "not computed"
    // (what the tuple's own constructors set): the zeroed field would be a hash of 0.
    // Untracking a tracked object of a GC type (GenericAlloc tracked it) is allowed at any
    // time, and a no-op on one already untracked.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(cls.as_type_ptr(), width as ffi::Py_ssize_t);
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        #[cfg(Py_3_14)]
        {
            (*obj.cast::<ffi::PyTupleObject>()).ob_hash = -1;
        }
        let mut untracked_values = true;
        for (i, item) in items.enumerate() {
            untracked_values &= ffi::PyType_IS_GC(ffi::Py_TYPE(item.as_ptr())) == 0;
            ffi::PyTuple_SET_ITEM(obj, i as ffi::Py_ssize_t, item.into_ptr());
        }
        if untracked_values {
            ffi::PyObject_GC_UnTrack(obj.cast());
        }
        Ok(Bound::from_owned_ptr(py, obj))
    }
}

/// The named-tuple row factory: `rows` as instances of the named-tuple class of
/// `colnames` (built by `turbocql.query._row_class`, cached there). Pages of one statement
/// share one column-names tuple (see `super::rows::column_meta`), so the last few classes are also
/// kept here by identity of that tuple, which skips the Python lookup. A list of rows made
/// as these tuples already (by [`page_named_rows`]) is returned as it is.
#[pyfunction]
pub fn named_rows<'py>(colnames: &Bound<'py, PyAny>, rows: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let cls = row_class(colnames)?;
    let cls = cls.bind(colnames.py());
    if let Ok(list) = rows.cast::<PyList>() {
        // Made as these named tuples already (see `page_named_rows`).
        if list.get_item(0).map_or(list.is_empty(), |r| r.get_type().is(cls)) {
            return Ok(list.clone());
        }
    }
    rows_as(cls, rows)
}

/// The named-tuple class of a column-names tuple (`turbocql.query._row_class`; the last
/// few kept by identity of the tuple).
fn row_class(colnames: &Bound<'_, PyAny>) -> PyResult<Py<pyo3::types::PyType>> {
    type Entry = (Py<PyAny>, Py<pyo3::types::PyType>);
    static RECENT: crate::sync::Mutex<Vec<Entry>> = crate::sync::Mutex::new(Vec::new());
    let py = colnames.py();
    let hit = RECENT.lock().iter().find(|(names, _)| names.as_ptr() == colnames.as_ptr()).map(|(_, cls)| cls.clone_ref(py));
    if let Some(cls) = hit {
        return Ok(cls);
    }
    let row_class = &pyrefs::get(py)?.row_class;
    let key = match colnames.cast::<PyTuple>() {
        Ok(t) => t.clone(),
        Err(_) => pyo3::types::PySequenceMethods::to_tuple(colnames.cast::<pyo3::types::PySequence>()?)?,
    };
    let cls = row_class.bind(py).call1((key,))?.cast_into::<pyo3::types::PyType>()?.unbind();
    let mut recent = RECENT.lock();
    recent.insert(0, (colnames.clone().unbind(), cls.clone_ref(py)));
    recent.truncate(8);
    Ok(cls)
}

/// All rows of a page as the default row factory's named tuples (class of `colnames`),
/// made directly from the page's bytes.
pub fn page_named_rows<'py>(py: Python<'py>, rows: &impl super::rows::RawPage, colnames: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let cls = row_class(colnames)?;
    let cls = cls.bind(py);
    check_plain_tuple_class(cls)?;
    page_rows_by(py, rows, |cells| make_row(cls, cells))
}
