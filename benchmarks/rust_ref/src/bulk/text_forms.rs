//! The text forms of the typed columns, as cqlsh writes them (no date crate): a set of ints
//! (`{1, 5}`), a map of text to int (`{'k1': 3}`), a timestamp
//! (`2024-01-01 00:00:00.123+0000`), with the proleptic Gregorian day arithmetic behind the
//! timestamps.

use std::collections::BTreeMap;

use scylla::value::CqlTimestamp;

/// A set (or list) literal of ints, `{1, 5}` (or `[1, 5]`); None when empty.
pub(super) fn parse_set(s: &str) -> Result<Option<Vec<i32>>, String> {
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
pub(super) fn parse_map(s: &str) -> Result<Option<BTreeMap<String, i32>>, String> {
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
pub(super) fn parse_timestamp(s: &str) -> Result<CqlTimestamp, String> {
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
pub(super) fn civil_from_days(z: i64) -> (i64, i64, i64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::csv::write_row;

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
}
