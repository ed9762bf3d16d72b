#!/usr/bin/env bash
# The main job: builds everything, starts the local Cassandra, runs the benchmark
# comparison (classic driver, turbocql, pure-Rust reference, in one run per runner) and
# writes the reports to benchmarks/results/ (sync-latest.md, patterns-latest.md + JSON).
# TURBOCQL_BENCH_OPS sets the operations per client run (default 20000 sync, --quick
# for the patterns).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
echo "==> sync execute, 1 and 16 threads"
"$PY" benchmarks/run_sync.py --build --python "$PY" --ops "${TURBOCQL_BENCH_OPS:-20000}" --out --report
echo "==> request patterns of documents 000 and 001"
if [ -n "${TURBOCQL_BENCH_OPS:-}" ]; then
    "$PY" benchmarks/run_patterns.py --python "$PY" --ops "$TURBOCQL_BENCH_OPS" --out
else
    "$PY" benchmarks/run_patterns.py --python "$PY" --quick --out
fi
echo "==> reports: benchmarks/results/sync-latest.md, benchmarks/results/patterns-latest.md"
