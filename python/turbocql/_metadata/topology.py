"""The topology half of ``cluster.metadata``: hosts, the token ring and replicas, read from
the engine's view of the cluster (the scylla crate's cluster state, kept current by its
control connection), and the classic token classes (``Token``, ``Murmur3Token``,
``MD5Token``, ``BytesToken``, ``TokenMap``).

:class:`Topology` is what ``Metadata._topology`` holds once the cluster has connected. It
also tells the schema half to read again when the engine's cluster state was replaced
(a schema change event, or this client's own DDL once the schema agreed).
"""

import bisect
import functools
import hashlib
import threading

from turbocql import _loggers
from turbocql.murmur3 import murmur3

log = _loggers.metadata


@functools.total_ordering
class Token:
    """A token on the ring (classic ``cassandra.metadata.Token``)."""

    def __init__(self, token):
        self.value = token

    @classmethod
    def hash_fn(cls, key):
        return key

    @classmethod
    def from_key(cls, key):
        return cls(cls.hash_fn(key))

    @classmethod
    def from_string(cls, token_string):
        raise NotImplementedError()

    def __eq__(self, other):
        return type(self) is type(other) and self.value == other.value

    def __lt__(self, other):
        return self.value < other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return "<%s: %s>" % (type(self).__name__, self.value)

    __str__ = __repr__


MIN_LONG = -(2**63)
MAX_LONG = 2**63 - 1


class HashToken(Token):
    """A token of a hashing partitioner (an int; the server writes it in decimal)."""

    @classmethod
    def from_string(cls, token_string):
        return cls(int(token_string))


class Murmur3Token(HashToken):
    """A token of ``Murmur3Partitioner`` (the hash computed by the engine)."""

    def __init__(self, token):
        self.value = int(token)

    @classmethod
    def hash_fn(cls, key):
        h = murmur3(bytes(key))
        # The partitioner never gives the minimum, which marks the ring's start.
        return MAX_LONG if h == MIN_LONG else h


class MD5Token(HashToken):
    """A RandomPartitioner token: the MD5 of the key as a non-negative int."""

    @classmethod
    def hash_fn(cls, key):
        if isinstance(key, str):
            key = key.encode("utf-8")
        return abs(int.from_bytes(hashlib.md5(key).digest(), "big", signed=True))


class BytesToken(Token):
    """A ByteOrderedPartitioner token: the key's bytes (the server writes them in hex)."""

    @classmethod
    def from_string(cls, token_string):
        if isinstance(token_string, (bytes, bytearray)):
            token_string = token_string.decode("ascii")
        return cls(bytes.fromhex(token_string))


class TokenMap:
    """Tokens to hosts, and replicas per keyspace (classic ``TokenMap``).

    Built by hand, ``TokenMap(token_class, token_to_host_owner, ring, metadata)``, it
    computes a keyspace's replicas from its replication strategy (in
    ``metadata.keyspaces``) when first asked, as the classic driver does. The cluster's own
    token map (``cluster.metadata.token_map``) is an ``_EngineTokenMap`` (a subclass), which asks
    the engine."""

    token_class: type | None = None
    token_to_host_owner: dict | None = None
    tokens_to_hosts_by_ks: dict | None = None
    ring: list | None = None
    _metadata = None

    def __init__(self, token_class, token_to_host_owner, all_tokens, metadata):
        self.token_class = token_class
        self.ring = all_tokens
        self.token_to_host_owner = token_to_host_owner
        self.tokens_to_hosts_by_ks = {}
        self._metadata = metadata
        self._rebuild_lock = threading.RLock()

    def rebuild_keyspace(self, keyspace, build_if_absent=False):
        """Computes the keyspace's replicas of every ring token into
        ``tokens_to_hosts_by_ks[keyspace]``: when absent with ``build_if_absent``, when
        present without it (an unknown keyspace gets nothing)."""
        with self._rebuild_lock:
            current = self.tokens_to_hosts_by_ks.get(keyspace)
            if (current is None) != bool(build_if_absent):
                return
            try:
                ks_meta = self._metadata.keyspaces.get(keyspace)
                if ks_meta:
                    self.tokens_to_hosts_by_ks[keyspace] = self.replica_map_for_keyspace(ks_meta)
            except Exception:
                # A strategy that cannot place replicas must not fail requests: none, until rebuilt.
                self.tokens_to_hosts_by_ks[keyspace] = {}
                log.exception("Failed creating a token map for keyspace '%s'", keyspace)

    def replica_map_for_keyspace(self, ks_metadata):
        strategy = ks_metadata.replication_strategy
        return strategy.make_token_replica_map(self.token_to_host_owner, self.ring) if strategy else None

    def remove_keyspace(self, keyspace):
        self.tokens_to_hosts_by_ks.pop(keyspace, None)

    def get_replicas(self, keyspace, token):
        """The replicas of ``token`` (a :class:`Token`): those of the first ring token at or
        after it (a ring token ends the range it owns), wrapping around."""
        replica_map = self.tokens_to_hosts_by_ks.get(keyspace)
        if replica_map is None:
            self.rebuild_keyspace(keyspace, build_if_absent=True)
            replica_map = self.tokens_to_hosts_by_ks.get(keyspace)
        if not replica_map:
            return []
        i = bisect.bisect_left(self.ring, token)
        return replica_map[self.ring[i % len(self.ring)]]


