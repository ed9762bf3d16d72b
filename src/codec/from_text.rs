//! From text: a CQL value written as text (a CSV field, a JSON string, a string column of an
//! Arrow table) serialized as the column's CQL type: the forms cqlsh and `turbocql unload`
//! write (`2024-01-02 03:04:05.678+0000`, `0x0aff`, `1h30m`, `123.45`) and the usual ISO
//! 8601 spellings. Collections, tuples, UDTs and vectors are read as CQL literals
//! (`[1, 2]`, `{'a': 1}`, `(1, 'x')`, `{street: 'Main'}`), and as JSON (`["a"]`, `{"a": 1}`).

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

use super::mismatch::{type_err, value_err, Mismatch};
use super::scalars::write_signed_vint;
use super::text_scalars::{decimal_parts, parse_date, parse_duration, parse_float, parse_time, parse_timestamp, write_decimal_digits};
use super::types::{type_name, NANOS_PER_DAY};

/// Writes the value `s` (already unquoted) of CQL type `typ`, without its length.
pub fn write_text_value(buf: &mut Vec<u8>, s: &str, typ: &ColumnType<'_>) -> Result<(), Mismatch> {
    let ColumnType::Native(nt) = typ else {
        let mut lit = Literal { s, pos: 0 };
        lit.value(buf, typ)?;
        lit.skip_ws();
        if lit.pos != s.len() {
            return Err(value_err(format!("unexpected {:?} at character {} of {s:?}", &s[lit.pos..], lit.pos + 1)));
        }
        return Ok(());
    };
    let t = s.trim();
    let bad = |what: &str| value_err(format!("{s:?} is not {what}"));
    match nt {
        NativeType::Text => buf.extend_from_slice(s.as_bytes()),
        NativeType::Ascii => {
            if !s.is_ascii() {
                return Err(value_err(format!("{s:?} contains non-ASCII characters")));
            }
            buf.extend_from_slice(s.as_bytes())
        }
        NativeType::TinyInt => buf.extend_from_slice(&t.parse::<i8>().map_err(|_| bad("a tinyint (8-bit integer)"))?.to_be_bytes()),
        NativeType::SmallInt => buf.extend_from_slice(&t.parse::<i16>().map_err(|_| bad("a smallint (16-bit integer)"))?.to_be_bytes()),
        NativeType::Int => buf.extend_from_slice(&t.parse::<i32>().map_err(|_| bad("an int (32-bit integer)"))?.to_be_bytes()),
        NativeType::BigInt | NativeType::Counter => buf.extend_from_slice(&t.parse::<i64>().map_err(|_| bad("a bigint (64-bit integer)"))?.to_be_bytes()),
        NativeType::Varint => write_decimal_digits(buf, t).ok_or_else(|| bad("an integer"))?,
        NativeType::Double => buf.extend_from_slice(&parse_float(t).ok_or_else(|| bad("a number"))?.to_be_bytes()),
        NativeType::Float => {
            let f = parse_float(t).ok_or_else(|| bad("a number"))?;
            if f.is_finite() && f.abs() > f32::MAX as f64 {
                return Err(value_err(format!("{f} is out of range for a 32-bit float")));
            }
            buf.extend_from_slice(&(f as f32).to_be_bytes())
        }
        NativeType::Boolean => buf.push(match t.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => 1,
            "false" | "0" | "no" => 0,
            _ => return Err(bad("a boolean (true or false)")),
        }),
        NativeType::Uuid | NativeType::Timeuuid => {
            let u = uuid::Uuid::parse_str(t).map_err(|_| bad("a UUID"))?;
            if matches!(nt, NativeType::Timeuuid) && u.get_version_num() != 1 {
                return Err(value_err(format!("{t} is not a time-based (version 1) UUID, as a timeuuid must be")));
            }
            buf.extend_from_slice(u.as_bytes())
        }
        NativeType::Inet => match t.parse::<std::net::IpAddr>().map_err(|_| bad("an IPv4 or IPv6 address"))? {
            std::net::IpAddr::V4(a) => buf.extend_from_slice(&a.octets()),
            std::net::IpAddr::V6(a) => buf.extend_from_slice(&a.octets()),
        },
        NativeType::Blob => {
            let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).ok_or_else(|| bad("a blob (0x followed by hex digits)"))?;
            if hex.len() % 2 != 0 {
                return Err(bad("a blob (an even number of hex digits after 0x)"));
            }
            for pair in hex.as_bytes().chunks(2) {
                let hi = (pair[0] as char).to_digit(16).ok_or_else(|| bad("a blob (0x followed by hex digits)"))?;
                let lo = (pair[1] as char).to_digit(16).ok_or_else(|| bad("a blob (0x followed by hex digits)"))?;
                buf.push((hi * 16 + lo) as u8);
            }
        }
        NativeType::Timestamp => {
            buf.extend_from_slice(&parse_timestamp(t).ok_or_else(|| bad("a timestamp (such as 2024-01-02 03:04:05.678+0000)"))?.to_be_bytes())
        }
        NativeType::Date => {
            let days = match t.parse::<i64>() {
                Ok(days) => days,
                Err(_) => parse_date(t).ok_or_else(|| bad("a date (YYYY-MM-DD)"))?,
            };
            let raw = u32::try_from(days + (1i64 << 31)).map_err(|_| value_err(format!("{t} is out of range for date")))?;
            buf.extend_from_slice(&raw.to_be_bytes())
        }
        NativeType::Time => {
            let ns = match t.parse::<i64>() {
                Ok(ns) => ns,
                Err(_) => parse_time(t).ok_or_else(|| bad("a time (HH:MM:SS.fffffffff)"))?,
            };
            if !(0..NANOS_PER_DAY).contains(&ns) {
                return Err(value_err(format!("{t} is outside a day")));
            }
            buf.extend_from_slice(&ns.to_be_bytes())
        }
        NativeType::Duration => {
            let (months, days, nanos) = parse_duration(t).ok_or_else(|| bad("a duration (such as 1y2mo3d4h5m6s7ms8us9ns)"))?;
            write_signed_vint(buf, months);
            write_signed_vint(buf, days);
            write_signed_vint(buf, nanos);
        }
        NativeType::Decimal => {
            let (digits, scale) = decimal_parts(t).ok_or_else(|| bad("a decimal number"))?;
            buf.extend_from_slice(&scale.to_be_bytes());
            write_decimal_digits(buf, &digits).ok_or_else(|| bad("a decimal number"))?;
        }
        other => return Err(type_err(format!("CQL type {other:?} cannot be read from text"))),
    }
    Ok(())
}

