"""Unit tests for turbocql.localdb (no Cassandra needed).

Pure logic (yaml, java command line, options, ports, pid files) is tested
directly; the process handling is tested end to end with a fake ``java`` (a
small Python script that answers the CQL OPTIONS probe, dies, or hangs) and
a fake ``mvn``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_localdb():
    try:
        return importlib.import_module("turbocql.localdb")
    except ImportError:
        # The package may not import while the engine is not built: load the file alone.
        name = "turbocql_localdb_standalone"
        spec = importlib.util.spec_from_file_location(name, ROOT / "python" / "turbocql" / "localdb.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


localdb = _load_localdb()


# ---------------------------------------------------------------- helpers


def cli(*argv: str) -> int:
    """Run ``turbocql localdb ARGV`` through the module's own argparse registration."""
    parser = argparse.ArgumentParser(prog="turbocql")
    sub = parser.add_subparsers(dest="command", required=True)
    localdb.add_parser(sub)
    args = parser.parse_args(["localdb", *argv])
    return args.func(args)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated cache dir, no TURBOCQL_LOCALDB_DIR, a cached fake classpath."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TURBOCQL_LOCALDB_DIR", raising=False)
    return tmp_path


@pytest.fixture
def cached_classpath(env):
    jar = env / "jars" / f"cassandra-all-{localdb.DEFAULT_VERSION}.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    cp_file = localdb.classpath_file()
    cp_file.parent.mkdir(parents=True, exist_ok=True)
    cp_file.write_text(str(jar) + "\n")
    return str(jar)


FAKE_JAVA = r'''#!{python}
"""A stand-in for `java ... CassandraDaemon`; FAKE_JAVA_MODE = serve | die | hang."""
import os, socket, struct, sys, time

mode = os.environ.get("FAKE_JAVA_MODE", "serve")
if mode == "die":
    print("Error: fake failure before startup", file=sys.stderr, flush=True)
    sys.exit(1)
if mode == "hang":
    while True:
        time.sleep(1)
config = next(a for a in sys.argv if a.startswith("-Dcassandra.config=file://"))
conf = {{}}
for line in open(config[len("-Dcassandra.config=file://"):]):
    if ":" in line and not line.startswith((" ", "#")):
        k, v = line.split(":", 1)
        conf[k.strip()] = v.strip()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((conf["rpc_address"], int(conf["native_transport_port"])))
srv.listen(16)
print("fake cassandra listening", flush=True)
while True:
    conn, _ = srv.accept()
    with conn:
        try:
            while True:
                head = b""
                while len(head) < 9:
                    chunk = conn.recv(9 - len(head))
                    if not chunk:
                        raise EOFError
                    head += chunk
                _v, _f, stream, op, length = struct.unpack(">BBhBi", head)
                if length:
                    conn.recv(length)
                if op == 0x05:  # OPTIONS -> SUPPORTED (empty multimap)
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, 0x06, 2) + b"\0\0")
                elif op == 0x01:  # STARTUP -> READY
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, 0x02, 0))
                else:
                    break
        except (EOFError, OSError):
            pass
'''


@pytest.fixture
def fake_java(env, cached_classpath, monkeypatch):
    """A fake java as $JAVA_HOME/bin/java; set FAKE_JAVA_MODE to choose its behaviour."""
    home = env / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(FAKE_JAVA.format(python=sys.executable))
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("FAKE_JAVA_MODE", "serve")
    return java


@pytest.fixture
def node_dir(env):
    d = env / "node"
    yield d
    # never leave a fake daemon behind
    localdb.stop(d, timeout=5)


def start_args(node_dir, port=None, storage_port=None, *extra):
    port = port or free_port()
    storage_port = storage_port or free_port()
    return ["start", "--dir", str(node_dir), "--port", str(port),
            "--storage-port", str(storage_port), *extra]


# ---------------------------------------------------------------- configuration


def test_render_yaml_defaults(tmp_path):
    node = localdb.make_node(tmp_path / "n1")
    text = localdb.render_yaml(node)
    lines = text.splitlines()
    assert 'cluster_name: "turbocql-localdb"' in lines
    assert "native_transport_port: 9042" in lines
    assert "storage_port: 7000" in lines
    assert "listen_address: 127.0.0.1" in lines
    assert "rpc_address: 127.0.0.1" in lines
    assert "commitlog_sync: periodic" in lines  # Cassandra's own default
    assert "commitlog_sync_period: 10000ms" in lines
    assert "partitioner: org.apache.cassandra.dht.Murmur3Partitioner" in lines
    assert "endpoint_snitch: SimpleSnitch" in lines
    assert "auto_snapshot: false" in lines
    assert "start_native_transport: true" in lines
    assert "authenticator: AllowAllAuthenticator" in lines
    assert "authorizer: AllowAllAuthorizer" in lines
    assert any(line.startswith("num_tokens: ") for line in lines)
    assert "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider" in lines
    assert '      - seeds: "127.0.0.1:7000"' in lines
    base = str(node.dir)
    assert f'  - "{base}/data"' in lines
    for key, sub in (("commitlog_directory", "commitlog"), ("hints_directory", "hints"),
                     ("saved_caches_directory", "saved_caches"), ("cdc_raw_directory", "cdc_raw")):
        assert f'{key}: "{base}/{sub}"' in lines
    # no tabs (invalid in YAML), every top-level key once
    assert "\t" not in text
    keys = [line.split(":")[0] for line in lines if line and not line.startswith((" ", "#"))]
    assert len(keys) == len(set(keys))


