"""Cluster metadata under the classic driver's names (``cassandra.metadata``).

:class:`Metadata` is what ``Cluster.metadata`` holds: the schema (``keyspaces``, read from
``system_schema`` and ``system_virtual_schema`` when the cluster connects, on
``Cluster.refresh_*_metadata`` and, after a schema change was reported, on the next access)
and the topology (hosts, token map, replicas: left to ``Metadata._topology``). The schema's
objects: :class:`KeyspaceMetadata`, :class:`TableMetadata`, :class:`ColumnMetadata`,
:class:`IndexMetadata`, :class:`TriggerMetadata`, :class:`MaterializedViewMetadata`,
:class:`UserType`, :class:`Function`, :class:`Aggregate`, and the replication strategies
(defined in ``turbocql._metadata.replication``, re-exported here). Each renders the CQL that
recreates it (``as_cql_query()``, ``export_as_string()``, from ``turbocql._metadata.schema_cql``);
the rows are read and turned into these objects by ``turbocql._metadata.schema_read``, imported on
the first read.
"""

import random
import re
import threading
import time

from turbocql import (  # noqa: F401 - classic names of cassandra.metadata
    ConsistencyLevel,
    InvalidRequest,
    SignatureDescriptor,
    Unauthorized,
    UnsupportedOperation,
    _engine,
    _loggers,
)
from turbocql._metadata.replication import (  # noqa: F401 - classic names of cassandra.metadata
    REPLICATION_STRATEGY_CLASS_PREFIX,
    EverywhereStrategy,
    LocalStrategy,
    NetworkTopologyStrategy,
    ReplicationFactor,
    ReplicationStrategy,
    SimpleStrategy,
    _UnknownStrategy,
)
from turbocql._metadata.schema_cql import (  # noqa: F401 - classic names of cassandra.metadata
    _table_extensions,
    aggregate_cql,
    cql_keywords,
    cql_keywords_reserved,
    cql_keywords_unreserved,
    escape_name,
    function_cql,
    index_cql,
    is_valid_name,
    keyspace_cql,
    keyspace_export,
    map_literal,
    maybe_escape_name,
    protect_name,
    protect_names,
    protect_value,
    table_cql,
    table_export,
    trigger_cql,
    user_type_cql,
    user_types_in_order,
    view_cql,
)
from turbocql._metadata.schema_model import (  # noqa: F401 - classic names of cassandra.metadata
    Aggregate,
    ColumnMetadata,
    Function,
    IndexMetadata,
    KeyspaceMetadata,
    MaterializedViewMetadata,
    RegisteredTableExtension,
    RLACTableExtension,
    TableExtensionInterface,
    TableMetadata,
    TableMetadataV3,
    TriggerMetadata,
    UserType,
    _signature,
)
from turbocql._metadata.topology import (  # noqa: F401 - classic names of cassandra.metadata
    MAX_LONG,
    MIN_LONG,
    BytesToken,
    HashToken,
    MD5Token,
    Murmur3Token,
    Token,
    TokenMap,
)
from turbocql._util.homes import publish as _publish
from turbocql.connection import EndPoint  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.cqltypes import trim_if_startswith  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.encoder import Encoder  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.marshal import varint_unpack  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.murmur3 import murmur3  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.policies import HostDistance  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.protocol import QueryMessage  # noqa: F401 - a classic name of cassandra.metadata
from turbocql.query import _pack_routing_key, bind_params, dict_factory  # noqa: F401 - classic names of cassandra.metadata
from turbocql.util import Version  # noqa: F401 - a classic name of cassandra.metadata

log = _loggers.metadata

# -- schema objects ------------------------------------------------------------------------


# -- Metadata ------------------------------------------------------------------------------

_TARGET_TYPES = ("keyspace", "table", "view", "type", "function", "aggregate")

# More pending targets than this and the next access reads the whole schema instead.
_MAX_STALE_TARGETS = 32

# After a failed lazy re-read, accesses use the schema already read for this long (seconds)
# before trying again.
_RETRY_DELAY = 2.0


