//! Locks and condition variables for the engine: std's, with the small parking_lot-style API
//! the engine uses (`lock()` gives the guard, `Condvar::wait(&mut guard)`, no poisoning).
//!
//! Why not parking_lot: a thread parked on a parking_lot lock or condition variable is linked
//! into a process-wide table by a node on its own stack. `fork()` copies the table; in the
//! child the parent's threads are gone, glibc hands their stacks to the child's new threads,
//! and the next lock that hashes to the same bucket walks a node that is now someone's stack
//! frame (parking_lot issue #515). A forked child crashed that way, now and then, in its
//! dispatcher (tests/integration/test_fork.py). std's primitives keep their state in the
//! object (a futex word), so a child that forgets the parent's objects (`runtime::ForkLocal`)
//! is left with nothing shared.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, TryLockError};
use std::time::Instant;

/// A mutex (std's) that is never poisoned: a panic while holding it does not make the data
/// unusable for others (the engine's data stays consistent between statements).
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized>(std::sync::Mutex<T>);

/// The guard of a [`Mutex`]; `Option` so that a [`Condvar`] can take it while it waits.
pub struct MutexGuard<'a, T: ?Sized>(Option<std::sync::MutexGuard<'a, T>>);

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Self {
        Mutex(std::sync::Mutex::new(value))
    }
}

impl<T: ?Sized> Mutex<T> {
    pub fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
    }

    /// The value, through exclusive access (no locking: a lock left held by a thread that
    /// vanished in a fork does not block it).
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// The guard if the mutex is free now.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(g) => Some(MutexGuard(Some(g))),
            Err(TryLockError::Poisoned(p)) => Some(MutexGuard(Some(p.into_inner()))),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_deref().expect("a guard is only empty while its condvar waits")
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0.as_deref_mut().expect("a guard is only empty while its condvar waits")
    }
}

/// Whether a timed wait ended by its deadline.
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

/// A condition variable (std's) waited on with a [`MutexGuard`].
///
/// It counts its waiters, and a notify with none is a load, not a system call: std's
/// `notify_one`/`notify_all` always make a `futex` wake call, and a future settled with
/// nobody waiting on it (every `execute_async` whose result is read after it completed) paid
/// one per request, as parking_lot's, which checks for waiters first, did not. A waiter
/// counts itself while it holds the mutex, before `wait` releases it; whoever changes the
/// state waited for does so under the mutex, so a notify after that change sees the count.
#[derive(Debug, Default)]
pub struct Condvar {
    cv: std::sync::Condvar,
    waiters: AtomicUsize,
}

impl Condvar {
    pub const fn new() -> Self {
        Condvar { cv: std::sync::Condvar::new(), waiters: AtomicUsize::new(0) }
    }

    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let g = guard.0.take().expect("a guard waits once at a time");
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let g = self.cv.wait(g).unwrap_or_else(PoisonError::into_inner);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        guard.0 = Some(g);
    }

    /// Waits until notified or `deadline`.
    pub fn wait_until<T>(&self, guard: &mut MutexGuard<'_, T>, deadline: Instant) -> WaitTimeoutResult {
        let g = guard.0.take().expect("a guard waits once at a time");
        let left = deadline.saturating_duration_since(Instant::now());
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let (g, res) = self.cv.wait_timeout(g, left).unwrap_or_else(PoisonError::into_inner);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        guard.0 = Some(g);
        WaitTimeoutResult(res.timed_out())
    }

    pub fn notify_one(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.cv.notify_one();
        }
    }

    pub fn notify_all(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.cv.notify_all();
        }
    }
}

/// A readers-writer lock (std's), never poisoned.
#[derive(Debug, Default)]
pub struct RwLock<T: ?Sized>(std::sync::RwLock<T>);

impl<T> RwLock<T> {
    pub const fn new(value: T) -> Self {
        RwLock(std::sync::RwLock::new(value))
    }
}

impl<T: ?Sized> RwLock<T> {
    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn write(&self) -> std::sync::RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value, through exclusive access (no locking).
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_waiter_is_woken_and_a_deadline_passes() {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let other = pair.clone();
        let t = std::thread::spawn(move || {
            *other.0.lock() = true;
            other.1.notify_all();
        });
        let mut g = pair.0.lock();
        while !*g {
            pair.1.wait(&mut g);
        }
        drop(g);
        t.join().unwrap();
        let mut g = pair.0.lock();
        assert!(pair.1.wait_until(&mut g, Instant::now() + Duration::from_millis(5)).timed_out());
        assert!(pair.0.try_lock().is_none());
    }

    #[test]
    fn a_notify_with_no_waiter_is_skipped_and_later_waiters_are_still_woken() {
        let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
        pair.1.notify_all(); // nobody waits: nothing to wake, nothing lost
        assert_eq!(pair.1.waiters.load(Ordering::SeqCst), 0);
        for round in 1..=200u32 {
            let other = pair.clone();
            let t = std::thread::spawn(move || {
                *other.0.lock() = round;
                other.1.notify_one();
            });
            let mut g = pair.0.lock();
            while *g != round {
                pair.1.wait(&mut g);
            }
            drop(g);
            t.join().unwrap();
        }
        assert_eq!(pair.1.waiters.load(Ordering::SeqCst), 0);
    }
}
