"""Load-balancing, retry, speculative-execution and reconnection policies, under the
classic driver's names (``cassandra.policies``).

The engine routes and retries, not Python: each built-in policy describes itself to the
engine once (``_engine_policy()``), when the execution profile holding it is first used,
and the engine builds the scylla crate's policy of the same meaning (src/exec/routing.rs,
src/exec/retry.rs). No Python code runs per request, with two exceptions that the
classic API asks for: a user's ``RetryPolicy`` subclass is called when a request fails
(never when it succeeds), and a ``HostFilterPolicy`` predicate is called once per host.

The classic reconnection policies set how the engine reconnects to a host it lost; the
classic ``HostStateListener`` (``cluster.register_listener``) hears the engine's host
events. A user's ``LoadBalancingPolicy`` subclass with its own ``make_query_plan`` (or a built-in
wrapper around one) is asked for each request's plan when the request is built, with the
statement, as in the classic driver: that costs a Python call per request (a few
microseconds), which the built-in policies never pay.
"""

import random
import socket
from itertools import cycle, islice

from turbocql import (
    ConsistencyLevel,
    OperationTimedOut,  # noqa: F401 - a classic name of cassandra.policies
    UnsupportedOperation,
    WriteType,
    _engine,
    _loggers,
)

log = _loggers.policies


class HostDistance:
    """How "far" a host is from the client (classic constants)."""

    IGNORED = -1
    LOCAL = 0
    REMOTE = 1


class HostStateListener:
    """Told when hosts come up, go down, join or leave (``cluster.register_listener``)."""

    def on_up(self, host):
        pass

    def on_down(self, host):
        pass

    def on_add(self, host):
        pass

    def on_remove(self, host):
        pass


