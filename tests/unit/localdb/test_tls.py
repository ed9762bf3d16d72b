"""Unit tests of ``turbocql localdb start --tls``: the CA and certificates (localdb.tls), the
cassandra.yaml options, the CLI flags, node.json / cluster.json, and a TLS node's life with the
fake java (which speaks TLS with the generated files as Cassandra would)."""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import stat
import threading

import pytest

from .helpers import _parse, cli, free_port, localdb

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.hazmat.primitives.serialization import load_pem_private_key  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

FIRST = "127.0.0.211"  # the fake TLS cluster's addresses


def _certs(path):
    return x509.load_pem_x509_certificates(path.read_bytes())


def _handshake(server_ctx: ssl.SSLContext, client_ctx: ssl.SSLContext, host: str = "127.0.0.1") -> str:
    """A TLS handshake over loopback between the two contexts; the negotiated protocol."""
    with socket.socket() as srv:
        srv.bind((host, 0))
        srv.listen(1)
        errors: list[BaseException] = []

        def serve():
            try:
                conn, _ = srv.accept()
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"ok")
            except BaseException as e:  # reported by the client side's failure
                errors.append(e)

        t = threading.Thread(target=serve)
        t.start()
        try:
            with socket.create_connection(srv.getsockname(), timeout=5) as raw:
                with client_ctx.wrap_socket(raw, server_hostname=host) as tls:
                    assert tls.recv(2) == b"ok"
                    return tls.version() or ""
        finally:
            t.join(5)


def _server_ctx(files, require_client_auth=False) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(files.node_keystore)  # key and chain from the one keystore file
    if require_client_auth:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(files.ca)
    return ctx


# --------------------------------------------------------------------------
# Certificates


