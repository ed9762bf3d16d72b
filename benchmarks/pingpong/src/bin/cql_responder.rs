//! `cql-responder --listen 127.0.0.1:PORT [--nodes K] [--threads N] [--log-queries]`: a
//! small CQL server for scenario `connections`' CQL table (issue 17, section 2). It answers
//! the drivers' real handshake and metadata queries and the benchmark's one-row SELECT
//! (`turbocql_pingpong::cql` says what it answers), from prepared bytes, so that it is
//! not the bottleneck where Cassandra would be.
//!
//! `--nodes K` plays K nodes of one cluster, listening on K loopback addresses (127.0.0.1,
//! .2, ... then 127.0.1.1, ...) on the same port, each reporting the others in
//! `system.peers`: a driver that holds one connection per host (the classic driver with
//! protocol v4) then holds K connections. A tokio multi-thread runtime with `--threads`
//! workers (default 1; the runner pins the process to one core). Prints `listening on
//! ADDR (...)` to stderr when every address is bound, then runs until killed;
//! `--log-queries` prints every QUERY and PREPARE text (to see what a driver asks).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use turbocql_pingpong::cql::{self, error_code, opcode, Answer, Nodes};
use turbocql_pingpong::{options_or_exit, parse_options, raise_nofile};

const USAGE: &str = "usage: cql-responder --listen 127.0.0.1:PORT [--nodes K] [--threads N] [--log-queries 0|1]";

struct Options {
    listen: SocketAddrV4,
    nodes: usize,
    threads: usize,
    log_queries: bool,
}

fn main() {
    let o = options_or_exit(|args| parse(&args.iter().map(|a| if a == "--log-queries" { "--log-queries=1".into() } else { a.clone() }).collect::<Vec<_>>()));
    let nofile = raise_nofile();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(o.threads).enable_all().build().expect("tokio runtime");
    if let Err(e) = rt.block_on(serve(o, nofile)) {
        eprintln!("cql-responder: {e}");
        std::process::exit(1);
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options { listen: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), nodes: 1, threads: 1, log_queries: false };
    let mut have_listen = false;
    let positive = |name: &str, v: &str| v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("{name}: not a positive number: {v:?}"));
    for (name, v) in parse_options(args, &["--listen", "--nodes", "--threads", "--log-queries"], USAGE)? {
        match name.as_str() {
            "--listen" => {
                o.listen = v.parse().map_err(|e| format!("--listen {v:?}: an IPv4 HOST:PORT ({e})"))?;
                have_listen = true;
            }
            "--nodes" => o.nodes = positive(&name, &v)?,
            "--threads" => o.threads = positive(&name, &v)?,
            _ => o.log_queries = v != "0",
        }
    }
    if !have_listen {
        return Err(format!("--listen is required\n{USAGE}"));
    }
    if o.nodes > 1 && o.listen.ip().octets()[..3] != [127, 0, 0] {
        return Err("--nodes needs a 127.0.0.x --listen address".into());
    }
    Ok(o)
}

/// Node i's address: 127.0.0.1 + i, skipping .0 and .255 of every /24.
fn node_addr(first: Ipv4Addr, i: usize) -> Ipv4Addr {
    if i == 0 {
        return first;
    }
    let start = first.octets()[3] as usize - 1;
    let k = start + i;
    Ipv4Addr::new(127, 0, (k / 254) as u8, (k % 254 + 1) as u8)
}

/// The node a connection to `addr` arrived at: the inverse of [`node_addr`], None for an
/// address no node has.
fn node_index(first: Ipv4Addr, nodes: usize, addr: Ipv4Addr) -> Option<usize> {
    let [a, b, c, d] = addr.octets();
    if a != 127 || b != 0 || d == 0 || d == 255 {
        return None;
    }
    let k = c as usize * 254 + d as usize - 1;
    let i = k.checked_sub(first.octets()[3] as usize - 1)?;
    (i < nodes && node_addr(first, i) == addr).then_some(i)
}

