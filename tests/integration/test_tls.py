"""TLS against the local TLS nodes (`localdb start --tls`, with and without required client
certificates): what the SSLContext or ``ssl_options`` say is honoured (CA, client
certificate, hostname checks, verification mode, protocol bounds, ciphers, key log), every
request path runs encrypted, and nothing falls back to clear text. Where the outcome is in
doubt, the classic driver runs the same thing against the same node.

Every test runs with both of the engine's certificate verifiers (src/api/tls/mod.rs): the
context's own OpenSSL, shared at run time (``python-openssl``, skipped with its reason on a
Python whose OpenSSL cannot be shared), and rustls against the CA certificates the context
exposes (``rustls``, what a python-build-standalone interpreter gets)."""

import asyncio
import datetime
import shutil
import ssl
import subprocess
import uuid

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import MTLS_PORT, TLS_PORT
from turbocql import _engine
from turbocql.cluster import Cluster, NoHostAvailable

pytest.importorskip("cryptography")

# Both drivers warn that ssl_options alone is deprecated (checked once, below).
pytestmark = pytest.mark.filterwarnings("ignore:Using ssl_options without ssl_context:DeprecationWarning")

_DEFAULT_VERIFIER, _NOT_SHARED = _engine.tls_verifier()


@pytest.fixture(autouse=True, params=["python-openssl", "rustls"])
def verifier(request, monkeypatch):
    """The engine's certificate verifier for this run of the test (forced by its switch)."""
    if request.param == "python-openssl" and _NOT_SHARED:
        pytest.skip("this Python's OpenSSL cannot be shared with turbocql: %s" % _NOT_SHARED)
    monkeypatch.setenv("TURBOCQL_TLS_VERIFIER", request.param)
    return request.param


def _cluster(port, tag=None, **kwargs):
    return Cluster([HOST], port=port, connect_timeout=10, application_name=tag or _tag(), **kwargs)


def _tag():
    return "tls-test-" + uuid.uuid4().hex[:8]


def _connections(session, tag):
    """This client's connections as the node sees them (system_views.clients)."""
    rows = session.execute(
        "SELECT ssl_enabled, ssl_protocol, ssl_cipher_suite, driver_name, client_options FROM system_views.clients"
    )
    return [r for r in rows if (r.client_options or {}).get("APPLICATION_NAME") == tag]


def _classic_connect(port, **kwargs):
    from cassandra.cluster import Cluster as ClassicCluster

    c = ClassicCluster([HOST], port=port, protocol_version=4, connect_timeout=10, **kwargs)
    try:
        c.connect().execute("SELECT key FROM system.local").one()
    finally:
        c.shutdown()


def _classic_refuses(port, **kwargs):
    """The classic driver's one error when it cannot connect with these settings."""
    from cassandra.cluster import NoHostAvailable as ClassicNoHostAvailable

    with pytest.raises(ClassicNoHostAvailable) as info:
        _classic_connect(port, **kwargs)
    return _the_error(info)


def _other_ca(tmp_path):
    """A CA the nodes do not know (with its own node and client certificates)."""
    from turbocql_localdb import TLSFiles, ensure_tls_files

    ensure_tls_files(tmp_path, HOST)
    return TLSFiles(tmp_path)


def _reason(err):
    """The reason of a certificate rejection, without Python's source location."""
    return str(err).split("certificate verify failed: ")[1].split(" (_ssl.c")[0]


def _the_error(info):
    errors = list(info.value.errors.values())
    assert len(errors) == 1, info.value.errors
    return errors[0]


def test_connects_over_tls_and_every_connection_is_encrypted(tls_node, verifier):
    files = tls_node.tls_files()
    ctx = ssl.create_default_context(cafile=str(files.ca))  # check_hostname on: the node's IP is in its certificate
    tag = _tag()
    cluster = _cluster(TLS_PORT, tag, ssl_context=ctx)
    session = cluster.connect()
    assert session._session.tls_verifier == verifier
    assert session.execute("SELECT key FROM system.local").one().key == "local"
    conns = _connections(session, tag)
    assert conns and all(c.ssl_enabled for c in conns)
    assert {c.driver_name for c in conns} == {"turbocql"}
    cluster.shutdown()
    _classic_connect(TLS_PORT, ssl_context=ctx)


