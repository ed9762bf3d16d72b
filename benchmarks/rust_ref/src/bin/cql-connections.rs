//! `cql-connections --connect 127.0.0.1:PORT --connections N --seconds S [--warmup W]
//! [--count-query CQL]`: the
//! limit row of the connections scenario's CQL table (issue 17, section 2): the `scylla`
//! crate itself, with a pool of N connections to the one node (`PoolSize::PerHost(N)`), N
//! requests in flight, against `cql-responder` (benchmarks/pingpong) or a Cassandra node.
//!
//! One tokio current-thread runtime (one core, as the Python clients get). The session is
//! built, then the client waits until the server counts N + 1 open connections (the pool
//! and the control connection; `--count-query`, one row of one bigint: by default the
//! responder's `responder.stats`, against Cassandra `SELECT COUNT(*) FROM
//! system_views.clients`), since the crate fills its pools in the background after `build()`. Then N tasks each keep one prepared `SELECT k, v FROM
//! bench.kv WHERE k = ?` outstanding (the crate picks a connection of the pool for each, so
//! "N in flight over N connections", not strictly one per connection), decoding the row as
//! turbocql does. Requests that complete within the window (after `--warmup` seconds, default
//! 1, for `--seconds`) are counted, their latencies recorded in a log-bucket histogram (~3%),
//! user and system CPU (`getrusage`) taken at the window's ends. Prints one JSON line, the
//! same keys as `pingpong-client` (`"client":"rust","model":"scylla"`), or `{"failed": ...}`
//! when the N connections cannot be opened (the runner's "FF").

use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::rc::Rc;
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::statement::prepared::PreparedStatement;
use tokio::time::sleep_until;
use turbocql_pingpong::{client_line, cpu_times, json_str, options_or_exit, parse_options, parse_seconds, raise_nofile, Histogram};

const USAGE: &str = "usage: cql-connections --connect 127.0.0.1:PORT --connections N --seconds S [--warmup W] [--count-query CQL]";
const QUERY: &str = "SELECT k, v FROM bench.kv WHERE k = ?";
/// The responder's count of open connections (the runner passes a Cassandra node's).
const RESPONDER_COUNT: &str = "SELECT connections FROM responder.stats";

struct Options {
    connect: String,
    connections: usize,
    seconds: Duration,
    warmup: Duration,
    count_query: String,
}

#[derive(Default)]
struct Stats {
    hist: Histogram,
    errors: u64,
    first_error: Option<String>,
}

fn main() {
    let o = options_or_exit(parse);
    let nofile = raise_nofile();
    let run = async { run(&o).await.map(|line| line.replace("\"rlimit_nofile\":0", &format!("\"rlimit_nofile\":{nofile}"))) };
    let line = client_line("scylla", o.connections, o.seconds, run);
    println!("{line}");
    // Skip the session's teardown (10,000 connections closing): the figures are out.
    std::process::exit(0);
}

fn parse(args: &[String]) -> Result<Options, String> {
    let (mut connect, mut connections, mut seconds, mut warmup) = (None, None, None, Duration::from_secs(1));
    let mut count_query = RESPONDER_COUNT.to_string();
    for (name, v) in parse_options(args, &["--connect", "--connections", "--seconds", "--warmup", "--count-query"], USAGE)? {
        match name.as_str() {
            "--connect" => connect = Some(v),
            "--connections" => {
                connections = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("--connections: not a positive number: {v:?}"))?)
            }
            "--seconds" => seconds = Some(parse_seconds("--seconds", &v)?),
            "--count-query" => count_query = v,
            _ => warmup = parse_seconds("--warmup", &v)?,
        }
    }
    Ok(Options {
        connect: connect.ok_or_else(|| format!("--connect is required\n{USAGE}"))?,
        connections: connections.ok_or_else(|| format!("--connections is required\n{USAGE}"))?,
        seconds: seconds.ok_or_else(|| format!("--seconds is required\n{USAGE}"))?,
        warmup,
        count_query,
    })
}

/// The server's count of open connections (`count_query`: one row, one bigint).
async fn open_connections(session: &Session, count_query: &str) -> Result<i64, String> {
    let res = session.query_unpaged(count_query, &[]).await.map_err(|e| format!("{count_query}: {e}"))?;
    let rows = res.into_rows_result().map_err(|e| e.to_string())?;
    let (n,) = rows.first_row::<(i64,)>().map_err(|e| e.to_string())?;
    Ok(n)
}

