//! The bulk workloads of the Rust reference (benchmark `bulk`, `benchmarks/run_bulk.py`), on the
//! table `<keyspace>.<table>` (default `bench_bulk.mixed`): `(id int PRIMARY KEY, n bigint,
//! name text, ts timestamp, u uuid, score double, tags set<int>, attrs map<text, int>)`.
//!
//! * `bulk-load --file CSV`: the CSV (header `id,n,name,ts,u,score,tags,attrs`, cqlsh's text
//!   forms, as `generate()` in run_bulk.py writes it) read and parsed into typed values, every
//!   row inserted by one prepared INSERT at consistency ONE, `--concurrency` requests in flight.
//!   Timed from opening the file to the last write acknowledged.
//! * `bulk-unload --file OUT --ranges R`: the token ring cut into R equal ranges, each read by a
//!   paged (5000 rows) prepared SELECT at consistency ONE, `--concurrency` ranges at a time;
//!   rows decoded into typed values and formatted as CSV in the input's text forms, a range's
//!   text written to OUT (through a BufWriter) when the range is done. Timed from the first
//!   request to the file flushed (not fsynced).
//! * `scan --ranges R`: the same reads, rows decoded into typed tuples kept in memory (a Vec
//!   per range) and counted. With `--ranges 1`, ONE paged `SELECT ... FROM <table>` with no
//!   token restriction, as `benchmarks/clients/scan.py` reads.
//!
//! No csv or date crate: a small quoted-CSV record splitter and the timestamp, set and map
//! text forms are written by hand below.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::CqlTimestamp;
use uuid::Uuid;

use crate::{self_cpu_us, Opts, Workload};

/// The table's columns, in the CSV's order (its header line).
const COLUMNS: [&str; 8] = ["id", "n", "name", "ts", "u", "score", "tags", "attrs"];
const PAGE_SIZE: i32 = 5000;

/// One row, typed: id, n, name, ts, u, score, tags, attrs (None: null; an empty collection is
/// null in Cassandra, so it is None too).
type Row = (i32, Option<i64>, Option<String>, Option<CqlTimestamp>, Option<Uuid>, Option<f64>, Option<Vec<i32>>, Option<BTreeMap<String, i32>>);

type BoxError = Box<dyn Error>;

/// Rows, seconds and client CPU (µs) of a timed section.
struct Timed {
    rows: usize,
    seconds: f64,
    cpu_us: f64,
}

