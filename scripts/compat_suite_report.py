"""The compat suite's report (``compat_suite.py``): ``scripts/compat_suite.md`` from the run's
JSON: per target a table of each file's counts per run, the tests that pass on the classic
driver and not on turbocql grouped by reason, the main failure reasons, what the code imports
from ``cassandra`` that turbocql lacks, and the cqlsh application's outcome.
"""

from __future__ import annotations

import collections
from pathlib import Path

from compat_suite_config import CASSANDRA_VERSION, CLASSIC_VERSION, RUNS, TARGETS
from compat_suite_known import UNEXPLAINED, regressions


def _cell(counts: dict | None) -> str:
    if not counts:
        return "–"
    return "%d / %d / %d / %d" % (counts["passed"], counts["failed"], counts["skipped"], counts["errors"])


def _table(files: dict) -> list[str]:
    lines = ["| file | " + " | ".join(RUNS) + " | passes on classic, not on turbocql |"]
    lines.append("| --- | " + " | ".join("---" for _ in RUNS) + " | --- |")
    totals = {r: collections.Counter() for r in RUNS}
    lost = collections.Counter(r["test"].split("::", 1)[0] for r in regressions(files))
    for name, per_run in files.items():
        lines.append("| %s | %s | %d |" % (name, " | ".join(_cell(per_run.get(r)) for r in RUNS), lost.get(name, 0)))
        for r in RUNS:
            if per_run.get(r):
                for k in ("passed", "failed", "skipped", "errors"):
                    totals[r][k] += per_run[r][k]
    lines.append(
        "| **total** | %s | **%d** |"
        % (" | ".join("**%s**" % _cell(dict(totals[r])) for r in RUNS), sum(lost.values()))
    )
    return lines


def _regression_section(title: str, files: dict) -> list[str]:
    regs = regressions(files)
    unexplained = [r for r in regs if r["reason"] == UNEXPLAINED]
    lines = [
        "",
        "## %s: tests that pass on the classic driver and not on turbocql (%d; unexplained: %d)"
        % (title, len(regs), len(unexplained)),
        "",
        "Grouped by reason (`KNOWN_TESTS` / `KNOWN_ERRORS` in `scripts/compat_suite_known.py`); each test "
        "with the first error line of its turbocql run.",
    ]
    groups: dict[str, list[dict]] = collections.defaultdict(list)
    for r in regs:
        groups[r["reason"]].append(r)
    order = sorted(groups, key=lambda k: (k == UNEXPLAINED, -len(groups[k]), k))
    for reason in order:
        lines += ["", "### %s (%d)" % ("**Unexplained**" if reason == UNEXPLAINED else reason, len(groups[reason])), ""]
        for r in groups[reason]:
            lines.append("- `%s` (%s): `%s`" % (r["test"], r["status"], r["first_error"].replace("`", "'")[:200]))
    return lines


