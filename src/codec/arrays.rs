//! Arrays: numpy arrays (and any object with the buffer protocol) read and built in Rust.
//!
//! In: [`ArrayBuf`] holds a buffer of numbers (any number of dimensions, any strides, either
//! byte order) so that `vector<float, n>` and numeric columns are serialized straight from
//! its memory, with no Python object per element (see `values`). Out: [`numpy_array`] turns
//! bytes decoded in Rust into a numpy array (the columnar result mode of `rows`).

use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use scylla::frame::response::result::{ColumnType, NativeType};

use super::mismatch::{type_err, value_err, Mismatch};
use super::types::type_name;

/// What the elements of a buffer are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Num {
    Float,
    Signed,
    Unsigned,
}

/// A numeric buffer of a Python object, released (GIL attached) when dropped.
pub struct ArrayBuf {
    view: Box<ffi::Py_buffer>,
    num: Option<Num>,
    big_endian: bool,
}

// SAFETY: the buffer is only read with the GIL held (every reader has a `Python` token or a
// `Bound`) and released with it (`Drop`), while the exporting object is kept alive by the
// view itself (as pyo3's own `PyBuffer` does). C code writing the array with the GIL
// released races the read, as it would for any buffer consumer.
unsafe impl Send for ArrayBuf {}
unsafe impl Sync for ArrayBuf {}

impl Drop for ArrayBuf {
    fn drop(&mut self) {
        // Not attached (the interpreter is gone): nothing left to release.
        // SAFETY: the view was filled by PyObject_GetBuffer (`get`) and is released once,
        // here, attached.
        let _ = Python::try_attach(|_| unsafe { ffi::PyBuffer_Release(&mut *self.view) });
    }
}

/// Element kind and byte order of a `struct`-module format string (`"f"`, `"<d"`, `">i"`, ...).
pub fn parse_format(format: &str) -> (Option<Num>, bool) {
    let native_be = cfg!(target_endian = "big");
    let (order, code) = match format.as_bytes() {
        [c] => (native_be, *c),
        [b'@' | b'=', c] => (native_be, *c),
        [b'<', c] => (false, *c),
        [b'>' | b'!', c] => (true, *c),
        _ => return (None, native_be),
    };
    let num = match code {
        b'f' | b'd' => Some(Num::Float),
        b'b' | b'h' | b'i' | b'l' | b'q' | b'n' => Some(Num::Signed),
        b'B' | b'H' | b'I' | b'L' | b'Q' | b'N' => Some(Num::Unsigned),
        _ => None,
    };
    (num, order)
}

