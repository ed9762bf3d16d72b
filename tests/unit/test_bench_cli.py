"""benchmarks/runner (the `turbocql bench` command, `python -m benchmarks.runner`): finding
benchmarks/, its options (no run), and the `turbocql bench` alias."""

import argparse
from pathlib import Path

import pytest

from benchmarks import runner as bench
from benchmarks.runner import discover

CHECKOUT = Path(__file__).resolve().parents[2]


def test_finds_the_checkouts_benchmarks_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("TURBOCQL_BENCHMARKS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # not found from the current directory: from the package's place
    found = bench.find_benchmarks_dir()
    assert found == CHECKOUT / "benchmarks" and (found / "common.py").is_file()
    assert bench.find_benchmarks_dir(found) == found


def test_a_directory_without_the_runners_is_refused(tmp_path):
    with pytest.raises(bench.BenchError, match="not turbocql's benchmarks directory"):
        bench.find_benchmarks_dir(tmp_path)
    for name in discover.REQUIRED_FILES:
        (tmp_path / name).write_text("")
    assert bench.find_benchmarks_dir(tmp_path) == tmp_path.resolve()


def test_the_environment_variable_names_the_dir(monkeypatch, tmp_path):
    for name in discover.REQUIRED_FILES:
        (tmp_path / name).write_text("")
    monkeypatch.setenv("TURBOCQL_BENCHMARKS_DIR", str(tmp_path))
    assert bench.find_benchmarks_dir() == tmp_path.resolve()


def test_options_and_unknown_scenario(capsys):
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "--quick", "--scenarios", "sync,nope"])
    assert args.quick and args.scenarios == "sync,nope" and args.repeat == 1
    assert args.func(args) == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err


def test_python_dash_m_benchmarks_runner_is_the_same_command():
    with pytest.raises(SystemExit) as e:
        bench.main(["--help"])
    assert e.value.code == 0