def write_report(data: dict, md_path: Path) -> None:
    single = data["targets"].get("single") or {}
    lines = [
        "# The classic driver's integration tests on turbocql (compat suite)",
        "",
        "Written by `scripts/compat_suite.py` (%s). The test files of the classic driver's "
        "repository, unmodified, run against a local Cassandra %s with their harness's variables for "
        "an external node (USE_CASS_EXTERNAL=1 CASSANDRA_VERSION=%s PROTOCOL_VERSION=4 CLUSTER_IP=...): "
        "once with the real `cassandra-driver` %s (**classic**), once through `python -m turbocql.compat "
        "--allow-shadow -m pytest` (**turbocql**, nothing added)."
        % (data["finished"], CASSANDRA_VERSION, CASSANDRA_VERSION, CLASSIC_VERSION),
        "",
        "Tests: %s (%s, commit `%s` of %s; %s). turbocql: `%s` (%s)."
        % (
            data["tests_source"].get("source"),
            data["tests_source"].get("note"),
            data["tests_source"].get("commit", "?")[:12],
            data["tests_source"].get("commit_date", "?"),
            "the driver source there says version %s" % data["tests_source"].get("source_version", "?"),
            data["turbocql"]["path"],
            data["turbocql"]["describe"],
        ),
        "",
        "Reproduce: `.venv/bin/python scripts/compat_suite.py` (with the node up: `turbocql localdb "
        "start`); the multi-node table: start `turbocql localdb start --nodes 3 --dcs 2 --first-address "
        "127.0.0.11`, then `.venv/bin/python scripts/compat_suite.py --target multinode --no-app`; "
        "the cqlengine table: `.venv/bin/python scripts/compat_suite.py --target cqlengine --no-app`. "
        "`--source PATH` takes the tests from a local clone of datastax/python-driver. Per-run logs and "
        "JUnit files: `~/.cache/turbocql/compat-suite-results/`.",
        "",
        "Cells: passed / failed / skipped / errors. Tests written for the three-node cluster of their CI "
        "(replication factor 3 at QUORUM, `get_node(...)` ccm control) fail on the classic driver too on "
        "a single node; compare the columns, not the absolute numbers. The last column counts the tests "
        "that pass on the classic driver and fail, error or skip on turbocql; each is listed below with "
        "its reason.",
        "",
        "The multi-node table runs MULTINODE_FILES (the files whose outcome depends on the topology) "
        "against `turbocql localdb`'s 3 nodes in 2 datacenters (dc1: 127.0.0.11-12, dc2: 127.0.0.13); "
        "their CI has 3 nodes in one datacenter named `datacenter1` at 127.0.0.1-3, so tests that name "
        "those fail on both drivers there too.",
    ]
    for target, spec in TARGETS.items():
        block = data["targets"].get(target)
        if not block or not block.get("files"):
            continue
        lines += ["", "## %s (%s; %s)" % (target, spec["title"], block.get("finished", "?")), ""]
        lines += _table(block["files"])
    for target in TARGETS:
        block = data["targets"].get(target)
        if block and block.get("files"):
            lines += _regression_section(target, block["files"])
    lines += ["", "## Main failure reasons per file, single node (top 5 per run; count)", ""]
    for name, per_run in (single.get("files") or {}).items():
        parts = []
        for r in RUNS:
            reasons = (per_run.get(r) or {}).get("reasons") or {}
            if reasons:
                top = list(reasons.items())[:5]
                parts.append("  - %s: " % r + "; ".join("`%s` (%d)" % (k.replace("`", "'"), v) for k, v in top))
        if parts:
            lines.append("- **%s**" % name)
            lines += parts
    for title, key in (
        ("What the chosen test files (and their harness) import from cassandra that turbocql lacks", "missing_tests"),
        ("What cqlsh imports from cassandra that turbocql lacks", "missing_cqlsh"),
    ):
        missing = data.get(key)
        if missing:
            lines += ["", "## " + title, "", "Static (every `from cassandra.X import Y` / `import cassandra.X`):", ""]
            for mod, names in missing.items():
                shown = ", ".join(
                    "`%s`" % n if n != "(module)" else "**the module**"
                    for n in sorted(names, key=lambda n: (n != "(module)", n))
                )
                lines.append("- `%s`: %s" % (mod, shown))
    app = data.get("app")
    if app:
        lines += [
            "",
            "## An application: cqlsh %s (PyPI), unmodified, through the shim" % app.get("cqlsh"),
            "",
            "`python -m cqlshlib 127.0.0.1 9042 -e ...` (classic) and "
            "`python -m turbocql.compat --allow-shadow -m cqlshlib 127.0.0.1 9042 -e ...` (turbocql), "
            "in a separate venv with cqlsh and its cassandra-driver %s." % ", ".join(app.get("cassandra-driver", [])),
            "",
            "| command | classic | turbocql |",
            "| --- | --- | --- |",
        ]
        for row in app["commands"]:
            cells = []
            for r in ("classic", "turbocql"):
                res = row[r]
                last = [ln for ln in res["output"].splitlines() if ln.strip()]
                summary = "ok" if res["rc"] == 0 else "rc=%s: %s" % (res["rc"], (last[-1] if last else "")[:160])
                cells.append(summary.replace("|", "\\|"))
            lines.append("| `%s` | %s |" % (row["command"][:70].replace("|", "\\|"), " | ".join(cells)))
    md_path.write_text("\n".join(lines) + "\n")
