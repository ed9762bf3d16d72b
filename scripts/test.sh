#!/usr/bin/env bash
# The test command: builds everything, starts the local Cassandra, runs `cargo test` and
# pytest (unit + integration), and stops Cassandra at the end even when tests fail.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
echo "==> cargo test"
cargo test --release -p turbocql-engine -p turbocql-pingpong
echo "==> pytest"
"$PY" -m pytest tests --durations=40 "$@"
