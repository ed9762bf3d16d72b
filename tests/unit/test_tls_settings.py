"""`ssl_context` / `ssl_options` checked and turned into the context the engine reads
(turbocql._tls), without a server."""

import ssl
import warnings

import pytest

from turbocql._tls import tls_settings

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
