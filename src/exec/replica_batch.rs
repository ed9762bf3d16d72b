//! Replica batches: rows of one prepared statement written a group at a time, for the bulk
//! loader (`turbocql load`, `turbocql.bulk.load(..., batch_rows=N)`).
//!
//! Rows whose partitions have the same replicas go in one UNLOGGED batch (DSBulk's
//! `REPLICA_SET` batch mode): the coordinator the batch is routed to (by its first row's
//! token) owns every row of it, so the batch costs one request instead of one per row and
//! makes no extra hop. A batch closes at `max_rows` rows or `max_bytes` bytes as the
//! server measures a batch for its `batch_size_warn_threshold` (5 KiB by default; past it
//! every batch is a warning in the server's log): values and about 16 bytes per cell
//! (`server_bytes`). It closes too before a
//! second row of a partition already in it: rows of one batch share its write timestamp,
//! so a later row of the same key goes in a later batch (a later timestamp) and still wins,
//! as it does when rows are sent one by one. A row whose token cannot be computed, or of
//! a table the cluster state does not know, goes alone.
//!
//! A batch the server refuses as invalid (one row's key too long, say) is sent again a row
//! at a time ([`split`]), so that only the bad row fails and with its own reason; a batch
//! that fails for the cluster's state (a timeout, too few replicas) fails each of its rows.

use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::prelude::*;
use scylla::cluster::ClusterState;
use scylla::frame::response::result::{ColumnSpec, ColumnType};
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use uuid::Uuid;

use super::attempts::RunError;
use super::options::{apply_options, Options};
use super::request::{Request, RequestKind};
use crate::codec::values::BoundValues;

/// How rows are grouped (`Settings::grouping` of a concurrent run).
#[derive(Clone, Copy, Debug)]
pub struct Grouping {
    pub max_rows: usize,
    pub max_bytes: usize,
}

/// The input items a request carries: one, or the rows of a replica batch (input order).
pub enum Items {
    One(usize),
    Group(Box<[usize]>),
}

#[allow(clippy::len_without_is_empty)]
impl Items {
    pub fn len(&self) -> usize {
        match self {
            Items::One(_) => 1,
            Items::Group(ix) => ix.len(),
        }
    }
}

/// One open batch: the rows so far of one replica set.
struct Open {
    replicas: Vec<Uuid>,
    stmt: PreparedStatement,
    indices: Vec<usize>,
    values: Vec<BoundValues>,
    tokens: Vec<i64>,
    bytes: usize,
}

/// Groups the requests of one refill of a concurrent run (see the module doc).
pub struct Grouper {
    limits: Grouping,
    cluster: Arc<ClusterState>,
    open: Vec<Open>,
}

impl Grouper {
    pub fn new(cluster: Arc<ClusterState>, limits: Grouping) -> Grouper {
        Grouper { limits, cluster, open: Vec::new() }
    }

    /// Adds item `idx`'s request: kept in its replica set's batch (full batches go to
    /// `ready`), or, when it cannot be grouped, straight to `ready`.
    pub fn add(&mut self, py: Python<'_>, idx: usize, req: Request, opts: &Options, ready: &mut VecDeque<(Items, Request)>) -> PyResult<()> {
        let RequestKind::Prepared(stmt, values) = req.kind else {
            ready.push_back((Items::One(idx), req));
            return Ok(());
        };
        let Some((token, replicas)) = self.replicas_of(&stmt, &values) else {
            ready.push_back((Items::One(idx), Request { kind: RequestKind::Prepared(stmt, values), ..req }));
            return Ok(());
        };
        let bytes = server_bytes(&values, stmt.get_variable_col_specs().as_slice());
        let at = match self.open.iter().position(|o| o.replicas == replicas) {
            Some(at) => {
                let o = &self.open[at];
                if o.tokens.contains(&token) || o.indices.len() >= self.limits.max_rows || o.bytes + bytes > self.limits.max_bytes {
                    let full = self.open.swap_remove(at);
                    ready.push_back(close(py, full, opts)?);
                    self.open.push(Open { replicas, stmt, indices: Vec::new(), values: Vec::new(), tokens: Vec::new(), bytes: 0 });
                    self.open.len() - 1
                } else {
                    at
                }
            }
            None => {
                self.open.push(Open { replicas, stmt, indices: Vec::new(), values: Vec::new(), tokens: Vec::new(), bytes: 0 });
                self.open.len() - 1
            }
        };
        let o = &mut self.open[at];
        o.indices.push(idx);
        o.values.push(values);
        o.tokens.push(token);
        o.bytes += bytes;
        Ok(())
    }

