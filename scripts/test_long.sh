#!/usr/bin/env bash
# The long tests: soaks and tests at scale, marked `long` (pyproject.toml), which the test
# command (scripts/test.sh) and CI leave out to stay within their time: a million requests to a
# node that stops reading (each path), a node down and up twice under steady load, memory over
# many thousands of requests on each path but execute_async's (which the test command keeps),
# 100,000 late responses through a proxy, a generator of many items, and the classic driver's
# whole unit suite through the shim. Run before a release and after a change of the request
# path, connection handling or shim: `bash scripts/test_long.sh` (about 5 minutes of pytest here;
# docs/contributing.md). Starts the local Cassandra unless one runs (the cluster's tests start
# the 3-node cluster themselves). Arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
TURBOCQL_TEST_LONG=1 "$PY" -m pytest tests -m long -p no:cacheprovider --durations=20 "$@"
