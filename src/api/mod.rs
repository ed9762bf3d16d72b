//! The front-end layer: the engine objects the Python classes are built on.
//!
//! Each file depends only on `exec`, `codec` and the files listed before it:
//! - [`results`]: `ResultSet`'s core ([`results::ResultCore`]);
//! - [`aio`]: asyncio: a loop's completion queue and the awaitable request;
//! - [`aio_send`]: the awaitable request's `am_send` slot;
//! - [`request`]: a built request as a Python object, run, submitted or awaited;
//! - [`future`]: `ResponseFuture`'s core, settled by the dispatcher;
//! - [`hosts`]: reconnection policies and host events, set at connect;
//! - [`pool_log`]: the pools' failed reconnection attempts, logged (a `tracing` subscriber);
//! - [`auth`]: a Python `AuthProvider`'s authenticator, called during the handshake;
//! - [`tls`]: the engine's rustls context, built from the application's `ssl.SSLContext`;
//! - [`frame_limit`]: `max_frame_length`, the process's cap on a response frame's body;
//! - [`session`]: the connection (connect, prepare, keyspace, shutdown) and the engine's
//!   view of the cluster;
//! - [`concurrent`]: `execute_concurrent*`, with the requests kept in flight in Rust;
//! - [`pipeline`]: `WritePipeline` / `ReadPipeline`, driven in the engine;
//! - [`builder`]: a session's requests and defaults, which every path asks;
//! - [`execute`]: `Session.execute` (sync and asyncio) in one engine call.

pub mod aio;
pub mod aio_send;
pub mod auth;
pub mod builder;
pub mod concurrent;
pub mod execute;
pub mod frame_limit;
pub mod future;
pub mod hosts;
pub mod pipeline;
pub mod pool_log;
pub mod request;
pub mod results;
pub mod session;
pub mod tls;
