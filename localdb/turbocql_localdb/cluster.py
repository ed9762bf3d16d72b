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
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import os
import signal
import time
from pathlib import Path

from .classpath import find_java, resolve_classpath
from .node import (
    CLUSTER_FILE,
    DAEMON_CLASS,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    DIR_MARKER,
    EXIT_FAILED,
    EXIT_NOT_RUNNING,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    TLSFiles,
    _locked,
    _resolve_tls,
    _write_atomic,
    cache_base,
    make_node,
)
from .probe import check_ports_free, cql_answers, wait_for_cql
from .process import _cmdline, _is_our_daemon, _launch, _wait_gone, running_pid

DEFAULT_CLUSTER_NODES = 3
# Measured here: three nodes with 768 MB of heap each start in about 40 s and fit beside
# a single 1-2 GB node in 24 GB.
DEFAULT_CLUSTER_HEAP = "768M"
# Starts of one node when it could not reach the seed (see LocalCluster._start_one).
SEED_ATTEMPTS = 3
DEFAULT_FIRST_ADDRESS = "127.0.0.1"
# A node's JMX port (local only, on 127.0.0.1) is JMX_PORT_BASE + the last byte of its address.
JMX_PORT_BASE = 7200

UP = "UP"  # the process runs and answers CQL
DOWN = "DOWN"  # the process runs but does not answer CQL (starting, stopping, hung)
STOPPED = "STOPPED"  # no process

# The settings that fix a cluster's layout: a running or existing cluster cannot change them.
_TOPOLOGY = ("nodes", "dcs", "racks", "first_address", "port", "storage_port")


def cluster_dir(first_address: str = DEFAULT_FIRST_ADDRESS, port: int = DEFAULT_PORT) -> Path:
    """The default base directory of a cluster: ``<cache>/cluster-<first address>``.

    ``<cache>`` is ``$XDG_CACHE_HOME/turbocql/localdb`` (``~/.cache/...``); a native port
    other than 9042 adds ``-<port>``."""
    name = f"cluster-{first_address}" if port == DEFAULT_PORT else f"cluster-{first_address}-{port}"
    return cache_base() / name


def jmx_port_for(address: str) -> int:
    """The JMX port of the node at ``address``: 7200 + the address's last byte."""
    return JMX_PORT_BASE + int(address.rsplit(".", 1)[1])


def node_addresses(first_address: str, nodes: int) -> list[str]:
    """``nodes`` consecutive loopback addresses from ``first_address`` (validated)."""
    try:
        first = ipaddress.IPv4Address(first_address)
    except ValueError:
        raise LocalDBError(f"invalid IPv4 address {first_address!r} for --first-address", EXIT_USAGE) from None
    if not first.is_loopback:
        raise LocalDBError(
            f"--first-address {first_address} is not a loopback address: a local cluster's nodes "
            "listen on 127.x.y.z (e.g. 127.0.0.11)",
            EXIT_USAGE,
        )
    last_byte = int(first) & 0xFF
    if last_byte < 1 or last_byte + nodes - 1 > 254:
        prefix = first_address.rsplit(".", 1)[0]
        raise LocalDBError(
            f"address out of range: {nodes} node(s) from {first_address} would need "
            f"{first_address}..{prefix}.{last_byte + nodes - 1}; the addresses must stay within "
            f"{prefix}.1-254 (pick a lower --first-address)",
            EXIT_USAGE,
        )
    return [str(first + i) for i in range(nodes)]


def split_datacenters(nodes: int, dcs: int = 1, racks: int = 1) -> list[tuple[str, str]]:
    """The (datacenter, rack) of each node, in node order.

    Datacenters dc1..dcD hold contiguous blocks of nodes, the earlier ones one node more when
    ``nodes`` is not a multiple of ``dcs`` (3 nodes, 2 DCs: dc1 = node1, node2; dc2 = node3);
    racks rack1..rackR go round-robin within each datacenter."""
    _check_counts(nodes, dcs, racks)
    out = []
    for dc in range(dcs):
        size = nodes // dcs + (1 if dc < nodes % dcs else 0)
        out += [(f"dc{dc + 1}", f"rack{i % racks + 1}") for i in range(size)]
    return out


