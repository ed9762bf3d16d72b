"""``benchmarks/run_cql_connections.py --server cassandra`` against the local node (issue 17 §2,
the CQL connections table through a real node): the runner creates ``bench.kv`` and its row,
pins the node's JVM and puts its affinity back, and turbocql (futures), a Python I/O model
decoding the row (selectors-rows: its own CQL framing, handshake and EXECUTE against the node)
and the Rust ``scylla`` crate each hold 10 connections, wait for the node's count in
``system_views.clients`` and read the row with no error."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HOST, PORT
from tests.integration._rust_bins import bin_dir

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "benchmarks" / "run_cql_connections.py"
RUST_CLIENT = bin_dir() / "cql-connections"


def _rust_usable() -> str | None:
    """Why the Rust client cannot run here, or None."""
    if not RUST_CLIENT.exists():
        return f"{RUST_CLIENT} is missing (cargo build --release -p turbocql-rust-ref)"
    usage = subprocess.run([str(RUST_CLIENT), "--help"], capture_output=True, text=True, timeout=30).stderr
    if "--count-query" not in usage:
        return f"{RUST_CLIENT} predates --count-query (cargo build --release -p turbocql-rust-ref)"
    return None


@pytest.mark.timeout(900)
def test_runner_against_the_node(cassandra, tmp_path):
    models = ["turbocql-futures", "selectors-rows"]
    rust_why = _rust_usable()
    if rust_why is None:
        models.append("rust")
    out = tmp_path / "node.json"
    cmd = [sys.executable, str(RUNNER), "--server", "cassandra", "--host", HOST, "--port", str(PORT)]
    cmd += ["--connections", "10", "--seconds", "1", "--repeat", "1", "--models", ",".join(models), "--no-strace"]
    # The test leaves the machine's kernel settings alone.
    cmd += ["--local-port-range", "keep", "--max-tw-buckets", "keep", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=840, cwd=ROOT, env={**os.environ})
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads(out.read_text())
    meta = data["meta"]
    assert meta["scenario"] == "connections_cql_cassandra" and meta["server"]["kind"] == "cassandra"
    assert meta["server"]["release_version"] and meta["count_query"].endswith("system_views.clients")
    pinning = meta["server"]["pinning"]
    if "reason" not in pinning:  # pinned: the affinity before was put back
        assert pinning["restored"] == pinning["before"], pinning
    runs = {x["model"]: x for x in data["results"] if x.get("kind") == "run"}
    want = {"futures", "selectors-rows"} | ({"scylla"} if rust_why is None else set())
    assert set(runs) == want, data["results"]
    for run in runs.values():
        assert "failed" not in run and "unavailable" not in run, run
        assert run["msgs_per_s"] > 0 and run["errors"] == 0, run
    assert "Connections over CQL, a real Cassandra node" in r.stdout
    if rust_why is not None:
        pytest.skip(f"the rust row was not run: {rust_why}")
