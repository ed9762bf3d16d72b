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
//! * `--workload reset`: `TRUNCATE t`, then writes the read keys: the runners do it before
//!   each group of runs so every client meets a table of the same size.
//! * `--workload vector`: document 004's vector ingestion. Table `<table> (id int PRIMARY KEY,
//!   vector vector<float, DIM>)`, prepared INSERT at CL ONE; `--ops` rows (`--dim` float32s
//!   each, pseudo-random) are built in memory before timing, `--warmup` rows are inserted
//!   untimed, then for each of `--runs` runs: TRUNCATE (untimed), insert all rows with
//!   `--concurrency` in flight (timed). Prints one JSON line with every run and best/avg/worst.
//! * `--workload bulk-load --file CSV`, `--workload bulk-unload --file OUT --ranges R` and
//!   `--workload scan --ranges R` (module `bulk`): the bulk benchmark (`run_bulk.py`) on
//!   `<keyspace>.<table>` (default `bench_bulk.mixed`, eight typed columns). bulk-load parses
//!   the CSV and inserts every row (one prepared INSERT, CL ONE, `--concurrency` in flight);
//!   bulk-unload reads the token ring in R equal ranges (`--concurrency` at a time, pages of
//!   5000) and writes the rows as CSV; scan reads the same way (R = 1: one paged SELECT of the
//!   whole table) and keeps the typed rows in memory. One JSON line: rows, seconds, rows/s,
//!   client CPU µs per row.
//!
//! Patterns: `sync` (N tokio tasks, each awaiting one request at a time), `sync-threads`
//! (N OS threads, each blocking on one request at a time with `Handle::block_on`, as N
//! Python threads calling a blocking `execute` do) and `concurrent` (K requests in flight
//! from one task, via `buffer_unordered`).
//!
//! Client CPU is `getrusage(RUSAGE_SELF)` (user + system, all threads) around the timed
//! section only; setup and warm-up are outside it. With `--server-pid`, the server's CPU
//! (utime + stime from `/proc/PID/stat`) is measured around the same section.
//!
//! TLS: `--tls-ca PATH` connects over TLS (the `scylla` crate's `rustls-023` feature, the
//! engine's TLS stack), trusting the CA in PATH (PEM) and verifying the node's certificate and
//! address; no client certificate.
//!
//! No dependency beyond the package's own (scylla, tokio, futures, and rustls and uuid, which
//! the engine already pulls into the workspace): `getrusage` is declared here by hand so that the
//! workspace's Cargo.lock gains no package.

mod bulk;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::unprepared::Statement;

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
    Reset,
    Vector,
    BulkLoad,
    BulkUnload,
    Scan,
}

