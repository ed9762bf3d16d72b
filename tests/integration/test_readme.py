"""The README's quick start runs as written against the local Cassandra."""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import PORT

README = Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_runs(cassandra):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has a python quick start"
    code = blocks[0].replace("port=9042", "port=%d" % PORT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "1 Ada L." in lines and "3 Linus" in lines and "4 Barbara" in lines
    assert lines[-1] == "Ada L."
