"""Integration tests of `turbocql localdb` against the running local node.

They use the node in the default directory (127.0.0.1:9042, as started by
``turbocql localdb start``) and skip when it does not run; they never start or
stop it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import turbocql_localdb as localdb

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def running_node():
    node = localdb.status()
    if node.pid is None:
        pytest.skip(f"no localdb node runs in {node.dir}")
    if not localdb.wait_for_cql(node.address, node.port, 60):
        pytest.fail(f"localdb node (pid {node.pid}) does not answer CQL on {node.port}")
    return node


def _cli(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "python"), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "turbocql", "localdb", *argv], capture_output=True, text=True, env=env, timeout=60
    )


def test_status_reports_running_node(running_node):
    res = _cli("status")
    assert res.returncode == 0, res.stderr
    assert "running" in res.stdout and str(running_node.pid) in res.stdout
    assert "CQL answers" in res.stdout


def test_start_is_idempotent(running_node):
    t0 = time.monotonic()
    res = _cli("start")
    assert res.returncode == 0, res.stderr
    assert "already running" in res.stdout
    assert time.monotonic() - t0 < 30
    assert localdb.status().pid == running_node.pid


def test_api_sees_the_node(running_node):
    assert localdb.is_running()
    assert localdb.cql_answers(running_node.address, running_node.port)
    node = localdb.start(port=running_node.port)
    assert node.already_running and node.pid == running_node.pid
    assert node.log_path.is_file()