def test_files_chain_key_and_sans(tmp_path):
    files = localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.1")
    assert isinstance(files, localdb.TLSFiles)
    names = {p.name for p in (files.ca, files.ca_key, files.node_keystore, files.client_cert, files.client_key)}
    assert names == {"ca.pem", "ca-key.pem", "node.pem", "client.pem", "client-key.pem"}
    assert sorted(p.name for p in files.dir.iterdir()) == sorted(names)
    (ca,) = _certs(files.ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    # node.pem: a PKCS#8 key first (Cassandra rejects SEC1 "EC PRIVATE KEY"), then node cert, then CA
    data = files.node_keystore.read_bytes()
    assert data.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert b"EC PRIVATE KEY" not in data and b"ENCRYPTED" not in data
    assert data.count(b"-----BEGIN CERTIFICATE-----") == 2
    key = load_pem_private_key(data, password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    node_cert, chain_ca = _certs(files.node_keystore)
    assert chain_ca == ca
    node_cert.verify_directly_issued_by(ca)
    assert node_cert.public_key() == key.public_key()
    san = node_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    eku = node_cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku
    # the client certificate
    client_cert, client_ca = _certs(files.client_cert)
    assert client_ca == ca
    client_cert.verify_directly_issued_by(ca)
    assert client_cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "turbocql-client"
    eku = client_cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    assert files.client_key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert load_pem_private_key(files.client_key.read_bytes(), None).public_key() == client_cert.public_key()
    # keys are private to their owner
    for path in (files.ca_key, files.node_keystore, files.client_key):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_python_ssl_accepts_the_files(tmp_path):
    """The chain verifies with hostname checks on, by IP address and by localhost, with and without
    client auth; a client without its certificate is refused when client auth is required."""
    files = localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.1")
    assert _handshake(_server_ctx(files), files.ssl_context(client_cert=False)).startswith("TLS")
    assert _handshake(_server_ctx(files), files.ssl_context(), host="localhost" if _has_localhost() else "127.0.0.1")
    assert _handshake(_server_ctx(files, require_client_auth=True), files.ssl_context())
    with pytest.raises((ssl.SSLError, ConnectionError, AssertionError)):
        _handshake(_server_ctx(files, require_client_auth=True), files.ssl_context(client_cert=False))
    # another node's address is not in the certificate
    other = localdb.ensure_tls_files(tmp_path / "tls2", "127.0.0.2")
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(_server_ctx(files), other.ssl_context(client_cert=False))  # another CA


def _has_localhost() -> bool:
    try:
        return socket.gethostbyname("localhost") == "127.0.0.1"
    except OSError:
        return False


def test_files_are_kept_and_remade_when_they_do_not_fit(tmp_path):
    files = localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.1")
    before = {p.name: p.read_bytes() for p in files.dir.iterdir()}
    localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.1")
    assert {p.name: p.read_bytes() for p in files.dir.iterdir()} == before
    # another address: a new node certificate from the same CA
    localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.5")
    after = {p.name: p.read_bytes() for p in files.dir.iterdir()}
    assert after["node.pem"] != before["node.pem"]
    assert {k: v for k, v in after.items() if k != "node.pem"} == {k: v for k, v in before.items() if k != "node.pem"}
    node_cert = _certs(files.node_keystore)[0]
    san = node_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.5")]
    # no CA: everything is made again, the node certificate signed by the new CA
    files.ca.unlink()
    localdb.ensure_tls_files(tmp_path / "tls", "127.0.0.5")
    again = {p.name: p.read_bytes() for p in files.dir.iterdir()}
    assert all(again[name] != after[name] for name in ("ca.pem", "ca-key.pem", "node.pem", "client.pem"))
    _certs(files.node_keystore)[0].verify_directly_issued_by(_certs(files.ca)[0])


def test_cluster_nodes_share_one_ca(tmp_path):
    shared = tmp_path / "tls"
    a = localdb.ensure_tls_files(tmp_path / "node1" / "tls", "127.0.0.11", ca_from=shared)
    b = localdb.ensure_tls_files(tmp_path / "node2" / "tls", "127.0.0.12", ca_from=shared)
    for name in ("ca.pem", "ca-key.pem", "client.pem", "client-key.pem"):
        assert (a.dir / name).read_bytes() == (b.dir / name).read_bytes() == (shared / name).read_bytes()
    assert not (shared / "node.pem").exists()
    assert a.node_keystore.read_bytes() != b.node_keystore.read_bytes()
    ca = _certs(shared / "ca.pem")[0]
    for files, address in ((a, "127.0.0.11"), (b, "127.0.0.12")):
        cert = _certs(files.node_keystore)[0]
        cert.verify_directly_issued_by(ca)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address(address)]
    # a node whose copy is of another CA takes the cluster's and a new node certificate
    (a.dir / "ca.pem").write_bytes(localdb.ensure_tls_files(tmp_path / "x", "127.0.0.9").ca.read_bytes())
    localdb.ensure_tls_files(a.dir, "127.0.0.11", ca_from=shared)
    assert a.ca.read_bytes() == (shared / "ca.pem").read_bytes()
    _certs(a.node_keystore)[0].verify_directly_issued_by(ca)


# --------------------------------------------------------------------------
# Settings, cassandra.yaml, the CLI


def test_node_tls_settings_and_yaml(tmp_path):
    plain = localdb.make_node(tmp_path / "plain")
    assert not plain.tls and plain.tls_files() is None and plain.ssl_context() is None
    assert "client_encryption_options" not in localdb.render_yaml(plain)
    node = localdb.make_node(tmp_path / "n", port=9046, tls=True)
    files = node.tls_files()
    assert files == localdb.TLSFiles(node.dir / "tls")
    lines = localdb.render_yaml(node).splitlines()
    i = lines.index("client_encryption_options:")
    assert lines[i + 1 : i + 8] == [
        "  enabled: true",
        "  optional: false",
        "  ssl_context_factory:",
        "    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory",
        f'  keystore: "{node.dir}/tls/node.pem"',
        f'  truststore: "{node.dir}/tls/ca.pem"',
        "  require_client_auth: false",
    ]
    assert not lines[i + 8].startswith(" ")
    assert not any("server_encryption_options" in line or "password" in line for line in lines)
    mtls = localdb.make_node(tmp_path / "m", require_client_auth=True)
    assert mtls.tls and mtls.require_client_auth  # client auth implies TLS
    assert "  require_client_auth: true" in localdb.render_yaml(mtls).splitlines()


def test_write_config_makes_the_files_and_node_json(tmp_path):
    node = localdb.make_node(tmp_path / "n", tls=True, require_client_auth=True, address="127.0.0.3")
    localdb.write_config(node)
    files = node.tls_files()
    assert files.node_keystore.is_file() and files.ca.is_file() and files.client_key.is_file()
    saved = json.loads(node.settings_file.read_text())
    assert (saved["tls"], saved["require_client_auth"]) == (True, True)
    loaded = localdb.status(node.dir)
    assert (loaded.tls, loaded.require_client_auth, loaded.address) == (True, True, "127.0.0.3")
    assert loaded.tls_files() == files
    assert isinstance(loaded.ssl_context(), ssl.SSLContext)
    # a node.json from before TLS existed: off
    node.settings_file.write_text('{"address": "127.0.0.1", "port": 9046}')
    assert not localdb.status(node.dir).tls


@pytest.mark.parametrize(
    "tls, client_auth, saved, expected",
    [
        (None, None, (False, False), (False, False)),
        (None, None, (True, True), (True, True)),
        (True, None, (False, False), (True, False)),
        (True, None, (True, True), (True, True)),
        (None, True, (False, False), (True, True)),
        (None, False, (True, True), (True, False)),
        (False, None, (True, True), (False, False)),
    ],
)
def test_resolve_tls(tls, client_auth, saved, expected):
    assert localdb.node._resolve_tls(tls, client_auth, *saved) == expected


def test_tls_false_with_client_auth_is_a_usage_error():
    with pytest.raises(localdb.LocalDBError) as e:
        localdb.node._resolve_tls(False, True, False, False)
    assert e.value.exit_code == 2


def test_cli_tls_flags():
    a = _parse("start")
    assert (a.tls, a.require_client_auth) == (None, None)
    a = _parse("start", "--tls")
    assert (a.tls, a.require_client_auth) == (True, None)
    a = _parse("start", "--require-client-auth")
    assert (a.tls, a.require_client_auth) == (None, True)
    a = _parse("start", "--no-tls", "--no-require-client-auth")
    assert (a.tls, a.require_client_auth) == (False, False)


def test_cli_help_names_the_files(capsys):
    with pytest.raises(SystemExit):
        _parse("start", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert "--tls" in out and "--require-client-auth" in out
    for name in ("ca.pem", "node.pem", "client.pem", "client-key.pem"):
        assert name in out


def test_cli_node_k_takes_no_tls_flags(env, capsys):
    assert cli("start", "--dir", str(env / "c"), "--node", "2", "--tls") == 2
    assert "--tls" in capsys.readouterr().err


# --------------------------------------------------------------------------
# A TLS node's life with the fake java


def test_tls_node_life(fake_java, node_dir, capsys):
    port, sp = free_port(), free_port()
    args = ["--dir", str(node_dir), "--port", str(port)]
    assert cli("start", *args, "--storage-port", str(sp), "--require-client-auth") == 0
    out = capsys.readouterr().out
    files = localdb.TLSFiles(node_dir / "tls")
    assert "tls:    on (client auth required)" in out
    assert f"ca:          {files.ca}" in out and f"client key:  {files.client_key}" in out
    node = localdb.status(node_dir)
    assert node.pid and node.tls and node.require_client_auth
    # the node speaks TLS only, and wants the client certificate
    assert localdb.cql_answers("127.0.0.1", port, ssl_context=files.ssl_context())
    assert not localdb.cql_answers("127.0.0.1", port, timeout=1)
    assert not localdb.cql_answers("127.0.0.1", port, timeout=1, ssl_context=files.ssl_context(client_cert=False))
    assert cli("status", *args) == 0
    out = capsys.readouterr().out
    assert "CQL answers" in out and "tls:    on (client auth required)" in out
    # start again while it runs: attached with its saved settings; other TLS settings: refused
    again = localdb.start(node_dir, port, timeout=10, storage_port=sp)
    assert again.already_running and again.tls and again.require_client_auth
    with pytest.raises(localdb.LocalDBError, match="TLS on .client auth required."):
        localdb.start(node_dir, port, tls=False, timeout=10, storage_port=sp)
    ca = files.ca.read_bytes()
    keystore = files.node_keystore.read_bytes()
    # a restart keeps TLS (saved in node.json) and its certificates
    assert localdb.stop(node_dir)
    node = localdb.start(node_dir, port, timeout=30, storage_port=sp)
    assert node.tls and node.require_client_auth and not node.already_running
    assert files.ca.read_bytes() == ca and files.node_keystore.read_bytes() == keystore
    # client auth off again, TLS kept
    assert localdb.stop(node_dir)
    node = localdb.start(node_dir, port, require_client_auth=False, timeout=30, storage_port=sp)
    assert node.tls and not node.require_client_auth
    assert localdb.cql_answers("127.0.0.1", port, ssl_context=files.ssl_context(client_cert=False))
    # and TLS off: clear text again
    assert localdb.stop(node_dir)
    node = localdb.start(node_dir, port, tls=False, timeout=30, storage_port=sp)
    assert not node.tls and node.tls_files() is None
    assert localdb.cql_answers("127.0.0.1", port)
    assert cli("status", *args) == 0
    assert "tls:" not in capsys.readouterr().out


def test_tls_cluster_life(fake_java, env, capsys):
    base = env / "tlscluster"
    port = free_port()
    try:
        cluster = localdb.start_cluster(
            2, first_address=FIRST, dir=base, timeout=30, port=port, storage_port=free_port(), tls=True
        )
        assert cluster.tls and not cluster.require_client_auth
        assert [s.state for s in cluster.status()] == ["UP", "UP"]
        files = cluster.tls_files()
        assert files == cluster.nodes[0].tls_files()
        ctx = files.ssl_context()
        for n in cluster.nodes:  # one CA, a certificate per node address
            assert localdb.cql_answers(n.address, port, ssl_context=ctx)
            assert not localdb.cql_answers(n.address, port, timeout=1)
        assert json.loads((base / "cluster.json").read_text())["tls"] is True
        assert cli("status", "--dir", str(base)) == 0
        out = capsys.readouterr().out
        assert "tls:    on" in out and f"keystores:   {base}/nodeK/tls/node.pem (one per node)" in out
        # node 2 alone, with its saved settings
        assert cluster.stop_node(2)
        assert cli("start", "--dir", str(base), "--node", "2") == 0
        found = localdb.find_cluster(base)
        assert found.tls and found.node(2).tls and found.is_up()
    finally:
        localdb.stop_cluster(base, timeout=5)