pub(crate) async fn bulk_main(o: &Opts, session: &Session) -> Result<(), BoxError> {
    let target = format!("{}.{}", o.keyspace, o.table.as_deref().unwrap_or("mixed"));
    let ranges = o.ranges.unwrap_or(if o.workload == Workload::BulkUnload { 64 } else { 1 });
    let (name, t) = match o.workload {
        Workload::BulkLoad => ("bulk-load", load(o, session, &target).await?),
        Workload::BulkUnload => ("bulk-unload", unload(o, session, &target, ranges).await?),
        Workload::Scan => ("scan", scan(o, session, &target, ranges).await?),
        w => return Err(format!("{w:?} is not a bulk workload").into()),
    };
    let ranges_json = if o.workload == Workload::BulkLoad { String::new() } else { format!(",\"ranges\":{ranges}") };
    let (rate, cpu) =
        if t.rows > 0 { (format!("{:.1}", t.rows as f64 / t.seconds), format!("{:.3}", t.cpu_us / t.rows as f64)) } else { ("0".into(), "null".into()) };
    println!(
        "{{\"client\":\"rust\",\"workload\":\"{name}\",\"table\":\"{target}\",\"concurrency\":{}{ranges_json},\
         \"tokio_workers\":{},\"rows\":{},\"seconds\":{:.4},\"rows_per_s\":{rate},\"cpu_us_per_row\":{cpu}}}",
        o.concurrency, o.tokio_workers, t.rows, t.seconds,
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// bulk-load

async fn load(o: &Opts, session: &Session, target: &str) -> Result<Timed, BoxError> {
    let path = o.file.as_deref().ok_or("bulk-load needs --file CSV")?;
    let mut insert = session.prepare(format!("INSERT INTO {target} ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", COLUMNS.join(", "))).await?;
    insert.set_consistency(Consistency::One);
    let insert = &insert;

    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut csv = CsvRows::new(BufReader::with_capacity(1 << 20, file), path);
    csv.header()?;
    let mut acks = stream::iter(csv)
        .map(|row| async move {
            let row = row?;
            match session.execute_unpaged(insert, &row).await {
                Ok(_) => Ok(()),
                Err(e) => Err(format!("insert of id {}: {e}", row.0)),
            }
        })
        .buffer_unordered(o.concurrency);
    let mut rows = 0;
    while let Some(ack) = acks.next().await {
        ack?;
        rows += 1;
    }
    Ok(Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 })
}

/// The rows of a CSV file (records may span lines inside quotes), parsed into typed values.
struct CsvRows<R> {
    input: R,
    path: String,
    buf: String,
    /// Number of the record in `buf` (the header is 1).
    record: usize,
}

impl<R: BufRead> CsvRows<R> {
    fn new(input: R, path: &str) -> Self {
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
    fn header(&mut self) -> Result<(), String> {
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

/// A set (or list) literal of ints, `{1, 5}` (or `[1, 5]`); None when empty.
fn parse_set(s: &str) -> Result<Option<Vec<i32>>, String> {
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| s.strip_prefix('[').and_then(|r| r.strip_suffix(']')))
        .ok_or_else(|| format!("bad set {s:?}"))?
        .trim();
    if inner.is_empty() {
        return Ok(None);
    }
    inner.split(',').map(|v| v.trim().parse().map_err(|_| format!("bad set element {v:?} in {s:?}"))).collect::<Result<Vec<_>, _>>().map(Some)
}

/// A map literal of text keys and int values, `{'k1': 3, 'k7': 40}` (keys single-quoted with
/// `''` for a quote, or bare); None when empty.
fn parse_map(s: &str) -> Result<Option<BTreeMap<String, i32>>, String> {
    let bad = || format!("bad map {s:?}");
    let inner = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).ok_or_else(bad)?.trim();
    if inner.is_empty() {
        return Ok(None);
    }
    let mut map = BTreeMap::new();
    let mut rest = inner;
    loop {
        rest = rest.trim_start();
        let key = if let Some(r) = rest.strip_prefix('\'') {
            let mut key = String::new();
            let mut r = r;
            loop {
                let q = r.find('\'').ok_or_else(bad)?;
                key.push_str(&r[..q]);
                if r[q + 1..].starts_with('\'') {
                    key.push('\'');
                    r = &r[q + 2..];
                } else {
                    rest = &r[q + 1..];
                    break;
                }
            }
            key
        } else {
            let colon = rest.find(':').ok_or_else(bad)?;
            let key = rest[..colon].trim().to_string();
            rest = &rest[colon..];
            key
        };
        rest = rest.trim_start().strip_prefix(':').ok_or_else(bad)?;
        let end = rest.find(',').unwrap_or(rest.len());
        let v = rest[..end].trim();
        map.insert(key, v.parse().map_err(|_| format!("bad map value {v:?} in {s:?}"))?);
        if end == rest.len() {
            return Ok(Some(map));
        }
        rest = &rest[end + 1..];
    }
}

/// `YYYY-MM-DD[ |T]HH:MM[:SS[.fff]][+HHMM|+HH:MM|Z]` (or the date alone) as milliseconds since
/// the epoch; no zone means UTC; fractions past milliseconds are dropped.
fn parse_timestamp(s: &str) -> Result<CqlTimestamp, String> {
    let b = s.as_bytes();
    let bad = || format!("bad timestamp {s:?}");
    let num = |from: usize, len: usize| -> Result<i64, String> {
        b.get(from..from + len).and_then(|d| d.iter().try_fold(0i64, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0')))).ok_or_else(bad)
    };
    let sep = |at: usize, c: u8| if b.get(at) == Some(&c) { Ok(()) } else { Err(bad()) };
    let (y, mo, d) = (num(0, 4)?, (sep(4, b'-')?, num(5, 2)?).1, (sep(7, b'-')?, num(8, 2)?).1);
    let (mut h, mut mi, mut sec, mut ms) = (0, 0, 0, 0);
    let mut i = 10;
    if matches!(b.get(i), Some(b' ' | b'T')) {
        h = num(11, 2)?;
        sep(13, b':')?;
        mi = num(14, 2)?;
        i = 16;
        if b.get(i) == Some(&b':') {
            sec = num(17, 2)?;
            i = 19;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    if i - start < 3 {
                        ms = ms * 10 + i64::from(b[i] - b'0');
                    }
                    i += 1;
                }
                match i - start {
                    0 => return Err(bad()),
                    1 => ms *= 100,
                    2 => ms *= 10,
                    _ => {}
                }
            }
        }
    }
    let offset_min = match b.get(i) {
        None => 0,
        Some(b'Z') => {
            i += 1;
            0
        }
        Some(&c @ (b'+' | b'-')) => {
            let oh = num(i + 1, 2)?;
            i += 3;
            if b.get(i) == Some(&b':') {
                i += 1;
            }
            let om = num(i, 2)?;
            i += 2;
            (oh * 60 + om) * if c == b'-' { -1 } else { 1 }
        }
        _ => return Err(bad()),
    };
    if i != b.len() || !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return Err(bad());
    }
    let minutes = (days_from_civil(y, mo, d) * 24 + h) * 60 + mi - offset_min;
    Ok(CqlTimestamp((minutes * 60 + sec) * 1000 + ms))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

// ---------------------------------------------------------------------------------------------
// Range reads: bulk-unload and scan

/// The token ring `i64::MIN..=i64::MAX` cut into `n` contiguous inclusive ranges of equal size
/// (to one token): every token in exactly one.
fn token_ranges(n: usize) -> Vec<(i64, i64)> {
    let span: i128 = 1 << 64;
    let bound = |k: usize| i64::MIN as i128 + span * k as i128 / n as i128;
    (0..n).map(|k| (bound(k) as i64, (bound(k + 1) - 1) as i64)).collect()
}

/// The SELECT of every column: of the whole table with one range, else of `token(id)` in
/// `[?, ?]`; paged, consistency ONE.
async fn range_select(session: &Session, target: &str, ranges: usize) -> Result<PreparedStatement, BoxError> {
    let restriction = if ranges == 1 { "" } else { " WHERE token(id) >= ? AND token(id) <= ?" };
    let mut stmt = session.prepare(format!("SELECT {} FROM {target}{restriction}", COLUMNS.join(", "))).await?;
    stmt.set_page_size(PAGE_SIZE);
    stmt.set_consistency(Consistency::One);
    Ok(stmt)
}

/// Reads one range (every page), handing each decoded row to `f`.
async fn for_each_row(session: &Session, stmt: &PreparedStatement, range: (i64, i64), whole: bool, mut f: impl FnMut(Row)) -> Result<(), BoxError> {
    let pager = if whole { session.execute_iter(stmt.clone(), ()).await? } else { session.execute_iter(stmt.clone(), range).await? };
    let mut rows = pager.rows_stream::<Row>()?;
    while let Some(row) = rows.next().await {
        f(row?);
    }
    Ok(())
}

async fn unload(o: &Opts, session: &Session, target: &str, ranges: usize) -> Result<Timed, BoxError> {
    let path = o.file.as_deref().ok_or("bulk-unload needs --file OUT")?;
    let stmt = &range_select(session, target, ranges).await?;
    let whole = ranges == 1;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(|e| format!("{path}: {e}"))?);
    writeln!(out, "{}", COLUMNS.join(","))?;

    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let mut done = stream::iter(token_ranges(ranges))
        .map(|range| async move {
            let (mut text, mut scratch, mut n) = (String::new(), String::new(), 0usize);
            for_each_row(session, stmt, range, whole, |row| {
                write_row(&mut text, &mut scratch, &row);
                n += 1;
            })
            .await?;
            Ok::<_, BoxError>((text, n))
        })
        .buffer_unordered(o.concurrency);
    let mut rows = 0;
    while let Some(range) = done.next().await {
        let (text, n) = range?;
        out.write_all(text.as_bytes()).map_err(|e| format!("{path}: {e}"))?;
        rows += n;
    }
    out.flush().map_err(|e| format!("{path}: {e}"))?;
    Ok(Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 })
}

