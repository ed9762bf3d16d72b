//! Rows: CQL wire bytes → Python objects, a page at a time under one GIL acquisition.
//!
//! Each row becomes a tuple of Python values, or at once a named tuple of the default row
//! factory (`super::named_rows`, the class cached per column list rather than built per
//! response). `super::columnar` reads a page into numpy arrays (`numpy_factory`) and
//! `super::arrow` into Arrow buffers, both with the helpers here.

use std::sync::atomic::{AtomicU32, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDateTime, PyDict, PyList, PyString, PyTuple};
use scylla::deserialize::result::TypedRowIterator;
use scylla::deserialize::row::ColumnIterator;
use scylla::frame::response::result::{CollectionType, ColumnSpec, ColumnType, NativeType};
use scylla::response::query_result::QueryRowsResult;

use super::types::{empty_reads_as_null, type_name, type_name_for_message};
use crate::errors;
use crate::pyrefs;
use crate::pyrefs::Exc;

/// An address as the classic driver prints it (`socket.inet_ntop`): as Rust does, except
/// that an IPv4-compatible IPv6 address (six zero groups, then a non-zero seventh) keeps
/// its dotted tail (`::1.2.3.4`, where Rust writes `::102:304`).
pub(crate) fn inet_text(ip: &std::net::IpAddr) -> String {
    if let std::net::IpAddr::V6(v6) = ip {
        let g = v6.segments();
        if g[..6].iter().all(|w| *w == 0) && g[6] != 0 {
            let [a, b, c, d] = v6.octets()[12..] else { unreachable!() };
            return format!("::{a}.{b}.{c}.{d}");
        }
    }
    ip.to_string()
}

/// A page of rows as the codec reads it: the result columns, the row count the server
/// declared (its word only: nothing is reserved by it beyond [`RESERVE_ROWS`]), and the rows,
/// each read cell by cell. The engine's pages are the crate's `QueryRowsResult`; the fuzz
/// targets (`fuzz/`) make theirs from bytes with scylla-cql, as the crate does.
pub trait RawPage {
    fn specs(&self) -> &[ColumnSpec<'_>];
    fn declared_rows(&self) -> usize;
    /// The rows, or why they cannot be read as columns.
    fn row_iter(&self) -> Result<TypedRowIterator<'_, '_, ColumnIterator<'_, '_>>, String>;
}

impl RawPage for QueryRowsResult {
    fn specs(&self) -> &[ColumnSpec<'_>] {
        self.column_specs().as_slice()
    }
    fn declared_rows(&self) -> usize {
        self.rows_num()
    }
    fn row_iter(&self) -> Result<TypedRowIterator<'_, '_, ColumnIterator<'_, '_>>, String> {
        self.rows::<ColumnIterator>().map_err(|e| e.to_string())
    }
}

impl RawPage for scylla_cql::frame::response::result::DeserializedMetadataAndRawRows {
    fn specs(&self) -> &[ColumnSpec<'_>] {
        self.metadata().col_specs()
    }
    fn declared_rows(&self) -> usize {
        self.rows_count()
    }
    fn row_iter(&self) -> Result<TypedRowIterator<'_, '_, ColumnIterator<'_, '_>>, String> {
        self.rows_iter::<ColumnIterator>().map_err(|e| e.to_string())
    }
}

/// Starts a page's decoding: its fill budget (`super::fill`), charged first for rows with no
/// column, which take no byte (no result has them; a server that declares 2^31 of them would
/// have the page build 2^31 empty rows).
pub(crate) fn start_page(py: Python<'_>, rows: &impl RawPage) -> PyResult<()> {
    super::fill::start();
    if rows.specs().is_empty() {
        super::fill::charge(rows.declared_rows().saturating_mul(EMPTY_ROW_WIDTH)).map_err(|e| read_err(py, "rows with no column", e))?;
    }
    Ok(())
}

/// What a row with no column is charged (a tuple and its place in the page's list).
const EMPTY_ROW_WIDTH: usize = 64;

/// Rows reserved ahead in the columnar mode, whatever count the server claims.
pub(crate) const RESERVE_ROWS: usize = 1 << 16;
/// Bytes of numbers reserved ahead per column in the columnar mode.
pub(crate) const RESERVE_BYTES: usize = 4 << 20;

/// A result whose rows cannot be read (a body shorter than its counts say): the classic
/// driver's `DriverException`.
pub(crate) fn read_err(py: Python<'_>, what: &str, e: impl std::fmt::Display) -> PyErr {
    errors::make(py, Exc::DriverException, (format!("Failed decoding result: cannot read {what}: {e}"),), None)
}

/// The fields a tuple or UDT value left out (it ended before them), as None: charged to the
/// page's fill budget first (`super::fill`), their count being the metadata's word.
fn fill_missing<'py>(py: Python<'py>, typ: &ColumnType<'_>, items: &mut Vec<Bound<'py, PyAny>>, fields: usize) -> PyResult<()> {
    let missing = fields - items.len();
    super::fill::charge(missing.saturating_mul(std::mem::size_of::<usize>())).map_err(|e| decode_err(typ, &e))?;
    items.extend((0..missing).map(|_| py.None().into_bound(py)));
    Ok(())
}

