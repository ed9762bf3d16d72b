#!/usr/bin/env bash
# Tests on CPython 3.14, which pyenv does not give us here: Debian unstable's python3.14 in a
# chroot. Like a nox session of noxfile.py (scripts/pythons.sh), with the interpreter in the
# chroot and everything else on the host:
#   1. the root filesystem: Debian sid, variant minbase, with python3.14, python3.14-venv and
#      ca-certificates (mmdebstrap, installed with apt-get if missing), made once and kept in
#      ~/.cache/turbocql/debian-sid-python3.14 (made again only when missing or when the
#      package list below changes; delete the directory to refresh it);
#   2. the engine's cp314 manylinux wheel, built on the host (Rust is there, not in the
#      chroot) by scripts/wheels.py, for the chroot's interpreter through PyO3's
#      cross-compiling support (PYO3_CROSS_LIB_DIR: the chroot's _sysconfigdata); kept in
#      target/nox-wheels/3.14/ until the sources change, as for every version;
#   3. in the chroot, a fresh virtualenv of python3.14 with the test requirements at the
#      versions requirements-dev.txt pins, mypy, turbocql-localdb (localdb/) and the wheel (no
#      Rust on PATH there);
#   4. there: the engine's import, the unit tests, the integration smoke run (noxfile.SMOKE:
#      the TLS file run on its own) and stubtest of _engine.pyi, against the local Cassandra
#      and the two TLS nodes on the host, started here unless they run (the chroot has no
#      Java) and then stopped at the end.
# The repository is mounted read-only in the chroot at its own path, localdb's directory
# (~/.cache/turbocql/localdb: the nodes' pid files and TLS certificates) read-write at its
# own. Needs root (mmdebstrap, chroot, mount). Arguments go to every pytest run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
PYVER=3.14
SUITE=sid
MIRROR="${TURBOCQL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES="python$PYVER,python$PYVER-venv,ca-certificates"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/turbocql"
CHROOT="$CACHE/debian-$SUITE-python$PYVER"
PORT="${TURBOCQL_PORT:-${TURBOCQL_TEST_PORT:-9042}}"
TLS_PORT=$((PORT + 2)) # tests/integration/conftest.py: TLS_PORT and MTLS_PORT
MTLS_PORT=$((PORT + 3))

[ "$(id -u)" = 0 ] || { echo "python314.sh: needs root (mmdebstrap, chroot, mount)" >&2; exit 1; }
cd "$ROOT"
# The host side needs the project's venv (maturin, nox's noxfile, turbocql localdb).
if ! "$PY" -c "import maturin, nox, turbocql_localdb" 2>/dev/null; then
    bash scripts/env.sh
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/python$PYVER.lock"
flock 9 # one run at a time: they share the chroot and its mounts

TIMES=()
FAILED=()
step_start() { STEP_T0=$(date +%s); echo "==> [$PYVER] $1"; }
step_end() { TIMES+=("$(printf '%-22s %4d s' "$1" $(($(date +%s) - STEP_T0)))"); }
# Run a timed step; a failing step is recorded and the next ones still run.
step() {
    local name="$1"
    shift
    step_start "$name"
    "$@" || FAILED+=("$name")
    step_end "$name"
}

# Mounts below $1 (never delete a directory that still has any: a bind of the repository or
# of localdb's directory would be deleted through it).
mounts_under() { awk -v p="$1" '$2 == p || index($2, p "/") == 1 { print $2 }' /proc/mounts; }

# --- 1. the root filesystem -------------------------------------------------------------
# The mirror's sid may be a frozen copy whose Release file is past its Valid-Until date.
ROOTFS_ARGS=(--variant=minbase --include="$PACKAGES" --aptopt='Acquire::Check-Valid-Until "false"' "$SUITE")
make_rootfs() {
    if ! command -v mmdebstrap >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap
    fi
    if [ -n "$(mounts_under "$CHROOT.new")" ]; then
        echo "python314.sh: $CHROOT.new has mounts, not removing it" >&2
        return 1
    fi
    rm -rf "$CHROOT.new"
    mmdebstrap "${ROOTFS_ARGS[@]}" "$CHROOT.new" "$MIRROR"
    echo "${ROOTFS_ARGS[*]}" >"$CHROOT.new/.turbocql-rootfs"
    if [ -d "$CHROOT" ]; then
        [ -z "$(mounts_under "$CHROOT")" ] || { echo "python314.sh: $CHROOT has mounts" >&2; return 1; }
        rm -rf "$CHROOT"
    fi
    mv "$CHROOT.new" "$CHROOT"
}
if [ "$(cat "$CHROOT/.turbocql-rootfs" 2>/dev/null)" != "${ROOTFS_ARGS[*]}" ]; then
    step_start "root filesystem"
    make_rootfs
    step_end "root filesystem"
else
    echo "==> [$PYVER] root filesystem: $CHROOT (kept)"
fi
PYTHON_PKG="$(chroot "$CHROOT" dpkg-query -W -f '${Version}' "python$PYVER")"
echo "==> [$PYVER] Debian $SUITE python$PYVER $PYTHON_PKG in $CHROOT"

# --- 2. the engine's wheel ----------------------------------------------------------------
# scripts/wheels.py: the manylinux wheel every supported Python gets, kept until the sources
# change; built here for the chroot's interpreter through PyO3's cross-compiling support
# (there is none for 3.14 on the host: PyO3 reads the chroot's sysconfig).
nox_value() { "$PY" -c "import noxfile; $1"; }
step_start "wheel"
WHEEL="$(nice -n 10 "$PY" scripts/wheels.py "$PYVER" --cross-lib-dir "$CHROOT/usr/lib/python$PYVER" --print-path)"
step_end "wheel"

