//! The `am_send` slot of [`AioRequest`]: how `await` steps it without a `StopIteration`
//! per request. pyo3 cannot declare this slot, so it is set on the type at import.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use super::aio::{AioRequest, Step};

/// `am_send` of [`AioRequest`]: what `await` calls (`PyIter_Send`) on each step. Same as
/// `__next__`, but the final value is handed back directly instead of through a
/// `StopIteration` exception, which saves creating and catching one per request.
unsafe extern "C" fn am_send(slf: *mut pyo3::ffi::PyObject, _arg: *mut pyo3::ffi::PyObject, result: *mut *mut pyo3::ffi::PyObject) -> pyo3::ffi::PySendResult {
    // SAFETY: called by the interpreter with the GIL held, `slf` a live AioRequest.
    let py = unsafe { Python::assume_attached() };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `slf` is a borrowed reference to an object of our type.
        let obj = unsafe { Bound::from_borrowed_ptr(py, slf) };
        AioRequest::step(obj.cast::<AioRequest>()?)
    }));
    let outcome = outcome.unwrap_or_else(|_| Err(PyRuntimeError::new_err("turbocql: panic in AioRequest.send")));
    // SAFETY: `result` is a valid out-pointer given by the interpreter.
    unsafe {
        match outcome {
            Ok(Step::Yield(obj)) => {
                *result = obj.into_ptr();
                pyo3::ffi::PySendResult::PYGEN_NEXT
            }
            Ok(Step::Return(value)) => {
                *result = value.into_ptr();
                pyo3::ffi::PySendResult::PYGEN_RETURN
            }
            Err(e) => {
                e.restore(py);
                *result = std::ptr::null_mut();
                pyo3::ffi::PySendResult::PYGEN_ERROR
            }
        }
    }
}

/// Gives the `AioRequest` type its `am_send` slot (pyo3 has no way to declare it).
pub fn install_send(py: Python<'_>) {
    let tp = <AioRequest as pyo3::PyTypeInfo>::type_object_raw(py);
    // SAFETY: `tp` is our heap type; heap types always have their own `tp_as_async`
    // struct (pyo3 fills `am_await` there from `__await__`). Set once, at import.
    unsafe {
        let am = (*tp).tp_as_async;
        if !am.is_null() {
            (*am).am_send = Some(am_send);
            pyo3::ffi::PyType_Modified(tp);
        }
    }
}