def test_every_request_path_runs_over_tls(tls_node):
    from turbocql.concurrent import ReadPipeline, WritePipeline, execute_concurrent_with_args

    ctx = tls_node.tls_files().ssl_context(client_cert=False)
    cluster = _cluster(TLS_PORT, ssl_context=ctx)
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS tls_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS tls_ks.kv (k int PRIMARY KEY, v text)")
    insert = session.prepare("INSERT INTO tls_ks.kv (k, v) VALUES (?, ?)")
    select = session.prepare("SELECT v FROM tls_ks.kv WHERE k = ?")
    session.execute(insert, (0, "sync"))
    session.execute_async(insert, (1, "future")).result()
    done = []
    future = session.execute_async(insert, (2, "callback"))
    future.add_callbacks(done.append, done.append)
    future.result()
    results = execute_concurrent_with_args(session, insert, [(k, "concurrent") for k in range(10, 510)], concurrency=50)
    assert all(ok for ok, _ in results)
    with WritePipeline(session, max_in_flight_requests=20, max_unsent_write_requests=100) as pipeline:
        for k in range(600, 700):
            pipeline.execute(insert, (k, "pipeline"))
    reads = ReadPipeline(session, max_in_flight_requests=20, max_unconsumed_read_responses=100)
    for k in (0, 1, 2, 10, 600):
        reads.execute(select, (k,))
    assert [rs.one().v for rs in reads.results()] == ["sync", "future", "callback", "concurrent", "pipeline"]
    assert session.execute("SELECT count(*) FROM tls_ks.kv").one()[0] == 603
    cluster.shutdown()

    async def over_asyncio():
        from turbocql.aio import Cluster as AioCluster

        async with AioCluster([HOST], port=TLS_PORT, ssl_context=ctx, connect_timeout=10) as c:
            s = await c.connect("tls_ks")
            sel = await s.prepare("SELECT v FROM kv WHERE k = ?")
            rows = await asyncio.gather(*(s.execute(sel, (k,)) for k in (0, 1, 2)))
            await s.execute_concurrent_with_args(sel, [(k,) for k in range(10, 110)])
            return [r.one().v for r in rows]

    assert asyncio.run(over_asyncio()) == ["sync", "future", "callback"]


def test_unknown_ca_is_rejected_as_the_classic_driver_rejects_it(tls_node, tmp_path):
    ctx = ssl.create_default_context(cafile=str(_other_ca(tmp_path).ca))
    with pytest.raises(NoHostAvailable) as info:
        _cluster(TLS_PORT, ssl_context=ctx).connect()
    err = _the_error(info)
    assert isinstance(err, ssl.SSLCertVerificationError)
    assert str(err).startswith("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ")
    # The classic driver wraps the ssl error in a PermissionError; the reason is the same, in
    # the same words ("self-signed certificate in certificate chain": the node sends the CA
    # with its certificate).
    assert _reason(err) == _reason(_classic_refuses(TLS_PORT, ssl_context=ctx))
    assert _reason(err) == "self-signed certificate in certificate chain"


def test_hostname_is_checked_only_when_asked_as_in_the_classic_driver(tls_node):
    ca = str(tls_node.tls_files().ca)
    wrong = {"ca_certs": ca, "check_hostname": True, "server_hostname": "db.example.com"}
    with pytest.raises(NoHostAvailable) as info:
        _cluster(TLS_PORT, ssl_options=wrong).connect()
    err = _the_error(info)
    assert isinstance(err, ssl.SSLCertVerificationError) and "hostname mismatch" in str(err).lower()
    assert "hostname mismatch" in str(_classic_refuses(TLS_PORT, ssl_options=wrong)).lower()
    # The name the certificate carries; then no check at all when check_hostname is off.
    for options in (
        {"ca_certs": ca, "check_hostname": True, "server_hostname": "localhost"},
        {"ca_certs": ca, "check_hostname": False, "server_hostname": "db.example.com"},
        {"ca_certs": ca},
    ):
        cluster = _cluster(TLS_PORT, ssl_options=options)
        assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
        cluster.shutdown()
        _classic_connect(TLS_PORT, ssl_options=options)


