//! Routing: the classic load-balancing policies (`turbocql.policies`) as the scylla crate's.
//!
//! [`LoadBalancing`] is what a classic policy object describes (its `_engine_policy()`):
//! round-robin, DC-aware, rack-aware, token-aware over one of them, and host filters (a
//! white list, a user's predicate) over any of them. [`LoadBalancing::build`] turns it into
//! one crate policy, once per execution profile: the crate's `DefaultPolicy` does the
//! ordering (local DC and rack first, replicas first when token-aware, down nodes left
//! out), and [`Filtered`] wraps it where the classic policy leaves hosts out that the
//! crate's would use (filters, `used_hosts_per_remote_dc`). No Python code runs per
//! request: a predicate is called once per host, when the engine first sees that host
//! (or sees it at a new address).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use crate::sync::RwLock;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use scylla::client::execution_profile::{ExecutionProfile, ExecutionProfileHandle};
use scylla::client::session::Session as ScyllaSession;
use scylla::cluster::{ClusterState, Node, NodeRef};
use scylla::policies::load_balancing::{DefaultPolicy, FallbackPlan, LoadBalancingPolicy, RoutingInfo};
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use scylla::routing::Shard;
use uuid::Uuid;

use super::health::Watched;
use crate::pyrefs;
use crate::runtime;

/// Which hosts a filter keeps.
#[derive(Debug)]
enum HostFilter {
    /// `WhiteListRoundRobinPolicy(hosts)`: these addresses only.
    Allow(Vec<IpAddr>),
    /// `HostFilterPolicy(child, predicate)`: hosts for which `predicate(host)` is truthy.
    Predicate(Py<PyAny>),
}

/// A classic load-balancing policy, as the engine runs it.
#[derive(Debug)]
enum Spec {
    RoundRobin,
    /// `local_dc` None: every DC is local (the classic driver infers it from the contact
    /// points before the policy is handed over, see `turbocql.policies`).
    DcAware {
        local_dc: Option<String>,
        local_rack: Option<String>,
        remote_hosts: u32,
    },
    TokenAware {
        child: Arc<Spec>,
        shuffle: bool,
    },
    Filter {
        child: Arc<Spec>,
        filter: Arc<HostFilter>,
    },
    /// A user's policy with its own `make_query_plan`: called per request (see [`plan_of`]).
    Custom(Arc<Py<PyAny>>),
}

/// A load-balancing policy for the engine (see the module doc). Made by the classic
/// policies' `_engine_policy()`.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct LoadBalancing {
    spec: Arc<Spec>,
}

#[pymethods]
impl LoadBalancing {
    /// `RoundRobinPolicy()`: every host in turn.
    #[staticmethod]
    fn round_robin() -> Self {
        LoadBalancing { spec: Arc::new(Spec::RoundRobin) }
    }

    /// `DCAwareRoundRobinPolicy(local_dc, used_hosts_per_remote_dc)` (with `local_rack`:
    /// `RackAwareRoundRobinPolicy`).
    #[staticmethod]
    #[pyo3(signature = (local_dc, used_hosts_per_remote_dc=0, local_rack=None))]
    fn dc_aware(local_dc: Option<String>, used_hosts_per_remote_dc: u32, local_rack: Option<String>) -> PyResult<Self> {
        let local_dc = local_dc.filter(|dc| !dc.is_empty());
        if local_rack.is_some() && local_dc.is_none() {
            return Err(PyValueError::new_err("a local_rack needs a local_dc"));
        }
        Ok(LoadBalancing { spec: Arc::new(Spec::DcAware { local_dc, local_rack, remote_hosts: used_hosts_per_remote_dc }) })
    }

    /// `TokenAwarePolicy(child, shuffle_replicas)`.
    #[staticmethod]
    fn token_aware(child: &LoadBalancing, shuffle_replicas: bool) -> Self {
        LoadBalancing { spec: Arc::new(Spec::TokenAware { child: child.spec.clone(), shuffle: shuffle_replicas }) }
    }

