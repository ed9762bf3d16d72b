#!/usr/bin/env bash
# The lint gates: ruff (lint and format), mypy, stubtest of the engine's stub (when
# python/turbocql/_engine.pyi exists), no import cycle in python/turbocql
# (scripts/import_cycles.py), the engine's layers and no circle in src/
# (scripts/engine_layers.py), docs/ARCHITECTURE.md against the code
# (scripts/architecture_check.py), cargo fmt and clippy. Every check runs; the script
# fails at the end if any of them had a finding. Settings: pyproject.toml ([tool.ruff],
# [tool.mypy]), rustfmt.toml, Cargo.toml ([lints]).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
set +e
FAILED=()
check() {
    local name="$1"
    shift
    echo "==> $name"
    "$@" || FAILED+=("$name")
}
PY_PATHS=(python localdb tests benchmarks scripts fuzz noxfile.py docs/conf.py docs/_ext)
check "ruff check" "$VENV/bin/ruff" check "${PY_PATHS[@]}"
check "ruff format" "$VENV/bin/ruff" format --check "${PY_PATHS[@]}"
check "mypy" "$PY" -m mypy python/turbocql localdb/turbocql_localdb benchmarks/runner
check "import cycles" "$PY" scripts/import_cycles.py
check "engine layers" "$PY" scripts/engine_layers.py
check "vendored crates" "$PY" scripts/vendor_crates.py check
check "architecture doc" "$PY" scripts/architecture_check.py
check "Relaxed orderings explained" "$PY" scripts/relaxed_check.py
if [ -f python/turbocql/_engine.pyi ]; then
    ALLOW=()
    [ -f scripts/stubtest-allowlist.txt ] && ALLOW=(--allowlist scripts/stubtest-allowlist.txt)
    check "stubtest" "$PY" -m mypy.stubtest turbocql._engine "${ALLOW[@]}"
fi
check "cargo fmt" cargo fmt --all --check
check "cargo fmt (fuzz)" cargo fmt --manifest-path fuzz/Cargo.toml --all --check
check "clippy (engine)" cargo clippy --release -p turbocql-engine -- -D warnings
check "clippy (rust_ref)" cargo clippy --release -p turbocql-rust-ref -- -D warnings
check "clippy (pingpong)" cargo clippy --release -p turbocql-pingpong -- -D warnings
if [ ${#FAILED[@]} -gt 0 ]; then
    printf 'lint: findings in %s\n' "${FAILED[@]}" >&2
    exit 1
fi
echo "lint: clean"
