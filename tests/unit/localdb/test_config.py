"""Unit tests of turbocql_localdb.config: cassandra.yaml, logback.xml, the java command."""

from __future__ import annotations

import os

import pytest

from .helpers import localdb


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
    for key, sub in (
        ("commitlog_directory", "commitlog"),
        ("hints_directory", "hints"),
        ("saved_caches_directory", "saved_caches"),
        ("cdc_raw_directory", "cdc_raw"),
    ):
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
    for opt in (
        "java.base/jdk.internal.misc=ALL-UNNAMED",
        "java.rmi/sun.rmi.registry=ALL-UNNAMED",
        "java.sql/java.sql=ALL-UNNAMED",
    ):
        assert ("--add-exports", opt) in pairs
    for opt in (
        "java.base/java.lang=ALL-UNNAMED",
        "java.base/sun.nio.ch=ALL-UNNAMED",
        "java.base/jdk.internal.ref=ALL-UNNAMED",
        "java.base/java.io=ALL-UNNAMED",
    ):
        assert ("--add-opens", opt) in pairs
    assert not any("jmx" in a and "port" in a for a in cmd)


def test_commitlog_batch_mode_and_bad_mode(tmp_path):
    lines = localdb.render_yaml(localdb.make_node(tmp_path / "nb", commitlog="batch")).splitlines()
    assert "commitlog_sync: batch" in lines
    assert not any(line.startswith("commitlog_sync_period") for line in lines)
    with pytest.raises(localdb.LocalDBError, match="commitlog"):
        localdb.make_node(tmp_path / "nx", commitlog="sometimes")


def test_yaml_settings_replace_or_are_added(tmp_path):
    """``yaml_settings`` (``start --setting``): a key localdb writes is replaced where it is, any
    other is added at the end; plain scalars as they are, anything else double-quoted; every
    top-level key still once."""
    stock = {
        "materialized_views_enabled": "false",
        "user_defined_functions_enabled": "false",
        "storage_compatibility_mode": "CASSANDRA_4",
        "read_request_timeout": "10000ms",
        "cluster_name_note": "it's: #odd",
    }
    node = localdb.make_node(tmp_path / "ns", yaml_settings=stock)
    text = localdb.render_yaml(node)
    lines = text.splitlines()
    default = localdb.render_yaml(localdb.make_node(tmp_path / "ns")).splitlines()
    at = default.index("materialized_views_enabled: true")
    assert lines[at] == "materialized_views_enabled: false"
    assert lines[default.index("user_defined_functions_enabled: true")] == "user_defined_functions_enabled: false"
    assert lines[default.index("storage_compatibility_mode: NONE")] == "storage_compatibility_mode: CASSANDRA_4"
    assert "sasi_indexes_enabled: true" in lines  # not given: localdb's
    tail = lines[len(default) :]
    assert tail[0].startswith("# Added by")
    assert tail[1:] == ["read_request_timeout: 10000ms", 'cluster_name_note: "it\'s: #odd"']
    keys = [line.split(":")[0] for line in lines if line and not line.startswith((" ", "#"))]
    assert len(keys) == len(set(keys))
    assert text.endswith("\n")


def test_yaml_settings_are_saved_and_reloaded(tmp_path):
    node = localdb.make_node(tmp_path / "nj", yaml_settings={"sasi_indexes_enabled": "false"})
    localdb.write_config(node)
    assert '"yaml_settings"' in node.settings_file.read_text()
    assert localdb.status(node.dir).yaml_settings == {"sasi_indexes_enabled": "false"}
    plain = localdb.make_node(tmp_path / "nk")
    assert "yaml_settings" not in plain.settings()
