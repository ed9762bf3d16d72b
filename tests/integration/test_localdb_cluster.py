"""Integration tests of a local multi-node cluster (`turbocql localdb start --nodes 3 --dcs 2`).

They use the `multidc_cluster` fixture (tests/integration/conftest.py): three real Cassandra
nodes on 127.0.0.11-13, dc1 = node1 and node2, dc2 = node3, found running or started once
for the whole session. The classic driver checks what the nodes say about themselves.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import turbocql_localdb as localdb

# The first test of a session may start the cluster (about 30-60 s): more than the default timeout.
pytestmark = [pytest.mark.multinode, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = [
    ("node1", "127.0.0.11", "dc1", "rack1"),
    ("node2", "127.0.0.12", "dc1", "rack1"),
    ("node3", "127.0.0.13", "dc2", "rack1"),
]


@contextlib.contextmanager
def classic_session(address: str = "127.0.0.11"):
    """A classic-driver session connected to every node (round robin, no DC filter)."""
    pytest.importorskip("cassandra")
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy

    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
    classic = Cluster([address], protocol_version=4, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        session = classic.connect()
        # The pools of the hosts found after the control connection open in the background:
        # wait for one per node, so that `execute(..., host=h)` has a connection to use.
        deadline = time.monotonic() + 60
        while len(session.get_pool_state()) < len(EXPECTED):
            assert time.monotonic() < deadline, f"pools: {session.get_pool_state()}"
            time.sleep(0.05)
        yield classic, session
    finally:
        classic.shutdown()


def _cli(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "turbocql", "localdb", *argv], capture_output=True, text=True, env=env, timeout=60
    )


def _gossip_of(classic, session, address: str, seen_from: str = "127.0.0.11"):
    """What the node at ``seen_from`` says about ``address`` in gossip (``system_views.gossip_info``)."""
    host = next(h for h in classic.metadata.all_hosts() if h.address == seen_from)
    query = "SELECT address, generation, status_with_port FROM system_views.gossip_info"
    for row in session.execute(query, host=host):
        if str(row.address) == address:
            return row
    return None


def test_three_nodes_up_in_their_datacenters(multidc_cluster):
    cluster = multidc_cluster
    assert [(n.name, n.address, n.datacenter, n.rack) for n in cluster.nodes] == EXPECTED
    assert [(s.name, s.state) for s in cluster.status()] == [(n, "UP") for n, *_ in EXPECTED]
    assert all(s.pid for s in cluster.status())
    with classic_session() as (classic, session):
        hosts = {h.address: h for h in classic.metadata.all_hosts()}
        assert {a: (h.datacenter, h.rack) for a, h in hosts.items()} == {a: (dc, r) for _, a, dc, r in EXPECTED}
        # Each node about itself (system.local), and node1 about the others (system.peers_v2).
        for _, address, dc, rack in EXPECTED:
            row = session.execute(
                "SELECT data_center, rack, broadcast_address FROM system.local", host=hosts[address]
            ).one()
            assert (str(row.broadcast_address), row.data_center, row.rack) == (address, dc, rack)
        peers = session.execute("SELECT peer, data_center, rack FROM system.peers_v2", host=hosts["127.0.0.11"])
        assert sorted((str(p.peer), p.data_center, p.rack) for p in peers) == [
            ("127.0.0.12", "dc1", "rack1"),
            ("127.0.0.13", "dc2", "rack1"),
        ]


def test_cli_status_lists_every_node(multidc_cluster):
    res = _cli("status", "--dir", str(multidc_cluster.dir))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 node(s), 2 DC(s)" in res.stdout
    rows = {line.split()[0]: line.split() for line in res.stdout.splitlines() if line.strip().startswith("node")}
    for node in multidc_cluster.nodes:
        assert rows[node.name] == [node.name, node.address, node.datacenter, node.rack, str(node.pid), "UP"]
    # one node, from the default directory's address when the cluster lives there
    if multidc_cluster.dir == localdb.cluster_dir("127.0.0.11"):
        res = _cli("status", "--first-address", "127.0.0.11", "--node", "3")
        assert res.returncode == 0, res.stdout + res.stderr
        assert "node3" in res.stdout and "node1" not in res.stdout.split("NODE", 1)[1]


def test_stop_and_start_a_node(multidc_cluster):
    cluster = multidc_cluster
    with classic_session() as (classic, session):
        before = _gossip_of(classic, session, "127.0.0.12")
        assert before is not None and before.status_with_port.startswith("NORMAL")
    try:
        assert cluster.stop_node(2) is True
        assert cluster.state(2) == "STOPPED"
        assert cluster.node(2).pid is None
        assert [cluster.state(1), cluster.state(3)] == ["UP", "UP"]
        assert not localdb.cql_answers("127.0.0.12", cluster.port)
        res = _cli("status", "--dir", str(cluster.dir))
        assert res.returncode == 1, res.stdout + res.stderr
        assert any(line.split()[:1] == ["node2"] and line.split()[-1] == "STOPPED" for line in res.stdout.splitlines())
    finally:
        node = cluster.start_node(2, timeout=300)
    assert not node.already_running and node.pid
    assert cluster.wait_for_state(2, "UP", timeout=60)
    # It rejoined the ring: node1 gossips with the new incarnation (a new generation), NORMAL.
    # The new generation can reach node1 before its STATUS_WITH_PORT does (null meanwhile).
    deadline = time.monotonic() + 60
    with classic_session() as (classic, session):
        while True:
            after = _gossip_of(classic, session, "127.0.0.12")
            if (
                after is not None
                and after.generation > before.generation
                and (after.status_with_port or "").startswith("NORMAL")
            ):
                break
            assert time.monotonic() < deadline, f"node1 still gossips {after} about node2"
            time.sleep(0.2)
    assert [s.state for s in cluster.status()] == ["UP"] * 3
