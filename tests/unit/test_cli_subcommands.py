"""The ``turbocql`` command's subcommands that are not the driver's own: ``localdb`` (the
turbocql-localdb distribution, localdb/) and ``bench`` (the checkout's benchmarks/runner/).
Present, they run; missing, they say how to get them, whatever the arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from turbocql import __main__ as cli

ROOT = Path(__file__).resolve().parents[2]


def _without(monkeypatch, *modules: str) -> None:
    """Imports of ``modules`` fail as for a package that is not installed."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("argv", [["localdb", "start", "--port", "9099"], ["localdb", "--help"], ["localdb"]])
def test_localdb_without_turbocql_localdb_says_to_install_it(monkeypatch, capsys, argv):
    _without(monkeypatch, "turbocql_localdb", "turbocql_localdb.cli")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("turbocql localdb: unavailable: the turbocql-localdb package is not installed")
    assert "pip install turbocql-localdb" in err and "pip install ./localdb" in err


def test_bench_outside_a_checkout_says_where_it_is(monkeypatch, capsys):
    _without(monkeypatch, "benchmarks.runner", "benchmarks.runner.cli")
    assert cli.main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "turbocql bench: unavailable: the benchmark runner is in the source checkout" in err
    assert "python -m benchmarks.runner" in err


def test_the_other_subcommands_still_work_without_them(monkeypatch, capsys):
    _without(monkeypatch, "turbocql_localdb", "turbocql_localdb.cli", "benchmarks.runner", "benchmarks.runner.cli")
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps the help lines
    assert "localdb (unavailable: the turbocql-localdb package is not installed" in out
    assert "pip install turbocql-localdb" in out and "unload" in out


def test_a_missing_dependency_of_a_present_package_is_not_called_a_missing_package():
    module = "turbocql_localdb.cli"
    assert cli._is_missing(module, ModuleNotFoundError("no", name="turbocql_localdb"))
    assert cli._is_missing(module, ModuleNotFoundError("no", name="turbocql_localdb.cli"))
    assert cli._is_missing("benchmarks.runner.cli", ModuleNotFoundError("no", name="benchmarks"))
    assert not cli._is_missing(module, ModuleNotFoundError("no", name="cryptography"))
    assert not cli._is_missing(module, ModuleNotFoundError("no", name="turbocql_local"))
    assert not cli._is_missing(module, ImportError("cannot import name x"))


def test_localdb_and_bench_run_when_present(capsys):
    for name in ("localdb", "bench"):
        with pytest.raises(SystemExit) as e:
            cli.main([name, "--help"])
        assert e.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: turbocql {name}")


@pytest.mark.parametrize("module", ["turbocql_localdb", "benchmarks.runner"])
def test_python_dash_m_of_each(module):
    out = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: turbocql ")
