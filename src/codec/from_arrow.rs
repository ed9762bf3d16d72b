//! From Arrow: parameters given as Arrow data (a pyarrow `RecordBatch`, `Table`, `Array` or
//! `ChunkedArray`, a polars `DataFrame` or `Series`: anything with `__arrow_c_array__` or
//! `__arrow_c_stream__`), imported through the Arrow C data interface and written as CQL
//! values straight from the Arrow buffers, with no Python object per value.
//!
//! Each Arrow type is accepted for the CQL types that hold its values: integers for every
//! integer type (range checked), floats, strings for text (and, parsed by `super::from_text`,
//! for any other scalar type), binary for blobs, 16-byte fixed-size binary for UUIDs,
//! timestamps, dates, times, month-day-nano intervals for durations, decimals, lists for
//! lists, sets and vectors, maps for maps, structs for tuples (by position) and UDTs (by
//! field name). A null at the top is a CQL null; inside a collection it is refused.

use std::ffi::CStr;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::*;
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

use super::from_text::write_text_value;
use super::mismatch::{type_err, value_err, Mismatch};
use super::scalars::write_signed_vint;
use super::types::{type_name, NANOS_PER_DAY};
use super::values::NULL;

/// One column's values: the chunks of an Arrow array, read by row number across them.
pub struct ArrowValues {
    chunks: Vec<ArrayRef>,
    /// Row number just past each chunk.
    ends: Vec<usize>,
}

impl ArrowValues {
    fn new(chunks: Vec<ArrayRef>) -> ArrowValues {
        let mut end = 0;
        let ends = chunks
            .iter()
            .map(|c| {
                end += c.len();
                end
            })
            .collect();
        ArrowValues { chunks, ends }
    }

    pub fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn data_type(&self) -> Option<&DataType> {
        self.chunks.first().map(|c| c.data_type())
    }

    /// The chunk holding row `row`, and the row's index in it.
    fn locate(&self, row: usize) -> (&dyn Array, usize) {
        let k = self.ends.partition_point(|&e| e <= row);
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        (self.chunks[k].as_ref(), row - start)
    }

    /// Writes row `row` as a nullable cell (i32 length, then the value) of type `typ`.
    pub fn write_cell(&self, buf: &mut Vec<u8>, row: usize, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
        let (arr, i) = self.locate(row);
        write_cell(buf, arr, i, typ)
    }

    /// A table's columns (the fields of its struct chunks), by name.
    pub fn into_fields(self) -> PyResult<Vec<(String, ArrowValues)>> {
        let Some(DataType::Struct(fields)) = self.data_type().cloned() else {
            return Err(PyTypeError::new_err(format!(
                "expected Arrow record batches or a table (a struct of columns), got Arrow type {}",
                self.data_type().map(|t| t.to_string()).unwrap_or_else(|| "(no chunk)".into())
            )));
        };
        let mut columns: Vec<(String, Vec<ArrayRef>)> = fields.iter().map(|f| (f.name().clone(), Vec::new())).collect();
        for chunk in &self.chunks {
            let s = chunk.as_struct();
            if s.null_count() > 0 {
                return Err(PyValueError::new_err("Arrow rows that are null as a whole cannot be written"));
            }
            for (j, col) in s.columns().iter().enumerate() {
                columns[j].1.push(col.clone());
            }
        }
        Ok(columns.into_iter().map(|(n, c)| (n, ArrowValues::new(c))).collect())
    }
}

fn capsule_ptr<T>(capsule: &Bound<'_, PyAny>, name: &CStr) -> PyResult<*mut T> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| PyTypeError::new_err("the Arrow PyCapsule interface returned something other than a capsule"))?;
    let ptr = capsule.pointer_checked(Some(name))?;
    Ok(ptr.as_ptr() as *mut T)
}

fn arrow_err(e: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("unreadable Arrow data: {e}"))
}

