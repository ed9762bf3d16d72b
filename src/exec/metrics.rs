//! Metrics: a cluster's request counters and latency histogram, counted in the engine on
//! every path (`Cluster(metrics_enabled=True)`; `turbocql.metrics.Metrics` gives them the
//! classic API).
//!
//! What is counted, as the classic driver counts it (its `ResponseFuture`):
//! - each request's latency, from its start to its final result or error, a client
//!   timeout included (`request_timer`): [`Timed`], made by `super::run` for each request;
//! - each failed attempt by the error the node sent: read and write timeouts,
//!   unavailables, and as `other_errors` overloaded, bootstrapping, truncate and server
//!   errors; a broken connection as `connection_errors` ([`note_attempt_failure`], from
//!   `super::health::Watched`, which every policy the engine builds is wrapped in);
//! - each retry policy decision to try again (`retries`) or to ignore the error
//!   (`ignores`) ([`note_decision`], from `super::attempts`, which wraps every retry
//!   policy).
//!
//! The counters of the request being run are found through a task-local set around it,
//! so that the policies, shared by every session built from their profile, count into the
//! right cluster's. Without metrics nothing is set and nothing is counted: a request pays
//! one check of an `Option`.
//!
//! Latencies go to a log-linear histogram of microseconds (16 buckets per power of two:
//! each percentile within about 6% of the true value), with exact sum, min and max (the count is the buckets').

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scylla::errors::{DbError, RequestAttemptError};
use scylla::policies::retry::RetryDecision;

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Latencies up to 2^40 µs (12 days) get their own bucket; longer ones share the last.
const MAX_EXP: u32 = 40;
const BUCKETS: usize = ((MAX_EXP - SUB_BITS + 2) as usize) * SUB as usize;