    /// `WhiteListRoundRobinPolicy(hosts)`: `child` over these addresses only.
    #[staticmethod]
    fn allow_list(child: &LoadBalancing, addresses: Vec<String>) -> PyResult<Self> {
        let ips = addresses
            .iter()
            .map(|a| a.parse::<IpAddr>().map_err(|_| PyValueError::new_err(format!("not an IP address: {a:?}"))))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(LoadBalancing { spec: Arc::new(Spec::Filter { child: child.spec.clone(), filter: Arc::new(HostFilter::Allow(ips)) }) })
    }

    /// `HostFilterPolicy(child, predicate)`: `predicate(host)` is called with a
    /// `turbocql.pool.Host` once per host (again if its address changes).
    #[staticmethod]
    fn host_filter(child: &LoadBalancing, predicate: Py<PyAny>) -> Self {
        LoadBalancing { spec: Arc::new(Spec::Filter { child: child.spec.clone(), filter: Arc::new(HostFilter::Predicate(predicate)) }) }
    }

    /// A user's policy whose `make_query_plan(working_keyspace, query)` is called for each
    /// request, when the request is built (GIL held), its hosts tried in order.
    #[staticmethod]
    fn custom(policy: Py<PyAny>) -> Self {
        LoadBalancing { spec: Arc::new(Spec::Custom(Arc::new(policy))) }
    }

    /// True for a user's policy (its plan asked per request).
    #[getter]
    fn is_custom(&self) -> bool {
        matches!(self.spec.as_ref(), Spec::Custom(_))
    }

    fn __repr__(&self) -> String {
        format!("LoadBalancing({:?})", self.spec)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        self.spec.traverse(&visit)
    }
}

impl Spec {
    fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        match self {
            Spec::RoundRobin | Spec::DcAware { .. } => Ok(()),
            Spec::Custom(p) => visit.call(p.as_ref()),
            Spec::TokenAware { child, .. } => child.traverse(visit),
            Spec::Filter { child, filter } => {
                if let HostFilter::Predicate(p) = filter.as_ref() {
                    visit.call(p)?;
                }
                child.traverse(visit)
            }
        }
    }
}

/// The crate policy's settings, gathered from a [`Spec`] tree.
#[derive(Default)]
struct Plan {
    local_dc: Option<String>,
    local_rack: Option<String>,
    remote_hosts: u32,
    token_aware: bool,
    shuffle: bool,
    filters: Vec<Arc<HostFilter>>,
}

impl Plan {
    fn gather(&mut self, spec: &Spec) {
        match spec {
            Spec::RoundRobin => {}
            Spec::DcAware { local_dc, local_rack, remote_hosts } => {
                self.local_dc = local_dc.clone();
                self.local_rack = local_rack.clone();
                self.remote_hosts = *remote_hosts;
            }
            Spec::TokenAware { child, shuffle } => {
                self.token_aware = true;
                self.shuffle = *shuffle;
                self.gather(child);
            }
            Spec::Filter { child, filter } => {
                self.filters.push(filter.clone());
                self.gather(child);
            }
            // Never nested (the Python wrappers of a user's policy become custom themselves).
            Spec::Custom(_) => {}
        }
    }
}

/// What a request's plan needs beyond its profile's crate policy; decided once per profile.
#[derive(Clone, Default)]
pub enum PlanSource {
    /// The profile's crate policy alone.
    #[default]
    Policy,
    /// A user's policy whose `make_query_plan` each request asks (see [`plan_of`]).
    Custom(Arc<Py<PyAny>>),
    /// A token-aware policy: a simple statement (or batch) given a `routing_key` goes to
    /// that key's replicas first (see [`KeyRouting`]); the crate computes the token of a
    /// prepared statement itself.
    KeyRouted(Arc<KeyRouting>),
}

/// A crate policy built from a classic one, and what its requests' plans need besides.
pub struct Built {
    pub policy: Arc<dyn LoadBalancingPolicy>,
    pub plan: PlanSource,
}

