#!/usr/bin/env python3
"""Run the classic driver's own integration tests on the classic driver and on turbocql.

The proof of `turbocql.compat` on third-party code: the test files of the classic driver's
source repository (datastax/python-driver), unmodified, run twice against the local
Cassandra (127.0.0.1:9042, `turbocql localdb start`): once with the real `cassandra-driver`
3.30.1, once with the same files run through `python -m turbocql.compat --allow-shadow -m
pytest`, so that every `import cassandra` gets turbocql. The result is a table
(`scripts/compat_suite.md`) and the raw data with the grouped failure reasons
(`scripts/compat_suite.json`).

Steps:

1. The tests (only their `tests/` directory: their `cassandra/` source must not shadow the
   installed driver) are put in a cache dir (default ~/.cache/turbocql/python-driver), from
   the first source that works: that dir if it already holds them; `--source PATH`, a git
   clone of datastax/python-driver (its tag 3.30.1/3.30.0 if it has one, else its default
   branch); `git clone` from GitHub; the sdist of cassandra-driver 3.30.1 from PyPI (which
   holds no tests: recorded, then the runner stops). None of their files is modified.
2. A virtualenv (default ~/.cache/turbocql/compat-suite-venv) with cassandra-driver 3.30.1,
   pytest, pytest-timeout and the few packages their harness imports; turbocql is put on its
   path with a .pth file naming `--turbocql-path` (default: this checkout's python/ dir,
   which holds the built engine).
3. Each chosen file of `tests/integration/standard/` (the ones that need no DSE, no ccm
   control of the node and no protocol v5 feature) runs in its own pytest process, with
   their harness's variables for an external node: USE_CASS_EXTERNAL=1,
   CASSANDRA_VERSION=5.0.6, PROTOCOL_VERSION=4 (which our pytest plugin makes their
   `TestCluster` use too, for both drivers), CLUSTER_IP=127.0.0.1 (`--target single`,
   the default) or CLUSTER_IP=127.0.0.11 (`--target multinode`: the 3-node 2-DC cluster of
   `turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11`, MULTINODE_FILES
   only). `--target cqlengine` runs every file of their `tests/integration/cqlengine` (the
   object mapper's suite) on the single node, its package's setup and teardown called by
   our plugin. Per test timeout 30 s. Once with the classic driver, once through the shim.
   Every test that passes on the classic driver and not on turbocql is listed in the report
   with its first error line, under its reason from KNOWN_TESTS / KNOWN_ERRORS
   (compat_suite_known.py), or "unexplained" when neither has one.
4. `--app cqlsh`: cqlsh from PyPI, in its own venv, run unmodified through the shim with a
   few commands; the outcome goes in the same report.

Usage:

    .venv/bin/python scripts/compat_suite.py [--source PATH] [--files a.py,b.py]
        [--turbocql-path DIR] [--only classic|turbocql] [--no-app] [--target single|multinode|cqlengine]
        [--report-only]

This script holds steps 2 to 4 and ``main``; what the suite runs and where is
``compat_suite_config``, step 1 ``compat_suite_source``, the report ``compat_suite_report``
and the reasons it gives ``compat_suite_known``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from compat_suite_config import (  # noqa: F401 - names of compat_suite, moved
    CACHE,
    CASSANDRA_VERSION,
    CLASSIC_VERSION,
    DEFAULT_FILES,
    MULTINODE_FILES,
    REPO_URL,
    RUNS,
    TAGS,
    TARGETS,
    log,
    run,
)
from compat_suite_known import regressions
from compat_suite_report import _cell, _regression_section, _table, write_report  # noqa: F401 - idem
from compat_suite_source import _from_git_dir, _git_dir_of, obtain_tests  # noqa: F401 - idem

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent

SUITE_REQUIREMENTS = [
    "cassandra-driver==%s" % CLASSIC_VERSION,
    "pytest>=8",
    "pytest-timeout>=2.3",
    "packaging",
    "pytz",  # test_types
    "numpy",  # test_cython_protocol_handlers (numpy row parser)
    "scales",  # metrics_enabled=True clusters in their harness and tests (greplin.scales)
    "ccm",  # their harness imports ccmlib at module level, even for an external node
]

# ccm on PyPI (3.1.5) predates ccmlib.hcd_cluster, which their harness imports (inside a
# try whose failure leaves CCMCluster undefined, a NameError a few lines on). Under
# USE_CASS_EXTERNAL nothing of ccm runs, so the venv (ours, not their files) gets a
# placeholder module when the installed ccm lacks it.
HCD_PLACEHOLDER = '''"""Placeholder written by turbocql's scripts/compat_suite.py: ccm from PyPI has no HCD support."""
from ccmlib.cluster import Cluster