def test_client_certificate_is_presented_and_required(mtls_node, verifier):
    files = mtls_node.tls_files()
    tag = _tag()
    if verifier == "python-openssl":
        cluster = _cluster(MTLS_PORT, tag, ssl_context=files.ssl_context(client_cert=True))
        session = cluster.connect()
        assert all(c.ssl_enabled for c in _connections(session, tag))
        cluster.shutdown()
    else:
        # The context's own certificate cannot be read without its OpenSSL: the connect
        # fails naming the ssl_options keys that give it, rather than going on without it.
        with pytest.raises(NoHostAvailable) as info:
            _cluster(MTLS_PORT, tag, ssl_context=files.ssl_context(client_cert=True)).connect()
        err = _the_error(info)
        assert isinstance(err, ssl.SSLError) and "'certfile'" in str(err) and "'keyfile'" in str(err)
    options = {"ca_certs": str(files.ca), "certfile": str(files.client_cert), "keyfile": str(files.client_key)}
    cluster = _cluster(MTLS_PORT, ssl_options=options)
    assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
    cluster.shutdown()
    with pytest.raises(NoHostAvailable) as info:
        _cluster(MTLS_PORT, ssl_context=files.ssl_context(client_cert=False)).connect()
    assert "Unable to connect" in str(info.value)
    _classic_refuses(MTLS_PORT, ssl_context=files.ssl_context(client_cert=False))


def test_a_client_certificate_of_another_ca_is_refused(mtls_node, tmp_path):
    other = _other_ca(tmp_path)
    ctx = ssl.create_default_context(cafile=str(mtls_node.tls_files().ca))
    ctx.load_cert_chain(str(other.client_cert), str(other.client_key))
    with pytest.raises(NoHostAvailable):
        _cluster(MTLS_PORT, ssl_context=ctx).connect()


def test_never_falls_back_to_clear_text(tls_node, cassandra):
    ctx = tls_node.tls_files().ssl_context(client_cert=False)
    # TLS to the clear-text node: the handshake fails, no plain connection is made.
    with pytest.raises(NoHostAvailable) as info:
        _cluster(PORT, ssl_context=ctx).connect()
    assert isinstance(_the_error(info), ssl.SSLError)
    # Clear text to the TLS node: refused by the node.
    with pytest.raises(NoHostAvailable):
        _cluster(TLS_PORT).connect()


def test_verify_mode_none_is_honoured(tls_node):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    cluster = _cluster(TLS_PORT, ssl_context=ctx)
    assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
    cluster.shutdown()
    _classic_connect(TLS_PORT, ssl_context=ctx)
    # ssl_options' cert_reqs: honoured (no CA given, nothing verified).
    cluster = _cluster(TLS_PORT, ssl_options={"cert_reqs": ssl.CERT_NONE})
    assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
    cluster.shutdown()


@pytest.mark.parametrize(
    "configure, protocol, cipher",
    [
        (lambda c: setattr(c, "minimum_version", ssl.TLSVersion.TLSv1_3), "TLSv1.3", None),
        (
            lambda c: (
                setattr(c, "maximum_version", ssl.TLSVersion.TLSv1_2),
                c.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256"),
            ),
            "TLSv1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        ),
    ],
    ids=["tls1.3-only", "tls1.2-one-cipher"],
)
def test_protocol_bounds_and_ciphers_are_honoured(tls_node, configure, protocol, cipher):
    ctx = tls_node.tls_files().ssl_context(client_cert=False)
    configure(ctx)
    tag = _tag()
    cluster = _cluster(TLS_PORT, tag, ssl_context=ctx)
    conns = _connections(cluster.connect(), tag)
    cluster.shutdown()
    assert conns and {c.ssl_protocol for c in conns} == {protocol}
    if cipher:
        assert {c.ssl_cipher_suite for c in conns} == {cipher}


def test_key_log_file_is_written(tls_node, tmp_path):
    ctx = tls_node.tls_files().ssl_context(client_cert=False)
    ctx.keylog_filename = str(tmp_path / "keys.log")
    cluster = _cluster(TLS_PORT, ssl_context=ctx)
    cluster.connect().execute("SELECT key FROM system.local")
    cluster.shutdown()
    lines = (tmp_path / "keys.log").read_text().splitlines()
    assert any(line.startswith("CLIENT_TRAFFIC_SECRET_0 ") for line in lines)


@pytest.mark.filterwarnings("error")
def test_ssl_options_alone_warn_as_in_the_classic_driver():
    with pytest.warns(DeprecationWarning, match="Using ssl_options without ssl_context is deprecated"):
        Cluster(ssl_options={"cert_reqs": ssl.CERT_NONE})
    from cassandra.cluster import Cluster as ClassicCluster

    with pytest.warns(DeprecationWarning, match="Using ssl_options without ssl_context is deprecated"):
        ClassicCluster(ssl_options={"cert_reqs": ssl.CERT_NONE}, protocol_version=4)


def test_settings_that_cannot_be_honoured_raise_clear_errors(tls_node):
    with pytest.raises(ValueError, match="server-side context"):
        _cluster(TLS_PORT, ssl_context=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)).connect()
    with pytest.raises(ValueError, match="unknown ssl_options ca_cert"):
        Cluster(ssl_options={"ca_cert": "ca.pem"})
    with pytest.raises(ValueError, match="ssl_options ca_certs configure a context, but ssl_context is given"):
        Cluster(ssl_context=ssl.create_default_context(), ssl_options={"ca_certs": "ca.pem"})
    with pytest.raises(ValueError, match="server_side=True"):
        Cluster(ssl_options={"server_side": True})