/// A CQL (or JSON) literal being read: a collection, tuple, UDT or vector, and the scalars
/// inside it (quoted with `'` or `"`, or bare).
struct Literal<'a> {
    s: &'a str,
    pos: usize,
}

impl Literal<'_> {
    fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with(char::is_whitespace) {
            self.pos += self.s[self.pos..].chars().next().map_or(1, char::len_utf8);
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.as_bytes().get(self.pos).copied()
    }

    fn error(&self, what: &str) -> Mismatch {
        value_err(format!("{what} at character {} of {:?}", self.pos + 1, self.s))
    }

    fn expect(&mut self, c: u8) -> Result<(), Mismatch> {
        if self.peek() != Some(c) {
            return Err(self.error(&format!("expected {:?}", c as char)));
        }
        self.pos += 1;
        Ok(())
    }

    /// After an element: true at the closing `close`, false after a separating comma.
    fn closes(&mut self, close: u8) -> Result<bool, Mismatch> {
        match self.peek() {
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error(&format!("expected ',' or {:?}", close as char))),
        }
    }

    /// A scalar: quoted (`'it''s'`, `"a\"b"`), else bare up to the next delimiter.
    /// None for a bare `null`.
    fn scalar(&mut self) -> Result<Option<String>, Mismatch> {
        match self.peek() {
            Some(b'\'') => {
                self.pos += 1;
                let mut out = String::new();
                loop {
                    let rest = &self.s[self.pos..];
                    let end = rest.find('\'').ok_or_else(|| self.error("unterminated quoted string"))?;
                    out.push_str(&rest[..end]);
                    self.pos += end + 1;
                    if self.s[self.pos..].starts_with('\'') {
                        out.push('\'');
                        self.pos += 1;
                    } else {
                        return Ok(Some(out));
                    }
                }
            }
            Some(b'"') => {
                self.pos += 1;
                let mut out = String::new();
                let mut chars = self.s[self.pos..].char_indices();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '"' => {
                            self.pos += i + 1;
                            return Ok(Some(out));
                        }
                        '\\' => match chars.next().map(|(_, e)| e) {
                            Some('n') => out.push('\n'),
                            Some('t') => out.push('\t'),
                            Some('r') => out.push('\r'),
                            Some('b') => out.push('\u{8}'),
                            Some('f') => out.push('\u{c}'),
                            Some('u') => {
                                let hex: String = (0..4).filter_map(|_| chars.next().map(|(_, h)| h)).collect();
                                let code = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).ok_or_else(|| self.error("a bad \\u escape"))?;
                                out.push(code);
                            }
                            Some(e) => out.push(e),
                            None => break,
                        },
                        c => out.push(c),
                    }
                }
                Err(self.error("unterminated quoted string"))
            }
            Some(_) => {
                let rest = &self.s[self.pos..];
                let end = rest.find([',', ']', '}', ')', ':']).unwrap_or(rest.len());
                let token = rest[..end].trim();
                self.pos += end;
                if token.is_empty() {
                    return Err(self.error("expected a value"));
                }
                Ok((!token.eq_ignore_ascii_case("null")).then(|| token.to_string()))
            }
            None => Err(self.error("expected a value")),
        }
    }

    /// A nullable cell (length, then the value) of type `typ`; `what` names the place
    /// for an error when null is not allowed there (None: it is).
    fn cell(&mut self, buf: &mut Vec<u8>, typ: &ColumnType<'_>, what: Option<&str>) -> Result<(), Mismatch> {
        let start = buf.len();
        buf.extend_from_slice(&[0u8; 4]);
        if !self.value(buf, typ)? {
            if let Some(what) = what {
                return Err(self.error(&format!("null is not allowed inside a {what}")));
            }
            buf.truncate(start);
            buf.extend_from_slice(&(-1i32).to_be_bytes());
            return Ok(());
        }
        let len = (buf.len() - start - 4) as i32;
        buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }

    /// The value of type `typ` (without its length); false for a bare `null`.
    fn value(&mut self, buf: &mut Vec<u8>, typ: &ColumnType<'_>) -> Result<bool, Mismatch> {
        if !matches!(typ, ColumnType::Native(_)) && self.s[self.pos..].trim_start().get(..4).is_some_and(|w| w.eq_ignore_ascii_case("null")) {
            self.skip_ws();
            self.pos += 4;
            return Ok(false);
        }
        match typ {
            ColumnType::Native(_) => match self.scalar()? {
                Some(text) => write_text_value(buf, &text, typ).map(|_| true),
                None => Ok(false),
            },
            ColumnType::Collection { typ: ct, .. } => {
                let count_at = buf.len();
                buf.extend_from_slice(&[0u8; 4]);
                let mut n: i32 = 0;
                match ct {
                    CollectionType::List(et) | CollectionType::Set(et) => {
                        let what = if matches!(ct, CollectionType::List(_)) { "list" } else { "set" };
                        let close = match self.peek() {
                            Some(b'[') => b']',
                            Some(b'{') => b'}',
                            _ => return Err(self.error(&format!("expected a {what} ('[' or '{{')"))),
                        };
                        self.pos += 1;
                        if self.peek() == Some(close) {
                            self.pos += 1;
                        } else {
                            loop {
                                self.cell(buf, et, Some(what))?;
                                n += 1;
                                if self.closes(close)? {
                                    break;
                                }
                            }
                        }
                    }
                    CollectionType::Map(kt, vt) => {
                        self.expect(b'{')?;
                        if self.peek() == Some(b'}') {
                            self.pos += 1;
                        } else {
                            loop {
                                self.cell(buf, kt, Some("map key"))?;
                                self.expect(b':')?;
                                self.cell(buf, vt, Some("map value"))?;
                                n += 1;
                                if self.closes(b'}')? {
                                    break;
                                }
                            }
                        }
                    }
                    _ => return Err(type_err("an unknown collection type".into())),
                }
                buf[count_at..count_at + 4].copy_from_slice(&n.to_be_bytes());
                Ok(true)
            }
            ColumnType::Tuple(types) => {
                let (open, close) = match self.peek() {
                    Some(b'[') => (b'[', b']'),
                    _ => (b'(', b')'),
                };
                self.expect(open)?;
                for (k, et) in types.iter().enumerate() {
                    self.cell(buf, et, None)?;
                    let closed = self.closes(close)?;
                    if closed && k + 1 < types.len() {
                        // Fewer elements than the type: the rest are null.
                        for _ in k + 1..types.len() {
                            buf.extend_from_slice(&(-1i32).to_be_bytes());
                        }
                        return Ok(true);
                    }
                    if !closed && k + 1 == types.len() {
                        return Err(self.error(&format!("more than the tuple's {} elements", types.len())));
                    }
                }
                Ok(true)
            }
            ColumnType::UserDefinedType { definition, .. } => {
                self.expect(b'{')?;
                let mut fields: Vec<Option<Vec<u8>>> = vec![None; definition.field_types.len()];
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        let name = self.scalar()?.ok_or_else(|| self.error("expected a field name"))?;
                        let k = definition
                            .field_types
                            .iter()
                            .position(|(n, _)| n.as_ref() == name)
                            .ok_or_else(|| self.error(&format!("{}.{} has no field {name:?}", definition.keyspace, definition.name)))?;
                        self.expect(b':')?;
                        let mut cell = Vec::new();
                        self.cell(&mut cell, &definition.field_types[k].1, None)?;
                        fields[k] = Some(cell);
                        if self.closes(b'}')? {
                            break;
                        }
                    }
                }
                for f in fields {
                    match f {
                        Some(cell) => buf.extend_from_slice(&cell),
                        None => buf.extend_from_slice(&(-1i32).to_be_bytes()),
                    }
                }
                Ok(true)
            }
            ColumnType::Vector { typ: et, dimensions } => {
                self.expect(b'[')?;
                let fixed = et.type_size_for_vector().is_some();
                let mut n = 0usize;
                let mut tmp = Vec::new();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        tmp.clear();
                        if !self.value(&mut tmp, et)? {
                            return Err(self.error("null is not allowed inside a vector"));
                        }
                        if !fixed {
                            super::scalars::write_unsigned_vint(buf, tmp.len() as u64);
                        }
                        buf.extend_from_slice(&tmp);
                        n += 1;
                        if self.closes(b']')? {
                            break;
                        }
                    }
                }
                if n != *dimensions as usize {
                    return Err(value_err(format!("vector has {n} elements, the column has {dimensions}")));
                }
                Ok(true)
            }
            _ => Err(type_err(format!("CQL type {} cannot be read from text", type_name(typ)))),
        }
    }
}
