//! `pingpong-client --connect 127.0.0.1:PORT --connections N --seconds S [--warmup W]
//! [--addresses 127.0.0.1,127.0.0.2,...]`: the limit row of document 002's table (its
//! `cpp_epoll`), scenario `connections`.
//!
//! One tokio current-thread runtime (one core, as the Python clients get), N connections
//! opened one after the other before any message (each `bind` to one of `--addresses`, round
//! robin, port 0, before `connect`, so that 10,000+ connections do not run out of ephemeral
//! ports on one address pair; `TCP_NODELAY`; `SO_LINGER` 0, so that closing them leaves no
//! TIME_WAIT behind to eat the next run's ports), then one task per connection keeping one
//! 64-byte message outstanding: write, read the 64-byte echo, again. Messages that complete
//! within the measured window (after `--warmup` seconds, default 1, for `--seconds`) are
//! counted and their round trips recorded in a log-bucket histogram (about 3% resolution);
//! user and system CPU (`getrusage`) are taken at the window's ends. Prints one JSON line:
//!
//! `{"client":"rust","model":"tokio","connections":N,"seconds":S,"messages":M,"msgs_per_s":R,
//! "p50_us":..,"p95_us":..,"p99_us":..,"user_s":..,"sys_s":..,"user_share":..,"cpu_cores":..,
//! "errors":E,...}`
//!
//! or, when the connections cannot be opened (EMFILE, timeouts), `{"client":"rust",
//! "model":"tokio","connections":N,"failed":"<reason>"}` (exit status 0: the runner's "FF").

use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{sleep_until, timeout};
use turbocql_pingpong::{client_line, cpu_times, json_str, options_or_exit, parse_options, parse_seconds, raise_nofile, Histogram, MSG_SIZE};

const USAGE: &str = "usage: pingpong-client --connect 127.0.0.1:PORT --connections N --seconds S [--warmup W] [--addresses 127.0.0.1,127.0.0.2,...]";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

struct Options {
    connect: SocketAddr,
    connections: usize,
    seconds: Duration,
    warmup: Duration,
    addresses: Vec<IpAddr>,
}

#[derive(Default)]
struct Stats {
    hist: Histogram,
    errors: u64,
    first_error: Option<String>,
}

struct Outcome {
    messages: u64,
    hist: Histogram,
    window: f64,
    user: f64,
    sys: f64,
    errors: u64,
    first_error: Option<String>,
    nofile: libc::rlim_t,
}

fn main() {
    let o = options_or_exit(parse);
    let nofile = raise_nofile();
    let line = client_line("tokio", o.connections, o.seconds, async { run(&o, nofile).await.map(|r| success_line(&o, &r)) });
    println!("{line}");
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut connect = None;
    let mut connections = None;
    let mut seconds = None;
    let mut warmup = Duration::from_secs(1);
    let mut addresses = vec![IpAddr::from([127, 0, 0, 1])];
    let known = ["--connect", "--connections", "--seconds", "--warmup", "--addresses"];
    for (name, v) in parse_options(args, &known, USAGE)? {
        match name.as_str() {
            "--connect" => connect = Some(v.parse::<SocketAddr>().map_err(|e| format!("--connect {v:?}: {e}"))?),
            "--connections" => {
                connections = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("--connections: not a positive number: {v:?}"))?)
            }
            "--seconds" => seconds = Some(parse_seconds("--seconds", &v)?),
            "--warmup" => warmup = parse_seconds("--warmup", &v)?,
            _ => {
                addresses = v
                    .split(',')
                    .filter(|a| !a.trim().is_empty())
                    .map(|a| a.trim().parse::<IpAddr>().map_err(|e| format!("--addresses {a:?}: {e}")))
                    .collect::<Result<_, _>>()?;
                if addresses.is_empty() {
                    return Err("--addresses: no address".into());
                }
            }
        }
    }
    Ok(Options {
        connect: connect.ok_or_else(|| format!("--connect is required\n{USAGE}"))?,
        connections: connections.ok_or_else(|| format!("--connections is required\n{USAGE}"))?,
        seconds: seconds.ok_or_else(|| format!("--seconds is required\n{USAGE}"))?,
        warmup,
        addresses,
    })
}

