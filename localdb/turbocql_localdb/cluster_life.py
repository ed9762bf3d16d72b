"""A local cluster's nodes at run time: :class:`LocalCluster` and :class:`NodeStatus`.

:class:`LocalCluster` holds a cluster's directory, settings and nodes, and starts, stops,
kills and reports them one by one or all together: nodes start one after the other, each once
the one before answers CQL (a node that could not reach the seed is started again, up to
:data:`SEED_ATTEMPTS` times), and a failed start stops the nodes it started; stopping signals
every node at once. A node's state is :data:`UP`, :data:`DOWN` or :data:`STOPPED`.
:mod:`.cluster` builds a :class:`LocalCluster` and re-exports every name (``localdb.X`` too).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from pathlib import Path

from .classpath import find_java, resolve_classpath
from .cluster_layout import DEFAULT_CLUSTER_HEAP, DEFAULT_FIRST_ADDRESS
from .node import (
    CLUSTER_FILE,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    EXIT_FAILED,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    TLSFiles,
    _locked,
    _write_atomic,
)
from .probe import check_ports_free, cql_answers, wait_for_cql
from .process import _is_our_daemon, _launch, _wait_gone, running_pid

# Starts of one node when it could not reach the seed (see LocalCluster._start_one).
SEED_ATTEMPTS = 3

UP = "UP"  # the process runs and answers CQL
DOWN = "DOWN"  # the process runs but does not answer CQL (starting, stopping, hung)
STOPPED = "STOPPED"  # no process


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
