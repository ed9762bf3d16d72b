//! To text: a CQL value's bytes written as the text `super::from_text` reads back to the same
//! bytes (what `turbocql unload` writes to CSV), in cqlsh's forms: `2024-01-02
//! 03:04:05.678+0000`, `0x0aff`, `1y2mo3d4h`, `{'a': 1}`, `['x', 'y']`, `(1, 'a')`,
//! `{street: 'Main', zip: 1}`. Strings and other text-like values are quoted inside a
//! collection, tuple or UDT (`'it''s'`), bare at the top. Floats are written in the
//! shortest form that reads back to the same bits.

use std::fmt::Write;

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

use super::rows::{civil_from_days, inet_text};
use super::types::empty_reads_as_null;

/// Why bytes could not be written as text: a value shorter or longer than its type says.
pub type Malformed = String;

fn take<'b>(b: &mut &'b [u8], n: usize) -> Result<&'b [u8], Malformed> {
    if b.len() < n {
        return Err(format!("a value ends {} bytes early", n - b.len()));
    }
    let (head, tail) = b.split_at(n);
    *b = tail;
    Ok(head)
}

fn read_i32(b: &mut &[u8]) -> Result<i32, Malformed> {
    Ok(i32::from_be_bytes(take(b, 4)?.try_into().unwrap()))
}

/// The fields a tuple or UDT value left out, each written `null`: charged to the page's fill
/// budget (`super::fill`), their count being the metadata's word.
fn charge_missing(fields: usize) -> Result<(), String> {
    super::fill::charge(fields.saturating_mul(", null".len()))
}

/// A length-prefixed element: None for null.
fn read_cell<'b>(b: &mut &'b [u8]) -> Result<Option<&'b [u8]>, Malformed> {
    let n = read_i32(b)?;
    if n < 0 {
        return Ok(None);
    }
    take(b, n as usize).map(Some)
}

fn read_vint(b: &mut &[u8]) -> Result<i64, Malformed> {
    let first = *b.first().ok_or("a duration ends early")?;
    let extra = first.leading_ones() as usize;
    let bytes = take(b, extra + 1)?;
    let mut v: u64 = if extra == 8 { 0 } else { (first & (0xff >> extra)) as u64 };
    for byte in &bytes[1..] {
        v = (v << 8) | *byte as u64;
    }
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

fn exact<const N: usize>(b: &[u8], what: &str) -> Result<[u8; N], Malformed> {
    b.try_into().map_err(|_| format!("a {what} of {} bytes ({N} expected)", b.len()))
}

/// Whether a value of this type is quoted inside a collection.
fn quoted(typ: &ColumnType<'_>) -> bool {
    matches!(typ, ColumnType::Native(NativeType::Text | NativeType::Ascii | NativeType::Inet | NativeType::Timestamp | NativeType::Date | NativeType::Time))
}

/// Writes the value `b` (not null) of type `typ`; `nested`: inside a collection, tuple or UDT.
pub fn write_text(out: &mut String, b: &[u8], typ: &ColumnType<'_>, nested: bool) -> Result<(), Malformed> {
    if nested && quoted(typ) {
        let mut inner = String::new();
        write_text(&mut inner, b, typ, false)?;
        out.push('\'');
        out.push_str(&inner.replace('\'', "''"));
        out.push('\'');
        return Ok(());
    }
    match typ {
        ColumnType::Native(nt) => write_native(out, b, nt),
        ColumnType::Collection { typ: ct, .. } => {
            let mut b = b;
            let n = read_i32(&mut b)?;
            let (open, close) = match ct {
                CollectionType::List(_) => ('[', ']'),
                _ => ('{', '}'),
            };
            out.push(open);
            for k in 0..n.max(0) {
                if k > 0 {
                    out.push_str(", ");
                }
                match ct {
                    CollectionType::List(et) | CollectionType::Set(et) => element(out, &mut b, et)?,
                    CollectionType::Map(kt, vt) => {
                        element(out, &mut b, kt)?;
                        out.push_str(": ");
                        element(out, &mut b, vt)?;
                    }
                    _ => return Err("an unknown collection type".into()),
                }
            }
            out.push(close);
            Ok(())
        }
        ColumnType::Tuple(types) => {
            let mut b = b;
            let mut charged = false;
            out.push('(');
            for (k, et) in types.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                if b.is_empty() {
                    if !charged {
                        charge_missing(types.len() - k)?;
                        charged = true;
                    }
                    out.push_str("null");
                    continue;
                }
                field(out, &mut b, et)?;
            }
            out.push(')');
            Ok(())
        }
        ColumnType::UserDefinedType { definition, .. } => {
            let mut b = b;
            let mut charged = false;
            out.push('{');
            for (k, (name, ft)) in definition.field_types.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push_str(": ");
                if b.is_empty() {
                    if !charged {
                        charge_missing(definition.field_types.len() - k)?;
                        charged = true;
                    }
                    out.push_str("null");
                    continue;
                }
                field(out, &mut b, ft)?;
            }
            out.push('}');
            Ok(())
        }
        ColumnType::Vector { typ: et, dimensions } => {
            let mut b = b;
            let size = et.type_size_for_vector();
            out.push('[');
            for k in 0..*dimensions as usize {
                if k > 0 {
                    out.push_str(", ");
                }
                let n = match size {
                    Some(n) => n,
                    None => {
                        let first = *b.first().ok_or("a vector ends early")?;
                        let extra = first.leading_ones() as usize;
                        let bytes = take(&mut b, extra + 1)?;
                        let mut v: u64 = if extra == 8 { 0 } else { (first & (0xff >> extra)) as u64 };
                        for byte in &bytes[1..] {
                            v = (v << 8) | *byte as u64;
                        }
                        v as usize
                    }
                };
                write_text(out, take(&mut b, n)?, et, true)?;
            }
            out.push(']');
            Ok(())
        }
        _ => Err(format!("CQL type {typ:?} has no text form")),
    }
}

