//! Pure-Rust reference client for turbocql's benchmarks: the `scylla` crate used directly.
//!
//! It runs the same workloads as the Python clients in `benchmarks/clients/` and prints one
//! JSON line with the same fields, so the runner can put it beside them:
//!
//! * `--workload write`: prepared `INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)`,
//!   distinct keys (`<prefix><i>`), values `'a'`, `'b'`.
//! * `--workload read`: prepared `SELECT * FROM t WHERE thekey = ?` of one row by key, over
//!   the keys `row<i>`, `i < --rows`, written (if missing) before timing. Rows are decoded.
//! * `--workload populate`: only writes the read keys (used by the runner to prepare reads).
//!
//! Patterns: `sync` (N tokio tasks, each awaiting one request at a time) and `concurrent`
//! (K requests in flight from one task, via `buffer_unordered`).
//!
//! Client CPU is `getrusage(RUSAGE_SELF)` (user + system, all threads) around the timed
//! section only; setup and warm-up are outside it. With `--server-pid`, the server's CPU
//! (utime + stime from `/proc/PID/stat`) is measured around the same section.
//!
//! No dependency beyond the package's own (scylla, tokio, futures): `getrusage` is declared
//! here by hand so that the workspace's Cargo.lock does not change.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::prepared::PreparedStatement;

// ---------------------------------------------------------------------------------------------
// getrusage(2), declared by hand (Linux, 64-bit: timeval is two longs, then 14 longs).

#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: i64,
    tv_usec: i64,
}

#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

const RUSAGE_SELF: i32 = 0;

/// User + system CPU time of this process (all threads), in microseconds.
fn self_cpu_us() -> f64 {
    let mut ru = Rusage::default();
    // SAFETY: `ru` is a valid, writable `struct rusage` with the kernel's layout.
    let rc = unsafe { getrusage(RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let us = |t: &Timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(&ru.ru_utime) + us(&ru.ru_stime)
}

/// utime + stime of another process, in microseconds (clock ticks assumed 100 Hz, as on
/// every Linux build that matters here), or None if it cannot be read.
fn proc_cpu_us(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14, stime field 15.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) * 10_000.0)
}

// ---------------------------------------------------------------------------------------------
// Options.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    Write,
    Read,
    Populate,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pattern {
    Sync,
    Concurrent,
}

#[derive(Debug)]
struct Opts {
    host: String,
    port: u16,
    keyspace: String,
    ops: usize,
    threads: usize,
    concurrency: usize,
    workload: Workload,
    pattern: Pattern,
    tokio_workers: usize,
    warmup: usize,
    rows: usize,
    key_prefix: String,
    server_pid: Option<u32>,
}

const USAGE: &str = "\
usage: turbocql-rust-ref [--host H] [--port P] [--keyspace KS] [--ops N]
                         [--pattern sync|concurrent] [--threads N] [--concurrency K]
                         [--workload write|read|populate] [--tokio-workers W]
                         [--warmup N] [--rows N] [--key-prefix S] [--server-pid PID]";

fn parse_args() -> Result<Opts, String> {
    let pid = std::process::id();
    let mut o = Opts {
        host: "127.0.0.1".into(),
        port: 9042,
        keyspace: "turbocql_bench".into(),
        ops: 100_000,
        threads: 1,
        concurrency: 120,
        workload: Workload::Write,
        pattern: Pattern::Sync,
        tokio_workers: 1,
        warmup: 5_000,
        rows: 10_000,
        key_prefix: format!("rust-{pid}-"),
        server_pid: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        if name == "-h" || name == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let mut val = || -> Result<String, String> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String> {
            v.parse().map_err(|_| format!("{name}: bad number {v:?}"))
        }
        match name.as_str() {
            "--host" => o.host = val()?,
            "--port" => o.port = num(&name, val()?)?,
            "--keyspace" => o.keyspace = val()?,
            "--ops" => o.ops = num(&name, val()?)?,
            "--threads" => o.threads = num(&name, val()?)?,
            "--concurrency" => o.concurrency = num(&name, val()?)?,
            "--tokio-workers" => o.tokio_workers = num(&name, val()?)?,
            "--warmup" => o.warmup = num(&name, val()?)?,
            "--rows" => o.rows = num(&name, val()?)?,
            "--key-prefix" => o.key_prefix = val()?,
            "--server-pid" => o.server_pid = Some(num(&name, val()?)?),
            "--workload" => {
                o.workload = match val()?.as_str() {
                    "write" => Workload::Write,
                    "read" => Workload::Read,
                    "populate" => Workload::Populate,
                    v => return Err(format!("--workload: unknown {v:?}")),
                }
            }
            "--pattern" | "--mode" => {
                o.pattern = match val()?.as_str() {
                    "sync" => Pattern::Sync,
                    "concurrent" => Pattern::Concurrent,
                    v => return Err(format!("--pattern: unknown {v:?}")),
                }
            }
            _ => return Err(format!("unknown argument {a:?}\n{USAGE}")),
        }
    }
    if o.threads == 0 || o.concurrency == 0 || o.tokio_workers == 0 || o.rows == 0 {
        return Err("--threads, --concurrency, --tokio-workers and --rows must be > 0".into());
    }
    Ok(o)
}

// ---------------------------------------------------------------------------------------------
// Requests.

