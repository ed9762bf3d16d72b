//! Profiles: a classic `ExecutionProfile` as the engine runs it ([`EngineProfile`]).
//!
//! Built once per profile (and again only after the profile is changed): the crate
//! execution profile holding its load-balancing, retry and speculative-execution policies
//! (`super::routing`, `super::retry`), and the per-request defaults the profile gives
//! (consistency, serial consistency, timeout, row factory). A request carries the crate
//! profile's handle (`super::options::Options::profile`); nothing is built per request.
//! A change marks that one profile stale ([`EngineProfile::mark_stale`]); nothing else is
//! rebuilt.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use scylla::client::execution_profile::{ExecutionProfile, ExecutionProfileBuilder, ExecutionProfileHandle};
use scylla::policies::speculative_execution::SimpleSpeculativeExecutionPolicy;
use scylla::statement::{Consistency, SerialConsistency};

use super::options::{consistency_of, duration, serial_consistency_of, RowShape};
use super::retry::Retry;
use super::routing::{LoadBalancing, PlanSource};
use crate::pyrefs;

/// A crate profile with the engine's defaults, for the session's default profile and each
/// classic profile: no crate-side timeout (the engine bounds requests itself), and the
/// default load-balancing and retry policies watched and noted as every policy the engine
/// builds is (`super::health`, `super::attempts`).
pub fn engine_defaults() -> ExecutionProfileBuilder {
    ExecutionProfile::builder().request_timeout(None).load_balancing_policy(LoadBalancing::build_default().policy).retry_policy(Retry::build_default())
}

/// A classic `ExecutionProfile` for the engine (see the module doc). Made by
/// `ExecutionProfile._engine_profile()` from the profile's attributes.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct EngineProfile {
    pub handle: ExecutionProfileHandle,
    pub consistency: Option<Consistency>,
    pub serial: Option<SerialConsistency>,
    /// Client-side timeout (`request_timeout`; None: none).
    pub timeout: Option<Duration>,
    pub shape: RowShape,
    pub row_factory: Py<PyAny>,
    /// What each request's plan needs beyond the crate policy of `handle`.
    pub plan: PlanSource,
    /// Set when the profile, or a policy in it, changed: a session's defaults read from
    /// this profile are read again (`api::builder`). Each profile has its own, so a change
    /// to one leaves every other profile's engine form, and every snapshot of it, alone.
    stale: Arc<AtomicBool>,
    /// For a profile derived from another (`with_defaults`): the other's flag, since
    /// the policies (and their crate forms) are the other's.
    policies_stale: Option<Arc<AtomicBool>>,
}

fn row_shape(py: Python<'_>, row_factory: &Bound<'_, PyAny>) -> PyResult<RowShape> {
    let refs = pyrefs::get(py)?;
    Ok(if row_factory.is(refs.numpy_factory.bind(py)) {
        RowShape::Columns
    } else if row_factory.is(refs.arrow_factory.bind(py)) {
        RowShape::Arrow
    } else if row_factory.is(refs.cql_text_factory.bind(py)) {
        RowShape::Text
    } else if row_factory.is(refs.named_rows.bind(py)) {
        RowShape::Named
    } else {
        RowShape::Tuples
    })
}

#[pymethods]
impl EngineProfile {
    /// `load_balancing` / `retry`: None for the engine's defaults (token-aware over every
    /// host, and the classic default retry policy). `speculative`: `(delay, max_attempts)`
    /// of a `ConstantSpeculativeExecutionPolicy`, or None.
    #[new]
    #[pyo3(signature = (load_balancing, retry, speculative, consistency_level, serial_consistency_level, request_timeout, row_factory))]
    fn new(
        py: Python<'_>,
        load_balancing: Option<PyRef<'_, LoadBalancing>>,
        retry: Option<PyRef<'_, Retry>>,
        speculative: Option<(f64, usize)>,
        consistency_level: &Bound<'_, PyAny>,
        serial_consistency_level: &Bound<'_, PyAny>,
        request_timeout: Option<f64>,
        row_factory: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let built = match load_balancing {
            Some(lb) => lb.build(),
            None => LoadBalancing::build_default(),
        };
        let mut builder = engine_defaults().load_balancing_policy(built.policy);
        if let Some(r) = retry {
            builder = builder.retry_policy(r.build());
        }
        if let Some((delay, max_attempts)) = speculative {
            let retry_interval = if delay == 0.0 { Duration::ZERO } else { duration(delay, "speculative execution delay")? };
            builder = builder.speculative_execution_policy(Some(Arc::new(SimpleSpeculativeExecutionPolicy { max_retry_count: max_attempts, retry_interval })));
        }
        Ok(EngineProfile {
            handle: builder.build().into_handle(),
            consistency: consistency_of(consistency_level)?,
            serial: serial_consistency_of(serial_consistency_level)?,
            timeout: request_timeout.map(|t| duration(t, "request_timeout")).transpose()?,
            shape: row_shape(py, &row_factory)?,
            row_factory: row_factory.unbind(),
            plan: built.plan,
            stale: Arc::new(AtomicBool::new(false)),
            policies_stale: None,
        })
    }

    /// This profile with other per-request defaults and the same policies: what a copy
    /// of a profile changed only in its consistency levels, timeout or row factory needs
    /// (`execution_profile_clone_update` on each request), without building its policies
    /// again. It goes stale with this one's policies.
    fn with_defaults(
        &self,
        py: Python<'_>,
        consistency_level: &Bound<'_, PyAny>,
        serial_consistency_level: &Bound<'_, PyAny>,
        request_timeout: Option<f64>,
        row_factory: Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(EngineProfile {
            handle: self.handle.clone(),
            consistency: consistency_of(consistency_level)?,
            serial: serial_consistency_of(serial_consistency_level)?,
            timeout: request_timeout.map(|t| duration(t, "request_timeout")).transpose()?,
            shape: row_shape(py, &row_factory)?,
            row_factory: row_factory.unbind(),
            plan: self.plan.clone(),
            stale: Arc::new(AtomicBool::new(false)),
            policies_stale: Some(self.policies_stale.clone().unwrap_or_else(|| self.stale.clone())),
        })
    }

    /// The profile or one of its policies changed: built again at its next use.
    fn mark_stale(&self) {
        self.stale.store(true, Ordering::Release);
    }

    /// True once the profile, or a policy in it, changed.
    #[getter]
    pub fn stale(&self) -> bool {
        self.stale.load(Ordering::Acquire) || self.policies_stale.as_ref().is_some_and(|s| s.load(Ordering::Acquire))
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let PlanSource::Custom(p) = &self.plan {
            visit.call(p.as_ref())?;
        }
        visit.call(&self.row_factory)
    }
}