impl Workload {
    fn is_bulk(self) -> bool {
        matches!(self, Workload::BulkLoad | Workload::BulkUnload | Workload::Scan)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pattern {
    Sync,
    SyncThreads,
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
    dim: usize,
    runs: usize,
    table: Option<String>,
    tls_ca: Option<String>,
    /// bulk-load's input, bulk-unload's output.
    file: Option<String>,
    /// Token ranges of bulk-unload (default 64) and scan (default 1).
    ranges: Option<usize>,
}

const USAGE: &str = "\
usage: turbocql-rust-ref [--host H] [--port P] [--keyspace KS] [--ops N]
                         [--pattern sync|sync-threads|concurrent] [--threads N] [--concurrency K]
                         [--workload write|read|populate|reset|vector|bulk-load|bulk-unload|scan]
                         [--tokio-workers W] [--warmup N] [--rows N] [--key-prefix S] [--server-pid PID]
                         [--dim D] [--runs R] [--table NAME]   (vector workload)
                         [--file PATH] [--ranges R]   (bulk workloads; there --keyspace defaults
                         to bench_bulk and --table to mixed)
                         [--tls-ca PATH]   (TLS, trusting the CA certificate in PATH)";

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
        dim: 768,
        runs: 3,
        table: None,
        tls_ca: None,
        file: None,
        ranges: None,
    };
    let mut keyspace_given = false;
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
        let mut val = || -> Result<String, String> { inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value")) };
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String> {
            v.parse().map_err(|_| format!("{name}: bad number {v:?}"))
        }
        match name.as_str() {
            "--host" => o.host = val()?,
            "--port" => o.port = num(&name, val()?)?,
            "--keyspace" => {
                o.keyspace = val()?;
                keyspace_given = true;
            }
            "--ops" => o.ops = num(&name, val()?)?,
            "--threads" => o.threads = num(&name, val()?)?,
            "--concurrency" => o.concurrency = num(&name, val()?)?,
            "--tokio-workers" => o.tokio_workers = num(&name, val()?)?,
            "--warmup" => o.warmup = num(&name, val()?)?,
            "--rows" => o.rows = num(&name, val()?)?,
            "--key-prefix" => o.key_prefix = val()?,
            "--server-pid" => o.server_pid = Some(num(&name, val()?)?),
            "--dim" => o.dim = num(&name, val()?)?,
            "--runs" => o.runs = num(&name, val()?)?,
            "--table" => o.table = Some(val()?),
            "--tls-ca" => o.tls_ca = Some(val()?),
            "--file" => o.file = Some(val()?),
            "--ranges" => o.ranges = Some(num(&name, val()?)?),
            "--workload" => {
                o.workload = match val()?.as_str() {
                    "write" => Workload::Write,
                    "read" => Workload::Read,
                    "populate" => Workload::Populate,
                    "reset" => Workload::Reset,
                    "vector" => Workload::Vector,
                    "bulk-load" => Workload::BulkLoad,
                    "bulk-unload" => Workload::BulkUnload,
                    "scan" => Workload::Scan,
                    v => return Err(format!("--workload: unknown {v:?}")),
                }
            }
            "--pattern" | "--mode" => {
                o.pattern = match val()?.as_str() {
                    "sync" => Pattern::Sync,
                    "sync-threads" => Pattern::SyncThreads,
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
    if o.workload == Workload::Vector && (o.dim == 0 || o.runs == 0 || o.ops == 0) {
        return Err("--dim, --runs and --ops must be > 0 for --workload vector".into());
    }
    if o.workload.is_bulk() {
        if !keyspace_given {
            o.keyspace = "bench_bulk".into();
        }
        if o.ranges == Some(0) {
            return Err("--ranges must be > 0".into());
        }
        if matches!(o.workload, Workload::BulkLoad | Workload::BulkUnload) && o.file.is_none() {
            return Err("--workload bulk-load and bulk-unload need --file PATH".into());
        }
    }
    Ok(o)
}

// ---------------------------------------------------------------------------------------------
// Requests.

/// One request of the workload; Ok(()) when the server answered as expected.
async fn one(session: &Session, stmt: &PreparedStatement, workload: Workload, key: &str) -> bool {
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

struct RunResult {
    latencies_ns: Vec<u64>,
    errors: usize,
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
async fn run_concurrent(session: &Session, stmt: &PreparedStatement, workload: Workload, keys: &[String], concurrency: usize) -> RunResult {
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

async fn run(o: &Opts, session: &Arc<Session>, stmt: &Arc<PreparedStatement>, workload: Workload, keys: Vec<String>) -> RunResult {
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

/// `--tls-ca`: a rustls client configuration trusting that CA and verifying the node's
/// certificate (rustls' WebPKI verifier, the node's address as its name).
fn tls_context(ca: &str) -> Result<scylla::client::session::TlsContext, Box<dyn std::error::Error>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(|e| format!("--tls-ca {ca}: {e}"))? {
        roots.add(cert.map_err(|e| format!("--tls-ca {ca}: {e}"))?)?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(scylla::client::session::TlsContext::Rustls023(Arc::new(config)))
}

async fn amain(o: Opts) -> Result<(), Box<dyn std::error::Error>> {
    let tls = o.tls_ca.as_deref().map(tls_context).transpose()?;
    let session: Session =
        SessionBuilder::new().known_node(format!("{}:{}", o.host, o.port)).connection_timeout(Duration::from_secs(10)).tls_context(tls).build().await?;
    let session = Arc::new(session);
    if o.workload == Workload::Vector {
        return vector_main(&o, &session).await;
    }
    if o.workload.is_bulk() {
        return bulk::bulk_main(&o, &session).await;
    }

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
    session.query_unpaged(format!("CREATE TABLE IF NOT EXISTS {}.t (thekey text PRIMARY KEY, col0 text, col1 text)", o.keyspace), &[]).await?;
    let insert = Arc::new(session.prepare(format!("INSERT INTO {}.t (thekey, col0, col1) VALUES (?, ?, ?)", o.keyspace)).await?);
    let select = Arc::new(session.prepare(format!("SELECT * FROM {}.t WHERE thekey = ?", o.keyspace)).await?);

    if o.workload == Workload::Reset {
        let mut truncate = Statement::new(format!("TRUNCATE {}.t", o.keyspace));
        truncate.set_request_timeout(Some(Duration::from_secs(120)));
        session.query_unpaged(truncate, &[]).await?;
    }
    let setup_only = matches!(o.workload, Workload::Populate | Workload::Reset);

    // Reads (and `populate`) need the rows `row0..row<rows>`; write them if the last is missing.
    if o.workload != Workload::Write {
        let last = read_key(o.rows - 1);
        let present = one(&session, &select, Workload::Read, &last).await;
        if !present || setup_only {
            let keys: Vec<String> = (0..o.rows).map(read_key).collect();
            let r = run_concurrent(&session, &insert, Workload::Write, &keys, 120).await;
            if r.errors > 0 {
                return Err(format!("populating {} rows: {} errors", o.rows, r.errors).into());
            }
        }
        if setup_only {
            println!(
                "{{\"client\":\"rust\",\"workload\":\"{}\",\"rows\":{},\"errors\":0}}",
                if o.workload == Workload::Reset { "reset" } else { "populate" },
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
        Pattern::SyncThreads => "sync-threads",
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
        if o.pattern == Pattern::Concurrent { 1 } else { o.threads },
        if o.pattern == Pattern::Concurrent { o.concurrency } else { o.threads },
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

// ---------------------------------------------------------------------------------------------
// Document 004: vector ingestion.

/// Pseudo-random f32s in [0, 1) (xorshift64*), so the reference needs no extra crate.
fn vector_rows(first_id: i32, n: usize, dim: usize, seed: u64) -> Vec<(i32, Vec<f32>)> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n).map(|i| (first_id + i as i32, (0..dim).map(|_| next()).collect())).collect()
}

/// Insert every row with `concurrency` requests in flight; returns the number of errors.
async fn insert_vectors(session: &Session, stmt: &PreparedStatement, rows: &[(i32, Vec<f32>)], concurrency: usize) -> usize {
    let mut results =
        stream::iter(rows.iter()).map(|(id, v)| async move { session.execute_unpaged(stmt, (*id, v)).await.is_ok() }).buffer_unordered(concurrency);
    let mut errors = 0;
    while let Some(ok) = results.next().await {
        errors += usize::from(!ok);
    }
    errors
}

async fn vector_main(o: &Opts, session: &Session) -> Result<(), Box<dyn std::error::Error>> {
    use scylla::statement::{Consistency, Statement};
    let ks = &o.keyspace;
    let table = o.table.clone().unwrap_or_else(|| format!("vectors_{}", o.dim));
    let ddl = |q: String| {
        let mut s = Statement::new(q);
        s.set_request_timeout(Some(Duration::from_secs(300)));
        s
    };
    session
        .query_unpaged(
            ddl(format!(
                "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
            )),
            &[],
        )
        .await?;
    session
        .query_unpaged(
            ddl(format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{table} \
                 (id int PRIMARY KEY, vector vector<float, {}>)",
                o.dim
            )),
            &[],
        )
        .await?;
    let mut insert = session.prepare(format!("INSERT INTO {ks}.{table} (id, vector) VALUES (?, ?)")).await?;
    insert.set_consistency(Consistency::One);

    // All rows in memory before anything is timed.
    let rows = vector_rows(0, o.ops, o.dim, 0x5EED_0004);
    let warm = vector_rows(o.ops as i32, o.warmup, o.dim, 0x5EED_0005);
    if !warm.is_empty() {
        let errors = insert_vectors(session, &insert, &warm, o.concurrency).await;
        if errors == warm.len() {
            return Err("every warm-up insert failed".into());
        }
    }

    let mut runs = Vec::with_capacity(o.runs);
    let mut errors_total = 0;
    for _ in 0..o.runs {
        session.query_unpaged(ddl(format!("TRUNCATE {ks}.{table}")), &[]).await?;
        let srv0 = o.server_pid.and_then(proc_cpu_us);
        let cpu0 = self_cpu_us();
        let t0 = Instant::now();
        let errors = insert_vectors(session, &insert, &rows, o.concurrency).await;
        let seconds = t0.elapsed().as_secs_f64();
        let cpu = self_cpu_us() - cpu0;
        let srv = match (srv0, o.server_pid.and_then(proc_cpu_us)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        errors_total += errors;
        runs.push((seconds, cpu, srv, errors));
    }
    // Leave the table empty for whatever runs next (untimed).
    session.query_unpaged(ddl(format!("TRUNCATE {ks}.{table}")), &[]).await?;

    let n = o.ops as f64;
    let rates: Vec<f64> = runs.iter().map(|r| n / r.0).collect();
    let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let runs_json: Vec<String> = runs
        .iter()
        .map(|(seconds, cpu, srv, errors)| {
            let server = srv.map(|s| format!(",\"server_cpu_us_per_op\":{:.2}", s / n)).unwrap_or_default();
            format!(
                "{{\"seconds\":{seconds:.4},\"ops_per_s\":{:.1},\"cpu_us_per_op\":{:.2}{server},\
                 \"errors\":{errors}}}",
                n / seconds,
                cpu / n
            )
        })
        .collect();
    let cpu_avg = avg(&runs.iter().map(|r| r.1 / n).collect::<Vec<_>>());
    let srvs: Vec<f64> = runs.iter().filter_map(|r| r.2.map(|s| s / n)).collect();
    let server = if srvs.len() == runs.len() { format!(",\"server_cpu_us_per_op\":{:.2}", avg(&srvs)) } else { String::new() };
    println!(
        "{{\"client\":\"rust\",\"pattern\":\"concurrent\",\"workload\":\"vector\",\
         \"input\":\"vec\",\"rows\":{},\"dim\":{},\"concurrency\":{},\"tokio_workers\":{},\
         \"warmup_rows\":{},\"ops\":{},\"runs\":[{}],\
         \"best_ops_per_s\":{:.1},\"avg_ops_per_s\":{:.1},\"worst_ops_per_s\":{:.1},\
         \"ops_per_s\":{:.1},\"cpu_us_per_op\":{:.2}{server},\"errors\":{}}}",
        o.ops,
        o.dim,
        o.concurrency,
        o.tokio_workers,
        o.warmup,
        o.ops,
        runs_json.join(","),
        rates.iter().cloned().fold(f64::MIN, f64::max),
        avg(&rates),
        rates.iter().cloned().fold(f64::MAX, f64::min),
        avg(&rates),
        cpu_avg,
        errors_total,
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
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(o.tokio_workers).enable_all().build().expect("tokio runtime");
    if let Err(e) = rt.block_on(amain(o)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
