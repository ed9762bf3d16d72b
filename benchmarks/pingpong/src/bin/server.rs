//! `pingpong-server --listen 127.0.0.1:PORT [--threads N]`: the echo side of document 002's
//! 64-byte ping-pong (scenario `connections`).
//!
//! It stands in for the document's C++ epoll server (which ran in 3 threads, opened the
//! connections to a listening Python client and kept the statistics): here a tokio
//! multi-thread runtime with `--threads` workers (default 1; `run_connections.py` pins it to
//! one core) accepts any number of connections and echoes every 64-byte message back at once,
//! keeping no statistics; the clients open the connections and measure. Port 0 picks a free
//! port. Prints `listening on ADDR` to stderr when ready, then runs until killed.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use turbocql_pingpong::{options_or_exit, parse_options, raise_nofile, MSG_SIZE};

const USAGE: &str = "usage: pingpong-server --listen 127.0.0.1:PORT [--threads N]";

fn main() {
    let (listen, threads) = options_or_exit(parse);
    let nofile = raise_nofile();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build().expect("tokio runtime");
    if let Err(e) = rt.block_on(serve(listen, threads, nofile)) {
        eprintln!("pingpong-server: {e}");
        std::process::exit(1);
    }
}

fn parse(args: &[String]) -> Result<(SocketAddr, usize), String> {
    let mut listen = None;
    let mut threads = 1usize;
    for (name, v) in parse_options(args, &["--listen", "--threads"], USAGE)? {
        match name.as_str() {
            "--listen" => listen = Some(v.parse::<SocketAddr>().map_err(|e| format!("--listen {v:?}: {e}"))?),
            _ => threads = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("--threads: not a positive number: {v:?}"))?,
        }
    }
    Ok((listen.ok_or_else(|| format!("--listen is required\n{USAGE}"))?, threads))
}

async fn serve(addr: SocketAddr, threads: usize, nofile: libc::rlim_t) -> std::io::Result<()> {
    let sock = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    sock.set_reuseaddr(true)?;
    sock.bind(addr)?;
    // The kernel caps the backlog at net.core.somaxconn.
    let listener = sock.listen(65_535)?;
    eprintln!("listening on {} (worker threads: {threads}, RLIMIT_NOFILE: {nofile})", listener.local_addr()?);
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(echo(stream));
            }
            Err(e) => {
                // EMFILE and the like: say so, and let connections close before accepting again.
                eprintln!("pingpong-server: accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Echo every complete 64-byte message as soon as it is in. The read buffer is larger than a
/// message so that a read returning one message (less than the buffer) tells tokio the socket
/// is drained: no second read that would only find EAGAIN.
async fn echo(mut s: TcpStream) {
    let mut buf = [0u8; 16 * MSG_SIZE];
    let mut have = 0usize;
    loop {
        let n = match s.read(&mut buf[have..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let whole = have - have % MSG_SIZE;
        if whole > 0 {
            if s.write_all(&buf[..whole]).await.is_err() {
                return;
            }
            buf.copy_within(whole..have, 0);
            have -= whole;
        }
    }
}