def test_render_yaml_auth_and_ports(tmp_path):
    node = localdb.make_node(tmp_path / "n2", port=9043, auth=True, address="127.0.0.2")
    lines = localdb.render_yaml(node).splitlines()
    assert "authenticator: PasswordAuthenticator" in lines
    assert "authorizer: CassandraAuthorizer" in lines
    assert "role_manager: CassandraRoleManager" in lines
    assert "native_transport_port: 9043" in lines
    assert "storage_port: 7001" in lines
    assert "listen_address: 127.0.0.2" in lines
    assert '      - seeds: "127.0.0.2:7001"' in lines


def test_render_yaml_quotes_odd_paths(tmp_path):
    node = localdb.make_node(tmp_path / 'we"ird: dir #1')
    text = localdb.render_yaml(node)
    assert r'we\"ird: dir #1/commitlog"' in text


def test_logback_writes_to_the_node_log(tmp_path):
    node = localdb.make_node(tmp_path / "n")
    xml = localdb.render_logback(node)
    assert f"<file>{node.log_path}</file>" in xml
    assert node.log_path == node.dir / "logs" / "system.log"


def test_java_command(tmp_path):
    node = localdb.make_node(tmp_path / "n", heap="1g")
    cp = os.pathsep.join(["/m2/cassandra-all-5.0.6.jar", "/m2/jamm-0.4.0.jar"])
    cmd = localdb.java_command(node, "/usr/bin/java", cp)
    assert cmd[0] == "/usr/bin/java"
    assert cmd[-1] == "org.apache.cassandra.service.CassandraDaemon"
    assert "-Xms1G" in cmd and "-Xmx1G" in cmd
    assert "-XX:+UseG1GC" in cmd
    assert f"-Dcassandra.config={node.yaml_path.as_uri()}" in cmd
    assert f"-Dlogback.configurationFile={node.logback_path.as_uri()}" in cmd
    assert f"-Dcassandra.storagedir={node.dir}" in cmd
    assert "-Dcassandra.skip_wait_for_gossip_to_settle=0" in cmd
    assert node.marker in cmd
    assert "-javaagent:/m2/jamm-0.4.0.jar" in cmd
    assert cmd[cmd.index("-cp") + 1] == f"{node.conf_dir}{os.pathsep}{cp}"
    pairs = {(cmd[i], cmd[i + 1]) for i in range(len(cmd) - 1)}
    for opt in ("java.base/jdk.internal.misc=ALL-UNNAMED", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
                "java.sql/java.sql=ALL-UNNAMED"):
        assert ("--add-exports", opt) in pairs
    for opt in ("java.base/java.lang=ALL-UNNAMED", "java.base/sun.nio.ch=ALL-UNNAMED",
                "java.base/jdk.internal.ref=ALL-UNNAMED", "java.base/java.io=ALL-UNNAMED"):
        assert ("--add-opens", opt) in pairs
    assert not any("jmx" in a and "port" in a for a in cmd)


# ---------------------------------------------------------------- options


def test_storage_port_derivation():
    assert localdb.make_node("/tmp/x").storage_port == 7000
    assert localdb.make_node("/tmp/x", port=9043).storage_port == 7001
    assert localdb.make_node("/tmp/x", port=9050, storage_port=7100).storage_port == 7100
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.make_node("/tmp/x", port=2000)
    assert e.value.exit_code == 2 and "--storage-port" in str(e.value)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"heap": "lots"}, "heap"),
    ({"heap": "0G"}, "heap"),
    ({"version": "4.1.5"}, "5.0"),
    ({"address": "localhost:1"}, "address"),
    ({"port": 70000}, "port"),
    ({"storage_port": 9042}, "storage port"),
])
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


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="turbocql")
    sub = parser.add_subparsers(dest="command", required=True)
    localdb.add_parser(sub)
    return parser.parse_args(["localdb", *argv])


def test_cli_options():
    a = _parse("start")
    assert (a.dir, a.port, a.heap, a.auth, a.address, a.storage_port, a.version, a.nodes) == \
        (None, None, localdb.DEFAULT_HEAP, False, "127.0.0.1", None, "5.0.6", 1)
    assert a.timeout == localdb.DEFAULT_TIMEOUT
    a = _parse("start", "--auth", "--port", "9043", "--dir", "/tmp/n", "--heap", "1g",
               "--storage-port", "7101", "--timeout", "60", "--version", "5.0.5")
    assert (a.auth, a.port, a.dir, a.heap, a.storage_port, a.timeout, a.version) == \
        (True, 9043, "/tmp/n", "1G", 7101, 60.0, "5.0.5")
    assert _parse("stop", "--port", "9043").port == 9043
    assert _parse("status").localdb_action == "status"