/// A value of a result column that does not decode, as the classic driver words it
/// (`DriverException`); other errors (a failing row factory) pass through.
pub(crate) fn column_err(py: Python<'_>, spec: &ColumnSpec<'_>, e: PyErr) -> PyErr {
    if !e.is_instance_of::<PyValueError>(py) {
        return e;
    }
    let msg = format!("Failed decoding result column \"{}\" of type {}: {}", spec.name(), type_name_for_message(spec.typ()), e.value(py));
    errors::make(py, Exc::DriverException, (msg,), None)
}

pub(crate) fn decode_err(typ: &ColumnType<'_>, what: &str) -> PyErr {
    PyValueError::new_err(format!("cannot decode a value of CQL type {}: {what}", type_name_for_message(typ)))
}

fn fixed<const N: usize>(b: &[u8], typ: &ColumnType<'_>) -> PyResult<[u8; N]> {
    b.try_into().map_err(|_| decode_err(typ, &format!("expected {N} bytes, got {}", b.len())))
}

/// (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub(crate) fn read_len(b: &mut &[u8], typ: &ColumnType<'_>) -> PyResult<i32> {
    if b.len() < 4 {
        return Err(decode_err(typ, "truncated length"));
    }
    let n = i32::from_be_bytes(b[..4].try_into().unwrap());
    *b = &b[4..];
    Ok(n)
}

pub(crate) fn read_cell<'b>(b: &mut &'b [u8], typ: &ColumnType<'_>) -> PyResult<Option<&'b [u8]>> {
    let n = read_len(b, typ)?;
    if n < 0 {
        return Ok(None);
    }
    let n = n as usize;
    if b.len() < n {
        return Err(decode_err(typ, "truncated value"));
    }
    let (v, rest) = b.split_at(n);
    *b = rest;
    Ok(Some(v))
}

fn read_unsigned_vint(b: &mut &[u8]) -> Option<u64> {
    let first = *b.first()?;
    let extra = first.leading_ones() as usize;
    if b.len() < 1 + extra {
        return None;
    }
    let mut v: u64 = if extra == 8 { 0 } else { (first & (0xff >> extra)) as u64 };
    for i in 0..extra {
        v = (v << 8) | b[1 + i] as u64;
    }
    *b = &b[1 + extra..];
    Some(v)
}

pub(crate) fn read_signed_vint(b: &mut &[u8]) -> Option<i64> {
    read_unsigned_vint(b).map(|u| ((u >> 1) as i64) ^ -((u & 1) as i64))
}

