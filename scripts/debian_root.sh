# What scripts/python314.sh and scripts/arm64.sh share: a Debian root filesystem made once
# with mmdebstrap and kept in ~/.cache/turbocql, the host's local nodes it tests against, the
# root's mounts, a clean environment inside it, and timed steps. Sourced (not run) by those
# scripts, after they set:
#   NAME     the script's name, for messages ("arm64.sh")
#   LABEL    the prefix of its step lines ("arm64 3.13")
#   ROOT_NAME    the root's name: it is kept in ~/.cache/turbocql/debian-sid-<ROOT_NAME>
#   ROOTFS_ARGS  mmdebstrap's arguments of its own (architecture, variant, packages, hooks)
#   NEEDS    what root is needed for, for the message when the script is not run as root
# and then call, in order: ensure_rootfs, ensure_nodes (when it tests against the nodes),
# mount_root, and finally report. `step NAME COMMAND...` times a step and records a failure
# without stopping; `in_root COMMAND` runs a shell command in the root from the repository,
# with CENV as its whole environment.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
SUITE=sid
MIRROR="${TURBOCQL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/turbocql"
CHROOT="$CACHE/debian-$SUITE-$ROOT_NAME"
# The mirror's sid may be a frozen copy whose Release file is past its Valid-Until date.
ROOTFS_ARGS+=(--aptopt='Acquire::Check-Valid-Until "false"' "$SUITE")
PORT="${TURBOCQL_PORT:-${TURBOCQL_TEST_PORT:-9042}}"
# tests/integration/conftest.py: TLS_PORT and MTLS_PORT
TLS_PORT="${TURBOCQL_TEST_TLS_PORT:-$((PORT + 2))}"
MTLS_PORT="${TURBOCQL_TEST_MTLS_PORT:-$((PORT + 3))}"

[ "$(id -u)" = 0 ] || { echo "$NAME: needs root ($NEEDS)" >&2; exit 1; }
cd "$ROOT"
# The host side needs the project's venv (maturin, zig, auditwheel, noxfile, turbocql localdb).
if ! "$PY" -c "import maturin, nox, turbocql_localdb" 2>/dev/null; then
    bash scripts/env.sh
fi
mkdir -p "$CACHE"
exec 9>"$CHROOT.lock"
flock 9 # one run at a time per root: they share it and its mounts

TIMES=()
FAILED=()
step_start() { STEP_T0=$(date +%s); echo "==> [$LABEL] $1"; }
step_end() { TIMES+=("$(printf '%-22s %5d s' "$1" $(($(date +%s) - STEP_T0)))"); }
# Run a timed step; a failing step is recorded and the next ones still run.
step() {
    local name="$1"
    shift
    step_start "$name"
    "$@" || FAILED+=("$name")
    step_end "$name"
}
apt_install() {
    # CI runs both scripts, each of which may install packages: wait for the other's lock
    # rather than fail on it.
    apt-get -o DPkg::Lock::Timeout=600 update -q
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@"
}
# Mounts below $1 (never delete a directory that still has any: a bind of the repository or
# of localdb's directory would be deleted through it).
mounts_under() { awk -v p="$1" '$2 == p || index($2, p "/") == 1 { print $2 }' /proc/mounts; }
nox_value() { "$PY" -c "import noxfile; $1"; }

# --- the root filesystem -----------------------------------------------------------------------
# Made again when missing or when its arguments (the package list) change: the arguments are
# kept in the root.
make_rootfs() {
    command -v mmdebstrap >/dev/null || apt_install mmdebstrap
    if [ -n "$(mounts_under "$CHROOT.new")" ]; then
        echo "$NAME: $CHROOT.new has mounts, not removing it" >&2
        return 1
    fi
    rm -rf "$CHROOT.new"
    mmdebstrap "${ROOTFS_ARGS[@]}" "$CHROOT.new" "$MIRROR"
    echo "${ROOTFS_ARGS[*]}" >"$CHROOT.new/.turbocql-rootfs"
    if [ -d "$CHROOT" ]; then
        [ -z "$(mounts_under "$CHROOT")" ] || { echo "$NAME: $CHROOT has mounts" >&2; return 1; }
        rm -rf "$CHROOT"
    fi
    mv "$CHROOT.new" "$CHROOT"
}
# ensure_rootfs PYTHON_PACKAGE: the root, made if needed; sets PYTHON_PKG to that package's
# name and version in it.
ensure_rootfs() {
    if [ "$(cat "$CHROOT/.turbocql-rootfs" 2>/dev/null)" != "${ROOTFS_ARGS[*]}" ]; then
        step_start "root filesystem"
        make_rootfs
        step_end "root filesystem"
    else
        echo "==> [$LABEL] root filesystem: $CHROOT (kept)"
    fi
    # The version from the package's changelog: an extracted root has no dpkg database.
    PYTHON_PKG="$1 $({ zcat "$CHROOT/usr/share/doc/$1/changelog.Debian.gz" || true; } | head -1 | sed 's/^[^(]*(\([^)]*\)).*/\1/')"
    echo "==> [$LABEL] Debian $SUITE $PYTHON_PKG in $CHROOT"
}

