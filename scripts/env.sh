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
# Python packages: build tool, test and lint tools, and the classic driver the cross-driver tests use
# (the benchmarks run the classic driver from their own virtualenv: benchmarks/peers.py).
if ! "$PY" -c "import maturin, pytest, pytest_timeout, cassandra, ruff, mypy, nox, ziglang, auditwheel, django_cassandra_engine, cstarmigrate, sphinx, furo, myst_parser, pyspark" 2>/dev/null; then
    echo "==> installing Python packages"
    "$PY" -m pip install -q --upgrade pip
    "$PY" -m pip install -q -r "$ROOT/requirements-dev.txt"
fi
# turbocql-localdb (localdb/: the local Cassandra of the tests, benchmarks and scripts), its own
# distribution apart from the driver's wheel: installed editable, so localdb/ is what runs.
if ! "$PY" -c "import turbocql_localdb" 2>/dev/null; then
    echo "==> installing turbocql-localdb (editable, from localdb/)"
    "$PY" -m pip install -q -e "$ROOT/localdb"
fi
# Headless Chromium for the documentation site's browser test (tests/integration/test_docs.py):
# Debian's package, installed when missing and this user can (CI runs as root).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium (Debian's package)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; } \
        || echo "chromium could not be installed: the docs' browser test will fail" >&2
fi
echo "==> building the Rust engine (release)"
(cd "$ROOT" && "$VENV/bin/maturin" develop --release -q 2>&1 | grep -v "^📦\|^✏️\|^🛠" || true)
"$PY" -c "import turbocql.cluster" || { echo "turbocql failed to build or import" >&2; exit 1; }

# The local Cassandra's CQL port: $TURBOCQL_PORT (default 9042); its directory is localdb's
# default for that port unless $TURBOCQL_LOCALDB_DIR says otherwise.
PORT="${TURBOCQL_PORT:-9042}"

# Start the local Cassandra unless one already answers; remember whether we started it.
start_cassandra() {
    if "$PY" -m turbocql localdb status --port "$PORT" >/dev/null 2>&1; then
        echo "==> local Cassandra already running (port $PORT)"
        STARTED_CASSANDRA=0
    elif "$PY" -c "import sys; import turbocql_localdb as localdb; sys.exit(0 if localdb.wait_for_cql('127.0.0.1', $PORT, timeout=2) else 1)" 2>/dev/null; then
        echo "==> a Cassandra already answers on port $PORT: using it"
        STARTED_CASSANDRA=0
    else
        echo "==> starting the local Cassandra (port $PORT)"
        "$PY" -m turbocql localdb start --port "$PORT" --heap "${TURBOCQL_HEAP:-2G}"
        STARTED_CASSANDRA=1
    fi
}

stop_cassandra() {
    if [ "${STARTED_CASSANDRA:-0}" = 1 ]; then
        echo "==> stopping the local Cassandra"
        "$PY" -m turbocql localdb stop --port "$PORT" || true
    fi
}
