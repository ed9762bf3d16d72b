//! Runtime: the one tokio runtime that drives every connection of every session, and
//! [`ForkLocal`], how the engine's process-wide state survives `fork()`.
//!
//! The runtime runs on its own worker threads (`TURBOCQL_IO_THREADS`, default 1), so no
//! Python thread ever does I/O while holding the GIL. Python threads wait for a result
//! with [`block_on`] after releasing the GIL.
//!
//! After `fork()` the child has none of the parent's threads, so the package calls
//! `_engine._after_fork` in the child (`os.register_at_fork`), which forgets every
//! [`ForkLocal`] (this runtime and the completion queue); the next use creates fresh ones.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use tokio::runtime::Runtime;

/// A process-wide value created on first use, and forgotten by [`ForkLocal::forget`] in a
/// forked child (whatever the parent's threads held or were doing is gone there), so that
/// the child's next use creates a new one. A value is leaked, never dropped: references
/// to it may live anywhere.
pub struct ForkLocal<T: Sync> {
    ptr: AtomicPtr<T>,
}

impl<T: Sync> ForkLocal<T> {
    pub const fn new() -> Self {
        ForkLocal { ptr: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// The value, created by `init` on first use. Two threads racing on the first use may
    /// both call `init`; one value wins and the other is dropped. No lock is taken, so a
    /// lock held by a vanished thread can never block a forked child.
    ///
    /// `T: Sync`: the value is shared with every thread (the `AtomicPtr` alone would make
    /// `ForkLocal<T>` `Sync` for any `T`).
    #[inline]
    pub fn get_or_init(&'static self, init: impl FnOnce() -> T) -> &'static T {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: non-null pointers here come from Box::into_raw below and are never freed.
            return unsafe { &*p };
        }
        let fresh = Box::into_raw(Box::new(init()));
        match self.ptr.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: `fresh` is now shared and never freed.
            Ok(_) => unsafe { &*fresh },
            Err(existing) => {
                // SAFETY: `fresh` was never shared; `existing` is live and never freed.
                drop(unsafe { Box::from_raw(fresh) });
                unsafe { &*existing }
            }
        }
    }

    /// In a forked child: the next use creates a new value (the old one is leaked).
    pub fn forget(&self) {
        self.ptr.store(std::ptr::null_mut(), Ordering::Release);
    }
}

impl<T: Sync> Default for ForkLocal<T> {
    fn default() -> Self {
        Self::new()
    }
}

static RUNTIME: ForkLocal<Runtime> = ForkLocal::new();

/// Number of tokio worker threads, from `TURBOCQL_IO_THREADS` (1 to 64, default 1).
fn worker_threads() -> usize {
    std::env::var("TURBOCQL_IO_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|n| (1..=64).contains(n)).unwrap_or(1)
}

/// The process-wide runtime, created on first use.
pub fn get() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(worker_threads())
            .thread_name("turbocql-io")
            .enable_all()
            .build()
            .expect("turbocql: cannot start the tokio runtime")
    })
}

/// How many forks this process descends from (0 in the process that first imported the
/// engine): what the parent made before a fork (a session, a future, a pipeline) is driven by
/// a runtime the child does not have, and says so instead of waiting for it.
static GENERATION: AtomicU64 = AtomicU64::new(0);

pub fn generation() -> u64 {
    // Relaxed: written only in a forked child before it has any other thread (the threads it
    // starts after see the write through the spawn's own ordering).
    GENERATION.load(Ordering::Relaxed)
}

/// A value whose drop may reach into the runtime of the process that made it: dropping a
/// scylla session, a channel's last sender or a request's future wakes tasks of that runtime
/// (taking its scheduler's locks and writing to its eventfd), cancels its timers, closes
/// its connections' channels. Dropped as usual in that process; in a forked child it is
/// leaked instead: there the parent's runtime has no threads (a lock one of them held stays
/// held), and its epoll and eventfd descriptors are the parent's own, shared across the fork
/// (a wake-up written there wakes the parent's I/O thread). The memory is the child's copy;
/// leaking it costs nothing the child could use.
pub struct ProcessBound<T> {
    value: ManuallyDrop<T>,
    generation: u64,
}

impl<T> ProcessBound<T> {
    pub fn new(value: T) -> Self {
        ProcessBound { value: ManuallyDrop::new(value), generation: generation() }
    }

    /// True in a forked child of the process that made it.
    pub fn inherited(&self) -> bool {
        self.generation != generation()
    }
}

impl<T> Deref for ProcessBound<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for ProcessBound<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> Drop for ProcessBound<T> {
    fn drop(&mut self) {
        if !self.inherited() {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}

/// In a forked child: forget the parent's runtime (its threads are gone).
pub fn after_fork() {
    RUNTIME.forget();
    // Relaxed: see `generation`.
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The error for an object of the parent process used in a forked child.
pub const FORKED: &str =
    "made by the parent process before fork(): the child does not have the engine that drives it; connect again in the child (a new Cluster)";

/// Runs `f` (a user's Python callback: a retry policy, a host filter) where the crate
/// calls it synchronously, without stalling the other requests of the thread it is on.
///
/// On a worker thread of the runtime, tokio's `block_in_place` first hands the worker's
/// queue of tasks (every other request and connection it drives) to another thread, so
/// that waiting for the GIL, or a callback that sleeps, holds up only the request that
/// called it. Elsewhere (a Python thread in [`block_on`], the request's own thread) `f`
/// just runs.
pub fn off_io<R>(f: impl FnOnce() -> R) -> R {
    tokio::task::block_in_place(f)
}

/// Runs `fut` to completion on the calling thread, with the runtime's I/O and timers.
/// Call it only with the GIL released.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    get().block_on(fut)
}

#[cfg(test)]
mod tests {
    //! Pure Rust, run under Miri too (scripts/miri.sh): the first use raced by threads, a
    //! forked child's forgetting, and what a forked child leaks.
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn threads_racing_on_the_first_use_all_get_the_one_value_and_forget_starts_again() {
        static SHARED: ForkLocal<u64> = ForkLocal::new();
        let threads: Vec<_> = (0..4u64).map(|i| std::thread::spawn(move || SHARED.get_or_init(|| i) as *const u64 as usize)).collect();
        let seen: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(seen.iter().all(|p| *p == seen[0]), "{seen:?}");
        let first = *SHARED.get_or_init(|| 99);
        assert!(first < 4, "{first}");
        SHARED.forget();
        assert_eq!(*SHARED.get_or_init(|| 99), 99);
    }

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_process_bound_value_is_dropped_in_its_process_and_leaked_in_a_forked_child() {
        let drops = Arc::new(AtomicUsize::new(0));
        drop(ProcessBound::new(Counted(drops.clone())));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        let inherited = ProcessBound::new(Counted(drops.clone()));
        assert!(!inherited.inherited());
        // What `after_fork` does to the generation, as in a child (the runtime left alone).
        // Relaxed: see `generation`.
        GENERATION.fetch_add(1, Ordering::Relaxed);
        assert!(inherited.inherited());
        drop(inherited);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "the child must not drop the parent's value");
        let made_in_child = ProcessBound::new(Counted(drops.clone()));
        drop(made_in_child);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}
