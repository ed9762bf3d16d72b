//! Values: Python objects → CQL wire bytes, typed by the statement's bind-marker metadata.
//!
//! A whole row of values is converted under one GIL acquisition into a [`BoundValues`]
//! buffer before anything is sent. A value that does not fit its column raises a
//! `TypeError` / `ValueError` naming the column and its CQL type. The buffer implements
//! the scylla crate's `SerializeRow`, so the driver copies cells without touching Python.
//! Numeric vectors bound from numpy arrays (any buffer-protocol object) are written
//! straight from the array's memory (`super::arrays`); `super::columns` binds
//! `execute_concurrent_with_args` parameters given as columns.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDate, PyDateAccess, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTime, PyTimeAccess, PyTuple};
use scylla::frame::response::result::{CollectionType, ColumnSpec, ColumnType, NativeType, PartitionKeyIndex};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::serialize::SerializationError;

use super::arrays::{array_elem, write_array_vector, ArrayBuf};
use super::mismatch::{expected, py_type_name, type_err, value_err, Mismatch};
use super::scalars::{
    days_from_civil, extract_f64, extract_int, extract_str, timestamp_millis, uuid_bytes, write_blob, write_decimal, write_signed_vint, write_unsigned_vint,
    write_varint,
};
use super::types::{type_name, NANOS_PER_DAY};
use crate::pyrefs;

pub(crate) const NULL: i32 = -1;
pub(crate) const UNSET: i32 = -2;

/// A row of values, already in wire form: for each cell an i32 length (-1 null,
/// -2 unset) followed by that many bytes.
#[derive(Default, Clone, Debug)]
pub struct BoundValues {
    pub(crate) buf: Vec<u8>,
    pub(crate) count: usize,
}

#[derive(Debug, thiserror::Error)]
#[error("{0} values were bound, the statement has {1} bind markers")]
pub struct CountMismatch(usize, usize);