def _check_counts(nodes: int, dcs: int, racks: int) -> None:
    for what, value, option in (
        ("nodes", nodes, "--nodes"),
        ("datacenters", dcs, "--dcs"),
        ("racks", racks, "--racks"),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise LocalDBError(f"invalid number of {what} {value!r} ({option}): at least 1", EXIT_USAGE)
    if dcs > nodes:
        raise LocalDBError(
            f"{dcs} datacenters need at least {dcs} nodes, not {nodes} (--dcs must not exceed --nodes)", EXIT_USAGE
        )


@dataclasses.dataclass
class NodeStatus:
    """One line of a cluster's status: ``state`` is ``UP``, ``DOWN`` or ``STOPPED``."""

    name: str
    address: str
    datacenter: str
    rack: str
    pid: int | None
    state: str


@dataclasses.dataclass
class LocalCluster:
    """A local cluster: its base directory, settings and :class:`Node` list (``node1`` first).

    ``started`` names the nodes that the call which returned it started (empty when every
    node already ran); ``start_seconds`` is how long that call took."""

    dir: Path
    nodes: list[Node]
    dcs: int = 1
    racks: int = 1
    first_address: str = DEFAULT_FIRST_ADDRESS
    port: int = DEFAULT_PORT
    storage_port: int = 7000
    heap: str = DEFAULT_CLUSTER_HEAP
    auth: bool = False
    version: str = DEFAULT_VERSION
    commitlog: str = "periodic"
    tls: bool = False
    require_client_auth: bool = False
    started: list[str] = dataclasses.field(default_factory=list)
    start_seconds: float | None = None

    @property
    def settings_file(self) -> Path:
        return self.dir / CLUSTER_FILE

    @property
    def contact_points(self) -> list[str]:
        """Every node's address (for a driver's contact points)."""
        return [n.address for n in self.nodes]

    @property
    def already_running(self) -> bool:
        return not self.started

    def settings(self) -> dict:
        return {
            "nodes": len(self.nodes),
            "dcs": self.dcs,
            "racks": self.racks,
            "first_address": self.first_address,
            "port": self.port,
            "storage_port": self.storage_port,
            "heap": self.heap,
            "auth": self.auth,
            "version": self.version,
            "commitlog": self.commitlog,
            "tls": self.tls,
            "require_client_auth": self.require_client_auth,
            # For people reading the file; loading recomputes them from the settings above.
            "members": [
                {
                    "name": n.name,
                    "address": n.address,
                    "datacenter": n.datacenter,
                    "rack": n.rack,
                    "jmx_port": n.jmx_port,
                }
                for n in self.nodes
            ],
        }

    def tls_files(self) -> TLSFiles | None:
        """The TLS files (None without TLS): every node has its own ``node_keystore`` but they
        share one CA and one client certificate; this is node1's set (``ca``, ``client_cert``,
        ``client_key`` serve for any node)."""
        return self.nodes[0].tls_files()

    def node(self, k: int | str) -> Node:
        """Node ``k``: its number (1 = node1) or its name."""
        for i, n in enumerate(self.nodes, 1):
            if k == i or k == n.name or (isinstance(k, str) and k.isdigit() and int(k) == i):
                return n
        raise LocalDBError(
            f"no node {k!r}: the cluster in {self.dir} has nodes 1..{len(self.nodes)} (node1..node{len(self.nodes)})",
            EXIT_USAGE,
        )

    # ---- state

    def refresh(self) -> LocalCluster:
        """Set every node's ``pid`` (None for a node that does not run)."""
        for n in self.nodes:
            n.pid = running_pid(n) if n.dir.exists() else None
        return self

    def state(self, k: int | str) -> str:
        """``UP``, ``DOWN`` or ``STOPPED`` for node ``k`` (see :data:`UP`)."""
        n = self.node(k)
        n.pid = running_pid(n) if n.dir.exists() else None
        if n.pid is None:
            return STOPPED
        try:
            ctx = n.ssl_context()
        except (OSError, ValueError):  # its TLS files are not there (yet)
            return DOWN
        return UP if cql_answers(n.address, n.port, ssl_context=ctx) else DOWN

    def status(self) -> list[NodeStatus]:
        """Every node's name, address, datacenter, rack, pid and state."""
        out = []
        for n in self.nodes:
            state = self.state(n.name or "")
            out.append(NodeStatus(n.name or "", n.address, n.datacenter or "", n.rack or "", n.pid, state))
        return out

    def is_up(self) -> bool:
        """True if every node is UP."""
        return all(s.state == UP for s in self.status())

    def wait_for_state(self, k: int | str, state: str, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Poll node ``k`` until its state is ``state`` (True) or ``timeout`` passes (False)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.state(k) == state:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)

    # ---- life

    def start(self, timeout: float = DEFAULT_TIMEOUT, out=None) -> LocalCluster:
        """Start every node that does not run, in order, each once the one before answers CQL.

        ``timeout`` is per node. If a node fails to start, the nodes this call started are
        stopped again and :class:`LocalDBError` is raised."""
        say = out or (lambda *a, **kw: None)
        self.dir.mkdir(parents=True, exist_ok=True)
        with _locked(self.dir / ".lock"):
            t0 = time.monotonic()
            # A taken port is reported before any node starts, not after the first ones did.
            for n in self.nodes:
                if running_pid(n) is None:
                    check_ports_free(n)
            created = not self.settings_file.exists()
            _write_atomic(self.settings_file, json.dumps(self.settings(), indent=2) + "\n")
            self.started = []
            tools: list[str] = []
            try:
                for n in self.nodes:
                    if self._start_one(n, timeout, say, tools):
                        self.started.append(n.name or "")
            except BaseException:
                if self.started:
                    say(f"stopping the node(s) started meanwhile: {', '.join(self.started)}")
                    with contextlib.suppress(LocalDBError):
                        _stop_nodes([self.node(name) for name in self.started], STOP_TIMEOUT)
                elif created:
                    # Nothing of this new cluster ever ran: do not tie the directory to its layout.
                    with contextlib.suppress(OSError):
                        self.settings_file.unlink()
                raise
            self.start_seconds = time.monotonic() - t0
        return self

    def start_node(self, k: int | str, timeout: float = DEFAULT_TIMEOUT, out=None) -> Node:
        """Start node ``k`` alone with its saved settings (it rejoins the ring); a no-op if it runs."""
        say = out or (lambda *a, **kw: None)
        n = self.node(k)
        with _locked(self.dir / ".lock"):
            t0 = time.monotonic()
            started = self._start_one(n, timeout, say, [])
            n.already_running = not started
            n.start_seconds = time.monotonic() - t0
        return n

    def _start_one(self, n: Node, timeout: float, say, tools: list[str]) -> bool:
        """Start ``n`` unless it runs (then wait for its CQL); True if this call started it."""
        n.dir.mkdir(parents=True, exist_ok=True)
        with _locked(n.dir / ".lock"):
            pid = running_pid(n)
            if pid is not None:
                n.pid = pid
                n.already_running = True
                alive = lambda: _is_our_daemon(pid, n)  # noqa: E731
                if not wait_for_cql(n.address, n.port, timeout, alive=alive, ssl_context=n.ssl_context()):
                    raise LocalDBError(
                        f"{n.name} (pid {pid}) runs but CQL does not answer on {n.address}:{n.port}; see {n.log_path}",
                        EXIT_FAILED,
                    )
                say(f"{n.name} already runs at {n.address}:{n.port} (pid {pid})")
                return False
            if not tools:
                tools += [find_java(), resolve_classpath(self.version, out=say)]
            for attempt in range(1, SEED_ATTEMPTS + 1):
                try:
                    _launch(n, tools[0], tools[1], timeout, say)
                    break
                except LocalDBError as e:
                    # A joining node gives up if the seed does not answer its first gossip
                    # round within the (short) ring delay, which a loaded machine can miss:
                    # that node is started again; any other failure stands.
                    if "Unable to contact any seeds" not in str(e) or attempt == SEED_ATTEMPTS:
                        raise
                    say(f"{n.name} could not reach the seed (attempt {attempt} of {SEED_ATTEMPTS}); starting it again")
            say(f"{n.name} is up at {n.address}:{n.port} ({n.datacenter}/{n.rack}) in {n.start_seconds:.1f} s")
            return True

    def stop_node(self, k: int | str, timeout: float = STOP_TIMEOUT) -> bool:
        """Stop node ``k`` cleanly (SIGTERM, then SIGKILL after ``timeout``); False if it did not run."""
        with _locked(self.dir / ".lock"):
            return bool(_stop_nodes([self.node(k)], timeout))

    def kill_node(self, k: int | str) -> bool:
        """SIGKILL node ``k`` (a crash, for failover tests); False if it did not run."""
        with _locked(self.dir / ".lock"):
            return bool(_stop_nodes([self.node(k)], 0.0, sig=signal.SIGKILL))

    def stop(self, timeout: float = STOP_TIMEOUT) -> list[str]:
        """Stop every node (all at once: SIGTERM, then SIGKILL after ``timeout``).

        Returns the names of the nodes that were running."""
        with _locked(self.dir / ".lock"):
            return _stop_nodes(self.nodes, timeout)


def _stop_nodes(nodes: list[Node], timeout: float, sig: int = signal.SIGTERM) -> list[str]:
    """Signal every running node of ``nodes`` at once, wait, SIGKILL the ones left after ``timeout``.

    Only daemons started for those nodes' directories are ever signalled."""
    with contextlib.ExitStack() as stack:
        running: list[tuple[Node, int]] = []
        for n in nodes:
            if not n.dir.exists():
                continue
            stack.enter_context(_locked(n.dir / ".lock"))
            pid = running_pid(n)
            if pid is not None and _is_our_daemon(pid, n):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
                running.append((n, pid))
        deadline = time.monotonic() + timeout
        for n, pid in running:
            if not _wait_gone(pid, n, max(0.0, deadline - time.monotonic())):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        left = [f"{n.name} (pid {pid})" for n, pid in running if not _wait_gone(pid, n, 10.0)]
        for n, pid in running:
            if _is_our_daemon(pid, n):
                continue
            n.pid = None
            with contextlib.suppress(OSError):
                n.pid_file.unlink()
        if left:
            raise LocalDBError(f"could not stop {', '.join(left)}", EXIT_FAILED)
        return [n.name or "" for n, _ in running]


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
