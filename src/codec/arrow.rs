//! Arrow: a page's rows decoded column by column straight into Arrow buffers (asked for by
//! `turbocql.query.arrow_factory`), with no Python object per value for numbers, booleans,
//! text, blobs, timestamps, dates, times, uuids, inets, durations, numeric vectors, lists,
//! sets, maps, tuples and UDTs.
//!
//! Each column becomes an [`ArrowColumn`]: its kind, length, validity bitmap and buffers in
//! Arrow's layout (little-endian values, `i32` offsets, bitmaps least significant bit
//! first), and its children for nested types, each buffer copied once into a `bytes`.
//! `turbocql._query.arrow` wraps them as pyarrow arrays without copying again; nothing here
//! imports pyarrow, which stays optional. Types
//! with no Arrow form of their own (decimal, varint, a vector of text, custom types) are
//! gathered as the usual Python values, which pyarrow converts.

use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

use super::fill;
use super::rows::{column_err, column_to_py, decode_err, inet_text, read_cell, read_err, read_len, read_signed_vint, start_page, RawPage, RESERVE_ROWS};
use super::types::{empty_reads_as_null, NANOS_PER_DAY};

/// A bitmap (validity, or boolean values), least significant bit first.
#[derive(Default)]
struct Bitmap {
    bytes: Vec<u8>,
    len: usize,
    zeros: usize,
}

impl Bitmap {
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit {
            *self.bytes.last_mut().unwrap() |= 1 << (self.len % 8);
        } else {
            self.zeros += 1;
        }
        self.len += 1;
    }

    /// Appends `n` zero bits.
    fn push_zeros(&mut self, n: usize) -> PyResult<()> {
        let len = self.len.checked_add(n).ok_or_else(|| PyMemoryError::new_err("a bitmap past usize::MAX bits"))?;
        let bytes = len.div_ceil(8);
        let more = bytes - self.bytes.len();
        fill::reserve(&mut self.bytes, more)?;
        self.bytes.resize(bytes, 0);
        self.len = len;
        self.zeros += n;
        Ok(())
    }
}

/// How a fixed-width value is turned from CQL's bytes into Arrow's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fixed {
    /// A big-endian number of this many bytes, reversed.
    Number,
    /// A CQL date (days + 2^31, unsigned) as Arrow's `date32` (signed days).
    Date,
    /// A CQL time (nanoseconds since midnight, 8 bytes) as Arrow's `time64[ns]`, which holds
    /// only a time within one day.
    Time,
    /// 16 bytes as they are (a uuid).
    Raw,
    /// Three vints (months, days, nanoseconds) as Arrow's `month_day_nano_interval`.
    Duration,
}

