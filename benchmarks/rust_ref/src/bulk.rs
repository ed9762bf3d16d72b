//! The bulk workloads of the Rust reference (benchmark `bulk`, `benchmarks/run_bulk.py`), on the
//! table `<keyspace>.<table>` (default `bench_bulk.mixed`): `(id int PRIMARY KEY, n bigint,
//! name text, ts timestamp, u uuid, score double, tags set<int>, attrs map<text, int>)`.
//!
//! * `bulk-load --file CSV`: the CSV (header `id,n,name,ts,u,score,tags,attrs`, cqlsh's text
//!   forms, as `generate()` in run_bulk.py writes it) read and parsed into typed values, every
//!   row inserted by one prepared INSERT at consistency ONE, `--concurrency` requests in flight.
//!   Timed from opening the file to the last write acknowledged.
//! * `bulk-unload --file OUT --ranges R`: the token ring cut into R equal ranges, each read by a
//!   paged (5000 rows) prepared SELECT at consistency ONE, `--concurrency` ranges at a time;
//!   rows decoded into typed values and formatted as CSV in the input's text forms, a range's
//!   text written to OUT (through a BufWriter) when the range is done. Timed from the first
//!   request to the file flushed (not fsynced).
//! * `scan --ranges R`: the same reads, rows decoded into typed tuples kept in memory (a Vec
//!   per range) and counted. With `--ranges 1`, ONE paged `SELECT ... FROM <table>` with no
//!   token restriction, as `benchmarks/clients/scan.py` reads.
//!
//! No csv or date crate: a small quoted-CSV record splitter and the timestamp, set and map
//! text forms are written by hand (modules `csv` and `text_forms`).
//!
//! Modules: `csv` (the CSV records, read and written, and the typed rows they hold),
//! `text_forms` (the text forms of a timestamp, a set and a map), `ranges` (the token-range
//! reads of bulk-unload and scan). This file: the table's columns and row type, the dispatch
//! and JSON line of the three workloads, and bulk-load.

mod csv;
mod ranges;
mod text_forms;

use std::collections::BTreeMap;
use std::error::Error;
use std::fs::File;
use std::io::BufReader;
use std::time::Instant;

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::statement::Consistency;
use scylla::value::CqlTimestamp;
use uuid::Uuid;

use crate::cpu::self_cpu_us;
use crate::opts::{Opts, Workload};
use csv::CsvRows;
use ranges::{scan, unload};

/// The table's columns, in the CSV's order (its header line).
const COLUMNS: [&str; 8] = ["id", "n", "name", "ts", "u", "score", "tags", "attrs"];

/// One row, typed: id, n, name, ts, u, score, tags, attrs (None: null; an empty collection is
/// null in Cassandra, so it is None too).
type Row = (i32, Option<i64>, Option<String>, Option<CqlTimestamp>, Option<Uuid>, Option<f64>, Option<Vec<i32>>, Option<BTreeMap<String, i32>>);

type BoxError = Box<dyn Error>;

/// Rows, seconds and client CPU (µs) of a timed section.
struct Timed {
    rows: usize,
    seconds: f64,
    cpu_us: f64,
}

pub(crate) async fn bulk_main(o: &Opts, session: &Session) -> Result<(), BoxError> {
    let target = format!("{}.{}", o.keyspace, o.table.as_deref().unwrap_or("mixed"));
    let ranges = o.ranges.unwrap_or(if o.workload == Workload::BulkUnload { 64 } else { 1 });
    let (name, t) = match o.workload {
        Workload::BulkLoad => ("bulk-load", load(o, session, &target).await?),
        Workload::BulkUnload => ("bulk-unload", unload(o, session, &target, ranges).await?),
        Workload::Scan => ("scan", scan(o, session, &target, ranges).await?),
        w => return Err(format!("{w:?} is not a bulk workload").into()),
    };
    let ranges_json = if o.workload == Workload::BulkLoad { String::new() } else { format!(",\"ranges\":{ranges}") };
    let (rate, cpu) =
        if t.rows > 0 { (format!("{:.1}", t.rows as f64 / t.seconds), format!("{:.3}", t.cpu_us / t.rows as f64)) } else { ("0".into(), "null".into()) };
    println!(
        "{{\"client\":\"rust\",\"workload\":\"{name}\",\"table\":\"{target}\",\"concurrency\":{}{ranges_json},\
         \"tokio_workers\":{},\"rows\":{},\"seconds\":{:.4},\"rows_per_s\":{rate},\"cpu_us_per_row\":{cpu}}}",
        o.concurrency, o.tokio_workers, t.rows, t.seconds,
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// bulk-load

async fn load(o: &Opts, session: &Session, target: &str) -> Result<Timed, BoxError> {
    let path = o.file.as_deref().ok_or("bulk-load needs --file CSV")?;
    let mut insert = session.prepare(format!("INSERT INTO {target} ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", COLUMNS.join(", "))).await?;
    insert.set_consistency(Consistency::One);
    let insert = &insert;

    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut csv = CsvRows::new(BufReader::with_capacity(1 << 20, file), path);
    csv.header()?;
    let mut acks = stream::iter(csv)
        .map(|row| async move {
            let row = row?;
            match session.execute_unpaged(insert, &row).await {
                Ok(_) => Ok(()),
                Err(e) => Err(format!("insert of id {}: {e}", row.0)),
            }
        })
        .buffer_unordered(o.concurrency);
    let mut rows = 0;
    while let Some(ack) = acks.next().await {
        ack?;
        rows += 1;
    }
    Ok(Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 })
}