fn varint_to_py<'py>(py: Python<'py>, b: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    if b.is_empty() {
        return Ok(0i64.into_pyobject(py)?.into_any());
    }
    if b.len() <= 16 {
        let mut buf = if b[0] & 0x80 != 0 { [0xffu8; 16] } else { [0u8; 16] };
        buf[16 - b.len()..].copy_from_slice(b);
        return Ok(i128::from_be_bytes(buf).into_pyobject(py)?.into_any());
    }
    let kw = PyDict::new(py);
    kw.set_item("signed", true)?;
    py.get_type::<pyo3::types::PyInt>().call_method("from_bytes", (PyBytes::new(py, b), "big"), Some(&kw))
}

/// Decodes one non-null value of type `typ`.
pub fn to_py<'py>(py: Python<'py>, b: &[u8], typ: &ColumnType<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match typ {
        ColumnType::Native(nt) => match nt {
            NativeType::Text | NativeType::Ascii => {
                let s = std::str::from_utf8(b).map_err(|e| decode_err(typ, &e.to_string()))?;
                PyString::new(py, s).into_any()
            }
            NativeType::Int => i32::from_be_bytes(fixed(b, typ)?).into_pyobject(py)?.into_any(),
            NativeType::BigInt | NativeType::Counter => i64::from_be_bytes(fixed(b, typ)?).into_pyobject(py)?.into_any(),
            NativeType::SmallInt => i16::from_be_bytes(fixed(b, typ)?).into_pyobject(py)?.into_any(),
            NativeType::TinyInt => i8::from_be_bytes(fixed(b, typ)?).into_pyobject(py)?.into_any(),
            NativeType::Varint => varint_to_py(py, b)?,
            NativeType::Float => (f32::from_be_bytes(fixed(b, typ)?) as f64).into_pyobject(py)?.into_any(),
            NativeType::Double => f64::from_be_bytes(fixed(b, typ)?).into_pyobject(py)?.into_any(),
            NativeType::Boolean => pyo3::types::PyBool::new(py, fixed::<1>(b, typ)?[0] != 0).to_owned().into_any(),
            NativeType::Blob => PyBytes::new(py, b).into_any(),
            NativeType::Uuid | NativeType::Timeuuid => {
                let n = u128::from_be_bytes(fixed(b, typ)?);
                let kw = PyDict::new(py);
                kw.set_item("int", n)?;
                pyrefs::codec(py)?.UUID.bind(py).call((), Some(&kw))?
            }
            NativeType::Timestamp => {
                let ms = i64::from_be_bytes(fixed(b, typ)?);
                let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
                let (y, m, d) = civil_from_days(days);
                if (1..=9999).contains(&y) {
                    let secs = rem / 1000;
                    PyDateTime::new(
                        py,
                        y as i32,
                        m as u8,
                        d as u8,
                        (secs / 3600) as u8,
                        ((secs / 60) % 60) as u8,
                        (secs % 60) as u8,
                        ((rem % 1000) * 1000) as u32,
                        None,
                    )?
                    .into_any()
                } else {
                    // Beyond datetime: what `DateType.deserialize` makes of it, as the
                    // classic driver decodes every timestamp with it. Its own raises (a
                    // DriverException naming the column, see `column_err`); code that
                    // replaces it (cqlsh shows such timestamps as numbers) is obeyed.
                    let date_type = pyrefs::codec(py)?.DateType.bind(py);
                    match date_type.call_method1(pyo3::intern!(py, "deserialize"), (PyBytes::new(py, b), 4)) {
                        Ok(v) => v,
                        Err(e) => {
                            let msg = format!("{}: {ms} ms from the epoch is outside datetime's range (years 1 to 9999)", e.value(py));
                            return Err(PyValueError::new_err(msg));
                        }
                    }
                }
            }
            NativeType::Date => {
                let raw = u32::from_be_bytes(fixed(b, typ)?);
                let days = raw as i64 - (1i64 << 31);
                pyrefs::codec(py)?.Date.bind(py).call1((days,))?
            }
            NativeType::Time => {
                let ns = i64::from_be_bytes(fixed(b, typ)?);
                pyrefs::codec(py)?.Time.bind(py).call1((ns,))?
            }
            NativeType::Duration => {
                let mut s = b;
                let months = read_signed_vint(&mut s).ok_or_else(|| decode_err(typ, "bad vint"))?;
                let days = read_signed_vint(&mut s).ok_or_else(|| decode_err(typ, "bad vint"))?;
                let nanos = read_signed_vint(&mut s).ok_or_else(|| decode_err(typ, "bad vint"))?;
                pyrefs::codec(py)?.Duration.bind(py).call1((months, days, nanos))?
            }
            NativeType::Decimal => {
                if b.len() < 4 {
                    return Err(decode_err(typ, "truncated"));
                }
                let scale = i32::from_be_bytes(b[..4].try_into().unwrap());
                let unscaled = varint_to_py(py, &b[4..])?;
                let text = format!("{}E{}", unscaled.str()?, -(scale as i64));
                pyrefs::codec(py)?.Decimal.bind(py).call1((text,))?
            }
            NativeType::Inet => {
                let ip: std::net::IpAddr = match b.len() {
                    4 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(b).unwrap()).into(),
                    16 => std::net::Ipv6Addr::from(<[u8; 16]>::try_from(b).unwrap()).into(),
                    n => return Err(decode_err(typ, &format!("{n} bytes"))),
                };
                PyString::new(py, &inet_text(&ip)).into_any()
            }
            _ => return Err(decode_err(typ, "unsupported type")),
        },
        ColumnType::Collection { typ: ct, .. } => {
            let mut s = b;
            let n = read_len(&mut s, typ)?.max(0) as usize;
            match ct {
                CollectionType::List(e) => {
                    let list = PyList::empty(py);
                    for _ in 0..n {
                        list.append(column_to_py(py, read_cell(&mut s, e)?, e)?)?;
                    }
                    list.into_any()
                }
                CollectionType::Set(e) => {
                    // The count is the server's word: reserve no more than the bytes left
                    // can hold (each element has at least its 4-byte length).
                    let mut items = Vec::with_capacity(n.min(s.len() / 4));
                    for _ in 0..n {
                        items.push(column_to_py(py, read_cell(&mut s, e)?, e)?);
                    }
                    pyrefs::codec(py)?.SortedSet.bind(py).call1((PyList::new(py, items)?,))?
                }
                CollectionType::Map(kt, vt) => {
                    let mut pairs = Vec::with_capacity(n.min(s.len() / 8));
                    for _ in 0..n {
                        let k = column_to_py(py, read_cell(&mut s, kt)?, kt)?;
                        let v = column_to_py(py, read_cell(&mut s, vt)?, vt)?;
                        pairs.push(PyTuple::new(py, [k, v])?);
                    }
                    pyrefs::codec(py)?.OrderedMap.bind(py).call1((PyList::new(py, pairs)?,))?
                }
                _ => return Err(decode_err(typ, "unsupported collection")),
            }
        }
        ColumnType::Tuple(types) => {
            let mut s = b;
            let mut items = Vec::with_capacity(types.len());
            // A value may end before its last fields: those are None.
            for t in types {
                if s.is_empty() {
                    break;
                }
                items.push(column_to_py(py, read_cell(&mut s, t)?, t)?);
            }
            fill_missing(py, typ, &mut items, types.len())?;
            PyTuple::new(py, items)?.into_any()
        }
        ColumnType::UserDefinedType { definition, .. } => {
            let mut s = b;
            let mut values = Vec::with_capacity(definition.field_types.len());
            for (_, t) in definition.field_types.iter() {
                if s.is_empty() {
                    break;
                }
                values.push(column_to_py(py, read_cell(&mut s, t)?, t)?);
            }
            fill_missing(py, typ, &mut values, definition.field_types.len())?;
            let names = definition.field_types.iter().map(|(name, _)| name.as_ref());
            pyrefs::get(py)?.make_udt.bind(py).call1((
                definition.keyspace.as_ref(),
                definition.name.as_ref(),
                PyTuple::new(py, names)?,
                PyTuple::new(py, values)?,
            ))?
        }
        ColumnType::Vector { typ: et, dimensions } => {
            let mut s = b;
            let fixed = et.type_size_for_vector();
            let list = PyList::empty(py);
            for _ in 0..*dimensions {
                let len = match fixed {
                    Some(n) => n,
                    None => read_unsigned_vint(&mut s).ok_or_else(|| decode_err(typ, "bad vint"))? as usize,
                };
                if s.len() < len {
                    return Err(decode_err(typ, "truncated vector"));
                }
                let (item, rest) = s.split_at(len);
                s = rest;
                list.append(to_py(py, item, et)?)?;
            }
            list.into_any()
        }
        _ => return Err(decode_err(typ, "unsupported type")),
    })
}

