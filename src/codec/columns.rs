//! Columns: `execute_concurrent_with_args` parameters given as columns (a 2-D array of
//! vectors, a dict of arrays and sequences, Arrow record batches or tables), bound a row at
//! a time straight from the arrays' memory, with no Python object per value.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use scylla::frame::response::result::{ColumnSpec, ColumnType};

use super::arrays::{array_elem, array_fits, write_array_elems, write_array_vector, ArrayBuf};
use super::from_arrow::{self, ArrowValues};
use super::mismatch::{py_type_name, type_err, value_err};
use super::types::type_name;
use super::values::{unset_value, write_top, BoundValues, UNSET};

/// Where one bind marker's values come from in a columnar `execute_concurrent_with_args`.
enum ColumnSource {
    /// A numeric array: one element per statement, or one row for a vector column; with a
    /// column index, element `(i, j)` of a 2-D array whose rows are the statements' values.
    Array(Arc<ArrayBuf>, Option<usize>),
    /// Any other sequence: item `i` is statement `i`'s value.
    Seq(Py<PyAny>),
    /// Arrow data (imported through the C data interface): element `i` is statement `i`'s.
    Arrow(ArrowValues),
    /// No column for this marker: left unset.
    Unset,
}

/// Parameters given as columns: one array or sequence per bind marker, row `i` of each
/// making statement `i`'s values. Checked (names, lengths, dtypes, widths) when built.
pub struct Columns {
    sources: Vec<ColumnSource>,
    rows: usize,
}

impl Columns {
    /// Visits the Python sequences it reads (for the cycle collector).
    pub fn traverse(&self, visit: &pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        for source in &self.sources {
            if let ColumnSource::Seq(s) = source {
                visit.call(s)?;
            }
        }
        Ok(())
    }