async fn open(o: &Options, i: usize) -> std::io::Result<TcpStream> {
    let src = o.addresses[i % o.addresses.len()];
    let sock = if src.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    sock.set_nodelay(true)?;
    sock.set_zero_linger()?;
    sock.bind(SocketAddr::new(src, 0))?;
    match timeout(CONNECT_TIMEOUT, sock.connect(o.connect)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, format!("connect timed out after {CONNECT_TIMEOUT:?}"))),
    }
}

async fn run(o: &Options, nofile: libc::rlim_t) -> Result<Outcome, String> {
    let mut streams = Vec::with_capacity(o.connections);
    for i in 0..o.connections {
        let s = open(o, i).await.map_err(|e| format!("connection {} of {}: {e}", i + 1, o.connections))?;
        streams.push(s);
    }
    let stats = Rc::new(RefCell::new(Stats::default()));
    let start = Instant::now();
    let warm_end = start + o.warmup;
    let end = warm_end + o.seconds;
    let handles: Vec<_> = streams.into_iter().map(|s| tokio::task::spawn_local(ping(s, warm_end, end, stats.clone()))).collect();
    sleep_until(warm_end.into()).await;
    let (u0, s0) = cpu_times();
    sleep_until(end.into()).await;
    let (u1, s1) = cpu_times();
    // Every task stops at its first round trip that completes after `end`.
    let grace = tokio::time::Instant::now() + Duration::from_secs(10);
    for h in handles {
        let _ = tokio::time::timeout_at(grace, h).await;
    }
    let st = stats.borrow();
    Ok(Outcome {
        messages: st.hist.count(),
        hist: st.hist.clone(),
        window: o.seconds.as_secs_f64(),
        user: u1 - u0,
        sys: s1 - s0,
        errors: st.errors,
        first_error: st.first_error.clone(),
        nofile,
    })
}

/// One connection: one message outstanding until `end`; round trips that complete in
/// `[warm_end, end)` are recorded.
async fn ping(mut s: TcpStream, warm_end: Instant, end: Instant, stats: Rc<RefCell<Stats>>) {
    let msg = [b'x'; MSG_SIZE];
    let mut buf = [0u8; 4 * MSG_SIZE];
    let mut t = Instant::now();
    let result: std::io::Result<()> = async {
        loop {
            s.write_all(&msg).await?;
            let mut have = 0;
            while have < MSG_SIZE {
                let n = s.read(&mut buf).await?;
                if n == 0 {
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed by the server"));
                }
                have += n;
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            if now >= warm_end {
                stats.borrow_mut().hist.record(now.duration_since(t).as_nanos() as u64);
            }
            t = now;
        }
    }
    .await;
    if let Err(e) = result {
        let mut st = stats.borrow_mut();
        st.errors += 1;
        st.first_error.get_or_insert_with(|| e.to_string());
    }
}

fn us(ns: Option<u64>) -> String {
    match ns {
        Some(v) => format!("{:.1}", v as f64 / 1000.0),
        None => "null".into(),
    }
}

fn success_line(o: &Options, r: &Outcome) -> String {
    let rate = if r.window > 0.0 { r.messages as f64 / r.window } else { 0.0 };
    let cpu = r.user + r.sys;
    let share = if cpu > 0.0 { format!("{:.3}", r.user / cpu) } else { "null".into() };
    let cores = if r.window > 0.0 { format!("{:.3}", cpu / r.window) } else { "null".into() };
    let first = r.first_error.as_deref().map(json_str).unwrap_or_else(|| "null".into());
    let addrs: Vec<String> = o.addresses.iter().map(|a| json_str(&a.to_string())).collect();
    format!(
        "{{\"client\":\"rust\",\"model\":\"tokio\",\"connections\":{},\"seconds\":{},\"warmup\":{},\"messages\":{},\"msgs_per_s\":{:.1},\
         \"p50_us\":{},\"p95_us\":{},\"p99_us\":{},\"user_s\":{:.4},\"sys_s\":{:.4},\"user_share\":{},\"cpu_cores\":{},\
         \"errors\":{},\"first_error\":{},\"addresses\":[{}],\"rlimit_nofile\":{},\"latency\":\"every message, log-bucket histogram (~3%)\"}}",
        o.connections,
        o.seconds.as_secs_f64(),
        o.warmup.as_secs_f64(),
        r.messages,
        rate,
        us(r.hist.quantile(0.5)),
        us(r.hist.quantile(0.95)),
        us(r.hist.quantile(0.99)),
        r.user,
        r.sys,
        share,
        cores,
        r.errors,
        first,
        addrs.join(","),
        r.nofile,
    )
}