impl ArrayBuf {
    /// The buffer of `obj`, or None when it has no buffer protocol (str, bytes and
    /// bytearray are values of their own, never arrays).
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Option<ArrayBuf>> {
        if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() || obj.is_instance_of::<PyString>() {
            return Ok(None);
        }
        // SAFETY (both calls): `obj` is a live object and the GIL is held (a `Bound`); `raw`
        // is a box of a `Py_buffer`'s size for PyObject_GetBuffer to fill.
        if unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) } == 0 {
            return Ok(None);
        }
        let mut raw = Box::new(MaybeUninit::<ffi::Py_buffer>::uninit());
        let rc = unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), raw.as_mut_ptr(), ffi::PyBUF_RECORDS_RO) };
        if rc == -1 {
            return Err(PyErr::fetch(obj.py()));
        }
        // SAFETY: initialised by PyObject_GetBuffer, which returned 0 (MaybeUninit<T> has
        // T's layout).
        let view: Box<ffi::Py_buffer> = unsafe { Box::from_raw(Box::into_raw(raw).cast()) };
        let mut a = ArrayBuf { view, num: None, big_endian: false };
        let fmt = a.format();
        let (num, big_endian) = parse_format(&fmt);
        let size_ok = match num {
            Some(Num::Float) => matches!(a.itemsize(), 4 | 8),
            Some(_) => matches!(a.itemsize(), 1 | 2 | 4 | 8),
            None => false,
        };
        a.num = num.filter(|_| size_ok);
        a.big_endian = big_endian;
        Ok(Some(a))
    }

    /// The element kind, None when the elements are not plain numbers (objects, records).
    pub fn num(&self) -> Option<Num> {
        self.num
    }

    pub fn itemsize(&self) -> usize {
        self.view.itemsize as usize
    }

    pub fn ndim(&self) -> usize {
        self.view.ndim as usize
    }

    pub fn shape(&self) -> &[isize] {
        if self.view.shape.is_null() {
            return &[];
        }
        // SAFETY: PyBUF_RECORDS_RO asks for the shape, `ndim` entries, valid while the view is held.
        unsafe { std::slice::from_raw_parts(self.view.shape, self.ndim()) }
    }

    pub fn strides(&self) -> &[isize] {
        if self.view.strides.is_null() {
            return &[];
        }
        // SAFETY: PyBUF_RECORDS_RO asks for the strides, `ndim` entries, valid while the view is held.
        unsafe { std::slice::from_raw_parts(self.view.strides, self.ndim()) }
    }

    /// The shape as Python writes it: `(2, 4)`, `(3,)`.
    pub fn shape_text(&self) -> String {
        let dims: Vec<String> = self.shape().iter().map(|d| d.to_string()).collect();
        if dims.len() == 1 {
            format!("({},)", dims[0])
        } else {
            format!("({})", dims.join(", "))
        }
    }

    /// The format string (`"B"` when the exporter gives none).
    pub fn format(&self) -> String {
        if self.view.format.is_null() {
            return "B".into();
        }
        // SAFETY: a non-null format is a NUL-terminated string, valid while the view is held.
        unsafe { std::ffi::CStr::from_ptr(self.view.format) }.to_string_lossy().into_owned()
    }

    /// A short description of the elements for error messages: numpy's dtype names.
    pub fn dtype_name(&self) -> String {
        let bits = self.itemsize() * 8;
        match self.num {
            Some(Num::Float) => format!("float{bits}"),
            Some(Num::Signed) => format!("int{bits}"),
            Some(Num::Unsigned) => format!("uint{bits}"),
            None => format!("elements of buffer format {:?}", self.format()),
        }
    }

    #[inline]
    fn raw<const N: usize>(&self, off: isize) -> [u8; N] {
        // SAFETY: callers only pass offsets of elements inside the buffer (index < shape, from
        // the view's strides), and N is at most the item size. Not checked here: `f32_at`,
        // `f64_at`, `i128_at` and `write_array_elems` are safe functions that take any offset
        // (open, docs/ARCHITECTURE.md "unsafe: the inventory").
        let mut b: [u8; N] = unsafe { std::ptr::read_unaligned((self.view.buf as *const u8).offset(off) as *const [u8; N]) };
        if self.big_endian != cfg!(target_endian = "big") {
            b.reverse();
        }
        b
    }

    /// The float at byte offset `off` (the buffer holds floats).
    #[inline]
    pub fn f64_at(&self, off: isize) -> f64 {
        match self.itemsize() {
            4 => f32::from_ne_bytes(self.raw(off)) as f64,
            _ => f64::from_ne_bytes(self.raw(off)),
        }
    }

    /// The float32 at byte offset `off` (the buffer holds float32).
    #[inline]
    pub fn f32_at(&self, off: isize) -> f32 {
        f32::from_ne_bytes(self.raw(off))
    }

    /// The integer at byte offset `off` (the buffer holds integers).
    #[inline]
    pub fn i128_at(&self, off: isize) -> i128 {
        let signed = self.num == Some(Num::Signed);
        match (self.itemsize(), signed) {
            (1, true) => i8::from_ne_bytes(self.raw(off)) as i128,
            (1, false) => u8::from_ne_bytes(self.raw(off)) as i128,
            (2, true) => i16::from_ne_bytes(self.raw(off)) as i128,
            (2, false) => u16::from_ne_bytes(self.raw(off)) as i128,
            (4, true) => i32::from_ne_bytes(self.raw(off)) as i128,
            (4, false) => u32::from_ne_bytes(self.raw(off)) as i128,
            (_, true) => i64::from_ne_bytes(self.raw(off)) as i128,
            (_, false) => u64::from_ne_bytes(self.raw(off)) as i128,
        }
    }
}

/// A numpy array of `dtype` over `data` (native byte order), shaped `(rows,)` or
/// `(rows, width)`; with `mask` (one flag per element), a `numpy.ma.MaskedArray`.
pub fn numpy_array<'py>(
    np: &Bound<'py, PyModule>,
    data: &[u8],
    dtype: &str,
    rows: usize,
    width: Option<usize>,
    mask: Option<&[u8]>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = np.py();
    let shape = |a: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        match width {
            Some(w) => a.call_method1("reshape", ((rows, w),)),
            None => Ok(a),
        }
    };
    let arr = shape(np.call_method1("frombuffer", (PyByteArray::new(py, data), dtype))?)?;
    match mask {
        None => Ok(arr),
        Some(m) => {
            let m = shape(np.call_method1("frombuffer", (PyByteArray::new(py, m), "?"))?)?;
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("mask", m)?;
            np.getattr("ma")?.getattr("masked_array")?.call((arr,), Some(&kw))
        }
    }
}

