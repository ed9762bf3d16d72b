"""Shared test settings: where the local Cassandra listens, and the two lanes of
scripts/test.sh."""

import os

import pytest

HOST = os.environ.get("TURBOCQL_TEST_HOST", "127.0.0.1")
PORT = int(os.environ.get("TURBOCQL_TEST_PORT", "9042"))

# scripts/test.sh runs two pytest processes at once, TURBOCQL_TEST_LANE=cluster and =node.
# The cluster lane holds every test on the 3-node cluster (marked `multinode`, or using its
# fixture: they mostly wait on nodes killed, frozen, restarted), and these modules, which use
# only nodes of their own or the shared node without stopping it, to even out the two lanes'
# times. The node lane holds everything else. No node either lane stops is used by the other.
CLUSTER_LANE_MODULES = {
    "test_docs.py",
    "test_classic_unit_suite.py",
    "test_spark.py",
    "test_shutdown.py",
    "test_hostile_frames.py",
}
LANES = ("cluster", "node")


def in_cluster_lane(item):
    return item.get_closest_marker("multinode") is not None or item.path.name in CLUSTER_LANE_MODULES


# Tests marked `long` (soaks, tests at scale: minutes each) are left out unless
# TURBOCQL_TEST_LONG=1, as scripts/test_long.sh and benchmarks/reliability.py set it: the test
# command and CI stay within their time (docs/contributing.md gives the long run's).
RUN_LONG = os.environ.get("TURBOCQL_TEST_LONG") == "1"


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "multidc_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.multinode)
    if not RUN_LONG:
        long_items = [item for item in items if item.get_closest_marker("long") is not None]
        if long_items:
            config.hook.pytest_deselected(items=long_items)
            items[:] = [item for item in items if item.get_closest_marker("long") is None]
    lane = os.environ.get("TURBOCQL_TEST_LANE")
    if not lane:
        return
    if lane not in LANES:
        raise pytest.UsageError("TURBOCQL_TEST_LANE=%r: one of %s" % (lane, ", ".join(LANES)))
    keep, dropped = [], []
    for item in items:
        (keep if in_cluster_lane(item) == (lane == "cluster") else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
