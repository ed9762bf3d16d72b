//! The write and read workloads' requests and how they are issued: [`one`] request, and the
//! patterns `sync` (N tokio tasks), `sync-threads` (N OS threads blocking with
//! `Handle::block_on`) and `concurrent` (K in flight from one task), each returning every
//! request's latency and the number of errors ([`RunResult`]).

use std::sync::Arc;
use std::time::Instant;

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;

use crate::opts::{Opts, Pattern, Workload};

/// One request of the workload; Ok(()) when the server answered as expected.
pub(crate) async fn one(session: &Session, stmt: &PreparedStatement, workload: Workload, key: &str) -> bool {
    match workload {
        Workload::Write | Workload::Populate | Workload::Reset | Workload::Vector => session.execute_unpaged(stmt, (key, "a", "b")).await.is_ok(),
        Workload::BulkLoad | Workload::BulkUnload | Workload::Scan => unreachable!("the bulk workloads run in module bulk"),
        Workload::Read => {
            let Ok(res) = session.execute_unpaged(stmt, (key,)).await else {
                return false;
            };
            // Decode the row, as the Python drivers do.
            let Ok(rows) = res.into_rows_result() else {
                return false;
            };
            match rows.maybe_first_row::<(&str, Option<&str>, Option<&str>)>() {
                Ok(Some(row)) => {
                    std::hint::black_box(row);
                    true
                }
                _ => false,
            }
        }
    }
}

pub(crate) struct RunResult {
    pub(crate) latencies_ns: Vec<u64>,
    pub(crate) errors: usize,
}

/// `sync`: `threads` tasks, each awaiting its requests one at a time over its slice of keys.
async fn run_sync(session: &Arc<Session>, stmt: &Arc<PreparedStatement>, workload: Workload, keys: &Arc<Vec<String>>, threads: usize) -> RunResult {
    let n = keys.len();
    let mut handles = Vec::with_capacity(threads);
    for t in 0..threads {
        let (lo, hi) = (n * t / threads, n * (t + 1) / threads);
        let (session, stmt, keys) = (session.clone(), stmt.clone(), keys.clone());
        handles.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(hi - lo);
            let mut errors = 0usize;
            for key in &keys[lo..hi] {
                let t0 = Instant::now();
                let ok = one(&session, &stmt, workload, key).await;
                lat.push(t0.elapsed().as_nanos() as u64);
                errors += usize::from(!ok);
            }
            (lat, errors)
        }));
    }
    let mut out = RunResult { latencies_ns: Vec::with_capacity(n), errors: 0 };
    for h in handles {
        let (lat, errors) = h.await.expect("worker task panicked");
        out.latencies_ns.extend(lat);
        out.errors += errors;
    }
    out
}

/// `sync-threads`: `threads` OS threads, each blocking on its requests one at a time
/// (`Handle::block_on`, the runtime's worker doing the I/O) over its slice of keys.
fn run_sync_threads(
    rt: tokio::runtime::Handle,
    session: Arc<Session>,
    stmt: Arc<PreparedStatement>,
    workload: Workload,
    keys: Arc<Vec<String>>,
    threads: usize,
) -> RunResult {
    let n = keys.len();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (lo, hi) = (n * t / threads, n * (t + 1) / threads);
            let (rt, session, stmt, keys) = (rt.clone(), session.clone(), stmt.clone(), keys.clone());
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(hi - lo);
                let mut errors = 0usize;
                for key in &keys[lo..hi] {
                    let t0 = Instant::now();
                    let ok = rt.block_on(one(&session, &stmt, workload, key));
                    lat.push(t0.elapsed().as_nanos() as u64);
                    errors += usize::from(!ok);
                }
                (lat, errors)
            })
        })
        .collect();
    let mut out = RunResult { latencies_ns: Vec::with_capacity(n), errors: 0 };
    for h in handles {
        let (lat, errors) = h.join().expect("sync thread panicked");
        out.latencies_ns.extend(lat);
        out.errors += errors;
    }
    out
}

/// `concurrent`: one task keeps `concurrency` requests in flight (`buffer_unordered`).
pub(crate) async fn run_concurrent(session: &Session, stmt: &PreparedStatement, workload: Workload, keys: &[String], concurrency: usize) -> RunResult {
    let mut out = RunResult { latencies_ns: Vec::with_capacity(keys.len()), errors: 0 };
    let mut results = stream::iter(keys.iter())
        .map(|key| async move {
            let t0 = Instant::now();
            let ok = one(session, stmt, workload, key).await;
            (t0.elapsed().as_nanos() as u64, ok)
        })
        .buffer_unordered(concurrency);
    while let Some((ns, ok)) = results.next().await {
        out.latencies_ns.push(ns);
        out.errors += usize::from(!ok);
    }
    out
}

pub(crate) async fn run(o: &Opts, session: &Arc<Session>, stmt: &Arc<PreparedStatement>, workload: Workload, keys: Vec<String>) -> RunResult {
    match o.pattern {
        Pattern::Sync => run_sync(session, stmt, workload, &Arc::new(keys), o.threads).await,
        Pattern::SyncThreads => {
            let (session, stmt, threads) = (session.clone(), stmt.clone(), o.threads);
            let rt = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || run_sync_threads(rt, session, stmt, workload, Arc::new(keys), threads))
                .await
                .expect("sync-threads runner panicked")
        }
        Pattern::Concurrent => run_concurrent(session, stmt, workload, &keys, o.concurrency).await,
    }
}
