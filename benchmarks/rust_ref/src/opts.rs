//! The command line: the workloads, the patterns and the options (`--help` prints [`USAGE`]),
//! parsed and checked by [`parse_args`].

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Workload {
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
    pub(crate) fn is_bulk(self) -> bool {
        matches!(self, Workload::BulkLoad | Workload::BulkUnload | Workload::Scan)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Pattern {
    Sync,
    SyncThreads,
    Concurrent,
}

#[derive(Debug)]
pub(crate) struct Opts {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) keyspace: String,
    pub(crate) ops: usize,
    pub(crate) threads: usize,
    pub(crate) concurrency: usize,
    pub(crate) workload: Workload,
    pub(crate) pattern: Pattern,
    pub(crate) tokio_workers: usize,
    pub(crate) warmup: usize,
    pub(crate) rows: usize,
    pub(crate) key_prefix: String,
    pub(crate) server_pid: Option<u32>,
    pub(crate) dim: usize,
    pub(crate) runs: usize,
    pub(crate) table: Option<String>,
    pub(crate) tls_ca: Option<String>,
    /// bulk-load's input, bulk-unload's output.
    pub(crate) file: Option<String>,
    /// Token ranges of bulk-unload (default 64) and scan (default 1).
    pub(crate) ranges: Option<usize>,
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

pub(crate) fn parse_args() -> Result<Opts, String> {
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
