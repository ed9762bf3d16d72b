"""The soak's node faults (``run_soak.py``): kill -9, SIGSTOP or a clean stop of one node of
the local cluster, each restored (and every node answering CQL again) whatever happens; the
driver's view of each fault from its host events.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from benchmarks.soak_load import NO_FAULT, Events, Soak

FAULTS = ("kill", "freeze", "stop")
FAULT_NODE = {"kill": 2, "freeze": 2, "stop": 3}
FAULT_TEXT = {
    "kill": "kill -9 of node2 (dc1), restarted after {down:g} s",
    "freeze": "SIGSTOP of node2 (dc1) for {freeze:g} s, then SIGCONT",
    "stop": "clean stop (SIGTERM) of node3 (dc2), restarted after {down:g} s",
}


class Faults:
    """Injects the faults and always restores: every node back and answering CQL."""

    def __init__(self, cluster, args, soak: Soak, events: Events):
        self.cluster, self.args, self.soak, self.events = cluster, args, soak, events
        self.done: list[dict] = []
        self.frozen_pid: int | None = None
        self.down_node: int | None = None

    def inject(self, kind: str) -> None:
        soak, args, cluster = self.soak, self.args, self.cluster
        node = FAULT_NODE[kind]
        address = cluster.node(node).address
        window = len(self.done) + 1
        entry: dict = {"window": window, "kind": kind, "node": f"node{node}", "address": address}
        entry["injected"] = FAULT_TEXT[kind].format(down=args.down_s, freeze=args.freeze_s)
        self.done.append(entry)
        print(f"[{soak.now():7.1f} s] fault {window}: {entry['injected']}", file=sys.stderr, flush=True)
        soak.window = window
        entry["at_s"] = round(soak.now(), 2)
        if kind == "freeze":
            pid = cluster.refresh().node(node).pid
            if pid is None:
                raise RuntimeError(f"node{node} has no pid")
            self.frozen_pid = pid
            os.kill(pid, signal.SIGSTOP)
            soak.stop.wait(args.freeze_s)
            self.restore()
        else:
            self.down_node = node
            if kind == "kill":
                cluster.kill_node(node)
            else:
                cluster.stop_node(node)
            entry["down_s"] = round(soak.now(), 2)
            soak.stop.wait(args.down_s)
            self.restore()
        entry["restored_s"] = round(soak.now(), 2)
        print(f"[{soak.now():7.1f} s] fault {window}: restored", file=sys.stderr, flush=True)
        soak.stop.wait(args.grace)
        entry["window_end_s"] = round(soak.now(), 2)
        soak.window = NO_FAULT
        # The driver's view (a frozen node is put last in query plans, not called down).
        seen_down = self.events.first(address, "down", entry["at_s"])
        seen_up = self.events.first(address, "up", entry["at_s"])
        entry["driver_saw_down_after_s"] = None if seen_down is None else round(seen_down - entry["at_s"], 2)
        entry["driver_saw_up_after_restore_s"] = None if seen_up is None else round(seen_up - entry["restored_s"], 2)

    def restore(self) -> None:
        """SIGCONT the frozen node, start the stopped one; wait until it answers CQL."""
        if self.frozen_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.frozen_pid, signal.SIGCONT)
            self.frozen_pid = None
        if self.down_node is not None:
            self.cluster.start_node(self.down_node, timeout=300)
            self.down_node = None

    def ensure_whole(self) -> bool:
        """Every node UP (answering CQL): thaw and start what is not; True if all are."""
        with contextlib.suppress(Exception):
            self.restore()
        ok = True
        for k in range(1, len(self.cluster.nodes) + 1):
            n = self.cluster.refresh().node(k)
            if n.pid is not None and _stopped(n.pid):
                os.kill(n.pid, signal.SIGCONT)
            if self.cluster.state(k) != "UP":
                try:
                    self.cluster.start_node(k, timeout=300)
                except Exception as e:  # noqa: BLE001 (reported; the others are still restored)
                    print(f"could not start node{k}: {e}", file=sys.stderr)
            ok = self.cluster.wait_for_state(k, "UP", timeout=300) and ok
        return ok


def _stopped(pid: int) -> bool:
    """True if the process is stopped (SIGSTOP): state T in /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False