@pytest.mark.parametrize("argv", [
    ["start", "--nodes", "3"],
    ["start", "--heap", "huge"],
    ["start", "--port", "0"],
    ["start", "--port", "abc"],
    ["restart"],
    [],
])
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


# ---------------------------------------------------------------- pid files


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


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


# ---------------------------------------------------------------- preconditions


def test_port_in_use_is_reported_before_java_starts(fake_java, node_dir, monkeypatch, capsys):
    def no_spawn(*a, **k):
        raise AssertionError("java must not be started")

    monkeypatch.setattr(localdb, "_spawn", no_spawn)
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
    monkeypatch.setattr(localdb, "_spawn", lambda *a, **k: pytest.fail("java started"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        sport = busy.getsockname()[1]
        assert cli(*start_args(node_dir, storage_port=sport)) == 2
    err = capsys.readouterr().err
    assert f"port {sport}" in err and "--storage-port" in err


def test_free_port_is_not_in_use():
    assert not localdb.port_in_use("127.0.0.1", free_port())


def test_missing_java(env, cached_classpath, monkeypatch, capsys):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    real_which = localdb.shutil.which
    monkeypatch.setattr(localdb.shutil, "which", lambda name, *a, **k: None if name == "java"
                        else real_which(name, *a, **k))
    assert cli(*start_args(env / "node")) == 2
    err = capsys.readouterr().err
    assert "java not found" in err


def test_missing_mvn(env, monkeypatch, capsys, tmp_path):
    # a java exists, no cached classpath, and no mvn on PATH
    monkeypatch.delenv("JAVA_HOME", raising=False)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "java").write_text("#!/bin/sh\nexit 1\n")
    (bindir / "java").chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    assert cli(*start_args(env / "node")) == 2
    err = capsys.readouterr().err
    assert "mvn not found" in err and "Maven" in err


def test_classpath_is_resolved_once_and_cached(env, monkeypatch, tmp_path):
    jar = tmp_path / "repo" / "cassandra-all-5.0.6.jar"
    jar.parent.mkdir()
    jar.write_bytes(b"")
    calls = tmp_path / "mvn-calls"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    mvn = bindir / "mvn"
    mvn.write_text(f"""#!{sys.executable}
import sys
with open({str(calls)!r}, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("-Dmdep.outputFile="))
open(out, "w").write({str(jar)!r})
""")
    mvn.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    messages = []
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    invocations = calls.read_text().splitlines()
    assert len(invocations) == 1
    assert "dependency:build-classpath" in invocations[0]
    assert localdb.classpath_file("5.0.6").read_text().strip() == str(jar)
    pom = (localdb.cache_base() / "maven-5.0.6" / "pom.xml").read_text()
    assert "<artifactId>cassandra-all</artifactId>" in pom and "<version>5.0.6</version>" in pom
    # a jar that disappeared from ~/.m2 makes it resolve again
    jar.unlink()
    jar.write_bytes(b"")
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    assert len(calls.read_text().splitlines()) == 1
    localdb.classpath_file("5.0.6").write_text("/nonexistent/cassandra-all-5.0.6.jar\n")
    localdb.resolve_classpath("5.0.6", out=messages.append)
    assert len(calls.read_text().splitlines()) == 2


# ---------------------------------------------------------------- the CQL probe


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
    assert localdb._frame(0x05) == bytes([0x04, 0, 0, 0, 0x05, 0, 0, 0, 0])


# ---------------------------------------------------------------- lifecycle (fake java)


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
    assert not localdb._is_our_daemon(pid, localdb.Node(node_dir))
    assert cli("status", "--dir", str(node_dir)) == 3
    assert cli("stop", "--dir", str(node_dir)) == 0
    assert "not running" in capsys.readouterr().out


def test_api_start_returns_node(fake_java, node_dir):
    port = free_port()
    node = localdb.start(dir=node_dir, port=port, heap="1G", auth=True, timeout=30,
                         storage_port=free_port())
    try:
        assert node.pid and node.port == port and not node.already_running
        assert node.auth and node.log_path.parent.is_dir()
        assert localdb.wait_for_cql("127.0.0.1", port, 5)
        assert localdb.is_running(node_dir)
    finally:
        assert localdb.stop(node_dir) is True
    assert localdb.stop(node_dir) is False


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
    assert localdb._scan_for_daemon(localdb.Node(node_dir)) is None


def test_commitlog_batch_mode_and_bad_mode(tmp_path):
    lines = localdb.render_yaml(localdb.make_node(tmp_path / "nb", commitlog="batch")).splitlines()
    assert "commitlog_sync: batch" in lines
    assert not any(line.startswith("commitlog_sync_period") for line in lines)
    with pytest.raises(localdb.LocalDBError, match="commitlog"):
        localdb.make_node(tmp_path / "nx", commitlog="sometimes")
