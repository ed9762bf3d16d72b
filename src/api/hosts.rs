//! Hosts: how the engine reconnects to a host it lost ([`Reconnection`], the classic
//! `ConstantReconnectionPolicy` / `ExponentialReconnectionPolicy`), and how it tells
//! Python that a host came up, went down, joined or left ([`PyHostListener`], behind the
//! classic `cluster.register_listener`).
//!
//! Both plug into the scylla crate's session configuration at connect (its
//! `unstable-reconnect-policy` and `unstable-host-listener` hooks, see `.cargo/config.toml`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use scylla::policies::host_listener::{HostEvent as CrateHostEvent, HostEventContext, HostListener};
use scylla::policies::reconnect::{ReconnectPolicy, ReconnectPolicySession};

use crate::exec::options::duration;
use crate::runtime;
use crate::sync::Mutex;

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

/// A host event as Python hears it: `on_host_event(event)`.
#[pyclass(frozen, get_all, module = "turbocql._engine")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEvent {
    /// "up", "down", "add", "remove", or "moved" (the host's address changed).
    kind: &'static str,
    host_id: String,
    /// The host's address (after the change, for "moved").
    address: String,
    port: u16,
    /// For "moved": the address the host had before.
    old_address: Option<String>,
    old_port: Option<u16>,
}

#[pymethods]
impl HostEvent {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

impl HostEvent {
    fn of(ctx: &HostEventContext, event: &CrateHostEvent) -> Option<Self> {
        let (kind, addr, old) = match event {
            CrateHostEvent::Added => ("add", ctx.addr(), None),
            CrateHostEvent::Removed => ("remove", ctx.addr(), None),
            CrateHostEvent::Up => ("up", ctx.addr(), None),
            CrateHostEvent::Down => ("down", ctx.addr(), None),
            CrateHostEvent::AddressChanged { old_address, new_address } => ("moved", *new_address, Some(*old_address)),
            _ => return None,
        };
        Some(HostEvent {
            kind,
            host_id: ctx.host_id().to_string(),
            address: addr.ip().to_string(),
            port: addr.port(),
            old_address: old.map(|a| a.ip().to_string()),
            old_port: old.map(|a| a.port()),
        })
    }
}

/// Hands items to `deliver` on a blocking-pool thread, one at a time and in the order
/// they were pushed: at most one thread drains the queue, started when an item finds it
/// idle. (A thread per item, as tokio's `spawn_blocking` alone gives, can deliver "up"
/// before the "down" it follows.)
pub struct InOrder<T: Send + 'static> {
    state: Mutex<(VecDeque<T>, bool)>,
    deliver: Box<dyn Fn(T) + Send + Sync>,
}

impl<T: Send + 'static> InOrder<T> {
    pub fn new(deliver: impl Fn(T) + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(InOrder { state: Mutex::new((VecDeque::new(), false)), deliver: Box::new(deliver) })
    }

    pub fn push(self: &Arc<Self>, item: T) {
        let mut state = self.state.lock();
        state.0.push_back(item);
        if state.1 {
            return;
        }
        state.1 = true;
        drop(state);
        let this = self.clone();
        runtime::get().spawn_blocking(move || this.drain());
    }

    fn drain(&self) {
        loop {
            let next = {
                let mut state = self.state.lock();
                let next = state.0.pop_front();
                if next.is_none() {
                    state.1 = false;
                }
                next
            };
            match next {
                Some(item) => (self.deliver)(item),
                None => return,
            }
        }
    }
}

/// Hands the crate's host events to a Python callable `on_host_event(event)` (a
/// [`HostEvent`]), in the order the crate saw them, off the crate's own tasks.
pub struct PyHostListener {
    events: Arc<InOrder<HostEvent>>,
}

impl PyHostListener {
    pub fn new(callback: Py<PyAny>) -> Self {
        let events = InOrder::new(move |event: HostEvent| {
            // Not at interpreter exit: a thread taking the GIL then is ended by Python.
            Python::try_attach(|py| {
                if let Err(e) = callback.bind(py).call1((event,)) {
                    e.display(py);
                }
            });
        });
        PyHostListener { events }
    }
}

impl HostListener for PyHostListener {
    fn on_event(&self, ctx: &HostEventContext, event: &CrateHostEvent) {
        if let Some(event) = HostEvent::of(ctx, event) {
            self.events.push(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn items_pushed_from_many_threads_arrive_in_each_threads_order_one_at_a_time() {
        let (sent, got) = mpsc::channel::<(usize, usize)>();
        let sent = crate::sync::Mutex::new(sent);
        let busy = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let b = busy.clone();
        let queue = InOrder::new(move |item: (usize, usize)| {
            assert!(!b.swap(true, std::sync::atomic::Ordering::SeqCst), "two deliveries at once");
            std::thread::yield_now();
            b.store(false, std::sync::atomic::Ordering::SeqCst);
            sent.lock().send(item).unwrap();
        });
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let q = queue.clone();
                std::thread::spawn(move || (0..2000).for_each(|i| q.push((t, i))))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let mut next = [0usize; 4];
        for _ in 0..8000 {
            let (t, i) = got.recv_timeout(std::time::Duration::from_secs(10)).expect("an item was lost");
            assert_eq!(i, next[t], "thread {t}'s items out of order");
            next[t] += 1;
        }
    }

    #[test]
    fn down_then_up_are_delivered_in_that_order() {
        let (sent, got) = mpsc::channel::<&'static str>();
        let sent = crate::sync::Mutex::new(sent);
        let queue = InOrder::new(move |kind: &'static str| {
            // The first delivery is slow: a thread per event would let "up" overtake it.
            if kind == "down" {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            sent.lock().send(kind).unwrap();
        });
        for kind in ["add", "up", "down", "up", "down", "remove"] {
            queue.push(kind);
        }
        let order: Vec<_> = (0..6).map(|_| got.recv_timeout(std::time::Duration::from_secs(10)).unwrap()).collect();
        assert_eq!(order, ["add", "up", "down", "up", "down", "remove"]);
    }
}