/// A cluster's counters (see the module doc).
///
/// Memory ordering: every counter is `Relaxed`. Each stands alone (nothing else is published
/// through it), each change is a read-modify-write, which loses no count in any ordering,
/// and a reader takes a snapshot that may be a request or two apart between counters (the
/// count against the sum, say), as the classic driver's scales are.
pub struct Counters {
    connection_errors: AtomicU64,
    write_timeouts: AtomicU64,
    read_timeouts: AtomicU64,
    unavailables: AtomicU64,
    other_errors: AtomicU64,
    retries: AtomicU64,
    ignores: AtomicU64,
    sum_us: AtomicU64,
    min_us: AtomicU64,
    max_us: AtomicU64,
    buckets: Box<[AtomicU64]>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            connection_errors: AtomicU64::new(0),
            write_timeouts: AtomicU64::new(0),
            read_timeouts: AtomicU64::new(0),
            unavailables: AtomicU64::new(0),
            other_errors: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            ignores: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
            min_us: AtomicU64::new(u64::MAX),
            max_us: AtomicU64::new(0),
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// The bucket of a latency in µs: values below 16 each their own, then 16 per power of two.
fn bucket_of(us: u64) -> usize {
    if us < SUB {
        return us as usize;
    }
    let exp = (63 - us.leading_zeros()).min(MAX_EXP);
    let sub = if exp == MAX_EXP && us >> MAX_EXP > 1 { SUB - 1 } else { (us >> (exp - SUB_BITS)) & (SUB - 1) };
    ((exp - SUB_BITS + 1) as usize) * SUB as usize + sub as usize
}

/// The middle of a bucket, in µs.
fn bucket_value(idx: usize) -> f64 {
    let (group, sub) = ((idx as u64) / SUB, (idx as u64) % SUB);
    if group == 0 {
        return sub as f64;
    }
    let exp = group as u32 + SUB_BITS - 1;
    let width = 1u64 << (exp - SUB_BITS);
    ((1u64 << exp) + sub * width) as f64 + (width as f64 - 1.0) / 2.0
}

impl Counters {
    fn record(&self, us: u64) {
        // Relaxed: see Counters.
        self.sum_us.fetch_add(us, Ordering::Relaxed);
        self.min_us.fetch_min(us, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
        self.buckets[bucket_of(us)].fetch_add(1, Ordering::Relaxed);
    }

    fn attempt_failed(&self, error: &RequestAttemptError) {
        let counter = match error {
            RequestAttemptError::DbError(DbError::ReadTimeout { .. }, _) => &self.read_timeouts,
            RequestAttemptError::DbError(DbError::WriteTimeout { .. }, _) => &self.write_timeouts,
            RequestAttemptError::DbError(DbError::Unavailable { .. }, _) => &self.unavailables,
            RequestAttemptError::DbError(DbError::Overloaded | DbError::IsBootstrapping | DbError::TruncateError | DbError::ServerError, _) => {
                &self.other_errors
            }
            RequestAttemptError::BrokenConnectionError(_) => &self.connection_errors,
            _ => return,
        };
        // Relaxed: see Counters.
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn decided(&self, decision: &RetryDecision) {
        // Relaxed: see Counters.
        match decision {
            RetryDecision::RetrySameTarget(_) | RetryDecision::RetryNextTarget(_) => self.retries.fetch_add(1, Ordering::Relaxed),
            RetryDecision::IgnoreWriteError => self.ignores.fetch_add(1, Ordering::Relaxed),
            _ => return,
        };
    }

    /// The latency (µs) below which `q` (0..=1) of the recorded requests fall.
    fn quantile(&self, counts: &[u64], total: u64, q: f64) -> f64 {
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (idx, n) in counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let v = bucket_value(idx);
                // Never outside what was seen. Relaxed: see Counters.
                return v.clamp(self.min_us.load(Ordering::Relaxed) as f64, self.max_us.load(Ordering::Relaxed) as f64);
            }
        }
        // Relaxed: see Counters.
        self.max_us.load(Ordering::Relaxed) as f64
    }
}

tokio::task_local! {
    static CURRENT: Arc<Counters>;
}

/// A failed attempt of the request being run (a no-op without metrics).
pub fn note_attempt_failure(error: &RequestAttemptError) {
    let _ = CURRENT.try_with(|m| m.attempt_failed(error));
}

/// A retry policy's decision for the request being run (a no-op without metrics).
pub fn note_decision(decision: &RetryDecision) {
    let _ = CURRENT.try_with(|m| m.decided(decision));
}

/// `fut`, an attempt of a request, run with `counters` as the ones its failed attempts
/// and retry decisions count into.
pub fn counted<F: std::future::Future>(counters: &Arc<Counters>, fut: F) -> impl std::future::Future<Output = F::Output> {
    CURRENT.scope(counters.clone(), fut)
}

/// Records the latency of the request it was made for when dropped (at its end, or when a
/// client timeout drops it), as the classic `request_timer`.
pub struct Timed {
    counters: Arc<Counters>,
    started: Instant,
}

impl Timed {
    pub fn start(counters: &Arc<Counters>) -> Timed {
        Timed { counters: counters.clone(), started: Instant::now() }
    }
}

impl Drop for Timed {
    fn drop(&mut self) {
        self.counters.record(self.started.elapsed().as_micros() as u64);
    }
}

/// A cluster's metrics as the engine counts them (`turbocql.metrics.Metrics._engine`):
/// handed to each of its sessions at connect.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct RequestMetrics {
    pub counters: Arc<Counters>,
}

#[pymethods]
impl RequestMetrics {
    #[new]
    fn new() -> Self {
        RequestMetrics { counters: Arc::new(Counters::default()) }
    }

