//! The CSV files of bulk-load and bulk-unload: records read from a file (a quoted field may span
//! lines), split into fields and parsed into typed rows ([`CsvRows`]), and typed rows written
//! back as CSV lines in the same text forms ([`write_row`]). Python's `csv` excel dialect: `,`
//! separated, `"` quoted, `""` inside quotes for one `"`; an unquoted empty field is null.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::BufRead;

use scylla::value::CqlTimestamp;
use uuid::Uuid;

use super::text_forms::{civil_from_days, parse_map, parse_set, parse_timestamp};
use super::{Row, COLUMNS};

/// The rows of a CSV file (records may span lines inside quotes), parsed into typed values.
pub(super) struct CsvRows<R> {
    input: R,
    path: String,
    buf: String,
    /// Number of the record in `buf` (the header is 1).
    record: usize,
}

impl<R: BufRead> CsvRows<R> {
    pub(super) fn new(input: R, path: &str) -> Self {
        CsvRows { input, path: path.to_string(), buf: String::with_capacity(256), record: 0 }
    }

    /// Reads the next non-blank record into `buf`; false at the end of the file.
    fn read_record(&mut self) -> Result<bool, String> {
        loop {
            self.buf.clear();
            self.record += 1;
            let mut quotes = 0;
            loop {
                let start = self.buf.len();
                let n = self.input.read_line(&mut self.buf).map_err(|e| format!("{}: {e}", self.path))?;
                if n == 0 {
                    if quotes % 2 == 1 {
                        return Err(format!("{}: record {}: unterminated quoted field", self.path, self.record));
                    }
                    if start == 0 {
                        return Ok(false);
                    }
                    break;
                }
                quotes += self.buf.as_bytes()[start..].iter().filter(|&&c| c == b'"').count();
                if quotes % 2 == 0 {
                    break;
                }
            }
            let len = self.buf.trim_end_matches(['\n', '\r']).len();
            self.buf.truncate(len);
            if !self.buf.is_empty() {
                return Ok(true);
            }
        }
    }

    /// Reads the header line and checks it names the table's columns in order.
    pub(super) fn header(&mut self) -> Result<(), String> {
        if !self.read_record()? {
            return Err(format!("{}: empty file", self.path));
        }
        let mut fields = Vec::with_capacity(8);
        split_record(&self.buf, &mut fields).map_err(|e| format!("{}: header: {e}", self.path))?;
        let names: Vec<&str> = fields.iter().map(|f| f.text.trim()).collect();
        if names != COLUMNS {
            return Err(format!("{}: header {names:?}, expected {COLUMNS:?}", self.path));
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for CsvRows<R> {
    type Item = Result<Row, String>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.read_record() {
            Ok(false) => None,
            Err(e) => Some(Err(e)),
            Ok(true) => {
                let mut fields = Vec::with_capacity(8);
                let row = split_record(&self.buf, &mut fields).and_then(|()| parse_row(&fields));
                Some(row.map_err(|e| format!("{}: record {}: {e}", self.path, self.record)))
            }
        }
    }
}

/// One CSV field: its text (quotes removed, doubled quotes undone) and whether it was quoted
/// (an unquoted empty field is null, a quoted one `""` an empty text).
struct Field<'a> {
    text: Cow<'a, str>,
    quoted: bool,
}

/// Splits one record (no line terminator) into its fields: `,` separated, `"` quoted, `""`
/// inside quotes for one `"` (Python's `csv` excel dialect).
fn split_record<'a>(rec: &'a str, out: &mut Vec<Field<'a>>) -> Result<(), String> {
    out.clear();
    let b = rec.as_bytes();
    let mut i = 0;
    loop {
        if b.get(i) == Some(&b'"') {
            let start = i + 1;
            let mut seg = start;
            let mut owned: Option<String> = None;
            let end = loop {
                let Some(q) = b[seg..].iter().position(|&c| c == b'"').map(|p| seg + p) else {
                    return Err("unterminated quoted field".into());
                };
                if b.get(q + 1) == Some(&b'"') {
                    owned.get_or_insert_with(String::new).push_str(&rec[seg..=q]);
                    seg = q + 2;
                } else {
                    break q;
                }
            };
            let text = match owned {
                Some(mut s) => {
                    s.push_str(&rec[seg..end]);
                    Cow::Owned(s)
                }
                None => Cow::Borrowed(&rec[start..end]),
            };
            out.push(Field { text, quoted: true });
            i = end + 1;
            match b.get(i) {
                None => return Ok(()),
                Some(b',') => i += 1,
                Some(_) => return Err(format!("text after a closing quote (field {})", out.len())),
            }
        } else {
            let end = b[i..].iter().position(|&c| c == b',').map_or(b.len(), |p| i + p);
            out.push(Field { text: Cow::Borrowed(&rec[i..end]), quoted: false });
            if end == b.len() {
                return Ok(());
            }
            i = end + 1;
        }
    }
}