enum Values {
    Fixed {
        how: Fixed,
        size: usize,
        data: Vec<u8>,
    },
    Bool(Bitmap),
    /// utf8 (text, ascii, inet as text) or binary (blob): offsets and bytes.
    Var {
        text: bool,
        inet: bool,
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
    /// list or set: offsets into the child.
    List {
        offsets: Vec<i32>,
        child: Box<Column>,
    },
    Map {
        offsets: Vec<i32>,
        keys: Box<Column>,
        values: Box<Column>,
    },
    /// A vector of fixed-size numbers: `dim` child values a row.
    Vector {
        dim: usize,
        child: Box<Column>,
    },
    /// A tuple or a UDT: one child a field.
    Struct {
        names: Vec<String>,
        fields: Vec<Column>,
    },
    Objects(Vec<Py<PyAny>>),
}

/// What a field of a null struct is charged at the least (`Column::null_width`): filling a
/// field takes about as long as writing this many bytes.
const STRUCT_FIELD_WIDTH: usize = 64;

/// One column (or nested child) being gathered.
struct Column {
    kind: &'static str,
    typ: ColumnType<'static>,
    validity: Bitmap,
    values: Values,
}

/// Arrow's kind and width of a fixed-width CQL type.
fn fixed_kind(t: &ColumnType<'_>) -> Option<(&'static str, Fixed, usize)> {
    let ColumnType::Native(nt) = t else { return None };
    Some(match nt {
        NativeType::TinyInt => ("int8", Fixed::Number, 1),
        NativeType::SmallInt => ("int16", Fixed::Number, 2),
        NativeType::Int => ("int32", Fixed::Number, 4),
        NativeType::BigInt | NativeType::Counter => ("int64", Fixed::Number, 8),
        NativeType::Float => ("float32", Fixed::Number, 4),
        NativeType::Double => ("float64", Fixed::Number, 8),
        NativeType::Timestamp => ("timestamp_ms", Fixed::Number, 8),
        NativeType::Time => ("time64_ns", Fixed::Time, 8),
        NativeType::Date => ("date32", Fixed::Date, 4),
        NativeType::Uuid | NativeType::Timeuuid => ("uuid", Fixed::Raw, 16),
        NativeType::Duration => ("duration", Fixed::Duration, 16),
        _ => return None,
    })
}

impl Column {
    fn new(typ: &ColumnType<'_>, reserve: usize) -> Column {
        let typ = typ.clone().into_owned();
        let (kind, values) = match &typ {
            t if fixed_kind(t).is_some() => {
                let (kind, how, size) = fixed_kind(t).unwrap();
                (kind, Values::Fixed { how, size, data: Vec::with_capacity(reserve * size) })
            }
            ColumnType::Native(NativeType::Boolean) => ("bool", Values::Bool(Bitmap::default())),
            ColumnType::Native(nt @ (NativeType::Text | NativeType::Ascii | NativeType::Blob | NativeType::Inet)) => {
                let text = !matches!(nt, NativeType::Blob);
                let offsets = Vec::with_capacity(reserve + 1);
                (if text { "utf8" } else { "binary" }, Values::Var { text, inet: matches!(nt, NativeType::Inet), offsets, data: Vec::new() })
            }
            ColumnType::Collection { typ: CollectionType::List(et) | CollectionType::Set(et), .. } => {
                let kind = if matches!(&typ, ColumnType::Collection { typ: CollectionType::Set(_), .. }) { "set" } else { "list" };
                (kind, Values::List { offsets: Vec::with_capacity(reserve + 1), child: Box::new(Column::new(et, 0)) })
            }
            ColumnType::Collection { typ: CollectionType::Map(kt, vt), .. } => {
                ("map", Values::Map { offsets: Vec::with_capacity(reserve + 1), keys: Box::new(Column::new(kt, 0)), values: Box::new(Column::new(vt, 0)) })
            }
            ColumnType::Vector { typ: et, dimensions } if matches!(fixed_kind(et), Some((_, Fixed::Number, _))) => {
                ("vector", Values::Vector { dim: *dimensions as usize, child: Box::new(Column::new(et, 0)) })
            }
            ColumnType::Tuple(types) => (
                "struct",
                Values::Struct { names: (0..types.len()).map(|i| i.to_string()).collect(), fields: types.iter().map(|t| Column::new(t, 0)).collect() },
            ),
            ColumnType::UserDefinedType { definition, .. } => (
                "struct",
                Values::Struct {
                    names: definition.field_types.iter().map(|(n, _)| n.to_string()).collect(),
                    fields: definition.field_types.iter().map(|(_, t)| Column::new(t, 0)).collect(),
                },
            ),
            _ => ("objects", Values::Objects(Vec::with_capacity(reserve))),
        };
        let mut col = Column { kind, typ, validity: Bitmap::default(), values };
        if let Values::Var { offsets, .. } | Values::List { offsets, .. } | Values::Map { offsets, .. } = &mut col.values {
            offsets.push(0);
        }
        col
    }

    /// Bytes one null of this column fills in (saturating: a hostile dimension).
    fn null_width(&self) -> usize {
        match &self.values {
            Values::Fixed { size, .. } => *size,
            Values::Bool(_) => 1,
            Values::Var { .. } | Values::List { .. } | Values::Map { .. } => 4,
            Values::Vector { dim, child } => dim.saturating_mul(child.null_width()),
            // Each field is filled one by one (a vector's slots at once): a field counts as at
            // least STRUCT_FIELD_WIDTH, so a null struct of many fields is charged its time.
            Values::Struct { fields, .. } => fields.iter().fold(0usize, |w, f| w.saturating_add(f.null_width().max(STRUCT_FIELD_WIDTH))),
            Values::Objects(_) => 8,
        }
    }

    /// Appends a null, charged to the page's fill budget (`super::fill`) first.
    fn push_null(&mut self, py: Python<'_>) -> PyResult<()> {
        fill::charge(self.null_width()).map_err(|e| decode_err(&self.typ, &e))?;
        self.fill_nulls(py, 1)
    }

