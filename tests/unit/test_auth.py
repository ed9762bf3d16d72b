"""Authentication providers without a server: the bytes each sends, compared with the
classic driver's, and credentials kept out of repr()."""

import cassandra.auth as classic
import pytest

import turbocql.auth as ours
from turbocql import UnsupportedOperation

SECRET = "pa55-w0rd"


@pytest.mark.parametrize("server", ["org.apache.cassandra.auth.PasswordAuthenticator", ours._DSE_AUTHENTICATOR])
def test_plain_text_exchange_is_the_classic_one(server):
    exchanges = []
    for module in (ours, classic):
        auth = module.PlainTextAuthProvider("user", SECRET).new_authenticator("127.0.0.1")
        auth.server_authenticator_class = server
        first = auth.initial_response()
        second = auth.evaluate_challenge(b"PLAIN-START")
        exchanges.append((first, second))
    assert exchanges[0] == exchanges[1]


def test_sasl_plain_without_pure_sasl(monkeypatch):
    monkeypatch.setattr(ours, "SASLClient", None)
    provider = ours.SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="user", password=SECRET)
    auth = provider.new_authenticator(None)
    assert auth.initial_response() == b"\x00user\x00" + SECRET.encode()
    with pytest.raises(ImportError, match="puresasl"):
        ours.SaslAuthProvider(service="cassandra", mechanism="DIGEST-MD5")


def test_kerberos_is_refused_clearly():
    with pytest.raises(UnsupportedOperation, match="GSSAPI"):
        ours.SaslAuthProvider(service="cassandra", mechanism="GSSAPI")
    with pytest.raises(UnsupportedOperation, match="GSSAPI"):
        ours.DSEGSSAPIAuthProvider()
    with pytest.raises(ValueError, match="host"):
        ours.SaslAuthProvider(service="cassandra", mechanism="PLAIN", host="h")


def test_repr_hides_passwords():
    sasl = ours.SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="user", password=SECRET)
    plain = ours.PlainTextAuthProvider("user", SECRET)
    objects = [plain, plain.new_authenticator(None), sasl, sasl.new_authenticator(None)]
    for obj in objects:
        assert SECRET not in repr(obj) and SECRET not in str(obj)
    assert "user" in repr(objects[0])
