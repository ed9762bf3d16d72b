"""Where requests went: the per-connection request counts of each node's
``system_views.clients``, read with the classic driver.

Each node has one row per client connection, with the client's address and port,
``request_count`` and the STARTUP options (``client_options``). A :class:`RequestCounter`
holds one classic session per node, white-listed to that node (its own connections are
never counted: only connections picked by a *selector* are). Two selectors:

* :meth:`RequestCounter.turbocql_connections`: the connections of one turbocql session.
  The engine (the scylla crate) sends ``DRIVER_NAME`` "ScyllaDB Rust Driver" and a
  ``SESSION_ID`` that is the same on every connection of a session; its control connection
  alone also sends ``DRIVER_CONFIG``, and is left out (its requests are topology and
  schema reads, not routed by a load-balancing policy). The session is found as the one
  SESSION_ID that appeared, on a connection of this very process, after a snapshot taken
  before it connected.
* :meth:`RequestCounter.classic_connections`: the pool connections of a classic session
  (the classic driver sends no identity of its own in STARTUP: they are known by their
  local ports), its cluster's control connection left out.

Requests that no policy routes still reach the selected connections now and then: the
engine's keepalive (an OPTIONS every 30 s on each connection), the classic driver's
heartbeat, schema-agreement checks. :data:`NOISE` bounds them per node and per window.
"""

import contextlib
import os
import time
from collections import Counter

ADDRESSES = ("127.0.0.11", "127.0.0.12", "127.0.0.13")
PORT = 9042

# Requests a node may serve on a tracked connection in one short measuring window without
# any routing decision sending them there (keepalives, heartbeats, schema agreement).
NOISE = 3


def _own_ports():
    """Local ports of this process's TCP connections (Linux: /proc), or None if unknown."""
    try:
        inodes = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        ports = set()
        for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
            try:
                with open(table) as f:
                    next(f)
                    for line in f:
                        fields = line.split()
                        if fields[9] in inodes:
                            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
            except OSError:
                continue
        return ports
    except OSError:
        return None


class Selector:
    """Which rows of ``system_views.clients`` are the tracked client's connections."""

    def __init__(self, name, match):
        # match(node address, row) -> bool
        self.name = name
        self.match = match

    def __repr__(self):
        return "<Selector %s>" % self.name