class Metadata:
    """The cluster's schema and topology, as the classic driver's ``Metadata``.

    ``keyspaces`` maps each keyspace's name to its :class:`KeyspaceMetadata`. It is read when
    the cluster connects (unless ``schema_metadata_enabled=False``) and by
    ``Cluster.refresh_*_metadata``; after ``_mark_stale()`` (a schema change reported by
    the server), the next access of ``keyspaces`` reads what changed first. Reading never
    happens per request.

    The topology (``all_hosts()``, ``get_host()``, ``get_replicas()``, ``token_map``) comes
    from ``self._topology``: empty (no hosts, no token map) while it is None.
    """

    dbaas = False

    def __init__(self) -> None:
        self.cluster_name = None
        self.partitioner = None
        self.dbaas = False
        self._keyspaces: dict = {}
        self._fetch = None
        self._schema_enabled = False
        self._token_enabled = False
        self._agreement_wait = 10
        # The topology half (hosts, token map, replicas): None until it is set.
        self._topology = None
        # Held while reading the schema (a second reader waits, then finds it read).
        self._lock = threading.RLock()
        # Held only to set or take the staleness marks, never during I/O: _mark_stale does
        # not wait for a read in progress.
        self._stale_lock = threading.Lock()
        # Set by _mark_stale: _stale says some of the schema must be read again on the next
        # access, _stale_all that all of it must, _stale_targets which objects.
        self._stale = False
        self._stale_all = False
        self._stale_targets: dict = {}
        self._retry_at = 0.0
        # Hosts added by hand (add_or_return_host), by endpoint: the hosts of a Metadata
        # that no cluster's engine feeds.
        self._hosts: dict = {}
        self._hosts_lock = threading.Lock()

    # -- schema --------------------------------------------------------------------------

    @property
    def keyspaces(self):
        """A dict of keyspace names to :class:`KeyspaceMetadata`."""
        if self._topology is not None:
            self._topology.check()
        if self._stale:
            self._refresh_stale()
        return self._keyspaces

    @keyspaces.setter
    def keyspaces(self, value):
        self._keyspaces = value

    def export_schema_as_string(self):
        """CQL that recreates the whole schema (every keyspace's ``export_as_string()``)."""
        return "\n\n".join(ks.export_as_string() for ks in self.keyspaces.values())

    def _attach(self, fetch, schema_enabled=True, token_enabled=True, max_schema_agreement_wait=None):
        """Called by ``Cluster.connect`` on the first session: ``fetch(query, params)``
        runs a CQL query on a live session of the cluster and returns its rows as dicts.
        Reads the cluster's name and partitioner, and the schema if ``schema_enabled``.
        ``max_schema_agreement_wait`` defaults to the cluster's (``fetch``'s owner)."""
        self._fetch = fetch
        self._schema_enabled = schema_enabled
        self._token_enabled = token_enabled
        if max_schema_agreement_wait is None:
            max_schema_agreement_wait = getattr(getattr(fetch, "__self__", None), "max_schema_agreement_wait", 10)
        self._agreement_wait = max_schema_agreement_wait
        try:
            rows = fetch("SELECT cluster_name, partitioner FROM system.local WHERE key = 'local'")
            if rows:
                self.cluster_name = rows[0].get("cluster_name")
                self.partitioner = rows[0].get("partitioner")
        except Exception:
            log.warning("Could not read the cluster's name and partitioner", exc_info=True)
        if schema_enabled:
            try:
                self._read()
            except Exception:
                log.warning("Could not read the schema metadata; will try again on access", exc_info=True)
                self._mark_stale()

    def _read(self, keyspace=None, target_type=None, name=None, follow=False):
        """Reads schema and puts it into ``keyspaces`` (see :func:`turbocql._metadata.schema_read.read_into`).
        A whole read covers the changes marked so far: it takes the marks, and puts them
        back if it fails."""
        if self._fetch is None:
            from turbocql import DriverException

            raise DriverException("Schema metadata cannot be read before the cluster is connected")
        from turbocql._metadata.schema_read import read_into

        with self._lock:
            marks = self._take_stale() if keyspace is None else (False, [])
            try:
                read_into(self, keyspace, target_type, name, follow)
            except BaseException:
                self._restore_stale(*marks)
                raise

    def _refresh(self, keyspace=None, target_type=None, name=None, max_schema_agreement_wait=None):
        """Reads schema again, after waiting up to ``max_schema_agreement_wait`` seconds
        (default: the cluster's) for the nodes to agree on it: everything, or one keyspace
        (with all its objects), or one ``"table"``, ``"view"``, ``"type"``, ``"function"`` or
        ``"aggregate"`` of it (a function or aggregate named by a descriptor with ``name``
        and ``argument_types``, a signature string, or a bare name for every overload).
        Works with ``schema_metadata_enabled=False`` too, as the classic driver's."""
        if target_type is not None:
            if target_type.lower() not in _TARGET_TYPES:
                raise ValueError("Unknown schema target_type: '%s'" % target_type)
            target_type = target_type.lower()
        if self._fetch is not None:
            wait = self._agreement_wait if max_schema_agreement_wait is None else max_schema_agreement_wait
            self._wait_for_schema_agreement(wait)
        self._read(keyspace, target_type, name)

    def _mark_stale(self, keyspace=None, target_type=None, name=None, argument_types=None):
        """Notes that the server reported a schema change; the next access of ``keyspaces``
        reads it. Cheap, no I/O, never waits for a read in progress: callable from any thread.

        ``_mark_stale()``: everything. ``_mark_stale(ks)``: keyspace ``ks`` and all it holds.
        ``_mark_stale(ks, "keyspace")``: the keyspace's own settings (replication...).
        ``_mark_stale(ks, "table" | "view" | "type", name)``: that object.
        ``_mark_stale(ks, "function" | "aggregate", name, argument_types)``: that overload
        (every overload of ``name`` without ``argument_types``).
        """
        if not self._schema_enabled or self._fetch is None:
            return
        tt = target_type.lower() if target_type else None
        if tt in ("function", "aggregate") and argument_types is not None:
            name = (name, tuple(argument_types))
        with self._stale_lock:
            if keyspace is None or len(self._stale_targets) >= _MAX_STALE_TARGETS:
                self._stale_all = True
            else:
                self._stale_targets[(keyspace, tt, name)] = None
            self._stale = True

    def _take_stale(self):
        """The staleness marks ``(everything?, [targets])``, cleared."""
        with self._stale_lock:
            marks = self._stale_all, list(self._stale_targets)
            self._stale = self._stale_all = False
            self._stale_targets = {}
        return marks

    def _restore_stale(self, stale_all, targets):
        """Puts back marks taken by :meth:`_take_stale` for a read that failed."""
        if not stale_all and not targets:
            return
        with self._stale_lock:
            self._stale_all = self._stale_all or stale_all
            for t in targets:
                self._stale_targets[t] = None
            self._stale = True

    def _refresh_stale(self, await_agreement=True):
        """Reads what :meth:`_mark_stale` marked, after waiting for the nodes to agree on
        the schema (not when the caller's engine request has just waited). On failure the
        schema read before stays, and the next access after ``_RETRY_DELAY`` seconds tries
        again."""
        with self._lock:
            if not self._stale or time.monotonic() < self._retry_at:
                return
            stale_all, targets = self._take_stale()
            try:
                if await_agreement:
                    self._wait_for_schema_agreement(self._agreement_wait)
                if stale_all:
                    self._read(follow=True)
                else:
                    for target in targets:
                        self._read(*target)
            except Exception:
                log.warning("Could not read the changed schema; keeping the schema read before", exc_info=True)
                self._restore_stale(stale_all, targets)
                self._retry_at = time.monotonic() + _RETRY_DELAY

    def _own_schema_change(self, query, session_keyspace, read_now=True):
        """A session's statement that may have changed the schema (CREATE, ALTER or DROP)
        returned no rows; the engine calls this before it returns the result. As the
        classic driver after its own SCHEMA_CHANGE result, what changed is read before
        the statement returns (``read_now``; the asyncio session only marks it, and the
        next access reads it), so that dicts taken from ``keyspaces`` before show it too.
        Not with ``schema_metadata_enabled=False``. With a negative
        ``schema_event_refresh_window`` the changed keyspace alone is read, else whatever
        the server reported changed since the last look (this change included: the crate
        refreshed its metadata before the statement returned). A failed read is logged, and
        the next access tries again; the statement's result stands."""
        if not self._schema_enabled or self._fetch is None:
            return
        if self._topology is not None and self._topology.follows_schema_events():
            self._topology.check()
        else:
            from turbocql._metadata.schema_change import NOT_SCHEMA, changed_keyspace

            text = getattr(query, "query_string", None) or getattr(
                getattr(query, "prepared_statement", None), "query_string", query
            )
            keyspace = changed_keyspace(text if isinstance(text, str) else "", session_keyspace)
            if keyspace is NOT_SCHEMA:
                return
            self._mark_stale(keyspace)
        if read_now:
            # The engine waited for schema agreement before it returned the statement's
            # result (up to max_schema_agreement_wait, as classic): not a second time.
            self._refresh_stale(await_agreement=False)

    def wait_for_schema_agreement(self, wait_time=10):
        """Waits up to ``wait_time`` seconds until every node reports one schema version;
        returns whether they do (also ``cluster.control_connection.wait_for_schema_agreement``)."""
        return self._wait_for_schema_agreement(wait_time)

    def _wait_for_schema_agreement(self, wait):
        """Waits up to ``wait`` seconds until the nodes report one schema version (peers the
        topology knows to be down left out); returns whether they do."""
        if self._topology is not None:
            # The engine asks every node it holds connections to (its control connection
            # knows which are down), not whichever node a query lands on.
            agreed = self._topology.await_schema_agreement(wait)
            if not agreed and self._fetch is not None and wait and wait > 0:
                from turbocql._metadata.schema_read import log_disagreement

                log_disagreement(self._fetch, self._topology.control_host())
            return agreed
        from turbocql._metadata.schema_read import wait_for_schema_agreement

        return wait_for_schema_agreement(self._fetch, wait, self._peer_is_down)

    def _peer_is_down(self, row):
        """Whether the topology knows the peer of a ``system.peers`` row to be down."""
        if self._topology is None:
            return False
        address = row.get("rpc_address") or row.get("peer")
        host = self.get_host(str(address)) if address is not None else None
        return host is not None and getattr(host, "is_up", None) is False

    # Token map upkeep, for the topology half.

    def _keyspace_added(self, name):
        hook = getattr(self._topology, "_keyspace_added", None)
        if hook is not None:
            hook(name)

    def _keyspace_updated(self, name):
        hook = getattr(self._topology, "_keyspace_updated", None)
        if hook is not None:
            hook(name)

    def _keyspace_removed(self, name):
        hook = getattr(self._topology, "_keyspace_removed", None)
        if hook is not None:
            hook(name)

    # -- topology: through self._topology, empty until it is set --------------------------

    @property
    def token_map(self):
        """The ring's token map (``None`` until the topology is known)."""
        return None if self._topology is None else self._topology.token_map

    def all_hosts(self):
        """Every known host: the engine's once the cluster has connected; before, or for
        a ``Metadata`` of no cluster, those given to :meth:`add_or_return_host`."""
        if self._topology is not None:
            return self._topology.all_hosts()
        with self._hosts_lock:
            return list(self._hosts.values())

    def get_host(self, endpoint_or_address, port=None):
        """The host at an endpoint or address (and port), or None."""
        if self._topology is not None:
            return self._topology.get_host(endpoint_or_address, port)
        if isinstance(endpoint_or_address, EndPoint):
            return self._hosts.get(endpoint_or_address)
        for host in list(self._hosts.values()):
            if host.address == endpoint_or_address and (port is None or host.endpoint.port == port):
                return host
        return None

    def add_or_return_host(self, host):
        """``(host, True)`` once ``host`` is added, or ``(the host already at its endpoint,
        False)``. A connected cluster's hosts are the engine's, which finds them itself:
        there only a host it knows is returned (else UnsupportedOperation)."""
        if self._topology is not None:
            known = self._topology.get_host(host.endpoint)
            if known is None:
                raise UnsupportedOperation("add_or_return_host: the engine discovers the cluster's hosts itself")
            return known, False
        with self._hosts_lock:
            known = self._hosts.get(host.endpoint)
            if known is not None:
                return known, False
            self._hosts[host.endpoint] = host
            return host, True

    def remove_host(self, host):
        """Forgets a host given to :meth:`add_or_return_host`; whether it was known. A
        connected cluster's hosts are the engine's (UnsupportedOperation)."""
        if self._topology is not None:
            raise UnsupportedOperation("remove_host: the engine keeps the cluster's hosts itself")
        with self._hosts_lock:
            return self._hosts.pop(host.endpoint, None) is not None

    def can_support_partitioner(self):
        """Always True: the Murmur3 hash the classic driver may lack is always here (the engine's)."""
        return True

    def _refresh_nodes(self):
        """Forgets the token map built from the engine's view, so the next use builds it
        again (hosts are read from the engine at each call)."""
        if self._topology is not None:
            self._topology._token_map = None

    def get_replicas(self, keyspace, key):
        """The hosts that replicate the partition key ``key`` (serialized) of ``keyspace``."""
        return [] if self._topology is None else self._topology.get_replicas(keyspace, key)


