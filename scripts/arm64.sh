#!/usr/bin/env bash
# Tests of the aarch64 wheel on arm64 Linux, under emulation (qemu-user), from this x86_64
# machine. Like scripts/python314.sh (what they share: scripts/debian_root.sh), with an arm64
# root instead of an x86_64 one:
#   1. qemu-user-static (installed with apt-get if missing) registered with binfmt_misc for
#      aarch64 ELF binaries, with the F flag (the emulator is opened at registration, so it
#      runs binaries inside a chroot that has no copy of it); binfmt_misc mounted if it is not;
#   2. the root filesystem: Debian sid for arm64 with the Python asked for, its packages
#      extracted (mmdebstrap --arch=arm64 --variant=extract: nothing runs under emulation), made once and
#      kept in ~/.cache/turbocql/debian-sid-arm64-python3.13 (made again only when missing or
#      when the package list below changes; delete the directory to refresh it). No Rust, no
#      compiler there;
#   3. the engine's manylinux_2_28_aarch64 wheel for that Python, cross-compiled on the host
#      by scripts/wheels.py --arch aarch64 (kept in target/nox-wheels-aarch64/<version>/ until
#      the sources change);
#   4. in the root, a fresh virtualenv of the arm64 Python with the test requirements as
#      requirements-dev.txt pins them, turbocql-localdb and the wheel (put there by the
#      host's pip for the arm64 platform: binary wheels only, nothing compiled);
#   5. there: the engine's import (on aarch64, no Rust on PATH), then by MODE
#        smoke  (default) the integration smoke run of noxfile.SMOKE (the TLS file on its own),
#               execute_concurrent, the pipelines, fork and the threaded stress test,
#               against the local Cassandra on the host (port 9042) and its TLS nodes
#               (9044, 9045 with client certificates), started here unless they run (the
#               root has no Java) and then stopped at the end;
#        unit   the whole unit suite (tests/unit);
#        all    both;   import   the import only;
#        fork   every fork test (tests/integration/test_fork.py: with the ones that fork while
#               threads start, exit and run queries, which `smoke` leaves out), on their own.
# Usage: bash scripts/arm64.sh [smoke|unit|all|fork|import] [pytest arguments...]   (as root)
# TURBOCQL_ARM64_PYTHON picks the arm64 Python (3.13, the default, or 3.14); each has a root
# of its own holding that Python only (its packages' scripts run under emulation: the fewer,
# the quicker the root is made).
# Emulated code runs several times slower than native code: every pytest-timeout limit is
# multiplied by TURBOCQL_TEST_TIMEOUT_SCALE (default 10) through tests/timeout_scale.py.
# The tests use their own keyspace (TURBOCQL_TEST_KEYSPACE, default turbocql_arm64) and the
# threaded stress test runs TURBOCQL_STRESS_SECONDS (default 60) per phase.
# Each step's time is printed at the end. No speed figure is meaningful here: it is qemu's.
MODE=smoke
case "${1:-}" in
smoke | unit | all | fork | import) MODE="$1" && shift ;;
esac
PYVER="${TURBOCQL_ARM64_PYTHON:-3.13}"
case "$PYVER" in
3.13 | 3.14) ;;
*) echo "arm64.sh: TURBOCQL_ARM64_PYTHON=$PYVER: Debian sid has python3.13 and python3.14" >&2 && exit 2 ;;
esac
NAME=arm64.sh
LABEL="arm64 $PYVER"
NEEDS="binfmt_misc, mmdebstrap, chroot, mount"
ROOT_NAME="arm64-python$PYVER"
# The packages extracted, not installed (variant extract: no maintainer script runs, so nothing
# runs under emulation while the root is made: 5 s instead of 314 for minbase in a CI run,
# where python3.13's own scripts byte-compiled its library under qemu): the Python with
# what it depends on, the shell and tools the tests call (openssl: a TLS test names a capath
# entry with `openssl x509 -hash`; util-linux: the benchmark runner's tests look for taskset),
# libstdc++ (numpy's wheel links it: minbase had it through apt, an extracted root has no
# apt), and the accounts base-passwd would have written (its script does not run either).
ROOTFS_ARGS=(--arch=arm64 --variant=extract
    --include="python$PYVER,openssl,libstdc++6,util-linux,base-files,bash,coreutils,dash,diffutils,findutils,grep,gzip,sed,tar,base-passwd"
    --customize-hook='cp "$1/usr/share/base-passwd/passwd.master" "$1/etc/passwd"'
    --customize-hook='cp "$1/usr/share/base-passwd/group.master" "$1/etc/group"')
export TURBOCQL_TEST_TIMEOUT_SCALE="${TURBOCQL_TEST_TIMEOUT_SCALE:-10}"
source "$(dirname "${BASH_SOURCE[0]}")/debian_root.sh"

