#!/usr/bin/env python3
"""Run the classic driver's own unit tests of public behaviour on it and through the shim.

The files of `tests/unit` in the classic driver's source that test what user code sees (types
and their codecs, policies, metadata and token maps, SortedSet, OrderedMap, the util value
types, parameter binding, ResultSet, execute_concurrent, timestamp generators, time helpers,
marshalling, query objects and row factories) run unmodified, twice: with cassandra-driver
(the oracle, installed in the same venv) and through `python -m turbocql.compat
--allow-shadow`, so that every `import cassandra` gets turbocql. No server is needed.

The tests come from Debian's source package of the classic driver (`python-cassandra-driver`,
its upstream tarball, which holds the repository's `tests/`), a registry CI reaches where
GitHub is not: the file is pinned by its SHA-256, downloaded once into
~/.cache/turbocql/classic-unit-<version>/ and only its `tests/` directory is kept (its
`cassandra/` source must not shadow the installed driver). None of its files is modified or
committed here.

The outcome is the report `scripts/classic_unit_suite.md`: per file, the counts of both runs,
and every test that passes on the classic driver and not on turbocql with its reason from
KNOWN (or "unexplained"). `tests/integration/test_classic_unit_suite.py` runs it in the long
tests (scripts/test_long.sh) and fails on any unexplained difference or below 95%.

Usage:

    .venv/bin/python scripts/classic_unit_suite.py [--turbocql-path DIR] [--files a.py,b.py]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compat_suite import CACHE, output_text, parse_junit  # noqa: E402  (a sibling script, not a package)

SOURCE_VERSION = "3.29.2"
SOURCE_URL = (
    "https://deb.debian.org/debian/pool/main/p/python-cassandra-driver/python-cassandra-driver_%s.orig.tar.gz"
    % SOURCE_VERSION
)
# From Debian's Sources index (trixie and sid, python-cassandra-driver 3.29.2-5 / -7).
SOURCE_SHA256 = "aa3be5396e05b395c178091656a329daba23b0d4dd69b8d076090157f86e6d13"

FILES = (
    "test_types.py",
    "test_policies.py",
    "test_metadata.py",
    "test_sortedset.py",
    "test_util_types.py",
    "test_parameter_binding.py",
    "test_orderedmap.py",
    "test_resultset.py",
    "test_concurrent.py",
    "test_timestamps.py",
    "test_time_util.py",
    "test_marshalling.py",
    "test_query.py",
    "test_row_factories.py",
)

# Tests that pass on the classic driver and not through the shim, each with why. Keyed
# "file::Class::test".
KNOWN: dict[str, str] = {
    "test_metadata.py::IndexTest::test_build_index_as_cql": (
        "the classic schema parsers are internals: the test takes Cassandra 2.1's from get_schema_parser and "
        "feeds its private _build_index_metadata pre-3.0 rows; turbocql reads system_schema itself and "
        "get_schema_parser raises UnsupportedOperation"
    ),
    "test_concurrent.py::ConcurrencyTest::test_recursion_limited": (
        "builds Session(cluster, hosts) without connecting: a turbocql Session is the engine's session of a "
        "connected cluster (Cluster.connect), so the unconnected classic form is not provided"
    ),
    "test_query.py::BatchStatementTest::test_clear": (
        "the test sets SimpleStatement(custom_payload=...): custom payloads raise UnsupportedOperation, since "
        "the scylla crate sends none (refused rather than dropped: docs/audit-accepted-settings.md)"
    ),
}

TARGET = 0.95
# A file whose run outlives this (a hang pytest-timeout could not break) counts as not run.
FILE_TIMEOUT = 240


def log(msg: str) -> None:
    print("classic_unit_suite: " + msg, file=sys.stderr, flush=True)


def obtain_tests(cache: Path) -> Path:
    """The dir holding the classic driver's tests/ (downloaded and checked once)."""
    dest = cache / ("classic-unit-%s" % SOURCE_VERSION)
    if (dest / "tests" / "unit").is_dir():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        tarball = Path(tmp) / "source.tar.gz"
        log("downloading %s" % SOURCE_URL)
        with urllib.request.urlopen(SOURCE_URL, timeout=120) as resp, open(tarball, "wb") as out:
            shutil.copyfileobj(resp, out)
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != SOURCE_SHA256:
            raise SystemExit("classic_unit_suite: %s has SHA-256 %s, expected %s" % (SOURCE_URL, digest, SOURCE_SHA256))
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers() if "/tests/" in m.name]
            tar.extractall(Path(tmp) / "x", members=members, filter="data")
        top = next((Path(tmp) / "x").iterdir())
        work = Path(tmp) / "out"
        shutil.copytree(top / "tests", work / "tests")
        (work / "pytest.ini").write_text("[pytest]\n")
        (work / "source.json").write_text(json.dumps({"url": SOURCE_URL, "sha256": SOURCE_SHA256}, indent=2) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    return dest


def run_file(root: Path, results: Path, run_name: str, test_file: str, turbocql_path: Path | None) -> dict:
    junit = results / run_name / (test_file[:-3] + ".xml")
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.unlink(missing_ok=True)
    pytest_args = ["-m", "pytest", "tests/unit/" + test_file, "-c", str(root / "pytest.ini"), "--rootdir", str(root)]
    pytest_args += ["-p", "no:cacheprovider", "-q", "-rN", "--timeout=60", "--junitxml", str(junit)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURBOCQL_COMPAT", "PYTHON"))}
    if run_name == "turbocql":
        cmd = [sys.executable, "-m", "turbocql.compat", "--allow-shadow", *pytest_args]
        if turbocql_path:
            env["PYTHONPATH"] = str(turbocql_path)
    else:
        cmd = [sys.executable, *pytest_args]
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=FILE_TIMEOUT)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = "killed after %d s" % FILE_TIMEOUT
        stdout, stderr = output_text(exc.stdout), output_text(exc.stderr)
    (results / run_name / (test_file[:-3] + ".log")).write_text(stdout + "\n---- stderr ----\n" + stderr)
    counts = parse_junit(junit)
    if not junit.exists():
        counts["errors"] = max(counts["errors"], 1)
        counts["reasons"] = {"no result (rc=%s): %s" % (rc, stdout[-300:]): 1}
    return counts


def compare(files: dict) -> dict:
    """Totals and the tests that pass on the classic driver and not through the shim."""
    classic_passed = turbocql_passed = 0
    differences = []
    for name, runs in files.items():
        classic, turbo = runs["classic"]["tests"], runs["turbocql"]["tests"]
        for test, outcome in classic.items():
            if outcome != "passed":
                continue
            classic_passed += 1
            if turbo.get(test) == "passed":
                turbocql_passed += 1
                continue
            key = "%s::%s" % (name, test)
            error = runs["turbocql"]["first_errors"].get(test) or turbo.get(test, "not run")
            differences.append({"test": key, "error": error, "reason": KNOWN.get(key, "unexplained")})
    ratio = turbocql_passed / classic_passed if classic_passed else 0.0
    return {
        "classic_passed": classic_passed,
        "turbocql_passed": turbocql_passed,
        "ratio": ratio,
        "differences": differences,
    }


def write_report(files: dict, summary: dict, path: Path) -> None:
    lines = [
        "# The classic driver's unit tests through the shim",
        "",
        "Written by `scripts/classic_unit_suite.py` (run in the long tests, `scripts/test_long.sh`, by "
        "`tests/integration/test_classic_unit_suite.py`). The files of the classic driver's "
        "`tests/unit` that test public behaviour, from its %s source (Debian's "
        "`python-cassandra-driver` upstream tarball, SHA-256 pinned), unmodified, run on "
        "cassandra-driver %s and through `python -m turbocql.compat --allow-shadow`." % (SOURCE_VERSION, _classic()),
        "",
        "| file | classic passed | classic failed | turbocql passed | turbocql failed |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, runs in files.items():
        c, t = runs["classic"], runs["turbocql"]
        lines.append(
            "| %s | %d | %d | %d | %d |"
            % (name, c["passed"], c["failed"] + c["errors"], t["passed"], t["failed"] + t["errors"])
        )
    lines += [
        "",
        "turbocql passes **%d of the %d** tests the classic driver passes (%.1f%%; the bar is %d%%)."
        % (summary["turbocql_passed"], summary["classic_passed"], 100 * summary["ratio"], 100 * TARGET),
        "",
    ]
    if summary["differences"]:
        lines += ["## Passing on the classic driver, not through the shim", "", "| test | why | first error |"]
        lines.append("|---|---|---|")
        for d in summary["differences"]:
            lines.append("| `%s` | %s | %s |" % (d["test"], d["reason"], d["error"].replace("|", "\\|")[:160]))
        lines.append("")
    path.write_text("\n".join(lines))


def _classic() -> str:
    from importlib.metadata import version

    return version("cassandra-driver")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--turbocql-path", type=Path, help="a dir holding turbocql/ to run instead of the installed one"
    )
    parser.add_argument("--files", help="comma-separated tests/unit files (default: all of FILES)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", type=Path, default=HERE / "classic_unit_suite.md")
    parser.add_argument("--json", type=Path, help="also write the raw outcome here")
    args = parser.parse_args(argv)
    root = obtain_tests(args.cache)
    chosen = args.files.split(",") if args.files else list(FILES)
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            files[name] = {
                run: run_file(root, Path(tmp), run, name, args.turbocql_path) for run in ("classic", "turbocql")
            }
            log(
                "%s: classic %d passed, turbocql %d passed"
                % (name, files[name]["classic"]["passed"], files[name]["turbocql"]["passed"])
            )
    summary = compare(files)
    write_report(files, summary, args.out)
    if args.json:
        args.json.write_text(json.dumps({"files": files, "summary": summary}, indent=1) + "\n")
    unexplained = [d["test"] for d in summary["differences"] if d["reason"] == "unexplained"]
    log(
        "%d of %d (%.1f%%); %d unexplained"
        % (summary["turbocql_passed"], summary["classic_passed"], 100 * summary["ratio"], len(unexplained))
    )
    return 0 if summary["ratio"] >= TARGET and not unexplained else 1


if __name__ == "__main__":
    raise SystemExit(main())