/// The Arrow data of `obj` (its `__arrow_c_stream__`, else its `__arrow_c_array__`), or
/// None when it has neither (a list, a numpy array).
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<Option<ArrowValues>> {
    if obj.hasattr(pyo3::intern!(obj.py(), "__arrow_c_stream__"))? {
        let capsule = obj.call_method0(pyo3::intern!(obj.py(), "__arrow_c_stream__"))?;
        let raw = capsule_ptr::<FFI_ArrowArrayStream>(&capsule, c"arrow_array_stream")?;
        // SAFETY: the capsule holds a valid stream (the PyCapsule interface's contract);
        // from_raw moves it out and marks the capsule's copy released, so the capsule's
        // destructor does not release it again.
        let reader = unsafe { ArrayStreamReader::from_raw(raw) }.map_err(arrow_err)?;
        let chunks = reader.collect::<Result<Vec<_>, _>>().map_err(arrow_err)?;
        return Ok(Some(ArrowValues::new(chunks)));
    }
    if obj.hasattr(pyo3::intern!(obj.py(), "__arrow_c_array__"))? {
        let pair = obj.call_method0(pyo3::intern!(obj.py(), "__arrow_c_array__"))?;
        let (schema, array): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
        let schema = capsule_ptr::<FFI_ArrowSchema>(&schema, c"arrow_schema")?;
        let array = capsule_ptr::<FFI_ArrowArray>(&array, c"arrow_array")?;
        // SAFETY: as above; the schema is only borrowed (the capsule keeps and frees it).
        let data = unsafe { from_ffi(FFI_ArrowArray::from_raw(array), &*schema) }.map_err(arrow_err)?;
        return Ok(Some(ArrowValues::new(vec![make_array(data)])));
    }
    Ok(None)
}

/// Writes element `i` of `arr` as a nullable cell of type `typ`.
fn write_cell(buf: &mut Vec<u8>, arr: &dyn Array, i: usize, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    if arr.is_null(i) {
        buf.extend_from_slice(&NULL.to_be_bytes());
        return Ok(());
    }
    let start = buf.len();
    buf.extend_from_slice(&[0u8; 4]);
    write_value(buf, arr, i, typ)?;
    let len = buf.len() - start - 4;
    if len > i32::MAX as usize {
        return Err(value_err(format!("value of {len} bytes is larger than a CQL value can be")));
    }
    buf[start..start + 4].copy_from_slice(&(len as i32).to_be_bytes());
    Ok(())
}

/// A collection element: a cell that may not be null.
fn write_element(buf: &mut Vec<u8>, arr: &dyn Array, i: usize, typ: &ColumnType<'_>, what: &str) -> Result<(), Mismatch> {
    if arr.is_null(i) {
        return Err(value_err(format!("null is not allowed inside a {what}")));
    }
    write_cell(buf, arr, i, typ).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in a {what} element of type {}: {}", type_name(typ), m.msg) })
}

fn mismatch(arr: &dyn Array, typ: &ColumnType<'_>) -> Mismatch {
    type_err(format!("Arrow type {} cannot be written as {}", arr.data_type(), type_name(typ)))
}

/// Element `i` of an integer array, widened.
fn int_at(arr: &dyn Array, i: usize) -> Option<i128> {
    Some(match arr.data_type() {
        DataType::Int8 => arr.as_primitive::<Int8Type>().value(i) as i128,
        DataType::Int16 => arr.as_primitive::<Int16Type>().value(i) as i128,
        DataType::Int32 => arr.as_primitive::<Int32Type>().value(i) as i128,
        DataType::Int64 => arr.as_primitive::<Int64Type>().value(i) as i128,
        DataType::UInt8 => arr.as_primitive::<UInt8Type>().value(i) as i128,
        DataType::UInt16 => arr.as_primitive::<UInt16Type>().value(i) as i128,
        DataType::UInt32 => arr.as_primitive::<UInt32Type>().value(i) as i128,
        DataType::UInt64 => arr.as_primitive::<UInt64Type>().value(i) as i128,
        _ => return None,
    })
}