/// The types whose class has `support_empty_values` set (`turbocql.cqltypes`), a bit per
/// [`empty_kind`]. Kept here by the classes' metaclass on every assignment of the flag, so
/// decoding reads one atomic, and only for an empty cell (rare), never a Python attribute.
static EMPTY_VALUES: AtomicU32 = AtomicU32::new(0);

/// The CQL type names [`set_empty_values`] knows, in bit order.
/// (text, ascii and blob are not among them: their empty value is the empty str / bytes.)
pub const EMPTY_KINDS: [&str; 21] = [
    "bigint",
    "boolean",
    "counter",
    "decimal",
    "double",
    "float",
    "int",
    "timestamp",
    "uuid",
    "varint",
    "timeuuid",
    "inet",
    "date",
    "time",
    "smallint",
    "tinyint",
    "duration",
    "list",
    "set",
    "map",
    "tuple",
];

/// The bit of `typ` in [`EMPTY_VALUES`] (UDTs and vectors have none: their classes are made
/// per type, and the classic flag is read on the class the decoder holds).
fn empty_kind(typ: &ColumnType<'_>) -> Option<u32> {
    let name = match typ {
        ColumnType::Native(nt) => match nt {
            NativeType::BigInt => "bigint",
            NativeType::Boolean => "boolean",
            NativeType::Counter => "counter",
            NativeType::Decimal => "decimal",
            NativeType::Double => "double",
            NativeType::Float => "float",
            NativeType::Int => "int",
            NativeType::Timestamp => "timestamp",
            NativeType::Uuid => "uuid",
            NativeType::Varint => "varint",
            NativeType::Timeuuid => "timeuuid",
            NativeType::Inet => "inet",
            NativeType::Date => "date",
            NativeType::Time => "time",
            NativeType::SmallInt => "smallint",
            NativeType::TinyInt => "tinyint",
            NativeType::Duration => "duration",
            _ => return None,
        },
        ColumnType::Collection { typ: CollectionType::List(_), .. } => "list",
        ColumnType::Collection { typ: CollectionType::Set(_), .. } => "set",
        ColumnType::Collection { typ: CollectionType::Map(..), .. } => "map",
        ColumnType::Tuple(_) => "tuple",
        _ => return None,
    };
    EMPTY_KINDS.iter().position(|k| *k == name).map(|i| i as u32)
}

