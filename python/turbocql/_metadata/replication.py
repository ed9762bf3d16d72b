"""Replication strategies of keyspaces, under the classic driver's names (re-exported by
:mod:`turbocql.metadata`).

:class:`ReplicationStrategy` and its subclasses :class:`SimpleStrategy`,
:class:`NetworkTopologyStrategy`, :class:`LocalStrategy`, :class:`EverywhereStrategy` (and
a strategy of any other class, kept with its options), made from a keyspace's
``replication`` map by :meth:`ReplicationStrategy.create`; :class:`ReplicationFactor` for
``"3"`` or ``"3/1"`` (transient replicas). Each renders its map for ``CREATE KEYSPACE``
(``export_for_schema()``) and computes the replicas of each token of a ring
(``make_token_replica_map``), as the classic driver does for a ``TokenMap`` built by hand;
the cluster's own token map asks the engine, which routes by the same rules.
"""

import bisect

from turbocql import _loggers
from turbocql._metadata.schema_cql import map_literal

log = _loggers.metadata

REPLICATION_STRATEGY_CLASS_PREFIX = "org.apache.cassandra.locator."

_replication_strategies: dict = {}


class ReplicationFactor:
    """A replication factor: ``all_replicas``, of which ``transient_replicas`` are transient
    (``"3/1"``) and ``full_replicas`` hold full copies."""

    def __init__(self, all_replicas, transient_replicas=None):
        self.all_replicas = all_replicas
        self.transient_replicas = transient_replicas
        self.full_replicas = all_replicas - transient_replicas if transient_replicas else all_replicas

    @staticmethod
    def create(rf):
        """Parses ``"3"`` or ``"3/1"`` (all/transient)."""
        try:
            return ReplicationFactor(int(rf))
        except ValueError:
            pass
        try:
            total, transient = str(rf).split("/")
            return ReplicationFactor(int(total), int(transient))
        except ValueError:
            raise ValueError("Unable to determine replication factor from: %s" % (rf,)) from None

    def __str__(self):
        if self.transient_replicas:
            return "%d/%d" % (self.all_replicas, self.transient_replicas)
        return "%d" % self.all_replicas

    def __repr__(self):
        return "ReplicationFactor(%s)" % self

    def __eq__(self, other):
        return (
            isinstance(other, ReplicationFactor)
            and self.all_replicas == other.all_replicas
            and self.full_replicas == other.full_replicas
        )

    __hash__ = None  # type: ignore[assignment]


class ReplicationStrategy:
    """A keyspace's replication strategy. ``ReplicationStrategy.create(class, options)`` makes
    the subclass named by the class (or an unknown strategy that keeps its options).
    ``make_token_replica_map(token_to_host_owner, ring)`` maps each token of the sorted
    ``ring`` to its replica hosts."""

    name: str | None = None
    options_map: dict | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__
        if not cls.__name__.startswith("_"):
            _replication_strategies[cls.__name__] = cls

    @classmethod
    def create(cls, strategy_class, options_map):
        if not strategy_class:
            return None
        name = strategy_class
        if name.startswith(REPLICATION_STRATEGY_CLASS_PREFIX):
            name = name[len(REPLICATION_STRATEGY_CLASS_PREFIX) :]
        strategy = _replication_strategies.get(name)
        try:
            if strategy is None:
                return _UnknownStrategy(name, options_map)
            return strategy(options_map)
        except Exception as exc:
            log.warning("Failed creating %s with options %s: %s", name, options_map, exc)
            return None

    def make_token_replica_map(self, token_to_host_owner, ring):
        raise NotImplementedError()

    def export_for_schema(self):
        """The replication map as a CQL map literal, for ``CREATE KEYSPACE``."""
        raise NotImplementedError()

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.export_for_schema())


class _UnknownStrategy(ReplicationStrategy):
    """A strategy this module does not know: its options are kept and exported as read."""

    def __init__(self, name, options_map):
        self.name = name
        self.options_map = dict(options_map or {})
        self.options_map["class"] = name

    def export_for_schema(self):
        return map_literal(self.options_map)

    def __eq__(self, other):
        return isinstance(other, _UnknownStrategy) and (self.name, self.options_map) == (other.name, other.options_map)

    __hash__ = None  # type: ignore[assignment]

    def make_token_replica_map(self, token_to_host_owner, ring):
        return {}