class _EngineTokenMap(TokenMap):
    """The cluster's token map: a snapshot of the engine's ring, whose replicas are the
    engine's (the keyspace's replication strategy applied as the engine's router does)."""

    token_class = Murmur3Token

    def __init__(self, topology, ring):
        TokenMap.__init__(
            self, Murmur3Token, {Murmur3Token(t): host for t, host in ring}, [Murmur3Token(t) for t, _ in ring], None
        )
        self._topology = topology
        self._values = [t for t, _ in ring]

    def get_replicas(self, keyspace, token):
        if not self.ring:
            return []
        i = bisect.bisect_left(self._values, token.value)
        owner = self._values[i % len(self._values)]
        return self._topology.replicas(keyspace, owner)

    def rebuild_keyspace(self, keyspace, build_if_absent=False):
        current = self.tokens_to_hosts_by_ks.get(keyspace)
        if (current is None) != bool(build_if_absent):
            return
        if keyspace not in self._topology.keyspace_names():
            return
        self.tokens_to_hosts_by_ks[keyspace] = self.replica_map_for_keyspace(keyspace)

    def replica_map_for_keyspace(self, keyspace):
        """``{ring token: [replica hosts]}`` for a keyspace (``keyspace`` may be its name or
        its ``KeyspaceMetadata``), by the engine's replica computation."""
        name = getattr(keyspace, "name", keyspace)
        return {token: self._topology.replicas(name, token.value) for token in self.ring}


class Topology:
    """Hosts and tokens from the engine, through a live session of ``cluster``."""

    def __init__(self, cluster, metadata, token_enabled=True):
        self._cluster = cluster
        self._metadata = metadata
        self._token_enabled = token_enabled
        self._seen_engine = None
        self._token_map = None

    def _engine(self):
        if self._cluster.is_shutdown:
            return None
        return self._cluster._control_engine()

    def check(self):
        """Marks the schema stale when the engine's cluster state was replaced since the
        last look (cheap: one engine call)."""
        engine = self._engine()
        if engine is None:
            return
        # A different engine session (the one read before was closed) counts as changed.
        if engine.cluster_state_changed() or engine is not self._seen_engine:
            first = self._seen_engine is None
            self._seen_engine = engine
            self._token_map = None
            if not first and self.follows_schema_events():
                self._metadata._mark_stale()

    def follows_schema_events(self):
        """False with a negative ``schema_event_refresh_window``: the schema is then read
        again only by ``Cluster.refresh_*_metadata`` and after the cluster's own changes."""
        window = getattr(self._cluster, "schema_event_refresh_window", 0)
        return window is None or window >= 0

    def await_schema_agreement(self, wait):
        """Whether every node reports one schema version within ``wait`` seconds."""
        engine = self._engine()
        if engine is None:
            return False
        return engine.await_schema_agreement(max(float(wait or 0), 0.001)) is not None

    def control_host(self):
        """The host the cluster reads its metadata from (``get_control_connection_host``)."""
        return self._cluster.get_control_connection_host()

    def all_hosts(self):
        engine = self._engine()
        if engine is None:
            return []
        hosts = list(engine.nodes())
        for host in hosts:
            if host.release_version is None and host.is_up:
                self._read_release_version(host)
        return hosts

    def _read_release_version(self, host):
        """A host's Cassandra version, asked of the host itself once (its system.local)."""
        try:
            rows = self._cluster._metadata_fetch("SELECT release_version FROM system.local", host=host)
        except Exception:
            return  # asked again at the next listing
        if rows:
            host.release_version = rows[0]["release_version"]

    def get_host(self, endpoint_or_address, port=None):
        address = getattr(endpoint_or_address, "address", endpoint_or_address)
        port = getattr(endpoint_or_address, "port", port)
        for host in self.all_hosts():
            if host.address == address and (port is None or host.endpoint.port == port):
                return host
        return None

    def keyspace_names(self):
        return set(self._metadata.keyspaces)

    def replicas(self, keyspace, token_value):
        engine = self._engine()
        return [] if engine is None else list(engine.replicas(keyspace, token_value))

    def get_replicas(self, keyspace, key):
        if not self._token_enabled:
            return []
        return self.replicas(keyspace, Murmur3Token.hash_fn(key))

    @property
    def token_map(self):
        if not self._token_enabled:
            # As classic with token_metadata_enabled=False: a map without tokens, whose
            # get_replicas() is empty.
            if self._token_map is None:
                self._token_map = TokenMap(Murmur3Token, {}, [], self._metadata)
            return self._token_map
        self.check()
        if self._token_map is None:
            engine = self._engine()
            if engine is None:
                return None
            self._token_map = _EngineTokenMap(self, engine.token_ring())
        return self._token_map
