"""What the compat suite (``compat_suite.py``) runs, and where: the classic driver's version and
the Cassandra version its harness is told, the cache, the test files chosen, the two runs
(classic, turbocql) and the targets (single node, the 3-node cluster, cqlengine); and the two
helpers every step uses (:func:`log`, :func:`run`).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "turbocql"
REPO_URL = "https://github.com/datastax/python-driver"
CLASSIC_VERSION = "3.30.1"
TAGS = ("3.30.1", "3.30.0")
CASSANDRA_VERSION = "5.0.6"

# tests/integration/standard files that need no DSE, no ccm control of the node (stop,
# pause, reconfigure) and no protocol v5 feature. Left out: test_authentication,
# test_authentication_misconfiguration, test_custom_cluster, test_single_interface (ccm
# reconfigures or restarts the node), test_metrics (ccm pauses/stops the node; greplin
# scales), test_dse (DSE).
DEFAULT_FILES = (
    "test_client_warnings.py",
    "test_cluster.py",
    "test_concurrent.py",
    "test_connection.py",
    "test_control_connection.py",
    "test_custom_payload.py",
    "test_custom_protocol_handler.py",
    "test_cython_protocol_handlers.py",
    "test_metadata.py",
    "test_policies.py",
    "test_prepared_statements.py",
    "test_query.py",
    "test_query_paging.py",
    "test_routing.py",
    "test_row_factories.py",
    "test_types.py",
    "test_udts.py",
)

RUNS = ("classic", "turbocql")

# The multi-node target: `turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11`.
# Their harness reads CLUSTER_IP for its contact point (tests/integration/__init__.py:
# CASSANDRA_IP, TestCluster.DEFAULT_CASSANDRA_IP); under USE_CASS_EXTERNAL it starts nothing.
# The cqlengine target runs their object mapper's suite (every test file under
# tests/integration/cqlengine) on the single node.
TARGETS = {
    "single": {"ip": "127.0.0.1", "title": "single node, 127.0.0.1:9042", "dir": "tests/integration/standard"},
    "multinode": {
        "ip": "127.0.0.11",
        "title": "3 nodes in 2 DCs, 127.0.0.11-13:9042",
        "dir": "tests/integration/standard",
    },
    "cqlengine": {
        "ip": "127.0.0.1",
        "title": "cqlengine, the object mapper's tests, single node, 127.0.0.1:9042",
        "dir": "tests/integration/cqlengine",
    },
}

# The files run on the multi-node cluster: the ones whose outcome depends on the topology
# (replication factor 3 at QUORUM/ALL, token maps, several hosts and pools, routing,
# paging at LOCAL_QUORUM, the control connection). Type, UDT, row-factory and protocol-handler
# files test codecs that one node already covers.
MULTINODE_FILES = (
    "test_client_warnings.py",
    "test_cluster.py",
    "test_concurrent.py",
    "test_connection.py",
    "test_control_connection.py",
    "test_metadata.py",
    "test_policies.py",
    "test_prepared_statements.py",
    "test_query.py",
    "test_query_paging.py",
    "test_routing.py",
)


def log(msg: str) -> None:
    print("[compat_suite] %s" % msg, flush=True)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)
