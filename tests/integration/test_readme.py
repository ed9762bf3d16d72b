"""The README's quick start runs as written against the local Cassandra and prints what the
README says it prints. (Every other example lives in the documentation site, whose examples
tests/integration/test_docs.py runs.)"""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import PORT

README = Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_runs_and_prints_what_the_readme_shows(cassandra):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the README holds one Python example, the quick start"
    shown = re.search(r"It prints:\n\n```\n(.*?)```", text, re.S).group(1)
    code = blocks[0].replace("port=9042", "port=%d" % PORT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown
    # Its setup is the docs' quick start, which the docs' examples run too.
    docs = (README.parent / "docs" / "getting-started.md").read_text()
    assert blocks[0] in docs


def test_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, "the README is at most 200 lines: guides go to docs/"