    /// Every open batch to `ready`, oldest first.
    pub fn flush(self, py: Python<'_>, opts: &Options, ready: &mut VecDeque<(Items, Request)>) -> PyResult<()> {
        let mut open = self.open;
        open.sort_by_key(|o| o.indices[0]);
        for o in open {
            ready.push_back(close(py, o, opts)?);
        }
        Ok(())
    }

    /// The row's token and its replicas' host ids (sorted: the set, not the order).
    fn replicas_of(&self, stmt: &PreparedStatement, values: &BoundValues) -> Option<(i64, Vec<Uuid>)> {
        let token = stmt.calculate_token(values).ok()??;
        let (ks, table) = (stmt.get_keyspace_name()?, stmt.get_table_name()?);
        let mut replicas: Vec<Uuid> = self.cluster.get_token_endpoints(ks, table, token).iter().map(|(n, _)| n.host_id).collect();
        if replicas.is_empty() {
            return None;
        }
        replicas.sort_unstable();
        Some((token.value(), replicas))
    }
}

/// About what the server counts for a row in a batch's size (Cassandra's mutation
/// `dataSize`): the values, and 16 bytes per cell (its timestamp, TTL and deletion time),
/// where a non-frozen collection has a cell per element (the count its value starts with)
/// and a non-frozen UDT a cell per field.
fn server_bytes(values: &BoundValues, specs: &[ColumnSpec<'_>]) -> usize {
    const CELL: usize = 16;
    let buf = &values.buf;
    let (mut pos, mut total) = (0usize, 0usize);
    for spec in specs.iter().take(values.count) {
        let len = i32::from_be_bytes(buf[pos..pos + 4].try_into().expect("4 bytes"));
        pos += 4;
        let Ok(n) = usize::try_from(len) else {
            total += CELL; // null (a tombstone) or unset
            continue;
        };
        let cells = match spec.typ() {
            ColumnType::Collection { frozen: false, .. } if n >= 4 => i32::from_be_bytes(buf[pos..pos + 4].try_into().expect("4 bytes")).max(1) as usize,
            ColumnType::UserDefinedType { frozen: false, definition } => definition.field_types.len().max(1),
            _ => 1,
        };
        total += n + CELL * cells;
        pos += n;
    }
    total
}

/// The request of an open batch: the statement alone for one row, else an UNLOGGED batch
/// with the run's options (one write timestamp for its rows).
fn close(py: Python<'_>, o: Open, opts: &Options) -> PyResult<(Items, Request)> {
    let Open { stmt, mut indices, mut values, .. } = o;
    if indices.len() == 1 {
        let kind = RequestKind::Prepared(stmt, values.pop().expect("a row per index"));
        return Ok((Items::One(indices.pop().expect("one index")), Request::new(kind, opts)));
    }
    let mut batch = Batch::new(BatchType::Unlogged);
    for _ in 0..indices.len() {
        batch.append_statement(BatchStatement::PreparedStatement(stmt.clone()));
    }
    apply_options!(py, batch, opts);
    // The rows' profile, or the plan a user's policy gave (`Request::route`).
    batch.set_execution_profile_handle(stmt.get_execution_profile_handle().cloned());
    Ok((Items::Group(indices.into_boxed_slice()), Request::new(RequestKind::Batch(batch, values), opts)))
}

/// The rows of a replica batch `req` (for `items`) as requests of their own, when the
/// server refused it as invalid (`e`); None otherwise. Each row keeps the batch's options
/// and write timestamp.
pub fn split(items: &Items, req: Request, e: &RunError) -> Option<Vec<(Items, Request)>> {
    let (Items::Group(ix), RequestKind::Batch(batch, values)) = (items, req.kind) else {
        return None;
    };
    if !e.refused_as_invalid() {
        return None;
    }
    let (timestamp, profile) = (batch.get_timestamp(), batch.get_execution_profile_handle().cloned());
    let rows = batch.statements.into_iter().zip(values).zip(ix.iter());
    let mut out = Vec::with_capacity(ix.len());
    for ((stmt, values), &idx) in rows {
        let BatchStatement::PreparedStatement(mut stmt) = stmt else {
            return None;
        };
        stmt.set_timestamp(timestamp);
        stmt.set_execution_profile_handle(profile.clone());
        out.push((
            Items::One(idx),
            Request {
                kind: RequestKind::Prepared(stmt, values),
                paged: false,
                timeout: req.timeout,
                shape: req.shape,
                metrics: req.metrics.clone(),
                tracing: None,
            },
        ));
    }
    Some(out)
}