fn bind(addr: SocketAddrV4) -> std::io::Result<TcpListener> {
    let sock = TcpSocket::new_v4()?;
    sock.set_reuseaddr(true)?;
    sock.bind(SocketAddr::V4(addr))?;
    // The kernel caps the backlog at net.core.somaxconn.
    sock.listen(65_535)
}

async fn serve(o: Options, nofile: libc::rlim_t) -> std::io::Result<()> {
    // Several nodes: one listener on every address, each connection's node told by the
    // address it arrived at. A listener per node address would take one fd each, and 10,000
    // nodes' listeners plus their 10,000 connections pass the 20,000 fds a process may have.
    let listener = bind(if o.nodes > 1 { SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, o.listen.port()) } else { o.listen })?;
    let port = listener.local_addr()?.port();
    let first = *o.listen.ip();
    let nodes = Arc::new(Nodes { addrs: (0..o.nodes).map(|i| node_addr(first, i)).collect() });
    eprintln!("listening on {first}:{port} (nodes: {}, worker threads: {}, RLIMIT_NOFILE: {nofile})", o.nodes, o.threads);
    accept_loop(listener, nodes, first, o.log_queries).await;
    Ok(())
}

async fn accept_loop(listener: TcpListener, nodes: Arc<Nodes>, first: Ipv4Addr, log: bool) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                // Not one of the nodes' addresses (another interface's): not ours to answer.
                let me = match stream.local_addr() {
                    _ if nodes.addrs.len() == 1 => Some(0),
                    Ok(SocketAddr::V4(a)) => node_index(first, nodes.addrs.len(), *a.ip()),
                    _ => None,
                };
                let Some(me) = me else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(connection(stream, nodes.clone(), me, log));
            }
            Err(e) => {
                // EMFILE and the like: say so, and let connections close before accepting again.
                eprintln!("cql-responder: accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Per connection: whether it has answered a benchmark request (the BUSY counter).
struct Conn {
    busy: bool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        cql::OPEN.fetch_sub(1, Ordering::Relaxed);
        if self.busy {
            cql::BUSY.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Read what is there, answer every complete frame in it, write the answers in one call.
async fn connection(mut s: TcpStream, nodes: Arc<Nodes>, me: usize, log: bool) {
    cql::OPEN.fetch_add(1, Ordering::Relaxed);
    let mut conn = Conn { busy: false };
    let mut buf: Vec<u8> = vec![0; 64 * 1024];
    let mut have = 0usize;
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match s.read(&mut buf[have..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let mut at = 0usize;
        while have - at >= cql::HEADER_LEN {
            let h = &buf[at..at + cql::HEADER_LEN];
            let len = i32::from_be_bytes([h[5], h[6], h[7], h[8]]);
            if len < 0 || len as usize > cql::MAX_BODY {
                return;
            }
            let end = at + cql::HEADER_LEN + len as usize;
            if end > have {
                if end > buf.len() {
                    buf.resize(end, 0);
                }
                break;
            }
            let (version, stream, op) = (h[0], i16::from_be_bytes([h[2], h[3]]), h[4]);
            answer(version, stream, op, &buf[at + cql::HEADER_LEN..end], &nodes, me, log, &mut conn, &mut out);
            at = end;
        }
        buf.copy_within(at..have, 0);
        have -= at;
        if !out.is_empty() {
            if s.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
}

fn answer(version: u8, stream: i16, op: u8, body: &[u8], nodes: &Nodes, me: usize, log: bool, conn: &mut Conn, out: &mut Vec<u8>) {
    if version & 0x7f != 4 {
        // As Cassandra 3.x: the client's next attempt is a lower version.
        let msg = format!("Invalid or unsupported protocol version ({}); the lowest supported version is 4 and the greatest is 4", version & 0x7f);
        return cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::PROTOCOL, &msg), out);
    }
    match op {
        opcode::OPTIONS => cql::frame(stream, opcode::SUPPORTED, &cql::supported_body(), out),
        opcode::STARTUP | opcode::REGISTER => cql::frame(stream, opcode::READY, &[], out),
        opcode::QUERY => {
            let Some((query, params)) = cql::long_string(body) else {
                return cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::PROTOCOL, "malformed QUERY"), out);
            };
            if log {
                eprintln!("QUERY {query}");
            }
            query_answer(stream, query, params, nodes, me, conn, out);
        }
        opcode::PREPARE => {
            let Some((query, _)) = cql::long_string(body) else {
                return cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::PROTOCOL, "malformed PREPARE"), out);
            };
            if log {
                eprintln!("PREPARE {query}");
            }
            match cql::prepare(nodes, me, query) {
                Ok((_, p)) => cql::frame(stream, opcode::RESULT, &p.prepared_body, out),
                Err((code, msg)) => cql::frame(stream, opcode::ERROR, &cql::error_body(code, &msg), out),
            }
        }
        opcode::EXECUTE => {
            let Some((id, params)) = cql::short_bytes(body) else {
                return cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::PROTOCOL, "malformed EXECUTE"), out);
            };
            let Some(p) = cql::lookup(id) else {
                return cql::frame(stream, opcode::ERROR, &cql::unprepared_body(id), out);
            };
            if p.bench {
                count(conn);
            }
            let skip = cql::params_flags(params) & 0x02 != 0;
            cql::frame(stream, opcode::RESULT, if skip { &p.rows_no_metadata } else { &p.rows }, out);
        }
        _ => cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::PROTOCOL, &format!("cql-responder does not answer opcode {op:#04x}")), out),
    }
}

