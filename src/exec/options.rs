//! Options: what a request is run with besides its statement and values: consistency,
//! serial consistency, client-side timeout, tracing, timestamp, idempotence, and the
//! shape its rows are decoded into ([`RowShape`]). Parsed from the classic driver's
//! numbers (`ConsistencyLevel.*`), checked here once.

use super::metrics::Counters;
use super::routing::PlanSource;
use super::timestamps::ClientClock;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scylla::client::execution_profile::ExecutionProfileHandle;
use scylla::statement::{Consistency, SerialConsistency};

/// `ConsistencyLevel` number → the crate's consistency.
pub fn consistency(v: u16) -> PyResult<Consistency> {
    Ok(match v {
        0 => Consistency::Any,
        1 => Consistency::One,
        2 => Consistency::Two,
        3 => Consistency::Three,
        4 => Consistency::Quorum,
        5 => Consistency::All,
        6 => Consistency::LocalQuorum,
        7 => Consistency::EachQuorum,
        8 => Consistency::Serial,
        9 => Consistency::LocalSerial,
        10 => Consistency::LocalOne,
        other => return Err(PyValueError::new_err(format!("unknown consistency level {other}"))),
    })
}

/// `ConsistencyLevel.SERIAL` / `LOCAL_SERIAL` → the crate's serial consistency.
pub fn serial_consistency(v: u16) -> PyResult<SerialConsistency> {
    match v {
        8 => Ok(SerialConsistency::Serial),
        9 => Ok(SerialConsistency::LocalSerial),
        other => Err(PyValueError::new_err(format!("serial consistency must be SERIAL (8) or LOCAL_SERIAL (9), got {other}"))),
    }
}

/// A `consistency_level` attribute (None, or a `ConsistencyLevel` number).
pub fn consistency_of(v: &Bound<'_, PyAny>) -> PyResult<Option<Consistency>> {
    v.extract::<Option<u16>>()?.map(consistency).transpose()
}

/// A `serial_consistency_level` attribute (None, `SERIAL` or `LOCAL_SERIAL`).
pub fn serial_consistency_of(v: &Bound<'_, PyAny>) -> PyResult<Option<SerialConsistency>> {
    v.extract::<Option<u16>>()?.map(serial_consistency).transpose()
}

/// A positive number of seconds as a duration (`what` names it in the error).
pub fn duration(seconds: f64, what: &str) -> PyResult<Duration> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(PyValueError::new_err(format!("{what} must be a positive number of seconds, got {seconds}")));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// How a page's rows are handed to Python.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowShape {
    /// A list of plain tuples (a row factory other than the default applies to them).
    #[default]
    Tuples,
    /// A list of the default row factory's named tuples, made while the page is decoded.
    Named,
    /// One dict of column name → numpy array (`numpy_factory`).
    Columns,
    /// One `pyarrow.RecordBatch` (`arrow_factory`).
    Arrow,
    /// One `pyarrow.RecordBatch` of strings, each value's CQL text (`cql_text_factory`).
    Text,
}

/// Per-request options, the same for every kind of statement.
#[derive(Clone, Default)]
pub struct Options {
    pub consistency: Option<Consistency>,
    pub serial: Option<SerialConsistency>,
    pub timeout: Option<Duration>,
    pub trace: bool,
    pub timestamp: Option<i64>,
    pub idempotent: bool,
    /// Page size; None: unpaged.
    pub page_size: Option<i32>,
    pub shape: RowShape,
    /// The execution profile's policies (load balancing, retry, speculative execution);
    /// None: the session's default profile.
    pub profile: Option<ExecutionProfileHandle>,
    /// What the request's plan needs beyond the profile's crate policy.
    pub plan: PlanSource,
    /// Client-side timestamps; None: the server stamps the writes.
    pub clock: Option<Arc<Py<ClientClock>>>,
    /// The cluster's metrics, when enabled.
    pub metrics: Option<Arc<Counters>>,
}

/// Sets a statement's (or batch's) options from an [`Options`], in a function that
/// returns a `PyResult` (a user's timestamp generator may raise). Each call stamps the
/// request with the next client timestamp.
macro_rules! apply_options {
    ($py:expr, $stmt:expr, $o:expr) => {{
        if let Some(c) = $o.consistency {
            $stmt.set_consistency(c);
        }
        $stmt.set_serial_consistency($o.serial);
        $stmt.set_tracing($o.trace);
        $stmt.set_timestamp(match ($o.timestamp, &$o.clock) {
            (Some(t), _) => Some(t),
            (None, Some(clock)) => Some(clock.get().next($py)?),
            (None, None) => None,
        });
        $stmt.set_is_idempotent($o.idempotent);
        if $o.profile.is_some() {
            $stmt.set_execution_profile_handle($o.profile.clone());
        }
    }};
}
pub(crate) use apply_options;

/// A statement's `fetch_size`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FetchSize {
    /// `FETCH_SIZE_UNSET`: the session's `default_fetch_size`.
    #[default]
    Default,
    /// None or 0: unpaged.
    Unpaged,
    Paged(i32),
}

impl FetchSize {
    /// From a fetch size given as a number (None or not positive: unpaged).
    pub fn of(n: Option<i32>) -> FetchSize {
        match n {
            Some(n) if n > 0 => FetchSize::Paged(n),
            _ => FetchSize::Unpaged,
        }
    }
}

/// A statement's own options; None (or [`FetchSize::Default`]) where it leaves the choice
/// to the session.
#[derive(Clone, Copy, Default)]
pub struct OwnOptions {
    pub consistency: Option<Consistency>,
    pub serial: Option<SerialConsistency>,
    pub fetch_size: FetchSize,
    pub idempotent: bool,
}

/// The `timeout` argument of a call.
#[derive(Clone, Copy, Debug)]
pub enum Timeout {
    /// Left out: the session's `default_timeout`.
    Default,
    /// None: no client-side timeout.
    Unbounded,
    After(Duration),
}

/// A session's defaults, for what a statement leaves to it.
#[derive(Clone, Default)]
pub struct Defaults {
    pub consistency: Option<Consistency>,
    pub serial: Option<SerialConsistency>,
    pub page_size: Option<i32>,
    pub timeout: Option<Duration>,
    pub shape: RowShape,
    pub profile: Option<ExecutionProfileHandle>,
    pub plan: PlanSource,
    pub clock: Option<Arc<Py<ClientClock>>>,
    pub metrics: Option<Arc<Counters>>,
}

impl Defaults {
    /// The options of one call: the statement's own, then these defaults.
    pub fn resolve(&self, own: &OwnOptions, timeout: Timeout, trace: bool) -> Options {
        Options {
            consistency: own.consistency.or(self.consistency),
            serial: own.serial.or(self.serial),
            timeout: match timeout {
                Timeout::Default => self.timeout,
                Timeout::Unbounded => None,
                Timeout::After(t) => Some(t),
            },
            trace,
            timestamp: None,
            idempotent: own.idempotent,
            page_size: match own.fetch_size {
                FetchSize::Default => self.page_size,
                FetchSize::Unpaged => None,
                FetchSize::Paged(n) => Some(n),
            },
            shape: self.shape,
            profile: self.profile.clone(),
            plan: self.plan.clone(),
            clock: self.clock.clone(),
            metrics: self.metrics.clone(),
        }
    }
}