/// Element `i` of a timestamp, time or duration array, in the array's own unit.
fn time_at(arr: &dyn Array, i: usize) -> Option<i64> {
    use TimeUnit::*;
    Some(match arr.data_type() {
        DataType::Timestamp(Second, _) => arr.as_primitive::<TimestampSecondType>().value(i),
        DataType::Timestamp(Millisecond, _) => arr.as_primitive::<TimestampMillisecondType>().value(i),
        DataType::Timestamp(Microsecond, _) => arr.as_primitive::<TimestampMicrosecondType>().value(i),
        DataType::Timestamp(Nanosecond, _) => arr.as_primitive::<TimestampNanosecondType>().value(i),
        DataType::Time32(Second) => arr.as_primitive::<Time32SecondType>().value(i) as i64,
        DataType::Time32(Millisecond) => arr.as_primitive::<Time32MillisecondType>().value(i) as i64,
        DataType::Time64(Microsecond) => arr.as_primitive::<Time64MicrosecondType>().value(i),
        DataType::Time64(Nanosecond) => arr.as_primitive::<Time64NanosecondType>().value(i),
        DataType::Duration(Second) => arr.as_primitive::<DurationSecondType>().value(i),
        DataType::Duration(Millisecond) => arr.as_primitive::<DurationMillisecondType>().value(i),
        DataType::Duration(Microsecond) => arr.as_primitive::<DurationMicrosecondType>().value(i),
        DataType::Duration(Nanosecond) => arr.as_primitive::<DurationNanosecondType>().value(i),
        _ => return None,
    })
}

/// Element `i` of a string array.
fn str_at(arr: &dyn Array, i: usize) -> Option<&str> {
    Some(match arr.data_type() {
        DataType::Utf8 => arr.as_string::<i32>().value(i),
        DataType::LargeUtf8 => arr.as_string::<i64>().value(i),
        DataType::Utf8View => arr.as_string_view().value(i),
        _ => return None,
    })
}

/// Element `i` of a binary array.
fn bytes_at(arr: &dyn Array, i: usize) -> Option<&[u8]> {
    Some(match arr.data_type() {
        DataType::Binary => arr.as_binary::<i32>().value(i),
        DataType::LargeBinary => arr.as_binary::<i64>().value(i),
        DataType::BinaryView => arr.as_binary_view().value(i),
        DataType::FixedSizeBinary(_) => arr.as_fixed_size_binary().value(i),
        _ => return None,
    })
}

/// The elements of list `i` (a list, large list or fixed-size list): the child array and
/// the range of its elements.
fn list_at(arr: &dyn Array, i: usize) -> Option<(ArrayRef, std::ops::Range<usize>)> {
    Some(match arr.data_type() {
        DataType::List(_) => {
            let l = arr.as_list::<i32>();
            let o = l.value_offsets();
            (l.values().clone(), o[i] as usize..o[i + 1] as usize)
        }
        DataType::LargeList(_) => {
            let l = arr.as_list::<i64>();
            let o = l.value_offsets();
            (l.values().clone(), o[i] as usize..o[i + 1] as usize)
        }
        DataType::FixedSizeList(_, n) => {
            let l = arr.as_fixed_size_list();
            let n = *n as usize;
            let at = (l.offset() + i) * n;
            (l.values().clone(), at..at + n)
        }
        _ => return None,
    })
}

fn ranged<T: TryFrom<i128>>(v: i128, what: &str) -> Result<T, Mismatch> {
    T::try_from(v).map_err(|_| value_err(format!("{v} is out of range for {what}")))
}

fn write_varint(buf: &mut Vec<u8>, be: &[u8]) {
    // Two's complement, big endian: drop the sign bytes the next byte's top bit repeats.
    let mut start = 0;
    while start + 1 < be.len() && ((be[start] == 0 && be[start + 1] & 0x80 == 0) || (be[start] == 0xff && be[start + 1] & 0x80 != 0)) {
        start += 1;
    }
    buf.extend_from_slice(&be[start..]);
}