fn count(conn: &mut Conn) {
    cql::REQUESTS.fetch_add(1, Ordering::Relaxed);
    if !conn.busy {
        conn.busy = true;
        cql::BUSY.fetch_add(1, Ordering::Relaxed);
    }
}

fn query_answer(stream: i16, query: &str, params: &[u8], nodes: &Nodes, me: usize, conn: &mut Conn, out: &mut Vec<u8>) {
    let trimmed = query.trim().trim_end_matches(';');
    if trimmed.len() > 4 && trimmed[..4].eq_ignore_ascii_case("use ") {
        let ks = trimmed[4..].trim().trim_matches('"');
        return cql::frame(stream, opcode::RESULT, &cql::set_keyspace_body(ks), out);
    }
    let Some(select) = cql::parse_select(query) else {
        return cql::frame(stream, opcode::ERROR, &cql::error_body(error_code::INVALID, "cql-responder answers only SELECT and USE"), out);
    };
    let _ = params;
    match cql::answer_select(nodes, me, &select) {
        Answer::Rows(rows) => cql::frame(stream, opcode::RESULT, &rows.result_body(false), out),
        Answer::Bench(rows) => {
            count(conn);
            cql::frame(stream, opcode::RESULT, &rows.result_body(false), out)
        }
        Answer::Error(code, msg) => {
            if code == error_code::SERVER {
                eprintln!("cql-responder: {msg}");
            }
            cql::frame(stream, opcode::ERROR, &cql::error_body(code, &msg), out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_finds_its_node_by_the_address_it_arrived_at() {
        let first = Ipv4Addr::new(127, 0, 0, 1);
        for i in [0, 1, 253, 254, 9_999] {
            assert_eq!(node_index(first, 10_000, node_addr(first, i)), Some(i));
        }
        assert_eq!(node_index(first, 10_000, Ipv4Addr::new(127, 0, 39, 95)), None); // node 10,000: not there
        assert_eq!(node_index(first, 3, Ipv4Addr::new(127, 0, 0, 255)), None);
        assert_eq!(node_index(first, 3, Ipv4Addr::new(10, 0, 0, 2)), None);
        let fifth = Ipv4Addr::new(127, 0, 0, 5);
        assert_eq!(node_index(fifth, 3, Ipv4Addr::new(127, 0, 0, 7)), Some(2));
        assert_eq!(node_index(fifth, 3, Ipv4Addr::new(127, 0, 0, 4)), None);
    }
}
