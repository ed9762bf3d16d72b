//! The columnar (numpy) mode: a page as one dict of numpy arrays, column name → array
//! (asked for by `turbocql.query.numpy_factory`). Fixed-size numbers (and vectors of them)
//! are gathered into native-endian buffers for a numpy dtype, with a mask where a value is
//! null; any other column is an object array of the values `super::rows` makes.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scylla::frame::response::result::{ColumnType, NativeType};

use super::arrays::numpy_array;
use super::rows::{column_err, column_to_py, decode_err, read_err, RawPage, RESERVE_BYTES, RESERVE_ROWS};
use crate::pyrefs;

/// How a column is gathered in the columnar (numpy) mode.
enum ColumnBuf<'py> {
    /// Fixed-size numbers: native-endian bytes for a numpy `dtype`, `width` values a row
    /// (a vector's dimension, else 1), and a null flag per value.
    Numbers { dtype: &'static str, size: usize, width: Option<usize>, data: Vec<u8>, mask: Vec<u8>, nulls: bool },
    /// Anything else: the usual Python values, in an object array.
    Objects(Vec<Bound<'py, PyAny>>),
}

/// numpy dtype and size of a fixed-size number type, if it is one.
fn number_dtype(t: &ColumnType<'_>) -> Option<(&'static str, usize)> {
    Some(match t {
        ColumnType::Native(nt) => match nt {
            NativeType::Float => ("<f4", 4),
            NativeType::Double => ("<f8", 8),
            NativeType::Int => ("<i4", 4),
            NativeType::BigInt | NativeType::Counter => ("<i8", 8),
            NativeType::SmallInt => ("<i2", 2),
            NativeType::TinyInt => ("i1", 1),
            NativeType::Boolean => ("?", 1),
            NativeType::Timestamp => ("<M8[ms]", 8),
            _ => return None,
        },
        _ => return None,
    })
}

impl<'py> ColumnBuf<'py> {
    fn new(typ: &ColumnType<'_>, rows: usize) -> Self {
        let (dtype, size, width) = match typ {
            ColumnType::Vector { typ: et, dimensions } if !matches!(et.as_ref(), ColumnType::Native(NativeType::Boolean | NativeType::Timestamp)) => {
                match number_dtype(et) {
                    Some((d, s)) => (d, s, Some(*dimensions as usize)),
                    None => return ColumnBuf::Objects(Vec::with_capacity(rows)),
                }
            }
            t => match number_dtype(t) {
                Some((d, s)) => (d, s, None),
                None => return ColumnBuf::Objects(Vec::with_capacity(rows)),
            },
        };
        // At most RESERVE_BYTES ahead, whatever the row count says (it is the server's word).
        let n = rows.saturating_mul(width.unwrap_or(1)).min(RESERVE_BYTES / size);
        ColumnBuf::Numbers { dtype, size, width, data: Vec::with_capacity(n * size), mask: Vec::with_capacity(n), nulls: false }
    }

    fn push(&mut self, py: Python<'py>, cell: Option<&[u8]>, typ: &ColumnType<'_>) -> PyResult<()> {
        match self {
            ColumnBuf::Objects(v) => v.push(column_to_py(py, cell, typ)?),
            ColumnBuf::Numbers { size, width, data, mask, nulls, .. } => {
                let count = width.unwrap_or(1);
                match cell.filter(|b| !b.is_empty()) {
                    None => {
                        // A null vector is `dimension` masked zeros: the metadata's word.
                        let bytes = count.saturating_mul(*size);
                        super::fill::charge(bytes).map_err(|e| decode_err(typ, &e))?;
                        super::fill::reserve(data, bytes)?;
                        super::fill::reserve(mask, count)?;
                        *nulls = true;
                        data.resize(data.len() + bytes, 0);
                        mask.resize(mask.len() + count, 1);
                    }
                    Some(b) => {
                        if b.len() != count * *size {
                            return Err(decode_err(typ, &format!("expected {} bytes, got {}", count * *size, b.len())));
                        }
                        if *size == 1 {
                            data.extend(b.iter().map(|x| if typ_is_bool(typ) { (*x != 0) as u8 } else { *x }));
                        } else {
                            for chunk in b.chunks_exact(*size) {
                                data.extend(chunk.iter().rev());
                            }
                        }
                        mask.resize(mask.len() + count, 0);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self, np: &Bound<'py, PyModule>, rows: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            ColumnBuf::Numbers { dtype, width, data, mask, nulls, .. } => numpy_array(np, &data, dtype, rows, width, nulls.then_some(mask.as_slice())),
            ColumnBuf::Objects(v) => {
                let arr = np.call_method1("empty", (rows, "O"))?;
                for (i, x) in v.into_iter().enumerate() {
                    arr.set_item(i, x)?;
                }
                Ok(arr)
            }
        }
    }
}

fn typ_is_bool(t: &ColumnType<'_>) -> bool {
    matches!(t, ColumnType::Native(NativeType::Boolean))
}

/// All rows of a page as columns: a dict of column name → numpy array. Numbers (and
/// timestamps, as `datetime64[ms]`) become arrays of their dtype, `vector<float, n>` (and
/// the other numeric vectors) a 2-D array with a row per row; a column with nulls is a
/// `numpy.ma.MaskedArray`. Other types are object arrays of the usual Python values.
pub fn page_columns<'py>(py: Python<'py>, rows: &impl RawPage) -> PyResult<Bound<'py, PyDict>> {
    let np = pyrefs::numpy(py)?;
    super::rows::start_page(py, rows)?;
    let specs = rows.specs();
    let n = rows.declared_rows();
    // The row count is the server's word: buffers start at most this large and grow with
    // the rows actually read (a lying count fails when the rows run out, below).
    let reserve = n.min(RESERVE_ROWS);
    let mut cols: Vec<ColumnBuf<'py>> = specs.iter().map(|s| ColumnBuf::new(s.typ(), reserve)).collect();
    let iter = rows.row_iter().map_err(|e| read_err(py, "rows", e))?;
    for row in iter {
        let row = row.map_err(|e| read_err(py, "a row", e))?;
        for (buf, col) in cols.iter_mut().zip(row) {
            let col = col.map_err(|e| read_err(py, "a column", e))?;
            buf.push(py, col.slice.map(|s| s.as_slice()), col.spec.typ()).map_err(|e| column_err(py, col.spec, e))?;
        }
    }
    let out = PyDict::new(py);
    for (spec, buf) in specs.iter().zip(cols) {
        out.set_item(spec.name(), buf.finish(np, n)?)?;
    }
    Ok(out)
}