class HcdCluster(Cluster):
    pass
'''


# -- 2. the virtualenv -------------------------------------------------------------------


# A pytest plugin of ours, loaded in both drivers' runs (-p): their harness's TestCluster takes
# its protocol version from the server's version (v5 for Cassandra 5), not from
# PROTOCOL_VERSION; with it, every TestCluster uses PROTOCOL_VERSION (4), as their other
# helpers do. Since issue 27 turbocql refuses protocol_version=5 (the engine speaks v4 only)
# where the classic driver speaks v5 to Cassandra 5, so without this nearly every test would
# measure that one refusal.
HARNESS_PLUGIN = "compat_suite_harness"
HARNESS_PLUGIN_SOURCE = '''"""turbocql's compat suite: TestCluster at PROTOCOL_VERSION (scripts/compat_suite.py)."""
import os


def pytest_configure(config):
    try:
        import tests.integration as harness
    except ImportError:
        return
    version = os.environ.get("PROTOCOL_VERSION")
    if version and hasattr(harness, "TestCluster"):
        harness.TestCluster.DEFAULT_PROTOCOL_VERSION = int(version)


# Their cqlengine package sets up its keyspace and connection in nose-style package
# functions, which pytest 8 no longer calls: called here around the session's tests.
def _cqlengine_package(session):
    if any("tests/integration/cqlengine/" in item.nodeid for item in session.items):
        import tests.integration.cqlengine as package

        return package
    return None


def pytest_collection_finish(session):
    package = _cqlengine_package(session)
    if package is not None:
        package.setup_package()


def pytest_sessionfinish(session, exitstatus):
    package = _cqlengine_package(session)
    if package is not None:
        package.teardown_package()