/// One request of the workload; Ok(()) when the server answered as expected.
async fn one(session: &Session, stmt: &PreparedStatement, workload: Workload, key: &str) -> bool {
    match workload {
        Workload::Write | Workload::Populate => session
            .execute_unpaged(stmt, (key, "a", "b"))
            .await
            .is_ok(),
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

struct RunResult {
    latencies_ns: Vec<u64>,
    errors: usize,
}

/// `sync`: `threads` tasks, each awaiting its requests one at a time over its slice of keys.
async fn run_sync(
    session: &Arc<Session>,
    stmt: &Arc<PreparedStatement>,
    workload: Workload,
    keys: &Arc<Vec<String>>,
    threads: usize,
) -> RunResult {
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

/// `concurrent`: one task keeps `concurrency` requests in flight (`buffer_unordered`).
async fn run_concurrent(
    session: &Session,
    stmt: &PreparedStatement,
    workload: Workload,
    keys: &[String],
    concurrency: usize,
) -> RunResult {
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

async fn run(
    o: &Opts,
    session: &Arc<Session>,
    stmt: &Arc<PreparedStatement>,
    workload: Workload,
    keys: Vec<String>,
) -> RunResult {
    match o.pattern {
        Pattern::Sync => run_sync(session, stmt, workload, &Arc::new(keys), o.threads).await,
        Pattern::Concurrent => run_concurrent(session, stmt, workload, &keys, o.concurrency).await,
    }
}

fn read_key(i: usize) -> String {
    format!("row{i}")
}

fn percentile_us(sorted_ns: &[u64], p: f64) -> f64 {
    if sorted_ns.is_empty() {
        return 0.0;
    }
    let idx = ((p / 100.0) * (sorted_ns.len() - 1) as f64).round() as usize;
    sorted_ns[idx.min(sorted_ns.len() - 1)] as f64 / 1000.0
}

async fn amain(o: Opts) -> Result<(), Box<dyn std::error::Error>> {
    let session: Session = SessionBuilder::new()
        .known_node(format!("{}:{}", o.host, o.port))
        .connection_timeout(Duration::from_secs(10))
        .build()
        .await?;
    let session = Arc::new(session);

    // Setup (untimed).
    session
        .query_unpaged(
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
                o.keyspace
            ),
            &[],
        )
        .await?;
    session
        .query_unpaged(
            format!(
                "CREATE TABLE IF NOT EXISTS {}.t (thekey text PRIMARY KEY, col0 text, col1 text)",
                o.keyspace
            ),
            &[],
        )
        .await?;
    let insert = Arc::new(
        session
            .prepare(format!("INSERT INTO {}.t (thekey, col0, col1) VALUES (?, ?, ?)", o.keyspace))
            .await?,
    );
    let select = Arc::new(
        session
            .prepare(format!("SELECT * FROM {}.t WHERE thekey = ?", o.keyspace))
            .await?,
    );

    // Reads (and `populate`) need the rows `row0..row<rows>`; write them if the last is missing.
    if o.workload != Workload::Write {
        let last = read_key(o.rows - 1);
        let present = one(&session, &select, Workload::Read, &last).await;
        if !present || o.workload == Workload::Populate {
            let keys: Vec<String> = (0..o.rows).map(read_key).collect();
            let r = run_concurrent(&session, &insert, Workload::Write, &keys, 120).await;
            if r.errors > 0 {
                return Err(format!("populating {} rows: {} errors", o.rows, r.errors).into());
            }
        }
        if o.workload == Workload::Populate {
            println!(
                "{{\"client\":\"rust\",\"workload\":\"populate\",\"rows\":{},\"errors\":0}}",
                o.rows
            );
            return Ok(());
        }
    }

    let (stmt, workload) = match o.workload {
        Workload::Read => (select, Workload::Read),
        _ => (insert, Workload::Write),
    };
    let keys_for = |tag: &str, n: usize| -> Vec<String> {
        match workload {
            Workload::Read => (0..n).map(|i| read_key((i * 7919) % o.rows)).collect(),
            _ => (0..n).map(|i| format!("{}{tag}{i}", o.key_prefix)).collect(),
        }
    };

    // Warm-up (untimed), same pattern.
    if o.warmup > 0 {
        let w = run(&o, &session, &stmt, workload, keys_for("w", o.warmup)).await;
        if w.errors == o.warmup {
            return Err("every warm-up request failed".into());
        }
    }

    // Timed section.
    let keys = keys_for("", o.ops);
    let srv0 = o.server_pid.and_then(proc_cpu_us);
    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let mut r = run(&o, &session, &stmt, workload, keys).await;
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = self_cpu_us() - cpu0;
    let srv1 = o.server_pid.and_then(proc_cpu_us);

    r.latencies_ns.sort_unstable();
    let ops = o.ops as f64;
    let pattern = match o.pattern {
        Pattern::Sync => "sync",
        Pattern::Concurrent => "concurrent",
    };
    let workload_name = match workload {
        Workload::Read => "read",
        _ => "write",
    };
    let server = match (srv0, srv1) {
        (Some(a), Some(b)) => format!(",\"server_cpu_us_per_op\":{:.2}", (b - a) / ops),
        _ => String::new(),
    };
    println!(
        "{{\"client\":\"rust\",\"pattern\":\"{pattern}\",\"workload\":\"{workload_name}\",\
         \"threads\":{},\"concurrency\":{},\"tokio_workers\":{},\
         \"ops\":{},\"seconds\":{:.4},\"ops_per_s\":{:.1},\"cpu_us_per_op\":{:.2}{server},\
         \"p50_us\":{:.1},\"p95_us\":{:.1},\"p99_us\":{:.1},\"errors\":{}}}",
        if o.pattern == Pattern::Sync { o.threads } else { 1 },
        if o.pattern == Pattern::Sync { o.threads } else { o.concurrency },
        o.tokio_workers,
        o.ops,
        seconds,
        ops / seconds,
        cpu / ops,
        percentile_us(&r.latencies_ns, 50.0),
        percentile_us(&r.latencies_ns, 95.0),
        percentile_us(&r.latencies_ns, 99.0),
        r.errors,
    );
    Ok(())
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.tokio_workers)
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = rt.block_on(amain(o)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
