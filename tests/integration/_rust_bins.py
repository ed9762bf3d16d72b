"""The benchmarks' Rust binaries that tests run (``cql-responder`` of turbocql-pingpong,
``cql-connections`` of turbocql-rust-ref). The test command (scripts/test.sh) builds them,
debug, beside its ``cargo test`` and names their directory in ``$TURBOCQL_RUST_BIN_DIR``;
without it they are the release build in target/release, built with cargo when missing."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"


def bin_dir() -> Path:
    return Path(os.environ.get("TURBOCQL_RUST_BIN_DIR") or RELEASE)


def rust_binary(name: str, package: str) -> Path:
    """The binary ``name`` of ``package``, built first when it is missing from target/release
    (skipped with the reason when cargo is not there); one missing from a directory named by
    ``$TURBOCQL_RUST_BIN_DIR`` is a failure: whoever named it was to build it."""
    binary = bin_dir() / name
    if binary.exists():
        return binary
    if bin_dir() != RELEASE:
        pytest.fail(f"{binary} is missing: TURBOCQL_RUST_BIN_DIR names a directory without it")
    if shutil.which("cargo") is None:
        pytest.skip(f"{binary.name} is not built and cargo is not installed")
    subprocess.run(["cargo", "build", "--release", "-p", package], cwd=ROOT, check=True)
    return binary
