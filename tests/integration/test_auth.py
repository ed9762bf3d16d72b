"""PlainTextAuthProvider against a second local node started with PasswordAuthenticator
and CassandraAuthorizer (`turbocql localdb start --auth`)."""

import pytest

from tests.conftest import HOST, PORT
from turbocql import AuthenticationFailed, Unauthorized, localdb
from turbocql.auth import PlainTextAuthProvider
from turbocql.cluster import Cluster, NoHostAvailable

AUTH_PORT = PORT + 1


@pytest.fixture(scope="module")
def auth_node(cassandra, tmp_path_factory):
    d = tmp_path_factory.mktemp("auth-node")
    node = localdb.start(dir=str(d), port=AUTH_PORT, heap="1G", auth=True, timeout=300, out=lambda *a, **k: None)
    yield node
    localdb.stop(dir=str(d), port=AUTH_PORT)


def _connect(user, password, keyspace=None):
    provider = PlainTextAuthProvider(username=user, password=password) if user is not None else None
    return Cluster([HOST], port=AUTH_PORT, auth_provider=provider, connect_timeout=10).connect(keyspace)


def test_good_credentials(auth_node):
    session = _connect("cassandra", "cassandra")
    assert session.execute("SELECT key FROM system.local").one().key == "local"
    session.shutdown()


def test_bad_password_is_authentication_failed_in_no_host_available(auth_node):
    with pytest.raises(NoHostAvailable) as info:
        _connect("cassandra", "wrong")
    errors = list(info.value.errors.values())
    assert errors and all(isinstance(e, AuthenticationFailed) for e in errors)
    assert "authenticat" in str(info.value).lower()


def test_missing_credentials_are_refused(auth_node):
    with pytest.raises(NoHostAvailable):
        _connect(None, None)


def test_unauthorized(auth_node):
    admin = _connect("cassandra", "cassandra")
    admin.execute(
        "CREATE KEYSPACE IF NOT EXISTS secured WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    admin.execute("CREATE TABLE IF NOT EXISTS secured.t (k int PRIMARY KEY)")
    admin.execute("CREATE ROLE IF NOT EXISTS reader WITH PASSWORD = 'pw' AND LOGIN = true")
    reader = _connect("reader", "pw")
    with pytest.raises(Unauthorized, match="reader|permission"):
        reader.execute("SELECT * FROM secured.t")
    admin.execute("GRANT SELECT ON KEYSPACE secured TO reader")
    assert reader.execute("SELECT * FROM secured.t").all() == []
    reader.shutdown()
    admin.shutdown()
