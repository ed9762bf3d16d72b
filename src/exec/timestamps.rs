//! Client-side timestamps (`Cluster.timestamp_generator`, `Session.use_client_timestamp`):
//! each request gets the next timestamp when it is built, on every path, as the classic
//! driver stamps each request it sends.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use scylla::policies::timestamp_generator::{MonotonicTimestampGenerator, TimestampGenerator};

enum Kind {
    /// The classic `MonotonicTimestampGenerator`: the crate's, which keeps the same rule
    /// (microseconds since the epoch, one more than the last when the clock has not moved
    /// past it).
    Monotonic(MonotonicTimestampGenerator),
    /// Any other generator: called (a Python call per request) for each timestamp.
    Python(Arc<Py<PyAny>>),
}

/// A session's source of client timestamps.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct ClientClock {
    kind: Kind,
}

#[pymethods]
impl ClientClock {
    /// `MonotonicTimestampGenerator(warn_on_drift, warning_threshold, warning_interval)`.
    #[staticmethod]
    #[pyo3(signature = (warn_on_drift=true, warning_threshold=1.0, warning_interval=1.0))]
    fn monotonic(warn_on_drift: bool, warning_threshold: f64, warning_interval: f64) -> PyResult<Self> {
        let secs = |v: f64, name: &str| {
            Duration::try_from_secs_f64(v).map_err(|_| pyo3::exceptions::PyValueError::new_err(format!("{name} must be a non-negative number of seconds")))
        };
        let generator = MonotonicTimestampGenerator::new();
        let generator = if warn_on_drift {
            generator.with_warning_times(secs(warning_threshold, "warning_threshold")?, secs(warning_interval, "warning_interval")?)
        } else {
            generator.without_warnings()
        };
        Ok(ClientClock { kind: Kind::Monotonic(generator) })
    }

    /// A user's generator: a callable returning microseconds since the epoch.
    #[staticmethod]
    fn python(generator: Py<PyAny>) -> Self {
        ClientClock { kind: Kind::Python(Arc::new(generator)) }
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Kind::Python(p) = &self.kind {
            visit.call(p.as_ref())?;
        }
        Ok(())
    }
}

impl ClientClock {
    /// The next timestamp (a user generator's error or non-integer result raises).
    pub fn next(&self, py: Python<'_>) -> PyResult<i64> {
        match &self.kind {
            Kind::Monotonic(g) => Ok(g.next_timestamp()),
            Kind::Python(g) => g.bind(py).call0()?.extract::<i64>().map_err(|e| {
                pyo3::exceptions::PyTypeError::new_err(format!("timestamp_generator must return an int (microseconds since the epoch): {}", e.value(py)))
            }),
        }
    }
}
