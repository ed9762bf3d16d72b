//! turbocql's Rust engine, the private `turbocql._engine` module.
//!
//! Modules, one per concern:
//! - [`runtime`]: the tokio runtime that does all I/O, off the GIL;
//! - [`session`]: connecting, preparing, executing statements and batches;
//! - [`values`]: Python values → CQL bytes, typed by prepared metadata;
//! - [`arrays`]: numpy arrays (the buffer protocol) read and built without per-element objects;
//! - [`rows`]: CQL bytes → Python rows, a page at a time;
//! - [`results`]: the result of a request (a page and its rows), `ResultSet`'s core;
//! - [`concurrent`]: `execute_concurrent`, with the requests kept in flight in Rust;
//! - [`pipeline`]: document 001's write and read pipelines;
//! - [`completion`]: results of requests submitted without waiting, handed back in batches;
//! - [`future`]: `ResponseFuture`'s core: settled by the dispatcher, waited on, callbacks;
//! - [`aio`]: asyncio: the per-loop completion queue and the awaitable request;
//! - [`codec`]: the per-type encoders and decoders on their own (benchmarks, tests);
//! - [`errors`]: scylla errors → the classic driver's exception classes;
//! - [`types`]: CQL type names.

use pyo3::prelude::*;
use pyo3::types::PyDict;

pub mod aio;
pub mod arrays;
pub mod codec;
pub mod completion;
pub mod concurrent;
pub mod errors;
pub mod future;
pub mod pipeline;
pub mod results;
pub mod rows;
pub mod runtime;
pub mod session;
pub mod types;
pub mod values;

/// Hands the engine the Python objects it needs: exception classes, `UNSET_VALUE`,
/// `UUID`, `Decimal`, and the classes results are built with.
#[pyfunction]
fn _bootstrap(py: Python<'_>, objects: &Bound<'_, PyDict>) -> PyResult<()> {
    errors::register(py, objects)
}

/// Called in a forked child (`os.register_at_fork`): new runtime and completion queue.
#[pyfunction]
fn _after_fork() {
    runtime::after_fork();
    completion::after_fork();
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(_bootstrap, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork, m)?)?;
    m.add_function(wrap_pyfunction!(session::connect, m)?)?;
    m.add_function(wrap_pyfunction!(rows::rows_as, m)?)?;
    m.add_function(wrap_pyfunction!(rows::named_rows, m)?)?;
    results::register(m)?;
    m.add_class::<results::ResultCore>()?;
    m.add_class::<future::ResponseFutureCore>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<session::Prepared>()?;
    m.add_class::<session::PyRequest>()?;
    m.add_class::<session::RequestBuilder>()?;
    m.add_class::<session::StatementOpts>()?;
    m.add_class::<session::SyncExecute>()?;
    m.add_class::<session::EngineMethod>()?;
    m.add_class::<concurrent::ConcurrentRun>()?;
    m.add_class::<aio::LoopQueue>()?;
    m.add_class::<aio::AioRequest>()?;
    m.add_class::<aio::AioExecute>()?;
    aio::install_send(m.py());
    m.add_class::<pipeline::PipelineCore>()?;
    m.add_function(wrap_pyfunction!(completion::run_dispatcher, m)?)?;
    m.add_function(wrap_pyfunction!(completion::stop_dispatcher, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::time_encode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::time_decode, m)?)?;
    Ok(())
}
