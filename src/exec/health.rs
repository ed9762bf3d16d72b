//! Unresponsive nodes: a node that has answered nothing for a while although requests wait
//! on it (a frozen or stalled process, a network that stopped passing its packets) goes to
//! the end of every query plan until it answers again.
//!
//! Why: the server's failure detector and the connection's keepalive take tens of seconds
//! to call such a node down, and until then about one request in N goes to it and waits for
//! its whole client timeout. Here the requests themselves are the signal. [`Watched`] wraps
//! a profile's load-balancing policy: each node it hands out is noted as *waited on* (from
//! then, if nothing was waited on since its last answer), and each answer the crate reports
//! (`on_request_success`, or a failure the node sent) clears that. A node waited on for
//! longer than the threshold with no answer is a *suspect*: plans give it last, after every
//! other node of the policy's plan (never dropped, so a plan of that node alone still
//! reaches it). A suspect is probed (`SELECT key FROM system.local` on that node only, each
//! [`PROBE_INTERVAL`], each under [`PROBE_TIMEOUT`]) until it answers, which puts it back
//! in place. Requests already sent to it are not moved: they end by their own timeout (a
//! speculative-execution policy rescues idempotent ones).
//!
//! A false alarm (one slow request and nothing else sent to that node) costs one probe:
//! while it runs, the node's requests go to the next replicas. The threshold comes from
//! `Cluster(unresponsive_node_threshold=...)` (2 s by default, None to turn it off); the
//! state is the process's, as nodes are: with several sessions the smallest threshold of
//! the live ones applies.
//!
//! [`Watched`] also hands each failed attempt's node to `super::attempts` (the hosts a
//! request tried, for `NoHostAvailable`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::sync::{Mutex, RwLock};
use pyo3::prelude::*;
use scylla::client::session::Session as ScyllaSession;
use scylla::cluster::{ClusterState, NodeRef};
use scylla::errors::RequestAttemptError;
use scylla::policies::load_balancing::{FallbackPlan, LoadBalancingPolicy, NodeIdentifier, RoutingInfo, SingleTargetLoadBalancingPolicy};
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::routing::Shard;
use scylla::statement::unprepared::Statement;
use uuid::Uuid;

use super::attempts;
use crate::runtime::{self, ForkLocal};

/// Between two probes of a suspect.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(500);
/// How long a probe waits for its answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// One node's state. Times are milliseconds since [`Watch::base`], 0 meaning none.
///
/// Memory ordering: each field stands alone (no other memory is published through it), and
/// the plans read them as a heuristic, so a plan that reads a value a moment old (on arm64,
/// which reorders more than x86) hands out a node once more or once less: `Relaxed` there.
/// Who logs and who probes is decided by swaps, read-modify-writes, which see the latest
/// value in any ordering. The probe's hand-over (a node made a suspect again while its probe
/// ends) is the one place where two flags are read against each other: `SeqCst` there.
#[derive(Default)]
struct NodeState {
    /// Since when a request has waited on the node with no answer from it since.
    waiting_since: AtomicU64,
    /// Left to the end of plans until it answers (a probe or a request).
    suspect: AtomicBool,
    /// A probe task runs for it.
    probing: AtomicBool,
}

/// The process's view of which nodes answer (see the module doc).
struct Watch {
    base: Instant,
    /// Looked up twice per request (its plan, its answer): a fast hasher, not SipHash.
    nodes: RwLock<HashMap<Uuid, Arc<NodeState>, foldhash::fast::RandomState>>,
    /// Live sessions and their thresholds (ms; 0: off), for probes and the threshold.
    sessions: Mutex<Vec<(Weak<ScyllaSession>, u64)>>,
    /// The smallest threshold of the live sessions, in ms (0: off). Read `Relaxed` by the
    /// plans (a threshold a moment old changes one plan); `SeqCst` against `ticking`.
    threshold_ms: AtomicU64,
    /// Milliseconds since `base` (+1), advanced by a ticker task every [`TICK`] while a
    /// session is registered: a request reads this instead of the clock. `Relaxed`: a clock
    /// of 50 ms resolution read a moment late is the same clock.
    now_ms: AtomicU64,
    /// A ticker task runs. It and `threshold_ms` are a pair (a session registering sets the
    /// threshold then looks at this; the ticker clears this then looks at the threshold):
    /// `SeqCst` on both sides, so that one of them always sees the other's write.
    ticking: AtomicBool,
}