impl LoadBalancing {
    /// The crate policy that routes as this classic policy does (with unresponsive nodes
    /// given last: `super::health`), or the user's policy each request asks.
    pub fn build(&self) -> Built {
        if let Spec::Custom(p) = self.spec.as_ref() {
            return Built { policy: default_policy(), plan: PlanSource::Custom(p.clone()) };
        }
        let mut plan = Plan::default();
        plan.gather(&self.spec);
        let mut builder = DefaultPolicy::builder().token_aware(plan.token_aware).enable_shuffling_replicas(plan.shuffle);
        builder = match (&plan.local_dc, &plan.local_rack) {
            (Some(dc), Some(rack)) => builder.prefer_datacenter_and_rack(dc.clone(), rack.clone()),
            (Some(dc), None) => builder.prefer_datacenter(dc.clone()),
            (None, _) => builder.prefer_no_datacenter(),
        };
        builder = builder.permit_dc_failover(plan.local_dc.is_some() && plan.remote_hosts > 0);
        let inner = builder.build();
        // The crate's DC failover uses every remote host; the classic policy only the first
        // `used_hosts_per_remote_dc` of each remote DC.
        let remote_limit = plan.local_dc.clone().filter(|_| plan.remote_hosts > 0).map(|dc| (dc, plan.remote_hosts as usize));
        let unwatched: Arc<dyn LoadBalancingPolicy> = if plan.filters.is_empty() && remote_limit.is_none() {
            inner
        } else {
            Arc::new(Filtered { inner, filters: plan.filters, remote_limit, decisions: RwLock::new(Decisions::default()) })
        };
        let keyed = plan.token_aware.then(|| {
            PlanSource::KeyRouted(Arc::new(KeyRouting {
                unwatched: unwatched.clone(),
                local_dc: plan.local_dc,
                local_rack: plan.local_rack,
                shuffle: plan.shuffle,
            }))
        });
        Built { policy: Watched::wrap(unwatched), plan: keyed.unwrap_or_default() }
    }

    /// The engine's default: token-aware over every host, replicas shuffled.
    pub fn build_default() -> Built {
        let unwatched: Arc<dyn LoadBalancingPolicy> = DefaultPolicy::builder().build();
        let keyed = KeyRouting { unwatched: unwatched.clone(), local_dc: None, local_rack: None, shuffle: true };
        Built { policy: Watched::wrap(unwatched), plan: PlanSource::KeyRouted(Arc::new(keyed)) }
    }
}

fn default_policy() -> Arc<dyn LoadBalancingPolicy> {
    LoadBalancing::build_default().policy
}

/// A token-aware policy's routing of a statement the crate computes no token for: a
/// simple statement, or a batch of them, given a `routing_key`. As the classic
/// `TokenAwarePolicy` does, the Murmur3 token of the key picks the replicas in the
/// statement's keyspace (else the session's); those the child policy counts as local
/// (its DC, its rack first) come first, shuffled or in ring order, then the child's plan
/// without them. Each such request carries a crate profile of its own ([`Self::handle_for`]).
pub struct KeyRouting {
    /// The profile's crate policy without the health wrapper, which goes around the whole.
    unwatched: Arc<dyn LoadBalancingPolicy>,
    local_dc: Option<String>,
    local_rack: Option<String>,
    shuffle: bool,
}

