//! Hosts: how the engine reconnects to a host it lost ([`Reconnection`], the classic
//! `ConstantReconnectionPolicy` / `ExponentialReconnectionPolicy`), and how it tells
//! Python that a host came up, went down, joined or left ([`PyHostListener`], behind the
//! classic `cluster.register_listener`).
//!
//! Both plug into the scylla crate's session configuration at connect (its
//! `unstable-reconnect-policy` and `unstable-host-listener` hooks, see `.cargo/config.toml`).

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use scylla::policies::host_listener::{HostEvent, HostEventContext, HostListener};
use scylla::policies::reconnect::{ReconnectPolicy, ReconnectPolicySession};

use crate::exec::options::duration;

/// Delays between attempts to reconnect to a host (see the module doc).
#[derive(Clone, Copy, Debug)]
enum Schedule {
    Constant(Duration),
    /// Doubling from the first delay up to the second.
    Exponential(Duration, Duration),
}

/// A classic reconnection policy for the engine; `max_attempts` None: never give up.
#[pyclass(frozen, module = "turbocql._engine")]
#[derive(Clone, Debug)]
pub struct Reconnection {
    schedule: Schedule,
    max_attempts: Option<u32>,
}

/// After `max_attempts` failed attempts the classic driver stops reconnecting until the
/// cluster reports the host up again; the engine keeps trying, this far apart.
const GAVE_UP_DELAY: Duration = Duration::from_secs(600);

fn delay(seconds: f64, what: &str) -> PyResult<Duration> {
    if seconds == 0.0 {
        Ok(Duration::ZERO)
    } else {
        duration(seconds, what)
    }
}

#[pymethods]
impl Reconnection {
    /// `ConstantReconnectionPolicy(delay, max_attempts)`.
    #[staticmethod]
    #[pyo3(signature = (delay_seconds, max_attempts=None))]
    fn constant(delay_seconds: f64, max_attempts: Option<u32>) -> PyResult<Self> {
        Ok(Reconnection { schedule: Schedule::Constant(delay(delay_seconds, "reconnection delay")?), max_attempts })
    }

    /// `ExponentialReconnectionPolicy(base_delay, max_delay, max_attempts)`.
    #[staticmethod]
    #[pyo3(signature = (base_delay, max_delay, max_attempts=None))]
    fn exponential(base_delay: f64, max_delay: f64, max_attempts: Option<u32>) -> PyResult<Self> {
        Ok(Reconnection { schedule: Schedule::Exponential(delay(base_delay, "base_delay")?, delay(max_delay, "max_delay")?), max_attempts })
    }

    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

impl Reconnection {
    pub fn build(&self) -> Arc<dyn ReconnectPolicy> {
        Arc::new(self.clone())
    }
}

impl ReconnectPolicy for Reconnection {
    fn new_session(&self) -> Box<dyn ReconnectPolicySession> {
        Box::new(Attempts { policy: self.clone(), failures: 0 })
    }
}

/// One host's reconnection attempts.
#[derive(Debug)]
struct Attempts {
    policy: Reconnection,
    /// Failed attempts in a row.
    failures: u32,
}

impl ReconnectPolicySession for Attempts {
    fn get_delay(&self) -> Duration {
        if self.policy.max_attempts.is_some_and(|max| self.failures >= max) {
            return GAVE_UP_DELAY;
        }
        match self.policy.schedule {
            Schedule::Constant(d) => d,
            Schedule::Exponential(base, max) => base.saturating_mul(1u32 << self.failures.min(30)).min(max),
        }
    }

    fn on_successful_fill(&mut self) {
        self.failures = 0;
    }

    fn on_fill_error(&mut self) {
        self.failures = self.failures.saturating_add(1);
    }
}

/// Hands the crate's host events to a Python callable `on_event(kind, host_id, address,
/// port)` (`kind`: "up", "down", "add", "remove"), off the crate's own tasks.
pub struct PyHostListener {
    pub callback: Arc<Py<PyAny>>,
}

impl HostListener for PyHostListener {
    fn on_event(&self, ctx: &HostEventContext, event: &HostEvent) {
        let kind = match event {
            HostEvent::Added => "add",
            HostEvent::Removed => "remove",
            HostEvent::Up => "up",
            HostEvent::Down => "down",
            // An address change is a removal and an addition, as the classic driver sees it.
            HostEvent::AddressChanged { .. } => "moved",
            _ => return,
        };
        let callback = self.callback.clone();
        let (host_id, addr) = (ctx.host_id().to_string(), ctx.addr());
        // Python runs on a blocking-pool thread: never on the crate's cluster worker.
        tokio::task::spawn_blocking(move || {
            // Not at interpreter exit: a thread taking the GIL then is ended by Python.
            Python::try_attach(|py| {
                if let Err(e) = callback.bind(py).call1((kind, host_id, addr.ip().to_string(), addr.port())) {
                    e.display(py);
                }
            })
        });
    }
}
