"""Unit tests of turbocql_localdb.probe: the CQL probe and the port checks."""

from __future__ import annotations

import socket
import time

import pytest

from .helpers import cli, free_port, localdb, probe_mod, process_mod, start_args


def test_port_in_use_is_reported_before_java_starts(fake_java, node_dir, monkeypatch, capsys):
    def no_spawn(*a, **k):
        raise AssertionError("java must not be started")

    monkeypatch.setattr(process_mod, "_spawn", no_spawn)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert localdb.port_in_use("127.0.0.1", port)
        assert cli(*start_args(node_dir, port=port)) == 2
    err = capsys.readouterr().err
    assert f"port {port}" in err and "already in use" in err and "--port" in err
    assert not (node_dir / "cassandra.pid").exists()


def test_storage_port_in_use(fake_java, node_dir, monkeypatch, capsys):
    monkeypatch.setattr(process_mod, "_spawn", lambda *a, **k: pytest.fail("java started"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        sport = busy.getsockname()[1]
        assert cli(*start_args(node_dir, storage_port=sport)) == 2
    err = capsys.readouterr().err
    assert f"port {sport}" in err and "--storage-port" in err


def test_free_port_is_not_in_use():
    assert not localdb.port_in_use("127.0.0.1", free_port())


def test_cql_probe_on_closed_port_and_non_cql_server():
    port = free_port()
    assert not localdb.cql_answers("127.0.0.1", port, timeout=0.5)
    t0 = time.monotonic()
    assert not localdb.wait_for_cql("127.0.0.1", port, timeout=1.0)
    assert time.monotonic() - t0 < 5
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        p = srv.getsockname()[1]
        with socket.create_connection(("127.0.0.1", p)):
            pass
        # accepted but never answers: the probe gives up after its timeout
        assert not localdb.cql_answers("127.0.0.1", p, timeout=0.3)


def test_options_frame_bytes():
    assert probe_mod._frame(0x05) == bytes([0x04, 0, 0, 0, 0x05, 0, 0, 0, 0])
