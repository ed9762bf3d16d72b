"""The engine's wheels and sdist: what a package index would take.

One ``manylinux_2_28`` x86_64 wheel per supported CPython (3.11-3.14), built by maturin
with zig as the linker (``--zig``: glibc 2.28 symbols whatever the build machine's glibc),
and the sdist. Each wheel is checked by ``auditwheel show``: it must be consistent with its
tag, and no library of the wheel's needs may be one the engine must share with Python (the
engine links no OpenSSL: TLS is rustls, Python's own OpenSSL is found at run time).
With ``--arch aarch64``, the ``manylinux_2_28_aarch64`` wheels instead, cross-compiled here
(Rust's aarch64-unknown-linux-gnu target, zig linking for aarch64, the same checks, and the
engine's ELF machine checked to be aarch64); ``--arch all`` builds both.

    python scripts/wheels.py                 # every version, the sdist, the checks
    python scripts/wheels.py 3.13            # one version
    python scripts/wheels.py 3.14 --cross-lib-dir CHROOT/usr/lib/python3.14 --print-path
    python scripts/wheels.py --arch aarch64 --no-sdist   # the aarch64 wheels (scripts/arm64.sh tests one)

Wheels are kept in target/nox-wheels/<version>/ beside a hash of the engine's sources (the
nox test sessions and scripts/python314.sh install them from there) and rebuilt only when the
sources change; ``--dist DIR`` (default dist/) gets a copy of each, the sdist and
``wheels.json`` (tag, size, build seconds, auditwheel's verdict). Interpreters come from
~/.pyenv/versions, then PATH; a version with none here (3.14) is built with PyO3's
cross-compiling support: the target's sysconfig from ``--cross-lib-dir``
(``PYO3_CROSS_LIB_DIR``), else maturin's own for that version.
The builds use their own Cargo target dir (target/manylinux): zig's C compiler and linker
would otherwise rebuild the development build's C dependencies each time.
The aarch64 wheels have their own directories, so that the two never share a cache: kept in
target/nox-wheels-aarch64/<version>/, built in target/manylinux-aarch64, listed in
``wheels-aarch64.json``. No interpreter of the host runs aarch64 code, so every version is
built with maturin's own sysconfig for it (a PyO3 config file maturin writes: ``-i pythonX.Y``
when cross-compiling), or with a target root's sysconfig given by ``--cross-lib-dir``.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import NamedTuple

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


class Platform(NamedTuple):
    """Where the wheels of one architecture are built and kept, and what they must be."""

    arch: str
    rust_target: str | None  # None: the host's (x86_64)
    kept: Path
    target_dir: Path
    elf_machine: int  # the ELF header's e_machine of the engine's shared object

    @property
    def tag(self) -> str:
        return "manylinux_2_28_" + self.arch


PLATFORMS = {
    "x86_64": Platform("x86_64", None, KEPT, TARGET_DIR, 62),
    "aarch64": Platform(
        "aarch64",
        "aarch64-unknown-linux-gnu",
        ROOT / "target" / "nox-wheels-aarch64",
        ROOT / "target" / "manylinux-aarch64",
        183,
    ),
}


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


def build_env(cross_lib_dir: str | None, platform: Platform = PLATFORMS["x86_64"]) -> dict[str, str]:
    """maturin finds zig as ``python -m ziglang``, with the project venv's python first on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(VENV_BIN) + os.pathsep + env.get("PATH", "")
    env["CARGO_TARGET_DIR"] = str(platform.target_dir)
    if platform.rust_target:
        # Cross-compiling: the target's sysconfig is --cross-lib-dir's or maturin's, never one
        # left in the environment for another platform.
        env.pop("PYO3_CROSS_LIB_DIR", None)
    if cross_lib_dir:
        env["PYO3_CROSS_LIB_DIR"] = cross_lib_dir
    return env


def elf_machine(header: bytes) -> int | None:
    """The e_machine of a 64-bit little-endian ELF header (62 x86_64, 183 aarch64), else None."""
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        return None
    return struct.unpack_from("<H", header, 18)[0]


def check_machine(wheel: Path, platform: Platform) -> None:
    """Fails unless the engine's shared object in ``wheel`` is built for ``platform``'s CPU."""
    with zipfile.ZipFile(wheel) as z:
        engines = [n for n in z.namelist() if n.startswith("turbocql/_engine") and n.endswith(".so")]
        if len(engines) != 1:
            sys.exit("%s: expected one turbocql/_engine*.so, found %s" % (wheel.name, engines))
        with z.open(engines[0]) as f:
            machine = elf_machine(f.read(20))
    if machine != platform.elf_machine:
        sys.exit(
            "%s: %s is ELF machine %s, not %s's %d"
            % (wheel.name, engines[0], machine, platform.arch, platform.elf_machine)
        )


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


