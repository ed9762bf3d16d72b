//! Text scalars: the text forms of single CQL values read into numbers (`super::from_text`
//! writes them as bytes): integers of any size as varint bytes, decimals as digits and a
//! scale, dates, times, timestamps (cqlsh's form and ISO 8601) and durations.

use super::scalars::days_from_civil;

pub(crate) fn parse_float(t: &str) -> Option<f64> {
    match t {
        "NaN" => Some(f64::NAN),
        "Infinity" | "+Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => t.parse().ok(),
    }
}

/// An optionally signed decimal integer of any size as a varint: two's complement, big
/// endian, in as few bytes as hold it. None if `t` is not one.
pub(crate) fn write_decimal_digits(buf: &mut Vec<u8>, t: &str) -> Option<()> {
    let (negative, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Magnitude, little endian base 256.
    let mut mag: Vec<u8> = vec![0];
    for d in digits.bytes() {
        let mut carry = (d - b'0') as u32;
        for byte in mag.iter_mut() {
            let v = *byte as u32 * 10 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
        if carry > 0 {
            mag.push(carry as u8);
        }
    }
    if negative {
        // Two's complement: invert and add one.
        let mut carry = 1u16;
        for byte in mag.iter_mut() {
            let v = (!*byte) as u16 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
    }
    let pad = if negative { 0xff } else { 0x00 };
    mag.push(pad);
    // Drop sign bytes the next byte's top bit already says.
    while mag.len() > 1 && mag[mag.len() - 1] == pad && (mag[mag.len() - 2] & 0x80 == pad & 0x80) {
        mag.pop();
    }
    buf.extend(mag.iter().rev());
    Some(())
}

/// `123.4500`, `-1.5E+3`: the unscaled digits (signed) and the scale.
pub(crate) fn decimal_parts(t: &str) -> Option<(String, i32)> {
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (sign, body) = match mantissa.as_bytes().first()? {
        b'-' => ("-", &mantissa[1..]),
        b'+' => ("", &mantissa[1..]),
        _ => ("", mantissa),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = i32::try_from(frac.len()).ok()?.checked_sub(exp)?;
    Some((format!("{sign}{int}{frac}"), scale))
}

fn digits(s: &str, n: usize) -> Option<i64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// `YYYY-MM-DD` (a leading `-` or `+` for years outside 0-9999) as days since the epoch.
pub fn parse_date(t: &str) -> Option<i64> {
    let (neg, rest) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let mut it = rest.splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if y.len() < 4 || !y.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year: i64 = y.parse().ok()?;
    let (month, day) = (digits(m, 2)? as u32, digits(d, 2)? as u32);
    let year = if neg { -year } else { year };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `HH:MM[:SS[.fffffffff]]` as nanoseconds since midnight.
pub fn parse_time(t: &str) -> Option<i64> {
    let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut it = hms.split(':');
    let h = digits(it.next()?, 2)?;
    let m = digits(it.next()?, 2)?;
    let s = match it.next() {
        Some(s) => digits(s, 2)?,
        None => 0,
    };
    if it.next().is_some() || h > 23 || m > 59 || s > 59 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos = if frac.is_empty() { 0 } else { frac.parse::<i64>().ok()? * 10i64.pow(9 - frac.len() as u32) };
    Some(((h * 60 + m) * 60 + s) * 1_000_000_000 + nanos)
}

/// Milliseconds since the epoch: an integer, or `YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][zone]`
/// with zone `Z`, `+HHMM`, `+HH:MM` or `+HH` (none: UTC, as cqlsh's default).
pub fn parse_timestamp(t: &str) -> Option<i64> {
    if let Ok(ms) = t.parse::<i64>() {
        return Some(ms);
    }
    let split = t.find(['T', ' ']).unwrap_or(t.len());
    let days = parse_date(&t[..split])?;
    let rest = t[split..].trim_start_matches(['T', ' ']);
    let (clock, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (rest[..i].trim_end(), &rest[i..]),
        None => (rest, ""),
    };
    let nanos = if clock.is_empty() { 0 } else { parse_time(clock)? };
    let offset_min = match zone {
        "" | "Z" | "z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let z = z[1..].replace(':', "");
            let (h, m) = match z.len() {
                2 => (digits(&z, 2)?, 0),
                4 => (digits(&z[..2], 2)?, digits(&z[2..], 2)?),
                _ => return None,
            };
            sign * (h * 60 + m)
        }
    };
    Some(days * 86_400_000 + nanos.div_euclid(1_000_000) - offset_min * 60_000)
}

/// `[-]1y2mo3w4d5h6m7s8ms9us10ns` (µs for us too) as (months, days, nanoseconds).
pub fn parse_duration(t: &str) -> Option<(i64, i64, i64)> {
    let (neg, mut rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    if rest.is_empty() {
        return None;
    }
    let (mut months, mut days, mut nanos) = (0i64, 0i64, 0i64);
    while !rest.is_empty() {
        let n_end = rest.find(|c: char| !c.is_ascii_digit())?;
        if n_end == 0 {
            return None;
        }
        let n: i64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = rest[..u_end].to_ascii_lowercase();
        rest = &rest[u_end..];
        match unit.as_str() {
            "y" => months = months.checked_add(n.checked_mul(12)?)?,
            "mo" => months = months.checked_add(n)?,
            "w" => days = days.checked_add(n.checked_mul(7)?)?,
            "d" => days = days.checked_add(n)?,
            "h" => nanos = nanos.checked_add(n.checked_mul(3_600_000_000_000)?)?,
            "m" => nanos = nanos.checked_add(n.checked_mul(60_000_000_000)?)?,
            "s" => nanos = nanos.checked_add(n.checked_mul(1_000_000_000)?)?,
            "ms" => nanos = nanos.checked_add(n.checked_mul(1_000_000)?)?,
            "us" | "µs" => nanos = nanos.checked_add(n.checked_mul(1_000)?)?,
            "ns" => nanos = nanos.checked_add(n)?,
            _ => return None,
        }
    }
    Some(if neg { (-months, -days, -nanos) } else { (months, days, nanos) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(t: &str) -> Vec<u8> {
        let mut b = Vec::new();
        write_decimal_digits(&mut b, t).unwrap();
        b
    }

    #[test]
    fn varints_are_minimal_twos_complement() {
        assert_eq!(varint("0"), [0]);
        assert_eq!(varint("127"), [0x7f]);
        assert_eq!(varint("128"), [0x00, 0x80]);
        assert_eq!(varint("-1"), [0xff]);
        assert_eq!(varint("-128"), [0x80]);
        assert_eq!(varint("-129"), [0xff, 0x7f]);
        assert_eq!(varint("65536"), [0x01, 0x00, 0x00]);
        assert_eq!(varint("-18446744073709551616"), [0xff, 0, 0, 0, 0, 0, 0, 0, 0]);
        let mut b = Vec::new();
        assert!(write_decimal_digits(&mut b, "1x").is_none());
        assert!(write_decimal_digits(&mut b, "-").is_none());
    }

    #[test]
    fn decimals_split_into_digits_and_scale() {
        assert_eq!(decimal_parts("123.4500"), Some(("1234500".into(), 4)));
        assert_eq!(decimal_parts("-1.5E+3"), Some(("-15".into(), -2)));
        assert_eq!(decimal_parts("7"), Some(("7".into(), 0)));
        assert_eq!(decimal_parts("."), None);
        assert_eq!(decimal_parts("1.2.3"), None);
    }

    #[test]
    fn timestamps_in_cqlsh_and_iso_forms() {
        assert_eq!(parse_timestamp("1970-01-01 00:00:00.000+0000"), Some(0));
        assert_eq!(parse_timestamp("2024-01-02T03:04:05.678Z"), Some(1_704_164_645_678));
        assert_eq!(parse_timestamp("2024-01-02 04:04:05.678+01:00"), Some(1_704_164_645_678));
        assert_eq!(parse_timestamp("2024-01-02"), Some(1_704_153_600_000));
        assert_eq!(parse_timestamp("1969-12-31 23:59:59.999Z"), Some(-1));
        assert_eq!(parse_timestamp("-1"), Some(-1));
        assert_eq!(parse_timestamp("2024-02-30"), None);
        assert_eq!(parse_timestamp("2024-01-02 25:00"), None);
    }

    #[test]
    fn dates_times_durations() {
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(parse_date("-0001-01-01").map(|d| d < 0), Some(true));
        assert_eq!(parse_time("00:00:01.5"), Some(1_500_000_000));
        assert_eq!(parse_time("23:59:59.999999999"), Some(86_399_999_999_999));
        assert_eq!(parse_duration("1y2mo3w4d5h6m7s8ms9us10ns"), Some((14, 25, 18_367_008_009_010)));
        assert_eq!(parse_duration("-1d"), Some((0, -1, 0)));
        assert_eq!(parse_duration("1x"), None);
        assert_eq!(parse_duration(""), None);
    }
}
