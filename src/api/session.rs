//! Session: a connected scylla `Session` (`turbocql.cluster.Session._session`):
//! connecting, preparing, switching keyspace, shutting down.
//!
//! Requests are built by the session's [`super::builder::RequestBuilder`], which holds
//! its defaults; this object only owns the connections.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use crate::sync::{Mutex, RwLock};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use scylla::client::session::Session as ScyllaSession;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::Compression;
use scylla::client::PoolSize;
use scylla::client::SelfIdentity;
use scylla::errors::ExecutionError;
use scylla::statement::Consistency;

use scylla::cluster::ClusterState;
use scylla::routing::Token;

use super::auth::PyAuthProvider;
use super::frame_limit::{self, FrameLimitHold};
use super::hosts::{PyHostListener, Reconnection};
use super::tls::{tls_context, TlsRequest, Verifier};
use crate::errors;
use crate::exec::health;
use crate::exec::inflight::{self, InFlight};
use crate::exec::options::duration;
use crate::exec::prepared::Prepared;
use crate::exec::profile;
use crate::exec::routing::host_object;
use crate::exec::run::timed;
use crate::pyrefs;
use crate::pyrefs::Exc;
use crate::runtime;

/// A connected session.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Session {
    inner: RwLock<Option<Arc<ScyllaSession>>>,
    hosts: Arc<str>,
    /// The cluster state `cluster_state_changed` saw last.
    seen_state: Mutex<Option<Arc<ClusterState>>>,
    /// The cap on requests started without waiting (`max_requests_in_flight`).
    in_flight: Arc<InFlight>,
    /// `runtime::generation()` at connect: used in a forked child, the session says so.
    generation: u64,
    /// How its TLS connections verify certificates (none for clear text).
    tls_verifier: Option<Verifier>,
    /// Its hold on the process's frame limit (`max_frame_length`), released at shutdown.
    frame_limit: Mutex<FrameLimitHold>,
}

impl Session {
    /// The contact points as `host:port` text (named in errors).
    pub(crate) fn hosts_arc(&self) -> Arc<str> {
        self.hosts.clone()
    }

    pub(crate) fn in_flight(&self) -> Arc<InFlight> {
        self.in_flight.clone()
    }

    /// The scylla session; `DriverException` once shut down, or in a forked child.
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<Arc<ScyllaSession>> {
        if self.generation != runtime::generation() {
            return Err(errors::make(py, Exc::DriverException, (format!("This session was {}", runtime::FORKED),), None));
        }
        self.inner.read().clone().ok_or_else(|| errors::make(py, Exc::DriverException, ("This session has been shut down",), None))
    }

    /// Runs `fut` with the GIL released, under the client-side timeout if any.
    fn wait<T: Send>(
        &self,
        py: Python<'_>,
        timeout: Option<Duration>,
        fut: impl std::future::Future<Output = Result<T, ExecutionError>> + Send,
    ) -> PyResult<T> {
        let res = py.detach(|| runtime::block_on(timed(timeout, fut)));
        res.map_err(|e| errors::execution_error(py, &e, &self.hosts))
    }
}

#[pymethods]
impl Session {
    /// Prepares `query` on the cluster.
    #[pyo3(signature = (query, timeout=None))]
    fn prepare(&self, py: Python<'_>, query: String, timeout: Option<f64>) -> PyResult<Prepared> {
        let session = self.get(py)?;
        let timeout = timeout.map(|t| duration(t, "timeout")).transpose()?;
        let fut = async move { session.prepare(query).await.map_err(ExecutionError::PrepareError) };
        let stmt = self.wait(py, timeout, fut)?;
        Ok(Prepared { stmt })
    }

    /// Switches every connection of the session to `keyspace` (case-sensitive).
    #[pyo3(signature = (keyspace, timeout=None))]
    fn set_keyspace(&self, py: Python<'_>, keyspace: String, timeout: Option<f64>) -> PyResult<()> {
        let session = self.get(py)?;
        let timeout = timeout.map(|t| duration(t, "timeout")).transpose()?;
        let fut = async move { session.use_keyspace(keyspace, true).await.map_err(ExecutionError::UseKeyspaceError) };
        self.wait(py, timeout, fut)
    }

    /// The session's current keyspace, if any.
    #[getter]
    fn keyspace(&self) -> Option<String> {
        self.inner.read().as_ref().and_then(|s| s.get_keyspace()).map(|k| k.to_string())
    }

    /// The contact points, as `host:port` text.
    #[getter]
    fn hosts(&self) -> &str {
        &self.hosts
    }

