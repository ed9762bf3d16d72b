"""Unit tests of turbocql_localdb.cluster: a cluster's layout, its files, its options, and its
nodes' life (start, stop, kill, status, a failed start) with a fake java."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from .helpers import _parse, cli, free_port, localdb

# Addresses of the fake clusters (the fake java binds only their native port).
FIRST = "127.0.0.201"


# --------------------------------------------------------------------------
# Layout


@pytest.mark.parametrize(
    "nodes, dcs, racks, expected",
    [
        (1, 1, 1, ["dc1:rack1"]),
        (3, 1, 1, ["dc1:rack1"] * 3),
        (3, 2, 1, ["dc1:rack1", "dc1:rack1", "dc2:rack1"]),
        (3, 3, 1, ["dc1:rack1", "dc2:rack1", "dc3:rack1"]),
        (4, 2, 2, ["dc1:rack1", "dc1:rack2", "dc2:rack1", "dc2:rack2"]),
        (5, 2, 2, ["dc1:rack1", "dc1:rack2", "dc1:rack1", "dc2:rack1", "dc2:rack2"]),
        (3, 1, 3, ["dc1:rack1", "dc1:rack2", "dc1:rack3"]),
        (2, 1, 5, ["dc1:rack1", "dc1:rack2"]),
        (7, 3, 2, ["dc1:rack1", "dc1:rack2", "dc1:rack1", "dc2:rack1", "dc2:rack2", "dc3:rack1", "dc3:rack2"]),
    ],
)
def test_split_datacenters(nodes, dcs, racks, expected):
    assert [f"{dc}:{rack}" for dc, rack in localdb.split_datacenters(nodes, dcs, racks)] == expected


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"nodes": 0}, "nodes 0"),
        ({"nodes": -2}, "--nodes"),
        ({"nodes": 3, "dcs": 0}, "--dcs"),
        ({"nodes": 3, "dcs": 4}, "--dcs must not exceed --nodes"),
        ({"nodes": 3, "racks": 0}, "--racks"),
        ({"nodes": 3, "first_address": "127.0.0.253"}, "address out of range"),
        ({"nodes": 2, "first_address": "127.0.0.0"}, "address out of range"),
        ({"nodes": 3, "first_address": "10.0.0.1"}, "loopback"),
        ({"nodes": 3, "first_address": "127.1"}, "invalid IPv4 address"),
        ({"nodes": 3, "heap": "lots"}, "heap"),
        ({"nodes": 3, "commitlog": "never"}, "commitlog"),
        ({"nodes": 3, "version": "4.1.0"}, "5.0"),
        ({"nodes": 3, "port": 70000}, "port"),
    ],
)
def test_make_cluster_rejects_bad_options(kwargs, fragment, tmp_path):
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.make_cluster(dir=tmp_path / "c", **kwargs)
    assert e.value.exit_code == 2
    assert fragment in str(e.value)


def test_make_cluster_layout(env):
    cluster = localdb.make_cluster(3, 2, 1, "127.0.0.11")
    assert cluster.dir == env / "cache" / "turbocql" / "localdb" / "cluster-127.0.0.11"
    assert cluster.heap == localdb.DEFAULT_CLUSTER_HEAP == "768M"
    assert [n.name for n in cluster.nodes] == ["node1", "node2", "node3"]
    assert [n.dir for n in cluster.nodes] == [cluster.dir / f"node{k}" for k in (1, 2, 3)]
    assert cluster.contact_points == ["127.0.0.11", "127.0.0.12", "127.0.0.13"]
    assert [(n.datacenter, n.rack) for n in cluster.nodes] == [("dc1", "rack1"), ("dc1", "rack1"), ("dc2", "rack1")]
    assert [n.jmx_port for n in cluster.nodes] == [7211, 7212, 7213]
    assert {(n.port, n.storage_port, n.heap) for n in cluster.nodes} == {(9042, 7000, "768M")}
    assert {n.seeds for n in cluster.nodes} == {("127.0.0.11:7000",)}
    assert cluster.node(2) is cluster.node("node2") is cluster.node("2") is cluster.nodes[1]
    with pytest.raises(localdb.LocalDBError, match=r"nodes 1\.\.3") as e:
        cluster.node(4)
    assert e.value.exit_code == 2
    # defaults: 127.0.0.1.., another port in the directory's name
    assert localdb.make_cluster(2).contact_points == ["127.0.0.1", "127.0.0.2"]
    assert localdb.cluster_dir("127.0.0.21", 9043).name == "cluster-127.0.0.21-9043"
    other = localdb.make_cluster(2, first_address="127.0.0.21", port=9043, heap="1g", commitlog="batch")
    assert other.dir.name == "cluster-127.0.0.21-9043"
    assert {(n.port, n.storage_port, n.heap, n.commitlog) for n in other.nodes} == {(9043, 7001, "1G", "batch")}


def test_cluster_node_yaml(tmp_path):
    cluster = localdb.make_cluster(3, 2, 1, "127.0.0.11", dir=tmp_path / "c", commitlog="batch")
    for n in cluster.nodes:
        lines = localdb.render_yaml(n).splitlines()
        assert "endpoint_snitch: GossipingPropertyFileSnitch" in lines
        assert "num_tokens: 8" in lines
        assert "allocate_tokens_for_local_replication_factor: 1" in lines
        assert '      - seeds: "127.0.0.11:7000"' in lines
        assert f"listen_address: {n.address}" in lines
        assert f"rpc_address: {n.address}" in lines
        assert "native_transport_port: 9042" in lines
        assert "storage_port: 7000" in lines
        assert "commitlog_sync: batch" in lines
        assert f'commitlog_directory: "{n.dir}/commitlog"' in lines
        keys = [line.split(":")[0] for line in lines if line and not line.startswith((" ", "#"))]
        assert len(keys) == len(set(keys))
    assert localdb.render_rackdc(cluster.nodes[2]).splitlines()[1:] == ["dc=dc2", "rack=rack1"]
    # a single node keeps its own settings
    single = localdb.render_yaml(localdb.make_node(tmp_path / "n")).splitlines()
    assert "endpoint_snitch: SimpleSnitch" in single and "num_tokens: 16" in single
    assert not any(line.startswith("allocate_tokens") for line in single)


def test_cluster_node_files_and_command(tmp_path):
    cluster = localdb.make_cluster(3, 2, 2, "127.0.0.11", dir=tmp_path / "c")
    n = cluster.nodes[1]
    localdb.write_config(n)
    assert n.rackdc_path == n.dir / "conf" / "cassandra-rackdc.properties"
    assert "dc=dc1\nrack=rack2\n" in n.rackdc_path.read_text()
    saved = json.loads(n.settings_file.read_text())
    assert (saved["name"], saved["datacenter"], saved["rack"], saved["jmx_port"]) == ("node2", "dc1", "rack2", 7212)
    assert saved["seeds"] == ["127.0.0.11:7000"]
    loaded = localdb.status(n.dir)  # the node alone, from its node.json
    assert (loaded.name, loaded.datacenter, loaded.rack, loaded.jmx_port, loaded.seeds) == (
        "node2",
        "dc1",
        "rack2",
        7212,
        ("127.0.0.11:7000",),
    )
    cmd = localdb.java_command(n, "/usr/bin/java", "/m2/cassandra-all-5.0.6.jar")
    assert "-Dcassandra.jmx.local.port=7212" in cmd
    assert f"-Dcassandra-rackdc.properties={n.rackdc_path.as_uri()}" in cmd
    assert "-Dcassandra.ring_delay_ms=1000" in cmd
    assert "-Dcassandra.skip_wait_for_gossip_to_settle=0" in cmd
    assert "-Xmx768M" in cmd and n.marker in cmd
    assert cmd[-1] == localdb.DAEMON_CLASS
    # the single node's command has none of the cluster's flags
    single = localdb.java_command(localdb.make_node(tmp_path / "n"), "/usr/bin/java", "/m2/x.jar")
    assert not any("rackdc" in a or "ring_delay" in a or "jmx.local.port" in a for a in single)


def test_cluster_json_round_trip(tmp_path):
    cluster = localdb.make_cluster(4, 2, 2, "127.0.0.31", dir=tmp_path / "c", heap="1G", commitlog="batch")
    cluster.dir.mkdir()
    cluster.settings_file.write_text(json.dumps(cluster.settings()))
    saved = json.loads(cluster.settings_file.read_text())
    assert saved["members"][3] == {
        "name": "node4",
        "address": "127.0.0.34",
        "datacenter": "dc2",
        "rack": "rack2",
        "jmx_port": 7234,
    }
    loaded = localdb.load_cluster(cluster.dir)
    assert loaded is not None
    assert loaded.settings() == cluster.settings()
    assert [n.pid for n in loaded.nodes] == [None] * 4
    assert localdb.load_cluster(tmp_path / "nothing") is None
    assert localdb.find_cluster(first_address="127.0.0.99") is None
    assert [s.state for s in localdb.cluster_status(cluster.dir)] == ["STOPPED"] * 4
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.cluster_status(tmp_path / "nothing")
    assert e.value.exit_code == 3
    assert localdb.stop_cluster(tmp_path / "nothing") == []
    assert localdb.stop_cluster(cluster.dir) == []


def test_layout_of_an_existing_cluster_is_kept(tmp_path):
    cluster = localdb.make_cluster(3, 2, 1, "127.0.0.31", dir=tmp_path / "c")
    cluster.dir.mkdir()
    cluster.settings_file.write_text(json.dumps(cluster.settings()))
    for kwargs in ({"nodes": 4}, {"dcs": 1}, {"first_address": "127.0.0.41"}, {"port": 9043}):
        with pytest.raises(localdb.LocalDBError, match="another layout") as e:
            localdb.start_cluster(dir=cluster.dir, **kwargs)
        assert e.value.exit_code == 2
    # a single node's directory is not a cluster's, and the other way round
    (tmp_path / "single").mkdir()
    (tmp_path / "single" / "node.json").write_text("{}")
    with pytest.raises(localdb.LocalDBError, match="single localdb node") as e:
        localdb.start_cluster(3, dir=tmp_path / "single")
    assert e.value.exit_code == 2
    with pytest.raises(localdb.LocalDBError, match="holds a localdb cluster") as e:
        localdb.start(cluster.dir)
    assert e.value.exit_code == 2


# --------------------------------------------------------------------------
# The command line


def test_cli_cluster_options():
    a = _parse("start", "--nodes", "3", "--dcs", "2", "--racks", "2", "--first-address", "127.0.0.11", "--heap", "512m")
    assert (a.nodes, a.dcs, a.racks, a.first_address, a.heap, a.node) == (3, 2, 2, "127.0.0.11", "512M", None)
    a = _parse("start", "--node", "2", "--dir", "/tmp/c", "--commitlog", "batch")
    assert (a.node, a.dir, a.commitlog) == (2, "/tmp/c", "batch")
    assert _parse("stop", "--node", "3", "--first-address", "127.0.0.11").node == 3
    assert _parse("status", "--first-address", "127.0.0.11").first_address == "127.0.0.11"
    a = _parse("kill", "--node", "1", "--dir", "/tmp/c")
    assert (a.localdb_action, a.node, a.dir) == ("kill", 1, "/tmp/c")


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["start", "--nodes", "0"], "--nodes"),
        (["start", "--nodes", "3", "--dcs", "4"], "--dcs must not exceed"),
        (["start", "--nodes", "3", "--racks", "0"], "--racks"),
        (["start", "--nodes", "3", "--first-address", "127.0.0.253"], "address out of range"),
        (["start", "--nodes", "3", "--address", "127.0.0.5"], "--first-address"),
        (["start", "--node", "2", "--nodes", "3"], "drop --nodes"),
        (["start", "--nodes", "3", "--setting", "sasi_indexes_enabled=false"], "for a single node"),
        (["kill"], "--node"),
    ],
)
def test_cli_rejects_bad_cluster_options(env, argv, fragment, capsys):
    assert cli(*argv) == 2
    assert fragment in capsys.readouterr().err
    assert not (env / "cache" / "turbocql" / "localdb" / "cluster-127.0.0.1" / "cluster.json").exists()


def test_cli_without_a_cluster(env, capsys):
    assert cli("status", "--first-address", "127.0.0.99") == 3
    assert "no localdb cluster" in capsys.readouterr().out
    assert cli("stop", "--first-address", "127.0.0.99") == 0
    assert "not running" in capsys.readouterr().out
    assert cli("stop", "--node", "2", "--first-address", "127.0.0.99") == 3
    assert cli("start", "--node", "2", "--first-address", "127.0.0.99") == 3
    assert cli("kill", "--node", "2", "--dir", str(env / "nowhere")) == 3


# --------------------------------------------------------------------------
# Life, with a fake java


@pytest.fixture
def cluster_dir(env):
    d = env / "cluster"
    yield d
    localdb.stop_cluster(d, timeout=5)  # never leave a fake daemon behind


def _start(cluster_dir, **kwargs):
    kwargs = {"nodes": 3, "dcs": 2, "first_address": FIRST, "port": free_port(), "storage_port": free_port(), **kwargs}
    return localdb.start_cluster(dir=cluster_dir, timeout=30, **kwargs)


def test_cluster_life(fake_java, cluster_dir, capsys):
    cluster = _start(cluster_dir)
    assert cluster.started == ["node1", "node2", "node3"] and not cluster.already_running
    assert cluster.start_seconds is not None
    assert all(n.pid for n in cluster.nodes)
    assert [s.state for s in cluster.status()] == ["UP"] * 3
    assert (cluster_dir / "cluster.json").is_file()
    for n in cluster.nodes:
        assert localdb.cql_answers(n.address, cluster.port)
        assert (n.dir / "cassandra.pid").is_file() and n.rackdc_path.is_file()
    # the CLI finds it from --dir alone
    assert cli("status", "--dir", str(cluster_dir)) == 0
    out = capsys.readouterr().out
    assert "3 node(s), 2 DC(s)" in out
    for n, dc in zip(cluster.nodes, ("dc1", "dc1", "dc2"), strict=True):
        line = next(line for line in out.splitlines() if line.split()[:1] == [n.name])
        assert line.split() == [n.name, n.address, dc, "rack1", str(n.pid), "UP"]
    # start again: nothing to do
    again = localdb.start_cluster(dir=cluster_dir)
    assert again.already_running and [n.pid for n in again.nodes] == [n.pid for n in cluster.nodes]
    # stop and start one node
    pid2 = cluster.node(2).pid
    assert cluster.stop_node(2) is True
    assert cluster.state(2) == "STOPPED" and cluster.state(1) == "UP"
    assert not (cluster.node(2).dir / "cassandra.pid").exists()
    assert cluster.stop_node(2) is False
    assert cli("status", "--dir", str(cluster_dir)) == 1
    assert "STOPPED" in capsys.readouterr().out
    node2 = cluster.start_node(2)
    assert not node2.already_running and node2.pid and node2.pid != pid2
    assert cluster.wait_for_state(2, "UP", 10)
    assert cluster.start_node("node2").already_running
    # kill one, with the CLI; `start` starts it alone again
    assert cli("kill", "--node", "3", "--dir", str(cluster_dir)) == 0
    assert "killed node3" in capsys.readouterr().out
    assert cluster.state(3) == "STOPPED"
    assert cli("start", "--dir", str(cluster_dir)) == 0
    assert "started node3" in capsys.readouterr().out
    assert localdb.find_cluster(cluster_dir).is_up()
    # stop everything
    assert cli("stop", "--dir", str(cluster_dir)) == 0
    assert "stopped node1, node2, node3" in capsys.readouterr().out
    assert cli("status", "--dir", str(cluster_dir)) == 3
    assert [s.state for s in localdb.cluster_status(cluster_dir)] == ["STOPPED"] * 3


def test_find_a_running_cluster_outside_the_default_dir(fake_java, cluster_dir):
    cluster = _start(cluster_dir, nodes=2, dcs=1)
    found = localdb.find_cluster(first_address=FIRST, port=cluster.port)
    assert found is not None and found.dir == cluster_dir
    assert [n.pid for n in found.nodes] == [n.pid for n in cluster.nodes]
    assert localdb.find_cluster(first_address="127.0.0.202", port=cluster.port) is None
    assert localdb.stop_cluster(cluster_dir) == ["node1", "node2"]
    assert localdb.find_cluster(first_address=FIRST, port=cluster.port) is None  # not running, not default


def test_a_failed_start_stops_the_nodes_it_started(fake_java, cluster_dir, monkeypatch):
    monkeypatch.setenv("FAKE_JAVA_DIE_ADDRESS", "127.0.0.202")
    with pytest.raises(localdb.LocalDBError, match="exited during startup") as e:
        _start(cluster_dir)
    assert e.value.exit_code == 1
    assert "fake failure of the node at 127.0.0.202" in str(e.value)
    cluster = localdb.load_cluster(cluster_dir)
    assert cluster is not None  # node1 ran: the directory keeps its layout
    assert [s.state for s in cluster.status()] == ["STOPPED"] * 3


def test_a_node_that_could_not_reach_the_seed_is_started_again(fake_java, cluster_dir, monkeypatch, tmp_path):
    counter = tmp_path / "deaths"
    monkeypatch.setenv("FAKE_JAVA_NO_SEED", "127.0.0.202:2:%s" % counter)
    cluster = _start(cluster_dir)
    assert counter.read_text() == "2"  # died twice, started the third time
    assert [s.state for s in cluster.status()] == ["UP"] * 3
    cluster.stop()


def test_a_node_that_never_reaches_the_seed_fails_the_start(fake_java, cluster_dir, monkeypatch, tmp_path):
    counter = tmp_path / "deaths"
    monkeypatch.setenv("FAKE_JAVA_NO_SEED", "127.0.0.202:%d:%s" % (localdb.cluster.SEED_ATTEMPTS, counter))
    with pytest.raises(localdb.LocalDBError, match="Unable to contact any seeds"):
        _start(cluster_dir)
    assert counter.read_text() == str(localdb.cluster.SEED_ATTEMPTS)


def test_a_taken_port_is_reported_before_any_node_starts(fake_java, cluster_dir):
    port = free_port()
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.203", port))
        taken.listen(1)
        with pytest.raises(localdb.LocalDBError, match=r"port \d+ on 127.0.0.203 \(native CQL port\)") as e:
            _start(cluster_dir, port=port)
    assert e.value.exit_code == 2
    assert not (cluster_dir / "cluster.json").exists()
    assert not (cluster_dir / "node1" / "cassandra.pid").exists()


def test_pid_of_an_unrelated_process_is_never_signalled(fake_java, cluster_dir):
    cluster = _start(cluster_dir, nodes=1, dcs=1)
    node = cluster.node(1)
    localdb.stop_cluster(cluster_dir)
    other = subprocess.Popen(["sleep", "30"])
    try:
        (node.dir / "cassandra.pid").write_text(f"{other.pid}\n")
        assert cluster.kill_node(1) is False and cluster.stop() == []
        assert cluster.state(1) == "STOPPED"
        assert other.poll() is None, "stop/kill must never signal a process they did not start"
    finally:
        other.kill()
        other.wait()
