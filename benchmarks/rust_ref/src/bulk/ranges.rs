//! The range reads of bulk-unload and scan: the token ring cut into R equal ranges, each read by
//! a paged (5000 rows) prepared SELECT at consistency ONE, `--concurrency` ranges at a time
//! (with one range, one paged SELECT of the whole table, no token restriction). bulk-unload
//! writes the rows as CSV, scan keeps them in memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use futures::stream::{self, StreamExt};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use super::csv::write_row;
use super::{BoxError, Row, Timed, COLUMNS};
use crate::cpu::self_cpu_us;
use crate::opts::Opts;

const PAGE_SIZE: i32 = 5000;

/// The token ring `i64::MIN..=i64::MAX` cut into `n` contiguous inclusive ranges of equal size
/// (to one token): every token in exactly one.
fn token_ranges(n: usize) -> Vec<(i64, i64)> {
    let span: i128 = 1 << 64;
    let bound = |k: usize| i64::MIN as i128 + span * k as i128 / n as i128;
    (0..n).map(|k| (bound(k) as i64, (bound(k + 1) - 1) as i64)).collect()
}

/// The SELECT of every column: of the whole table with one range, else of `token(id)` in
/// `[?, ?]`; paged, consistency ONE.
async fn range_select(session: &Session, target: &str, ranges: usize) -> Result<PreparedStatement, BoxError> {
    let restriction = if ranges == 1 { "" } else { " WHERE token(id) >= ? AND token(id) <= ?" };
    let mut stmt = session.prepare(format!("SELECT {} FROM {target}{restriction}", COLUMNS.join(", "))).await?;
    stmt.set_page_size(PAGE_SIZE);
    stmt.set_consistency(Consistency::One);
    Ok(stmt)
}

/// Reads one range (every page), handing each decoded row to `f`.
async fn for_each_row(session: &Session, stmt: &PreparedStatement, range: (i64, i64), whole: bool, mut f: impl FnMut(Row)) -> Result<(), BoxError> {
    let pager = if whole { session.execute_iter(stmt.clone(), ()).await? } else { session.execute_iter(stmt.clone(), range).await? };
    let mut rows = pager.rows_stream::<Row>()?;
    while let Some(row) = rows.next().await {
        f(row?);
    }
    Ok(())
}

pub(super) async fn unload(o: &Opts, session: &Session, target: &str, ranges: usize) -> Result<Timed, BoxError> {
    let path = o.file.as_deref().ok_or("bulk-unload needs --file OUT")?;
    let stmt = &range_select(session, target, ranges).await?;
    let whole = ranges == 1;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(|e| format!("{path}: {e}"))?);
    writeln!(out, "{}", COLUMNS.join(","))?;

    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let mut done = stream::iter(token_ranges(ranges))
        .map(|range| async move {
            let (mut text, mut scratch, mut n) = (String::new(), String::new(), 0usize);
            for_each_row(session, stmt, range, whole, |row| {
                write_row(&mut text, &mut scratch, &row);
                n += 1;
            })
            .await?;
            Ok::<_, BoxError>((text, n))
        })
        .buffer_unordered(o.concurrency);
    let mut rows = 0;
    while let Some(range) = done.next().await {
        let (text, n) = range?;
        out.write_all(text.as_bytes()).map_err(|e| format!("{path}: {e}"))?;
        rows += n;
    }
    out.flush().map_err(|e| format!("{path}: {e}"))?;
    Ok(Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 })
}

pub(super) async fn scan(o: &Opts, session: &Session, target: &str, ranges: usize) -> Result<Timed, BoxError> {
    let stmt = &range_select(session, target, ranges).await?;
    let whole = ranges == 1;
    let cpu0 = self_cpu_us();
    let t0 = Instant::now();
    let mut done = stream::iter(token_ranges(ranges))
        .map(|range| async move {
            let mut kept = Vec::new();
            for_each_row(session, stmt, range, whole, |row| kept.push(row)).await?;
            Ok::<_, BoxError>(kept)
        })
        .buffer_unordered(o.concurrency);
    let mut kept: Vec<Vec<Row>> = Vec::with_capacity(ranges);
    let mut rows = 0;
    while let Some(range) = done.next().await {
        let range = range?;
        rows += range.len();
        kept.push(range);
    }
    let timed = Timed { rows, seconds: t0.elapsed().as_secs_f64(), cpu_us: self_cpu_us() - cpu0 };
    std::hint::black_box(&kept);
    Ok(timed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_ring() {
        for n in [1, 2, 3, 7, 64] {
            let r = token_ranges(n);
            assert_eq!((r[0].0, r[n - 1].1), (i64::MIN, i64::MAX));
            for w in r.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
            }
        }
    }
}
