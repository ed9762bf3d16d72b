"""The engine's wheels and sdist: what a package index would take.

One ``manylinux_2_28`` x86_64 wheel per supported CPython (3.11-3.14), built by maturin
with zig as the linker (``--zig``: glibc 2.28 symbols whatever the build machine's glibc),
and the sdist. Each wheel is checked by ``auditwheel show``: it must be consistent with its
tag, and no library of the wheel's needs may be one the engine must share with Python (the
engine links no OpenSSL: TLS is rustls, Python's own OpenSSL is found at run time).

    python scripts/wheels.py                 # every version, the sdist, the checks
    python scripts/wheels.py 3.13            # one version
    python scripts/wheels.py 3.14 --cross-lib-dir CHROOT/usr/lib/python3.14 --print-path

Wheels are kept in target/nox-wheels/<version>/ beside a hash of the engine's sources (the
nox test sessions and scripts/python314.sh install them from there) and rebuilt only when the
sources change; ``--dist DIR`` (default dist/) gets a copy of each, the sdist and
``wheels.json`` (tag, size, build seconds, auditwheel's verdict). Interpreters come from
~/.pyenv/versions, then PATH; a version with none here (3.14) is built with PyO3's
cross-compiling support: the target's sysconfig from ``--cross-lib-dir``
(``PYO3_CROSS_LIB_DIR``), else maturin's own for that version.
The builds use their own Cargo target dir (target/manylinux): zig's C compiler and linker
would otherwise rebuild the development build's C dependencies each time.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
TAG = "manylinux_2_28_x86_64"
KEPT = ROOT / "target" / "nox-wheels"
TARGET_DIR = ROOT / "target" / "manylinux"
# What the wheel is made of: a change to any of these rebuilds it.
BUILD_INPUTS = ["Cargo.toml", "Cargo.lock", "pyproject.toml", ".cargo", "src", "python/turbocql"]
MATURIN_BUILD = ["build", "--release", "--zig", "--compatibility", TAG.rsplit("_", 2)[0]]
# Libraries a wheel may need that it must never carry: the engine would then not share
# Python's copy (TLS through Python's OpenSSL).
SHARED_WITH_PYTHON = ("libssl", "libcrypto", "libpython")


def sources_hash() -> str:
    """A hash of the engine's build inputs (paths and contents, compiled files left out)."""
    h = hashlib.sha256()
    for name in BUILD_INPUTS:
        path = ROOT / name
        if not path.exists():
            continue
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.suffix in (".so", ".pyc") or "__pycache__" in f.parts:
                continue
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def interpreter(version: str) -> str | None:
    """An interpreter of ``version`` that runs here: pyenv's, else one on PATH."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s" % (version, version))))
    candidates = [found[-1]] if found else []
    on_path = shutil.which("python%s" % version)
    if on_path:
        candidates.append(on_path)
    for c in candidates:
        ok = subprocess.run(
            [c, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        if ok.returncode == 0 and ok.stdout.strip() == version:
            return c
    return None


def build_env(cross_lib_dir: str | None) -> dict[str, str]:
    """maturin finds zig as ``python -m ziglang``, with the project venv's python first on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(VENV_BIN) + os.pathsep + env.get("PATH", "")
    env["CARGO_TARGET_DIR"] = str(TARGET_DIR)
    if cross_lib_dir:
        env["PYO3_CROSS_LIB_DIR"] = cross_lib_dir
    return env


