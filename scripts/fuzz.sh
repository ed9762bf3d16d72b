#!/usr/bin/env bash
# The engine's fuzz targets (fuzz/, cargo-fuzz's layout, nightly toolchain, AddressSanitizer):
#
#   scripts/fuzz.sh build                 build every target
#   scripts/fuzz.sh smoke [RUNS]          each target for RUNS inputs (default: about 8 s
#                                         each here) from the committed corpus, seed 1 (CI);
#                                         any crash fails the run
#   scripts/fuzz.sh run TARGET SECONDS [DIR]
#                                         one long run, its corpus in DIR (default
#                                         fuzz/work/TARGET, seeded from fuzz/corpus/TARGET)
#   scripts/fuzz.sh cmin TARGET [DIR]     adds to fuzz/corpus/TARGET the fewest inputs of a
#                                         long run's corpus (default fuzz/work/TARGET) that
#                                         reach every code edge it reached (libFuzzer's
#                                         merge, as cargo fuzz cmin, on edges without hit
#                                         counts: rows' 1,685 inputs became 360, 80 KB); the
#                                         seeds and crash inputs stay
#
# Targets: frame, events, rows, columns, prepared (fuzz/fuzz_targets/*.rs say what each
# reads). The Python ones embed the interpreter of .venv, with python/ and the venv's
# site-packages on PYTHONPATH (numpy, pyarrow). An input that takes over 30 s is a crash (a
# hang). Leak detection is off: the interpreter keeps
# what it allocates (interned strings, caches) for the life of the process.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
TARGETS=(frame events rows columns prepared)
# The smoke's inputs per target: about 8 s each on this machine. The smoke is a fixed seed and a
# fixed count, so CI is the same run every time: it checks that the targets build and that the
# committed corpus (every crash found so far among it) passes, while finding new crashes is the
# long runs' work (docs/contributing.md). A time limit and a random seed made CI a lottery: a
# new crash found by chance failed a change that had nothing to do with it.
declare -A SMOKE_RUNS=([frame]=20000 [events]=150000 [rows]=20000 [columns]=10000 [prepared]=20000)
cd "$ROOT"
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install -q --locked cargo-fuzz
fi
export PYO3_PYTHON="$VENV/bin/python"
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
export PYTHONPATH="$ROOT/python:$SITE"
# The venv's libpython (the binaries are linked against it, with no rpath: another
# libpython3.11 on the system path would be found first).
export LD_LIBRARY_PATH="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONHOME="$("$VENV/bin/python" -c 'import sys; print(sys.base_prefix)')"
# The cfg the engine builds with (.cargo/config.toml); cargo fuzz adds its flags to RUSTFLAGS,
# which takes the place of the config's.
export RUSTFLAGS="--cfg scylla_unstable ${RUSTFLAGS:-}"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1"
# The embedded interpreter's str hashes fixed, so that a smoke's path through the code (and the
# coverage that steers libFuzzer's fixed seed) does not change with the process.
export PYTHONHASHSEED="${PYTHONHASHSEED:-0}"
BIN="$ROOT/fuzz/target/x86_64-unknown-linux-gnu/release"

build() {
    cargo +nightly fuzz build 2>&1 | grep -v "^\s*Compiling\|^\s*Finished" || true
    for t in "${TARGETS[@]}"; do
        [ -x "$BIN/$t" ] || { echo "fuzz.sh: target $t was not built" >&2; exit 1; }
    done
}

# run TARGET SECONDS CORPUS_DIR: libFuzzer on a corpus directory (grown in place), the
# committed seeds read too; a crash leaves its input in fuzz/artifacts/TARGET/.
run() {
    local t="$1" secs="$2" dir="$3"
    shift 3
    mkdir -p "$dir" "fuzz/artifacts/$t"
    "$BIN/$t" "$dir" "fuzz/corpus/$t" -max_total_time="$secs" -detect_leaks=0 -rss_limit_mb=4096 \
        -max_len=65536 -timeout=30 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" "$@"
}

case "${1:-}" in
    build) build ;;
    smoke)
        build
        work="$(mktemp -d)"
        trap 'rm -rf "$work"' EXIT
        for t in "${TARGETS[@]}"; do
            runs="${2:-${SMOKE_RUNS[$t]}}"
            echo "==> fuzz smoke: $t ($runs inputs, seed 1)"
            if ! run "$t" 600 "$work/$t" -runs="$runs" -seed=1 >"$work/$t.log" 2>&1; then
                tail -n 80 "$work/$t.log" >&2
                echo "fuzz.sh: target $t failed (its input is in fuzz/artifacts/$t/)" >&2
                exit 1
            fi
            grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ +DONE" "$work/$t.log" || true
        done
        ;;
    run)
        [ $# -ge 3 ] || { echo "usage: fuzz.sh run TARGET SECONDS [DIR]" >&2; exit 2; }
        run "$2" "$3" "${4:-fuzz/work/$2}"
        ;;
    cmin)
        [ $# -ge 2 ] || { echo "usage: fuzz.sh cmin TARGET [DIR]" >&2; exit 2; }
        before=$(ls "fuzz/corpus/$2" | wc -l)
        "$BIN/$2" -merge=1 -use_counters=0 "fuzz/corpus/$2" "${3:-fuzz/work/$2}" -detect_leaks=0 \
            -rss_limit_mb=4096 -max_len=65536 -timeout=30 2>&1 | grep -a -E "^MERGE-OUTER: [0-9]+ new files" || true
        echo "fuzz.sh: fuzz/corpus/$2: $before -> $(ls "fuzz/corpus/$2" | wc -l) inputs, $(cat "fuzz/corpus/$2"/* | wc -c) bytes"
        ;;
    *)
        sed -n '2,22p' "$0" >&2
        exit 2
        ;;
esac
