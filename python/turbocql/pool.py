"""Hosts, under the classic driver's names (``cassandra.pool``).

A :class:`Host` is one node of the cluster as the engine sees it: its address, datacenter,
rack, host id and whether the engine holds connections to it (``is_up``). Each node has
one ``Host`` object, kept here by host id and updated in place, so the same object is
handed to load-balancing predicates, listeners and ``cluster.metadata.all_hosts()``.
Connection pools themselves live in the engine (the scylla crate).
"""

import functools
import threading
import uuid

from turbocql import (
    AuthenticationFailed,  # noqa: F401 - a classic name of cassandra.pool
    UnsupportedOperation,
)
from turbocql.connection import (
    ConnectionException,  # noqa: F401 - a classic name of cassandra.pool
    DefaultEndPoint,
    EndPoint,
)
from turbocql.policies import HostDistance  # noqa: F401 - a classic name of cassandra.pool


class NoConnectionsAvailable(Exception):
    """No connection to the host could take the request."""


@functools.total_ordering
class Host:
    """One node of the cluster (classic ``cassandra.pool.Host``), ordered and compared by
    endpoint."""

    broadcast_address = None
    broadcast_port = None
    broadcast_rpc_address = None
    broadcast_rpc_port = None
    listen_address = None
    listen_port = None
    conviction_policy = None
    is_up = None
    release_version = None
    host_id = None
    dse_version = None
    dse_workload = None
    dse_workloads = None

    def __init__(self, endpoint, conviction_policy_factory=None, datacenter=None, rack=None, host_id=None):
        if endpoint is None:
            raise ValueError("endpoint may not be None")
        self.endpoint = endpoint if isinstance(endpoint, EndPoint) else DefaultEndPoint(endpoint)
        if conviction_policy_factory is not None:
            self.conviction_policy = conviction_policy_factory(self)
        self.host_id = host_id
        self.set_location_info(datacenter, rack)

    @property
    def address(self):
        """The node's IP address (the one the driver connects to)."""
        return self.endpoint.address

    @property
    def datacenter(self):
        return self._datacenter

    @property
    def rack(self):
        return self._rack

    def set_location_info(self, datacenter, rack):
        self._datacenter = datacenter
        self._rack = rack

    def set_up(self):
        self.is_up = True

    def set_down(self):
        self.is_up = False

    def __eq__(self, other):
        if isinstance(other, Host):
            return self.endpoint == other.endpoint
        return self.endpoint.address == other

    def __hash__(self):
        return hash(self.endpoint)

    def __lt__(self, other):
        return self.endpoint < other.endpoint

    def __str__(self):
        return str(self.endpoint)

    def __repr__(self):
        dc = (" %s" % (self._datacenter,)) if self._datacenter else ""
        return "<%s: %s%s>" % (self.__class__.__name__, self.endpoint, dc)


_hosts: dict = {}
_hosts_lock = threading.Lock()


def _host_of(host_id, address, port, datacenter, rack, is_up):
    """The one :class:`Host` of the node with ``host_id``, updated to what the engine
    says of it now (called by the engine, and by ``turbocql.metadata``). A host whose
    address changed keeps its object, with the new endpoint, as in the classic driver."""
    with _hosts_lock:
        host = _hosts.get(host_id)
        if host is None:
            host = Host(DefaultEndPoint(address, port), datacenter=datacenter, rack=rack, host_id=uuid.UUID(host_id))
            _hosts[host_id] = host
        else:
            _move(host, address, port)
            host.set_location_info(datacenter, rack)
        host.is_up = bool(is_up)
        return host


def _move(host, address, port):
    if host.endpoint.address != address or host.endpoint.port != port:
        host.endpoint = DefaultEndPoint(address, port)


def _host_for_event(event):
    """The :class:`Host` of an engine ``HostEvent`` (``kind``: up, down, add, remove,
    moved), updated: ``is_up`` for up, down and remove, the endpoint for moved."""
    with _hosts_lock:
        host = _hosts.get(event.host_id)
        if host is None:
            host = Host(DefaultEndPoint(event.address, event.port), host_id=uuid.UUID(event.host_id))
            _hosts[event.host_id] = host
        elif event.kind == "moved":
            _move(host, event.address, event.port)
    if event.kind == "up":
        host.is_up = True
    elif event.kind in ("down", "remove"):
        host.is_up = False
    return host


__all__ = ["Host", "NoConnectionsAvailable"]


class HostConnectionPool:
    """The classic driver's pool of connections to one host. turbocql has no such objects:
    the engine (the scylla crate) keeps the connections to each node, and
    ``Session.get_pool_state()`` reports what it knows of them. The class
    is here for imports and ``isinstance`` checks, which are always False; making one
    raises."""

    def __init__(self, *args, **kwargs):
        raise UnsupportedOperation(
            "HostConnectionPool: turbocql's engine keeps the connection pools; see Session.get_pool_state()"
        )
