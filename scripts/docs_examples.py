"""The documentation's examples: which blocks are examples, and the shell ones run.

Python examples are ``testcode`` blocks (with ``testoutput`` for what they print), run by
Sphinx's doctest builder (``bash scripts/docs.sh doctest``; tests/integration/test_docs.py
runs it against the local nodes). A plain ``python`` block would be skipped by that run, so
none is allowed. A shell block (``sh``, ``bash``, ``console``) carries a MyST comment on the
line above it: ``% example: run`` (tests/integration/test_docs.py runs it, in a scratch
directory prepared for its page below, with the project's ``turbocql`` on PATH), or
``% example: not run here: <why>`` (what runs it elsewhere, or why nothing can).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.M | re.S)
SHELL = {"sh", "bash", "console", "shell"}
PYTHON = {"python", "py", "python3", "pycon"}
MARK = re.compile(r"^% example: (run|not run here: (?P<why>\S.*))$")


def pages(docs: Path) -> list[Path]:
    """Every Markdown page of the site (not the build output)."""
    return sorted(p for p in docs.rglob("*.md") if "_build" not in p.parts)


def _blocks(page: Path):
    """(language, code, the line above the fence) of each fenced block of ``page``."""
    text = page.read_text()
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        yield m.group(1).strip(), m.group(2), before


def pages_with_examples(docs: Path) -> list[Path]:
    return [p for p in pages(docs) if any(lang == "{testcode}" for lang, _, _ in _blocks(p))]


def count_examples(files) -> int:
    return sum(1 for p in files for lang, _, _ in _blocks(Path(p)) if lang == "{testcode}")


def unchecked_blocks(docs: Path) -> list[str]:
    """Blocks that no run would check: plain Python blocks, and shell blocks without a mark."""
    problems = []
    for page in pages(docs):
        for lang, code, before in _blocks(page):
            where = "%s: %s" % (page.relative_to(docs), code.strip().splitlines()[0] if code.strip() else "")
            if lang in PYTHON:
                problems.append("python block (make it a testcode block): " + where)
            elif lang in SHELL and not MARK.match(before):
                problems.append("shell block without '% example: run' or '% example: not run here: <why>': " + where)
    return problems


def _prepare_bulk(workdir: Path) -> None:
    """demo.events and the files the bulk page's commands read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from turbocql.cluster import Cluster

    cluster = Cluster(["127.0.0.1"], port=9042)
    try:
        session = cluster.connect()
        session.execute(
            "CREATE KEYSPACE IF NOT EXISTS demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        session.execute(
            "CREATE TABLE IF NOT EXISTS demo.events"
            " (day text, seq int, kind text, value double, PRIMARY KEY (day, seq))"
        )
    finally:
        cluster.shutdown()
    rows = [("2026-11-23", i, "click" if i % 3 else "view", i / 10) for i in range(100)]
    (workdir / "events.csv").write_text("day,seq,kind,value\n" + "".join("%s,%d,%s,%s\n" % r for r in rows))
    (workdir / "export.csv").write_text("when,n,what\n" + "".join("%s,%d,%s\n" % r[:3] for r in rows))
    for part in (1, 2):
        chunk = rows[(part - 1) * 50 : part * 50]
        table = pa.table({name: [r[i] for r in chunk] for i, name in enumerate(("day", "seq", "kind", "value"))})
        pq.write_table(table, workdir / ("part-%d.parquet" % part))


def _drop_demo() -> None:
    from turbocql.cluster import Cluster

    cluster = Cluster(["127.0.0.1"], port=9042)
    try:
        cluster.connect().execute("DROP KEYSPACE IF EXISTS demo")
    finally:
        cluster.shutdown()


# What a page's shell examples need before they run, and after.
PREPARE = {"bulk.md": (_prepare_bulk, _drop_demo)}


def run_shell_examples(docs: Path, scratch: Path, bin_dir: Path) -> int:
    """Runs every ``% example: run`` shell block, each page's in its own scratch directory;
    raises on the first that fails. Returns how many ran."""
    ran = 0
    env = dict(os.environ, PATH="%s%s%s" % (Path(bin_dir).absolute(), os.pathsep, os.environ.get("PATH", "")))
    for page in pages(docs):
        blocks = [
            code
            for lang, code, before in _blocks(page)
            if lang in SHELL and MARK.match(before) and before.endswith(": run")
        ]
        if not blocks:
            continue
        workdir = scratch / page.stem
        workdir.mkdir(parents=True, exist_ok=True)
        prepare, cleanup = PREPARE.get(page.name, (None, None))
        if prepare:
            prepare(workdir)
        try:
            for code in blocks:
                done = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", code],
                    cwd=workdir,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                if done.returncode != 0:
                    raise AssertionError(
                        "%s: shell example failed (exit %d):\n%s\n--- stdout\n%s\n--- stderr\n%s"
                        % (page.name, done.returncode, code, done.stdout[-3000:], done.stderr[-3000:])
                    )
                ran += 1
        finally:
            if cleanup:
                cleanup()
    return ran
