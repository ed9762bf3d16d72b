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
//! the engine already pulls into the workspace): `getrusage` is declared by hand (module `cpu`)
//! so that the workspace's Cargo.lock gains no package.
//!
//! Modules: `opts` (the command line), `patterns` (the write and read requests and the three
//! patterns), `vector` (the vector workload), `bulk` (the bulk workloads), `cpu` (the CPU time
//! of this process and of the server). This file: the TLS configuration, the write, read,
//! populate and reset workloads (setup, warm-up, timed section, JSON line) and `main`.

mod bulk;
mod cpu;
mod opts;
mod patterns;
mod vector;

use std::sync::Arc;
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::unprepared::Statement;

use cpu::{proc_cpu_us, self_cpu_us};
use opts::{parse_args, Opts, Pattern, Workload};
use patterns::{one, run, run_concurrent};

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
        return vector::vector_main(&o, &session).await;
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
