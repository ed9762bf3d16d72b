//! Standalone: the per-type encoders and decoders of `values` and `rows`, callable on their own.
//!
//! For `benchmarks/run_types.py` and tests: [`encode`] / [`decode`] convert one value of
//! a CQL type given by name (`"int"`, `"map<text, int>"`, `"vector<float, 768>"`, a UDT as
//! `"udt<ks.name, field type, ...>"`); [`time_encode`] / [`time_decode`] do it for a list
//! of values `repeat` times in a loop inside Rust and return nanoseconds per value;
//! [`encode_text`] / [`decode_text`] convert between the wire bytes and the CQL text form.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType, UserDefinedType};

use super::mismatch::Mismatch;
use super::types::type_name;
use super::values::write_value;

fn native(name: &str) -> Option<NativeType> {
    Some(match name {
        "ascii" => NativeType::Ascii,
        "boolean" => NativeType::Boolean,
        "blob" => NativeType::Blob,
        "counter" => NativeType::Counter,
        "date" => NativeType::Date,
        "decimal" => NativeType::Decimal,
        "double" => NativeType::Double,
        "duration" => NativeType::Duration,
        "float" => NativeType::Float,
        "int" => NativeType::Int,
        "bigint" => NativeType::BigInt,
        "text" | "varchar" => NativeType::Text,
        "timestamp" => NativeType::Timestamp,
        "inet" => NativeType::Inet,
        "smallint" => NativeType::SmallInt,
        "tinyint" => NativeType::TinyInt,
        "time" => NativeType::Time,
        "timeuuid" => NativeType::Timeuuid,
        "uuid" => NativeType::Uuid,
        "varint" => NativeType::Varint,
        _ => return None,
    })
}

/// Splits `a, b<c, d>, e` at its top-level commas.
fn split_args(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0usize, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// Parses a CQL type name.
pub fn parse_type(s: &str) -> Result<ColumnType<'static>, String> {
    let s = s.trim();
    let Some(open) = s.find('<') else {
        return native(&s.to_ascii_lowercase()).map(ColumnType::Native).ok_or_else(|| format!("unknown CQL type {s:?}"));
    };
    if !s.ends_with('>') {
        return Err(format!("bad CQL type {s:?}"));
    }
    let (head, inner) = (s[..open].trim().to_ascii_lowercase(), &s[open + 1..s.len() - 1]);
    let args = split_args(inner);
    let one = |i: usize| -> Result<Box<ColumnType<'static>>, String> {
        args.get(i).ok_or_else(|| format!("missing type argument in {s:?}")).and_then(|a| parse_type(a)).map(Box::new)
    };
    Ok(match head.as_str() {
        "frozen" => match parse_type(inner)? {
            ColumnType::Collection { typ, .. } => ColumnType::Collection { frozen: true, typ },
            ColumnType::UserDefinedType { definition, .. } => ColumnType::UserDefinedType { frozen: true, definition },
            t => t,
        },
        "list" => ColumnType::Collection { frozen: false, typ: CollectionType::List(one(0)?) },
        "set" => ColumnType::Collection { frozen: false, typ: CollectionType::Set(one(0)?) },
        "map" => ColumnType::Collection { frozen: false, typ: CollectionType::Map(one(0)?, one(1)?) },
        "tuple" => ColumnType::Tuple(args.iter().map(|a| parse_type(a)).collect::<Result<_, _>>()?),
        "vector" => {
            let dims = args.get(1).and_then(|d| d.parse::<u16>().ok()).ok_or_else(|| format!("bad vector dimension in {s:?}"))?;
            ColumnType::Vector { typ: one(0)?, dimensions: dims }
        }
        "udt" => {
            let (keyspace, name) = args[0].split_once('.').ok_or_else(|| format!("udt<keyspace.name, field type, ...> expected, got {s:?}"))?;
            let mut field_types = Vec::new();
            for f in &args[1..] {
                let (fname, ftype) = f.split_once(' ').ok_or_else(|| format!("bad UDT field {f:?}"))?;
                field_types.push((Cow::Owned(fname.to_string()), parse_type(ftype)?));
            }
            let definition = Arc::new(UserDefinedType { name: Cow::Owned(name.into()), keyspace: Cow::Owned(keyspace.into()), field_types });
            ColumnType::UserDefinedType { frozen: true, definition }
        }
        _ => return Err(format!("unknown CQL type {s:?}")),
    })
}