def _overrides(cls, base, names):
    """True if ``cls`` (a subclass of ``base``) redefines one of ``names``."""
    return any(getattr(cls, n) is not getattr(base, n) for n in names)


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
    builtin = next((c for c in cls.__mro__ if c.__module__ == __name__), None)
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
    profiles (noted by ``turbocql._profiles._used_by``) are built again at their next use;
    no other profile is touched."""
    for profile in list(policy.__dict__.get("_engine_users", ())):
        profile._engine_changed()


# A user's override of one of these changes a built-in policy's plans.
_PLAN_METHODS = ("make_query_plan", "populate", "on_up", "on_down", "on_add", "on_remove")


class LoadBalancingPolicy(HostStateListener):
    """Base class of load-balancing policies.

    ``populate``, ``distance`` and ``make_query_plan`` behave as in the classic driver for
    code that calls them; the engine routes from ``_engine_policy()``.
    """

    _hosts_lock = None

    def __init__(self):
        self._live_hosts = frozenset()

    def distance(self, host):
        raise NotImplementedError()

    def populate(self, cluster, hosts):
        self._live_hosts = frozenset(hosts)

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
    """For policies over a ``_child_policy``: host events go to the child."""

    _child_policy: "LoadBalancingPolicy | None"

    def on_up(self, *args, **kwargs):
        return self._child_policy.on_up(*args, **kwargs)

    def on_down(self, *args, **kwargs):
        return self._child_policy.on_down(*args, **kwargs)

    def on_add(self, *args, **kwargs):
        return self._child_policy.on_add(*args, **kwargs)

    def on_remove(self, *args, **kwargs):
        return self._child_policy.on_remove(*args, **kwargs)


class RoundRobinPolicy(LoadBalancingPolicy):
    """Every host in turn, whatever its datacenter."""

    def __init__(self):
        LoadBalancingPolicy.__init__(self)
        self._position = 0

    def populate(self, cluster, hosts):
        self._live_hosts = frozenset(hosts)
        self._position = random.randint(0, len(hosts) - 1) if len(hosts) > 1 else 0

    def distance(self, host):
        return HostDistance.LOCAL

    def make_query_plan(self, working_keyspace=None, query=None):
        pos = self._position
        self._position += 1
        hosts = list(self._live_hosts)
        n = len(hosts)
        if n:
            yield from islice(cycle(hosts), pos % n, (pos % n) + n)

    def on_up(self, host):
        self._live_hosts = self._live_hosts.union((host,))

    def on_down(self, host):
        self._live_hosts = self._live_hosts.difference((host,))

    on_add = on_up
    on_remove = on_down

    def _engine_policy(self):
        if self._is_own(RoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.round_robin()


class DCAwareRoundRobinPolicy(LoadBalancingPolicy):
    """Hosts of the local datacenter in turn; ``used_hosts_per_remote_dc`` hosts of each
    remote datacenter after them. An empty ``local_dc`` is the datacenter of the contact
    points, found when the cluster connects (logged, as the classic driver does)."""

    local_dc = None
    used_hosts_per_remote_dc = 0

    def __init__(self, local_dc="", used_hosts_per_remote_dc=0):
        LoadBalancingPolicy.__init__(self)
        self.local_dc = local_dc
        self.used_hosts_per_remote_dc = used_hosts_per_remote_dc
        self._dc_live_hosts = {}
        self._position = 0

    def _dc(self, host):
        return host.datacenter or self.local_dc

    def populate(self, cluster, hosts):
        if not self.local_dc:
            self._infer_local_dc(cluster, hosts)
        self._dc_live_hosts = {}
        for host in hosts:
            self._dc_live_hosts.setdefault(self._dc(host), []).append(host)
        self._dc_live_hosts = {dc: tuple(sorted(hs)) for dc, hs in self._dc_live_hosts.items()}
        self._position = random.randint(0, len(hosts) - 1) if hosts else 0

    def _infer_local_dc(self, cluster, hosts):
        contact = set()
        for cp in getattr(cluster, "contact_points", ()):
            try:
                contact.update(info[4][0] for info in socket.getaddrinfo(str(cp), None, socket.AF_UNSPEC))
            except OSError:
                contact.add(str(cp))
        for host in hosts:
            if host.address in contact and host.datacenter:
                self.local_dc = host.datacenter
                log.info(
                    "Using datacenter '%s' for %s (via host '%s'); if incorrect, please specify a local_dc to the "
                    "constructor, or limit contact points to local cluster nodes",
                    self.local_dc,
                    type(self).__name__,
                    host.endpoint,
                )
                _policy_changed(self)
                return

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
        for dc, remote in list(self._dc_live_hosts.items()):
            if dc != self.local_dc:
                yield from remote[: self.used_hosts_per_remote_dc]

    def on_up(self, host):
        dc = self._dc(host)
        hosts = self._dc_live_hosts.get(dc, ())
        if host not in hosts:
            self._dc_live_hosts[dc] = tuple(sorted(hosts + (host,)))

    def on_down(self, host):
        dc = self._dc(host)
        hosts = self._dc_live_hosts.get(dc, ())
        if host in hosts:
            self._dc_live_hosts[dc] = tuple(h for h in hosts if h != host)

    on_add = on_up
    on_remove = on_down

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
    """The replicas of a statement's partition key first (in random order with
    ``shuffle_replicas``), then the child policy's plan."""

    _child_policy = None
    shuffle_replicas = False

    def __init__(self, child_policy, shuffle_replicas=False):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy
        self.shuffle_replicas = shuffle_replicas

    _cluster_metadata = None

    def populate(self, cluster, hosts):
        self._cluster_metadata = getattr(cluster, "metadata", None)
        self._child_policy.populate(cluster, hosts)

    def distance(self, *args, **kwargs):
        return self._child_policy.distance(*args, **kwargs)

    def make_query_plan(self, working_keyspace=None, query=None):
        """The statement's local replicas first (its ``routing_key`` in its keyspace), then
        the child's plan (run in Python only when the child is a user's policy)."""
        keyspace = getattr(query, "keyspace", None) or working_keyspace
        routing_key = getattr(query, "routing_key", None)
        child_plan = self._child_policy.make_query_plan(working_keyspace, query)
        if routing_key is None or keyspace is None or self._cluster_metadata is None:
            yield from child_plan
            return
        replicas = [
            r
            for r in self._cluster_metadata.get_replicas(keyspace, routing_key)
            if self._child_policy.distance(r) == HostDistance.LOCAL
        ]
        if self.shuffle_replicas:
            random.shuffle(replicas)
        yield from replicas
        for host in child_plan:
            if host not in replicas:
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
        RoundRobinPolicy.populate(self, cluster, [h for h in hosts if h.address in self._allowed_hosts_resolved])

    def distance(self, host):
        return HostDistance.LOCAL if host.address in self._allowed_hosts_resolved else HostDistance.IGNORED

    def on_up(self, host):
        if host.address in self._allowed_hosts_resolved:
            RoundRobinPolicy.on_up(self, host)

    on_add = on_up

    def _engine_policy(self):
        if self._is_own(WhiteListRoundRobinPolicy):
            return _engine.LoadBalancing.custom(self)
        return _engine.LoadBalancing.allow_list(
            _engine.LoadBalancing.round_robin(), sorted(set(self._allowed_hosts_resolved))
        )


