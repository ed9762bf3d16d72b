"""The headline table of the README and of the docs home page is the one
scripts/headline_table.py makes from its committed result file, and the sync, pattern and
asyncio tables of docs/benchmarks.md and the paths table of docs/execution-paths.md are the
ones scripts/docs_tables.py makes from the same file: their figures cannot drift from the
measurements. And every figure of every table of the README and the docs has a source in a
committed result file."""

import itertools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import docs_tables  # noqa: E402
import headline_table  # noqa: E402


def test_the_readme_and_the_home_page_hold_the_table_made_from_the_result_file():
    table = headline_table.table()
    assert (ROOT / headline_table.RESULT).exists()
    for page in ("README.md", "docs/index.md"):
        text = (ROOT / page).read_text()
        assert table in text, "%s: run python scripts/headline_table.py and paste its table" % page
        assert headline_table.RESULT.rsplit("/", 1)[-1] in text, "%s does not name the result file" % page


def test_the_benchmarks_and_paths_pages_hold_the_tables_made_from_the_same_file():
    for page, tables in docs_tables.PAGES.items():
        text = (ROOT / page).read_text()
        for make in tables:
            assert make() in text, "%s: run python scripts/docs_tables.py and paste its %s" % (page, make.__name__)
        assert headline_table.RESULT.rsplit("/", 1)[-1] in text, "%s does not name the result file" % page


def test_the_table_compares_turbocql_with_the_classic_driver_and_the_rust_reference():
    lines = headline_table.table().splitlines()
    assert "classic" in lines[0] and "turbocql" in lines[0] and "Rust" in lines[0]
    assert len(lines) == 2 + 2 * 5  # header, rule, five paths for writes and for reads


# --------------------------------------------------------------------------------------------
# Every figure of a table in the README and the docs has a source in a committed result file.

_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(k)?(?![\w.]\d)")
# Figures that are not one value of a result file, each with where it comes from.
_DERIVED = {
    ("faults.md", "4,000,000"): "row 7: four paths × the 1,000,000 requests of each (reliability-2026-11-24.md)",
    ("faults.md", "46,732"): "rows 9 and 10: the sum of their tables' requests (reliability-2026-11-24.md)",
    ("migrating.md", "1.100000000000000088817"): "an example: the float 1.1's exact binary value",
}


def _formats(value, out):
    """``value`` as a table may show it: 0 to 3 decimals, and in thousands or millions (µs
    shown as ms, 88,123 as 88.1k)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    for x in (value, value / 1000, value / 1e6):
        for decimals in range(4):
            out.add(f"{x:.{decimals}f}")


def _source_figures():
    """Every number of the committed result files (benchmarks/results and its directories:
    JSON, JSON lines and the reports) and of the scripts' reports (scripts/*.md), as a table may show it."""
    out = set()

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        else:
            _formats(node, out)

    results = (p for p in (ROOT / "benchmarks" / "results").rglob("*") if p.is_file())
    for path in [*results, *(ROOT / "scripts").glob("*.md")]:
        if path.suffix == ".json":
            walk(json.loads(path.read_text()))
        elif path.suffix == ".jsonl":
            for line in path.read_text().splitlines():
                if line.strip():
                    walk(json.loads(line))
        elif path.suffix == ".md":
            for m in _NUMBER.finditer(path.read_text()):
                out.add((m.group(1) + (m.group(2) or "")).replace(",", ""))
    return out


def _table_figures(text):
    """(line, figure as shown, its number, its decimals, every number of its row) for each
    number of three significant digits or more in a table cell (the first cell, a row's
    name, left out)."""
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|") or set(line.strip()) <= set("|-: "):
            continue
        cells = line.strip().strip("|").split("|")[1:]
        found = [(m, (m.group(1) + (m.group(2) or "")).replace(",", "")) for c in cells for m in _NUMBER.finditer(c)]
        row = [float(n) for _, n in found]
        for m, number in found:
            if len(number.replace(".", "").lstrip("0")) < 3:
                continue
            decimals = len(m.group(2)) - 1 if m.group(2) else 0
            yield lineno, m.group(0), number, decimals, row


def test_every_figure_of_the_readme_and_docs_tables_has_a_source_in_a_committed_result_file():
    """A figure of a table (three significant digits or more) is a value of a committed result
    file as shown (its decimals; or in thousands, µs as ms, 88.1k), or the ratio of two figures
    of its row (B/A, ×), or one of _DERIVED with where it comes from. A figure typed by hand,
    or left behind when its result file was replaced, fails here."""
    sources = _source_figures()
    unsourced = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for lineno, shown, number, decimals, row in _table_figures(page.read_text()):
            if number in sources or (page.name, shown) in _DERIVED:
                continue
            if any(y and f"{x / y:.{decimals}f}" == number for x, y in itertools.permutations(row, 2)):
                continue
            unsourced.append("%s:%d: %s" % (page.relative_to(ROOT), lineno, shown))
    assert not unsourced, "figures with no source in a committed result file:\n" + "\n".join(unsourced)


def test_the_source_check_tells_a_sourced_figure_from_a_typed_one():
    sources = set()
    _formats(88123.4, sources)
    _formats(645912.0, sources)
    rows = list(_table_figures("| a | 88.1k | 88,123 | 646 | 88,124 | 12 |\n| b | 2.00 | 5.00 | 2.50× |"))
    assert [(r[1], r[2] in sources) for r in rows] == [
        ("88.1k", True),  # in thousands
        ("88,123", True),
        ("646", True),  # µs as ms
        ("88,124", False),  # typed
        ("2.00", False),
        ("5.00", False),
        ("2.50", False),
    ]  # 12: two digits, not a figure
    ratio_row = rows[-1][4]
    assert ratio_row == [2.0, 5.0, 2.5] and any(
        f"{x / y:.2f}" == "2.50" for x, y in itertools.permutations(ratio_row, 2)
    )