/// True for the element types arrays are written as directly: fixed-size numbers.
pub fn array_elem(et: &ColumnType<'_>) -> bool {
    matches!(et, ColumnType::Native(NativeType::Float | NativeType::Double | NativeType::Int | NativeType::BigInt | NativeType::SmallInt | NativeType::TinyInt))
}

/// Checks that the elements of `arr` can be written as `et` (floats for float and double,
/// integers for the integer types).
pub(crate) fn array_fits(arr: &ArrayBuf, et: &ColumnType<'_>) -> Result<(), Mismatch> {
    let floats = matches!(et, ColumnType::Native(NativeType::Float | NativeType::Double));
    match (arr.num(), floats) {
        (Some(Num::Float), true) | (Some(Num::Signed | Num::Unsigned), false) => Ok(()),
        (_, true) => Err(type_err(format!("expected an array of float32 or float64, got {}", arr.dtype_name()))),
        (_, false) => Err(type_err(format!("expected an array of integers, got {}", arr.dtype_name()))),
    }
}

/// Writes `count` elements of `arr` as values of `et` (see [`array_elem`]): from byte offset
/// `off`, `step` bytes apart. No Python object is made.
pub(crate) fn write_array_elems(buf: &mut Vec<u8>, arr: &ArrayBuf, et: &ColumnType<'_>, off: isize, step: isize, count: usize) -> Result<(), Mismatch> {
    array_fits(arr, et)?;
    let at = |k: usize| off + k as isize * step;
    let ColumnType::Native(nt) = et else { return Err(type_err(format!("arrays cannot be written as {}", type_name(et)))) };
    let range = |k: usize, what: String| value_err(format!("element {k}: {what}"));
    match nt {
        NativeType::Float if arr.itemsize() == 4 => {
            buf.reserve(count * 4);
            for k in 0..count {
                buf.extend_from_slice(&arr.f32_at(at(k)).to_be_bytes());
            }
        }
        NativeType::Float => {
            buf.reserve(count * 4);
            for k in 0..count {
                let f = arr.f64_at(at(k));
                if f.is_finite() && f.abs() > f32::MAX as f64 {
                    return Err(range(k, format!("{f} is out of range for a 32-bit float")));
                }
                buf.extend_from_slice(&(f as f32).to_be_bytes());
            }
        }
        NativeType::Double => {
            buf.reserve(count * 8);
            for k in 0..count {
                buf.extend_from_slice(&arr.f64_at(at(k)).to_be_bytes());
            }
        }
        _ => {
            let bits = match nt {
                NativeType::TinyInt => 8,
                NativeType::SmallInt => 16,
                NativeType::Int => 32,
                _ => 64,
            };
            let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
            buf.reserve(count * bits / 8);
            for k in 0..count {
                let n = arr.i128_at(at(k));
                if n < lo || n > hi {
                    return Err(range(k, format!("{n} is out of range for a {bits}-bit signed integer")));
                }
                buf.extend_from_slice(&n.to_be_bytes()[16 - bits / 8..]);
            }
        }
    }
    Ok(())
}

/// Writes a `vector<et, dims>`: a 1-D array (`row` None) or row `row` of a 2-D array.
pub(crate) fn write_array_vector(buf: &mut Vec<u8>, arr: &ArrayBuf, et: &ColumnType<'_>, dims: usize, row: Option<usize>) -> Result<(), Mismatch> {
    let (shape, strides) = (arr.shape(), arr.strides());
    let (len, off, step) = match (arr.ndim(), row) {
        (1, None) => (shape[0] as usize, 0, strides[0]),
        (2, Some(i)) => (shape[1] as usize, i as isize * strides[0], strides[1]),
        (n, _) => return Err(value_err(format!("expected a 1-D array, got a {n}-D array of shape {}", arr.shape_text()))),
    };
    if len != dims {
        return Err(value_err(format!("vector has {len} elements, the column has {dims}")));
    }
    write_array_elems(buf, arr, et, off, step, dims).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in vector {}", m.msg) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let native_be = cfg!(target_endian = "big");
        assert_eq!(parse_format("f"), (Some(Num::Float), native_be));
        assert_eq!(parse_format("<d"), (Some(Num::Float), false));
        assert_eq!(parse_format(">f"), (Some(Num::Float), true));
        assert_eq!(parse_format("=l"), (Some(Num::Signed), native_be));
        assert_eq!(parse_format("B"), (Some(Num::Unsigned), native_be));
        assert_eq!(parse_format("O").0, None);
        assert_eq!(parse_format("e").0, None);
        assert_eq!(parse_format("T{f:x:}").0, None);
    }
}