class SimpleStrategy(ReplicationStrategy):
    """``replication_factor`` copies on consecutive nodes of the ring."""

    def __init__(self, options_map):
        self.replication_factor_info = ReplicationFactor.create(options_map["replication_factor"])

    @property
    def replication_factor(self):
        """The number of full replicas (``replication_factor_info.full_replicas``)."""
        return self.replication_factor_info.full_replicas

    def make_token_replica_map(self, token_to_host_owner, ring):
        """Each token's replicas: the owners of it and of the tokens after it on the ring,
        each host once, until ``replication_factor`` hosts (or the ring is walked)."""
        owners = [token_to_host_owner[t] for t in ring]
        n = len(ring)
        replica_map = {}
        for i, token in enumerate(ring):
            hosts: list = []
            for step in range(n):
                if len(hosts) >= self.replication_factor:
                    break
                host = owners[(i + step) % n]
                if host not in hosts:
                    hosts.append(host)
            replica_map[token] = hosts
        return replica_map

    def export_for_schema(self):
        return "{'class': 'SimpleStrategy', 'replication_factor': '%s'}" % self.replication_factor_info

    def __eq__(self, other):
        return isinstance(other, SimpleStrategy) and str(self.replication_factor_info) == str(
            other.replication_factor_info
        )

    __hash__ = None  # type: ignore[assignment]


class NetworkTopologyStrategy(ReplicationStrategy):
    """A replication factor per datacenter: ``dc_replication_factors`` maps each datacenter to
    its number of full replicas, ``dc_replication_factors_info`` to its
    :class:`ReplicationFactor`."""

    def __init__(self, dc_replication_factors):
        self.dc_replication_factors_info = {
            str(dc): ReplicationFactor.create(rf) for dc, rf in dc_replication_factors.items()
        }
        self.dc_replication_factors = {dc: rf.full_replicas for dc, rf in self.dc_replication_factors_info.items()}

    def make_token_replica_map(self, token_to_host_owner, ring):
        """Each token's replicas: in every datacenter with a replication factor, the owners
        of the datacenter's tokens from this one on, each host once, on distinct racks
        while racks remain (a host of a rack already used waits until every rack has one),
        until the factor or the datacenter's host count is reached."""
        owners = [token_to_host_owner[t] for t in ring]
        positions: dict = {}  # dc -> ring indexes of its tokens, ascending
        for i, host in enumerate(owners):
            positions.setdefault(host.datacenter, []).append(i)
        dcs = []
        for dc, indexes in positions.items():
            rf = self.dc_replication_factors.get(dc, 0) if dc is not None else 0
            if rf > 0:
                dc_hosts = {owners[i] for i in indexes}
                racks = {h.rack for h in dc_hosts}
                dcs.append((indexes, min(rf, len(dc_hosts)), len(racks)))
        replica_map = {}
        for i, token in enumerate(ring):
            replicas: list = []
            for indexes, wanted, rack_count in dcs:
                _place_in_dc(replicas, owners, indexes, bisect.bisect_left(indexes, i), wanted, rack_count)
            replica_map[token] = replicas
        return replica_map

    def export_for_schema(self):
        dcs = "".join(", '%s': '%s'" % (dc, rf) for dc, rf in sorted(self.dc_replication_factors_info.items()))
        return "{'class': 'NetworkTopologyStrategy'%s}" % dcs

    def __eq__(self, other):
        return (
            isinstance(other, NetworkTopologyStrategy)
            and self.dc_replication_factors_info == other.dc_replication_factors_info
        )

    __hash__ = None  # type: ignore[assignment]


def _place_in_dc(replicas, owners, indexes, start, wanted, rack_count):
    """Appends to ``replicas`` ``wanted`` hosts of one datacenter, walking its token
    ``indexes`` (into ``owners``) from ``start``, around: a host whose rack already holds a
    replica is held back until every rack holds one, then the held-back hosts come in the
    order met."""
    placed = 0
    racks: set = set()
    held: list = []
    n = len(indexes)
    for step in range(n):
        if placed == wanted:
            return
        host = owners[indexes[(start + step) % n]]
        if host in replicas or host in held:
            continue
        if host.rack in racks and len(racks) < rack_count:
            held.append(host)
            continue
        replicas.append(host)
        placed += 1
        racks.add(host.rack)
        if len(racks) == rack_count:
            while held and placed < wanted:
                replicas.append(held.pop(0))
                placed += 1
    # Racks never all reached (cannot happen when the walk covers the datacenter): the
    # held-back hosts still count.
    while held and placed < wanted:
        replicas.append(held.pop(0))
        placed += 1


class LocalStrategy(ReplicationStrategy):
    """The system keyspaces' strategy: every node holds its own data."""

    def __init__(self, options_map=None):
        pass

    def make_token_replica_map(self, token_to_host_owner, ring):
        return {}

    def export_for_schema(self):
        return "{'class': 'LocalStrategy'}"

    def __eq__(self, other):
        return isinstance(other, LocalStrategy)

    __hash__ = None  # type: ignore[assignment]


class EverywhereStrategy(ReplicationStrategy):
    """A copy on every node (ScyllaDB's and DSE's ``EverywhereStrategy``)."""

    def __init__(self, options_map=None):
        pass

    def make_token_replica_map(self, token_to_host_owner, ring):
        hosts = list(dict.fromkeys(token_to_host_owner[t] for t in ring))
        return {token: list(hosts) for token in ring}

    def export_for_schema(self):
        return "{'class': 'EverywhereStrategy'}"

    def __eq__(self, other):
        return isinstance(other, EverywhereStrategy)

    __hash__ = None  # type: ignore[assignment]