    /// `"python-openssl"` or `"rustls"`: how this session's TLS connections verify
    /// certificates (`None` over clear text).
    #[getter]
    fn tls_verifier(&self) -> Option<&'static str> {
        self.tls_verifier.map(Verifier::name)
    }

    /// The cluster's nodes as the engine knows them now, as `turbocql.pool.Host` objects.
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let state = self.get(py)?.get_cluster_state();
        let refs = pyrefs::get(py)?;
        state.get_nodes_info().iter().map(|n| host_object(py, refs, n)).collect()
    }

    /// True if the engine's view of the cluster (nodes, schema, tokens) was replaced since
    /// the last call (a schema change event, this client's own DDL, a topology change);
    /// True at the first call. The view last seen is kept, so that a new one is never
    /// taken for it (it cannot be freed and its address reused meanwhile).
    fn cluster_state_changed(&self, py: Python<'_>) -> PyResult<bool> {
        let now = self.get(py)?.get_cluster_state();
        let mut seen = self.seen_state.lock();
        let changed = !seen.as_ref().is_some_and(|s| Arc::ptr_eq(s, &now));
        *seen = Some(now);
        Ok(changed)
    }

    /// The token ring: `(token, Host)` pairs in token order (Murmur3 tokens).
    fn token_ring<'py>(&self, py: Python<'py>) -> PyResult<Vec<(i64, Bound<'py, PyAny>)>> {
        let state = self.get(py)?.get_cluster_state();
        let refs = pyrefs::get(py)?;
        state.replica_locator().ring().iter().map(|(token, node)| Ok((token.value(), host_object(py, refs, node)?))).collect()
    }

    /// The replicas of `token` in `keyspace` (its replication strategy applied), as
    /// `Host` objects, primary replica first.
    fn replicas<'py>(&self, py: Python<'py>, keyspace: &str, token: i64) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let state = self.get(py)?.get_cluster_state();
        let refs = pyrefs::get(py)?;
        state.get_token_endpoints(keyspace, "", Token::new(token)).iter().map(|(n, _)| host_object(py, refs, n)).collect()
    }

    /// Waits (GIL released) until every node reports the same schema version, or
    /// `timeout` seconds; returns the version as text, None if they did not agree.
    fn await_schema_agreement(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<String>> {
        let session = self.get(py)?;
        let timeout = duration(timeout, "schema agreement timeout")?;
        let res = py.detach(|| runtime::block_on(async move { tokio::time::timeout(timeout, session.await_schema_agreement()).await }));
        match res {
            Err(_) => Ok(None),
            Ok(Ok(v)) => Ok(Some(v.to_string())),
            Ok(Err(e)) => Err(errors::make(py, Exc::DriverException, (format!("schema agreement check failed: {e}"),), None)),
        }
    }

    #[getter]
    fn is_shutdown(&self) -> bool {
        self.inner.read().is_none()
    }

    /// Closes every connection; later requests raise.
    fn shutdown(&self, py: Python<'_>) {
        let taken = self.inner.write().take();
        self.frame_limit.lock().release();
        // The last cluster state seen holds the nodes, hence their connection pools: kept,
        // it would keep every pool connection open after shutdown (the control connection
        // alone closing) for as long as this Python object lives.
        let seen = self.seen_state.lock().take();
        if let Some(s) = taken {
            if self.generation != runtime::generation() {
                // A parent's session in a forked child: its tasks and connections belong to
                // a runtime the child does not have; it is left alone, not torn down.
                std::mem::forget(s);
                std::mem::forget(seen);
                return;
            }
            health::unregister_session(&s);
            // Dropping the session closes its connections; do it where tokio can run.
            py.detach(|| {
                runtime::block_on(async move {
                    drop(seen);
                    drop(s)
                })
            });
        }
    }
}

impl Drop for Session {
    /// A parent's session dropped in a forked child (collected, or at interpreter exit)
    /// without `shutdown`: as there, its scylla session is left alone (`runtime::ProcessBound`
    /// says why), not dropped.
    fn drop(&mut self) {
        if self.generation != runtime::generation() {
            std::mem::forget(self.inner.get_mut().take());
            std::mem::forget(self.seen_state.get_mut().take());
        }
    }
}

fn node_addr(host: &str, port: u16) -> String {
    match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port).to_string(),
        Err(_) if host.contains(':') => host.to_string(),
        Err(_) => format!("{host}:{port}"),
    }
}

