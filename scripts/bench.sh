#!/usr/bin/env bash
# The main job: builds everything, starts the local Cassandra, runs the benchmark suite
# (`turbocql bench --quick`, that is `python -m benchmarks.runner --quick` from the checkout's
# root: every scenario of benchmarks/README.md, each client in its own
# process; the classic driver and the optional peers in their own virtualenvs under
# benchmarks/.venvs/, created on first use) and writes the report to benchmarks/results/:
# bench-<date>.json, bench-<date>.md, bench-<date>-*.png, and bench-latest.md.
#
# Environment:
#   TURBOCQL_PORT          CQL port of the local Cassandra (default 9042)
#   TURBOCQL_LOCALDB_DIR   its node directory (default: turbocql localdb's)
#   TURBOCQL_BENCH_CLIENTS clients (default classic,scylla,turbocql,acsylla,rust; a peer
#                          that cannot be installed is shown as not available)
#   TURBOCQL_BENCH_FULL    1: the full sizes instead of --quick's (20,000 requests per client
#                          run, 100,000 vector rows, ...: what the docs' tables are measured at)
#   TURBOCQL_BENCH_OPS     requests per client run instead of --quick's 5,000
#   TURBOCQL_BENCH_ARGS    more `turbocql bench` options, e.g. "--scenarios sync,patterns"
#   TURBOCQL_TLS_PORT      the tls scenario's TLS node (default 9044): used if it answers,
#                          else started by `turbocql bench` (768M heap) and stopped after it
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
args=(--latest --port "$PORT" --python "$PY"
      --clients "${TURBOCQL_BENCH_CLIENTS:-classic,scylla,turbocql,acsylla,rust}")
if [ "${TURBOCQL_BENCH_FULL:-0}" != 1 ]; then
    args=(--quick "${args[@]}")
fi
if [ -n "${TURBOCQL_BENCH_OPS:-}" ]; then
    args+=(--ops "$TURBOCQL_BENCH_OPS")
fi
echo "==> turbocql bench ${args[*]} ${TURBOCQL_BENCH_ARGS:-}"
# shellcheck disable=SC2086  # TURBOCQL_BENCH_ARGS is split on purpose
"$PY" -m benchmarks.runner "${args[@]}" ${TURBOCQL_BENCH_ARGS:-}
echo "==> report: benchmarks/results/bench-latest.md"