fn element(out: &mut String, b: &mut &[u8], typ: &ColumnType<'_>) -> Result<(), Malformed> {
    match read_cell(b)? {
        None => Err("a null inside a collection".into()),
        // An element a node stores empty (`[blobAsInt(0x)]`) reads as null, as in cqlsh.
        Some(v) => nested_value(out, v, typ),
    }
}

fn field(out: &mut String, b: &mut &[u8], typ: &ColumnType<'_>) -> Result<(), Malformed> {
    match read_cell(b)? {
        Some(v) => nested_value(out, v, typ),
        None => {
            out.push_str("null");
            Ok(())
        }
    }
}

fn nested_value(out: &mut String, v: &[u8], typ: &ColumnType<'_>) -> Result<(), Malformed> {
    if v.is_empty() && empty_reads_as_null(typ) {
        out.push_str("null");
        return Ok(());
    }
    write_text(out, v, typ, true)
}

fn write_native(out: &mut String, b: &[u8], nt: &NativeType) -> Result<(), Malformed> {
    match nt {
        NativeType::Text | NativeType::Ascii => out.push_str(std::str::from_utf8(b).map_err(|_| "text that is not UTF-8")?),
        NativeType::TinyInt => write!(out, "{}", i8::from_be_bytes(exact(b, "tinyint")?)).unwrap(),
        NativeType::SmallInt => write!(out, "{}", i16::from_be_bytes(exact(b, "smallint")?)).unwrap(),
        NativeType::Int => write!(out, "{}", i32::from_be_bytes(exact(b, "int")?)).unwrap(),
        NativeType::BigInt | NativeType::Counter => write!(out, "{}", i64::from_be_bytes(exact(b, "bigint")?)).unwrap(),
        NativeType::Varint => write_varint(out, b)?,
        NativeType::Float => write_float(out, f32::from_be_bytes(exact(b, "float")?) as f64, true),
        NativeType::Double => write_float(out, f64::from_be_bytes(exact(b, "double")?), false),
        NativeType::Boolean => out.push_str(if exact::<1>(b, "boolean")?[0] != 0 { "true" } else { "false" }),
        NativeType::Uuid | NativeType::Timeuuid => write!(out, "{}", uuid::Uuid::from_bytes(exact(b, "uuid")?)).unwrap(),
        NativeType::Inet => {
            let ip = match b.len() {
                4 => std::net::IpAddr::from(exact::<4>(b, "inet")?),
                16 => std::net::IpAddr::from(exact::<16>(b, "inet")?),
                n => return Err(format!("an inet of {n} bytes")),
            };
            out.push_str(&inet_text(&ip));
        }
        NativeType::Blob => {
            out.push_str("0x");
            for byte in b {
                write!(out, "{byte:02x}").unwrap();
            }
        }
        NativeType::Timestamp => {
            let ms = i64::from_be_bytes(exact(b, "timestamp")?);
            write_date(out, ms.div_euclid(86_400_000));
            let in_day = ms.rem_euclid(86_400_000);
            write!(out, " {:02}:{:02}:{:02}.{:03}+0000", in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000).unwrap();
        }
        NativeType::Date => write_date(out, u32::from_be_bytes(exact(b, "date")?) as i64 - (1i64 << 31)),
        NativeType::Time => {
            let ns = i64::from_be_bytes(exact(b, "time")?);
            let s = ns / 1_000_000_000;
            write!(out, "{:02}:{:02}:{:02}.{:09}", s / 3600, s / 60 % 60, s % 60, ns % 1_000_000_000).unwrap();
        }
        NativeType::Duration => {
            let mut b = b;
            let (months, days, nanos) = (read_vint(&mut b)?, read_vint(&mut b)?, read_vint(&mut b)?);
            write_duration(out, months, days, nanos);
        }
        NativeType::Decimal => {
            let scale = i32::from_be_bytes(exact(b.get(..4).ok_or("a decimal shorter than its scale")?, "decimal scale")?);
            let mut digits = String::new();
            write_varint(&mut digits, &b[4..])?;
            let (sign, digits) = match digits.strip_prefix('-') {
                Some(d) => ("-", d.to_string()),
                None => ("", digits),
            };
            out.push_str(sign);
            // The exponent of the first digit, as Python's str(Decimal) and Java's
            // BigDecimal.toString() (Cassandra's) decide between plain and scientific notation.
            let adjusted = digits.len() as i64 - 1 - scale as i64;
            if scale <= 0 {
                out.push_str(&digits);
                if scale < 0 {
                    write!(out, "E+{}", -(scale as i64)).unwrap();
                }
            } else if adjusted < -6 {
                // Scientific: a scale of 2^31 - 1 in plain notation is 2 GB of zeros from a
                // value of 5 bytes (found by the columns fuzz target).
                out.push_str(&digits[..1]);
                if digits.len() > 1 {
                    out.push('.');
                    out.push_str(&digits[1..]);
                }
                write!(out, "E{adjusted}").unwrap();
            } else {
                let scale = scale as usize;
                let padded = if digits.len() <= scale { format!("{}{digits}", "0".repeat(scale + 1 - digits.len())) } else { digits };
                let point = padded.len() - scale;
                out.push_str(&padded[..point]);
                out.push('.');
                out.push_str(&padded[point..]);
            }
        }
        other => return Err(format!("CQL type {other:?} has no text form")),
    }
    Ok(())
}