impl SerializeRow for BoundValues {
    fn serialize(&self, ctx: &RowSerializationContext<'_>, writer: &mut RowWriter) -> Result<(), SerializationError> {
        if ctx.columns().len() != self.count {
            return Err(SerializationError::new(CountMismatch(self.count, ctx.columns().len())));
        }
        let mut pos = 0usize;
        for _ in 0..self.count {
            let len = i32::from_be_bytes(self.buf[pos..pos + 4].try_into().unwrap());
            pos += 4;
            let cell = writer.make_cell_writer();
            match len {
                NULL => {
                    cell.set_null();
                }
                UNSET => {
                    cell.set_unset();
                }
                n => {
                    let n = n as usize;
                    cell.set_value(&self.buf[pos..pos + n]).map_err(SerializationError::new)?;
                    pos += n;
                }
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Converts a row of Python values for the bind markers `specs`.
///
/// `values` is a sequence (positional; a short one leaves the last markers unset) or a
/// mapping (by marker name; a missing name is left unset), as the classic driver's `bind`
/// with protocol v4; `keys` (the statement's partition-key markers) must not be unset.
/// `turbocql.query.UNSET_VALUE` (looked up once: it is needed for every bound row).
pub(crate) fn unset_value(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    Ok(pyrefs::get(py)?.UNSET_VALUE.bind(py))
}

pub fn bind_row(py: Python<'_>, values: Option<&Bound<'_, PyAny>>, specs: &[ColumnSpec<'_>], keys: &[PartitionKeyIndex]) -> PyResult<BoundValues> {
    let mut out = BoundValues { buf: Vec::with_capacity(64), count: specs.len() };
    let unset = unset_value(py)?;
    // As the classic driver's `bind` with protocol v4: a marker left out (a short sequence,
    // a name missing from a mapping, no values at all) or given UNSET_VALUE is unset, but
    // never a partition-key column.
    let leave_unset = |buf: &mut Vec<u8>, i: usize| -> PyResult<()> {
        if keys.iter().any(|k| k.index as usize == i) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("Cannot bind UNSET_VALUE as a part of the routing key '{}'", specs[i].name())));
        }
        buf.extend_from_slice(&UNSET.to_be_bytes());
        Ok(())
    };
    let write = |buf: &mut Vec<u8>, i: usize, v: &Bound<'_, PyAny>| -> PyResult<()> {
        if v.is(unset) {
            leave_unset(buf, i)
        } else {
            write_top(buf, v, &specs[i], unset)
        }
    };
    let Some(values) = values.filter(|v| !v.is_none()) else {
        for i in 0..specs.len() {
            leave_unset(&mut out.buf, i)?;
        }
        return Ok(out);
    };
    if let Ok(d) = values.cast::<PyDict>() {
        for (i, spec) in specs.iter().enumerate() {
            match d.get_item(spec.name())? {
                Some(v) => write(&mut out.buf, i, &v)?,
                None => leave_unset(&mut out.buf, i)?,
            }
        }
        return Ok(out);
    }
    if values.is_instance_of::<PyString>() || values.is_instance_of::<PyBytes>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!("Bind values must be a sequence or a mapping, not {}", py_type_name(values))));
    }
    let write_all = |items: &mut dyn ExactSizeIterator<Item = Bound<'_, PyAny>>, buf: &mut Vec<u8>| -> PyResult<()> {
        let n = items.len();
        if n > specs.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("Too many arguments provided to bind() (got {n}, expected {})", specs.len())));
        }
        for (i, v) in items.enumerate() {
            write(buf, i, &v)?;
        }
        for i in n..specs.len() {
            leave_unset(buf, i)?;
        }
        Ok(())
    };
    if let Ok(t) = values.cast::<PyTuple>() {
        write_all(&mut t.iter(), &mut out.buf)?;
    } else if let Ok(l) = values.cast::<PyList>() {
        write_all(&mut l.iter(), &mut out.buf)?;
    } else if let Ok(m) = values.cast::<PyMapping>() {
        let _ = m; // a Mapping that is not a dict
        for (i, spec) in specs.iter().enumerate() {
            match values.get_item(spec.name()) {
                Ok(v) => write(&mut out.buf, i, &v)?,
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => leave_unset(&mut out.buf, i)?,
                Err(e) => return Err(e),
            }
        }
    } else {
        let items: Vec<Bound<'_, PyAny>> = values
            .try_iter()
            .map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("Bind values must be a sequence or a mapping, not {}", py_type_name(values))))?
            .collect::<PyResult<_>>()?;
        write_all(&mut items.into_iter(), &mut out.buf)?;
    }
    Ok(out)
}

pub(crate) fn write_top(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>, spec: &ColumnSpec<'_>, unset: &Bound<'_, PyAny>) -> PyResult<()> {
    if v.is(unset) {
        buf.extend_from_slice(&UNSET.to_be_bytes());
        return Ok(());
    }
    write_cell(buf, v, spec.typ()).map_err(|m| m.for_column(spec))
}

/// Writes one nullable cell: i32 length, then the value's bytes.
pub fn write_cell(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    if v.is_none() {
        buf.extend_from_slice(&NULL.to_be_bytes());
        return Ok(());
    }
    let start = buf.len();
    buf.extend_from_slice(&[0u8; 4]);
    write_value(buf, v, typ)?;
    let len = buf.len() - start - 4;
    if len > i32::MAX as usize {
        return Err(value_err(format!("value of {len} bytes is larger than a CQL value can be")));
    }
    buf[start..start + 4].copy_from_slice(&(len as i32).to_be_bytes());
    Ok(())
}

/// Writes a collection element: like a cell, but null is not allowed.
fn write_element(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>, typ: &ColumnType<'_>, what: &str) -> Result<(), Mismatch> {
    if v.is_none() {
        return Err(value_err(format!("None is not allowed inside a {what}")));
    }
    write_cell(buf, v, typ).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in a {what} element of type {}: {}", type_name(typ), m.msg) })
}

