# Sourced by the other scripts: creates .venv with everything the project needs and
# builds the Rust engine into it (release profile). Idempotent and incremental.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    echo "==> creating $VENV"
    python3 -m venv "$VENV"
fi
# Python packages: build tool, test tools, and the classic driver the benchmarks compare with.
if ! "$PY" -c "import maturin, pytest, pytest_timeout, cassandra" 2>/dev/null; then
    echo "==> installing Python packages"
    "$PY" -m pip install -q --upgrade pip
    "$PY" -m pip install -q -r "$ROOT/requirements-dev.txt"
fi
echo "==> building the Rust engine (release)"
(cd "$ROOT" && "$VENV/bin/maturin" develop --release -q 2>&1 | grep -v "^📦\|^✏️\|^🛠" || true)
"$PY" -c "import turbocql.cluster" || { echo "turbocql failed to build or import" >&2; exit 1; }

# Start the local Cassandra unless one already answers; remember whether we started it.
start_cassandra() {
    if "$PY" -m turbocql localdb status >/dev/null 2>&1; then
        echo "==> local Cassandra already running"
        STARTED_CASSANDRA=0
    else
        echo "==> starting the local Cassandra"
        "$PY" -m turbocql localdb start --heap "${TURBOCQL_HEAP:-2G}"
        STARTED_CASSANDRA=1
    fi
}

stop_cassandra() {
    if [ "${STARTED_CASSANDRA:-0}" = 1 ]; then
        echo "==> stopping the local Cassandra"
        "$PY" -m turbocql localdb stop || true
    fi
}