    /// Columns from a mapping of bind-marker name → values (an unknown name is an error,
    /// a marker without a column is left unset).
    pub fn from_dict(columns: &Bound<'_, PyDict>, specs: &[ColumnSpec<'_>]) -> PyResult<Columns> {
        for key in columns.keys() {
            let known = key.extract::<String>().map(|k| specs.iter().any(|s| s.name() == k)).unwrap_or(false);
            if !known {
                let names: Vec<&str> = specs.iter().map(|s| s.name()).collect();
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "parameter column {} is not a bind marker of the statement (its markers: {})",
                    key.repr()?,
                    names.join(", ")
                )));
            }
        }
        let mut sources = Vec::with_capacity(specs.len());
        for spec in specs {
            sources.push(match columns.get_item(spec.name())? {
                Some(v) => Self::source(&v, spec)?,
                None => ColumnSource::Unset,
            });
        }
        Self::checked(sources, specs)
    }

    /// Arrow data: a record batch or table (its columns matched to the bind markers by
    /// name, as a dict's keys), or for a statement with a single bind marker, one Arrow
    /// array. None when `values` is not Arrow data.
    pub fn from_arrow(values: &Bound<'_, PyAny>, specs: &[ColumnSpec<'_>]) -> PyResult<Option<Columns>> {
        let Some(imported) = from_arrow::import(values)? else {
            return Ok(None);
        };
        if !matches!(imported.data_type(), Some(arrow_schema::DataType::Struct(_))) && specs.len() == 1 {
            return Self::checked(vec![ColumnSource::Arrow(imported)], specs).map(Some);
        }
        let mut fields = imported.into_fields()?;
        for (name, _) in &fields {
            if !specs.iter().any(|s| s.name() == name) {
                let names: Vec<&str> = specs.iter().map(|s| s.name()).collect();
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "Arrow column {name:?} is not a bind marker of the statement (its markers: {})",
                    names.join(", ")
                )));
            }
        }
        let mut sources = Vec::with_capacity(specs.len());
        for spec in specs {
            sources.push(match fields.iter().position(|(n, _)| n == spec.name()) {
                Some(k) => ColumnSource::Arrow(fields.swap_remove(k).1),
                None => ColumnSource::Unset,
            });
        }
        Self::checked(sources, specs).map(Some)
    }

    /// A single array: a 2-D array whose rows are the values of a statement of numeric
    /// markers (as many columns as markers); for a statement with one bind marker, a 2-D
    /// array for a vector marker (a row per statement) or a 1-D array for a number. None
    /// when the array is to be read as a sequence of rows.
    pub fn from_array(values: &Bound<'_, PyAny>, specs: &[ColumnSpec<'_>]) -> PyResult<Option<Columns>> {
        if let Some(arr) = ArrayBuf::get(values)? {
            if arr.ndim() == 2 && arr.shape()[1] as usize == specs.len() && !specs.is_empty() && specs.iter().all(|s| array_elem(s.typ())) {
                for spec in specs {
                    array_fits(&arr, spec.typ()).map_err(|m| m.for_column(spec))?;
                }
                let arr = Arc::new(arr);
                let sources = (0..specs.len()).map(|j| ColumnSource::Array(arr.clone(), Some(j))).collect();
                return Self::checked(sources, specs).map(Some);
            }
        }
        let vector = |t: &ColumnType<'_>| matches!(t, ColumnType::Vector { typ, .. } if array_elem(typ));
        if specs.len() == 1 && (vector(specs[0].typ()) || array_elem(specs[0].typ())) {
            let source = Self::source(values, &specs[0])?;
            return Self::checked(vec![source], specs).map(Some);
        }
        if specs.iter().any(|s| matches!(s.typ(), ColumnType::Vector { .. })) {
            let markers: Vec<String> = specs.iter().map(|s| format!("{} {}", s.name(), type_name(s.typ()))).collect();
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "an array as the parameters binds a row per statement to a statement with a single vector bind \
                 marker; this statement has ({}): pass a dict of columns (e.g. {{\"id\": ids, \"vec\": matrix}}) \
                 or a sequence of rows",
                markers.join(", ")
            )));
        }
        Ok(None)
    }

    fn source(v: &Bound<'_, PyAny>, spec: &ColumnSpec<'_>) -> PyResult<ColumnSource> {
        if let Some(values) = from_arrow::import(v)? {
            return Ok(ColumnSource::Arrow(values));
        }
        let typ = spec.typ();
        let served = match typ {
            ColumnType::Vector { typ: et, .. } => array_elem(et),
            t => array_elem(t),
        };
        if served {
            if let Some(arr) = ArrayBuf::get(v)? {
                let want = if matches!(typ, ColumnType::Vector { .. }) { 2 } else { 1 };
                if arr.ndim() != want {
                    let what = if want == 2 { "a 2-D array (a row per statement)" } else { "a 1-D array (an element per statement)" };
                    return Err(value_err(format!("expected {what}, got a {}-D array of shape {}", arr.ndim(), arr.shape_text())).for_column(spec));
                }
                let et = match typ {
                    ColumnType::Vector { typ: et, dimensions } => {
                        if arr.shape()[1] as usize != *dimensions as usize {
                            return Err(value_err(format!("array rows have {} elements, the column has {dimensions}", arr.shape()[1])).for_column(spec));
                        }
                        et.as_ref()
                    }
                    t => t,
                };
                if arr.num().is_some() || matches!(typ, ColumnType::Vector { .. }) {
                    array_fits(&arr, et).map_err(|m| m.for_column(spec))?;
                    return Ok(ColumnSource::Array(Arc::new(arr), None));
                }
            }
        }
        if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() || v.len().is_err() {
            return Err(type_err(format!("expected a sequence with a value per statement, got {}", py_type_name(v))).for_column(spec));
        }
        Ok(ColumnSource::Seq(v.clone().unbind()))
    }

    fn checked(sources: Vec<ColumnSource>, specs: &[ColumnSpec<'_>]) -> PyResult<Columns> {
        let mut rows: Option<(usize, &str)> = None;
        Python::attach(|py| {
            for (src, spec) in sources.iter().zip(specs) {
                let n = match src {
                    ColumnSource::Array(a, _) => a.shape()[0] as usize,
                    ColumnSource::Seq(s) => s.bind(py).len()?,
                    ColumnSource::Arrow(a) => a.len(),
                    ColumnSource::Unset => continue,
                };
                match rows {
                    None => rows = Some((n, spec.name())),
                    Some((m, first)) if m != n => {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "parameter columns differ in length: {first:?} has {m} values, {:?} has {n}",
                            spec.name()
                        )))
                    }
                    _ => {}
                }
            }
            Ok(())
        })?;
        Ok(Columns { sources, rows: rows.map(|r| r.0).unwrap_or(0) })
    }

    /// How many statements the columns make.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Statement `row`'s values.
    pub fn bind(&self, py: Python<'_>, specs: &[ColumnSpec<'_>], row: usize) -> PyResult<BoundValues> {
        let mut out = BoundValues { buf: Vec::with_capacity(64), count: specs.len() };
        let unset = unset_value(py)?;
        for (src, spec) in self.sources.iter().zip(specs) {
            match src {
                ColumnSource::Unset => out.buf.extend_from_slice(&UNSET.to_be_bytes()),
                ColumnSource::Seq(s) => write_top(&mut out.buf, &s.bind(py).get_item(row)?, spec, unset)?,
                ColumnSource::Arrow(a) => a.write_cell(&mut out.buf, row, spec.typ()).map_err(|m| m.for_column(spec))?,
                ColumnSource::Array(arr, col) => {
                    let start = out.buf.len();
                    out.buf.extend_from_slice(&[0u8; 4]);
                    let at = row as isize * arr.strides()[0];
                    let res = match (spec.typ(), col) {
                        (ColumnType::Vector { typ: et, dimensions }, None) => write_array_vector(&mut out.buf, arr, et, *dimensions as usize, Some(row)),
                        (t, None) => write_array_elems(&mut out.buf, arr, t, at, 0, 1),
                        (t, Some(j)) => write_array_elems(&mut out.buf, arr, t, at + *j as isize * arr.strides()[1], 0, 1),
                    };
                    res.map_err(|m| m.for_column(spec))?;
                    let len = (out.buf.len() - start - 4) as i32;
                    out.buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
                }
            }
        }
        Ok(out)
    }
}