class RequestCounter:
    """Request counts per node, on the connections a :class:`Selector` picks."""

    def __init__(self, addresses=ADDRESSES, port=PORT):
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import WhiteListRoundRobinPolicy

        self.addresses = tuple(addresses)
        self._skipped = set()
        self._clusters = []
        self._sessions = {}
        for address in self.addresses:
            profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([address]), request_timeout=30)
            c = Cluster(
                [address],
                port=port,
                protocol_version=4,
                execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                schema_metadata_enabled=False,
                token_metadata_enabled=False,
            )
            self._clusters.append(c)
            self._sessions[address] = c.connect()

    def close(self):
        for c in self._clusters:
            c.shutdown()

    def session(self, address):
        """The classic session white-listed to the node at ``address``."""
        return self._sessions[address]

    @contextlib.contextmanager
    def without(self, *addresses):
        """Within the block, the nodes at ``addresses`` are not read (they are down): they
        count no requests."""
        self._skipped |= set(addresses)
        try:
            yield self
        finally:
            self._skipped -= set(addresses)

    def rows(self):
        """``{node address: [row, ...]}``: every client connection of every node."""
        out = {}
        for address, session in self._sessions.items():
            if address in self._skipped:
                out[address] = []
                continue
            out[address] = list(
                session.execute(
                    "SELECT address, port, driver_name, request_count, client_options FROM system_views.clients"
                )
            )
        return out

    # ---- selectors

    def turbocql_session_ids(self):
        """The SESSION_IDs of the turbocql (scylla crate) connections now open on any node."""
        return {
            (row.client_options or {}).get("SESSION_ID")
            for rows in self.rows().values()
            for row in rows
            if (row.client_options or {}).get("SESSION_ID")
        }

    def turbocql_connections(self, before, timeout=30.0, nodes=None):
        """The selector of the turbocql session that connected after ``before`` (the result
        of :meth:`turbocql_session_ids` taken before ``connect()``): waits until that
        session has a connection, besides its control connection, on each of ``nodes``
        (default: every node), so that no pool is still opening while requests are
        counted."""
        nodes = self.addresses if nodes is None else tuple(nodes)
        deadline = time.monotonic() + timeout
        while True:
            own = _own_ports()
            rows = self.rows()
            fresh = Counter()
            for node_rows in rows.values():
                for row in node_rows:
                    sid = (row.client_options or {}).get("SESSION_ID")
                    if sid and sid not in before and (own is None or row.port in own):
                        fresh[sid] += 1
            if len(fresh) == 1:
                (sid,) = fresh
                selector = Selector("turbocql session %s" % sid, _turbocql_match(sid))
                if all(any(selector.match(n, row) for row in rows[n]) for n in nodes):
                    return selector
            if time.monotonic() > deadline:
                raise AssertionError(
                    "no single new turbocql session with connections to %s within %.0f s: %r" % (nodes, timeout, fresh)
                )
            time.sleep(0.1)

    def classic_connections(self, session, nodes=None, timeout=30.0):
        """The selector of a connected classic session's pool connections (its cluster's
        control connection is not one of them): waits until it has one on each of
        ``nodes`` (default: none required). The classic driver sends no identity of its
        own in STARTUP, so its connections are known by their local ports."""
        nodes = () if nodes is None else tuple(nodes)
        deadline = time.monotonic() + timeout
        while True:
            ports = _classic_pool_ports(session)
            if all(any(address == n for address, _ in ports) for n in nodes):
                return Selector("classic session %x" % id(session), _classic_match(ports))
            if time.monotonic() > deadline:
                raise AssertionError("the classic session has no connection to each of %s: %s" % (nodes, ports))
            time.sleep(0.1)

    # ---- counting

    def snapshot(self, selector):
        """``{(node, client port): request_count}`` of the selected connections."""
        return {
            (address, row.port): row.request_count
            for address, rows in self.rows().items()
            for row in rows
            if selector.match(address, row)
        }

    def deltas(self, selector, before, after=None):
        """Requests per node between two snapshots (a connection opened in between counts
        from 0)."""
        if after is None:
            after = self.snapshot(selector)
        out = dict.fromkeys(self.addresses, 0)
        for (address, port), count in after.items():
            out[address] += count - before.get((address, port), 0)
        return out

    def measure(self, selector, work):
        """Runs ``work()`` and returns the requests each node served meanwhile on the
        selected connections, as ``{node address: count}``."""
        before = self.snapshot(selector)
        work()
        return self.deltas(selector, before)


def _turbocql_match(sid):
    def match(address, row):
        options = row.client_options or {}
        return options.get("SESSION_ID") == sid and "DRIVER_CONFIG" not in options

    return match


def _classic_match(ports):
    def match(address, row):
        return (address, row.port) in ports

    return match


def _classic_pool_ports(session):
    """``{(node address, local port)}`` of a classic session's pool connections."""
    ports = set()
    for host, pool in list(session._pools.items()):
        conns = getattr(pool, "_connections", None)
        if conns is None:
            conns = [getattr(pool, "_connection", None)]
        for conn in list(conns):
            sock = getattr(conn, "_socket", None)
            if sock is None or getattr(conn, "is_closed", False):
                continue
            try:
                ports.add((host.address, sock.getsockname()[1]))
            except OSError:
                continue
    return frozenset(ports)


def classic_cluster(contact_points=("127.0.0.11",), **kwargs):
    """A classic ``Cluster`` (protocol v4, no schema metadata) for the comparisons."""
    from cassandra.cluster import Cluster

    kwargs.setdefault("protocol_version", 4)
    kwargs.setdefault("schema_metadata_enabled", False)
    return Cluster(list(contact_points), **kwargs)


def receiving(deltas, minimum=NOISE + 1):
    """The nodes that served at least ``minimum`` requests (more than noise)."""
    return {address for address, n in deltas.items() if n >= minimum}
