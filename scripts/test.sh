#!/usr/bin/env bash
# The test command: builds everything, starts the local Cassandra, runs `cargo test` and
# pytest (unit + integration), and stops Cassandra at the end even when tests fail.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
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
echo "==> pytest"
"$PY" -m pytest tests --durations=40 "$@"