def auditwheel(wheel: Path) -> dict:
    """``auditwheel show``'s verdict: the tag it finds the wheel consistent with, the libraries
    it needs (and whether one of them must be shared with Python)."""
    out = subprocess.run(
        [str(VENV_BIN / "python"), "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True
    )
    text = " ".join((out.stdout + out.stderr).split())
    consistent = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    libraries = sorted(set(re.findall(r"\b(lib[\w.+-]+\.so(?:\.\d+)*)", text)))
    return {
        "returncode": out.returncode,
        "consistent_with": consistent.group(1) if consistent else None,
        "libraries": libraries,
        "shared_with_python": [lib for lib in libraries if lib.startswith(SHARED_WITH_PYTHON)],
        "output": (out.stdout + out.stderr).strip(),
    }


def check(wheel: Path, verdict: dict) -> None:
    """Fails unless auditwheel accepts ``wheel`` under its own tag, needing nothing it must not carry."""
    if verdict["returncode"] != 0 or verdict["consistent_with"] != TAG or not wheel.name.endswith(TAG + ".whl"):
        sys.exit("auditwheel does not accept %s as %s:\n%s" % (wheel.name, TAG, verdict["output"]))
    if verdict["shared_with_python"]:
        sys.exit("%s needs %s, which it must share with Python" % (wheel.name, verdict["shared_with_python"]))


def check_contents(wheel: Path) -> None:
    """Fails unless ``wheel`` holds the driver only: files under ``turbocql/`` and its
    ``turbocql-*.dist-info/``, none of the tooling kept apart (``turbocql/localdb``: the
    turbocql-localdb distribution; ``turbocql/bench``: benchmarks/runner) and no test."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    bad = []
    for name in names:
        parts = name.split("/")
        top, base = parts[0], parts[-1]
        if top != "turbocql" and not (top.startswith("turbocql-") and top.endswith(".dist-info")):
            bad.append(name)
        elif top == "turbocql" and len(parts) > 1 and parts[1].removesuffix(".py") in ("localdb", "bench"):
            bad.append(name)
        elif {"tests", "test", "benchmarks", "scripts"} & set(parts[:-1]) or base == "conftest.py":
            bad.append(name)
        elif base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py")):
            bad.append(name)
    if bad:
        sys.exit("%s holds more than the driver:\n  %s" % (wheel.name, "\n  ".join(bad)))


def wheel(version: str, cross_lib_dir: str | None = None, log=print) -> tuple[Path, dict]:
    """The engine's wheel for CPython ``version``: the kept one, or a new build; with its record."""
    out = KEPT / version
    out.mkdir(parents=True, exist_ok=True)
    stamp, record_file = out / "sources.sha256", out / "build.json"
    digest = sources_hash()
    kept = sorted(out.glob("turbocql-*-cp%s-*.whl" % version.replace(".", "")))
    if kept and stamp.is_file() and stamp.read_text().strip() == digest and record_file.is_file():
        log("engine wheel up to date: %s" % kept[-1].name)
        return kept[-1], json.loads(record_file.read_text())
    for old in out.glob("turbocql-*.whl"):
        old.unlink()
    python = interpreter(version)
    if python is None and cross_lib_dir is None:
        log("no CPython %s here: built with maturin's own sysconfig for it" % version)
    cmd = [
        str(VENV_BIN / "maturin"),
        *MATURIN_BUILD,
        "--interpreter",
        python or "python%s" % version,
        "--out",
        str(out),
    ]
    log("==> " + " ".join(cmd))
    started = time.monotonic()
    # maturin's progress goes to stderr: stdout carries only what --print-path prints.
    subprocess.run(cmd, check=True, env=build_env(None if python else cross_lib_dir), cwd=ROOT, stdout=sys.stderr)
    seconds = time.monotonic() - started
    built = sorted(out.glob("turbocql-*.whl"))[-1]
    verdict = auditwheel(built)
    check(built, verdict)
    check_contents(built)
    record = {
        "wheel": built.name,
        "python": version,
        "tag": TAG,
        "bytes": built.stat().st_size,
        "build_seconds": round(seconds, 1),
        "interpreter": python or ("sysconfig of %s" % cross_lib_dir if cross_lib_dir else "maturin's sysconfig"),
        "auditwheel": {k: verdict[k] for k in ("consistent_with", "libraries", "shared_with_python")},
    }
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    stamp.write_text(digest + "\n")
    return built, record


def sdist(dist: Path, log=print) -> Path:
    """The source distribution (maturin's), written to ``dist``."""
    for old in dist.glob("turbocql-*.tar.gz"):
        old.unlink()
    cmd = [str(VENV_BIN / "maturin"), "sdist", "--out", str(dist)]
    log("==> " + " ".join(cmd))
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=sys.stderr)
    return sorted(dist.glob("turbocql-*.tar.gz"))[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", default=PYTHONS, help="CPython versions (default: %(default)s)")
    ap.add_argument("--cross-lib-dir", default=None, help="the sysconfig of a version with no interpreter here")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the wheels, sdist and wheels.json go")
    ap.add_argument("--no-sdist", action="store_true")
    ap.add_argument("--print-path", action="store_true", help="print only the wheel's path (one version)")
    args = ap.parse_args(argv)
    for v in args.versions:
        if v not in PYTHONS:
            ap.error("unsupported version %s (supported: %s)" % (v, ", ".join(PYTHONS)))
    log = (lambda msg: print(msg, file=sys.stderr)) if args.print_path else print
    if args.print_path:
        if len(args.versions) != 1:
            ap.error("--print-path takes one version")
        print(wheel(args.versions[0], args.cross_lib_dir, log)[0])
        return 0
    args.dist.mkdir(parents=True, exist_ok=True)
    records = []
    for v in args.versions:
        built, record = wheel(v, args.cross_lib_dir, log)
        shutil.copy2(built, args.dist / built.name)
        records.append(record)
    summary = {"wheels": records}
    if not args.no_sdist:
        source = sdist(args.dist, log)
        summary["sdist"] = {"file": source.name, "bytes": source.stat().st_size}
    (args.dist / "wheels.json").write_text(json.dumps(summary, indent=1) + "\n")
    for r in records:
        print(
            "%-60s %5.1f MB  built in %5.0f s  auditwheel: %s, needs %s"
            % (
                r["wheel"],
                r["bytes"] / 1e6,
                r["build_seconds"],
                r["auditwheel"]["consistent_with"],
                ", ".join(r["auditwheel"]["libraries"]),
            )
        )
    if "sdist" in summary:
        print("%-60s %5.1f MB" % (summary["sdist"]["file"], summary["sdist"]["bytes"] / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
