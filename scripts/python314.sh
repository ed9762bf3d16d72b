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
# own (scripts/debian_root.sh, shared with scripts/arm64.sh). Needs root (mmdebstrap, chroot,
# mount). Arguments go to every pytest run.
PYVER=3.14
NAME=python314.sh
LABEL="$PYVER"
NEEDS="mmdebstrap, chroot, mount"
ROOT_NAME="python$PYVER"
ROOTFS_ARGS=(--variant=minbase --include="python$PYVER,python$PYVER-venv,ca-certificates")
source "$(dirname "${BASH_SOURCE[0]}")/debian_root.sh"

# --- 1. the root filesystem -------------------------------------------------------------
ensure_rootfs "python$PYVER"

# --- 2. the engine's wheel ----------------------------------------------------------------
# scripts/wheels.py: the manylinux wheel every supported Python gets, kept until the sources
# change; built here for the chroot's interpreter through PyO3's cross-compiling support
# (there is none for 3.14 on the host: PyO3 reads the chroot's sysconfig).
step_start "wheel"
WHEEL="$(nice -n 10 "$PY" scripts/wheels.py "$PYVER" --cross-lib-dir "$CHROOT/usr/lib/python$PYVER" --print-path)"
step_end "wheel"

# --- 3. the local nodes, on the host -------------------------------------------------------
ensure_nodes

# --- 4. the chroot's mounts ----------------------------------------------------------------
mount_root
# The host's CA bundle (with any certificate that its network needs), for pip.
bind "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" /etc/ssl/certs/ca-certificates.crt ro
cp -L /etc/resolv.conf "$CHROOT/etc/resolv.conf"
CENV+=(
    PYTHONDONTWRITEBYTECODE=1
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
    PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-60}"
    # cassandra-driver without its C extensions should it ever be built from source here.
    CASS_DRIVER_NO_EXTENSIONS=1
)
pass_env PIP_INDEX_URL PIP_EXTRA_INDEX_URL http_proxy https_proxy no_proxy

# --- 5. the virtualenv and the tests -------------------------------------------------------
# The test requirements as requirements-dev.txt pins them (noxfile.test_requirements, less
# maturin: nothing is built in the chroot) and mypy for stubtest.
REQS="$(nox_value 'import re; print(" ".join(repr(r) for r in noxfile.test_requirements() + [
    line for line in (noxfile.ROOT / "requirements-dev.txt").read_text().splitlines()
    if re.match(r"mypy\s*[=<>~!]", line)] if not r.startswith("maturin")))')"
step "venv + pip" in_root "rm -rf /opt/venv && python$PYVER -m venv /opt/venv \
    && pip install -q $REQS '$ROOT/localdb' && pip install -q --no-deps '$WHEEL'"
step "import" in_root "python -c '$ENGINE_IMPORT' \
    && ! command -v cargo rustc && pip list 2>/dev/null | grep -iE '^(turbocql|numpy|cassandra-driver|uvloop|cryptography|pytest|mypy) '"
step "unit tests" in_root "python -m pytest -q -p no:cacheprovider tests/unit $*"
SMOKE="$(nox_value 'print(" ".join(f for f in noxfile.SMOKE if not f.endswith("test_tls.py")))')"
step "smoke tests" in_root "python -m pytest -q -p no:cacheprovider $SMOKE $*"
step "TLS tests" in_root "python -m pytest -q -p no:cacheprovider tests/integration/test_tls.py $*"
if [ -f python/turbocql/_engine.pyi ]; then
    ALLOW=""
    [ -f scripts/stubtest-allowlist.txt ] && ALLOW="--allowlist '$ROOT/scripts/stubtest-allowlist.txt'"
    # From /tmp: mypy writes its cache in the working directory, and the repository is read-only.
    step "stubtest" in_root "cd /tmp && python -m mypy.stubtest turbocql._engine \
        --mypy-config-file '$ROOT/pyproject.toml' $ALLOW"
fi

report
