//! The CQL side of scenario `connections` (issue 17, section 2): what `cql-responder` answers,
//! kept apart from its sockets so that it can be unit-tested.
//!
//! The responder stands in for a Cassandra node (or for K of them, one per 127.0.0.x listen
//! address) well enough for real drivers to finish their handshake and metadata refresh, then
//! answers the benchmark's one-row SELECT from a prepared response. Native protocol v4 only:
//! a frame of any other version gets a PROTOCOL_ERROR in a v4 frame (as Cassandra 3.x answers
//! v5), so drivers that try v5 first go down to v4.
//!
//! What it knows:
//! * `OPTIONS` → `SUPPORTED` (CQL_VERSION 3.4.5, PROTOCOL_VERSIONS 3/v3 and 4/v4, an empty
//!   COMPRESSION list: drivers fall back to none), `STARTUP` and `REGISTER` → `READY` (no
//!   authentication, no events are ever pushed);
//! * `QUERY` / `PREPARE` / `EXECUTE` of a `SELECT` from `system.local` and `system.peers` (the
//!   node the connection arrived at, and the others: host ids, one token each, the same
//!   schema version everywhere; any projection, `*` included), from `system_schema.*` and
//!   `system_virtual_schema.*` (no rows, the requested columns with the types the drivers
//!   check), from `bench.kv` (the benchmark table: one row `(k int, v text)` whatever the
//!   WHERE clause), and from `responder.stats` (this process's counters, for the tests);
//! * `system.peers_v2`, `system_schema.scylla_*`, `system.client_routes` and any other table:
//!   `Invalid` "unconfigured table", as Cassandra answers a table it does not have (the
//!   drivers fall back to `system.peers`, or skip ScyllaDB's tables, on exactly that);
//! * `USE ks` → SET_KEYSPACE; anything else → `Invalid`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::RwLock;

pub const HEADER_LEN: usize = 9;
/// The version byte of a v4 response frame.
pub const RESPONSE_V4: u8 = 0x84;
/// Frames larger than this are refused (a driver's requests here are a few hundred bytes).
pub const MAX_BODY: usize = 16 << 20;

pub mod opcode {
    pub const ERROR: u8 = 0x00;
    pub const STARTUP: u8 = 0x01;
    pub const READY: u8 = 0x02;
    pub const OPTIONS: u8 = 0x05;
    pub const SUPPORTED: u8 = 0x06;
    pub const QUERY: u8 = 0x07;
    pub const RESULT: u8 = 0x08;
    pub const PREPARE: u8 = 0x09;
    pub const EXECUTE: u8 = 0x0A;
    pub const REGISTER: u8 = 0x0B;
}

pub mod error_code {
    pub const SERVER: i32 = 0x0000;
    pub const PROTOCOL: i32 = 0x000A;
    pub const INVALID: i32 = 0x2200;
    pub const UNPREPARED: i32 = 0x2500;
}

/// The benchmark's table and its one row.
pub const BENCH_KEYSPACE: &str = "bench";
pub const BENCH_TABLE: &str = "kv";
pub const BENCH_VALUE: &str = "0123456789abcdef";
pub const CLUSTER_NAME: &str = "cql-responder";
pub const DATACENTER: &str = "datacenter1";
pub const RELEASE_VERSION: &str = "4.0.11";

// ------------------------------------------------------------------------------------ counters

/// Connections open now.
pub static OPEN: AtomicUsize = AtomicUsize::new(0);
/// Open connections that have answered at least one request on `bench.kv`.
pub static BUSY: AtomicUsize = AtomicUsize::new(0);
/// Requests answered on `bench.kv` since the start.
pub static REQUESTS: AtomicU64 = AtomicU64::new(0);

// ------------------------------------------------------------------------------------ encoding

/// A column type (only those the answers need).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Text,
    Int,
    BigInt,
    Bool,
    Uuid,
    Inet,
    TextSet,
    TextList,
    TextMap,
}

/// A cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Null,
    Text(String),
    Int(i32),
    BigInt(i64),
    Bool(bool),
    Uuid([u8; 16]),
    Inet(Ipv4Addr),
    Texts(Vec<String>),
    TextPairs(Vec<(String, String)>),
}

