"""Tests on every supported Python: one nox session per CPython version (scripts/pythons.sh).

Each session builds the engine as a wheel for its interpreter, installs it with the test
requirements (pinned in requirements-dev.txt), then runs the unit tests and an integration
smoke run (connect, execute, prepare, read, asyncio) against the local Cassandra on
127.0.0.1:$TURBOCQL_PORT (default 9042), which scripts/pythons.sh starts unless one runs.

    nox                        # every version
    nox -s tests-3.13          # one
    nox -s tests-3.12 -- tests/unit/test_api.py -x   # pytest arguments instead of the default runs

The wheels are built in Cargo's usual target dir, so dependencies are built once for all
versions (pyo3 and the engine are rebuilt for each interpreter; the 3.11 wheel is built with
.venv's interpreter, which Cargo's last build was for). Each is kept in
target/nox-wheels/<version>/ with a hash of the engine's sources: a session whose sources have
not changed since its last build installs the kept wheel.
Interpreters are looked up in ~/.pyenv/versions/<version>.*, then on PATH.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import subprocess
from pathlib import Path

import nox

PYTHONS = ["3.11", "3.12", "3.13"]
ROOT = Path(__file__).resolve().parent
WHEELS = ROOT / "target" / "nox-wheels"
# What the wheel is made of: a change to any of these rebuilds it.
BUILD_INPUTS = ["Cargo.toml", "Cargo.lock", "pyproject.toml", "src", "python/turbocql"]
# The packages of requirements-dev.txt that the tests need, at the versions it pins.
TEST_REQUIREMENTS = {"maturin", "pytest", "pytest-timeout", "numpy", "cassandra-driver", "uvloop", "cryptography"}
# How every engine wheel of the tests is built: `maturin` with these arguments, then
# --interpreter and --out (also used by scripts/python314.sh, which builds the 3.14 wheel).
# A plain linux wheel linking the system OpenSSL, never one with a private copy of libssl
# bundled (auditwheel's repair): the engine reads the application's ssl.SSLContext through
# the OpenSSL that Python's ssl module runs on (src/api/tls.rs).
WHEEL_BUILD = ["build", "--release", "--compatibility", "linux", "--auditwheel", "skip"]
# The integration smoke run: connecting, execute, prepared statements, paging, row factories,
# the value types both ways, asyncio (with uvloop), and TLS (the engine reads each Python's
# ssl.SSLContext: its layout and OpenSSL are checked per version).
SMOKE = [
    "tests/integration/test_connect.py",
    "tests/integration/test_execute.py",
    "tests/integration/test_types.py",
    "tests/integration/test_aio.py",
    "tests/integration/test_tls.py",
]

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = True
nox.options.reuse_venv = "yes"

# pyenv's interpreters first: its shims on PATH answer `python3.12` with an error unless
# that version is selected.
for version in PYTHONS:
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin" % version)))
    if found:
        os.environ["PATH"] = found[-1] + os.pathsep + os.environ.get("PATH", "")


def test_requirements() -> list[str]:
    """The lines of requirements-dev.txt that name one of TEST_REQUIREMENTS."""
    lines = []
    for line in (ROOT / "requirements-dev.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        name = re.match(r"[A-Za-z0-9_.-]+", line)
        if name and name.group(0).lower().replace("_", "-") in TEST_REQUIREMENTS:
            lines.append(line)
    return lines


def sources_hash() -> str:
    """A hash of the engine's build inputs (paths and contents, compiled files left out)."""
    h = hashlib.sha256()
    for name in BUILD_INPUTS:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.suffix in (".so", ".pyc") or "__pycache__" in f.parts:
                continue
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def build_interpreter(session: nox.Session) -> Path:
    """The interpreter the wheel is built for: the project venv's (scripts/env.sh) when it is
    the session's version, as Cargo's last build of pyo3 and the engine was for it (building
    for another interpreter rebuilds them), else the session's own."""
    dev = ROOT / ".venv" / "bin" / "python"
    if dev.exists():
        version = subprocess.run(
            [str(dev), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        if version.returncode == 0 and version.stdout.strip() == session.python:
            return dev
    return Path(session.virtualenv.location) / "bin" / "python"


def engine_wheel(session: nox.Session) -> Path:
    """The engine's wheel for the session's Python: the kept one, or a new build."""
    out = WHEELS / str(session.python)
    stamp = out / "sources.sha256"
    digest = sources_hash()
    kept = sorted(out.glob("turbocql-*.whl"))
    if kept and stamp.is_file() and stamp.read_text().strip() == digest:
        session.log("engine wheel up to date: %s" % kept[-1].name)
        return kept[-1]
    for old in kept:
        old.unlink()
    session.run(
        "maturin",
        *WHEEL_BUILD,
        "--interpreter",
        str(build_interpreter(session)),
        "--out",
        str(out),
    )
    stamp.write_text(digest + "\n")
    return sorted(out.glob("turbocql-*.whl"))[-1]


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Builds and installs the engine, then runs the unit tests and the integration smoke run."""
    session.install(*test_requirements())
    session.install("--force-reinstall", "--no-deps", str(engine_wheel(session)))
    env = {
        "TURBOCQL_TEST_HOST": os.environ.get("TURBOCQL_TEST_HOST", "127.0.0.1"),
        "TURBOCQL_TEST_PORT": os.environ.get("TURBOCQL_PORT", os.environ.get("TURBOCQL_TEST_PORT", "9042")),
    }
    # The tests import turbocql from the installed wheel, not from python/ (not on sys.path).
    session.run("python", "-c", "import turbocql._engine as e, sys; print(sys.version); print(e.__file__)")
    if session.posargs:
        session.run("python", "-m", "pytest", *session.posargs, env=env)
        return
    session.run("python", "-m", "pytest", "tests/unit", "-q", env=env)
    session.run("python", "-m", "pytest", *SMOKE, "-q", env=env)