fn millis(v: i64, unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => v.saturating_mul(1000),
        TimeUnit::Millisecond => v,
        // Sub-millisecond digits are dropped (rounded down), as the classic driver drops
        // a datetime's microseconds.
        TimeUnit::Microsecond => v.div_euclid(1000),
        TimeUnit::Nanosecond => v.div_euclid(1_000_000),
    }
}

fn nanos(v: i64, unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => v.saturating_mul(1_000_000_000),
        TimeUnit::Millisecond => v.saturating_mul(1_000_000),
        TimeUnit::Microsecond => v.saturating_mul(1000),
        TimeUnit::Nanosecond => v,
    }
}

fn write_value(buf: &mut Vec<u8>, arr: &dyn Array, i: usize, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    if let DataType::Dictionary(..) = arr.data_type() {
        let dict = arr.as_any_dictionary();
        let key = int_at(dict.keys(), i).and_then(|k| usize::try_from(k).ok()).ok_or_else(|| value_err("a dictionary key out of range".into()))?;
        return write_value(buf, dict.values().as_ref(), key, typ);
    }
    if let Some(s) = str_at(arr, i) {
        return write_text_value(buf, s, typ);
    }
    match typ {
        ColumnType::Native(nt) => write_native(buf, arr, i, nt, typ),
        ColumnType::Collection { typ: ct, .. } => match ct {
            CollectionType::List(et) | CollectionType::Set(et) => {
                let what = if matches!(ct, CollectionType::List(_)) { "list" } else { "set" };
                let (values, range) = list_at(arr, i).ok_or_else(|| mismatch(arr, typ))?;
                buf.extend_from_slice(&(range.len() as i32).to_be_bytes());
                for j in range {
                    write_element(buf, values.as_ref(), j, et, what)?;
                }
                Ok(())
            }
            CollectionType::Map(kt, vt) => {
                let DataType::Map(..) = arr.data_type() else {
                    return Err(mismatch(arr, typ));
                };
                let m = arr.as_map();
                let o = m.value_offsets();
                let (keys, values) = (m.keys(), m.values());
                buf.extend_from_slice(&(o[i + 1] - o[i]).to_be_bytes());
                for j in o[i] as usize..o[i + 1] as usize {
                    write_element(buf, keys.as_ref(), j, kt, "map key")?;
                    write_element(buf, values.as_ref(), j, vt, "map value")?;
                }
                Ok(())
            }
            _ => Err(mismatch(arr, typ)),
        },
        ColumnType::Tuple(types) => {
            let DataType::Struct(_) = arr.data_type() else {
                return Err(mismatch(arr, typ));
            };
            let s = arr.as_struct();
            if s.num_columns() > types.len() {
                return Err(value_err(format!("a struct of {} fields for a tuple of {}", s.num_columns(), types.len())));
            }
            for (k, et) in types.iter().enumerate() {
                match s.columns().get(k) {
                    Some(col) => write_cell(buf, col.as_ref(), i, et)
                        .map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in tuple element {k}: {}", m.msg) })?,
                    None => buf.extend_from_slice(&NULL.to_be_bytes()),
                }
            }
            Ok(())
        }
        ColumnType::UserDefinedType { definition, .. } => {
            let DataType::Struct(fields) = arr.data_type() else {
                return Err(mismatch(arr, typ));
            };
            let udt = format!("{}.{}", definition.keyspace, definition.name);
            for f in fields.iter() {
                if !definition.field_types.iter().any(|(n, _)| n.as_ref() == f.name()) {
                    return Err(value_err(format!("{udt} has no field {:?}", f.name())));
                }
            }
            let s = arr.as_struct();
            for (name, ft) in definition.field_types.iter() {
                match s.column_by_name(name) {
                    Some(col) => {
                        write_cell(buf, col.as_ref(), i, ft).map_err(|m| Mismatch { type_error: m.type_error, msg: format!("in field {name:?}: {}", m.msg) })?
                    }
                    None => buf.extend_from_slice(&NULL.to_be_bytes()),
                }
            }
            Ok(())
        }
        ColumnType::Vector { typ: et, dimensions } => {
            let (values, range) = list_at(arr, i).ok_or_else(|| mismatch(arr, typ))?;
            if range.len() != *dimensions as usize {
                return Err(value_err(format!("vector has {} elements, the column has {dimensions}", range.len())));
            }
            let fixed = et.type_size_for_vector().is_some();
            let mut tmp = Vec::new();
            for j in range {
                if values.is_null(j) {
                    return Err(value_err(format!("null is not allowed inside a vector (element {j})")));
                }
                if fixed {
                    write_value(buf, values.as_ref(), j, et)?;
                } else {
                    tmp.clear();
                    write_value(&mut tmp, values.as_ref(), j, et)?;
                    super::scalars::write_unsigned_vint(buf, tmp.len() as u64);
                    buf.extend_from_slice(&tmp);
                }
            }
            Ok(())
        }
        _ => Err(mismatch(arr, typ)),
    }
}

