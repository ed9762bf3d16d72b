#!/usr/bin/env bash
# Tests on every supported Python (CPython 3.11, 3.12, 3.13): the nox sessions of noxfile.py
# (per version: build the engine's wheel, unit tests, integration smoke run) against the local
# Cassandra, started here unless one already answers and then stopped at the end.
# Arguments go to nox: `-s tests-3.13` for one version, `-- tests/unit -x` for other pytest runs.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
start_cassandra
trap stop_cassandra EXIT
cd "$ROOT"
export TURBOCQL_PORT="$PORT"
"$VENV/bin/nox" "$@"