# --- 1. emulation ------------------------------------------------------------------------
BINFMT=/proc/sys/fs/binfmt_misc
QEMU_CONF=/usr/lib/binfmt.d/qemu-aarch64.conf # qemu-user-static's registration line
ensure_emulation() {
    [ -f "$QEMU_CONF" ] || apt_install qemu-user-static
    [ -e "$BINFMT/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT"
    [ -e "$BINFMT/qemu-aarch64" ] || cat "$QEMU_CONF" >"$BINFMT/register"
    if ! grep -q '^flags:.*F' "$BINFMT/qemu-aarch64"; then
        echo "arm64.sh: $BINFMT/qemu-aarch64 is registered without the F flag (the emulator would have" \
            "to be inside the root); remove it (echo -1 > $BINFMT/qemu-aarch64) and run again" >&2
        return 1
    fi
    grep -q '^enabled' "$BINFMT/qemu-aarch64" || echo 1 >"$BINFMT/qemu-aarch64"
}
step_start "emulation"
ensure_emulation
step_end "emulation"

# --- 2. the root filesystem -------------------------------------------------------------------
ensure_rootfs "python$PYVER"

# --- 3. the engine's wheel -------------------------------------------------------------------
step_start "wheel (cross-build)"
WHEEL="$(nice -n 10 "$PY" scripts/wheels.py --arch aarch64 "$PYVER" --print-path)"
step_end "wheel (cross-build)"

# --- 4. the local nodes, on the host (for the smoke run) -------------------------------------
if [ "$MODE" = smoke ] || [ "$MODE" = all ] || [ "$MODE" = fork ]; then
    ensure_nodes
fi

# --- 5. the root's mounts ----------------------------------------------------------------------
mount_root
# Its own keyspace on the shared node: the run can go on beside another test run (CI's).
CENV+=(
    TURBOCQL_TEST_TIMEOUT_SCALE="$TURBOCQL_TEST_TIMEOUT_SCALE"
    TURBOCQL_TEST_KEYSPACE="${TURBOCQL_TEST_KEYSPACE:-turbocql_arm64}"
    TURBOCQL_STRESS_SECONDS="${TURBOCQL_STRESS_SECONDS:-60}"
)

# --- 6. the virtualenv and the tests -------------------------------------------------------------
# A fresh virtualenv of the arm64 Python (made in the root, without pip), and in it: the test
# requirements as requirements-dev.txt pins them (noxfile.test_requirements, less maturin),
# turbocql-localdb (pure Python, a wheel built from localdb/) and the engine's wheel, put there
# by the host's pip for the arm64 platform (--platform, --target: binary wheels only, nothing
# compiled). pip itself under qemu took 7 minutes for the same (4.5 without compiling .pyc),
# most of it pip's own code and ensurepip; the packages are the same files either way. The
# .pyc are then written on first import, by the arm64 Python.
mapfile -t REQS < <(nox_value 'print("\n".join(r for r in noxfile.test_requirements() if not r.startswith("maturin")))')
install_venv() {
    local site="$CHROOT/opt/venv/lib/python$PYVER/site-packages" wheels rc=0
    in_root "rm -rf /opt/venv && python$PYVER -m venv --without-pip /opt/venv" || return 1
    wheels="$(mktemp -d)"
    "$PY" -m pip wheel -q --no-deps -w "$wheels" "$ROOT/localdb" \
        && "$PY" -m pip install -q --disable-pip-version-check --no-compile --only-binary=:all: \
            --platform manylinux_2_28_aarch64 --implementation cp --python-version "$PYVER" \
            --abi "cp${PYVER/./}" --target "$site" "${REQS[@]}" "$wheels"/*.whl "$WHEEL" || rc=$?
    rm -rf "$wheels"
    return $rc
}
step "venv + packages" install_venv
step "import" in_root "python -c '$ENGINE_IMPORT; \
assert platform.machine() == \"aarch64\", platform.machine(); \
from importlib.metadata import version; \
print(*(n + \" \" + version(n) for n in (\"turbocql\", \"numpy\", \"cassandra-driver\", \"uvloop\", \"cryptography\", \"pytest\")))' \
    && ! command -v cargo rustc"
PYTEST="python -m pytest -q -p no:cacheprovider -p tests.timeout_scale --durations=10"
# Beside noxfile.SMOKE (connecting, prepared writes and reads, paging, every CQL type,
# asyncio; TLS with both verifiers on its own): execute_concurrent, the pipelines, fork, and
# the threaded stress run (TURBOCQL_STRESS_SECONDS per phase). Of test_fork, the smoke takes
# the children that work, the parent completing what was in flight and the child using the
# parent's session; `all` takes every fork test (the ones forking while threads run start
# dozens of children, each a few seconds of imports under emulation).
FORK=tests/integration/test_fork.py
ARM64_EXTRA=(tests/integration/test_concurrent.py tests/integration/test_pipelines.py
    tests/integration/test_stress_threads.py)
if [ "$MODE" = all ]; then
    ARM64_EXTRA+=("$FORK")
else
    ARM64_EXTRA+=("$FORK::test_forked_children_work"
        "$FORK::test_fork_with_requests_in_flight_the_parent_completes_them_all"
        "$FORK::test_child_using_the_parents_session_fails_fast_or_works")
fi
# Of the unit suite, all but the tests of the architecture doc's checker: they parse the
# repository's sources and docs (about 1 s each natively, a minute each under emulation: 16
# minutes), and nothing of them depends on the platform (CI runs them on x86_64).
if [ "$MODE" = unit ] || [ "$MODE" = all ]; then
    step "unit tests" in_root "$PYTEST tests/unit --ignore=tests/unit/test_architecture_check.py $*"
fi
if [ "$MODE" = smoke ] || [ "$MODE" = all ]; then
    SMOKE="$(nox_value 'print(" ".join(f for f in noxfile.SMOKE if not f.endswith("test_tls.py")))')"
    SMOKE="$SMOKE ${ARM64_EXTRA[*]}"
    step "smoke tests" in_root "$PYTEST $SMOKE $*"
    step "TLS tests" in_root "$PYTEST tests/integration/test_tls.py $*"
fi
if [ "$MODE" = fork ]; then
    step "fork tests" in_root "$PYTEST $FORK $*"
fi

report
