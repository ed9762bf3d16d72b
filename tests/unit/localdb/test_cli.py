"""Unit tests of turbocql_localdb.cli: the options of ``turbocql localdb``."""

from __future__ import annotations

import importlib

import pytest

from .helpers import _parse, localdb


def test_cli_options():
    a = _parse("start")
    # heap, commitlog and nodes default to None: 2G and periodic for one node, 768M per node
    # for a cluster, and a saved cluster's own settings on a restart.
    assert (a.dir, a.port, a.heap, a.auth, a.address, a.storage_port, a.version, a.nodes, a.commitlog) == (
        None,
        None,
        None,
        False,
        "127.0.0.1",
        None,
        "5.0.6",
        None,
        None,
    )
    assert a.timeout == localdb.DEFAULT_TIMEOUT
    a = _parse(
        "start",
        "--auth",
        "--port",
        "9043",
        "--dir",
        "/tmp/n",
        "--heap",
        "1g",
        "--storage-port",
        "7101",
        "--timeout",
        "60",
        "--version",
        "5.0.5",
    )
    assert (a.auth, a.port, a.dir, a.heap, a.storage_port, a.timeout, a.version) == (
        True,
        9043,
        "/tmp/n",
        "1G",
        7101,
        60.0,
        "5.0.5",
    )
    assert _parse("stop", "--port", "9043").port == 9043
    assert _parse("status").localdb_action == "status"
    assert (a.setting, a.no_settings) == (None, False)
    a = _parse("start", "--setting", "materialized_views_enabled=false", "--setting", "sasi_indexes_enabled=false")
    assert a.setting == [("materialized_views_enabled", "false"), ("sasi_indexes_enabled", "false")]
    assert _parse("start", "--no-settings").no_settings is True


@pytest.mark.parametrize(
    "argv",
    [
        ["start", "--nodes", "three"],
        ["start", "--dcs", "1.5"],
        ["stop", "--node", "x"],
        ["start", "--heap", "huge"],
        ["start", "--port", "0"],
        ["start", "--port", "abc"],
        ["start", "--setting", "materialized_views_enabled"],
        ["start", "--setting", "native_transport_port=9999"],
        ["start", "--setting", "a=b", "--no-settings"],
        ["restart"],
        [],
    ],
)
def test_cli_rejects(argv, capsys):
    with pytest.raises(SystemExit) as e:
        _parse(*argv)
    assert e.value.code == 2


def test_main_module_has_localdb(capsys):
    try:
        main_mod = importlib.import_module("turbocql.__main__")
    except ImportError as e:  # package not importable without the built engine
        pytest.skip(f"turbocql package not importable: {e}")
    with pytest.raises(SystemExit) as e:
        main_mod.main(["localdb", "--help"])
    assert e.value.code == 0
    assert "start" in capsys.readouterr().out
    assert "localdb" in main_mod.SUBCOMMANDS
