//! Scalars: one Python value → the CQL bytes of a single-valued type (integers, text,
//! floats, dates and timestamps, uuids, blobs, varints, decimals, vints), for `values`.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDate, PyDateAccess, PyDateTime, PyDict, PyFloat, PyString, PyTimeAccess, PyTzInfoAccess};

use super::mismatch::{expected, type_err, value_err, Mismatch};
use crate::pyrefs;

pub(crate) fn extract_int<T: TryFrom<i128>>(v: &Bound<'_, PyAny>, bits: u32) -> Result<T, Mismatch> {
    if v.is_instance_of::<PyFloat>() {
        return Err(expected("int", v));
    }
    match v.extract::<i128>() {
        Ok(n) => T::try_from(n).map_err(|_| value_err(format!("{n} is out of range for a {bits}-bit signed integer"))),
        Err(e) => Python::attach(|py| {
            if e.is_instance_of::<PyOverflowError>(py) {
                Err(value_err(format!("{} is out of range for a {bits}-bit signed integer", v.str().map(|s| s.to_string()).unwrap_or_default())))
            } else {
                Err(expected("int", v))
            }
        }),
    }
}

pub(crate) fn extract_str<'a>(v: &'a Bound<'_, PyAny>) -> Result<std::borrow::Cow<'a, str>, Mismatch> {
    let s = v.cast::<PyString>().map_err(|_| expected("str", v))?;
    s.to_cow().map_err(|e| value_err(format!("string is not valid UTF-8: {e}")))
}

pub(crate) fn extract_f64(v: &Bound<'_, PyAny>) -> Result<f64, Mismatch> {
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(expected("float", v));
    }
    v.extract::<f64>().map_err(|_| expected("float", v))
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

pub(crate) fn timestamp_millis(v: &Bound<'_, PyAny>) -> Result<i64, Mismatch> {
    if let Ok(dt) = v.cast::<PyDateTime>() {
        let days = days_from_civil(dt.get_year() as i64, dt.get_month() as u32, dt.get_day() as u32);
        let mut secs = days * 86400 + dt.get_hour() as i64 * 3600 + dt.get_minute() as i64 * 60 + dt.get_second() as i64;
        if dt.get_tzinfo().is_some() {
            let off = v.call_method0("utcoffset").map_err(|e| value_err(format!("utcoffset() failed: {e}")))?;
            if !off.is_none() {
                let total: f64 = off.call_method0("total_seconds").and_then(|t| t.extract()).map_err(|e| value_err(format!("bad utcoffset(): {e}")))?;
                secs -= total.round() as i64;
            }
        }
        return Ok(secs * 1000 + (dt.get_microsecond() / 1000) as i64);
    }
    if let Ok(d) = v.cast::<PyDate>() {
        return Ok(days_from_civil(d.get_year() as i64, d.get_month() as u32, d.get_day() as u32) * 86_400_000);
    }
    if v.is_instance_of::<PyBool>() {
        return Err(expected("datetime", v));
    }
    if let Ok(n) = v.extract::<i64>() {
        return Ok(n);
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(f.value() as i64);
    }
    Err(expected("datetime, date or int milliseconds", v))
}

pub(crate) fn uuid_bytes(v: &Bound<'_, PyAny>, timeuuid: bool) -> Result<[u8; 16], Mismatch> {
    let is_uuid = Python::attach(|py| pyrefs::codec(py).map(|r| v.is_instance(r.UUID.bind(py)).unwrap_or(false)).unwrap_or(false));
    if !is_uuid {
        return Err(expected("uuid.UUID", v));
    }
    let b: [u8; 16] = v.getattr(pyo3::intern!(v.py(), "int")).and_then(|n| n.extract::<u128>()).map_err(|e| value_err(format!("bad UUID: {e}")))?.to_be_bytes();
    if timeuuid && b[6] >> 4 != 1 {
        return Err(value_err(format!("UUID version {} is not a time-based (version 1) UUID", b[6] >> 4)));
    }
    Ok(b)
}

