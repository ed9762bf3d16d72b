"""``cql-responder`` (benchmarks/pingpong, the connections scenario's CQL server) as the target
of three drivers' real handshakes: turbocql, the classic driver (its default reactor and its
asyncio reactor; it tries protocol v5 first and goes down to v4) and the Rust ``scylla``
crate (benchmarks/rust_ref's ``cql-connections``) each connect, refresh their metadata and run
the benchmark's prepared one-row SELECT through it; and the Python I/O models' own CQL framing
(benchmarks/clients/cql_models.py) does too. The responder counts the connections it holds,
so the pool sizes are checked from the server's side. No Cassandra needed; the binaries are
the test command's debug build, or the release build, made with cargo when missing
(tests/integration/_rust_bins.py)."""

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.integration._rust_bins import rust_binary

# A test that finds its release binary missing builds it first (the Rust client takes two
# minutes and more on two busy cores), within its own timeout.
pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
QUERY = "SELECT k, v FROM bench.kv WHERE k = ?"


class Responder:
    def __init__(self, nodes: int) -> None:
        responder = rust_binary("cql-responder", "turbocql-pingpong")
        self.proc = subprocess.Popen(
            [str(responder), "--listen", "127.0.0.1:0", "--nodes", str(nodes)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        line: list[str] = []
        t = threading.Thread(target=lambda: line.append(self.proc.stderr.readline()), daemon=True)
        t.start()
        t.join(30)
        m = re.search(r"listening on [\d.]+:(\d+)", line[0] if line else "")
        assert m, f"cql-responder did not start: {line}"
        self.port = int(m.group(1))

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.proc.stderr.close()


@pytest.fixture
def responder():
    started = []

    def start(nodes: int = 1) -> Responder:
        r = Responder(nodes)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def _stats(session) -> dict:
    return session.execute("SELECT * FROM responder.stats").one()._asdict()


def _wait_connections(session, want: int, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while (n := _stats(session)["connections"]) < want and time.monotonic() < deadline:
        time.sleep(0.05)
    return n


def test_turbocql_holds_its_pool_over_several_nodes(responder):
    from turbocql.cluster import Cluster

    r = responder(nodes=3)
    c = Cluster(["127.0.0.1"], port=r.port, compression=False, connections_per_host=7)
    try:
        s = c.connect()
        assert sorted(h.address for h in c.metadata.all_hosts()) == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        # 3 nodes x 7 pool connections, and the control connection.
        assert _wait_connections(s, 22) == 22
        p = s.prepare(QUERY)
        rows = [f.result().one() for f in [s.execute_async(p, (1,)) for _ in range(200)]]
        assert all(tuple(row) == (1, "0123456789abcdef") for row in rows)
        st = _stats(s)
        assert st["requests"] == 200 and st["nodes"] == 3
        # The requests spread over the pools: more than one connection of each node served.
        assert st["busy_connections"] > 3
    finally:
        c.shutdown()


@pytest.mark.parametrize("reactor", ["default", "asyncio"])
def test_the_classic_driver_connects_downgrades_and_runs(responder, reactor):
    cassandra_cluster = pytest.importorskip("cassandra.cluster")
    from cassandra.policies import RoundRobinPolicy

    kwargs = {}
    if reactor == "asyncio":
        from cassandra.io.asyncioreactor import AsyncioConnection

        kwargs["connection_class"] = AsyncioConnection
    r = responder(nodes=4)
    profile = cassandra_cluster.ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
    c = cassandra_cluster.Cluster(
        ["127.0.0.1"],
        port=r.port,
        execution_profiles={cassandra_cluster.EXEC_PROFILE_DEFAULT: profile},
        **kwargs,
    )
    try:
        s = c.connect()
        # No protocol_version given: it tried v5 (and DSE's) first, the responder refused them.
        assert c.protocol_version == 4
        assert len(c.metadata.all_hosts()) == 4
        # One connection per host with protocol v4, and the control connection.
        assert _wait_connections(s, 5) == 5
        p = s.prepare(QUERY)
        # Round robin serves every host once the driver has marked each host's pool up: the
        # responder's connections can all be open (above) a moment before that, when a host
        # still being added is left out of a query plan. Rounds of 40 requests until all four
        # have served one, within a deadline.
        deadline = time.monotonic() + 20
        while True:
            rows = [f.result().one() for f in [s.execute_async(p, (1,)) for _ in range(40)]]
            assert all((row.k, row.v) == (1, "0123456789abcdef") for row in rows)
            busy = _stats(s)["busy_connections"]
            if busy == 4 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert busy == 4  # round robin: every host served
    finally:
        c.shutdown()


def test_the_rust_scylla_crate_client_runs_with_its_pool(responder):
    client = rust_binary("cql-connections", "turbocql-rust-ref")
    r = responder()
    out = subprocess.run(
        [str(client), "--connect", f"127.0.0.1:{r.port}", "--connections", "16", "--seconds", "0.5"]
        + ["--warmup", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = json.loads(out.stdout.strip().splitlines()[-1])
    assert "failed" not in line, line
    assert line["client"] == "rust" and line["pool"] == "PerHost(16)" and line["errors"] == 0
    assert line["messages"] > 100 and line["p50_us"] > 0


@pytest.mark.parametrize("model", ["selectors", "asyncio-protocol"])
def test_the_python_models_speak_cql_to_it(responder, model):
    r = responder()
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "clients" / "cql_models.py"), "--model", model]
        + ["--connect", f"127.0.0.1:{r.port}", "--connections", "20", "--seconds", "0.5", "--warmup", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": ""},
    )
    line = json.loads(out.stdout.strip().splitlines()[-1])
    assert "failed" not in line, line
    assert line["client"] == "python-cql" and line["errors"] == 0 and line["messages"] > 100


@pytest.mark.parametrize("client, model", [("turbocql", "futures"), ("turbocql", "execute_concurrent")])
def test_the_drivers_client_runs_against_it(responder, client, model):
    r = responder()
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "clients" / "cql_drivers.py"), "--client", client, "--model", model]
        + ["--connect", f"127.0.0.1:{r.port}", "--connections", "8", "--seconds", "0.5", "--warmup", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = json.loads(out.stdout.strip().splitlines()[-1])
    assert "failed" not in line, (line, out.stderr[-2000:])
    assert line["errors"] == 0 and line["messages"] > 50 and line["pool"] == "connections_per_host=8"