async fn run(o: &Options) -> Result<String, String> {
    let n = NonZeroUsize::new(o.connections).ok_or("no connections")?;
    let session = SessionBuilder::new()
        .known_node(&o.connect)
        .pool_size(PoolSize::PerHost(n))
        .connection_timeout(Duration::from_secs(30))
        .build()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let want = o.connections as i64 + 1;
    let deadline = Instant::now() + Duration::from_secs(60) + Duration::from_millis(10 * o.connections as u64);
    loop {
        let have = open_connections(&session, &o.count_query).await?;
        if have >= want {
            break;
        }
        if Instant::now() >= deadline {
            return Err(format!("only {have} of {want} connections (pool + control) open after the wait"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let session = Rc::new(session);
    let stmt: Rc<PreparedStatement> = Rc::new(session.prepare(QUERY).await.map_err(|e| format!("prepare: {e}"))?);
    let stats = Rc::new(RefCell::new(Stats::default()));
    let warm_end = Instant::now() + o.warmup;
    let end = warm_end + o.seconds;
    let handles: Vec<_> = (0..o.connections).map(|_| tokio::task::spawn_local(requests(session.clone(), stmt.clone(), warm_end, end, stats.clone()))).collect();
    sleep_until(warm_end.into()).await;
    let (u0, s0) = cpu_times();
    sleep_until(end.into()).await;
    let (u1, s1) = cpu_times();
    let grace = tokio::time::Instant::now() + Duration::from_secs(10);
    for h in handles {
        let _ = tokio::time::timeout_at(grace, h).await;
    }
    let st = stats.borrow();
    let window = o.seconds.as_secs_f64();
    let (user, sys) = (u1 - u0, s1 - s0);
    let cpu = user + sys;
    let us = |q: f64| st.hist.quantile(q).map(|v| format!("{:.1}", v as f64 / 1000.0)).unwrap_or_else(|| "null".into());
    let ratio = |a: f64, b: f64| if b > 0.0 { format!("{:.3}", a / b) } else { "null".into() };
    let messages = st.hist.count();
    Ok(format!(
        "{{\"client\":\"rust\",\"model\":\"scylla\",\"connections\":{},\"seconds\":{},\"warmup\":{},\"messages\":{messages},\"msgs_per_s\":{:.1},\
         \"p50_us\":{},\"p95_us\":{},\"p99_us\":{},\"user_s\":{user:.4},\"sys_s\":{sys:.4},\"user_share\":{},\"cpu_cores\":{},\
         \"cpu_us_per_request\":{},\"errors\":{},\"first_error\":{},\"rlimit_nofile\":0,\"pool\":\"PerHost({})\",\
         \"latency\":\"every request, log-bucket histogram (~3%)\"}}",
        o.connections,
        window,
        o.warmup.as_secs_f64(),
        if window > 0.0 { messages as f64 / window } else { 0.0 },
        us(0.5),
        us(0.95),
        us(0.99),
        ratio(user, cpu),
        ratio(cpu, window),
        if messages > 0 { format!("{:.2}", cpu * 1e6 / messages as f64) } else { "null".into() },
        st.errors,
        st.first_error.as_deref().map(json_str).unwrap_or_else(|| "null".into()),
        o.connections,
    ))
}

/// One request outstanding until `end`; those that complete in `[warm_end, end)` recorded.
async fn requests(session: Rc<Session>, stmt: Rc<PreparedStatement>, warm_end: Instant, end: Instant, stats: Rc<RefCell<Stats>>) {
    loop {
        let t = Instant::now();
        let res = session.execute_unpaged(&stmt, (1i32,)).await;
        let ok = match res {
            Ok(r) => match r.into_rows_result() {
                Ok(rows) => rows.first_row::<(i32, &str)>().map(|_| ()).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        let now = Instant::now();
        if now >= end {
            return;
        }
        match ok {
            Ok(()) if now >= warm_end => stats.borrow_mut().hist.record(now.duration_since(t).as_nanos() as u64),
            Ok(()) => {}
            Err(e) => {
                let mut st = stats.borrow_mut();
                st.errors += 1;
                st.first_error.get_or_insert(e);
            }
        }
    }
}