/// `_engine._set_empty_values(names)`: the CQL type names (of [`EMPTY_KINDS`]) whose class
/// now has `support_empty_values` true; every other type reads an empty cell as None.
#[pyfunction]
pub fn _set_empty_values(names: Vec<String>) -> PyResult<()> {
    let mut mask = 0u32;
    for name in &names {
        let Some(i) = EMPTY_KINDS.iter().position(|k| k == name) else {
            return Err(PyValueError::new_err(format!("no CQL type {name:?} reads empty values")));
        };
        mask |= 1 << i;
    }
    // Relaxed: the mask stands alone, and it is written and read holding the GIL, whose
    // hand-over orders the two.
    EMPTY_VALUES.store(mask, Ordering::Relaxed);
    Ok(())
}

/// An empty value (zero bytes) of a type with no empty form reads as None, or as
/// `turbocql.cqltypes.EMPTY` when the type's class has `support_empty_values` set, as in
/// the classic driver (`CassandraType.from_binary`), which reads a collection's elements and
/// a tuple's or UDT's fields the same way: a node stores `{blobAsInt(0x): 5}` and the classic
/// driver reads `{None: 5}`.
pub(crate) fn column_to_py<'py>(py: Python<'py>, cell: Option<&[u8]>, typ: &ColumnType<'_>) -> PyResult<Bound<'py, PyAny>> {
    match cell {
        None => Ok(py.None().into_bound(py)),
        Some(b) if b.is_empty() && empty_reads_as_null(typ) => {
            // Relaxed: see `_set_empty_values`.
            let mask = EMPTY_VALUES.load(Ordering::Relaxed);
            if mask != 0 && empty_kind(typ).is_some_and(|i| mask & (1 << i) != 0) {
                return Ok(pyrefs::codec(py)?.EMPTY.bind(py).clone());
            }
            Ok(py.None().into_bound(py))
        }
        Some(b) => to_py(py, b, typ),
    }
}