/// Appends one CSV line (`\n` ended) of `row` to `out`, in the input's text forms; `scratch`
/// is a reusable buffer for the fields that may need quoting.
fn write_row(out: &mut String, scratch: &mut String, row: &Row) {
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

async fn scan(o: &Opts, session: &Session, target: &str, ranges: usize) -> Result<Timed, BoxError> {
    let stmt = &range_select(session, target, ranges).await?;
    let whole = ranges == 1;
    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let mut done = stream::iter(token_ranges(ranges))
        .map(|range| async move {
            let mut kept = Vec::new();
            for_each_row(session, stmt, range, whole, |row| kept.push(row)).await?;
            Ok::<_, BoxError>(kept)
        })
        .buffer_unordered(o.concurrency);
    let mut kept: Vec<Vec<Row>> = Vec::with_capacity(ranges);
    let mut rows = 0;
    while let Some(range) = done.next().await {
        let range = range?;
        rows += range.len();
        kept.push(range);
    }
    let timed = Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 };
    std::hint::black_box(&kept);
    Ok(timed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip() {
        for (s, ms) in [
            ("1970-01-01 00:00:00.000+0000", 0),
            ("2024-01-01 00:00:00.123+0000", 1_704_067_200_123),
            ("2024-01-01T00:00:00.123Z", 1_704_067_200_123),
            ("2024-01-01 01:00:00.123+01:00", 1_704_067_200_123),
            ("2024-02-29 23:59:59.9+0000", 1_709_251_199_900),
            ("1969-12-31 23:59:59.999+0000", -1),
        ] {
            assert_eq!(parse_timestamp(s).unwrap().0, ms, "{s}");
        }
        for ms in [0i64, -1, 1_704_067_200_123, 951_782_400_000, -62_135_596_800_000, 253_402_300_799_999] {
            let mut out = String::new();
            write_row(&mut out, &mut String::new(), &(0, None, None, Some(CqlTimestamp(ms)), None, None, None, None));
            let ts = out.split(',').nth(3).unwrap();
            assert_eq!(parse_timestamp(ts).unwrap().0, ms, "{ts}");
        }
        assert!(parse_timestamp("2024-13-01 00:00:00+0000").is_err());
        assert!(parse_timestamp("2024-01-01 00:00:00.+0000").is_err());
    }

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

    #[test]
    fn ranges_cover_the_ring() {
        for n in [1, 2, 3, 7, 64] {
            let r = token_ranges(n);
            assert_eq!((r[0].0, r[n - 1].1), (i64::MIN, i64::MAX));
            for w in r.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
            }
        }
    }
}
