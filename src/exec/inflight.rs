//! A session's cap on requests in flight (`Cluster(max_requests_in_flight=...)`): what keeps
//! client memory bounded when the cluster stops answering or reading while the program goes
//! on submitting.
//!
//! Each request started without waiting (`execute_async`, asyncio) holds a [`Slot`] until
//! it ends. With every slot taken, `execute_async` waits for one on the caller's thread (GIL
//! released) for at most the request's timeout: back-pressure, as the classic driver's
//! `execute_async` waits for a connection with a free stream id. An asyncio request waits
//! in the runtime instead (the event loop must not block), and once as many asyncio
//! requests wait as there are slots, further ones are refused at once (`ConnectionBusy`).
//! `execute`, `execute_concurrent` and pipelines bound themselves (a thread each, their
//! `concurrency`, their `max_in_flight`) and take no slot.
//!
//! Taking and giving back a slot is a compare-and-swap and a decrement; waiters are woken
//! through a `Notify` only when there are any.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// Requests in flight allowed per session by default (the classic driver allows 32,768
/// per connection, the stream ids of protocol v3 and later).
pub const DEFAULT_MAX: usize = 32_768;

/// The cap of one session (see the module doc).
#[derive(Debug)]
pub struct InFlight {
    max: usize,
    running: AtomicUsize,
    waiting: AtomicUsize,
    freed: Notify,
}

/// One request's place among the session's requests in flight; given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<InFlight>);

impl Drop for Slot {
    fn drop(&mut self) {
        let cap = &self.0;
        cap.running.fetch_sub(1, Ordering::SeqCst);
        if cap.waiting.load(Ordering::SeqCst) > 0 {
            cap.freed.notify_one();
        }
    }
}

impl InFlight {
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(InFlight { max: max.max(1), running: AtomicUsize::new(0), waiting: AtomicUsize::new(0), freed: Notify::new() })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Requests waiting for a slot now.
    pub fn waiting(&self) -> usize {
        // Relaxed: a figure to report, read once; the slots' hand-over uses SeqCst.
        self.waiting.load(Ordering::Relaxed)
    }

    /// A slot if one is free now.
    #[inline]
    pub fn try_take(self: &Arc<Self>) -> Option<Slot> {
        let mut n = self.running.load(Ordering::SeqCst);
        loop {
            if n >= self.max {
                return None;
            }
            match self.running.compare_exchange_weak(n, n + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Some(Slot(self.clone())),
                Err(now) => n = now,
            }
        }
    }

    /// A slot, waiting for one for at most `within` (None: as long as it takes). None if
    /// none freed in time.
    pub async fn take(self: &Arc<Self>, within: Option<Duration>) -> Option<Slot> {
        let deadline = within.map(|d| tokio::time::Instant::now() + d);
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let slot = loop {
            let notified = self.freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(slot) = self.try_take() {
                break Some(slot);
            }
            match deadline {
                Some(d) => {
                    if tokio::time::timeout_at(d, notified).await.is_err() {
                        break self.try_take();
                    }
                }
                None => notified.await,
            }
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        if slot.is_none() && self.waiting.load(Ordering::SeqCst) > 0 {
            // A wake-up this waiter may have taken without a slot goes to the next one.
            self.freed.notify_one();
        }
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_capped_and_given_back() {
        let cap = InFlight::new(2);
        let a = cap.try_take().expect("first");
        let _b = cap.try_take().expect("second");
        assert!(cap.try_take().is_none());
        drop(a);
        assert!(cap.try_take().is_some());
    }

    #[test]
    fn a_waiter_gets_the_slot_given_back_or_times_out() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(async {
            let cap = InFlight::new(1);
            let held = cap.try_take().unwrap();
            assert!(cap.take(Some(Duration::from_millis(20))).await.is_none());
            let waiter = {
                let cap = cap.clone();
                tokio::spawn(async move { cap.take(Some(Duration::from_secs(5))).await.is_some() })
            };
            tokio::task::yield_now().await;
            drop(held);
            assert!(waiter.await.unwrap());
            assert_eq!(cap.waiting(), 0);
        });
    }
}
