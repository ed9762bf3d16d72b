"""`turbocql localdb start --tls --require-client-auth` against a real Cassandra 5.0, checked with
the classic driver (the oracle): it connects over TLS with the generated CA and client
certificate, and the node's ``system_views.clients`` says the connection is encrypted; clear
text and a client without its certificate are refused."""

import ssl

import pytest

import turbocql_localdb as localdb
from tests.conftest import HOST
from tests.integration.conftest import MTLS_PORT

pytest.importorskip("cryptography")

# The session's TLS node that requires client certificates (tests/integration/conftest.py).
TLS_PORT = MTLS_PORT


@pytest.fixture
def tls_node(mtls_node):
    return mtls_node


def _classic(ssl_context, **kwargs):
    from cassandra.cluster import Cluster as ClassicCluster

    return ClassicCluster([HOST], port=TLS_PORT, ssl_context=ssl_context, protocol_version=4, **kwargs)


def _context(files, client_cert=True):
    """Built from the file paths, as a user would (not with TLSFiles.ssl_context)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(files.ca))
    if client_cert:
        ctx.load_cert_chain(str(files.client_cert), str(files.client_key))
    return ctx


def test_node_reports_its_tls_files(tls_node):
    assert tls_node.tls and tls_node.require_client_auth
    files = tls_node.tls_files()
    assert files.dir == tls_node.dir / "tls"
    for path in (files.ca, files.ca_key, files.node_keystore, files.client_cert, files.client_key):
        assert path.is_file()
    assert localdb.status(tls_node.dir).tls_files() == files
    assert localdb.cql_answers(HOST, TLS_PORT, ssl_context=files.ssl_context())


def test_classic_driver_over_tls(tls_node):
    cluster = _classic(_context(tls_node.tls_files()))
    try:
        session = cluster.connect()
        assert session.execute("SELECT release_version FROM system.local").one().release_version.startswith("5.0")
        rows = session.execute("SELECT ssl_enabled, ssl_protocol FROM system_views.clients").all()
        assert rows and all(r.ssl_enabled for r in rows)
        assert all(r.ssl_protocol.startswith("TLSv1.") for r in rows)
    finally:
        cluster.shutdown()


def test_clear_text_is_refused(tls_node):
    from cassandra.cluster import NoHostAvailable

    assert not localdb.cql_answers(HOST, TLS_PORT, timeout=2)
    cluster = _classic(None, connect_timeout=5)
    try:
        with pytest.raises(NoHostAvailable):
            cluster.connect()
    finally:
        cluster.shutdown()


def test_a_client_without_its_certificate_is_refused(tls_node):
    from cassandra.cluster import NoHostAvailable

    cluster = _classic(_context(tls_node.tls_files(), client_cert=False), connect_timeout=5)
    try:
        with pytest.raises(NoHostAvailable) as info:
            cluster.connect()
        # TLS 1.3 reports the missing certificate after the handshake: an alert
        # ("certificate required") or, depending on timing, just the connection's end.
        errors = list(info.value.errors.values())
        assert errors and all(isinstance(e, (ssl.SSLError, ConnectionError)) for e in errors), errors
    finally:
        cluster.shutdown()