impl KeyRouting {
    /// The crate profile routing `query` by its routing key, from `profile` (None: the
    /// session's default); None when the statement has no routing key or keyspace, or
    /// the engine knows no replicas for it.
    pub fn handle_for(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        session: &ScyllaSession,
        profile: Option<&ExecutionProfileHandle>,
    ) -> PyResult<Option<ExecutionProfileHandle>> {
        if query.is_instance_of::<PyString>() {
            return Ok(None);
        }
        let Some(key) = query.getattr_opt(pyo3::intern!(py, "routing_key"))?.filter(|k| !k.is_none()) else {
            return Ok(None);
        };
        let Ok(key) = key.cast::<PyBytes>() else {
            return Ok(None);
        };
        let named = |attr: &Bound<'_, PyString>| -> PyResult<Option<String>> {
            query.getattr_opt(attr)?.filter(|v| !v.is_none()).map(|v| v.extract::<String>()).transpose()
        };
        let keyspace = match named(pyo3::intern!(py, "keyspace"))? {
            Some(k) => k,
            None => match session.get_keyspace() {
                Some(k) => k.to_string(),
                None => return Ok(None),
            },
        };
        let table = named(pyo3::intern!(py, "table"))?.unwrap_or_default();
        let token = Murmur3Partitioner.hash_one(key.as_bytes());
        let state = session.get_cluster_state();
        let mut replicas: Vec<(Uuid, Shard, u8)> = state
            .get_token_endpoints(&keyspace, &table, token)
            .iter()
            .filter_map(|(node, shard)| self.nearness(node).map(|near| (node.host_id, *shard, near)))
            .collect();
        if replicas.is_empty() {
            return Ok(None);
        }
        if self.shuffle {
            shuffle(&mut replicas);
        }
        // Stable: the local rack's replicas first, each group in the order above.
        replicas.sort_by_key(|r| r.2);
        let routed = ReplicasFirst { inner: self.unwatched.clone(), replicas: replicas.into_iter().map(|(id, shard, _)| (id, shard)).collect() };
        let builder = match profile {
            Some(p) => p.pointee_to_builder(),
            None => ExecutionProfile::builder().request_timeout(None),
        };
        Ok(Some(builder.load_balancing_policy(Watched::wrap(Arc::new(routed))).build().into_handle()))
    }

    /// 0 for a node in the local rack, 1 elsewhere in the local DC (every DC is local
    /// without a local DC); None for a remote node.
    fn nearness(&self, node: &Node) -> Option<u8> {
        match &self.local_dc {
            None => Some(1),
            Some(dc) if node.datacenter.as_deref() != Some(dc.as_str()) => None,
            Some(_) => Some(if self.local_rack.is_some() && node.rack == self.local_rack { 0 } else { 1 }),
        }
    }
}