def check(wheel: Path, verdict: dict, tag: str = TAG) -> None:
    """Fails unless auditwheel accepts ``wheel`` under its own tag, needing nothing it must not carry."""
    if verdict["returncode"] != 0 or verdict["consistent_with"] != tag or not wheel.name.endswith(tag + ".whl"):
        sys.exit("auditwheel does not accept %s as %s:\n%s" % (wheel.name, tag, verdict["output"]))
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


def ensure_rust_target(target: str, log=print) -> None:
    """Adds Rust's standard library for ``target`` with rustup when it is not installed (a
    fresh machine has the host's only)."""
    installed = subprocess.run(
        ["rustup", "target", "list", "--installed"], check=True, capture_output=True, text=True
    ).stdout.split()
    if target not in installed:
        log("==> rustup target add %s" % target)
        subprocess.run(["rustup", "target", "add", target], check=True, stdout=sys.stderr)


def wheel(version: str, cross_lib_dir: str | None = None, log=print, arch: str = "x86_64") -> tuple[Path, dict]:
    """The engine's wheel for CPython ``version`` on ``arch``: the kept one, or a new build; with its record."""
    platform = PLATFORMS[arch]
    out = platform.kept / version
    out.mkdir(parents=True, exist_ok=True)
    stamp, record_file = out / "sources.sha256", out / "build.json"
    digest = sources_hash()
    kept = sorted(out.glob("turbocql-*-cp%s-*.whl" % version.replace(".", "")))
    if kept and stamp.is_file() and stamp.read_text().strip() == digest and record_file.is_file():
        log("engine wheel up to date: %s" % kept[-1].name)
        return kept[-1], json.loads(record_file.read_text())
    for old in out.glob("turbocql-*.whl"):
        old.unlink()
    if platform.rust_target:
        ensure_rust_target(platform.rust_target, log)
    # Cross-compiling, no interpreter here can describe the target's Python.
    python = interpreter(version) if platform.rust_target is None else None
    if python is None and cross_lib_dir is None:
        log("no CPython %s for %s here: built with maturin's own sysconfig for it" % (version, arch))
    cmd = [
        str(VENV_BIN / "maturin"),
        *MATURIN_BUILD,
        *(["--target", platform.rust_target] if platform.rust_target else []),
        "--interpreter",
        python or "python%s" % version,
        "--out",
        str(out),
    ]
    log("==> " + " ".join(cmd))
    started = time.monotonic()
    # maturin's progress goes to stderr: stdout carries only what --print-path prints.
    env = build_env(None if python else cross_lib_dir, platform)
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, stdout=sys.stderr)
    seconds = time.monotonic() - started
    built = sorted(out.glob("turbocql-*.whl"))[-1]
    verdict = auditwheel(built)
    check(built, verdict, platform.tag)
    check_contents(built)
    check_machine(built, platform)
    record = {
        "wheel": built.name,
        "python": version,
        "tag": platform.tag,
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


def summary_name(arch: str) -> str:
    """The name of the summary written beside ``arch``'s wheels in --dist."""
    return "wheels.json" if arch == "x86_64" else "wheels-%s.json" % arch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", default=PYTHONS, help="CPython versions (default: %(default)s)")
    ap.add_argument("--arch", choices=[*PLATFORMS, "all"], default="x86_64", help="default: %(default)s")
    ap.add_argument("--cross-lib-dir", default=None, help="the sysconfig of a version with no interpreter here")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the wheels, sdist and wheels.json go")
    ap.add_argument("--no-sdist", action="store_true")
    ap.add_argument("--print-path", action="store_true", help="print only the wheel's path (one version)")
    args = ap.parse_args(argv)
    for v in args.versions:
        if v not in PYTHONS:
            ap.error("unsupported version %s (supported: %s)" % (v, ", ".join(PYTHONS)))
    arches = list(PLATFORMS) if args.arch == "all" else [args.arch]
    if len(arches) > 1 and (args.cross_lib_dir or args.print_path):
        ap.error("--cross-lib-dir and --print-path take one --arch")
    log = (lambda msg: print(msg, file=sys.stderr)) if args.print_path else print
    if args.print_path:
        if len(args.versions) != 1:
            ap.error("--print-path takes one version")
        print(wheel(args.versions[0], args.cross_lib_dir, log, arches[0])[0])
        return 0
    args.dist.mkdir(parents=True, exist_ok=True)
    summaries = {}
    for arch in arches:
        records = []
        for v in args.versions:
            built, record = wheel(v, args.cross_lib_dir, log, arch)
            shutil.copy2(built, args.dist / built.name)
            records.append(record)
        summaries[arch] = {"wheels": records}
    source = None if args.no_sdist else sdist(args.dist, log)
    for arch, summary in summaries.items():
        if source:
            summary["sdist"] = {"file": source.name, "bytes": source.stat().st_size}
        (args.dist / summary_name(arch)).write_text(json.dumps(summary, indent=1) + "\n")
        for r in summary["wheels"]:
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
    if source:
        print("%-60s %5.1f MB" % (source.name, source.stat().st_size / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