fn write_float(out: &mut String, f: f64, single: bool) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else if f != 0.0 && !(1e-5..1e16).contains(&f.abs()) {
        // Exponent form past these (Display would write every digit of 1e300).
        if single {
            write!(out, "{:e}", f as f32).unwrap();
        } else {
            write!(out, "{f:e}").unwrap();
        }
    } else if single {
        write!(out, "{}", f as f32).unwrap();
    } else {
        write!(out, "{f}").unwrap();
    }
}

fn write_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    if y < 0 {
        write!(out, "-{:04}-{m:02}-{d:02}", -y).unwrap();
    } else if y > 9999 {
        write!(out, "+{y}-{m:02}-{d:02}").unwrap();
    } else {
        write!(out, "{y:04}-{m:02}-{d:02}").unwrap();
    }
}

fn write_duration(out: &mut String, months: i64, days: i64, nanos: i64) {
    if months < 0 || days < 0 || nanos < 0 {
        out.push('-');
    }
    let (months, days, mut nanos) = (months.unsigned_abs(), days.unsigned_abs(), nanos.unsigned_abs());
    let start = out.len();
    for (n, unit) in [(months / 12, "y"), (months % 12, "mo"), (days, "d")] {
        if n > 0 {
            write!(out, "{n}{unit}").unwrap();
        }
    }
    for (size, unit) in [(3_600_000_000_000u64, "h"), (60_000_000_000, "m"), (1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")] {
        if nanos >= size {
            write!(out, "{}{unit}", nanos / size).unwrap();
            nanos %= size;
        }
    }
    if out.len() == start {
        out.push_str("0s");
    }
}

/// The most bytes of a varint (or a decimal's unscaled value) written as text: about 4,300
/// digits, the limit Python puts on `str(int)` (`sys.int_max_str_digits`) for the same reason:
/// writing n bytes in decimal takes time in n², so a page of large values from a hostile
/// server would take hours of CPU (a 64 KB varint took 30 s). A larger one fails its column.
pub const VARINT_TEXT_MAX_BYTES: usize = 1786;

/// A varint (two's complement, big endian) in decimal.
fn write_varint(out: &mut String, b: &[u8]) -> Result<(), Malformed> {
    if b.is_empty() {
        out.push('0');
        return Ok(());
    }
    if b.len() > VARINT_TEXT_MAX_BYTES {
        return Err(format!(
            "an integer of {} bytes: its text form is limited to {VARINT_TEXT_MAX_BYTES} bytes (about 4,300 digits, as Python's str(int))",
            b.len()
        ));
    }
    let negative = b[0] & 0x80 != 0;
    // Magnitude, big endian.
    let mut mag: Vec<u8> = b.to_vec();
    if negative {
        let mut carry = 1u16;
        for byte in mag.iter_mut().rev() {
            let v = (!*byte) as u16 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
    }
    // 32-bit limbs, most significant first, divided by 10^9 in turn: nine digits a pass.
    let head = mag.len() % 4;
    let mut limbs: Vec<u32> = Vec::with_capacity(mag.len() / 4 + 1);
    if head > 0 {
        limbs.push(mag[..head].iter().fold(0u32, |a, &x| (a << 8) | x as u32));
    }
    limbs.extend(mag[head..].chunks_exact(4).map(|c| u32::from_be_bytes(c.try_into().unwrap())));
    let mut first = limbs.iter().take_while(|&&l| l == 0).count();
    // Base 10^9 digits, least significant first.
    let mut groups: Vec<u32> = Vec::new();
    while first < limbs.len() {
        let mut rem = 0u64;
        for l in limbs[first..].iter_mut() {
            let cur = (rem << 32) | *l as u64;
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem as u32);
        while first < limbs.len() && limbs[first] == 0 {
            first += 1;
        }
    }
    if negative {
        out.push('-');
    }
    match groups.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            write!(out, "{top}").unwrap();
            for g in rest.iter().rev() {
                write!(out, "{g:09}").unwrap();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: &[u8], typ: ColumnType<'_>) -> String {
        let mut s = String::new();
        write_text(&mut s, b, &typ, false).unwrap();
        s
    }

    #[test]
    fn varints_and_decimals() {
        let n = |t| ColumnType::Native(t);
        assert_eq!(text(&[0xff], n(NativeType::Varint)), "-1");
        assert_eq!(text(&[0x00, 0x80], n(NativeType::Varint)), "128");
        assert_eq!(text(&[0xff, 0, 0, 0, 0, 0, 0, 0, 0], n(NativeType::Varint)), "-18446744073709551616");
        assert_eq!(text(&[0, 0, 0, 4, 0x12, 0xd6, 0x44], n(NativeType::Decimal)), "123.4500");
        assert_eq!(text(&[0, 0, 0, 2, 0xfb], n(NativeType::Decimal)), "-0.05");
        assert_eq!(text(&[0xff, 0xff, 0xff, 0xfe, 15], n(NativeType::Decimal)), "15E+2");
        assert_eq!(text(&[0, 0, 0, 8, 0x0c], n(NativeType::Decimal)), "1.2E-7");
        assert_eq!(text(&[0, 0, 0, 7, 0x0c], n(NativeType::Decimal)), "0.0000012");
        assert_eq!(text(&[0x7f, 0xff, 0xff, 0xff, 0x05], n(NativeType::Decimal)), "5E-2147483647");
        assert_eq!(text(&[0, 0, 0, 0], n(NativeType::Varint)), "0");
        assert_eq!(text(&[0x80, 0, 0, 0, 0], n(NativeType::Varint)), "-549755813888");
        assert_eq!(text(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], n(NativeType::Varint)), "79228162514264337593543950336");
        assert_eq!(text(&[0x3b, 0x9a, 0xca, 0x00], n(NativeType::Varint)), "1000000000");
    }

    #[test]
    fn varints_past_the_text_limit_are_refused() {
        let n = ColumnType::Native(NativeType::Varint);
        let mut big = vec![0x7f];
        big.resize(VARINT_TEXT_MAX_BYTES, 0xff);
        let digits = text(&big, n.clone());
        assert!(digits.len() > 4_290 && digits.bytes().all(|c| c.is_ascii_digit()), "{}", digits.len());
        big.push(0xff);
        let mut s = String::new();
        assert!(write_text(&mut s, &big, &n, false).unwrap_err().contains("limited to 1786 bytes"));
    }

    #[test]
    fn times_and_durations() {
        let n = |t| ColumnType::Native(t);
        assert_eq!(text(&(-1i64).to_be_bytes(), n(NativeType::Timestamp)), "1969-12-31 23:59:59.999+0000");
        assert_eq!(text(&((1u32 << 31) + 1).to_be_bytes(), n(NativeType::Date)), "1970-01-02");
        assert_eq!(text(&1_500_000_000i64.to_be_bytes(), n(NativeType::Time)), "00:00:01.500000000");
        let mut s = String::new();
        write_duration(&mut s, 14, 25, 18_367_008_009_010);
        assert_eq!(s, "1y2mo25d5h6m7s8ms9us10ns");
        s.clear();
        write_duration(&mut s, 0, -1, 0);
        assert_eq!(s, "-1d");
    }

    #[test]
    fn floats_are_shortest_round_trip() {
        let mut s = String::new();
        write_float(&mut s, 0.1f32 as f64, true);
        assert_eq!(s, "0.1");
        s.clear();
        write_float(&mut s, 0.1, false);
        assert_eq!(s, "0.1");
        s.clear();
        write_float(&mut s, 1e300, false);
        assert_eq!(s, "1e300");
    }
}
