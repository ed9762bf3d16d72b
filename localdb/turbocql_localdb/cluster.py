"""Several local Cassandra nodes: a cluster on consecutive loopback addresses.

:func:`make_cluster` validates a cluster's options and lays out its nodes (nothing runs);
:class:`LocalCluster` starts, stops, kills and reports them one by one or all together;
:func:`start_cluster`, :func:`find_cluster`, :func:`cluster_status` and :func:`stop_cluster`
are the module-level API (re-exported as ``localdb.X``) that ``turbocql localdb`` and the test
fixtures use.

A cluster of N nodes lives in one base directory (default ``<cache>/cluster-<first address>``,
``...-<port>`` for a native port other than 9042) holding ``cluster.json`` (its settings) and
one ordinary node directory per node (``node1/``, ``node2/``, ...). Node k listens on the
first address + k - 1 (all on the same native and storage ports), has its JMX port on
127.0.0.1 at 7200 + the last byte of its address, and runs GossipingPropertyFileSnitch with
its own ``cassandra-rackdc.properties``: the nodes are split into datacenters dc1..dcD in
contiguous blocks (earlier DCs get the extra nodes) and, within a DC, over racks rack1..rackR
round-robin. The first node is the only seed. Nodes are started one after the other, each
once the one before answers CQL.

This module builds, loads and finds clusters; the layout's pure helpers are in
:mod:`.cluster_layout`, the :class:`LocalCluster` class and its nodes' life in
:mod:`.cluster_life`. Every name of both is re-exported here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .cluster_layout import (  # noqa: F401 - re-exported: cluster's names stay importable from here
    DEFAULT_CLUSTER_HEAP,
    DEFAULT_CLUSTER_NODES,
    DEFAULT_FIRST_ADDRESS,
    JMX_PORT_BASE,
    cluster_dir,
    jmx_port_for,
    node_addresses,
    split_datacenters,
)
from .cluster_life import (  # noqa: F401 - re-exported: cluster's names stay importable from here
    DOWN,
    SEED_ATTEMPTS,
    STOPPED,
    UP,
    LocalCluster,
    NodeStatus,
)
from .node import (
    CLUSTER_FILE,
    DAEMON_CLASS,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    DIR_MARKER,
    EXIT_NOT_RUNNING,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    _resolve_tls,
    make_node,
)
from .process import _cmdline

# The settings that fix a cluster's layout: a running or existing cluster cannot change them.
_TOPOLOGY = ("nodes", "dcs", "racks", "first_address", "port", "storage_port")


# --------------------------------------------------------------------------
# Building and loading


def make_cluster(
    nodes: int = DEFAULT_CLUSTER_NODES,
    dcs: int = 1,
    racks: int = 1,
    first_address: str = DEFAULT_FIRST_ADDRESS,
    heap: str = DEFAULT_CLUSTER_HEAP,
    dir: str | os.PathLike | None = None,
    *,
    port: int = DEFAULT_PORT,
    storage_port: int | None = None,
    auth: bool = False,
    version: str = DEFAULT_VERSION,
    commitlog: str = "periodic",
    tls: bool = False,
    require_client_auth: bool = False,
) -> LocalCluster:
    """Validate a cluster's options and lay out its nodes (nothing is started).

    ``tls``: every node's native port speaks TLS only, with one CA for the cluster (in its
    ``tls/``) and a certificate per node; ``require_client_auth`` implies it."""
    placement = split_datacenters(nodes, dcs, racks)
    addresses = node_addresses(first_address, nodes)
    base = Path(dir if dir is not None else cluster_dir(first_address, port)).expanduser().absolute()
    members = []
    for k, (address, (dc, rack)) in enumerate(zip(addresses, placement, strict=True), 1):
        n = make_node(
            base / f"node{k}",
            port,
            heap,
            auth,
            address=address,
            storage_port=storage_port,
            version=version,
            commitlog=commitlog,
            tls=tls,
            require_client_auth=require_client_auth,
        )
        n.name, n.datacenter, n.rack, n.jmx_port = f"node{k}", dc, rack, jmx_port_for(address)
        members.append(n)
    seed = members[0]
    for n in members:
        n.seeds = (f"{seed.address}:{seed.storage_port}",)
    return LocalCluster(
        dir=base,
        nodes=members,
        dcs=dcs,
        racks=racks,
        first_address=addresses[0],
        port=port,
        storage_port=members[0].storage_port,
        heap=members[0].heap,
        auth=bool(auth),
        version=version,
        commitlog=commitlog,
        tls=members[0].tls,
        require_client_auth=members[0].require_client_auth,
    )


def _saved_settings(base: Path) -> dict | None:
    try:
        saved = json.loads((base / CLUSTER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def load_cluster(dir: str | os.PathLike) -> LocalCluster | None:
    """The cluster saved in ``dir`` (its ``cluster.json``) with its nodes' pids, or None."""
    base = Path(dir).expanduser().absolute()
    saved = _saved_settings(base)
    if saved is None:
        return None
    keys = (
        "nodes",
        "dcs",
        "racks",
        "first_address",
        "heap",
        "port",
        "storage_port",
        "auth",
        "version",
        "commitlog",
        "tls",
        "require_client_auth",
    )
    try:
        cluster = make_cluster(dir=base, **{k: saved[k] for k in keys if k in saved})
    except LocalDBError as e:
        raise LocalDBError(f"unreadable {base / CLUSTER_FILE}: {e}", EXIT_USAGE) from None
    return cluster.refresh()