pub fn put_short(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn put_int(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn put_string(out: &mut Vec<u8>, s: &str) {
    put_short(out, s.len() as u16);
    out.extend_from_slice(s.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_int(out, b.len() as i32);
    out.extend_from_slice(b);
}

fn put_type(out: &mut Vec<u8>, t: Type) {
    let text = 0x000D;
    match t {
        Type::Text => put_short(out, text),
        Type::Int => put_short(out, 0x0009),
        Type::BigInt => put_short(out, 0x0002),
        Type::Bool => put_short(out, 0x0004),
        Type::Uuid => put_short(out, 0x000C),
        Type::Inet => put_short(out, 0x0010),
        Type::TextSet => {
            put_short(out, 0x0022);
            put_short(out, text);
        }
        Type::TextList => {
            put_short(out, 0x0020);
            put_short(out, text);
        }
        Type::TextMap => {
            put_short(out, 0x0021);
            put_short(out, text);
            put_short(out, text);
        }
    }
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => put_int(out, -1),
        Value::Text(s) => put_bytes(out, s.as_bytes()),
        Value::Int(i) => put_bytes(out, &i.to_be_bytes()),
        Value::BigInt(i) => put_bytes(out, &i.to_be_bytes()),
        Value::Bool(b) => put_bytes(out, &[*b as u8]),
        Value::Uuid(u) => put_bytes(out, u),
        Value::Inet(a) => put_bytes(out, &a.octets()),
        Value::Texts(items) => {
            let mut b = Vec::new();
            put_int(&mut b, items.len() as i32);
            for s in items {
                put_bytes(&mut b, s.as_bytes());
            }
            put_bytes(out, &b);
        }
        Value::TextPairs(items) => {
            let mut b = Vec::new();
            put_int(&mut b, items.len() as i32);
            for (k, v) in items {
                put_bytes(&mut b, k.as_bytes());
                put_bytes(&mut b, v.as_bytes());
            }
            put_bytes(out, &b);
        }
    }
}

/// A response frame: header (v4, no flags) and body.
pub fn frame(stream: i16, op: u8, body: &[u8], out: &mut Vec<u8>) {
    out.push(RESPONSE_V4);
    out.push(0);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(op);
    put_int(out, body.len() as i32);
    out.extend_from_slice(body);
}

pub fn error_body(code: i32, message: &str) -> Vec<u8> {
    let mut b = Vec::new();
    put_int(&mut b, code);
    put_string(&mut b, message);
    b
}

pub fn supported_body() -> Vec<u8> {
    // COMPRESSION must be there (the classic driver reads it unconditionally), empty: the
    // responder compresses nothing, so the drivers fall back to no compression.
    let opts: [(&str, &[&str]); 3] = [("COMPRESSION", &[]), ("CQL_VERSION", &["3.4.5"]), ("PROTOCOL_VERSIONS", &["3/v3", "4/v4"])];
    let mut b = Vec::new();
    put_short(&mut b, opts.len() as u16);
    for (k, vs) in opts {
        put_string(&mut b, k);
        put_short(&mut b, vs.len() as u16);
        for v in vs {
            put_string(&mut b, v);
        }
    }
    b
}

/// A result's rows: the columns (name, type) of `keyspace.table`, and the rows.
pub struct Rows {
    pub keyspace: String,
    pub table: String,
    pub columns: Vec<(String, Type)>,
    pub rows: Vec<Vec<Value>>,
}

impl Rows {
    fn put_spec(&self, b: &mut Vec<u8>) {
        put_int(b, 0x0001); // global table spec
        put_int(b, self.columns.len() as i32);
        put_string(b, &self.keyspace);
        put_string(b, &self.table);
        for (name, t) in &self.columns {
            put_string(b, name);
            put_type(b, *t);
        }
    }

    /// RESULT Rows; `skip_metadata`: the flag NO_METADATA and the column count only (an
    /// EXECUTE that asked for it).
    pub fn result_body(&self, skip_metadata: bool) -> Vec<u8> {
        let mut b = Vec::new();
        put_int(&mut b, 2);
        if skip_metadata {
            put_int(&mut b, 0x0004);
            put_int(&mut b, self.columns.len() as i32);
        } else {
            self.put_spec(&mut b);
        }
        put_int(&mut b, self.rows.len() as i32);
        for row in &self.rows {
            for v in row {
                put_value(&mut b, v);
            }
        }
        b
    }
}

// ------------------------------------------------------------------------------------ request parsing

/// A `[long string]` or `[short bytes]` at the start of a body, and the rest.
pub fn long_string(body: &[u8]) -> Option<(&str, &[u8])> {
    let n = i32::from_be_bytes(body.get(..4)?.try_into().ok()?);
    let s = body.get(4..4 + usize::try_from(n).ok()?)?;
    Some((std::str::from_utf8(s).ok()?, &body[4 + n as usize..]))
}

pub fn short_bytes(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = u16::from_be_bytes(body.get(..2)?.try_into().ok()?) as usize;
    Some((body.get(2..2 + n)?, &body[2 + n..]))
}

/// The query parameters' flags byte (after the consistency).
pub fn params_flags(params: &[u8]) -> u8 {
    params.get(2).copied().unwrap_or(0)
}

/// A SELECT's projection (None: `*`), its `keyspace.table` (lower case, unquoted) and the
/// columns its WHERE clause binds with `?`, in order; None when not a SELECT.
pub struct Select {
    pub columns: Option<Vec<String>>,
    pub table: String,
    pub markers: Vec<String>,
}

pub fn parse_select(query: &str) -> Option<Select> {
    let q = query.trim().trim_end_matches(';');
    let lower = q.to_ascii_lowercase();
    let rest = lower.strip_prefix("select")?;
    let from = rest.find(" from ")?;
    let proj = rest[..from].trim().trim_start_matches("json ").trim();
    let after = rest[from + 6..].trim_start();
    let table: String = after.split(|c: char| c.is_whitespace() || c == ';').next()?.replace('"', "");
    let columns = if proj == "*" {
        None
    } else {
        Some(
            proj.split(',')
                .map(|c| {
                    let c = c.trim();
                    // `x AS y`: the result column is y.
                    let c = c.rsplit(" as ").next().unwrap_or(c);
                    c.trim().replace('"', "")
                })
                .collect(),
        )
    };
    let mut markers = Vec::new();
    let where_part = after.split_once(" where ").map(|(_, w)| w).unwrap_or("");
    let mut prev = "";
    for tok in where_part.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',') {
        if tok.is_empty() {
            continue;
        }
        for part in tok.split_inclusive(['=', '?']) {
            if part.ends_with('?') {
                markers.push(prev.trim_end_matches(['=', '<', '>']).replace('"', ""));
            } else if !matches!(part, "=" | "in" | "<" | ">" | "<=" | ">=") {
                prev = part.trim_end_matches('=');
            }
        }
    }
    Some(Select { columns, table, markers })
}

// ------------------------------------------------------------------------------------ the tables

/// The nodes one responder plays: one per listen address, in order.
pub struct Nodes {
    pub addrs: Vec<Ipv4Addr>,
}

/// A node's host id: a fixed version-4-looking UUID from its address.
pub fn host_id(addr: Ipv4Addr) -> [u8; 16] {
    let mut u = [0u8; 16];
    u[..4].copy_from_slice(&0x7e57_c0deu32.to_be_bytes());
    u[6] = 0x40;
    u[8] = 0x80;
    u[12..].copy_from_slice(&addr.octets());
    u
}

pub const SCHEMA_VERSION: [u8; 16] = [0x5c, 0x4e, 0x3a, 0x00, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1];

impl Nodes {
    /// Node `i`'s one token: the ring cut in equal parts.
    pub fn token(&self, i: usize) -> String {
        let step = (u64::MAX / self.addrs.len() as u64) as i128;
        (i64::MIN as i128 + step * i as i128).to_string()
    }

    fn node_cells(&self, i: usize, local: bool) -> Vec<(&'static str, Type, Value)> {
        let a = self.addrs[i];
        let mut cells = vec![
            ("data_center", Type::Text, Value::Text(DATACENTER.into())),
            ("host_id", Type::Uuid, Value::Uuid(host_id(a))),
            ("rack", Type::Text, Value::Text("rack1".into())),
            ("release_version", Type::Text, Value::Text(RELEASE_VERSION.into())),
            ("rpc_address", Type::Inet, Value::Inet(a)),
            ("schema_version", Type::Uuid, Value::Uuid(SCHEMA_VERSION)),
            ("tokens", Type::TextSet, Value::Texts(vec![self.token(i)])),
        ];
        if local {
            cells.extend([
                ("key", Type::Text, Value::Text("local".into())),
                ("bootstrapped", Type::Text, Value::Text("COMPLETED".into())),
                ("broadcast_address", Type::Inet, Value::Inet(a)),
                ("cluster_name", Type::Text, Value::Text(CLUSTER_NAME.into())),
                ("cql_version", Type::Text, Value::Text("3.4.5".into())),
                ("listen_address", Type::Inet, Value::Inet(a)),
                ("native_protocol_version", Type::Text, Value::Text("4".into())),
                ("partitioner", Type::Text, Value::Text("org.apache.cassandra.dht.Murmur3Partitioner".into())),
            ]);
        } else {
            cells.extend([("peer", Type::Inet, Value::Inet(a)), ("preferred_ip", Type::Inet, Value::Null)]);
        }
        cells
    }

    /// The rows of `system.local` (node `me`) or `system.peers` (every other node).
    pub fn system_rows(&self, me: usize, local: bool, columns: &Option<Vec<String>>) -> Rows {
        let table_cells: Vec<Vec<(&'static str, Type, Value)>> =
            if local { vec![self.node_cells(me, true)] } else { (0..self.addrs.len()).filter(|&i| i != me).map(|i| self.node_cells(i, false)).collect() };
        let names: Vec<(String, Type)> = match columns {
            None => self.node_cells(me, local).into_iter().map(|(n, t, _)| (n.to_string(), t)).collect(),
            Some(cols) => {
                cols.iter().map(|c| (c.clone(), self.node_cells(me, local).iter().find(|(n, _, _)| n == c).map(|x| x.1).unwrap_or(Type::Text))).collect()
            }
        };
        let rows = table_cells
            .iter()
            .map(|cells| names.iter().map(|(n, _)| cells.iter().find(|(c, _, _)| c == n).map(|x| x.2.clone()).unwrap_or(Value::Null)).collect())
            .collect();
        Rows { keyspace: "system".into(), table: if local { "local" } else { "peers" }.into(), columns: names, rows }
    }
}

/// The type of a schema table's column, as the drivers' row types expect it (text else).
pub fn schema_column_type(name: &str) -> Type {
    match name {
        "replication" | "options" | "extensions" | "caching" | "compaction" | "compression" => Type::TextMap,
        "durable_writes" | "called_on_null_input" => Type::Bool,
        "initial_tablets" | "position" | "gc_grace_seconds" | "min_index_interval" | "max_index_interval" | "default_time_to_live" => Type::Int,
        "field_names" | "field_types" | "argument_names" | "argument_types" => Type::TextList,
        "flags" => Type::TextSet,
        "id" => Type::Uuid,
        _ => Type::Text,
    }
}

/// The benchmark table's row, projected.
pub fn bench_rows(columns: &Option<Vec<String>>) -> Rows {
    let all = [("k", Type::Int, Value::Int(1)), ("v", Type::Text, Value::Text(BENCH_VALUE.into()))];
    let picked: Vec<&(&str, Type, Value)> = match columns {
        None => all.iter().collect(),
        Some(cols) => cols.iter().filter_map(|c| all.iter().find(|(n, _, _)| n == c)).collect(),
    };
    Rows {
        keyspace: BENCH_KEYSPACE.into(),
        table: BENCH_TABLE.into(),
        columns: picked.iter().map(|(n, t, _)| (n.to_string(), *t)).collect(),
        rows: vec![picked.iter().map(|(_, _, v)| v.clone()).collect()],
    }
}

/// What a SELECT answers: its rows, or an error (code, message).
pub enum Answer {
    Rows(Rows),
    Bench(Rows),
    Error(i32, String),
}

pub fn answer_select(nodes: &Nodes, me: usize, s: &Select) -> Answer {
    let (ks, table) = s.table.split_once('.').unwrap_or(("", s.table.as_str()));
    match (ks, table) {
        ("system", "local") => Answer::Rows(nodes.system_rows(me, true, &s.columns)),
        ("system", "peers") => Answer::Rows(nodes.system_rows(me, false, &s.columns)),
        (BENCH_KEYSPACE, BENCH_TABLE) => {
            let rows = bench_rows(&s.columns);
            if rows.columns.is_empty() {
                return Answer::Error(error_code::INVALID, format!("Undefined column name in {:?}", s.columns));
            }
            Answer::Bench(rows)
        }
        ("responder", "stats") => {
            let stats = [
                ("connections", Value::BigInt(OPEN.load(Ordering::Relaxed) as i64)),
                ("busy_connections", Value::BigInt(BUSY.load(Ordering::Relaxed) as i64)),
                ("requests", Value::BigInt(REQUESTS.load(Ordering::Relaxed) as i64)),
                ("nodes", Value::BigInt(nodes.addrs.len() as i64)),
            ];
            let picked: Vec<&(&str, Value)> = match &s.columns {
                None => stats.iter().collect(),
                Some(cols) => cols.iter().filter_map(|c| stats.iter().find(|(n, _)| n == c)).collect(),
            };
            Answer::Rows(Rows {
                keyspace: "responder".into(),
                table: "stats".into(),
                columns: picked.iter().map(|(n, _)| (n.to_string(), Type::BigInt)).collect(),
                rows: vec![picked.iter().map(|(_, v)| v.clone()).collect()],
            })
        }
        ("system_schema" | "system_virtual_schema", t) if !t.starts_with("scylla_") => {
            let columns = match &s.columns {
                None => vec![("keyspace_name".to_string(), Type::Text)],
                Some(cols) => cols.iter().map(|c| (c.clone(), schema_column_type(c))).collect(),
            };
            Answer::Rows(Rows { keyspace: ks.into(), table: t.into(), columns, rows: vec![] })
        }
        _ => Answer::Error(error_code::INVALID, format!("unconfigured table {table}")),
    }
}

// ------------------------------------------------------------------------------------ prepared statements

/// A prepared SELECT: the PREPARED body, and the EXECUTE answer with and without metadata.
pub struct Prepared {
    pub prepared_body: Vec<u8>,
    pub rows: Vec<u8>,
    pub rows_no_metadata: Vec<u8>,
    pub bench: bool,
}

/// Every statement prepared since the start, by id (shared by all connections, as a node's
/// prepared-statement cache is).
pub static PREPARED: RwLock<Option<HashMap<[u8; 16], std::sync::Arc<Prepared>>>> = RwLock::new(None);

/// A statement's id: 16 bytes of FNV-1a of its text.
pub fn statement_id(query: &str) -> [u8; 16] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut id = [0u8; 16];
    for (i, b) in query.bytes().chain(b"#".iter().copied()).chain(query.bytes().rev()).enumerate() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        if i % 2 == 0 {
            id[i % 16] ^= (h >> 32) as u8;
        }
    }
    id[..8].iter_mut().zip(h.to_be_bytes()).for_each(|(a, b)| *a ^= b);
    id
}