/// Fisher-Yates, seeded from the standard library's per-process random hasher keys.
fn shuffle<T>(items: &mut [T]) {
    use std::hash::{BuildHasher, Hasher};
    let mut seed = std::collections::hash_map::RandomState::new().build_hasher();
    for i in (1..items.len()).rev() {
        seed.write_usize(i);
        let j = (seed.finish() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// One request's plan under [`KeyRouting`]: the replicas the inner policy would use, in
/// the order given, then the rest of the inner policy's plan.
#[derive(Debug)]
struct ReplicasFirst {
    inner: Arc<dyn LoadBalancingPolicy>,
    replicas: Vec<(Uuid, Shard)>,
}

impl LoadBalancingPolicy for ReplicasFirst {
    fn pick<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> Option<(NodeRef<'a>, Option<Shard>)> {
        self.fallback(request, cluster).next()
    }

    fn fallback<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> FallbackPlan<'a> {
        let plan: Vec<(NodeRef<'a>, Option<Shard>)> = self.inner.fallback(request, cluster).collect();
        let first: Vec<(NodeRef<'a>, Option<Shard>)> =
            self.replicas.iter().filter_map(|(id, shard)| plan.iter().find(|(n, _)| n.host_id == *id).map(|(n, _)| (*n, Some(*shard)))).collect();
        let rest = plan.into_iter().filter(move |(n, _)| !self.replicas.iter().any(|(id, _)| *id == n.host_id));
        Box::new(first.into_iter().chain(rest))
    }

    fn on_request_success(&self, request: &RoutingInfo, latency: std::time::Duration, node: NodeRef<'_>) {
        self.inner.on_request_success(request, latency, node)
    }

    fn on_request_failure(&self, request: &RoutingInfo, latency: std::time::Duration, node: NodeRef<'_>, error: &scylla::errors::RequestAttemptError) {
        self.inner.on_request_failure(request, latency, node, error)
    }

    fn name(&self) -> String {
        format!("ReplicasFirst({})", self.inner.name())
    }
}

/// Each host's verdict, kept so that a filter runs once per host and not per request.
#[derive(Default)]
struct Decisions {
    by_host: HashMap<(Uuid, SocketAddr), bool>,
    /// Remote hosts in use per remote DC (`used_hosts_per_remote_dc`), for the cluster
    /// state whose node list is at this address with this length.
    remote: Option<(usize, usize, Arc<Vec<Uuid>>)>,
}

/// A crate policy with hosts left out (see the module doc).
struct Filtered {
    inner: Arc<dyn LoadBalancingPolicy>,
    filters: Vec<Arc<HostFilter>>,
    /// (local DC, hosts per remote DC).
    remote_limit: Option<(String, usize)>,
    decisions: RwLock<Decisions>,
}

impl std::fmt::Debug for Filtered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filtered").field("inner", &self.inner).field("filters", &self.filters).field("remote_limit", &self.remote_limit).finish()
    }
}

impl Filtered {
    fn allows(&self, node: &Node, cluster: &ClusterState) -> bool {
        if let Some((local_dc, per_dc)) = &self.remote_limit {
            if node.datacenter.as_deref() != Some(local_dc.as_str()) && !self.remote_in_use(node, cluster, local_dc, *per_dc) {
                return false;
            }
        }
        if self.filters.is_empty() {
            return true;
        }
        let key = (node.host_id, SocketAddr::new(node.address.ip(), node.address.port()));
        if let Some(ok) = self.decisions.read().by_host.get(&key) {
            return *ok;
        }
        let ok = self.filters.iter().all(|f| filter_allows(f, node));
        self.decisions.write().by_host.insert(key, ok);
        ok
    }

    fn remote_in_use(&self, node: &Node, cluster: &ClusterState, local_dc: &str, per_dc: usize) -> bool {
        let nodes = cluster.get_nodes_info();
        let key = (nodes.as_ptr() as usize, nodes.len());
        if let Some((p, n, used)) = &self.decisions.read().remote {
            if (*p, *n) == key {
                return used.contains(&node.host_id);
            }
        }
        // The first `per_dc` hosts of each remote DC, in address order (stable across
        // refreshes of the cluster state).
        let mut by_dc: HashMap<&str, Vec<&Arc<Node>>> = HashMap::new();
        for n in nodes {
            let dc = n.datacenter.as_deref().unwrap_or("");
            if dc != local_dc {
                by_dc.entry(dc).or_default().push(n);
            }
        }
        let mut used = Vec::new();
        for hosts in by_dc.values_mut() {
            hosts.sort_by_key(|n| (n.address.ip(), n.address.port()));
            used.extend(hosts.iter().take(per_dc).map(|n| n.host_id));
        }
        let found = used.contains(&node.host_id);
        self.decisions.write().remote = Some((key.0, key.1, Arc::new(used)));
        found
    }
}

fn filter_allows(filter: &HostFilter, node: &Node) -> bool {
    match filter {
        HostFilter::Allow(ips) => ips.contains(&node.address.ip()),
        // Off the I/O thread: a slow predicate holds up only the request that met the host.
        HostFilter::Predicate(predicate) => runtime::off_io(|| {
            Python::try_attach(|py| {
                let verdict = pyrefs::get(py).and_then(|refs| {
                    let host = host_object(py, refs, node)?;
                    predicate.bind(py).call1((host,))?.is_truthy()
                });
                verdict.unwrap_or_else(|e| {
                    // As a classic policy raising in `distance`: the host is not used.
                    e.display(py);
                    false
                })
            })
        })
        // At interpreter exit (no Python any more): the host is not used.
        .unwrap_or(false),
    }
}

/// The `turbocql.pool.Host` of a node (one object per host, kept by `turbocql.pool`).
pub fn host_object<'py>(py: Python<'py>, refs: &pyrefs::PyRefs, node: &Node) -> PyResult<Bound<'py, PyAny>> {
    let addr = SocketAddr::new(node.address.ip(), node.address.port());
    refs.host_of.bind(py).call1((
        node.host_id.to_string(),
        addr.ip().to_string(),
        addr.port(),
        node.datacenter.as_deref(),
        node.rack.as_deref(),
        node.is_connected(),
    ))
}