    /// Appends `n` nulls (a null vector's `dim` child slots at once).
    fn fill_nulls(&mut self, py: Python<'_>, n: usize) -> PyResult<()> {
        self.validity.push_zeros(n)?;
        match &mut self.values {
            Values::Fixed { size, data, .. } => {
                let more = n.saturating_mul(*size);
                fill::reserve(data, more)?;
                data.resize(data.len() + more, 0);
            }
            Values::Bool(bits) => bits.push_zeros(n)?,
            Values::Var { offsets, .. } | Values::List { offsets, .. } | Values::Map { offsets, .. } => {
                let last = *offsets.last().unwrap();
                fill::reserve(offsets, n)?;
                offsets.resize(offsets.len() + n, last);
            }
            Values::Vector { dim, child } => child.fill_nulls(py, n.saturating_mul(*dim))?,
            Values::Struct { fields, .. } => {
                for f in fields.iter_mut() {
                    f.fill_nulls(py, n)?;
                }
            }
            Values::Objects(v) => {
                fill::reserve(v, n)?;
                v.extend((0..n).map(|_| py.None()));
            }
        }
        Ok(())
    }

    /// Appends one cell (None: null).
    fn push(&mut self, py: Python<'_>, cell: Option<&[u8]>) -> PyResult<()> {
        let Some(b) = cell else {
            return self.push_null(py);
        };
        // An empty value of a type with no empty form reads as null, as in the classic
        // driver, at any depth (`super::types::empty_reads_as_null`).
        if b.is_empty() && empty_reads_as_null(&self.typ) {
            return self.push_null(py);
        }
        let typ = &self.typ;
        match &mut self.values {
            Values::Fixed { how, size, data } => match how {
                Fixed::Duration => {
                    let mut r = b;
                    let (Some(months), Some(days), Some(nanos)) = (read_signed_vint(&mut r), read_signed_vint(&mut r), read_signed_vint(&mut r)) else {
                        return Err(decode_err(typ, "truncated duration"));
                    };
                    data.extend_from_slice(&(months as i32).to_le_bytes());
                    data.extend_from_slice(&(days as i32).to_le_bytes());
                    data.extend_from_slice(&nanos.to_le_bytes());
                }
                _ if b.len() != *size => return Err(decode_err(typ, &format!("expected {size} bytes, got {}", b.len()))),
                Fixed::Number => data.extend(b.iter().rev()),
                Fixed::Time => {
                    // A node never sends one outside the day; a value that is would be an
                    // invalid Arrow array (found by the columns fuzz target), and the row path
                    // refuses it too (`turbocql.util.Time`).
                    let ns = i64::from_be_bytes(b.try_into().unwrap());
                    if !(0..NANOS_PER_DAY).contains(&ns) {
                        return Err(decode_err(typ, &format!("a time of {ns} ns, not within one day")));
                    }
                    data.extend_from_slice(&ns.to_le_bytes());
                }
                Fixed::Date => {
                    let days = u32::from_be_bytes(b.try_into().unwrap()).wrapping_sub(1 << 31) as i32;
                    data.extend_from_slice(&days.to_le_bytes());
                }
                Fixed::Raw => data.extend_from_slice(b),
            },
            Values::Bool(bits) => {
                if b.len() != 1 {
                    return Err(decode_err(typ, &format!("expected 1 byte, got {}", b.len())));
                }
                bits.push(b[0] != 0);
            }
            Values::Var { text, inet, offsets, data } => {
                if *inet {
                    let ip = match b.len() {
                        4 => std::net::IpAddr::from(<[u8; 4]>::try_from(b).unwrap()),
                        16 => std::net::IpAddr::from(<[u8; 16]>::try_from(b).unwrap()),
                        n => return Err(decode_err(typ, &format!("an address of {n} bytes"))),
                    };
                    data.extend_from_slice(inet_text(&ip).as_bytes());
                } else {
                    if *text {
                        std::str::from_utf8(b).map_err(|e| decode_err(typ, &e.to_string()))?;
                    }
                    data.extend_from_slice(b);
                }
                offsets.push(offset(data.len(), typ)?);
            }
            Values::List { offsets, child } => {
                let mut r = b;
                let n = count(&mut r, typ)?;
                for _ in 0..n {
                    child.push(py, read_cell(&mut r, typ)?)?;
                }
                offsets.push(offset(child.validity.len, typ)?);
            }
            Values::Map { offsets, keys, values } => {
                let mut r = b;
                let n = count(&mut r, typ)?;
                for _ in 0..n {
                    // Arrow's map keys are never null (pyarrow aborts the process on one); a
                    // node never sends one, so only a broken server reaches this. An empty key
                    // of a type with no empty form reads as null too (found by the columns
                    // fuzz target: an int key of 0 bytes).
                    let key = read_cell(&mut r, typ)?.ok_or_else(|| decode_err(typ, "a map key is null"))?;
                    let nulls = keys.validity.zeros;
                    keys.push(py, Some(key))?;
                    if keys.validity.zeros != nulls {
                        return Err(decode_err(typ, "a map key is empty (a null in Arrow, which allows no null key)"));
                    }
                    values.push(py, read_cell(&mut r, typ)?)?;
                }
                offsets.push(offset(keys.validity.len, typ)?);
            }
            Values::Vector { dim, child } => {
                let size = match &child.values {
                    Values::Fixed { size, .. } => *size,
                    _ => unreachable!("a vector of fixed-size numbers"),
                };
                if b.len() != *dim * size {
                    return Err(decode_err(typ, &format!("expected {} bytes, got {}", *dim * size, b.len())));
                }
                for v in b.chunks_exact(size) {
                    child.push(py, Some(v))?;
                }
            }
            Values::Struct { fields, .. } => {
                // A tuple or UDT value may end before its last fields: those are null.
                let mut r = b;
                for f in fields.iter_mut() {
                    let cell = if r.is_empty() { None } else { read_cell(&mut r, typ)? };
                    f.push(py, cell)?;
                }
            }
            Values::Objects(v) => v.push(column_to_py(py, Some(b), typ)?.unbind()),
        }
        self.validity.push(true);
        Ok(())
    }

