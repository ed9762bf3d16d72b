//! Runtime: the one tokio runtime that drives every connection of every session.
//!
//! It runs on its own worker threads (`TURBOCQL_IO_THREADS`, default 1), so no Python
//! thread ever does I/O while holding the GIL. Python threads wait for a result with
//! `block_on` after releasing the GIL.

use std::future::Future;
use std::sync::OnceLock;
use tokio::runtime::Runtime;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

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
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(worker_threads())
            .thread_name("turbocql-io")
            .enable_all()
            .build()
            .expect("turbocql: cannot start the tokio runtime")
    })
}

/// Runs `fut` to completion on the calling thread, with the runtime's I/O and timers.
/// Call it only with the GIL released.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    get().block_on(fut)
}
