"""Tests on every supported Python: one nox session per CPython version (scripts/pythons.sh),
from the wheels a package index would take.

Each session installs the engine's ``manylinux_2_28`` wheel for its interpreter (built by
scripts/wheels.py: maturin with zig, checked by auditwheel, kept in target/nox-wheels/<version>/
until the engine's sources change) into the session's own virtualenv with the test
requirements (pinned in requirements-dev.txt), then runs the unit tests and an integration
smoke run (connect, execute, prepare, read, asyncio, TLS) against the local Cassandra on
127.0.0.1:$TURBOCQL_PORT (default 9042), which scripts/pythons.sh starts unless one runs. The
tests run with no Rust toolchain on PATH: what they test is the wheel, as a user installs it.

    nox                        # every version
    nox -s tests-3.13          # one
    nox -s tests-3.12 -- tests/unit/test_api.py -x   # pytest arguments instead of the default runs
    nox -s wheels              # every wheel and the sdist into dist/ (scripts/wheels.py)
    nox -s sdist               # install from the sdist (a Rust build) and run the smoke tests

CPython 3.14's interpreter runs in a chroot: ``nox -s tests-3.14`` runs scripts/python314.sh,
which installs the 3.14 wheel of scripts/wheels.py there the same way (not a default session).
Interpreters are looked up in ~/.pyenv/versions/<version>.*, then on PATH.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent / "scripts"))
import wheels  # noqa: E402  (scripts/wheels.py: the engine's wheels and sdist)

PYTHONS = ["3.11", "3.12", "3.13"]
ROOT = Path(__file__).resolve().parent
# The packages of requirements-dev.txt that the tests need, at the versions it pins.
TEST_REQUIREMENTS = {"pytest", "pytest-timeout", "numpy", "cassandra-driver", "uvloop", "cryptography"}
# The integration smoke run: connecting, execute, prepared statements, paging, row factories,
# the value types both ways, asyncio (with uvloop), and TLS (both certificate verifiers: the
# Python's own OpenSSL, whose SSLContext layout is checked per version, and rustls).
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


def without_rust(path: str) -> str:
    """``path`` without the directories that hold a Rust toolchain (cargo, rustc)."""
    keep = [
        d
        for d in path.split(os.pathsep)
        if d and not any(os.path.exists(os.path.join(d, t)) for t in ("cargo", "rustc"))
    ]
    return os.pathsep.join(keep)


def test_env(session: nox.Session) -> dict[str, str]:
    """The tests' environment: the local nodes, and no Rust toolchain on PATH."""
    return {
        "TURBOCQL_TEST_HOST": os.environ.get("TURBOCQL_TEST_HOST", "127.0.0.1"),
        "TURBOCQL_TEST_PORT": os.environ.get("TURBOCQL_PORT", os.environ.get("TURBOCQL_TEST_PORT", "9042")),
        "PATH": without_rust(os.environ.get("PATH", "")),
    }


def run_tests(session: nox.Session, env: dict[str, str], unit: bool = True) -> None:
    """The engine's import (from the installed package, with no Rust to be found), then the
    unit tests (``unit``) and the smoke run, or pytest with the session's arguments."""
    session.run(
        "python",
        "-c",
        "import shutil, ssl, sys, turbocql._engine as e; print(sys.version); print(e.__file__); "
        "print(ssl.OPENSSL_VERSION, '- TLS verifier:', e.tls_verifier()); "
        "assert shutil.which('cargo') is None and shutil.which('rustc') is None, 'Rust on PATH'",
        env=env,
    )
    if session.posargs:
        session.run("python", "-m", "pytest", *session.posargs, env=env)
        return
    if unit:
        session.run("python", "-m", "pytest", "tests/unit", "-q", env=env)
    session.run("python", "-m", "pytest", *SMOKE, "-q", env=env)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Installs the engine's manylinux wheel, then runs the unit tests and the integration smoke run."""
    wheel, record = wheels.wheel(str(session.python), log=session.log)
    session.log(
        "%s: %.1f MB, auditwheel: %s" % (wheel.name, record["bytes"] / 1e6, record["auditwheel"]["consistent_with"])
    )
    session.install(*test_requirements(), str(ROOT / "localdb"))  # + turbocql-localdb, the tests' nodes
    session.install("--force-reinstall", "--no-deps", str(wheel))
    # The tests import turbocql from the installed wheel, not from python/ (not on sys.path).
    run_tests(session, test_env(session))


@nox.session(python=False, name="tests-3.14")
def tests_314(session: nox.Session) -> None:
    """CPython 3.14, whose interpreter runs in a Debian chroot: scripts/python314.sh (as root)
    installs the 3.14 wheel there and runs the same tests, TLS and stubtest included. Not among
    the default sessions: CI runs the script itself, after the others."""
    session.run("bash", str(ROOT / "scripts" / "python314.sh"), *session.posargs, external=True)


@nox.session(python=False, name="wheels")
def wheels_session(session: nox.Session) -> None:
    """Every wheel and the sdist into dist/, each wheel checked by auditwheel (scripts/wheels.py)."""
    session.run(str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "scripts" / "wheels.py"), *session.posargs)


@nox.session(python=PYTHONS[0])
def sdist(session: nox.Session) -> None:
    """Installs turbocql from its sdist (a Rust build, in Cargo's usual target dir so that it
    reuses the development build), then the engine's import and the smoke run."""
    dist = ROOT / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    source = wheels.sdist(dist, log=session.log)
    session.install(*test_requirements(), str(ROOT / "localdb"))
    session.install("--force-reinstall", "--no-deps", str(source), env={"CARGO_TARGET_DIR": str(ROOT / "target")})
    run_tests(session, test_env(session), unit=False)
