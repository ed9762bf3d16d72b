//! The execution layer: a statement becomes a request and runs, with no notion of
//! futures, asyncio, `execute_concurrent` or pipelines (those are `api`'s, above).
//!
//! - [`options`]: consistency, timeouts, page size, row shape; a session's defaults;
//! - [`prepared`]: a prepared statement and its metadata;
//! - [`statement`]: what a statement is ([`statement::classify`]), in one place;
//! - [`request`]: the [`request::Request`] of a classified statement
//!   ([`request::build`], which every path calls);
//! - [`replica_batch`]: rows of one statement grouped by replicas into UNLOGGED batches
//!   (the bulk loader's);
//! - [`run`]: running a request, one page at a time, under its timeout;
//! - [`attempts`]: the hosts a request tried, for a plan run out by `RETRY_NEXT_HOST`;
//! - [`page`]: its outcome as Python sees it ([`page::Page`]);
//! - [`routing`], [`retry`], [`profile`]: the classic load-balancing and retry policies
//!   and execution profiles, as the scylla crate's, built once per profile;
//! - [`health`]: nodes that stopped answering go last in every plan until they answer;
//! - [`inflight`]: a session's cap on requests in flight (back-pressure);
//! - [`metrics`]: a cluster's request counters and latencies (`metrics_enabled`);
//! - [`timestamps`]: client-side timestamps, stamped on each request as it is built;
//! - [`recorder`]: what an instrumented request notes while it runs (failed attempts,
//!   speculative executions), below [`request`];
//! - [`tracing`]: OpenTelemetry spans' timing and events (`turbocql.tracing`);
//! - [`completion`]: outcomes handed back in batches to a dispatcher thread or a sink.
//!
//! It imports from `codec` and the base (`errors`, `pyrefs`, `runtime`, `sync`) only.

pub mod attempts;
pub mod completion;
pub mod health;
pub mod inflight;
pub mod metrics;
pub mod options;
pub mod page;
pub mod prepared;
pub mod profile;
pub mod recorder;
pub mod replica_batch;
pub mod request;
pub mod retry;
pub mod routing;
pub mod run;
pub mod statement;
pub mod timestamps;
pub mod tracing;
