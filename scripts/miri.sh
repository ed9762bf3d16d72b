#!/usr/bin/env bash
# The engine's pure-Rust unsafe code under Miri (the nightly toolchain's interpreter, which
# reports undefined behaviour: out-of-bounds or misaligned access, use after free, data
# races, invalid values). What it runs is what Miri can reach (docs/ARCHITECTURE.md, "What a
# tool can check"): it runs no C and no CPython, so only tests that touch neither:
#   alloc::      the huge-block path (mmap, mremap, munmap through Miri's shims), with std's
#                allocator in mimalloc's place and HUGE lowered to 64 KiB (cfg(miri));
#   runtime::    ForkLocal raced by threads and forgotten, ProcessBound dropped and leaked;
#   codec::arrow::tests   the offsets' bytes;
#   sync::       the engine's condvar and its waiters (std's locks underneath).
# Leaks are not errors here: ForkLocal leaks its value by design, and ProcessBound in a
# forked child. About 16 minutes here the first time, compiling the crate's dependencies for
# Miri (target/miri), then about a minute; installs the miri and rust-src components when missing.
#
#   bash scripts/miri.sh            # those tests
#   bash scripts/miri.sh FILTER...  # other tests of the engine's library
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "==> installing Miri (rustup component add miri rust-src --toolchain nightly)"
    rustup component add miri rust-src --toolchain nightly
fi
export MIRIFLAGS="-Zmiri-ignore-leaks ${MIRIFLAGS:-}"
FILTERS=("$@")
[ ${#FILTERS[@]} -gt 0 ] || FILTERS=(alloc:: runtime:: codec::arrow::tests sync::)
cargo +nightly miri test -p turbocql-engine --lib -- "${FILTERS[@]}"