/// The resolution of the watch's clock.
const TICK: Duration = Duration::from_millis(50);

static WATCH: ForkLocal<Watch> = ForkLocal::new();

fn watch() -> &'static Watch {
    WATCH.get_or_init(|| Watch {
        base: Instant::now(),
        nodes: RwLock::new(HashMap::default()),
        sessions: Mutex::new(Vec::new()),
        threshold_ms: AtomicU64::new(0),
        now_ms: AtomicU64::new(1),
        ticking: AtomicBool::new(false),
    })
}

/// In a forked child: the parent's probes and sessions are gone.
pub fn after_fork() {
    WATCH.forget();
}

/// A session that takes part: its threshold (None: it does not watch) and the session the
/// probes may use.
pub fn register_session(session: &Arc<ScyllaSession>, threshold: Option<Duration>) {
    let w = watch();
    let ms = threshold.map(|t| (t.as_millis() as u64).max(1)).unwrap_or(0);
    let mut sessions = w.sessions.lock();
    sessions.retain(|(s, _)| s.strong_count() > 0);
    sessions.push((Arc::downgrade(session), ms));
    w.threshold_ms.store(smallest(&sessions), Ordering::SeqCst);
    drop(sessions);
    if ms > 0 && !w.ticking.swap(true, Ordering::SeqCst) {
        runtime::get().spawn(async move {
            let w = watch();
            loop {
                // Relaxed: see the field.
                w.now_ms.store(w.base.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
                tokio::time::sleep(TICK).await;
                if w.threshold_ms.load(Ordering::SeqCst) == 0 && !go_on_after_clearing(&w.ticking, || w.threshold_ms.load(Ordering::SeqCst) != 0) {
                    break;
                }
            }
        });
    }
}

/// A session shut down: its threshold no longer counts.
pub fn unregister_session(session: &Arc<ScyllaSession>) {
    let w = watch();
    let mut sessions = w.sessions.lock();
    sessions.retain(|(s, _)| s.strong_count() > 0 && !std::ptr::eq(s.as_ptr(), Arc::as_ptr(session)));
    w.threshold_ms.store(smallest(&sessions), Ordering::SeqCst);
}

/// Ends a task that `running` says runs (the clock's ticker, a node's probe): clears the
/// flag, then looks again whether the task is `still_needed`. The one who needs the task
/// sets what `still_needed` reads and then swaps the flag to start one; either it saw the
/// flag cleared (and started a task) or this task sees its write here and takes the flag
/// back (unless yet another task took it): `SeqCst` on both sides. True if this task goes on.
fn go_on_after_clearing(running: &AtomicBool, still_needed: impl Fn() -> bool) -> bool {
    running.store(false, Ordering::SeqCst);
    still_needed() && !running.swap(true, Ordering::SeqCst)
}

fn smallest(sessions: &[(Weak<ScyllaSession>, u64)]) -> u64 {
    sessions.iter().map(|(_, ms)| *ms).filter(|ms| *ms > 0).min().unwrap_or(0)
}

impl Watch {
    fn now_ms(&self) -> u64 {
        // Relaxed: see the field.
        self.now_ms.load(Ordering::Relaxed)
    }

    /// A plan is about to hand out the node: true if it is a suspect (then it is handed out
    /// last, if at all); otherwise a request waits on it from now. One lookup, no clone:
    /// this runs for every request.
    fn hand_out(&self, node: NodeRef<'_>, threshold_ms: u64) -> bool {
        {
            let nodes = self.nodes.read();
            if let Some(s) = nodes.get(&node.host_id) {
                // Relaxed: a heuristic on values that stand alone (see NodeState).
                if s.suspect.load(Ordering::Relaxed) {
                    return true;
                }
                let since = s.waiting_since.load(Ordering::Relaxed);
                if since == 0 {
                    s.waiting_since.store(self.now_ms(), Ordering::Relaxed);
                    return false;
                }
                if self.now_ms().saturating_sub(since) <= threshold_ms {
                    return false;
                }
                let s = s.clone();
                drop(nodes);
                return self.suspect(node, s, since);
            }
        }
        // Relaxed: see NodeState.
        self.nodes.write().entry(node.host_id).or_default().waiting_since.store(self.now_ms(), Ordering::Relaxed);
        false
    }

    /// A suspect handed out all the same (last in its plan): a request waits on it.
    fn waited_on(&self, host_id: Uuid) {
        if let Some(s) = self.nodes.read().get(&host_id) {
            // Relaxed: see NodeState.
            if s.waiting_since.load(Ordering::Relaxed) == 0 {
                s.waiting_since.store(self.now_ms(), Ordering::Relaxed);
            }
        }
    }

    /// The node answered.
    fn answered(&self, host_id: Uuid) {
        let nodes = self.nodes.read();
        let Some(s) = nodes.get(&host_id) else { return };
        // Relaxed: see NodeState; the loads before the store and the swap only spare the
        // common case a write.
        if s.waiting_since.load(Ordering::Relaxed) != 0 {
            s.waiting_since.store(0, Ordering::Relaxed);
        }
        if s.suspect.load(Ordering::Relaxed) && s.suspect.swap(false, Ordering::SeqCst) {
            log("info", format!("node {host_id} answers again: back in its place in query plans"));
        }
    }

    /// The node has been waited on since `since` with no answer: a suspect from now.
    fn suspect(&self, node: NodeRef<'_>, s: Arc<NodeState>, since: u64) -> bool {
        if !s.suspect.swap(true, Ordering::SeqCst) {
            log(
                "warning",
                format!(
                    "node {} ({}) has answered nothing for {} ms although requests wait on it: it goes last in query plans until it answers",
                    node.host_id,
                    node.address,
                    self.now_ms().saturating_sub(since)
                ),
            );
            self.start_probe(node.host_id, s);
        }
        true
    }

    fn start_probe(&self, host_id: Uuid, state: Arc<NodeState>) {
        if state.probing.swap(true, Ordering::SeqCst) {
            return;
        }
        runtime::get().spawn(async move {
            let w = watch();
            loop {
                let gone = Self::probe_until_answered(w, host_id, &state).await;
                // A node made a suspect again as this probe ended found it running and
                // started none: this task takes it up.
                if !go_on_after_clearing(&state.probing, || !gone && state.suspect.load(Ordering::SeqCst)) {
                    break;
                }
            }
        });
    }

    /// Probes the node while it is a suspect; true if no live session knows it any more.
    async fn probe_until_answered(w: &Watch, host_id: Uuid, state: &NodeState) -> bool {
        while state.suspect.load(Ordering::SeqCst) {
            let Some(session) = w.session_knowing(host_id) else { return true };
            let mut probe = Statement::new("SELECT key FROM system.local");
            probe.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(NodeIdentifier::HostId(host_id), None)));
            probe.set_retry_policy(Some(Arc::new(FallthroughRetryPolicy)));
            probe.set_request_timeout(Some(PROBE_TIMEOUT));
            let answered = session.query_unpaged(probe, &[]).await.is_ok();
            drop(session);
            if answered {
                w.answered(host_id);
                break;
            }
            tokio::time::sleep(PROBE_INTERVAL).await;
        }
        false
    }

    /// A live session whose cluster state has the node.
    fn session_knowing(&self, host_id: Uuid) -> Option<Arc<ScyllaSession>> {
        let sessions: Vec<Arc<ScyllaSession>> = self.sessions.lock().iter().filter_map(|(s, _)| s.upgrade()).collect();
        sessions.into_iter().find(|s| s.get_cluster_state().get_nodes_info().iter().any(|n| n.host_id == host_id))
    }
}