/// PREPARE: the id, and what EXECUTE answers, or an error (code, message).
pub fn prepare(nodes: &Nodes, me: usize, query: &str) -> Result<([u8; 16], std::sync::Arc<Prepared>), (i32, String)> {
    let s = parse_select(query).ok_or((error_code::INVALID, "cql-responder prepares only SELECT statements".to_string()))?;
    let (rows, bench) = match answer_select(nodes, me, &s) {
        Answer::Rows(r) => (r, false),
        Answer::Bench(r) => (r, true),
        Answer::Error(c, m) => return Err((c, m)),
    };
    let id = statement_id(query);
    // Bound variables: the columns the WHERE clause compares with `?`; those of the
    // benchmark table's partition key (k) make the routing key.
    let mut body = Vec::new();
    put_int(&mut body, 4);
    put_short(&mut body, 16);
    body.extend_from_slice(&id);
    put_int(&mut body, 0x0001);
    put_int(&mut body, s.markers.len() as i32);
    let pk: Vec<usize> = s.markers.iter().enumerate().filter(|(_, m)| bench && m.as_str() == "k").map(|(i, _)| i).collect();
    put_int(&mut body, pk.len() as i32);
    for i in &pk {
        put_short(&mut body, *i as u16);
    }
    put_string(&mut body, &rows.keyspace);
    put_string(&mut body, &rows.table);
    for m in &s.markers {
        put_string(&mut body, m);
        put_type(&mut body, if bench && m == "k" { Type::Int } else { schema_column_type(m) });
    }
    let mut meta = Vec::new();
    rows.put_spec(&mut meta);
    body.extend_from_slice(&meta);
    let p = std::sync::Arc::new(Prepared { prepared_body: body, rows: rows.result_body(false), rows_no_metadata: rows.result_body(true), bench });
    PREPARED.write().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(id, p.clone());
    Ok((id, p))
}