NO_VALID_REPLICA = object()
"""Marks a key with no live replica (classic ``group_keys_by_replica``)."""

valid_cql3_word_re = re.compile(r"^[a-z][0-9a-z_]*$")
"""A CQL name that needs no quotes (lower case, starting with a letter)."""


class _RegisteredExtensionType(type):
    """The classic metaclass of :class:`RegisteredTableExtension`; here subclasses register
    themselves (``__init_subclass__``), and ``_extension_registry`` is the same registry:
    extension name -> class."""

    _extension_registry = _table_extensions


def get_schema_parser(connection, server_version, dse_version, timeout, metadata_request_timeout=None):
    """The classic driver's schema parser for a server version. turbocql reads the schema
    itself (``turbocql._metadata.schema_read``) over the engine's connections, so there is no parser
    to hand out: raises UnsupportedOperation. ``cluster.metadata`` and
    ``cluster.refresh_schema_metadata()`` give the schema."""
    raise UnsupportedOperation(
        "get_schema_parser: turbocql reads the schema itself; use cluster.metadata "
        "(cluster.refresh_*_metadata() to read it again)"
    )


def group_keys_by_replica(session, keyspace, table, keys):
    """Groups partition keys (tuples of the partition-key values of ``keyspace.table``) by
    a live replica of each, as the classic helper: a random local replica when there is
    one (the default load-balancing policy's distance), else any live replica, else under
    :data:`NO_VALID_REPLICA`. Returns ``{host: [key, ...]}``."""
    cluster = session.cluster
    partition_key = cluster.metadata.keyspaces[keyspace].tables[table].partition_key
    types = [column.cql_type for column in partition_key]
    distance = cluster.profile_manager.default.load_balancing_policy.distance
    keys_per_host: dict = {}
    for key in keys:
        parts = [_engine.encode(cql_type, value) for cql_type, value in zip(types, key)]
        routing_key = _pack_routing_key(parts)
        replicas = cluster.metadata.get_replicas(keyspace, routing_key)
        valid = [host for host in replicas if host.is_up and distance(host) == HostDistance.LOCAL]
        if not valid:
            valid = [host for host in replicas if host.is_up]
        target = random.choice(valid) if valid else NO_VALID_REPLICA
        keys_per_host.setdefault(target, []).append(key)
    return keys_per_host


# This module is the home of the classic names of cassandra.metadata that live in
# turbocql._metadata (reprs, docs and pickles name turbocql.metadata), and of
# EverywhereStrategy (turbocql's, documented here). The CQL-rendering helpers it imports
# (keyspace_cql, table_export...) are not its API and stay where they are.
_publish(
    __name__,
    [
        "Aggregate",
        "BytesToken",
        "ColumnMetadata",
        "EverywhereStrategy",
        "Function",
        "HashToken",
        "IndexMetadata",
        "KeyspaceMetadata",
        "LocalStrategy",
        "MD5Token",
        "MaterializedViewMetadata",
        "Murmur3Token",
        "NetworkTopologyStrategy",
        "RLACTableExtension",
        "RegisteredTableExtension",
        "ReplicationFactor",
        "ReplicationStrategy",
        "SimpleStrategy",
        "TableExtensionInterface",
        "TableMetadata",
        "Token",
        "TokenMap",
        "TriggerMetadata",
        "UserType",
        "_UnknownStrategy",
        "escape_name",
        "is_valid_name",
        "maybe_escape_name",
        "protect_name",
        "protect_names",
        "protect_value",
    ],
)
