//! Document 002's 64-byte ping-pong (scenario `connections` of `turbocql bench`): what the
//! echo server (`pingpong-server`) and the tokio client (`pingpong-client`, the limit row)
//! share: the message size, a log-bucket latency histogram, the file-descriptor limit, the
//! process's CPU times, option parsing and the JSON line, and the shape of a client's run
//! (also `cql-connections`'s, in `benchmarks/rust_ref`).
//!
//! The Python side of the scenario is `benchmarks/clients/pingpong.py` (one client per I/O
//! model), its runner `benchmarks/run_connections.py`; method and deviations from the
//! document: `benchmarks/README.md`.
//!
//! Module [`cql`] holds what `cql-responder` (the CQL table's server) answers.

use std::future::Future;
use std::time::Duration;

pub mod cql;

/// Every message, both ways: 64 bytes, as in document 002.
pub const MSG_SIZE: usize = 64;

/// Sub-buckets per power of two: 2^5 = 32, so a recorded value is known to about 3%.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Enough buckets for any u64 (the top power of two is 63).
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// An HDR-like histogram of nanosecond values: exact below 32, then 32 log-spaced buckets per
/// power of two (about 3% wide). Constant memory (15 KB), O(1) to record.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0 }
    }

    /// The bucket of a value.
    pub fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros();
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) & (SUB - 1);
        ((shift as u64 + 1) * SUB + sub) as usize
    }

    /// The value a bucket stands for: its middle (exact below 32).
    pub fn value_of(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let shift = i / SUB - 1;
        let low = (SUB + i % SUB) << shift;
        low + ((1u64 << shift) >> 1)
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.total += other.total;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value at quantile `q` (0..=1): the smallest bucket whose cumulative count reaches
    /// `ceil(q * count)` (nearest rank); None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::value_of(i));
            }
        }
        None
    }
}

/// Raise the soft `RLIMIT_NOFILE` to the hard limit (10,000 connections need 10,000 fds);
/// returns the soft limit in force afterwards.
pub fn raise_nofile() -> libc::rlim_t {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit / setrlimit write / read the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < lim.rlim_max {
            let want = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                lim = want;
            }
        }
    }
    lim.rlim_cur
}

/// User and system CPU seconds of this process so far (`getrusage(RUSAGE_SELF)`).
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: a zeroed rusage is a valid value; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a pointer to our struct.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// A string as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Seconds (fractions allowed) as a Duration.
pub fn parse_seconds(name: &str, v: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("{name}: not a number of seconds: {v:?}")),
    }
}

/// The options of this process's command line by `parse`, or the process ends with the
/// message and status 2 (a usage error, as Python's argparse ends).
pub fn options_or_exit<O>(parse: impl FnOnce(&[String]) -> Result<O, String>) -> O {
    let args: Vec<String> = std::env::args().skip(1).collect();
    parse(&args).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    })
}

/// A client's run on one current-thread runtime (its tasks `spawn_local`ed: the clients are
/// the one-core limit rows), and the JSON line it prints: `run`'s, or when it fails the
/// line the runner shows as FF, with the reason.
pub fn client_line(model: &str, connections: usize, seconds: Duration, run: impl Future<Output = Result<String, String>>) -> String {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, run).unwrap_or_else(|reason| {
        format!(
            "{{\"client\":\"rust\",\"model\":{},\"connections\":{connections},\"seconds\":{},\"failed\":{}}}",
            json_str(model),
            seconds.as_secs_f64(),
            json_str(&reason)
        )
    })
}

/// `--name value` options: the value of every option in `known`, or an error for anything
/// else (`--help` included, with `usage`).
pub fn parse_options(args: &[String], known: &[&str], usage: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-h" || a == "--help" {
            return Err(usage.to_string());
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        if !known.contains(&name.as_str()) {
            return Err(format!("unknown option {a:?}\n{usage}"));
        }
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| format!("{name} needs a value\n{usage}"))?,
        };
        out.push((name, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_about_three_percent_wide() {
        let mut last = 0;
        for v in [0u64, 1, 31, 32, 33, 63, 64, 65, 1000, 12_345, 1_000_000, 123_456_789, u64::MAX / 2, u64::MAX] {
            let i = Histogram::index(v);
            assert!(i >= last, "{v}");
            assert!(i < BUCKETS);
            last = i;
            let mid = Histogram::value_of(i) as f64;
            assert!((mid - v as f64).abs() <= 0.035 * v as f64 + 0.5, "{v} -> {mid}");
        }
        assert_eq!(Histogram::index(31), 31);
        assert_eq!(Histogram::index(32), 32);
        assert_eq!(Histogram::index(64), 64);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut h = Histogram::new();
        assert_eq!(h.quantile(0.5), None);
        for v in 1..=20u64 {
            h.record(v);
        }
        assert_eq!(h.count(), 20);
        assert_eq!(h.quantile(0.5), Some(10));
        assert_eq!(h.quantile(0.95), Some(19));
        assert_eq!(h.quantile(1.0), Some(20));
        let mut g = Histogram::new();
        g.record(1_000_000);
        h.merge(&g);
        assert_eq!(h.count(), 21);
        let top = h.quantile(1.0).unwrap();
        assert!((970_000..=1_030_000).contains(&top), "{top}");
    }

    #[test]
    fn options_and_json() {
        let args: Vec<String> = ["--connect", "127.0.0.1:1", "--seconds=2"].iter().map(|s| s.to_string()).collect();
        let o = parse_options(&args, &["--connect", "--seconds"], "usage").unwrap();
        assert_eq!(o, vec![("--connect".into(), "127.0.0.1:1".into()), ("--seconds".into(), "2".into())]);
        assert!(parse_options(&["--nope".to_string()], &["--connect"], "usage").is_err());
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(parse_seconds("--seconds", "0.5").unwrap(), Duration::from_millis(500));
        assert!(parse_seconds("--seconds", "-1").is_err());
    }
}
