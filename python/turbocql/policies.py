"""Load-balancing policies, under the classic driver's names (``cassandra.policies``, which
also re-exports the retry, speculative-execution, reconnection and conviction policies of
``turbocql._policies.failure``, and the host distances, host-state listener and address
translators of ``turbocql._policies.hosts``).

The engine routes, not Python: each built-in load-balancing policy describes itself to the
engine once (``_engine_policy()``), when the execution profile holding it is first used,
and the engine builds the scylla crate's policy of the same meaning (src/exec/routing.rs).
No Python code runs per request, except where the classic API asks for it: a
``HostFilterPolicy`` predicate is called once per host, and a user's
``LoadBalancingPolicy`` subclass with its own ``make_query_plan`` (or a built-in wrapper
around one) is asked for each request's plan when the request is built, with the
statement, as in the classic driver: that costs a Python call per request (a few
microseconds), which the built-in policies never pay.

The Python methods of the built-in policies (``populate``, ``distance``,
``make_query_plan``, ``on_up``...) behave as the classic ones for code that calls them,
such as a user's policy built over them. The classic ``HostStateListener``
(``cluster.register_listener``) hears the engine's host events.
"""

import socket
from itertools import cycle, islice
from random import randint, shuffle
from threading import Lock

from turbocql import (  # noqa: F401 - ConsistencyLevel, OperationTimedOut, WriteType: classic names of cassandra.policies
    ConsistencyLevel,
    OperationTimedOut,
    WriteType,
    _engine,
    _loggers,
)
from turbocql._policies.failure import (  # noqa: F401 - classic names of cassandra.policies
    ConstantReconnectionPolicy,
    ConstantSpeculativeExecutionPolicy,
    ConvictionPolicy,
    DowngradingConsistencyRetryPolicy,
    ExponentialReconnectionPolicy,
    FallthroughRetryPolicy,
    NeverRetryPolicy,
    NoSpeculativeExecutionPlan,
    NoSpeculativeExecutionPolicy,
    ReconnectionPolicy,
    RetryPolicy,
    SimpleConvictionPolicy,
    SpeculativeExecutionPlan,
    SpeculativeExecutionPolicy,
    _overrides,
)
from turbocql._policies.hosts import (  # noqa: F401 - classic names of cassandra.policies
    AddressTranslator,
    EC2MultiRegionTranslator,
    HostDistance,
    HostStateListener,
    IdentityTranslator,
)
from turbocql._util.homes import publish as _publish

log = _loggers.policies


def _engine_form(policy):
    """The engine's form of load-balancing ``policy``: its ``_engine_policy()``, with, when
    a user's subclass of a built-in policy overrides ``distance()``, the hosts it calls
    ``IGNORED`` left out. The classic driver opens no pool to those, so never uses them;
    the engine asks ``distance`` once per host, off its I/O thread, when a request first
    meets the host (again when its address changes), never per request. ``LOCAL`` and
    ``REMOTE`` do not change the order of a plan (the classic driver sizes pools by them)."""
    engine = policy._engine_policy()
    if engine.is_custom:
        return engine
    cls = type(policy)
    builtin = next((c for c in cls.__mro__ if c in _BUILT_IN_LOAD_BALANCING), None)
    if builtin is not None and builtin is not cls and _overrides(cls, builtin, ("distance",)):
        return _engine.LoadBalancing.host_filter(engine, _NotIgnored(policy))
    return engine


class _NotIgnored:
    """A host filter of the engine: the hosts ``policy.distance`` does not ignore."""

    def __init__(self, policy):
        self.policy = policy

    def __call__(self, host):
        return self.policy.distance(host) != HostDistance.IGNORED

    def __repr__(self):
        return "<hosts %r does not ignore>" % (self.policy,)


def _policy_changed(policy):
    """``policy`` changed after an execution profile's engine form was built from it: those
    profiles (noted by ``turbocql._policies.profiles._used_by``) are built again at their next use;
    no other profile is touched."""
    for profile in list(policy.__dict__.get("_engine_users", ())):
        profile._engine_changed()


# A user's override of one of these changes a built-in policy's plans.
_PLAN_METHODS = ("make_query_plan", "populate", "on_up", "on_down", "on_add", "on_remove")