# --- 3. the local nodes, on the host -------------------------------------------------------
STOP_PORTS=()
# Start a node (localdb start arguments after the port) unless something answers CQL there.
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

MOUNTED=()
cleanup() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount -R "${MOUNTED[i]}" 2>/dev/null || umount -R -l "${MOUNTED[i]}" || true
    done
    for port in "${STOP_PORTS[@]}"; do
        "$PY" -m turbocql localdb stop --port "$port" || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step_start "nodes"
ensure_node "$PORT" --heap "${TURBOCQL_HEAP:-2G}"
ensure_node "$TLS_PORT" --tls --heap 768M
ensure_node "$MTLS_PORT" --tls --require-client-auth --heap 768M
step_end "nodes"

# --- 4. the chroot's mounts ----------------------------------------------------------------
LOCALDB_DIR="$("$PY" -c "import turbocql_localdb as localdb; print(localdb.cache_base())")"
mkdir -p "$LOCALDB_DIR"
bind() { # source, target inside the chroot, mount options
    [ ! -d "$1" ] || mkdir -p "$CHROOT$2"
    mount --bind "$1" "$CHROOT$2"
    MOUNTED+=("$CHROOT$2")
    [ -z "${3:-}" ] || mount -o "remount,bind,$3" "$CHROOT$2"
}
[ -z "$(mounts_under "$CHROOT")" ] || { echo "python314.sh: $CHROOT already has mounts" >&2; exit 1; }
mount -t proc proc "$CHROOT/proc"
MOUNTED+=("$CHROOT/proc")
mount --rbind /dev "$CHROOT/dev"
mount --make-rslave "$CHROOT/dev"
MOUNTED+=("$CHROOT/dev")
bind "$ROOT" "$ROOT" ro
bind "$LOCALDB_DIR" "$LOCALDB_DIR"
# The host's CA bundle (with any certificate that its network needs), for pip.
bind "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" /etc/ssl/certs/ca-certificates.crt ro
cp -L /etc/resolv.conf "$CHROOT/etc/resolv.conf"

# A clean environment: nothing of the host's (no Rust, no pyenv) but what the tests read.
CENV=(
    HOME=/root PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
    XDG_CACHE_HOME="$(dirname "$(dirname "$LOCALDB_DIR")")" # localdb finds its directory
    TURBOCQL_TEST_HOST="${TURBOCQL_TEST_HOST:-127.0.0.1}" TURBOCQL_TEST_PORT="$PORT"
    PYTHONDONTWRITEBYTECODE=1
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
    PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-60}"
    # cassandra-driver without its C extensions should it ever be built from source here.
    CASS_DRIVER_NO_EXTENSIONS=1
)
for var in TURBOCQL_LOCALDB_DIR PIP_INDEX_URL PIP_EXTRA_INDEX_URL http_proxy https_proxy no_proxy; do
    [ -z "${!var:-}" ] || CENV+=("$var=${!var}")
done
in_chroot() { chroot "$CHROOT" /usr/bin/env -i "${CENV[@]}" bash -c "cd '$ROOT' && $1"; }

# --- 5. the virtualenv and the tests -------------------------------------------------------
# The test requirements as requirements-dev.txt pins them (noxfile.test_requirements, less
# maturin: nothing is built in the chroot) and mypy for stubtest.
REQS="$(nox_value 'import re; print(" ".join(repr(r) for r in noxfile.test_requirements() + [
    line for line in (noxfile.ROOT / "requirements-dev.txt").read_text().splitlines()
    if re.match(r"mypy\s*[=<>~!]", line)] if not r.startswith("maturin")))')"
step "venv + pip" in_chroot "rm -rf /opt/venv && python$PYVER -m venv /opt/venv \
    && pip install -q $REQS '$ROOT/localdb' && pip install -q --no-deps '$WHEEL'"
step "import" in_chroot "python -c 'import ssl, sys, turbocql._engine as e; print(sys.version); print(e.__file__); \
print(ssl.OPENSSL_VERSION, \"TLS verifier:\", e.tls_verifier())' \
    && ! command -v cargo rustc && pip list 2>/dev/null | grep -iE '^(turbocql|numpy|cassandra-driver|uvloop|cryptography|pytest|mypy) '"
step "unit tests" in_chroot "python -m pytest -q -p no:cacheprovider tests/unit $*"
SMOKE="$(nox_value 'print(" ".join(f for f in noxfile.SMOKE if not f.endswith("test_tls.py")))')"
step "smoke tests" in_chroot "python -m pytest -q -p no:cacheprovider $SMOKE $*"
step "TLS tests" in_chroot "python -m pytest -q -p no:cacheprovider tests/integration/test_tls.py $*"
if [ -f python/turbocql/_engine.pyi ]; then
    ALLOW=""
    [ -f scripts/stubtest-allowlist.txt ] && ALLOW="--allowlist '$ROOT/scripts/stubtest-allowlist.txt'"
    # From /tmp: mypy writes its cache in the working directory, and the repository is read-only.
    step "stubtest" in_chroot "cd /tmp && python -m mypy.stubtest turbocql._engine \
        --mypy-config-file '$ROOT/pyproject.toml' $ALLOW"
fi

echo "==> [$PYVER] Debian $SUITE python$PYVER $PYTHON_PKG: times"
printf '    %s\n' "${TIMES[@]}"
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "python$PYVER: failed: $(printf '[%s] ' "${FAILED[@]}")" >&2
    exit 1
fi
echo "python$PYVER: all passed"