    fn finish(self, py: Python<'_>) -> PyResult<ArrowColumn> {
        let length = self.validity.len;
        let null_count = self.validity.zeros;
        let validity = (null_count > 0).then(|| PyBytes::new(py, &self.validity.bytes).unbind());
        let bytes = |b: &[u8]| PyBytes::new(py, b).unbind();
        let mut col =
            ArrowColumn { kind: self.kind, length, null_count, validity, buffers: Vec::new(), children: Vec::new(), names: Vec::new(), size: 0, objects: None };
        match self.values {
            Values::Fixed { data, .. } => col.buffers.push(bytes(&data)),
            Values::Bool(bits) => col.buffers.push(bytes(&bits.bytes)),
            Values::Var { offsets, data, .. } => col.buffers.extend([bytes(offsets_bytes(&offsets)), bytes(&data)]),
            Values::List { offsets, child } => {
                col.buffers.push(bytes(offsets_bytes(&offsets)));
                col.children.push(Py::new(py, child.finish(py)?)?);
            }
            Values::Map { offsets, keys, values } => {
                col.buffers.push(bytes(offsets_bytes(&offsets)));
                col.children.push(Py::new(py, keys.finish(py)?)?);
                col.children.push(Py::new(py, values.finish(py)?)?);
            }
            Values::Vector { dim, child } => {
                col.size = dim;
                col.children.push(Py::new(py, child.finish(py)?)?);
            }
            Values::Struct { names, fields } => {
                col.names = names;
                for f in fields {
                    col.children.push(Py::new(py, f.finish(py)?)?);
                }
            }
            Values::Objects(v) => col.objects = Some(PyList::new(py, v)?.unbind()),
        }
        Ok(col)
    }
}

// Arrow's buffers are little-endian: so is every platform the wheels are built for (x86_64,
// aarch64); a big-endian one would need the offsets swapped.
const _: () = assert!(cfg!(target_endian = "little"), "the Arrow buffers are written in the platform's byte order");

fn offsets_bytes(offsets: &[i32]) -> &[u8] {
    // SAFETY: i32 has no padding and any byte is a valid u8; the slice covers exactly the
    // offsets' memory (Arrow's offsets are little-endian, as this platform's are).
    unsafe { std::slice::from_raw_parts(offsets.as_ptr().cast::<u8>(), std::mem::size_of_val(offsets)) }
}

fn offset(n: usize, typ: &ColumnType<'_>) -> PyResult<i32> {
    i32::try_from(n).map_err(|_| decode_err(typ, "more than 2 GiB of values in one page"))
}

fn count(r: &mut &[u8], typ: &ColumnType<'_>) -> PyResult<usize> {
    let n = read_len(r, typ)?;
    usize::try_from(n).map_err(|_| decode_err(typ, &format!("negative element count {n}")))
}

/// One column of a page in Arrow's layout (see the module doc), read by `turbocql._query.arrow`.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct ArrowColumn {
    /// int8, int16, int32, int64, float32, float64, bool, timestamp_ms, time64_ns, date32,
    /// uuid, duration, utf8, binary, list, set, map, vector, struct or objects.
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    length: usize,
    #[pyo3(get)]
    null_count: usize,
    /// The validity bitmap, None when no value is null.
    #[pyo3(get)]
    validity: Option<Py<PyBytes>>,
    /// The values (fixed-width kinds, bool), offsets and bytes (utf8, binary), offsets
    /// (list, set, map); none for vector, struct and objects.
    #[pyo3(get)]
    buffers: Vec<Py<PyBytes>>,
    /// The element (list, set, vector), key and value (map), or fields (struct).
    #[pyo3(get)]
    children: Vec<Py<ArrowColumn>>,
    /// A struct's field names (a tuple's are "0", "1", ...).
    #[pyo3(get)]
    names: Vec<String>,
    /// A vector's dimension.
    #[pyo3(get)]
    size: usize,
    /// The Python values of an `objects` column.
    #[pyo3(get)]
    objects: Option<Py<PyList>>,
}