# --- the local nodes, on the host (the root has no Java) -----------------------------------------
STOP_PORTS=()
MOUNTED=()
# Start a node (localdb start arguments after the port) unless something answers CQL there;
# the nodes started here are stopped at the end.
ensure_node() {
    local port="$1"
    shift
    if "$PY" -m turbocql localdb status --port "$port" >/dev/null 2>&1; then
        echo "==> node on port $port already running"
    elif [ "$port" = "$PORT" ] && "$PY" -c "import sys; import turbocql_localdb as localdb; \
sys.exit(0 if localdb.wait_for_cql('127.0.0.1', $port, timeout=2) else 1)" 2>/dev/null; then
        echo "==> a Cassandra already answers on port $port: using it"
    else
        echo "==> starting the node on port $port"
        "$PY" -m turbocql localdb start --port "$port" "$@"
        STOP_PORTS+=("$port")
    fi
}
# The local node and the two TLS nodes of the TLS tests.
ensure_nodes() {
    step_start "nodes"
    ensure_node "$PORT" --heap "${TURBOCQL_HEAP:-2G}"
    ensure_node "$TLS_PORT" --tls --heap 768M
    ensure_node "$MTLS_PORT" --tls --require-client-auth --heap 768M
    step_end "nodes"
}
cleanup() {
    local i port
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount -R "${MOUNTED[i]}" 2>/dev/null || umount -R -l "${MOUNTED[i]}" || true
    done
    for port in "${STOP_PORTS[@]}"; do
        "$PY" -m turbocql localdb stop --port "$port" || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the root's mounts and environment ----------------------------------------------------------
LOCALDB_DIR="$("$PY" -c "import turbocql_localdb as localdb; print(localdb.cache_base())")"
bind() { # source, target inside the root, mount options
    [ ! -d "$1" ] || mkdir -p "$CHROOT$2"
    mount --bind "$1" "$CHROOT$2"
    MOUNTED+=("$CHROOT$2")
    [ -z "${3:-}" ] || mount -o "remount,bind,$3" "$CHROOT$2"
}
# /proc, /dev, the repository read-only at its own path, and localdb's directory
# (~/.cache/turbocql/localdb: the nodes' pid files and TLS certificates) read-write at its own.
mount_root() {
    mkdir -p "$LOCALDB_DIR"
    [ -z "$(mounts_under "$CHROOT")" ] || { echo "$NAME: $CHROOT already has mounts" >&2; exit 1; }
    mount -t proc proc "$CHROOT/proc"
    MOUNTED+=("$CHROOT/proc")
    mount --rbind /dev "$CHROOT/dev"
    mount --make-rslave "$CHROOT/dev"
    MOUNTED+=("$CHROOT/dev")
    bind "$ROOT" "$ROOT" ro
    bind "$LOCALDB_DIR" "$LOCALDB_DIR"
}
# A clean environment: nothing of the host's (no Rust, no pyenv) but what the tests read. The
# scripts add their own.
CENV=(
    HOME=/root PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
    PYTHONUNBUFFERED=1 # pytest's progress reaches a log as it goes
    XDG_CACHE_HOME="$(dirname "$(dirname "$LOCALDB_DIR")")" # localdb finds its directory
    TURBOCQL_TEST_HOST="${TURBOCQL_TEST_HOST:-127.0.0.1}" TURBOCQL_TEST_PORT="$PORT"
    TURBOCQL_TEST_TLS_PORT="$TLS_PORT" TURBOCQL_TEST_MTLS_PORT="$MTLS_PORT"
)
# pass_env VAR...: the host's value of each that is set.
pass_env() {
    local var
    for var in "$@"; do
        [ -z "${!var:-}" ] || CENV+=("$var=${!var}")
    done
}
pass_env TURBOCQL_LOCALDB_DIR
in_root() { chroot "$CHROOT" /usr/bin/env -i "${CENV[@]}" bash -c "cd '$ROOT' && $1"; }
# The engine's import, printing where from and its TLS verifier, then no Rust on PATH.
ENGINE_IMPORT="import platform, ssl, sys, turbocql._engine as e; print(sys.version, platform.machine()); \
print(e.__file__); print(ssl.OPENSSL_VERSION, \"TLS verifier:\", e.tls_verifier())"

# --- the end --------------------------------------------------------------------------------------
# Each step's time, then the exit status: 1 when a step failed.
report() {
    echo "==> [$LABEL] Debian $SUITE $PYTHON_PKG: times"
    printf '    %s\n' "${TIMES[@]}"
    if [ ${#FAILED[@]} -gt 0 ]; then
        echo "$LABEL: failed: $(printf '[%s] ' "${FAILED[@]}")" >&2
        exit 1
    fi
    echo "$LABEL: all passed"
}