pub(crate) fn write_blob(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Result<(), Mismatch> {
    if let Ok(b) = v.cast::<PyBytes>() {
        buf.extend_from_slice(b.as_bytes());
        return Ok(());
    }
    if let Ok(b) = v.cast::<PyByteArray>() {
        buf.extend_from_slice(&b.to_vec());
        return Ok(());
    }
    if v.is_instance_of::<PyString>() {
        return Err(type_err("expected bytes, bytearray or memoryview, got str (encode it first)".into()));
    }
    // Any other object with the buffer protocol (memoryview, numpy arrays, array.array).
    match pyo3::buffer::PyBuffer::<u8>::get(v) {
        Ok(pb) => {
            let vec = pb.to_vec(v.py()).map_err(|e| value_err(format!("unreadable buffer: {e}")))?;
            buf.extend_from_slice(&vec);
            Ok(())
        }
        Err(_) => Err(expected("bytes, bytearray or memoryview", v)),
    }
}

/// Big-endian two's complement, shortest form (the CQL varint encoding).
pub(crate) fn write_varint(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Result<(), Mismatch> {
    if v.is_instance_of::<PyFloat>() {
        return Err(expected("int", v));
    }
    if let Ok(n) = v.extract::<i128>() {
        let bytes = n.to_be_bytes();
        let mut i = 0;
        while i < 15 {
            let (b, next) = (bytes[i], bytes[i + 1]);
            if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
                i += 1;
            } else {
                break;
            }
        }
        buf.extend_from_slice(&bytes[i..]);
        return Ok(());
    }
    let bits: usize = v.call_method0("bit_length").and_then(|b| b.extract()).map_err(|_| expected("int", v))?;
    let n = bits / 8 + 1;
    let kw = PyDict::new(v.py());
    let _ = kw.set_item("signed", true);
    let b = v.call_method("to_bytes", (n, "big"), Some(&kw)).map_err(|e| value_err(format!("{e}")))?;
    buf.extend_from_slice(b.cast::<PyBytes>().map_err(|_| value_err("to_bytes".into()))?.as_bytes());
    Ok(())
}

pub(crate) fn write_decimal(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Result<(), Mismatch> {
    let py = v.py();
    let tuple = if v.is_instance_of::<PyFloat>() || (v.is_instance_of::<pyo3::types::PyInt>() && !v.is_instance_of::<PyBool>()) {
        let dec = pyrefs::codec(py).map_err(|e| value_err(format!("{e}")))?.Decimal.bind(py);
        dec.call1((v.str().map_err(|e| value_err(format!("{e}")))?,)).and_then(|d| d.call_method0("as_tuple"))
    } else {
        v.call_method0("as_tuple")
    }
    .map_err(|_| expected("decimal.Decimal", v))?;
    let (sign, digits, exponent): (i64, Vec<u8>, Bound<'_, PyAny>) = tuple.extract().map_err(|_| expected("decimal.Decimal", v))?;
    let exponent: i64 = exponent.extract().map_err(|_| value_err("NaN and Infinity cannot be stored in a decimal".into()))?;
    let mut digit_str: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    if digit_str.is_empty() {
        digit_str.push('0');
    }
    if sign == 1 {
        digit_str.insert(0, '-');
    }
    let scale = i32::try_from(-exponent).map_err(|_| value_err("decimal exponent out of range".into()))?;
    let unscaled = py.get_type::<pyo3::types::PyInt>().call1((digit_str,)).map_err(|e| value_err(format!("{e}")))?;
    buf.extend_from_slice(&scale.to_be_bytes());
    write_varint(buf, &unscaled)
}

pub(crate) fn write_unsigned_vint(buf: &mut Vec<u8>, mut v: u64) {
    // CQL [unsigned vint]: the number of extra bytes is encoded as leading 1 bits.
    let mut tmp = [0u8; 9];
    let magnitude = 64 - v.leading_zeros() as usize;
    let extra = if magnitude <= 7 { 0 } else { ((magnitude - 1) / 7).min(8) };
    if extra == 8 {
        buf.push(0xff);
        buf.extend_from_slice(&v.to_be_bytes());
        return;
    }
    for i in (0..=extra).rev() {
        tmp[i] = (v & 0xff) as u8;
        v >>= 8;
    }
    tmp[0] |= !(0xffu8 >> extra);
    buf.extend_from_slice(&tmp[..=extra]);
}

pub(crate) fn write_signed_vint(buf: &mut Vec<u8>, v: i64) {
    write_unsigned_vint(buf, ((v << 1) ^ (v >> 63)) as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(1, 1, 1), -719162);
    }

    #[test]
    fn vints() {
        let enc = |v: u64| {
            let mut b = Vec::new();
            write_unsigned_vint(&mut b, v);
            b
        };
        assert_eq!(enc(0), vec![0]);
        assert_eq!(enc(127), vec![127]);
        assert_eq!(enc(128), vec![0x80, 0x80]);
        assert_eq!(enc(u64::MAX)[0], 0xff);
        let mut b = Vec::new();
        write_signed_vint(&mut b, -1);
        assert_eq!(b, vec![1]);
    }
}