def _running_cluster_dirs() -> list[Path]:
    """The base directories of clusters whose nodes run (found from the daemons' command lines)."""
    proc = Path("/proc")
    found: list[Path] = []
    if not (proc / "self").exists():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        args = _cmdline(int(entry.name)) or []
        if DAEMON_CLASS not in args:
            continue
        for a in args:
            if a.startswith(DIR_MARKER):
                base = Path(a[len(DIR_MARKER) :]).parent
                if (base / CLUSTER_FILE).is_file() and base not in found:
                    found.append(base)
    return found


def find_cluster(
    dir: str | os.PathLike | None = None, first_address: str | None = None, port: int = DEFAULT_PORT
) -> LocalCluster | None:
    """A cluster to reuse: the one saved in ``dir``, else in the default directory for
    ``first_address`` (and ``port``), else a running cluster whose first node is at
    ``first_address`` wherever it was started. None if there is none; its nodes may be
    stopped (see :meth:`LocalCluster.is_up`)."""
    if dir is not None:
        return load_cluster(dir)
    cluster = load_cluster(cluster_dir(first_address or DEFAULT_FIRST_ADDRESS, port))
    if cluster is not None or first_address is None:
        return cluster
    for base in _running_cluster_dirs():
        saved = _saved_settings(base) or {}
        if saved.get("first_address") == first_address and saved.get("port", DEFAULT_PORT) == port:
            return load_cluster(base)
    return None


def _require(dir: str | os.PathLike | None, first_address: str | None, port: int) -> LocalCluster:
    base = Path(dir) if dir is not None else cluster_dir(first_address or DEFAULT_FIRST_ADDRESS, port)
    cluster = find_cluster(dir, first_address, port)
    if cluster is None:
        raise LocalDBError(f"no localdb cluster in {base} (no {CLUSTER_FILE})", EXIT_NOT_RUNNING)
    return cluster


def start_cluster(
    nodes: int | None = None,
    dcs: int | None = None,
    racks: int | None = None,
    first_address: str | None = None,
    heap: str | None = None,
    dir: str | os.PathLike | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    port: int | None = None,
    storage_port: int | None = None,
    auth: bool | None = None,
    tls: bool | None = None,
    require_client_auth: bool | None = None,
    version: str | None = None,
    commitlog: str | None = None,
    out=None,
) -> LocalCluster:
    """Start a local cluster (or the nodes of it that do not run) and wait until every node answers CQL.

    An option left at None is the one saved in the directory's ``cluster.json``, else the
    default (3 nodes, 1 DC, 1 rack, 127.0.0.1, 768M heap per node, port 9042). A directory
    that holds a cluster keeps its layout: asking for other nodes/DCs/racks/addresses/ports
    there raises :class:`LocalDBError`. ``timeout`` is per node. ``out`` is a ``print``-like
    callable for progress. Returns the :class:`LocalCluster`; its ``started`` names the
    nodes started by this call. ``tls``/``require_client_auth``: see :func:`make_cluster`
    (``cluster.tls_files()`` has the CA and the client certificate)."""
    wanted = {
        "nodes": nodes,
        "dcs": dcs,
        "racks": racks,
        "first_address": first_address,
        "port": port,
        "storage_port": storage_port,
    }
    base = Path(
        dir if dir is not None else cluster_dir(first_address or DEFAULT_FIRST_ADDRESS, port or DEFAULT_PORT)
    ).expanduser()
    if (base / "node.json").exists() and not (base / CLUSTER_FILE).exists():
        raise LocalDBError(f"{base} holds a single localdb node, not a cluster; use another --dir", EXIT_USAGE)
    saved = _saved_settings(base) or {}
    if saved:
        differ = [
            f"{k} {wanted[k]} (it has {saved.get(k)})"
            for k in _TOPOLOGY
            if wanted[k] is not None and k in saved and wanted[k] != saved[k]
        ]
        if differ:
            raise LocalDBError(
                f"{base} already holds a cluster of another layout: {'; '.join(differ)}. "
                "Stop it and remove the directory, or use another --dir",
                EXIT_USAGE,
            )

    def pick(value, key, default):
        return value if value is not None else saved.get(key, default)

    tls_on, client_auth = _resolve_tls(
        tls, require_client_auth, bool(saved.get("tls")), bool(saved.get("require_client_auth"))
    )

    cluster = make_cluster(
        pick(nodes, "nodes", DEFAULT_CLUSTER_NODES),
        pick(dcs, "dcs", 1),
        pick(racks, "racks", 1),
        pick(first_address, "first_address", DEFAULT_FIRST_ADDRESS),
        pick(heap, "heap", DEFAULT_CLUSTER_HEAP),
        base,
        port=pick(port, "port", DEFAULT_PORT),
        storage_port=pick(storage_port, "storage_port", None),
        auth=pick(auth, "auth", False),
        version=pick(version, "version", DEFAULT_VERSION),
        commitlog=pick(commitlog, "commitlog", "periodic"),
        tls=tls_on,
        require_client_auth=client_auth,
    )
    return cluster.start(timeout, out=out)


def cluster_status(
    dir: str | os.PathLike | None = None, first_address: str | None = None, port: int = DEFAULT_PORT
) -> list[NodeStatus]:
    """Every node's state in the cluster of ``dir`` (or the default directory for
    ``first_address``); :class:`LocalDBError` (exit code 3) if there is no cluster there."""
    return _require(dir, first_address, port).status()


def stop_cluster(
    dir: str | os.PathLike | None = None,
    first_address: str | None = None,
    port: int = DEFAULT_PORT,
    timeout: float = STOP_TIMEOUT,
) -> list[str]:
    """Stop every node of the cluster in ``dir``; the names of the nodes that ran ([] if none, or no cluster)."""
    cluster = find_cluster(dir, first_address, port)
    return cluster.stop(timeout) if cluster is not None else []
