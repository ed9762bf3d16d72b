"""Unit tests of turbocql_localdb.node: options, defaults, directories, file helpers."""

from __future__ import annotations

import pytest

from .helpers import localdb, node_mod


def test_storage_port_derivation():
    assert localdb.make_node("/tmp/x").storage_port == 7000
    assert localdb.make_node("/tmp/x", port=9043).storage_port == 7001
    assert localdb.make_node("/tmp/x", port=9050, storage_port=7100).storage_port == 7100
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.make_node("/tmp/x", port=2000)
    assert e.value.exit_code == 2 and "--storage-port" in str(e.value)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"heap": "lots"}, "heap"),
        ({"heap": "0G"}, "heap"),
        ({"version": "4.1.5"}, "5.0"),
        ({"address": "localhost:1"}, "address"),
        ({"port": 70000}, "port"),
        ({"storage_port": 9042}, "storage port"),
    ],
)
def test_make_node_rejects_bad_options(kwargs, fragment):
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.make_node("/tmp/x", **kwargs)
    assert e.value.exit_code == 2
    assert fragment in str(e.value)


def test_default_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("TURBOCQL_LOCALDB_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert localdb.default_dir() == tmp_path / "xdg" / "turbocql" / "localdb" / "node1"
    assert localdb.default_dir(9043) == tmp_path / "xdg" / "turbocql" / "localdb" / "node-9043"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert localdb.default_dir() == tmp_path / "home" / ".cache" / "turbocql" / "localdb" / "node1"
    monkeypatch.setenv("TURBOCQL_LOCALDB_DIR", str(tmp_path / "mine"))
    assert localdb.default_dir() == tmp_path / "mine"
    assert localdb.make_node().dir == tmp_path / "mine"


def test_load_node_uses_the_saved_settings(tmp_path):
    d = tmp_path / "n"
    d.mkdir()
    node = node_mod._load_node(d, 9050)
    assert (node.port, node.address, node.storage_port) == (9050, "127.0.0.1", 7000)
    (d / "node.json").write_text(
        '{"address": "127.0.0.2", "port": 9043, "storage_port": 7101, "heap": "1G", "auth": true}'
    )
    node = node_mod._load_node(d, 9050)
    assert (node.port, node.address, node.storage_port, node.heap, node.auth) == (9043, "127.0.0.2", 7101, "1G", True)
    assert node.seeds == ("127.0.0.2:7101",)
    (d / "node.json").write_text("not json")
    assert node_mod._load_node(d, None).port == localdb.DEFAULT_PORT


def test_write_atomic_and_tail(tmp_path):
    path = tmp_path / "f.txt"
    node_mod._write_atomic(path, "".join(f"line {i}\n" for i in range(100)))
    assert not (tmp_path / "f.txt.tmp").exists()
    assert node_mod._tail(path, 3) == "line 97\nline 98\nline 99"
    assert node_mod._tail(tmp_path / "missing", 3) == ""


def test_locked_is_reentrant_across_calls(tmp_path):
    lock = tmp_path / "sub" / ".lock"
    with node_mod._locked(lock):
        assert lock.exists()
    with node_mod._locked(lock):  # released: a second lock does not block
        pass


@pytest.mark.parametrize(
    "settings, fragment",
    [
        ({"Materialized_Views_Enabled": "false"}, "invalid cassandra.yaml setting name"),
        ({"sstable.selected_format": "bti"}, "invalid cassandra.yaml setting name"),
        ({"native_transport_port": "9999"}, "written by localdb"),
        ({"data_file_directories": "/tmp"}, "written by localdb"),
        ({"client_encryption_options": "x"}, "written by localdb"),
        ({"sasi_indexes_enabled": ""}, "one line, not empty"),
        ({"sasi_indexes_enabled": "false\nauthenticator: x"}, "one line, not empty"),
    ],
)
def test_yaml_settings_rejected(settings, fragment):
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.make_node("/tmp/x", yaml_settings=settings)
    assert e.value.exit_code == 2 and fragment in str(e.value)


def test_parse_setting():
    assert localdb.parse_setting("materialized_views_enabled=false") == ("materialized_views_enabled", "false")
    assert localdb.parse_setting(" storage_compatibility_mode = CASSANDRA_4 ") == (
        "storage_compatibility_mode",
        "CASSANDRA_4",
    )
    assert localdb.parse_setting("read_request_timeout=5s=x") == ("read_request_timeout", "5s=x")
    for bad in ("materialized_views_enabled", "=false", "listen_address=127.0.0.2"):
        with pytest.raises(localdb.LocalDBError):
            localdb.parse_setting(bad)


def test_load_node_reads_the_saved_yaml_settings(tmp_path):
    d = tmp_path / "n"
    d.mkdir()
    (d / "node.json").write_text('{"port": 9050, "yaml_settings": {"sasi_indexes_enabled": "false"}}')
    assert node_mod._load_node(d, None).yaml_settings == {"sasi_indexes_enabled": "false"}
    (d / "node.json").write_text('{"port": 9050}')
    assert node_mod._load_node(d, None).yaml_settings == {}
