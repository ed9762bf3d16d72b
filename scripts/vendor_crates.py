"""The crates the engine builds from vendor/ instead of crates.io (Cargo's [patch.crates-io] in
Cargo.toml), each its exact published version plus the patches in vendor/patches/<crate>/.

vendor/vendored.json names each crate's version and the SHA-256 crates.io publishes for its
.crate file. The vendored tree is always the published crate with the patches applied, in
order; nothing else is edited there by hand. Three commands:

    python scripts/vendor_crates.py check            # lint gate: vendor/<crate> == published + patches
    python scripts/vendor_crates.py apply [--crate C --version V]
                                                     # vendor again (a crate upgrade: V's checksum is
                                                     # taken from the crates.io index); fails loudly,
                                                     # naming the patch, when one no longer applies
    python scripts/vendor_crates.py diff --crate C --patch NAME
                                                     # after editing vendor/C: write the difference
                                                     # from the published crate as one patch

A patch is in upstream form: a unified diff whose paths start with the crate's directory in
its repository (``a/scylla-cql/src/frame/mod.rs``), applied with ``git apply -p2``.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "vendor"
MANIFEST = VENDOR / "vendored.json"
PATCHES = VENDOR / "patches"
REGISTRY_CACHE = Path.home() / ".cargo" / "registry" / "cache"
# Files cargo adds when it unpacks a crate, not part of the published archive's meaning.
IGNORED = {".cargo-ok"}


class VendorError(Exception):
    pass


def index_checksum(name: str, version: str) -> str:
    """The SHA-256 the crates.io sparse index gives for ``name`` ``version``."""
    prefix = {1: "1", 2: "2", 3: f"3/{name[0]}"}.get(len(name), f"{name[:2]}/{name[2:4]}")
    url = f"https://index.crates.io/{prefix}/{name}"
    with urllib.request.urlopen(url, timeout=30) as r:
        for line in r.read().decode().splitlines():
            entry = json.loads(line)
            if entry["vers"] == version:
                return entry["cksum"]
    raise VendorError(f"{name} {version} is not in the crates.io index ({url})")


def crate_archive(name: str, version: str, cksum: str) -> bytes:
    """The published .crate file: cargo's cache when it has it, else crates.io; checked against
    ``cksum`` either way."""
    data = None
    for cached in REGISTRY_CACHE.glob(f"*/{name}-{version}.crate"):
        data = cached.read_bytes()
        break
    if data is None:
        url = f"https://static.crates.io/crates/{name}/{name}-{version}.crate"
        with urllib.request.urlopen(url, timeout=60) as r:
            data = r.read()
    got = hashlib.sha256(data).hexdigest()
    if got != cksum:
        raise VendorError(f"{name}-{version}.crate has SHA-256 {got}, crates.io publishes {cksum}")
    return data


def unpack(data: bytes, name: str, version: str, dest: Path) -> Path:
    top = f"{name}-{version}"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
    return dest / top


def patches_of(name: str) -> list[Path]:
    return sorted((PATCHES / name).glob("*.patch"))


def apply_patches(name: str, tree: Path) -> None:
    for patch in patches_of(name):
        r = subprocess.run(
            ["git", "apply", "-p2", "--whitespace=nowarn", str(patch)],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise VendorError(
                f"{patch.relative_to(ROOT)} no longer applies to {tree.name}:\n{r.stderr.strip()}\n"
                f"Port it by hand: edit vendor/{name} from the published crate, then "
                f"`python scripts/vendor_crates.py diff --crate {name} --patch {patch.stem}`."
            )


def published_and_patched(name: str, entry: dict, workdir: Path) -> Path:
    tree = unpack(crate_archive(name, entry["version"], entry["cksum"]), name, entry["version"], workdir)
    apply_patches(name, tree)
    return tree


def differences(a: Path, b: Path) -> list[str]:
    """Paths (relative) that differ between trees ``a`` and ``b``."""
    out: list[str] = []

    def walk(cmp: filecmp.dircmp, rel: str) -> None:
        for f in cmp.left_only + cmp.right_only:
            if f not in IGNORED:
                out.append(f"{rel}{f} (only on one side)")
        for f in cmp.diff_files:
            out.append(f"{rel}{f}")
        for f in cmp.common_files:  # dircmp compares by stat first: make sure
            if f not in cmp.diff_files and (Path(cmp.left) / f).read_bytes() != (Path(cmp.right) / f).read_bytes():
                out.append(f"{rel}{f}")
        for d, sub in cmp.subdirs.items():
            walk(sub, f"{rel}{d}/")

    walk(filecmp.dircmp(a, b, ignore=[]), "")
    return sorted(set(out))


def load_manifest() -> dict:
    return json.loads(MANIFEST.read_text())


def cmd_check(_: argparse.Namespace) -> int:
    bad = 0
    for name, entry in load_manifest().items():
        with tempfile.TemporaryDirectory() as tmp:
            tree = published_and_patched(name, entry, Path(tmp))
            diff = differences(tree, VENDOR / name)
        n = len(patches_of(name))
        if diff:
            bad += 1
            print(f"vendor/{name} is not {name} {entry['version']} + its {n} patch(es); differs in:", file=sys.stderr)
            for d in diff:
                print(f"    {d}", file=sys.stderr)
        else:
            print(f"vendor/{name}: {name} {entry['version']} + {n} patch(es), as published")
    return 1 if bad else 0


def cmd_apply(a: argparse.Namespace) -> int:
    manifest = load_manifest()
    names = [a.crate] if a.crate else list(manifest)
    for name in names:
        entry = manifest.setdefault(name, {})
        if a.version:
            entry["version"] = a.version
            entry["cksum"] = index_checksum(name, a.version)
        with tempfile.TemporaryDirectory() as tmp:
            tree = published_and_patched(name, entry, Path(tmp))
            shutil.rmtree(VENDOR / name, ignore_errors=True)
            shutil.copytree(tree, VENDOR / name, ignore=shutil.ignore_patterns(*IGNORED))
        print(f"vendor/{name}: {name} {entry['version']} + {len(patches_of(name))} patch(es)")
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


def cmd_diff(a: argparse.Namespace) -> int:
    entry = load_manifest()[a.crate]
    others = [p for p in patches_of(a.crate) if p.stem != a.patch]
    with tempfile.TemporaryDirectory() as tmp:
        base = unpack(crate_archive(a.crate, entry["version"], entry["cksum"]), a.crate, entry["version"], Path(tmp))
        for patch in others:  # the other patches are the base of this one
            subprocess.run(["git", "apply", "-p2", str(patch)], cwd=base, check=True)
        r = subprocess.run(
            ["git", "diff", "--no-index", "--no-prefix", "--", ".", str(VENDOR / a.crate)],
            cwd=base,
            capture_output=True,
            text=True,
        )
    if r.returncode not in (0, 1):
        raise VendorError(r.stderr)
    text = _upstream_paths(r.stdout, a.crate, str(VENDOR / a.crate))
    out = PATCHES / a.crate / f"{a.patch}.patch"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


def _upstream_paths(diff: str, name: str, vendored: str) -> str:
    """``git diff --no-index`` names one side by the temporary tree and the other by vendor/:
    both become ``a/<crate>/...`` and ``b/<crate>/...``, as in the crate's repository."""
    vend = vendored.lstrip("/")
    lines = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("diff --git ", "--- ", "+++ ")):
            line = line.replace(f"/{vend}/", "").replace(f"{vend}/", "")
            if line.startswith("diff --git "):
                parts = line.split()
                line = f"diff --git a/{name}/{_rel(parts[2])} b/{name}/{_rel(parts[3])}\n"
            elif line.startswith("--- ") and not line.startswith("--- /dev/null"):
                line = f"--- a/{name}/{_rel(line[4:].strip())}\n"
            elif line.startswith("+++ ") and not line.startswith("+++ /dev/null"):
                line = f"+++ b/{name}/{_rel(line[4:].strip())}\n"
        lines.append(line)
    return "".join(lines)


def _rel(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check").set_defaults(run=cmd_check)
    p = sub.add_parser("apply")
    p.add_argument("--crate")
    p.add_argument("--version", help="vendor this published version instead (needs --crate)")
    p.set_defaults(run=cmd_apply)
    p = sub.add_parser("diff")
    p.add_argument("--crate", required=True)
    p.add_argument("--patch", required=True, help="the patch's file name, without .patch")
    p.set_defaults(run=cmd_diff)
    a = ap.parse_args()
    if getattr(a, "version", None) and not a.crate:
        ap.error("--version needs --crate")
    try:
        return a.run(a)
    except VendorError as e:
        print(f"vendor_crates: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