def _capath(tmp_path, ca):
    """A capath directory holding ``ca`` under its OpenSSL subject hash (c_rehash's layout)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to name a capath entry")
    digest = subprocess.run([openssl, "x509", "-hash", "-noout", "-in", str(ca)], capture_output=True, text=True)
    assert digest.returncode == 0, digest.stderr
    capath = tmp_path / "capath"
    capath.mkdir()
    shutil.copy(ca, capath / ("%s.0" % digest.stdout.strip()))
    return capath


def test_a_capath_directory_is_honoured(tls_node, tmp_path, verifier):
    """A capath's CA is looked up lazily, invisible outside OpenSSL: the context's own OpenSSL
    verifies with it (python-openssl), or one handshake of Python's own loads it into the
    store first (rustls)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(capath=str(_capath(tmp_path, tls_node.tls_files().ca)))
    assert ctx.get_ca_certs() == []
    cluster = _cluster(TLS_PORT, ssl_context=ctx)
    assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
    cluster.shutdown()
    _classic_connect(TLS_PORT, ssl_context=ctx)


def test_a_capath_without_the_nodes_ca_is_rejected_in_the_classic_words(tls_node, tmp_path, verifier):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(capath=str(_capath(tmp_path, _other_ca(tmp_path / "other").ca)))
    with pytest.raises(NoHostAvailable) as info:
        _cluster(TLS_PORT, ssl_context=ctx).connect()
    err = _the_error(info)
    assert isinstance(err, ssl.SSLCertVerificationError)
    assert str(err).startswith("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ")
    classic = _classic_refuses(TLS_PORT, ssl_context=ctx)
    assert _reason(err) == _reason(classic)


def test_rustls_sees_no_ca_of_a_capath_it_cannot_reach(tls_node, tmp_path, monkeypatch):
    """Under rustls, with no contact point answering TLS for the handshake that loads a
    capath's CA, the store stays empty to the engine: a clear error, naming what to give."""
    monkeypatch.setenv("TURBOCQL_TLS_VERIFIER", "rustls")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(capath=str(_capath(tmp_path, tls_node.tls_files().ca)))
    with pytest.raises(ValueError, match="sees no CA certificate in it.*capath.*ca_certs"):
        _cluster(PORT, ssl_context=ctx).connect()  # the clear-text node: no handshake