pub fn write_value(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    match typ {
        ColumnType::Native(nt) => match nt {
            NativeType::Text => buf.extend_from_slice(extract_str(v)?.as_bytes()),
            NativeType::Ascii => {
                let s = extract_str(v)?;
                if !s.is_ascii() {
                    return Err(value_err(format!("{s:?} contains non-ASCII characters")));
                }
                buf.extend_from_slice(s.as_bytes())
            }
            NativeType::Int => buf.extend_from_slice(&extract_int::<i32>(v, 32)?.to_be_bytes()),
            NativeType::BigInt | NativeType::Counter => buf.extend_from_slice(&extract_int::<i64>(v, 64)?.to_be_bytes()),
            NativeType::SmallInt => buf.extend_from_slice(&extract_int::<i16>(v, 16)?.to_be_bytes()),
            NativeType::TinyInt => buf.extend_from_slice(&extract_int::<i8>(v, 8)?.to_be_bytes()),
            NativeType::Varint => write_varint(buf, v)?,
            NativeType::Double => buf.extend_from_slice(&extract_f64(v)?.to_be_bytes()),
            NativeType::Float => {
                let f = extract_f64(v)?;
                if f.is_finite() && f.abs() > f32::MAX as f64 {
                    return Err(value_err(format!("{f} is out of range for a 32-bit float")));
                }
                buf.extend_from_slice(&(f as f32).to_be_bytes())
            }
            NativeType::Boolean => {
                let b = if let Ok(b) = v.cast::<PyBool>() {
                    b.is_true()
                } else {
                    match v.extract::<i64>() {
                        Ok(0) => false,
                        Ok(1) => true,
                        _ => return Err(expected("bool", v)),
                    }
                };
                buf.push(b as u8)
            }
            NativeType::Blob => write_blob(buf, v)?,
            NativeType::Uuid => buf.extend_from_slice(&uuid_bytes(v, false)?),
            NativeType::Timeuuid => buf.extend_from_slice(&uuid_bytes(v, true)?),
            NativeType::Timestamp => buf.extend_from_slice(&timestamp_millis(v)?.to_be_bytes()),
            NativeType::Date => {
                let days: i64 = if v.cast::<PyDateTime>().is_ok() {
                    return Err(expected("date (not datetime)", v));
                } else if let Ok(d) = v.cast::<PyDate>() {
                    days_from_civil(d.get_year() as i64, d.get_month() as u32, d.get_day() as u32)
                } else if let Ok(n) = v.getattr("days_from_epoch") {
                    n.extract().map_err(|_| expected("date", v))?
                } else if !v.is_instance_of::<PyBool>() && v.extract::<i64>().is_ok() {
                    v.extract::<i64>().unwrap()
                } else {
                    return Err(expected("datetime.date, turbocql.util.Date or int days", v));
                };
                let raw = days + (1i64 << 31);
                let raw = u32::try_from(raw).map_err(|_| value_err(format!("{days} days from epoch is out of range for date")))?;
                buf.extend_from_slice(&raw.to_be_bytes())
            }
            NativeType::Time => {
                let ns: i64 = if let Ok(t) = v.cast::<PyTime>() {
                    (t.get_hour() as i64 * 3600 + t.get_minute() as i64 * 60 + t.get_second() as i64) * 1_000_000_000 + t.get_microsecond() as i64 * 1000
                } else if let Ok(n) = v.getattr("nanosecond_time") {
                    n.extract().map_err(|_| expected("time", v))?
                } else if !v.is_instance_of::<PyBool>() && v.extract::<i64>().is_ok() {
                    v.extract::<i64>().unwrap()
                } else {
                    return Err(expected("datetime.time, turbocql.util.Time or int nanoseconds", v));
                };
                if !(0..NANOS_PER_DAY).contains(&ns) {
                    return Err(value_err(format!("{ns} ns is outside a day")));
                }
                buf.extend_from_slice(&ns.to_be_bytes())
            }
            NativeType::Duration => {
                // As the classic driver: a field that is no integer is a TypeError, an
                // integer the wire form cannot carry a ValueError (the server's duration
                // holds 32-bit months and days, 64-bit nanoseconds).
                let get = |name: &str, min: i64, max: i64| -> Result<i64, Mismatch> {
                    let x = v.getattr(name).map_err(|_| expected("turbocql.util.Duration", v))?;
                    if !x.is_instance_of::<PyInt>() {
                        return Err(type_err(format!("Duration {name} must be an int, got {}", py_type_name(&x))));
                    }
                    match x.extract::<i64>() {
                        Ok(n) if (min..=max).contains(&n) => Ok(n),
                        _ => Err(value_err(format!("Duration {name} {x} is out of range ({min} to {max})"))),
                    }
                };
                let (i32_min, i32_max) = (i32::MIN as i64, i32::MAX as i64);
                let (months, days, nanos) = (get("months", i32_min, i32_max)?, get("days", i32_min, i32_max)?, get("nanoseconds", i64::MIN, i64::MAX)?);
                write_signed_vint(buf, months);
                write_signed_vint(buf, days);
                write_signed_vint(buf, nanos);
            }
            NativeType::Decimal => write_decimal(buf, v)?,
            NativeType::Inet => {
                let ip: std::net::IpAddr = if let Ok(s) = v.cast::<PyString>() {
                    let s = s.to_cow().map_err(|e| value_err(format!("{e}")))?;
                    s.parse().map_err(|_| value_err(format!("{s:?} is not an IPv4 or IPv6 address")))?
                } else if let Ok(packed) = v.getattr("packed") {
                    let b: Vec<u8> = packed.extract().map_err(|_| expected("str address", v))?;
                    buf.extend_from_slice(&b);
                    return Ok(());
                } else {
                    return Err(expected("str (IPv4 or IPv6 address)", v));
                };
                match ip {
                    std::net::IpAddr::V4(a) => buf.extend_from_slice(&a.octets()),
                    std::net::IpAddr::V6(a) => buf.extend_from_slice(&a.octets()),
                }
            }
            other => return Err(type_err(format!("CQL type {other:?} is not supported yet"))),
        },
        ColumnType::Collection { typ: ct, .. } => match ct {
            CollectionType::List(e) | CollectionType::Set(e) => {
                let what = if matches!(ct, CollectionType::List(_)) { "list" } else { "set" };
                if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() || v.is_instance_of::<PyDict>() {
                    return Err(expected(&format!("a {what} (list, tuple, set)"), v));
                }
                let it = v.try_iter().map_err(|_| expected(&format!("a {what} (list, tuple, set)"), v))?;
                let count_at = buf.len();
                buf.extend_from_slice(&[0u8; 4]);
                let mut n: i32 = 0;
                for item in it {
                    let item = item.map_err(|e| value_err(format!("{e}")))?;
                    write_element(buf, &item, e, what)?;
                    n += 1;
                }
                buf[count_at..count_at + 4].copy_from_slice(&n.to_be_bytes());
            }
            CollectionType::Map(kt, vt) => {
                // A mapping, or a sequence of (key, value) pairs (how an unhashable key,
                // e.g. a frozen map, reads back inside an OrderedMap).
                let items = match v.call_method0("items") {
                    Ok(items) => items,
                    Err(_) if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() => v.clone(),
                    Err(_) => return Err(expected("a dict", v)),
                };
                let count_at = buf.len();
                buf.extend_from_slice(&[0u8; 4]);
                let mut n: i32 = 0;
                for item in items.try_iter().map_err(|_| expected("a dict", v))? {
                    let item = item.map_err(|e| value_err(format!("{e}")))?;
                    let (k, val): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract().map_err(|_| expected("a dict", v))?;
                    write_element(buf, &k, kt, "map key")?;
                    write_element(buf, &val, vt, "map value")?;
                    n += 1;
                }
                buf[count_at..count_at + 4].copy_from_slice(&n.to_be_bytes());
            }
            _ => return Err(type_err("unsupported collection type".into())),
        },
        ColumnType::Tuple(types) => {
            let t = v
                .cast::<PyTuple>()
                .map(|t| t.clone().into_any())
                .or_else(|_| v.cast::<PyList>().map(|l| l.clone().into_any()))
                .map_err(|_| expected("tuple", v))?;
            let n = t.len().unwrap_or(0);
            if n > types.len() {
                return Err(value_err(format!("tuple has {n} elements, the type has {}", types.len())));
            }
            for (i, et) in types.iter().enumerate() {
                if i < n {
                    let item = t.get_item(i).map_err(|e| value_err(format!("{e}")))?;
                    write_cell(buf, &item, et).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in tuple element {i}: {}", m.msg) })?;
                } else {
                    buf.extend_from_slice(&NULL.to_be_bytes());
                }
            }
        }
        ColumnType::UserDefinedType { definition, .. } => {
            // A dict (by field name; unknown names are an error), a tuple or list (by
            // position, as the classic driver reads them), or an object with the fields
            // as attributes (a registered class, a named tuple read back).
            let fields = &definition.field_types;
            let udt = format!("{}.{}", definition.keyspace, definition.name);
            let values: Vec<Option<Bound<'_, PyAny>>> = if let Ok(d) = v.cast::<PyDict>() {
                for key in d.keys() {
                    let known = key.extract::<String>().map(|k| fields.iter().any(|(n, _)| n.as_ref() == k)).unwrap_or(false);
                    if !known {
                        return Err(value_err(format!("{udt} has no field {}", key.repr().map(|r| r.to_string()).unwrap_or_default())));
                    }
                }
                fields.iter().map(|(n, _)| d.get_item(n.as_ref()).ok().flatten()).collect()
            } else if v.is_instance_of::<PyTuple>() && v.hasattr("_fields").unwrap_or(false) || !(v.is_instance_of::<PyTuple>() || v.is_instance_of::<PyList>())
            {
                if v.is_instance_of::<PyString>()
                    || v.is_instance_of::<PyBytes>()
                    || v.is_instance_of::<PyFloat>()
                    || v.is_instance_of::<pyo3::types::PyInt>()
                    || v.is_instance_of::<PyBool>()
                {
                    return Err(expected(&format!("a dict, tuple or object with the fields of {udt}"), v));
                }
                let found: Vec<Option<Bound<'_, PyAny>>> = fields.iter().map(|(n, _)| v.getattr(n.as_ref()).ok()).collect();
                if found.iter().all(|f| f.is_none()) {
                    return Err(expected(&format!("a dict, tuple or object with the fields of {udt}"), v));
                }
                found
            } else {
                let n = v.len().unwrap_or(0);
                if n > fields.len() {
                    return Err(value_err(format!("{n} values for {udt}, which has {} fields", fields.len())));
                }
                (0..fields.len()).map(|i| if i < n { v.get_item(i).ok() } else { None }).collect()
            };
            for ((name, ft), field) in fields.iter().zip(values) {
                match field {
                    Some(f) => write_cell(buf, &f, ft).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in field {name:?}: {}", m.msg) })?,
                    None => buf.extend_from_slice(&NULL.to_be_bytes()),
                }
            }
        }
        ColumnType::Vector { typ: et, dimensions } => {
            if array_elem(et) && !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
                // A numpy array, array.array, memoryview...: straight from its memory.
                if let Some(arr) = ArrayBuf::get(v).map_err(|e| value_err(format!("unreadable buffer: {e}")))? {
                    if arr.num().is_some() {
                        return write_array_vector(buf, &arr, et, *dimensions as usize, None);
                    }
                }
            }
            let fixed = et.type_size_for_vector();
            let items: Vec<Bound<'_, PyAny>> =
                v.try_iter().map_err(|_| expected("a sequence", v))?.collect::<PyResult<_>>().map_err(|e| value_err(format!("{e}")))?;
            if items.len() != *dimensions as usize {
                return Err(value_err(format!("vector has {} elements, the column has {dimensions}", items.len())));
            }
            for (i, item) in items.iter().enumerate() {
                if item.is_none() {
                    return Err(value_err(format!("None is not allowed inside a vector (element {i})")));
                }
                if fixed.is_some() {
                    write_value(buf, item, et).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in vector element {i}: {}", m.msg) })?;
                } else {
                    let mut tmp = Vec::new();
                    write_value(&mut tmp, item, et).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in vector element {i}: {}", m.msg) })?;
                    write_unsigned_vint(buf, tmp.len() as u64);
                    buf.extend_from_slice(&tmp);
                }
            }
        }
        _ => return Err(type_err(format!("CQL type {} is not supported yet", type_name(typ)))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_values_is_empty() {
        assert!(BoundValues::default().is_empty());
    }
}
