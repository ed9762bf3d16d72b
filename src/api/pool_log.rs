//! The connection pools' failed reconnection attempts, logged as the classic driver logs its
//! own: `Error attempting to reconnect to HOST, scheduling retry in S seconds: ERROR`, a
//! WARNING on the pool logger (`turbocql.pool`; `cassandra.pool` under the compat shim).
//!
//! The scylla crate keeps a pool per node and refills it on the reconnection policy's
//! schedule ([`super::hosts::Reconnection`]), but tells its policy neither the node nor the
//! error. It says both only in its own `tracing` events, at DEBUG:
//! `[ADDR] Failed to open connection to the non-shard-aware port: ERROR` (or `Failed to set
//! keyspace for new connection: ERROR`), then `[ADDR] Scheduling next refill in MS ms`. So
//! a `tracing` subscriber, installed as the process's default at the first connect, takes
//! exactly those events: it is interested in the DEBUG events of the crate's
//! `connection_pool` module and in nothing else (every other call site, spans included, is
//! told `Interest::never()` once and then costs nothing). Those events come from the pools'
//! own tasks when a connection opens, fails or is refilled, never from a request. The record
//! is made on a blocking-pool thread (the pool's task never waits for the GIL).
//!
//! If the process already has a default `tracing` subscriber (another extension set one),
//! it is left alone and these records are not made. The crate version is pinned
//! (Cargo.lock), and `tests/integration/test_logging.py` checks the records against the
//! classic driver's on a node stop and start.

use std::collections::HashMap;
use std::fmt;
use std::sync::Once;

use pyo3::prelude::*;
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::subscriber::{Interest, Subscriber};
use tracing_core::{Event, Level, LevelFilter, Metadata};

use crate::runtime::{self, ForkLocal};
use crate::sync::Mutex;

/// The crate module whose events are read.
const POOL_MODULE: &str = "scylla::network::connection_pool";

const FAILED_OPEN: &str = "] Failed to open connection to the non-shard-aware port: ";
const FAILED_KEYSPACE: &str = "] Failed to set keyspace for new connection: ";
const SCHEDULING: &str = "] Scheduling next refill in ";

/// Reads the pools' events (see the module doc).
struct PoolEvents;

/// Each node's (`ADDR`) last connection error since its last scheduled refill. Forgotten in
/// a forked child (a thread of the parent may have held its lock at the fork).
static ERRORS: ForkLocal<Mutex<HashMap<String, String>>> = ForkLocal::new();

/// In a forked child: the parent's pools are gone, and so are their errors.
pub fn after_fork() {
    ERRORS.forget();
}

fn wanted(meta: &Metadata<'_>) -> bool {
    meta.is_event() && *meta.level() == Level::DEBUG && meta.module_path() == Some(POOL_MODULE)
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

/// `[ADDR]REST` -> (ADDR, REST after `marker`), if the message has that marker.
fn split<'a>(message: &'a str, marker: &str) -> Option<(&'a str, &'a str)> {
    let (addr, rest) = message.strip_prefix('[')?.split_once(marker)?;
    Some((addr, rest))
}

/// The crate's error, as a person reads it: `IoError(Os { code: 111, kind: ConnectionRefused,
/// message: "Connection refused" })` -> `[Errno 111] Connection refused` (as Python words an
/// OSError); any other error as the crate formats it.
fn readable(error: &str) -> String {
    let code = error.split_once("code: ").and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next()).filter(|c| !c.is_empty());
    let message = error.split_once("message: \"").and_then(|(_, r)| r.split_once('"')).map(|(m, _)| m);
    match (code, message) {
        (Some(code), Some(message)) => format!("[Errno {code}] {message}"),
        _ => error.to_string(),
    }
}

/// The record a pool event makes: (host, delay in seconds, error) once a refill is scheduled
/// after an error.
fn on_message(errors: &Mutex<HashMap<String, String>>, message: &str) -> Option<(String, f64, String)> {
    if let Some((addr, error)) = split(message, FAILED_OPEN).or_else(|| split(message, FAILED_KEYSPACE)) {
        errors.lock().insert(addr.to_string(), readable(error));
        return None;
    }
    let (addr, rest) = split(message, SCHEDULING)?;
    let ms: u64 = rest.strip_suffix(" ms")?.trim().parse().ok()?;
    let error = errors.lock().remove(addr)?;
    Some((addr.to_string(), ms as f64 / 1000.0, error))
}

impl Subscriber for PoolEvents {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if wanted(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        wanted(meta)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::DEBUG)
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1) // never called: no span is wanted
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        if let Some((host, delay, error)) = on_message(ERRORS.get_or_init(|| Mutex::new(HashMap::new())), &message.0) {
            log_reconnect_error(host, delay, error);
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

fn log_reconnect_error(host: String, delay: f64, error: String) {
    runtime::get().spawn_blocking(move || {
        // Not at interpreter exit: a thread taking the GIL then is ended by Python.
        Python::try_attach(|py| {
            let args = ("Error attempting to reconnect to %s, scheduling retry in %s seconds: %s", host, delay, error);
            if let Err(e) = crate::pyrefs::get(py).and_then(|refs| refs.pool_log.bind(py).call_method1("warning", args)) {
                e.display(py);
            }
        })
    });
}

/// Installs the subscriber as the process's default `tracing` subscriber, once (at the first
/// connect); a default set before by someone else is kept.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = tracing_core::dispatcher::set_global_default(tracing_core::Dispatch::new(PoolEvents));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refill_scheduled_after_an_error_makes_one_record_naming_the_node_the_delay_and_the_error() {
        let errors = Mutex::new(HashMap::new());
        let failed = r#"[127.0.0.12:9042] Failed to open connection to the non-shard-aware port: IoError(Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })"#;
        assert_eq!(on_message(&errors, failed), None);
        assert_eq!(on_message(&errors, "[127.0.0.13:9042] Scheduling next refill in 1000 ms"), None, "another node had no error");
        assert_eq!(
            on_message(&errors, "[127.0.0.12:9042] Scheduling next refill in 1500 ms"),
            Some(("127.0.0.12:9042".to_string(), 1.5, "[Errno 111] Connection refused".to_string()))
        );
        assert_eq!(on_message(&errors, "[127.0.0.12:9042] Scheduling next refill in 1000 ms"), None, "a refill after a full pool");
        assert_eq!(on_message(&errors, "[127.0.0.12:9042] Pool is full, clearing 0 excess connections"), None);
    }

    #[test]
    fn an_error_without_an_os_code_is_kept_as_the_crate_words_it() {
        assert_eq!(readable("BrokenConnection(KeepaliveTimeout)"), "BrokenConnection(KeepaliveTimeout)");
    }
}
