"""The unload writer under a sys.stdout that has no bytes buffer (a notebook's, doctest's):
a file output is closed as usual, and ``-`` writes the bytes to descriptor 1 without
closing the process's standard output."""

import io
import os
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")

from turbocql.bulk._formats import Writer  # noqa: E402


def test_a_file_output_is_closed_whatever_sys_stdout_is(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    writer = Writer(str(tmp_path / "out.csv"), "csv")
    writer.write(pa.record_batch({"a": ["1", "2"]}))
    writer.close()
    assert (tmp_path / "out.csv").read_text().split() == ['"a"', '"1"', '"2"']


def test_dash_writes_to_descriptor_1_when_sys_stdout_has_no_buffer():
    code = (
        "import io, sys, pyarrow as pa\n"
        "from turbocql.bulk._formats import Writer\n"
        "sys.stdout = io.StringIO()\n"
        "w = Writer('-', 'csv')\n"
        "w.write(pa.record_batch({'a': ['x']}))\n"
        "w.close()\n"
        "import os; os.write(1, b'still open\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [b'"a"', b'"x"', b"still", b"open"]