'''


def suite_venv(venv: Path, turbocql_path: Path) -> Path:
    python = venv / "bin" / "python"
    stamp = venv / "compat_suite_requirements.txt"
    want = "\n".join(SUITE_REQUIREMENTS) + "\n"
    if not python.exists():
        log("creating %s" % venv)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    if not stamp.exists() or stamp.read_text() != want:
        log("installing %s" % " ".join(SUITE_REQUIREMENTS))
        subprocess.run([str(python), "-m", "pip", "install", "-q", *SUITE_REQUIREMENTS], check=True)
        stamp.write_text(want)
    site = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True).stdout.strip()
    )
    (site / "turbocql_src.pth").write_text(str(turbocql_path) + "\n")
    (site / (HARNESS_PLUGIN + ".py")).write_text(HARNESS_PLUGIN_SOURCE)
    if (site / "ccmlib").is_dir() and not (site / "ccmlib" / "hcd_cluster.py").exists():
        (site / "ccmlib" / "hcd_cluster.py").write_text(HCD_PLACEHOLDER)
    probe = run([str(python), "-c", "import turbocql, cassandra; print(turbocql.__file__, cassandra.__version__)"])
    if probe.returncode:
        raise SystemExit("compat_suite: the suite venv cannot import turbocql and cassandra:\n" + probe.stderr)
    log("venv: %s" % probe.stdout.strip())
    return python


# -- 3. the runs -------------------------------------------------------------------------


_NOISE = re.compile(r"0x[0-9a-f]+|\b\d{4,}\b|'[0-9a-f-]{32,36}'")


def _reason(element) -> str:
    """One line for a failure/error: the exception type and the first line of its message."""
    message = (element.get("message") or "").strip()
    text = (element.text or "").strip()
    exc_lines = [ln[2:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    if exc_lines:
        first = next((ln for ln in exc_lines if re.match(r"[\w.]+(Error|Exception|Exit|Failure|Timeout)\b", ln)), None)
        message = first or exc_lines[0]
    message = message.splitlines()[0] if message else (text.splitlines()[-1] if text else "?")
    message = _NOISE.sub("…", message)
    return message[:200]


def parse_junit(path: Path) -> dict:
    out = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0, "reasons": {}, "tests": {}, "first_errors": {}}
    if not path.exists():
        return out
    root = ET.parse(path).getroot()
    reasons: collections.Counter = collections.Counter()
    for case in root.iter("testcase"):
        name = "%s::%s" % (case.get("classname", "").rsplit(".", 1)[-1], case.get("name"))
        failure, error, skipped = case.find("failure"), case.find("error"), case.find("skipped")
        if failure is not None:
            out["failed"] += 1
            reasons[_reason(failure)] += 1
            out["tests"][name] = "failed"
            out["first_errors"][name] = _reason(failure)
        elif error is not None:
            out["errors"] += 1
            reasons[_reason(error)] += 1
            out["tests"][name] = "error"
            out["first_errors"][name] = _reason(error)
        elif skipped is not None:
            out["skipped"] += 1
            out["tests"][name] = "skipped"
            out["first_errors"][name] = "skipped: " + _reason(skipped)
        else:
            out["passed"] += 1
            out["tests"][name] = "passed"
    out["reasons"] = dict(reasons.most_common())
    return out


def cqlengine_files(tests_dir: Path) -> tuple:
    """Every test file of their cqlengine suite, relative to it (some are in subpackages)."""
    root = tests_dir / TARGETS["cqlengine"]["dir"]
    return tuple(sorted(str(p.relative_to(root)) for p in root.rglob("test_*.py")))


def output_text(data: bytes | str | None) -> str:
    """What a timed-out subprocess had printed (bytes, text or None) as text."""
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def run_file(
    python: Path, tests_dir: Path, results: Path, run_name: str, test_file: str, timeout: int, target: str
) -> dict:
    ip = TARGETS[target]["ip"]
    out_dir = results / run_name if target == "single" else results / ("%s-%s" % (run_name, target))
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = test_file[:-3].replace("/", "__")
    junit = out_dir / (stem + ".xml")
    junit.unlink(missing_ok=True)
    pytest_args = [
        "-m",
        "pytest",
        TARGETS[target]["dir"] + "/" + test_file,
        "-c",
        str(tests_dir / "compat_suite_pytest.ini"),
        "--rootdir",
        str(tests_dir),
        "-p",
        "no:cacheprovider",
        "-p",
        HARNESS_PLUGIN,
        "-q",
        "-rN",
        "--timeout=30",
        "--junitxml",
        str(junit),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURBOCQL_COMPAT", "PYTHON"))}
    env.update(
        USE_CASS_EXTERNAL="1",
        CASSANDRA_VERSION=CASSANDRA_VERSION,
        PROTOCOL_VERSION="4",
        CLUSTER_IP=ip,
    )
    if run_name == "classic":
        cmd = [str(python), *pytest_args]
    else:
        cmd = [str(python), "-m", "turbocql.compat", "--allow-shadow", *pytest_args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tests_dir, env=env, capture_output=True, text=True, timeout=timeout)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = "timeout"
        stdout, stderr = output_text(exc.stdout), output_text(exc.stderr)
    elapsed = time.monotonic() - start
    (out_dir / (stem + ".log")).write_text(stdout + "\n---- stderr ----\n" + stderr[-200_000:])
    counts = parse_junit(junit)
    counts["rc"] = rc
    counts["seconds"] = round(elapsed, 1)
    if not junit.exists():
        lines = [ln for ln in (stdout + stderr).splitlines() if ln.strip()]
        e_lines = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
        counts["errors"] = max(counts["errors"], 1)
        counts["reasons"] = {"not collected (rc=%s): %s" % (rc, (e_lines or lines or ["?"])[-1][:300]): 1}
    return counts


KEYSPACES = r"""
import json, sys
from cassandra.cluster import Cluster
cluster = Cluster([sys.argv[1]], port=9042)
session = cluster.connect()
names = {r.keyspace_name for r in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")}
keep = set(json.loads(sys.argv[2])) if len(sys.argv) > 2 else None
dropped = []
if keep is not None:
    for name in sorted(names - keep):
        session.execute('DROP KEYSPACE IF EXISTS "%s"' % name.replace('"', '""'), timeout=60)
        dropped.append(name)
cluster.shutdown()
print(json.dumps({"keyspaces": sorted(names), "dropped": dropped}))
"""


def keyspaces(python: Path, ip: str, keep: list[str] | None = None) -> dict:
    """The node's keyspaces (with keep: after dropping every keyspace not in keep).

    Their tests leave keyspaces behind when they fail (a later run then meets
    AlreadyExists); each run is followed by dropping what it created, so every run starts
    from the node as the suite found it. Uses the classic driver, never the shim.
    """
    proc = run([str(python), "-c", KEYSPACES, ip, *([json.dumps(keep)] if keep is not None else [])], timeout=300)
    if proc.returncode:
        log("keyspace cleanup failed: %s" % proc.stderr.strip()[-300:])
        return {"keyspaces": keep or [], "dropped": []}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- 4. an application: cqlsh ------------------------------------------------------------


CQLSH_COMMANDS = (
    "SELECT release_version FROM system.local;",
    "DESCRIBE KEYSPACES;",
    "CREATE KEYSPACE IF NOT EXISTS compat_cqlsh WITH replication = "
    "{'class': 'SimpleStrategy', 'replication_factor': 1}; "
    "CREATE TABLE IF NOT EXISTS compat_cqlsh.t (k int PRIMARY KEY, v text, s set<int>); "
    "INSERT INTO compat_cqlsh.t (k, v, s) VALUES (1, 'one', {1, 2}); "
    "SELECT * FROM compat_cqlsh.t;",
    "DESCRIBE TABLE compat_cqlsh.t;",
)


def run_cqlsh(venv: Path, turbocql_path: Path, results: Path) -> dict:
    python = venv / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    if run([str(python), "-c", "import cqlshlib"]).returncode:
        log("installing cqlsh into %s" % venv)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "cqlsh"], check=True)
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True)
    (Path(site.stdout.strip()) / "turbocql_src.pth").write_text(str(turbocql_path) + "\n")
    versions = run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('cqlsh'), m.version('cassandra-driver'))"]
    ).stdout.split()
    out: dict = {"cqlsh": versions[0] if versions else "?", "cassandra-driver": versions[1:2], "commands": []}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURBOCQL_COMPAT", "PYTHON"))}
    env["CQLSH_NO_BUNDLED"] = "1"
    for command in CQLSH_COMMANDS:
        row = {"command": command}
        for name, prefix in (
            ("classic", [str(python), "-m", "cqlshlib"]),
            ("turbocql", [str(python), "-m", "turbocql.compat", "--allow-shadow", "-m", "cqlshlib"]),
        ):
            try:
                proc = subprocess.run(
                    [*prefix, "127.0.0.1", "9042", "-e", command],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=120,
                )
                rc, text = proc.returncode, (proc.stdout + proc.stderr).strip()
            except subprocess.TimeoutExpired:
                rc, text = "timeout", ""
            row[name] = {"rc": rc, "output": text[-3000:]}
        out["commands"].append(row)
    (results / "cqlsh.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


# -- static: what the code imports from cassandra that turbocql lacks ---------------------


PROBE = r"""
import ast, importlib, json, sys
out = {}
for path in sys.argv[1:]:
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except SyntaxError:
        continue
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "cassandra":
            wanted = [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            wanted = [(a.name, None) for a in node.names if a.name.split(".")[0] == "cassandra"]
        else:
            continue
        for mod, name in wanted:
            target = "turbocql" + mod[len("cassandra"):]
            try:
                module = importlib.import_module(target)
            except ImportError:
                out.setdefault(mod, {}).setdefault("(module)", []).append(path)
                continue
            if name and name != "*" and not hasattr(module, name):
                try:
                    importlib.import_module(target + "." + name)
                except ImportError:
                    out.setdefault(mod, {}).setdefault(name, []).append(path)
print(json.dumps(out))
"""


def missing_imports(python: Path, files: list[Path], root: Path) -> dict:
    """{cassandra module: {name or "(module)": [files]}} that turbocql lacks (no shim needed)."""
    proc = run([str(python), "-c", PROBE, *map(str, files)], check=True)
    found = json.loads(proc.stdout)
    return {
        mod: {name: sorted({str(Path(p).relative_to(root)) for p in paths}) for name, paths in sorted(names.items())}
        for mod, names in sorted(found.items())
    }


def _load(json_path: Path) -> dict:
    """The JSON of the last run, in the current shape (older ones had one target, three runs)."""
    if not json_path.exists():
        return {}
    data = json.loads(json_path.read_text())
    if "files" in data and "targets" not in data:
        files = {
            name: {r: counts for r, counts in per_run.items() if r in RUNS}
            for name, per_run in data.pop("files").items()
        }
        data["targets"] = {"single": {"files": files, "finished": data.get("finished")}}
        data.pop("env", None)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", help="a clone or checkout of datastax/python-driver to take the tests from")
    parser.add_argument("--cache", type=Path, default=CACHE / "python-driver", help="where the tests are kept")
    parser.add_argument("--venv", type=Path, default=CACHE / "compat-suite-venv")
    parser.add_argument("--turbocql-path", type=Path, default=CHECKOUT / "python", help="dir holding turbocql/")
    parser.add_argument("--turbocql-label", help="what --turbocql-path holds, for the report")
    parser.add_argument("--target", choices=sorted(TARGETS), default="single", help="the node(s) to run against")
    parser.add_argument("--files", help="comma-separated tests/integration/standard files (default: the chosen list)")
    parser.add_argument("--only", choices=RUNS, action="append", help="run only these (repeatable)")
    parser.add_argument("--file-timeout", type=int, default=1200, help="seconds per file and run")
    parser.add_argument("--no-app", action="store_true", help="skip the cqlsh run")
    parser.add_argument("--no-tests", action="store_true", help="keep the test results of the JSON; redo the rest")
    parser.add_argument(
        "--report-only", action="store_true", help="only rewrite the .md from the .json (after editing KNOWN_*)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "compat_suite", help="md/json path without suffix")
    args = parser.parse_args(argv)
    json_path = args.out.with_suffix(".json")

    if args.report_only:
        data = _load(json_path)
        for block in data["targets"].values():
            block["regressions"] = regressions(block["files"])
        json_path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        write_report(data, args.out.with_suffix(".md"))
        log("wrote %s" % args.out.with_suffix(".md"))
        return 0

    source = obtain_tests(args.cache, args.source)
    log("tests from %s (%s)" % (source.get("source"), source.get("note")))
    (args.cache / "compat_suite_pytest.ini").write_text("[pytest]\n")  # beside their tests/, not in it
    turbocql_path = args.turbocql_path.resolve()
    python = suite_venv(args.venv, turbocql_path)
    results = args.cache.parent / "compat-suite-results"
    results.mkdir(parents=True, exist_ok=True)

    describe = run(["git", "-C", str(turbocql_path), "describe", "--always", "--dirty"]).stdout.strip()
    default_files = {"multinode": MULTINODE_FILES, "cqlengine": cqlengine_files(args.cache)}.get(
        args.target, DEFAULT_FILES
    )
    files = args.files.split(",") if args.files else list(default_files)
    runs = args.only or list(RUNS)
    ip = TARGETS[args.target]["ip"]
    # The other target's results are kept; so are this target's other files and runs when
    # only some are run (--files, --only, --no-tests).
    data = _load(json_path)
    data.setdefault("targets", {})
    block = data["targets"].setdefault(args.target, {})
    if not (args.files or args.only or args.no_tests):
        block["files"] = {}
    block.setdefault("files", {})
    block["env"] = "USE_CASS_EXTERNAL=1 CASSANDRA_VERSION=%s PROTOCOL_VERSION=4 CLUSTER_IP=%s" % (
        CASSANDRA_VERSION,
        ip,
    )
    data.update(
        tests_source=source,
        turbocql={"path": str(turbocql_path), "describe": args.turbocql_label or describe or "not a git checkout"},
    )
    initial = keyspaces(python, ip)["keyspaces"]
    for test_file in [] if args.no_tests else files:
        for run_name in runs:
            log("%s: %s on %s ..." % (test_file, run_name, ip))
            counts = run_file(python, args.cache, results, run_name, test_file, args.file_timeout, args.target)
            counts["keyspaces_dropped_after"] = keyspaces(python, ip, initial)["dropped"]
            block["files"].setdefault(test_file, {})[run_name] = counts
            log("  %s (%.0f s)" % (_cell(counts), counts["seconds"]))
    if not args.no_tests:
        block["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    harness = [args.cache / "tests" / "__init__.py", args.cache / "tests" / "integration" / "__init__.py"]
    chosen = [args.cache / "tests" / "integration" / "standard" / f for f in DEFAULT_FILES]
    data["missing_tests"] = missing_imports(python, harness + chosen, args.cache)
    if not args.no_app:
        log("cqlsh ...")
        data["app"] = run_cqlsh(CACHE / "cqlsh-venv", turbocql_path, results)
        keyspaces(python, TARGETS["single"]["ip"], initial)
        cqlshlib = run(
            [
                str(CACHE / "cqlsh-venv" / "bin" / "python"),
                "-c",
                "import cqlshlib, os; print(os.path.dirname(cqlshlib.__file__))",
            ]
        ).stdout.strip()
        if cqlshlib:
            data["missing_cqlsh"] = missing_imports(python, sorted(Path(cqlshlib).glob("*.py")), Path(cqlshlib).parent)
    data["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for target_block in data["targets"].values():
        target_block["regressions"] = regressions(target_block["files"])
    json_path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    write_report(data, args.out.with_suffix(".md"))
    log("wrote %s and %s" % (args.out.with_suffix(".md"), json_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