/// The typed row of a record's eight fields.
fn parse_row(f: &[Field]) -> Result<Row, String> {
    if f.len() != COLUMNS.len() {
        return Err(format!("{} fields, expected {}", f.len(), COLUMNS.len()));
    }
    /// None for an empty (null) field, else `parse` of the trimmed text, errors naming the column.
    fn opt<T>(f: &Field, col: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Result<Option<T>, String> {
        let s = f.text.trim();
        if s.is_empty() {
            return Ok(None);
        }
        parse(s).map(Some).map_err(|e| format!("{col}: {e}"))
    }
    fn num<T: std::str::FromStr>(s: &str) -> Result<T, String> {
        s.parse().map_err(|_| format!("bad number {s:?}"))
    }
    let id = opt(&f[0], "id", num::<i32>)?.ok_or("id: null primary key")?;
    let name = if f[2].text.is_empty() && !f[2].quoted { None } else { Some(f[2].text.clone().into_owned()) };
    Ok((
        id,
        opt(&f[1], "n", num::<i64>)?,
        name,
        opt(&f[3], "ts", parse_timestamp)?,
        opt(&f[4], "u", |s| Uuid::parse_str(s).map_err(|e| format!("bad uuid {s:?}: {e}")))?,
        opt(&f[5], "score", num::<f64>)?,
        opt(&f[6], "tags", parse_set)?.flatten(),
        opt(&f[7], "attrs", parse_map)?.flatten(),
    ))
}

/// Appends one CSV line (`\n` ended) of `row` to `out`, in the input's text forms; `scratch`
/// is a reusable buffer for the fields that may need quoting.
pub(super) fn write_row(out: &mut String, scratch: &mut String, row: &Row) {
    let (id, n, name, ts, u, score, tags, attrs) = row;
    // Writing to a String cannot fail.
    let _ = write!(out, "{id},");
    if let Some(n) = n {
        let _ = write!(out, "{n}");
    }
    out.push(',');
    if let Some(name) = name {
        write_field(out, name);
    }
    out.push(',');
    if let Some(CqlTimestamp(ms)) = ts {
        let (days, t) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
        let (y, m, d) = civil_from_days(days);
        let _ = write!(out, "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}+0000", t / 3_600_000, t / 60_000 % 60, t / 1000 % 60, t % 1000);
    }
    out.push(',');
    if let Some(u) = u {
        let _ = write!(out, "{}", u.hyphenated());
    }
    out.push(',');
    if let Some(score) = score {
        let _ = write!(out, "{score}");
    }
    out.push(',');
    if let Some(tags) = tags {
        scratch.clear();
        scratch.push('{');
        for (i, t) in tags.iter().enumerate() {
            let _ = write!(scratch, "{}{t}", if i > 0 { ", " } else { "" });
        }
        scratch.push('}');
        write_field(out, scratch);
    }
    out.push(',');
    if let Some(attrs) = attrs {
        scratch.clear();
        scratch.push('{');
        for (i, (k, v)) in attrs.iter().enumerate() {
            let _ = write!(scratch, "{}'{}': {v}", if i > 0 { ", " } else { "" }, k.replace('\'', "''"));
        }
        scratch.push('}');
        write_field(out, scratch);
    }
    out.push('\n');
}

/// A CSV field: quoted (inner `"` doubled) if it holds `,`, `"`, CR or LF, or is empty (so an
/// empty text reads back as `""`, not null).
fn write_field(out: &mut String, s: &str) {
    if !s.is_empty() && !s.bytes().any(|c| matches!(c, b',' | b'"' | b'\n' | b'\r')) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for (i, part) in s.split('"').enumerate() {
        if i > 0 {
            out.push_str("\"\"");
        }
        out.push_str(part);
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records_and_rows() {
        let text = "id,n,name,ts,u,score,tags,attrs\r\n\
                    0,12,\"a,\"\"b\"\"\nc\",2024-01-01 00:00:00.123+0000,5a1c3f0e-0000-4000-8000-000000000001,812.34,\"{1, 5}\",\"{'k1': 3, 'k''7': 40}\"\r\n\
                    1,,,,,,{},\r\n\
                    2,,\"\",,,,,{}\r\n";
        let mut rows = CsvRows::new(text.as_bytes(), "t.csv");
        rows.header().unwrap();
        let rows: Vec<Row> = rows.collect::<Result<_, _>>().unwrap();
        assert_eq!(rows.len(), 3);
        let r = &rows[0];
        assert_eq!((r.0, r.1, r.2.as_deref()), (0, Some(12), Some("a,\"b\"\nc")));
        assert_eq!(r.6.as_deref(), Some(&[1, 5][..]));
        assert_eq!(r.7.as_ref().unwrap().get("k'7"), Some(&40));
        assert_eq!(rows[1], (1, None, None, None, None, None, None, None));
        assert_eq!(rows[2].2.as_deref(), Some(""));
        // Unloaded text reads back to the same rows.
        let mut out = format!("{}\n", COLUMNS.join(","));
        for r in &rows {
            write_row(&mut out, &mut String::new(), r);
        }
        let mut again = CsvRows::new(out.as_bytes(), "u.csv");
        again.header().unwrap();
        assert_eq!(again.collect::<Result<Vec<Row>, _>>().unwrap(), rows);
    }
}
