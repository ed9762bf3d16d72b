#!/usr/bin/env bash
# The main job: builds everything, starts the local Cassandra, runs the benchmark
# comparison (classic driver, turbocql, pure-Rust reference, in one run) and writes the
# report to benchmarks/results/. Extra arguments go to the runner (e.g. --ops 50000).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
echo "==> benchmark"
"$PY" benchmarks/run_sync.py --build --python "$PY" --ops "${TURBOCQL_BENCH_OPS:-20000}" --out --report "$@"