impl LoadBalancingPolicy for Filtered {
    fn pick<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> Option<(NodeRef<'a>, Option<Shard>)> {
        // A host the filter leaves out: no pick, and the crate asks `fallback` for the plan.
        self.inner.pick(request, cluster).filter(|(node, _)| self.allows(node, cluster))
    }

    fn fallback<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> FallbackPlan<'a> {
        Box::new(self.inner.fallback(request, cluster).filter(move |(node, _)| self.allows(node, cluster)))
    }

    fn on_request_success(&self, request: &RoutingInfo, latency: std::time::Duration, node: NodeRef<'_>) {
        self.inner.on_request_success(request, latency, node)
    }

    fn on_request_failure(&self, request: &RoutingInfo, latency: std::time::Duration, node: NodeRef<'_>, error: &scylla::errors::RequestAttemptError) {
        self.inner.on_request_failure(request, latency, node, error)
    }

    fn name(&self) -> String {
        format!("Filtered({})", self.inner.name())
    }
}

/// A user's query plan for one request: `policy.make_query_plan(working_keyspace, query)`,
/// as the crate policy of `profile` with the plan's hosts, in order, as its only targets.
pub fn plan_of(py: Python<'_>, policy: &Py<PyAny>, query: &Bound<'_, PyAny>, profile: Option<&ExecutionProfileHandle>) -> PyResult<ExecutionProfileHandle> {
    let keyspace = query.getattr_opt(pyo3::intern!(py, "keyspace"))?.filter(|k| !k.is_none());
    let plan = policy.bind(py).call_method1(pyo3::intern!(py, "make_query_plan"), (keyspace, query))?;
    let mut hosts = Vec::new();
    for host in plan.try_iter()? {
        let host = host?;
        let address: String = host.getattr(pyo3::intern!(py, "address"))?.extract()?;
        let port: u16 = match host.getattr_opt(pyo3::intern!(py, "endpoint"))? {
            Some(e) => e.getattr_opt(pyo3::intern!(py, "port"))?.map(|p| p.extract()).transpose()?.unwrap_or(9042),
            None => 9042,
        };
        let ip: IpAddr = address.parse().map_err(|_| PyValueError::new_err(format!("make_query_plan gave a host without an IP address: {address:?}")))?;
        hosts.push(SocketAddr::new(ip, port));
    }
    let builder = match profile {
        Some(p) => p.pointee_to_builder(),
        None => ExecutionProfile::builder().request_timeout(None),
    };
    Ok(builder.load_balancing_policy(Arc::new(FixedPlan { hosts })).build().into_handle())
}

/// The hosts of a user's query plan, tried in order (those the engine does not know, or
/// holds no connection to, are skipped).
#[derive(Debug)]
struct FixedPlan {
    hosts: Vec<SocketAddr>,
}

impl FixedPlan {
    fn nodes<'a>(&'a self, cluster: &'a ClusterState) -> impl Iterator<Item = NodeRef<'a>> + 'a {
        let nodes = cluster.get_nodes_info();
        self.hosts.iter().filter_map(move |addr| nodes.iter().find(|n| n.address.ip() == addr.ip() && n.address.port() == addr.port()))
    }
}

impl LoadBalancingPolicy for FixedPlan {
    fn pick<'a>(&'a self, _request: &'a RoutingInfo, cluster: &'a ClusterState) -> Option<(NodeRef<'a>, Option<Shard>)> {
        self.nodes(cluster).find(|n| n.is_connected()).map(|n| (n, None))
    }

    fn fallback<'a>(&'a self, _request: &'a RoutingInfo, cluster: &'a ClusterState) -> FallbackPlan<'a> {
        Box::new(self.nodes(cluster).map(|n| (n, None)))
    }

    fn name(&self) -> String {
        "make_query_plan".to_string()
    }
}
