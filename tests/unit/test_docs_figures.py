"""The headline table of the README and of the docs home page is the one
scripts/headline_table.py makes from its committed result file: its figures cannot drift
from the measurements."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import headline_table  # noqa: E402


def test_the_readme_and_the_home_page_hold_the_table_made_from_the_result_file():
    table = headline_table.table()
    assert (ROOT / headline_table.RESULT).exists()
    for page in ("README.md", "docs/index.md"):
        text = (ROOT / page).read_text()
        assert table in text, "%s: run python scripts/headline_table.py and paste its table" % page
        assert headline_table.RESULT.rsplit("/", 1)[-1] in text, "%s does not name the result file" % page


def test_the_table_compares_turbocql_with_the_classic_driver_and_the_rust_reference():
    lines = headline_table.table().splitlines()
    assert "classic" in lines[0] and "turbocql" in lines[0] and "Rust" in lines[0]
    assert len(lines) == 2 + 2 * 5  # header, rule, five paths for writes and for reads
