"""Unit tests of turbocql_localdb.process: pid files and the daemon's life (with a fake java)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .helpers import _dead_pid, cli, free_port, localdb, process_mod, start_args


def test_stale_pid_file(env, capsys):
    d = env / "node"
    d.mkdir()
    (d / "cassandra.pid").write_text(f"{_dead_pid()}\n")
    assert not localdb.is_running(d)
    assert not (d / "cassandra.pid").exists()
    (d / "cassandra.pid").write_text(f"{_dead_pid()}\n")
    assert cli("status", "--dir", str(d)) == 3
    assert "not running" in capsys.readouterr().out
    (d / "cassandra.pid").write_text("garbage\n")
    assert cli("stop", "--dir", str(d)) == 0
    assert "not running" in capsys.readouterr().out
    assert not (d / "cassandra.pid").exists()


def test_pid_file_of_an_unrelated_live_process_is_not_ours(env, capsys):
    d = env / "node"
    d.mkdir()
    other = subprocess.Popen(["sleep", "30"])
    try:
        (d / "cassandra.pid").write_text(f"{other.pid}\n")
        assert not localdb.is_running(d)
        (d / "cassandra.pid").write_text(f"{other.pid}\n")
        assert cli("stop", "--dir", str(d)) == 0
        assert "not running" in capsys.readouterr().out
        time.sleep(0.2)
        assert other.poll() is None, "stop must never signal a process it did not start"
    finally:
        other.kill()
        other.wait()


def test_status_and_stop_of_missing_dir(env, capsys):
    d = env / "nowhere"
    assert cli("status", "--dir", str(d)) == 3
    assert cli("stop", "--dir", str(d)) == 0
    assert not d.exists()


def test_start_status_idempotent_stop(fake_java, node_dir, capsys):
    port, sport = free_port(), free_port()
    assert cli(*start_args(node_dir, port, sport, "--heap", "1G")) == 0
    out = capsys.readouterr().out
    assert f"127.0.0.1:{port}" in out and "pid" in out and str(node_dir / "logs") in out
    pid = int((node_dir / "cassandra.pid").read_text())
    assert localdb.is_running(node_dir)
    assert localdb.cql_answers("127.0.0.1", port)
    assert (node_dir / "conf" / "cassandra.yaml").is_file()
    # status
    assert cli("status", "--dir", str(node_dir)) == 0
    out = capsys.readouterr().out
    assert "running" in out and str(pid) in out and "CQL answers" in out
    # idempotent start
    assert cli(*start_args(node_dir, port, sport)) == 0
    assert "already running" in capsys.readouterr().out
    assert int((node_dir / "cassandra.pid").read_text()) == pid
    # the same dir on another port is refused, not started twice
    assert cli(*start_args(node_dir, free_port(), sport)) == 2
    assert "already runs" in capsys.readouterr().err
    # the API agrees
    node = localdb.start(node_dir, port, storage_port=sport)
    assert (node.pid, node.port, node.already_running) == (pid, port, True)
    assert node.log_path == node_dir / "logs" / "system.log"
    # stop
    assert cli("stop", "--dir", str(node_dir)) == 0
    assert "stopped" in capsys.readouterr().out
    assert not (node_dir / "cassandra.pid").exists()
    assert not localdb.is_running(node_dir)
    assert not process_mod._is_our_daemon(pid, localdb.Node(node_dir))
    assert cli("status", "--dir", str(node_dir)) == 3
    assert cli("stop", "--dir", str(node_dir)) == 0
    assert "not running" in capsys.readouterr().out


def test_api_start_returns_node(fake_java, node_dir):
    port = free_port()
    node = localdb.start(dir=node_dir, port=port, heap="1G", auth=True, timeout=30, storage_port=free_port())
    try:
        assert node.pid and node.port == port and not node.already_running
        assert node.auth and node.log_path.parent.is_dir()
        assert localdb.wait_for_cql("127.0.0.1", port, 5)
        assert localdb.is_running(node_dir)
    finally:
        assert localdb.stop(node_dir) is True
    assert localdb.stop(node_dir) is False


def test_start_with_settings(fake_java, node_dir, capsys):
    """--setting reaches cassandra.yaml and node.json; a later start without it keeps them, a
    start of the running node with other settings is refused, --no-settings drops them."""
    port, sport = free_port(), free_port()
    args = start_args(node_dir, port, sport)
    assert cli(*args, "--setting", "materialized_views_enabled=false") == 0
    assert "settings: materialized_views_enabled=false" in capsys.readouterr().out
    yaml = (node_dir / "conf" / "cassandra.yaml").read_text().splitlines()
    assert "materialized_views_enabled: false" in yaml and "materialized_views_enabled: true" not in yaml
    assert cli(*args) == 0  # as saved: the same settings
    assert "already running" in capsys.readouterr().out
    assert cli(*args, "--setting", "sasi_indexes_enabled=false") == 2
    assert "with the settings materialized_views_enabled=false, not sasi_indexes_enabled=false" in (
        capsys.readouterr().err
    )
    assert cli("status", "--dir", str(node_dir)) == 0
    assert "settings: materialized_views_enabled=false" in capsys.readouterr().out
    assert localdb.stop(node_dir)
    node = localdb.start(node_dir, port, storage_port=sport)
    assert node.yaml_settings == {"materialized_views_enabled": "false"}
    assert localdb.stop(node_dir)
    assert cli(*args, "--no-settings") == 0
    assert "settings:" not in capsys.readouterr().out
    assert "materialized_views_enabled: true" in (node_dir / "conf" / "cassandra.yaml").read_text().splitlines()
    assert localdb.status(node_dir).yaml_settings == {}


def test_pid_file_lost_but_daemon_found(fake_java, node_dir):
    node = localdb.start(node_dir, free_port(), storage_port=free_port())
    (node_dir / "cassandra.pid").unlink()
    assert localdb.is_running(node_dir)
    assert int((node_dir / "cassandra.pid").read_text()) == node.pid
    assert localdb.stop(node_dir)


def test_death_during_startup_prints_log(fake_java, node_dir, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_JAVA_MODE", "die")
    assert cli(*start_args(node_dir)) == 1
    err = capsys.readouterr().err
    assert "exited during startup" in err
    assert "fake failure before startup" in err
    assert not (node_dir / "cassandra.pid").exists()


def test_timeout_kills_the_daemon(fake_java, node_dir, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_JAVA_MODE", "hang")
    t0 = time.monotonic()
    assert cli(*start_args(node_dir), "--timeout", "2") == 1
    assert time.monotonic() - t0 < 30
    err = capsys.readouterr().err
    assert "did not answer CQL" in err and "within 2 s" in err
    assert not (node_dir / "cassandra.pid").exists()
    assert process_mod._scan_for_daemon(localdb.Node(node_dir)) is None


def test_spawn_returns_once_the_child_runs_its_command(tmp_path):
    """The pid handed back is already the command, not the shell's copy before its exec
    (a slow exec made a starting daemon look dead to the liveness check)."""
    slow_exec = ["sh", "-c", f"sleep 0.5; exec {sys.executable} -c 'import time; time.sleep(30)'"]
    pid = process_mod._spawn(slow_exec, tmp_path / "out.log", tmp_path)
    try:
        args = process_mod._cmdline(pid)
        assert args is not None and args[0] == sys.executable, args
    finally:
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "raw, expected",
    [
        (["sh", "-c", "exec java"], ["sh", "-c", "exec java"]),
        # qemu-user-static's registration (flag P: argv[0] preserved), scripts/arm64.sh's
        (["/usr/libexec/qemu-binfmt/aarch64-binfmt-P", "/usr/bin/sh", "sh", "-c", "x"], ["sh", "-c", "x"]),
        (["/usr/bin/qemu-aarch64-static", "/opt/v/bin/python", "/opt/v/bin/python", "-c"], ["/opt/v/bin/python", "-c"]),
        # without flag P: the path, then argv[1:]
        (["/usr/bin/qemu-x86_64", "/usr/bin/java", "-Xmx1G"], ["/usr/bin/java", "-Xmx1G"]),
        (["/usr/bin/qemu-x86_64"], ["/usr/bin/qemu-x86_64"]),
    ],
)
def test_a_program_run_by_qemu_user_shows_its_own_command_line(raw, expected):
    """Under qemu-user through binfmt_misc, /proc/PID/cmdline starts with the emulator: the
    spawn's wait for the exec saw no ``sh -c`` there and returned before it (arm64.sh unit)."""
    assert process_mod._without_emulator(raw) == expected


def test_a_daemon_in_the_middle_of_its_exec_is_not_taken_for_dead(tmp_path, monkeypatch):
    """While ``execve`` runs, /proc shows an empty command line; a CI run took that moment
    for a dead daemon and stopped the cluster it was starting."""
    node = localdb.Node(tmp_path)
    ours = ["java", process_mod.DAEMON_CLASS, node.marker]
    for args, alive in (
        ([], True),
        (["sh", "-c", "exec java"], True),
        (ours, True),
        (None, False),
        (["sleep", "30"], False),
    ):
        monkeypatch.setattr(process_mod, "_cmdline", lambda pid, a=args: a)
        assert process_mod._is_starting_or_ours(12345, node) is alive, args