def test_crls_are_checked_or_refused_clearly(tls_node, tmp_path, verifier):
    """A CRL that revokes the node's certificate: OpenSSL's verdict, as the classic driver's."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    files = tls_node.tls_files()
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(files.ca_key.read_bytes(), None)
    node_cert = x509.load_pem_x509_certificates(files.node_keystore.read_bytes())[0]
    now = datetime.datetime.now(datetime.UTC)
    revoked = (
        x509.RevokedCertificateBuilder()
        .serial_number(node_cert.serial_number)
        .revocation_date(now - datetime.timedelta(minutes=5))
        .build()
    )
    crl = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca.subject)
        .last_update(now - datetime.timedelta(minutes=5))
        .next_update(now + datetime.timedelta(days=1))
        .add_revoked_certificate(revoked)
        .sign(ca_key, hashes.SHA256())
    )
    crl_file = tmp_path / "crl.pem"
    crl_file.write_bytes(crl.public_bytes(serialization.Encoding.PEM))
    ctx = files.ssl_context(client_cert=False)
    ctx.load_verify_locations(cafile=str(crl_file))
    ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if verifier == "python-openssl":
        with pytest.raises(NoHostAvailable) as info:
            _cluster(TLS_PORT, ssl_context=ctx).connect()
        err = _the_error(info)
        assert isinstance(err, ssl.SSLCertVerificationError)
        assert str(err).endswith("certificate verify failed: certificate revoked")
        assert "certificate revoked" in str(_classic_refuses(TLS_PORT, ssl_context=ctx))
    else:
        with pytest.raises(ValueError, match="checks CRLs"):
            _cluster(TLS_PORT, ssl_context=ctx).connect()


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_versions_and_ciphers_rustls_cannot_speak_raise(tls_node):
    old = tls_node.tls_files().ssl_context(client_cert=False)
    old.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises(ValueError, match="allows no protocol version turbocql's TLS speaks"):
        _cluster(TLS_PORT, ssl_context=old).connect()
    # TLS 1.2 only, with a CBC cipher alone: nothing rustls offers is left.
    cbc = tls_node.tls_files().ssl_context(client_cert=False)
    cbc.maximum_version = ssl.TLSVersion.TLSv1_2
    cbc.set_ciphers("ECDHE-ECDSA-AES128-SHA")
    with pytest.raises(ValueError, match="allows no protocol version"):
        _cluster(TLS_PORT, ssl_context=cbc).connect()


def test_the_client_certificate_of_ssl_options_files_is_used(mtls_node, tmp_path):
    """``ssl_options`` files: the engine reads them itself where it must (rustls)."""
    files = mtls_node.tls_files()
    one_file = tmp_path / "client-and-key.pem"
    one_file.write_bytes(files.client_cert.read_bytes() + files.client_key.read_bytes())
    for options in (
        {"ca_certs": str(files.ca), "certfile": str(files.client_cert), "keyfile": str(files.client_key)},
        {"ca_certs": str(files.ca), "certfile": str(one_file)},
    ):
        cluster = _cluster(MTLS_PORT, ssl_options=options)
        assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
        cluster.shutdown()


def test_a_client_certificate_is_presented_without_server_verification(mtls_node, verifier):
    """CERT_NONE verifies nothing of the node, but the context's client certificate still goes."""
    files = mtls_node.tls_files()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.load_cert_chain(str(files.client_cert), str(files.client_key))
    cluster = _cluster(MTLS_PORT, ssl_context=ctx)
    if verifier == "python-openssl":
        assert cluster.connect().execute("SELECT key FROM system.local").one().key == "local"
        cluster.shutdown()
        _classic_connect(MTLS_PORT, ssl_context=ctx)
    else:
        with pytest.raises(NoHostAvailable) as info:
            cluster.connect()
        assert "'certfile'" in str(_the_error(info))


class _PosingContext:
    """Claims to be an ssl.SSLContext (``isinstance`` honours ``__class__``) and forwards every
    attribute to a real one, while its own memory holds no SSL_CTX."""

    def __init__(self, real):
        object.__setattr__(self, "_real", real)

    @property  # type: ignore[misc]
    def __class__(self):
        return ssl.SSLContext

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_an_object_posing_as_an_ssl_context_is_not_read(tls_node, verifier):
    """The engine reads the SSL_CTX pointer out of an ``_ssl._SSLContext`` object's memory only
    when the object's own type is one (src/api/tls/python_openssl.rs ``share``): an object
    that only claims the class is refused there, by name, and verified by rustls."""
    ctx = ssl.create_default_context(cafile=str(tls_node.tls_files().ca))
    posing = _PosingContext(ctx)
    assert isinstance(posing, ssl.SSLContext)
    cluster = _cluster(TLS_PORT, ssl_context=posing)
    try:
        if verifier == "python-openssl":  # forced: the refusal is the error
            with pytest.raises(ValueError, match=r"cannot be shared: .*_PosingContext.* is not an _ssl._SSLContext"):
                cluster.connect()
        else:
            session = cluster.connect()
            assert session._session.tls_verifier == "rustls"
            assert session.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        cluster.shutdown()