class LoadBalancingPolicy(HostStateListener):
    """Base class of load-balancing policies: a subclass implements ``populate``,
    ``distance``, ``make_query_plan`` and the host events, as in the classic driver; the
    engine routes from ``_engine_policy()``, asking a user's ``make_query_plan`` per
    request."""

    _hosts_lock = None

    def __init__(self):
        # Held while the host events change the hosts a plan reads.
        self._hosts_lock = Lock()

    def distance(self, host):
        raise NotImplementedError()

    def populate(self, cluster, hosts):
        raise NotImplementedError()

    def make_query_plan(self, working_keyspace=None, query=None):
        raise NotImplementedError()

    def check_supported(self):
        pass

    def _engine_policy(self):
        """A user's policy: its ``make_query_plan`` is asked per request."""
        return _engine.LoadBalancing.custom(self)

    def _is_own(self, base):
        """True if this object's class changes how ``base`` plans (a user's subclass): its
        own ``make_query_plan``, or its own ``populate`` / ``on_up`` / ``on_down`` /
        ``on_add`` / ``on_remove``, which keep the hosts ``make_query_plan`` reads. The
        engine then asks ``make_query_plan`` per request, as the classic driver does."""
        return type(self) is not base and _overrides(type(self), base, _PLAN_METHODS)


class _ChildHears:
    """For policies over a ``_child_policy``: host events go to the child, and its answers
    come back."""

    _child_policy: "LoadBalancingPolicy | None"

    def on_up(self, *args, **kwargs):
        return self._child_policy.on_up(*args, **kwargs)

    def on_down(self, *args, **kwargs):
        return self._child_policy.on_down(*args, **kwargs)

    def on_add(self, *args, **kwargs):
        return self._child_policy.on_add(*args, **kwargs)

    def on_remove(self, *args, **kwargs):
        return self._child_policy.on_remove(*args, **kwargs)


def _start_position(hosts):
    """Where a round-robin starts: a random host, so that clients spread their first requests."""
    return randint(0, len(hosts) - 1) if len(hosts) > 1 else 0


class RoundRobinPolicy(LoadBalancingPolicy):
    """Every host in turn, whatever its datacenter."""

    _live_hosts: frozenset = frozenset()
    _position = 0

    def populate(self, cluster, hosts):
        self._live_hosts = frozenset(hosts)
        self._position = _start_position(hosts)

    def distance(self, host):
        return HostDistance.LOCAL

    def make_query_plan(self, working_keyspace=None, query=None):
        pos = self._position
        self._position += 1  # unlocked: a lost increment only repeats a start host
        hosts = self._live_hosts
        if not hosts:
            return iter(())
        pos %= len(hosts)
        return islice(cycle(hosts), pos, pos + len(hosts))

    def on_up(self, host):
        with self._hosts_lock:
            self._live_hosts = self._live_hosts.union((host,))

    def on_down(self, host):
        with self._hosts_lock:
            self._live_hosts = self._live_hosts.difference((host,))

    def on_add(self, host):
        self.on_up(host)

    def on_remove(self, host):
        self.on_down(host)

    def _engine_policy(self):
        if self._is_own(RoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.round_robin()


def _contact_endpoints(cluster):
    """The endpoints of ``cluster``'s contact points (its classic ``endpoints_resolved``;
    when it has none, its ``contact_points`` resolved at its ``port``)."""
    resolved = getattr(cluster, "endpoints_resolved", None)
    if resolved is not None:
        return list(resolved)
    from turbocql.connection import DefaultEndPoint

    port = getattr(cluster, "port", 9042)
    endpoints = []
    for cp in getattr(cluster, "contact_points", None) or ():
        cp = getattr(cp, "address", cp)
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(str(cp), None, socket.AF_UNSPEC)}
        except OSError:
            addresses = {str(cp)}
        endpoints.extend(DefaultEndPoint(a, port) for a in sorted(addresses))
    return endpoints