/// The Murmur3 token of a routing key (a serialized partition key), as Cassandra's
/// `Murmur3Partitioner` computes it.
#[pyfunction]
pub fn murmur3(key: &[u8]) -> i64 {
    use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
    Murmur3Partitioner.hash_one(key).value()
}

/// The connection pool of every node: `connections_per_host` connections to each node, or
/// `connections_per_shard` to each shard of a ScyllaDB node (a node that reports no shards,
/// Cassandra, counts as one shard); neither given: the crate's default, one per shard.
fn pool_size(per_host: Option<usize>, per_shard: Option<usize>) -> PyResult<PoolSize> {
    let positive = |n: usize, name: &str| NonZeroUsize::new(n).ok_or_else(|| PyValueError::new_err(format!("{name} must be at least 1")));
    match (per_host, per_shard) {
        (Some(_), Some(_)) => Err(PyValueError::new_err("give connections_per_host or connections_per_shard, not both")),
        (Some(n), None) => Ok(PoolSize::PerHost(positive(n, "connections_per_host")?)),
        (None, Some(n)) => Ok(PoolSize::PerShard(positive(n, "connections_per_shard")?)),
        (None, None) => Ok(PoolSize::default()),
    }
}

/// Connects to the cluster and returns a `Session`.
///
/// Raises `NoHostAvailable` if no contact point answers within `connect_timeout`,
/// `InvalidRequest` for an unknown `keyspace`.
#[pyfunction]
#[pyo3(signature = (contact_points, port=9042, username=None, password=None, keyspace=None, compression=None, connect_timeout=5.0, tcp_nodelay=true, reconnection=None, on_host_event=None, *, auth_provider=None, ssl_context=None, server_hostname=None, client_certfile=None, client_keyfile=None, application_name=None, application_version=None, client_id=None, heartbeat_interval=Some(30.0), heartbeat_timeout=Some(30.0), unresponsive_node_threshold=Some(2.0), max_requests_in_flight=inflight::DEFAULT_MAX, connections_per_host=None, connections_per_shard=None, max_schema_agreement_wait=10.0, control_connection_timeout=Some(2.0), max_frame_length=frame_limit::DEFAULT_MAX_FRAME_LENGTH))]
#[allow(clippy::too_many_arguments)]
pub fn connect(
    py: Python<'_>,
    contact_points: Vec<String>,
    port: u16,
    username: Option<String>,
    password: Option<String>,
    keyspace: Option<String>,
    compression: Option<&str>,
    connect_timeout: f64,
    tcp_nodelay: bool,
    reconnection: Option<PyRef<'_, Reconnection>>,
    on_host_event: Option<Py<PyAny>>,
    auth_provider: Option<Py<PyAny>>,
    ssl_context: Option<Bound<'_, PyAny>>,
    server_hostname: Option<String>,
    client_certfile: Option<String>,
    client_keyfile: Option<String>,
    application_name: Option<String>,
    application_version: Option<String>,
    client_id: Option<String>,
    heartbeat_interval: Option<f64>,
    heartbeat_timeout: Option<f64>,
    unresponsive_node_threshold: Option<f64>,
    max_requests_in_flight: usize,
    connections_per_host: Option<usize>,
    connections_per_shard: Option<usize>,
    max_schema_agreement_wait: f64,
    control_connection_timeout: Option<f64>,
    max_frame_length: usize,
) -> PyResult<Session> {
    if max_requests_in_flight == 0 {
        return Err(PyValueError::new_err("max_requests_in_flight must be at least 1"));
    }
    let pool_size = pool_size(connections_per_host, connections_per_shard)?;
    // Held before the first connection reads a frame, released if the connect fails.
    let frame_limit = frame_limit::hold(max_frame_length)?;
    if contact_points.is_empty() {
        return Err(PyValueError::new_err("contact_points must name at least one host"));
    }
    let connect_timeout = duration(connect_timeout, "connect_timeout")?;
    // The classic idle heartbeat: an OPTIONS on each connection every interval (0 or None:
    // none), the connection closed when one is not answered within the timeout.
    let heartbeat_interval = heartbeat_interval.filter(|s| *s != 0.0).map(|s| duration(s, "idle_heartbeat_interval")).transpose()?;
    let heartbeat_timeout = heartbeat_timeout.map(|s| duration(s, "idle_heartbeat_timeout")).transpose()?;
    let unresponsive_after = unresponsive_node_threshold.map(|s| duration(s, "unresponsive_node_threshold")).transpose()?;
    let nodes: Vec<String> = contact_points.iter().map(|h| node_addr(h, port)).collect();
    let hosts = nodes.join(", ");
    let profile = profile::engine_defaults().consistency(Consistency::LocalOne).build().into_handle();
    let mut builder = SessionBuilder::new()
        .known_nodes(&nodes)
        .connection_timeout(connect_timeout)
        .tcp_nodelay(tcp_nodelay)
        .default_execution_profile_handle(profile)
        .pool_size(pool_size)
        // Keyspaces and their replication only (routing needs no more): `cluster.metadata`
        // reads the schema tables itself, and the crate's parse of every column type fails
        // the whole fetch on a type it does not know (a UDT named with quotes, say).
        .fetch_full_schema_metadata(false)
        .compression(match compression {
            None => None,
            Some("lz4") => Some(Compression::Lz4),
            Some("snappy") => Some(Compression::Snappy),
            Some(other) => return Err(PyValueError::new_err(format!("unknown compression {other:?}: use 'lz4', 'snappy' or None"))),
        });
    // The classic `control_connection_timeout` bounds each read of the system tables (None:
    // the crate's own bound, 31 s, rather than none: a node that stops answering must not
    // hold the metadata forever).
    if let Some(t) = control_connection_timeout {
        builder = builder.metadata_request_clientside_timeout(duration(t, "control_connection_timeout")?);
    }
    // After a schema change the crate waits for the nodes to agree on the schema before the
    // request completes; the classic `max_schema_agreement_wait` bounds that wait, 0 (or
    // less): none. A wait that ends without agreement is not an error (`exec::run::Response`).
    builder = if max_schema_agreement_wait > 0.0 {
        builder.schema_agreement_timeout(duration(max_schema_agreement_wait, "max_schema_agreement_wait")?)
    } else {
        builder.auto_await_schema_agreement(false)
    };
    if let Some(u) = username {
        builder = builder.user(u, password.unwrap_or_default());
    }
    if let Some(provider) = auth_provider {
        builder = builder.authenticator_provider(Arc::new(PyAuthProvider { provider: Arc::new(provider) }));
    }
    let mut tls_failure = None;
    let mut tls_verifier = None;
    if let Some(context) = ssl_context {
        let tls = tls_context(py, &TlsRequest { context, server_hostname, certfile: client_certfile, keyfile: client_keyfile })?;
        tls_failure = Some(tls.failure);
        tls_verifier = Some(tls.verifier);
        builder = builder.tls_context(Some(tls.context));
    }
    let mut identity = SelfIdentity::new().with_custom_driver_name("turbocql").with_custom_driver_version(env!("CARGO_PKG_VERSION"));
    if let Some(name) = application_name {
        identity = identity.with_application_name(name);
    }
    if let Some(version) = application_version {
        identity = identity.with_application_version(version);
    }
    if let Some(id) = client_id {
        identity = identity.with_client_id(id);
    }
    builder = builder.custom_identity(identity);
    builder.config.keepalive_interval = heartbeat_interval;
    builder.config.keepalive_timeout = heartbeat_timeout;
    if let Some(r) = reconnection {
        builder.config.reconnect_policy = r.build();
    }
    if let Some(callback) = on_host_event {
        builder.config.host_listener = Some(Arc::new(PyHostListener::new(callback)));
    }
    super::pool_log::install();
    if let Some(ks) = keyspace {
        builder = builder.use_keyspace(ks, true);
    }
    // The whole handshake (TCP, STARTUP, auth, metadata) is bounded by the connect timeout.
    let overall = connect_timeout + Duration::from_millis(500);
    let res = py.detach(|| runtime::block_on(async move { tokio::time::timeout(overall, builder.build()).await }));
    match res {
        Err(_) => Err(errors::no_host(
            py,
            &format!("Unable to connect to any servers within {:.3} s (connect_timeout)", connect_timeout.as_secs_f64()),
            &hosts,
            "connect timeout",
        )),
        Ok(Err(e)) => {
            let failure = tls_failure.and_then(|f| f.lock().take());
            Err(errors::new_session_error(py, &e, &hosts, failure))
        }
        Ok(Ok(s)) => {
            let s = Arc::new(s);
            health::register_session(&s, unresponsive_after);
            Ok(Session {
                inner: RwLock::new(Some(s)),
                hosts: Arc::from(hosts.as_str()),
                seen_state: Mutex::new(None),
                generation: runtime::generation(),
                in_flight: InFlight::new(max_requests_in_flight),
                tls_verifier,
                frame_limit: Mutex::new(frame_limit),
            })
        }
    }
}