/// Logs on the cluster logger (`turbocql.cluster`, `cassandra.cluster` under the shim), from
/// a blocking-pool thread (never the caller's: a plan is made wherever a request starts,
/// with or without the GIL).
fn log(level: &'static str, message: String) {
    runtime::get().spawn_blocking(move || {
        Python::try_attach(|py| {
            let logged = crate::pyrefs::get(py).and_then(|refs| refs.cluster_log.bind(py).call_method1(level, (message,)));
            if let Err(e) = logged {
                e.display(py);
            }
        })
    });
}

/// A load-balancing policy whose plans give unresponsive nodes last (see the module doc).
#[derive(Debug)]
pub struct Watched {
    pub inner: Arc<dyn LoadBalancingPolicy>,
}

impl Watched {
    pub fn wrap(inner: Arc<dyn LoadBalancingPolicy>) -> Arc<dyn LoadBalancingPolicy> {
        Arc::new(Watched { inner })
    }
}

/// A fallback plan with the suspects moved to its end.
struct SuspectsLast<'a> {
    inner: FallbackPlan<'a>,
    later: Vec<(NodeRef<'a>, Option<Shard>)>,
    threshold_ms: u64,
    watch: &'static Watch,
}

impl<'a> Iterator for SuspectsLast<'a> {
    type Item = (NodeRef<'a>, Option<Shard>);

    fn next(&mut self) -> Option<Self::Item> {
        for target in self.inner.by_ref() {
            if self.watch.hand_out(target.0, self.threshold_ms) {
                self.later.push(target);
                continue;
            }
            return Some(target);
        }
        if self.later.is_empty() {
            return None;
        }
        let target = self.later.remove(0);
        self.watch.waited_on(target.0.host_id);
        Some(target)
    }
}

impl LoadBalancingPolicy for Watched {
    fn pick<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> Option<(NodeRef<'a>, Option<Shard>)> {
        let w = watch();
        // Relaxed: see the field.
        let threshold_ms = w.threshold_ms.load(Ordering::Relaxed);
        let picked = self.inner.pick(request, cluster)?;
        if threshold_ms == 0 {
            return Some(picked);
        }
        if w.hand_out(picked.0, threshold_ms) {
            // The crate asks `fallback` for the whole plan, which gives this node last.
            return None;
        }
        Some(picked)
    }