fn write_native(buf: &mut Vec<u8>, arr: &dyn Array, i: usize, nt: &NativeType, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    let dt = arr.data_type();
    match nt {
        NativeType::Varint if matches!(dt, DataType::Decimal128(_, 0)) => write_varint(buf, &arr.as_primitive::<Decimal128Type>().value(i).to_be_bytes()),
        NativeType::Varint if matches!(dt, DataType::Decimal256(_, 0)) => write_varint(buf, &arr.as_primitive::<Decimal256Type>().value(i).to_be_bytes()),
        NativeType::TinyInt | NativeType::SmallInt | NativeType::Int | NativeType::BigInt | NativeType::Counter | NativeType::Varint => {
            let v = int_at(arr, i).ok_or_else(|| mismatch(arr, typ))?;
            match nt {
                NativeType::TinyInt => buf.extend_from_slice(&ranged::<i8>(v, "tinyint")?.to_be_bytes()),
                NativeType::SmallInt => buf.extend_from_slice(&ranged::<i16>(v, "smallint")?.to_be_bytes()),
                NativeType::Int => buf.extend_from_slice(&ranged::<i32>(v, "int")?.to_be_bytes()),
                NativeType::Varint => write_varint(buf, &v.to_be_bytes()),
                _ => buf.extend_from_slice(&ranged::<i64>(v, "bigint")?.to_be_bytes()),
            }
        }
        NativeType::Double | NativeType::Float => {
            let f = match dt {
                DataType::Float64 => arr.as_primitive::<Float64Type>().value(i),
                DataType::Float32 => arr.as_primitive::<Float32Type>().value(i) as f64,
                DataType::Float16 => arr.as_primitive::<Float16Type>().value(i).to_f64(),
                _ => int_at(arr, i).ok_or_else(|| mismatch(arr, typ))? as f64,
            };
            if matches!(nt, NativeType::Double) {
                buf.extend_from_slice(&f.to_be_bytes());
            } else {
                if f.is_finite() && f.abs() > f32::MAX as f64 {
                    return Err(value_err(format!("{f} is out of range for a 32-bit float")));
                }
                buf.extend_from_slice(&(f as f32).to_be_bytes());
            }
        }
        NativeType::Boolean => match dt {
            DataType::Boolean => buf.push(arr.as_boolean().value(i) as u8),
            _ => return Err(mismatch(arr, typ)),
        },
        NativeType::Blob => buf.extend_from_slice(bytes_at(arr, i).ok_or_else(|| mismatch(arr, typ))?),
        NativeType::Uuid | NativeType::Timeuuid => match dt {
            DataType::FixedSizeBinary(16) => {
                let b = arr.as_fixed_size_binary().value(i);
                if matches!(nt, NativeType::Timeuuid) && b[6] >> 4 != 1 {
                    return Err(value_err("not a time-based (version 1) UUID, as a timeuuid must be".into()));
                }
                buf.extend_from_slice(b)
            }
            _ => return Err(mismatch(arr, typ)),
        },
        NativeType::Inet => match bytes_at(arr, i) {
            Some(b) if b.len() == 4 || b.len() == 16 => buf.extend_from_slice(b),
            Some(b) => return Err(value_err(format!("an address of {} bytes (4 or 16 expected)", b.len()))),
            None => return Err(mismatch(arr, typ)),
        },
        NativeType::Timestamp => {
            let ms = match dt {
                DataType::Timestamp(unit, _) => millis(time_at(arr, i).ok_or_else(|| mismatch(arr, typ))?, unit),
                DataType::Date64 => arr.as_primitive::<Date64Type>().value(i),
                DataType::Date32 => arr.as_primitive::<Date32Type>().value(i) as i64 * 86_400_000,
                _ => int_at(arr, i).map(|v| ranged::<i64>(v, "timestamp")).transpose()?.ok_or_else(|| mismatch(arr, typ))?,
            };
            buf.extend_from_slice(&ms.to_be_bytes())
        }
        NativeType::Date => {
            let days: i64 = match dt {
                DataType::Date32 => arr.as_primitive::<Date32Type>().value(i) as i64,
                DataType::Date64 => arr.as_primitive::<Date64Type>().value(i).div_euclid(86_400_000),
                _ => return Err(mismatch(arr, typ)),
            };
            let raw = u32::try_from(days + (1i64 << 31)).map_err(|_| value_err(format!("{days} days from epoch is out of range for date")))?;
            buf.extend_from_slice(&raw.to_be_bytes())
        }
        NativeType::Time => {
            let ns = match dt {
                DataType::Time32(unit) | DataType::Time64(unit) => nanos(time_at(arr, i).ok_or_else(|| mismatch(arr, typ))?, unit),
                _ => return Err(mismatch(arr, typ)),
            };
            if !(0..NANOS_PER_DAY).contains(&ns) {
                return Err(value_err(format!("{ns} ns is outside a day")));
            }
            buf.extend_from_slice(&ns.to_be_bytes())
        }
        NativeType::Duration => {
            let (months, days, ns) = match dt {
                DataType::Interval(IntervalUnit::MonthDayNano) => {
                    let v = arr.as_primitive::<IntervalMonthDayNanoType>().value(i);
                    (v.months as i64, v.days as i64, v.nanoseconds)
                }
                DataType::Duration(unit) => (0, 0, nanos(time_at(arr, i).ok_or_else(|| mismatch(arr, typ))?, unit)),
                _ => return Err(mismatch(arr, typ)),
            };
            write_signed_vint(buf, months);
            write_signed_vint(buf, days);
            write_signed_vint(buf, ns);
        }
        NativeType::Decimal => match dt {
            DataType::Decimal128(_, scale) => {
                buf.extend_from_slice(&(*scale as i32).to_be_bytes());
                write_varint(buf, &arr.as_primitive::<Decimal128Type>().value(i).to_be_bytes());
            }
            DataType::Decimal256(_, scale) => {
                buf.extend_from_slice(&(*scale as i32).to_be_bytes());
                write_varint(buf, &arr.as_primitive::<Decimal256Type>().value(i).to_be_bytes());
            }
            _ => {
                let v = int_at(arr, i).ok_or_else(|| mismatch(arr, typ))?;
                buf.extend_from_slice(&0i32.to_be_bytes());
                write_varint(buf, &v.to_be_bytes());
            }
        },
        NativeType::Text | NativeType::Ascii => return Err(mismatch(arr, typ)),
        _ => return Err(mismatch(arr, typ)),
    }
    Ok(())
}