fn typ(cql_type: &str) -> PyResult<ColumnType<'static>> {
    parse_type(cql_type).map_err(PyValueError::new_err)
}

fn mismatch(t: &ColumnType<'_>, m: Mismatch) -> PyErr {
    m.into_err(format_args!("value of CQL type {}", type_name(t)))
}

/// The wire bytes of `value` as a value of `cql_type` (no length prefix).
#[pyfunction]
pub fn encode<'py>(py: Python<'py>, cql_type: &str, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let t = typ(cql_type)?;
    let mut buf = Vec::new();
    write_value(&mut buf, value, &t).map_err(|m| mismatch(&t, m))?;
    Ok(PyBytes::new(py, &buf))
}

/// The Python value of the wire bytes `data` of `cql_type`.
#[pyfunction]
pub fn decode<'py>(py: Python<'py>, cql_type: &str, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    super::fill::start();
    super::rows::to_py(py, data, &typ(cql_type)?)
}

/// The wire bytes (no length prefix) of the value written as text `text` (a CSV field:
/// `super::from_text`) of `cql_type`.
#[pyfunction]
pub fn encode_text<'py>(py: Python<'py>, cql_type: &str, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    let t = typ(cql_type)?;
    let mut buf = Vec::new();
    super::from_text::write_text_value(&mut buf, text, &t).map_err(|m| mismatch(&t, m))?;
    Ok(PyBytes::new(py, &buf))
}

/// The text form (`super::to_text`, what `turbocql unload` writes) of the wire bytes `data`
/// of `cql_type`.
#[pyfunction]
pub fn decode_text(cql_type: &str, data: &[u8]) -> PyResult<String> {
    let t = typ(cql_type)?;
    let mut out = String::new();
    super::fill::start();
    super::to_text::write_text(&mut out, data, &t, false).map_err(|e| PyValueError::new_err(format!("value of CQL type {}: {e}", type_name(&t))))?;
    Ok(out)
}

/// Encodes every value of `values` `repeat` times (into one reused buffer); returns
/// nanoseconds per value.
#[pyfunction]
#[pyo3(signature = (cql_type, values, repeat=1))]
pub fn time_encode(cql_type: &str, values: &Bound<'_, PyList>, repeat: usize) -> PyResult<f64> {
    let t = typ(cql_type)?;
    let items: Vec<Bound<'_, PyAny>> = values.iter().collect();
    let mut buf = Vec::with_capacity(4096);
    let start = Instant::now();
    for _ in 0..repeat {
        for v in &items {
            buf.clear();
            write_value(&mut buf, v, &t).map_err(|m| mismatch(&t, m))?;
        }
    }
    Ok(start.elapsed().as_nanos() as f64 / (repeat * items.len()).max(1) as f64)
}

/// Decodes every bytes object of `encoded` `repeat` times (each Python value made and
/// dropped); returns nanoseconds per value.
#[pyfunction]
#[pyo3(signature = (cql_type, encoded, repeat=1))]
pub fn time_decode(py: Python<'_>, cql_type: &str, encoded: &Bound<'_, PyList>, repeat: usize) -> PyResult<f64> {
    let t = typ(cql_type)?;
    let items: Vec<Vec<u8>> =
        encoded.iter().map(|b| b.extract::<Vec<u8>>().map_err(|_| PyTypeError::new_err("encoded values must be bytes"))).collect::<PyResult<_>>()?;
    let start = Instant::now();
    for _ in 0..repeat {
        for b in &items {
            // Each value is one decoding, with its own fill budget.
            super::fill::start();
            drop(super::rows::to_py(py, b, &t)?);
        }
    }
    Ok(start.elapsed().as_nanos() as f64 / (repeat * items.len()).max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types() {
        for name in ["int", "list<int>", "map<text, int>", "frozen<set<text>>", "vector<float, 768>", "frozen<tuple<int, text>>"] {
            assert_eq!(type_name(&parse_type(name).unwrap()), name);
        }
        assert_eq!(type_name(&parse_type("tuple<int, text>").unwrap()), "frozen<tuple<int, text>>");
        assert_eq!(type_name(&parse_type("udt<ks.point, x int, y text>").unwrap()), "frozen<ks.point>");
        assert!(parse_type("nope").is_err());
        assert!(parse_type("vector<float, x>").is_err());
    }
}