    fn fallback<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> FallbackPlan<'a> {
        let w = watch();
        // Relaxed: see the field.
        let threshold_ms = w.threshold_ms.load(Ordering::Relaxed);
        let inner = self.inner.fallback(request, cluster);
        if threshold_ms == 0 {
            return inner;
        }
        Box::new(SuspectsLast { inner, later: Vec::new(), threshold_ms, watch: w })
    }

    fn on_request_success(&self, request: &RoutingInfo, latency: Duration, node: NodeRef<'_>) {
        // Relaxed: see the field.
        if watch().threshold_ms.load(Ordering::Relaxed) > 0 {
            watch().answered(node.host_id);
        }
        self.inner.on_request_success(request, latency, node)
    }

    fn on_request_failure(&self, request: &RoutingInfo, latency: Duration, node: NodeRef<'_>, error: &RequestAttemptError) {
        // An error the node sent is an answer; a broken connection or a failure to send is not.
        // Relaxed: see the field.
        if matches!(error, RequestAttemptError::DbError(..)) && watch().threshold_ms.load(Ordering::Relaxed) > 0 {
            watch().answered(node.host_id);
        }
        attempts::note_failure(node);
        super::metrics::note_attempt_failure(error);
        self.inner.on_request_failure(request, latency, node, error)
    }

    fn name(&self) -> String {
        format!("Watched({})", self.inner.name())
    }
}