class HostFilterPolicy(_ChildHears, LoadBalancingPolicy):
    """The child policy's hosts for which ``predicate(host)`` is truthy. The engine calls
    the predicate once per host (and again if its address changes), never per request."""

    def __init__(self, child_policy, predicate):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy
        self._predicate = predicate

    @property
    def predicate(self):
        return self._predicate

    def populate(self, cluster, hosts):
        self._child_policy.populate(cluster, [h for h in hosts if self._predicate(h)])

    def distance(self, host):
        if self.predicate(host):
            return self._child_policy.distance(host)
        return HostDistance.IGNORED

    def make_query_plan(self, working_keyspace=None, query=None):
        for host in self._child_policy.make_query_plan(working_keyspace, query):
            if self.predicate(host):
                yield host

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


class ConvictionPolicy:
    def __init__(self, host):
        self.host = host

    def add_failure(self, connection_exc):
        raise NotImplementedError()

    def reset(self):
        raise NotImplementedError()


class SimpleConvictionPolicy(ConvictionPolicy):
    def add_failure(self, connection_exc):
        return not isinstance(connection_exc, OSError)

    def reset(self):
        pass


class ReconnectionPolicy:
    """How long to wait between attempts to reconnect to a host (run by the engine)."""

    def new_schedule(self):
        raise NotImplementedError()

    def _engine_policy(self):
        raise UnsupportedOperation(
            "%s: only ConstantReconnectionPolicy and ExponentialReconnectionPolicy are supported by turbocql"
            % type(self).__name__
        )

    def _check_builtin(self, base):
        if type(self) is not base and _overrides(type(self), base, ("new_schedule",)):
            ReconnectionPolicy._engine_policy(self)


class ConstantReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, delay, max_attempts=64):
        if delay < 0:
            raise ValueError("delay must not be negative")
        if max_attempts is not None and max_attempts < 0:
            raise ValueError("max_attempts must not be negative")
        self.delay = delay
        self.max_attempts = max_attempts

    def new_schedule(self):
        if self.max_attempts:
            return [self.delay] * self.max_attempts
        return cycle([self.delay])

    def _engine_policy(self):
        self._check_builtin(ConstantReconnectionPolicy)
        return _engine.Reconnection.constant(float(self.delay), self.max_attempts or None)


class ExponentialReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, base_delay, max_delay, max_attempts=64):
        if base_delay < 0 or max_delay < 0:
            raise ValueError("Delays may not be negative")
        if max_delay < base_delay:
            raise ValueError("Max delay must be greater than base delay")
        if max_attempts is not None and max_attempts < 0:
            raise ValueError("max_attempts must not be negative")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_attempts = max_attempts

    def new_schedule(self):
        i, overflowed = 0, False
        while self.max_attempts is None or i < self.max_attempts:
            if overflowed:
                yield self.max_delay
            else:
                delay = min(self.base_delay * (2**i), self.max_delay)
                overflowed = delay >= self.max_delay
                yield delay
            i += 1

    def _engine_policy(self):
        self._check_builtin(ExponentialReconnectionPolicy)
        return _engine.Reconnection.exponential(
            float(self.base_delay), float(self.max_delay), self.max_attempts or None
        )


_RETRY_METHODS = ("on_read_timeout", "on_write_timeout", "on_unavailable", "on_request_error")


class RetryPolicy:
    """What to do when a request fails: the classic decisions, applied by the engine.

    Each method returns ``(decision, consistency_level)``: ``RETRY`` (same host),
    ``RETRY_NEXT_HOST``, ``RETHROW`` or ``IGNORE``. This class itself runs in the engine
    as the scylla crate's default policy, which decides as these methods do, and does not
    retry a non-idempotent statement after its connection broke or the host reported
    itself overloaded (the write may have been applied). A subclass's methods are called
    by the engine, on failures only; their ``query`` argument is None.
    """

    RETRY = 0
    RETHROW = 1
    IGNORE = 2
    RETRY_NEXT_HOST = 3

    def on_read_timeout(self, query, consistency, required_responses, received_responses, data_retrieved, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if received_responses >= required_responses and not data_retrieved:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_write_timeout(self, query, consistency, write_type, required_responses, received_responses, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if write_type == WriteType.BATCH_LOG:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        return (self.RETRY_NEXT_HOST, None) if retry_num == 0 else (self.RETHROW, None)

    def on_request_error(self, query, consistency, error, retry_num):
        return self.RETRY_NEXT_HOST, None

    def _engine_policy(self):
        for base, make in (
            (FallthroughRetryPolicy, _engine.Retry.fallthrough),
            (NeverRetryPolicy, _engine.Retry.fallthrough),
            (DowngradingConsistencyRetryPolicy, _engine.Retry.downgrading_consistency),
            (RetryPolicy, _engine.Retry.default_policy),
        ):
            if isinstance(self, base):
                # DowngradingConsistencyRetryPolicy's decisions also come from _pick_consistency.
                methods = _RETRY_METHODS + (("_pick_consistency",) if hasattr(base, "_pick_consistency") else ())
                if type(self) is base or not _overrides(type(self), base, methods):
                    return make()
                break
        return _engine.Retry.python(self)


class FallthroughRetryPolicy(RetryPolicy):
    """Never retries: every error is raised."""

    def on_read_timeout(self, *args, **kwargs):
        return self.RETHROW, None

    def on_write_timeout(self, *args, **kwargs):
        return self.RETHROW, None

    def on_unavailable(self, *args, **kwargs):
        return self.RETHROW, None

    def on_request_error(self, *args, **kwargs):
        return self.RETHROW, None


class NeverRetryPolicy(FallthroughRetryPolicy):
    """Never retries."""


class DowngradingConsistencyRetryPolicy(RetryPolicy):
    """Retries at a lower consistency level when too few replicas answered (deprecated in
    the classic driver; run by the engine as the scylla crate's policy of this name)."""

    def _pick_consistency(self, num_responses):
        if num_responses >= 3:
            return self.RETRY, ConsistencyLevel.THREE
        if num_responses >= 2:
            return self.RETRY, ConsistencyLevel.TWO
        if num_responses >= 1:
            return self.RETRY, ConsistencyLevel.ONE
        return self.RETHROW, None

    def on_read_timeout(self, query, consistency, required_responses, received_responses, data_retrieved, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if ConsistencyLevel.is_serial(consistency):
            return self.RETHROW, None
        if received_responses < required_responses:
            return self._pick_consistency(received_responses)
        if not data_retrieved:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_write_timeout(self, query, consistency, write_type, required_responses, received_responses, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if write_type in (WriteType.SIMPLE, WriteType.BATCH, WriteType.COUNTER):
            if received_responses > 0:
                return self.IGNORE, None
            return self.RETHROW, None
        if write_type == WriteType.UNLOGGED_BATCH:
            return self._pick_consistency(received_responses)
        if write_type == WriteType.BATCH_LOG:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if ConsistencyLevel.is_serial(consistency):
            return self.RETRY_NEXT_HOST, None
        return self._pick_consistency(alive_replicas)


class SpeculativeExecutionPolicy:
    """Base class: when to send more attempts of a slow idempotent request."""

    def new_plan(self, keyspace, statement):
        raise NotImplementedError()

    def _engine_policy(self):
        raise UnsupportedOperation(
            "%s: only ConstantSpeculativeExecutionPolicy and NoSpeculativeExecutionPolicy are supported by "
            "turbocql; a policy's own new_plan is never called (the engine runs speculative executions)"
            % type(self).__name__
        )


class SpeculativeExecutionPlan:
    def next_execution(self, host):
        raise NotImplementedError()


class NoSpeculativeExecutionPlan(SpeculativeExecutionPlan):
    def next_execution(self, host):
        return -1


class NoSpeculativeExecutionPolicy(SpeculativeExecutionPolicy):
    def new_plan(self, keyspace, statement):
        return NoSpeculativeExecutionPlan()

    def _engine_policy(self):
        # A subclass's own new_plan would never be called: refused, not ignored.
        if type(self) is not NoSpeculativeExecutionPolicy and _overrides(
            type(self), NoSpeculativeExecutionPolicy, ("new_plan",)
        ):
            SpeculativeExecutionPolicy._engine_policy(self)
        return None


class ConstantSpeculativeExecutionPolicy(SpeculativeExecutionPolicy):
    """Up to ``max_attempts`` more attempts, ``delay`` seconds apart, on other hosts, for
    statements marked ``is_idempotent`` only (run by the engine)."""

    def __init__(self, delay, max_attempts):
        self.delay = delay
        self.max_attempts = max_attempts

    class ConstantSpeculativeExecutionPlan(SpeculativeExecutionPlan):
        def __init__(self, delay, max_attempts):
            self.delay = delay
            self.remaining = max_attempts

        def next_execution(self, host):
            if self.remaining > 0:
                self.remaining -= 1
                return self.delay
            return -1

    def new_plan(self, keyspace, statement):
        return self.ConstantSpeculativeExecutionPlan(self.delay, self.max_attempts)

    def _engine_policy(self):
        if type(self) is not ConstantSpeculativeExecutionPolicy and _overrides(
            type(self), ConstantSpeculativeExecutionPolicy, ("new_plan", "ConstantSpeculativeExecutionPlan")
        ):
            SpeculativeExecutionPolicy._engine_policy(self)
        if self.delay < 0 or self.max_attempts < 0:
            raise ValueError("ConstantSpeculativeExecutionPolicy needs a delay and max_attempts of at least 0")
        return (float(self.delay), int(self.max_attempts))


class AddressTranslator:
    def translate(self, addr):
        raise NotImplementedError()


class IdentityTranslator(AddressTranslator):
    def translate(self, addr):
        return addr


class EC2MultiRegionTranslator(AddressTranslator):
    """Translates a node's public address to its private one by a reverse then a forward
    DNS lookup (for clients inside the same EC2 region)."""

    def translate(self, addr):
        family = socket.getaddrinfo(addr, 0, socket.AF_UNSPEC, socket.SOCK_STREAM)[0][0]
        name = socket.getfqdn(addr)
        for info in socket.getaddrinfo(name, 0, family, socket.SOCK_STREAM):
            try:
                return info[4][0]
            except Exception:  # try the next address
                continue
        return addr


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