class DCAwareRoundRobinPolicy(LoadBalancingPolicy):
    """Hosts of the local datacenter in turn; ``used_hosts_per_remote_dc`` hosts of each
    remote datacenter after them. An empty ``local_dc`` becomes the datacenter of the first
    contact point seen with one (logged, as the classic driver does)."""

    local_dc = None
    used_hosts_per_remote_dc = 0

    def __init__(self, local_dc="", used_hosts_per_remote_dc=0):
        LoadBalancingPolicy.__init__(self)
        self.local_dc = local_dc
        self.used_hosts_per_remote_dc = used_hosts_per_remote_dc
        self._dc_live_hosts = {}
        self._position = 0
        self._endpoints = []

    def _dc(self, host):
        return host.datacenter or self.local_dc

    def populate(self, cluster, hosts):
        by_dc: dict = {}
        for host in hosts:
            by_dc.setdefault(self._dc(host), []).append(host)
        self._dc_live_hosts = {dc: tuple(sorted(set(hs))) for dc, hs in by_dc.items()}
        if not self.local_dc:
            self._endpoints = _contact_endpoints(cluster)
            # The engine knows every host when the cluster connects (the classic driver
            # hears them in on_up later): the local datacenter may be known now.
            for host in hosts:
                if self._adopt_local_dc(host):
                    break
        self._position = randint(0, len(hosts) - 1) if hosts else 0

    def _adopt_local_dc(self, host):
        """Takes ``host``'s datacenter as the local one if none is set and ``host`` is a
        contact point; True if it did."""
        if self.local_dc or not host.datacenter or host.endpoint not in self._endpoints:
            return False
        self.local_dc = host.datacenter
        log.info(
            "Using datacenter '%s' for %s (via host '%s'); if incorrect, please specify a local_dc to the "
            "constructor, or limit contact points to local cluster nodes",
            self.local_dc,
            type(self).__name__,
            host.endpoint,
        )
        self._endpoints = []
        _policy_changed(self)
        return True

    def distance(self, host):
        dc = self._dc(host)
        if dc == self.local_dc:
            return HostDistance.LOCAL
        if not self.used_hosts_per_remote_dc:
            return HostDistance.IGNORED
        dc_hosts = self._dc_live_hosts.get(dc, ())
        if host in dc_hosts[: self.used_hosts_per_remote_dc]:
            return HostDistance.REMOTE
        return HostDistance.IGNORED

    def make_query_plan(self, working_keyspace=None, query=None):
        pos = self._position
        self._position += 1
        local = self._dc_live_hosts.get(self.local_dc, ())
        if local:
            pos %= len(local)
            yield from islice(cycle(local), pos, pos + len(local))
        # A copy of the datacenters: the host events may change them meanwhile.
        for dc in [dc for dc in list(self._dc_live_hosts) if dc != self.local_dc]:
            yield from self._dc_live_hosts.get(dc, ())[: self.used_hosts_per_remote_dc]

    def on_up(self, host):
        self._adopt_local_dc(host)
        dc = self._dc(host)
        with self._hosts_lock:
            hosts = self._dc_live_hosts.get(dc, ())
            if host not in hosts:
                self._dc_live_hosts[dc] = hosts + (host,)

    def on_down(self, host):
        dc = self._dc(host)
        with self._hosts_lock:
            hosts = self._dc_live_hosts.get(dc, ())
            if host in hosts:
                rest = tuple(h for h in hosts if h != host)
                if rest:
                    self._dc_live_hosts[dc] = rest
                else:
                    del self._dc_live_hosts[dc]

    def on_add(self, host):
        self.on_up(host)

    def on_remove(self, host):
        self.on_down(host)

    def _engine_policy(self):
        if self._is_own(DCAwareRoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.dc_aware(self.local_dc or None, int(self.used_hosts_per_remote_dc or 0))


class RackAwareRoundRobinPolicy(DCAwareRoundRobinPolicy):
    """Hosts of the local rack first, then the rest of the local datacenter, then
    ``used_hosts_per_remote_dc`` hosts of each remote datacenter."""

    def __init__(self, local_dc, local_rack, used_hosts_per_remote_dc=0):
        DCAwareRoundRobinPolicy.__init__(self, local_dc, used_hosts_per_remote_dc)
        self.local_rack = local_rack

    def distance(self, host):
        if self._dc(host) == self.local_dc and host.rack == self.local_rack:
            return HostDistance.LOCAL
        return DCAwareRoundRobinPolicy.distance(self, host)

    def make_query_plan(self, working_keyspace=None, query=None):
        plan = list(DCAwareRoundRobinPolicy.make_query_plan(self, working_keyspace, query))
        yield from [h for h in plan if h.rack == self.local_rack and self._dc(h) == self.local_dc]
        yield from [h for h in plan if not (h.rack == self.local_rack and self._dc(h) == self.local_dc)]

    def _engine_policy(self):
        if self._is_own(RackAwareRoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.dc_aware(
            self.local_dc or None, int(self.used_hosts_per_remote_dc or 0), self.local_rack or None
        )


class TokenAwarePolicy(_ChildHears, LoadBalancingPolicy):
    """The live replicas of a statement's partition key that the child policy calls
    ``LOCAL`` first (in random order with ``shuffle_replicas``), then the child policy's
    plan."""

    _child_policy = None
    _cluster_metadata = None
    shuffle_replicas = False

    def __init__(self, child_policy, shuffle_replicas=False):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy
        self.shuffle_replicas = shuffle_replicas

    def populate(self, cluster, hosts):
        self._cluster_metadata = cluster.metadata
        self._child_policy.populate(cluster, hosts)

    def check_supported(self):
        # Before populate (turbocql checks before connecting) there is nothing to check.
        metadata = self._cluster_metadata
        if metadata is not None and not metadata.can_support_partitioner():
            raise RuntimeError(
                "%s cannot be used with the cluster partitioner (%s)" % (type(self).__name__, metadata.partitioner)
            )

    def distance(self, *args, **kwargs):
        return self._child_policy.distance(*args, **kwargs)

    def make_query_plan(self, working_keyspace=None, query=None):
        """The statement's replicas (its ``routing_key`` in its keyspace, else in
        ``working_keyspace``) that are up and ``LOCAL`` to the child, then the child's plan
        without them (a replica the child calls ``REMOTE`` stays in it)."""
        keyspace = getattr(query, "keyspace", None) or working_keyspace
        child = self._child_policy
        routing_key = getattr(query, "routing_key", None)
        if routing_key is None or keyspace is None:
            yield from child.make_query_plan(keyspace, query)
            return
        replicas = self._cluster_metadata.get_replicas(keyspace, routing_key)
        if self.shuffle_replicas:
            shuffle(replicas)
        for replica in replicas:
            if replica.is_up and child.distance(replica) == HostDistance.LOCAL:
                yield replica
        for host in child.make_query_plan(keyspace, query):
            if host not in replicas or child.distance(host) == HostDistance.REMOTE:
                yield host

    def _engine_policy(self):
        child = _engine_form(self._child_policy)
        if child.is_custom or self._is_own(TokenAwarePolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.token_aware(child, bool(self.shuffle_replicas))


class WhiteListRoundRobinPolicy(RoundRobinPolicy):
    """Round-robin over the listed hosts only; the others are never used."""

    def __init__(self, hosts):
        self._allowed_hosts = tuple(hosts)
        self._allowed_hosts_resolved = [
            info[4][0]
            for a in self._allowed_hosts
            for info in socket.getaddrinfo(a, None, socket.AF_UNSPEC, socket.SOCK_STREAM)
        ]
        RoundRobinPolicy.__init__(self)

    def populate(self, cluster, hosts):
        self._live_hosts = frozenset(h for h in hosts if h.address in self._allowed_hosts_resolved)
        self._position = _start_position(hosts)

    def distance(self, host):
        return HostDistance.LOCAL if host.address in self._allowed_hosts_resolved else HostDistance.IGNORED

    def on_up(self, host):
        if host.address in self._allowed_hosts_resolved:
            RoundRobinPolicy.on_up(self, host)

    def on_add(self, host):
        if host.address in self._allowed_hosts_resolved:
            RoundRobinPolicy.on_add(self, host)

    def _engine_policy(self):
        if self._is_own(WhiteListRoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.allow_list(
            _engine.LoadBalancing.round_robin(), sorted(set(self._allowed_hosts_resolved))
        )


class HostFilterPolicy(_ChildHears, LoadBalancingPolicy):
    """The child policy's hosts for which ``predicate(host)`` is truthy; the others are
    ``IGNORED``. The child learns every host (``populate``); its plans are filtered. The
    engine calls the predicate once per host (and again if its address changes), never
    per request."""

    def __init__(self, child_policy, predicate):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy
        self._predicate = predicate

    @property
    def predicate(self):
        return self._predicate

    def populate(self, cluster, hosts):
        self._child_policy.populate(cluster=cluster, hosts=hosts)

    def distance(self, host):
        if self.predicate(host):
            return self._child_policy.distance(host)
        return HostDistance.IGNORED

    def make_query_plan(self, working_keyspace=None, query=None):
        for host in self._child_policy.make_query_plan(working_keyspace=working_keyspace, query=query):
            if self.predicate(host):
                yield host

    def check_supported(self):
        return self._child_policy.check_supported()

    def _engine_policy(self):
        child = _engine_form(self._child_policy)
        if child.is_custom or self._is_own(HostFilterPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.host_filter(child, self._predicate)


class WrapperPolicy(_ChildHears, LoadBalancingPolicy):
    """A policy that defers to ``child_policy``."""

    def __init__(self, child_policy):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy

    def distance(self, *args, **kwargs):
        return self._child_policy.distance(*args, **kwargs)

    def populate(self, cluster, hosts):
        self._child_policy.populate(cluster, hosts)

    def make_query_plan(self, working_keyspace=None, query=None):
        return self._child_policy.make_query_plan(working_keyspace, query)

    def _engine_policy(self):
        child = _engine_form(self._child_policy)
        if child.is_custom or self._is_own(
            WrapperPolicy if type(self) is WrapperPolicy else DefaultLoadBalancingPolicy
        ):
            return _engine.LoadBalancing.custom(self)
        return child


class DefaultLoadBalancingPolicy(WrapperPolicy):
    """The child policy (the classic driver's default wrapper)."""


def default_lbp_factory():
    """The classic default: token-aware over DC-aware, local DC from the contact points."""
    return TokenAwarePolicy(DCAwareRoundRobinPolicy())


# The load-balancing policies defined here: the nearest of them in a policy's class's MRO is
# the built-in one it extends (_engine_form). Named, not found by __module__: the policies of
# turbocql._policies.failure have this module as theirs too.
_BUILT_IN_LOAD_BALANCING = frozenset(
    {
        LoadBalancingPolicy,
        RoundRobinPolicy,
        DCAwareRoundRobinPolicy,
        RackAwareRoundRobinPolicy,
        TokenAwarePolicy,
        WhiteListRoundRobinPolicy,
        HostFilterPolicy,
        WrapperPolicy,
        DefaultLoadBalancingPolicy,
    }
)


__all__ = [
    "AddressTranslator",
    "ConstantReconnectionPolicy",
    "ConstantSpeculativeExecutionPolicy",
    "ConvictionPolicy",
    "DCAwareRoundRobinPolicy",
    "DefaultLoadBalancingPolicy",
    "DowngradingConsistencyRetryPolicy",
    "ExponentialReconnectionPolicy",
    "FallthroughRetryPolicy",
    "HostDistance",
    "HostFilterPolicy",
    "HostStateListener",
    "IdentityTranslator",
    "LoadBalancingPolicy",
    "NeverRetryPolicy",
    "NoSpeculativeExecutionPlan",
    "NoSpeculativeExecutionPolicy",
    "RackAwareRoundRobinPolicy",
    "ReconnectionPolicy",
    "RetryPolicy",
    "RoundRobinPolicy",
    "SimpleConvictionPolicy",
    "SpeculativeExecutionPlan",
    "SpeculativeExecutionPolicy",
    "TokenAwarePolicy",
    "WhiteListRoundRobinPolicy",
    "WrapperPolicy",
    "default_lbp_factory",
]

# This module is the home of the classic names of cassandra.policies that live in
# turbocql._policies.failure and .hosts (reprs, docs and pickles name turbocql.policies).
_publish(
    __name__,
    [
        "AddressTranslator",
        "EC2MultiRegionTranslator",
        "HostDistance",
        "HostStateListener",
        "IdentityTranslator",
        "ConstantReconnectionPolicy",
        "ConstantSpeculativeExecutionPolicy",
        "ConvictionPolicy",
        "DowngradingConsistencyRetryPolicy",
        "ExponentialReconnectionPolicy",
        "FallthroughRetryPolicy",
        "NeverRetryPolicy",
        "NoSpeculativeExecutionPlan",
        "NoSpeculativeExecutionPolicy",
        "ReconnectionPolicy",
        "RetryPolicy",
        "SimpleConvictionPolicy",
        "SpeculativeExecutionPlan",
        "SpeculativeExecutionPolicy",
    ],
)