    /// The error and decision counters: a dict of `connection_errors`, `write_timeouts`,
    /// `read_timeouts`, `unavailables`, `other_errors`, `retries`, `ignores`.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.counters;
        let d = PyDict::new(py);
        for (name, v) in [
            ("connection_errors", &c.connection_errors),
            ("write_timeouts", &c.write_timeouts),
            ("read_timeouts", &c.read_timeouts),
            ("unavailables", &c.unavailables),
            ("other_errors", &c.other_errors),
            ("retries", &c.retries),
            ("ignores", &c.ignores),
        ] {
            // Relaxed: see Counters.
            d.set_item(name, v.load(Ordering::Relaxed))?;
        }
        Ok(d)
    }

    /// The request latencies, in seconds, under the classic `request_timer` keys: `count`,
    /// `min`, `max`, `mean`, `stddev`, `median`, `75percentile`, `95percentile`,
    /// `98percentile`, `99percentile`, `999percentile` (all 0 before the first request).
    fn request_timer<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.counters;
        // Relaxed: see Counters.
        let counts: Vec<u64> = c.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        let d = PyDict::new(py);
        d.set_item("count", total)?;
        let keys = ["min", "max", "mean", "stddev", "median", "75percentile", "95percentile", "98percentile", "99percentile", "999percentile"];
        if total == 0 {
            for k in keys {
                d.set_item(k, 0.0)?;
            }
            return Ok(d);
        }
        let s = |us: f64| us / 1e6;
        // Relaxed: see Counters.
        let mean = c.sum_us.load(Ordering::Relaxed) as f64 / total as f64;
        let var = counts.iter().enumerate().map(|(i, n)| *n as f64 * (bucket_value(i) - mean).powi(2)).sum::<f64>() / total as f64;
        d.set_item("min", s(c.min_us.load(Ordering::Relaxed) as f64))?;
        d.set_item("max", s(c.max_us.load(Ordering::Relaxed) as f64))?;
        d.set_item("mean", s(mean))?;
        d.set_item("stddev", s(var.sqrt()))?;
        for (key, q) in
            [("median", 0.5), ("75percentile", 0.75), ("95percentile", 0.95), ("98percentile", 0.98), ("99percentile", 0.99), ("999percentile", 0.999)]
        {
            d.set_item(key, s(c.quantile(&counts, total, q)))?;
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_hold_their_values() {
        let mut last = 0;
        for us in (0..5_000u64).chain([1 << 20, (1 << 20) + 12_345, 1 << 39, u64::MAX]) {
            let b = bucket_of(us);
            assert!(b >= last, "{us}: bucket {b} after {last}");
            assert!(b < BUCKETS, "{us}: bucket {b}");
            last = b;
            if us < 1 << 39 {
                let mid = bucket_value(b);
                assert!((mid - us as f64).abs() <= (us as f64 / 16.0).max(0.5), "{us}: bucket middle {mid}");
            }
        }
    }

    #[test]
    fn percentiles_come_from_the_recorded_latencies() {
        let c = Counters::default();
        for us in 1..=1000u64 {
            c.record(us * 100);
        }
        // Relaxed: one thread.
        let counts: Vec<u64> = c.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        for (q, want) in [(0.5, 50_000.0), (0.99, 99_000.0), (0.999, 99_900.0)] {
            let got = c.quantile(&counts, 1000, q);
            assert!((got - want).abs() / want < 0.07, "q{q}: {got} for {want}");
        }
        // Relaxed: one thread.
        assert_eq!(c.min_us.load(Ordering::Relaxed), 100);
        assert_eq!(c.max_us.load(Ordering::Relaxed), 100_000);
    }

    #[test]
    fn errors_and_decisions_are_counted_by_kind() {
        let c = Counters::default();
        c.decided(&RetryDecision::RetryNextTarget(None));
        c.decided(&RetryDecision::IgnoreWriteError);
        c.decided(&RetryDecision::DontRetry);
        // Relaxed: one thread.
        assert_eq!(c.retries.load(Ordering::Relaxed), 1);
        assert_eq!(c.ignores.load(Ordering::Relaxed), 1);
    }
}