pub fn lookup(id: &[u8]) -> Option<std::sync::Arc<Prepared>> {
    let id: [u8; 16] = id.try_into().ok()?;
    PREPARED.read().unwrap_or_else(|e| e.into_inner()).as_ref()?.get(&id).cloned()
}

pub fn unprepared_body(id: &[u8]) -> Vec<u8> {
    let mut b = error_body(error_code::UNPREPARED, "Prepared query with ID not found");
    put_short(&mut b, id.len() as u16);
    b.extend_from_slice(id);
    b
}

pub fn set_keyspace_body(ks: &str) -> Vec<u8> {
    let mut b = Vec::new();
    put_int(&mut b, 3);
    put_string(&mut b, ks);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_are_parsed() {
        let s = parse_select("SELECT host_id, rpc_address FROM system.peers").unwrap();
        assert_eq!(s.columns.unwrap(), vec!["host_id", "rpc_address"]);
        assert_eq!(s.table, "system.peers");
        let s = parse_select("SELECT * FROM system.local WHERE key='local'").unwrap();
        assert!(s.columns.is_none());
        assert_eq!(s.table, "system.local");
        assert!(s.markers.is_empty());
        let s = parse_select("select k, v from \"bench\".kv where k = ?;").unwrap();
        assert_eq!(s.table, "bench.kv");
        assert_eq!(s.markers, vec!["k"]);
        let s = parse_select("SELECT keyspace_name FROM system_schema.tables where keyspace_name in ?").unwrap();
        assert_eq!(s.markers, vec!["keyspace_name"]);
        assert!(parse_select("INSERT INTO t (a) VALUES (1)").is_none());
    }

    #[test]
    fn local_and_peers() {
        let nodes = Nodes { addrs: (1..=3).map(|i| Ipv4Addr::new(127, 0, 0, i)).collect() };
        let local = nodes.system_rows(1, true, &None);
        assert_eq!(local.rows.len(), 1);
        let peers = nodes.system_rows(1, false, &Some(vec!["rpc_address".into(), "nope".into()]));
        assert_eq!(peers.rows, vec![vec![Value::Inet(Ipv4Addr::new(127, 0, 0, 1)), Value::Null], vec![Value::Inet(Ipv4Addr::new(127, 0, 0, 3)), Value::Null]]);
        assert_eq!(nodes.token(0), i64::MIN.to_string());
        assert!(matches!(answer_select(&nodes, 0, &parse_select("SELECT * FROM system.peers_v2").unwrap()), Answer::Error(error_code::INVALID, _)));
        match answer_select(&nodes, 0, &parse_select("SELECT connections, nodes FROM responder.stats").unwrap()) {
            Answer::Rows(r) => assert_eq!(r.columns, vec![("connections".to_string(), Type::BigInt), ("nodes".to_string(), Type::BigInt)]),
            _ => panic!("responder.stats"),
        }
    }

    #[test]
    fn prepared_ids_differ_and_are_kept() {
        let nodes = Nodes { addrs: vec![Ipv4Addr::LOCALHOST] };
        let (a, p) = prepare(&nodes, 0, "SELECT k, v FROM bench.kv WHERE k = ?").unwrap();
        let (b, _) = prepare(&nodes, 0, "SELECT v FROM bench.kv WHERE k = ?").unwrap();
        assert_ne!(a, b);
        assert!(p.bench);
        assert!(lookup(&a).is_some());
        assert!(lookup(&[0u8; 16]).is_none());
        // RESULT kind Rows, NO_METADATA, 2 columns, 1 row: k (4 bytes), v.
        assert_eq!(&p.rows_no_metadata[..16], &[0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 1]);
    }
}