/// All rows of a page as a list of tuples.
pub fn page_rows<'py>(py: Python<'py>, rows: &impl RawPage) -> PyResult<Bound<'py, PyList>> {
    page_rows_by(py, rows, |cells| Ok(PyTuple::new(py, cells)?.into_any()))
}

/// The list of what `make` returns for each row of a page, given the row's cells decoded.
pub(crate) fn page_rows_by<'py>(
    py: Python<'py>,
    rows: &impl RawPage,
    mut make: impl FnMut(std::vec::Drain<'_, Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    start_page(py, rows)?;
    let iter = rows.row_iter().map_err(|e| read_err(py, "rows", e))?;
    let out = PyList::empty(py);
    let mut cells: Vec<Bound<'py, PyAny>> = Vec::with_capacity(rows.specs().len());
    for row in iter {
        let row = row.map_err(|e| read_err(py, "a row", e))?;
        cells.clear();
        for col in row {
            let col = col.map_err(|e| read_err(py, "a column", e))?;
            cells.push(column_to_py(py, col.slice.map(|s| s.as_slice()), col.spec.typ()).map_err(|e| column_err(py, col.spec, e))?);
        }
        out.append(make(cells.drain(..))?)?;
    }
    Ok(out)
}

/// `(column names, CQL type names)` of a page, as tuples of str.
///
/// Results of one statement share their metadata, so the tuples are cached by metadata
/// (a few entries, most recent first) instead of being rebuilt for every response.
pub fn column_meta<'py>(py: Python<'py>, rows: &impl RawPage) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
    type Entry = (Vec<ColumnSpec<'static>>, Py<PyTuple>, Py<PyTuple>);
    static CACHE: crate::sync::Mutex<Vec<Entry>> = crate::sync::Mutex::new(Vec::new());
    let specs = rows.specs();
    let mut cache = CACHE.lock();
    if let Some(i) = cache.iter().position(|(k, _, _)| k.as_slice() == specs) {
        if i != 0 {
            let e = cache.remove(i);
            cache.insert(0, e);
        }
        let (_, names, types) = &cache[0];
        return Ok((names.bind(py).clone(), types.bind(py).clone()));
    }
    let names = PyTuple::new(py, specs.iter().map(|s| s.name()))?;
    let types = PyTuple::new(py, specs.iter().map(|s| type_name(s.typ())))?;
    cache.insert(0, (specs.iter().map(|s| s.clone().into_owned()).collect(), names.clone().unbind(), types.clone().unbind()));
    cache.truncate(64);
    Ok((names, types))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [-719162i64, -1, 0, 1, 11017, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(crate::codec::scalars::days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
    }

    #[test]
    fn vint_round_trip() {
        let mut b: &[u8] = &[0x80, 0x80];
        assert_eq!(read_unsigned_vint(&mut b), Some(128));
        let mut b: &[u8] = &[1];
        assert_eq!(read_signed_vint(&mut b), Some(-1));
    }
}
