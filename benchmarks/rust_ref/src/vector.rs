//! Document 004's vector ingestion (`--workload vector`): table `<table> (id int PRIMARY KEY,
//! vector vector<float, DIM>)`, prepared INSERT at CL ONE; `--ops` rows of `--dim` pseudo-random
//! float32s built in memory before timing, `--warmup` rows inserted untimed, then for each of
//! `--runs` runs: TRUNCATE (untimed), insert all rows with `--concurrency` in flight (timed).
//! Prints one JSON line with every run and best/avg/worst.

use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;

use crate::cpu::{proc_cpu_us, self_cpu_us};
use crate::opts::Opts;

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

pub(crate) async fn vector_main(o: &Opts, session: &Session) -> Result<(), Box<dyn std::error::Error>> {
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
