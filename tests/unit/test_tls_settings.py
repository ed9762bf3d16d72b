"""`ssl_context` / `ssl_options` checked and turned into the context the engine reads
(turbocql._cluster.tls), without a server."""

import ssl
import warnings

import pytest

from turbocql._cluster.tls import tls_settings

pytestmark = pytest.mark.filterwarnings("ignore:Using ssl_options without ssl_context:DeprecationWarning")


def test_nothing_is_clear_text():
    assert tls_settings(None, None) is None
    assert tls_settings(None, {}) is None


def test_context_is_used_as_given():
    ctx = ssl.create_default_context()
    settings = tls_settings(ctx, {"server_hostname": "db.example.com"})
    assert settings.context is ctx and settings.server_hostname == "db.example.com"


def test_options_build_a_client_context_as_the_classic_driver_does():
    settings = tls_settings(None, {"check_hostname": False})
    ctx = settings.context
    assert ctx.protocol == ssl.PROTOCOL_TLS_CLIENT
    assert not ctx.check_hostname
    # PROTOCOL_TLS_CLIENT verifies by default (the classic driver's effective behaviour).
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert settings.server_hostname is None


def test_cert_reqs_is_honoured():
    assert tls_settings(None, {"cert_reqs": ssl.CERT_NONE}).context.verify_mode == ssl.CERT_NONE
    assert tls_settings(None, {"cert_reqs": ssl.CERT_OPTIONAL}).context.verify_mode == ssl.CERT_OPTIONAL


def test_ciphers_and_check_hostname():
    ctx = tls_settings(None, {"check_hostname": True, "ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256"}).context
    assert ctx.check_hostname
    names = {c["name"] for c in ctx.get_ciphers()}
    assert "ECDHE-ECDSA-AES128-GCM-SHA256" in names and "ECDHE-RSA-AES256-GCM-SHA384" not in names


def test_missing_files_raise():
    with pytest.raises(FileNotFoundError):
        tls_settings(None, {"ca_certs": "/nonexistent/ca.pem"})


@pytest.mark.parametrize(
    "ctx, options, error, match",
    [
        (None, {"ca_cert": "x"}, ValueError, "unknown ssl_options ca_cert"),
        (None, {"server_side": True}, ValueError, "server_side=True"),
        (None, {"server_hostname": 5}, TypeError, "server_hostname"),
        (None, ["ca.pem"], TypeError, "ssl_options must be a dict"),
        (object(), None, TypeError, "ssl_context must be an ssl.SSLContext"),
        ("ctx", {"ca_certs": "ca.pem", "certfile": "c.pem"}, ValueError, "ca_certs, certfile configure a context"),
    ],
)
def test_what_cannot_be_honoured_raises(ctx, options, error, match):
    if ctx == "ctx":
        ctx = ssl.create_default_context()
    with pytest.raises(error, match=match):
        tls_settings(ctx, options)


def test_options_alone_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tls_settings(None, {"cert_reqs": ssl.CERT_NONE})
    assert [str(w.message).split(" is ")[0] for w in caught] == ["Using ssl_options without ssl_context"]


def test_options_hand_the_client_files_to_the_engine(tmp_path):
    """The engine reads ssl_options' certificate files itself where the context's own
    OpenSSL cannot be shared (the rustls verifier)."""
    from turbocql_localdb import TLSFiles, ensure_tls_files

    pytest.importorskip("cryptography")
    ensure_tls_files(tmp_path, "127.0.0.1")
    files = TLSFiles(tmp_path)
    options = {"ca_certs": str(files.ca), "certfile": str(files.client_cert), "keyfile": str(files.client_key)}
    settings = tls_settings(None, options)
    assert (settings.certfile, settings.keyfile) == (str(files.client_cert), str(files.client_key))
    assert tls_settings(ssl.create_default_context(), None).certfile is None


def _needed_libraries(path):
    """The DT_NEEDED entries of a 64-bit little-endian ELF shared object."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF file"
    shoff, _, _, _, _, shentsize, shnum, _ = struct.unpack_from("<QIHHHHHH", data, 0x28)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # its sh_link: the string table
    needed = []
    for off in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            needed.append(data[start : data.index(b"\0", start)].decode())
    return needed


def test_the_engine_links_no_openssl():
    """``import turbocql`` needs no libssl (a system with OpenSSL 1.1 or none imports it):
    TLS is rustls, and Python's own OpenSSL is looked up at run time (src/api/tls)."""
    from turbocql import _engine

    needed = _needed_libraries(_engine.__file__)
    assert "libc.so.6" in needed
    assert not [lib for lib in needed if lib.startswith(("libssl", "libcrypto"))], needed


def test_the_verifier_is_reported_with_its_reason():
    from turbocql import _engine

    verifier, why_not = _engine.tls_verifier()
    assert verifier in ("python-openssl", "rustls")
    assert (why_not is None) == (verifier == "python-openssl")
