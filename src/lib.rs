//! turbocql's Rust engine, the private `turbocql._engine` module.
//!
//! Layers, each importing only from those below it (see docs/ARCHITECTURE.md):
//! - [`api`]: the objects the Python classes are built on (session, futures, results,
//!   asyncio, `execute_concurrent`, pipelines, the request builder);
//! - [`exec`]: a statement classified, built into a request, run, its page made, its
//!   completion handed back;
//! - [`codec`]: Python values ↔ CQL bytes, rows, numpy arrays, CQL types;
//! - [`errors`]: scylla errors → the classic driver's exceptions;
//! - [`pyrefs`]: the Python objects the engine uses, handed over once at import;
//! - [`runtime`]: the tokio runtime, and what is reset in a forked child;
//! - [`alloc`]: the allocator (huge blocks reserve address space, not memory).

use pyo3::prelude::*;
use pyo3::types::PyDict;

// Linux only, and said at build time rather than at run time: the asyncio completion queue
// is an eventfd (api::aio), huge blocks are MAP_NORESERVE/mremap mappings (alloc), Python's
// OpenSSL is found with dlopen(RTLD_NOLOAD) and checked with process_vm_readv
// (api::tls::python_openssl). The package metadata says the same (pyproject.toml).
#[cfg(not(target_os = "linux"))]
compile_error!("turbocql's engine is built for Linux only (eventfd, MAP_NORESERVE/mremap, dlopen(RTLD_NOLOAD), process_vm_readv)");

pub mod alloc;
pub mod api;
pub mod codec;
pub mod errors;
pub mod exec;
pub mod pyrefs;
pub mod runtime;
pub mod sync;

#[global_allocator]
static ALLOCATOR: alloc::EngineAlloc = alloc::EngineAlloc;

/// Hands the engine the Python objects it needs (see [`pyrefs`]).
#[pyfunction]
fn _bootstrap(objects: &Bound<'_, PyDict>) -> PyResult<()> {
    pyrefs::register(objects)
}

/// Hands the codec the Python objects it needs (see [`pyrefs::CodecRefs`]).
#[pyfunction]
fn _bootstrap_codec(objects: &Bound<'_, PyDict>) -> PyResult<()> {
    pyrefs::register_codec(objects)
}

/// Called in a forked child (`os.register_at_fork`): new runtime and completion queue.
#[pyfunction]
fn _after_fork() {
    runtime::after_fork();
    exec::completion::after_fork();
    exec::health::after_fork();
    api::pool_log::after_fork();
}

// Not yet reviewed for free-threaded CPython (docs/ARCHITECTURE.md): a free-threaded
// interpreter turns the GIL back on when it imports the module. Since PyO3 0.28 a module
// without `gil_used = true` is declared free-threading safe, so this must stay.
// Public for the fuzz targets (fuzz/), which import the package on top of this build's
// module rather than the wheel's.
#[pymodule(gil_used = true)]
pub fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EMPTY_VALUE_TYPES", pyo3::types::PyTuple::new(m.py(), codec::rows::EMPTY_KINDS)?)?;
    m.add_function(wrap_pyfunction!(_bootstrap, m)?)?;
    m.add_function(wrap_pyfunction!(_bootstrap_codec, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork, m)?)?;
    m.add_function(wrap_pyfunction!(api::tls::tls_verifier, m)?)?;
    // codec
    m.add_function(wrap_pyfunction!(codec::named_rows::rows_as, m)?)?;
    m.add_function(wrap_pyfunction!(codec::named_rows::named_rows, m)?)?;
    m.add_function(wrap_pyfunction!(codec::rows::_set_empty_values, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::encode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::decode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::encode_text, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::decode_text, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::time_encode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::standalone::time_decode, m)?)?;
    // exec
    m.add_class::<exec::prepared::Prepared>()?;
    m.add_class::<exec::statement::ClassifiedStatement>()?;
    m.add_class::<exec::page::Page>()?;
    m.add_class::<exec::metrics::RequestMetrics>()?;
    m.add_class::<codec::arrow::ArrowColumn>()?;
    m.add_class::<exec::routing::LoadBalancing>()?;
    m.add_class::<exec::retry::Retry>()?;
    m.add_class::<exec::timestamps::ClientClock>()?;
    m.add_class::<exec::recorder::Tracing>()?;
    m.add_class::<exec::tracing::FinishedRequest>()?;
    m.add_class::<exec::tracing::TraceEvent>()?;
    m.add_class::<exec::profile::EngineProfile>()?;
    m.add_function(wrap_pyfunction!(exec::completion::run_dispatcher, m)?)?;
    m.add_function(wrap_pyfunction!(exec::completion::stop_dispatcher, m)?)?;
    // api
    m.add_function(wrap_pyfunction!(api::session::connect, m)?)?;
    m.add_function(wrap_pyfunction!(api::session::murmur3, m)?)?;
    m.add_class::<api::hosts::Reconnection>()?;
    m.add_class::<api::hosts::HostEvent>()?;
    m.add_class::<api::session::Session>()?;
    m.add_class::<api::request::PyRequest>()?;
    m.add_class::<api::request::SentRequest>()?;
    m.add_class::<api::builder::RequestBuilder>()?;
    m.add_class::<api::execute::SyncExecute>()?;
    m.add_class::<api::execute::AioExecute>()?;
    m.add_class::<api::execute::AsyncExecute>()?;
    m.add_class::<api::execute::EngineMethod>()?;
    m.add_class::<api::results::ResultCore>()?;
    m.add_class::<api::future::ResponseFutureCore>()?;
    m.add_class::<api::concurrent::ConcurrentRun>()?;
    m.add_class::<api::aio::LoopQueue>()?;
    m.add_class::<api::aio::AioRequest>()?;
    api::aio_send::install_send(m.py());
    m.add_class::<api::pipeline::PipelineCore>()?;
    Ok(())
}
