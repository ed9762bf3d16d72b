#!/usr/bin/env bash
# The test command: builds everything, starts the local Cassandra, runs `cargo test` and
# pytest (unit + integration), and stops Cassandra at the end even when tests fail.
#
# pytest runs in two lanes at once (tests/conftest.py, TURBOCQL_TEST_LANE): the cluster lane
# (the tests on the 3-node cluster on 127.0.0.11-13, nodes killed, frozen, restarted: they
# mostly wait on those nodes, and a few modules to even out the times) beside the node lane
# (everything else), so that the one's waiting and the other's work overlap. The lanes share
# no node that either stops. The cluster lane starts first: its cluster boots while cargo
# builds. Its output follows the other's. With arguments (`test.sh tests/unit -x`), or
# TURBOCQL_TEST_LANES=1, one pytest runs them as usual.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
LANE_PID=""
finish() {
    if [ -n "$LANE_PID" ] && kill -0 "$LANE_PID" 2>/dev/null; then
        kill -- "$LANE_PID" 2>/dev/null || true
    fi
    stop_cassandra
}
trap finish EXIT
cd "$ROOT"
LANES=2
if [ $# -gt 0 ] || [ "${TURBOCQL_TEST_LANES:-2}" = 1 ]; then
    LANES=1
fi
if [ "$LANES" = 2 ]; then
    CLUSTER_LANE_LOG="$(mktemp)"
    echo "==> pytest, cluster lane (started now, its output after the node lane's)"
    TURBOCQL_TEST_LANE=cluster "$PY" -m pytest tests -p no:cacheprovider --durations=20 >"$CLUSTER_LANE_LOG" 2>&1 &
    LANE_PID=$!
fi
# The Rust tests and the benchmark binaries the Python tests run (cql-responder,
# cql-connections) in one debug build: the engine's release build (maturin, scripts/env.sh) is
# link-time optimised, so a release `cargo test` would compile every crate again, and the
# binaries a third time with other features (about 5 minutes here, against 1.5). Debug
# also checks integer overflow in the engine's tests.
echo "==> cargo test (debug)"
RUST_PACKAGES=(-p turbocql-engine -p turbocql-pingpong -p turbocql-rust-ref)
cargo test "${RUST_PACKAGES[@]}"
cargo build "${RUST_PACKAGES[@]}" --bins
export TURBOCQL_RUST_BIN_DIR="$ROOT/target/debug"
if [ "$LANES" = 1 ]; then
    echo "==> pytest"
    "$PY" -m pytest tests --durations=40 "$@"
    exit $?
fi
echo "==> pytest, node lane"
rc=0
TURBOCQL_TEST_LANE=node "$PY" -m pytest tests --durations=30 || rc=$?
lane_rc=0
wait "$LANE_PID" || lane_rc=$?
LANE_PID=""
echo "==> pytest, cluster lane"
cat "$CLUSTER_LANE_LOG"
rm -f "$CLUSTER_LANE_LOG"
[ "$lane_rc" = 0 ] || echo "test.sh: the cluster lane failed ($lane_rc)" >&2
[ "$rc" = 0 ] || echo "test.sh: the node lane failed ($rc)" >&2
[ "$rc" = 0 ] && [ "$lane_rc" = 0 ]