#[pymethods]
impl ArrowColumn {
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        for c in &self.children {
            visit.call(c)?;
        }
        if let Some(o) = &self.objects {
            visit.call(o)?;
        }
        Ok(())
    }
}

/// All rows of a page as Arrow string columns, each value written as CQL text
/// (`super::to_text`), one per result column, in order.
pub fn page_text_columns(py: Python<'_>, rows: &impl RawPage) -> PyResult<Vec<ArrowColumn>> {
    start_page(py, rows)?;
    let specs = rows.specs();
    let reserve = rows.declared_rows().min(RESERVE_ROWS);
    let text = ColumnType::Native(NativeType::Text);
    let mut cols: Vec<Column> = specs.iter().map(|_| Column::new(&text, reserve)).collect();
    let mut s = String::new();
    let iter = rows.row_iter().map_err(|e| read_err(py, "rows", e))?;
    for row in iter {
        let row = row.map_err(|e| read_err(py, "a row", e))?;
        for (col, cell) in cols.iter_mut().zip(row) {
            let cell = cell.map_err(|e| read_err(py, "a column", e))?;
            match cell.slice.map(|b| b.as_slice()) {
                // As in the classic driver, an empty value of a type with no empty form is null.
                Some(b) if !b.is_empty() || !empty_reads_as_null(cell.spec.typ()) => {
                    s.clear();
                    super::to_text::write_text(&mut s, b, cell.spec.typ(), false).map_err(|e| column_err(py, cell.spec, decode_err(cell.spec.typ(), &e)))?;
                    col.push(py, Some(s.as_bytes())).map_err(|e| column_err(py, cell.spec, e))?;
                }
                _ => col.push_null(py).map_err(|e| column_err(py, cell.spec, e))?,
            }
        }
    }
    cols.into_iter().map(|c| c.finish(py)).collect()
}

/// All rows of a page as Arrow columns, one per result column, in order.
pub fn page_arrow_columns(py: Python<'_>, rows: &impl RawPage) -> PyResult<Vec<ArrowColumn>> {
    start_page(py, rows)?;
    let specs = rows.specs();
    // The row count is the server's word: buffers grow with the rows actually read.
    let reserve = rows.declared_rows().min(RESERVE_ROWS);
    let mut cols: Vec<Column> = specs.iter().map(|s| Column::new(s.typ(), reserve)).collect();
    let iter = rows.row_iter().map_err(|e| read_err(py, "rows", e))?;
    for row in iter {
        let row = row.map_err(|e| read_err(py, "a row", e))?;
        for (col, cell) in cols.iter_mut().zip(row) {
            let cell = cell.map_err(|e| read_err(py, "a column", e))?;
            col.push(py, cell.slice.map(|s| s.as_slice())).map_err(|e| column_err(py, cell.spec, e))?;
        }
    }
    cols.into_iter().map(|c| c.finish(py)).collect()
}

#[cfg(test)]
mod tests {
    //! Pure Rust, run under Miri too (scripts/miri.sh).
    use super::offsets_bytes;

    #[test]
    fn offsets_are_their_little_endian_bytes() {
        let offsets = [0i32, 1, 256, -1];
        assert_eq!(offsets_bytes(&offsets), &[0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 255, 255, 255, 255]);
        assert!(offsets_bytes(&[]).is_empty());
    }
}
