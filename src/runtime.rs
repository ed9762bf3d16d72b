//! Runtime: the one tokio runtime that drives every connection of every session.
//!
//! It runs on its own worker threads (`TURBOCQL_IO_THREADS`, default 1), so no Python
//! thread ever does I/O while holding the GIL. Python threads wait for a result with
//! `block_on` after releasing the GIL.
//!
//! After `fork()` the child has none of the parent's threads, so the package calls
//! [`after_fork`] in the child, and the next request starts a fresh runtime there.

use std::future::Future;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;
use tokio::runtime::Runtime;

static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
static INIT: Mutex<()> = Mutex::new(());

/// Number of tokio worker threads, from `TURBOCQL_IO_THREADS` (1 to 64, default 1).
fn worker_threads() -> usize {
    std::env::var("TURBOCQL_IO_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or(1)
}

/// The process-wide runtime, created on first use.
pub fn get() -> &'static Runtime {
    let p = RUNTIME.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: the pointer comes from Box::leak below and is never freed.
        return unsafe { &*p };
    }
    let _guard = INIT.lock().unwrap_or_else(|e| e.into_inner());
    let p = RUNTIME.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: as above.
        return unsafe { &*p };
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .thread_name("turbocql-io")
        .enable_all()
        .build()
        .expect("turbocql: cannot start the tokio runtime");
    let leaked: &'static Runtime = Box::leak(Box::new(rt));
    RUNTIME.store(leaked as *const Runtime as *mut Runtime, Ordering::Release);
    leaked
}

/// In a forked child: forget the parent's runtime (its threads are gone; it is leaked,
/// never dropped) so that the next request starts a new one.
pub fn after_fork() {
    RUNTIME.store(std::ptr::null_mut(), Ordering::Release);
}

/// Runs `fut` to completion on the calling thread, with the runtime's I/O and timers.
/// Call it only with the GIL released.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    get().block_on(fut)
}
