"""PlainTextAuthProvider against a second local node started with PasswordAuthenticator
and CassandraAuthorizer (`turbocql localdb start --auth`)."""

import pytest

import turbocql_localdb as localdb
from tests.conftest import HOST, PORT
from turbocql import AuthenticationFailed, Unauthorized
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
    """As the classic driver: NoHostAvailable holding AuthenticationFailed("Remote end
    requires authentication") (the crate's typed MissingAuthentication)."""
    from cassandra.cluster import Cluster as ClassicCluster
    from cassandra.cluster import NoHostAvailable as ClassicNoHostAvailable

    with pytest.raises(NoHostAvailable) as info:
        _connect(None, None)
    classic = ClassicCluster([HOST], port=AUTH_PORT, protocol_version=4)
    with pytest.raises(ClassicNoHostAvailable) as classic_info:
        classic.connect()
    classic.shutdown()
    (ours,) = info.value.errors.values()
    (theirs,) = classic_info.value.errors.values()
    assert type(ours).__name__ == type(theirs).__name__ == "AuthenticationFailed"
    assert "Remote end requires authentication" in str(ours) and "Remote end requires authentication" in str(theirs)


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


class _RecordingAuthenticator:
    """A user's Authenticator (as classic code writes one): records what the driver
    calls, and answers PasswordAuthenticator's PLAIN exchange."""

    def __init__(self, calls, username, password):
        self.calls = calls
        self.username = username
        self.password = password

    def initial_response(self):
        self.calls.append(("initial_response", self.server_authenticator_class))
        return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()

    def evaluate_challenge(self, challenge):
        self.calls.append(("evaluate_challenge", challenge))
        return None

    def on_authentication_success(self, token):
        self.calls.append(("on_authentication_success", token))


def _recording_provider(base, calls, username, password):
    class Provider(base.AuthProvider):
        def new_authenticator(self, host):
            calls.append(("new_authenticator",))
            cls = type("Recording", (_RecordingAuthenticator, base.Authenticator), {})
            return cls(calls, username, password)

    return Provider()


def _classic_calls(username, password):
    import cassandra.auth
    from cassandra.cluster import Cluster as ClassicCluster

    calls = []
    c = ClassicCluster(
        [HOST],
        port=AUTH_PORT,
        protocol_version=4,
        auth_provider=_recording_provider(cassandra.auth, calls, username, password),
    )
    try:
        c.connect().execute("SELECT key FROM system.local").one()
    finally:
        c.shutdown()
    return calls


def test_user_authenticator_is_called_during_the_handshake_as_the_classic_driver_calls_it(auth_node):
    import turbocql.auth

    calls = []
    cluster = Cluster(
        [HOST], port=AUTH_PORT, auth_provider=_recording_provider(turbocql.auth, calls, "cassandra", "cassandra")
    )
    session = cluster.connect()
    assert session.execute("SELECT key FROM system.local").one().key == "local"
    cluster.shutdown()
    # Each connection runs one exchange: the same sequence of calls as the classic driver's.
    exchange = [
        ("new_authenticator",),
        ("initial_response", "org.apache.cassandra.auth.PasswordAuthenticator"),
        ("on_authentication_success", ""),
    ]
    assert calls[:3] == exchange
    assert len(calls) % 3 == 0 and all(calls[i : i + 3] == exchange for i in range(0, len(calls), 3))
    classic = _classic_calls("cassandra", "cassandra")
    assert classic[:3] == exchange


def test_user_authenticator_with_wrong_credentials_is_authentication_failed(auth_node):
    import turbocql.auth

    calls = []
    with pytest.raises(NoHostAvailable) as info:
        Cluster(
            [HOST], port=AUTH_PORT, auth_provider=_recording_provider(turbocql.auth, calls, "cassandra", "nope-secret")
        ).connect()
    errors = info.value.errors
    assert list(errors) == ["%s:%d" % (HOST, AUTH_PORT)]
    assert all(isinstance(e, AuthenticationFailed) for e in errors.values())
    assert "%s:%d" % (HOST, AUTH_PORT) in str(next(iter(errors.values())))
    assert "nope-secret" not in str(info.value)


def test_authenticator_that_raises_names_the_method_and_the_error(auth_node):
    from turbocql.auth import Authenticator, AuthProvider

    class Broken(Authenticator):
        def initial_response(self):
            raise RuntimeError("token service unreachable")

    class Provider(AuthProvider):
        def new_authenticator(self, host):
            return Broken()

    with pytest.raises(
        NoHostAvailable, match="initial_response raised RuntimeError: token service unreachable"
    ) as info:
        Cluster([HOST], port=AUTH_PORT, auth_provider=Provider(), connect_timeout=10).connect()
    assert all(isinstance(e, AuthenticationFailed) for e in info.value.errors.values())


def test_sasl_plain_provider(auth_node):
    from turbocql.auth import SaslAuthProvider

    provider = SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="cassandra", password="cassandra")
    session = Cluster([HOST], port=AUTH_PORT, auth_provider=provider).connect()
    assert session.execute("SELECT key FROM system.local").one().key == "local"
    session.cluster.shutdown()
    bad = SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="cassandra", password="wrong")
    with pytest.raises(NoHostAvailable) as info:
        Cluster([HOST], port=AUTH_PORT, auth_provider=bad).connect()
    assert all(isinstance(e, AuthenticationFailed) for e in info.value.errors.values())


def test_subclass_of_plain_text_provider_is_called(auth_node):
    """A PlainTextAuthProvider subclass that overrides new_authenticator is honoured (not
    short-cut to the engine's own username/password exchange)."""
    from turbocql.auth import PlainTextAuthenticator

    calls = []

    class Rotating(PlainTextAuthProvider):
        def new_authenticator(self, host):
            calls.append(host)
            return PlainTextAuthenticator("cassandra", "cassandra")

    session = Cluster([HOST], port=AUTH_PORT, auth_provider=Rotating("ignored", "ignored")).connect()
    session.execute("SELECT key FROM system.local")
    session.cluster.shutdown()
    assert calls and calls[0] is None  # the engine does not name the node (docs/migrating.md)


SECRET = "s3cr3t-Pa55word"


def test_credentials_never_appear_in_repr_logs_or_errors(auth_node, caplog):
    import logging

    from turbocql.auth import PlainTextAuthenticator, SaslAuthProvider

    caplog.set_level(logging.DEBUG)
    providers = [
        PlainTextAuthProvider(username="cassandra", password=SECRET),
        SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="cassandra", password=SECRET),
    ]
    texts = [repr(p) for p in providers] + [repr(PlainTextAuthenticator("cassandra", SECRET))]
    for p in providers:
        cluster = Cluster([HOST], port=AUTH_PORT, auth_provider=p, connect_timeout=10)
        texts.append(repr(cluster))
        with pytest.raises(NoHostAvailable) as info:
            cluster.connect()
        texts += [str(info.value), repr(info.value)] + [repr(e) for e in info.value.errors.values()]
        texts += [str(e) for e in info.value.errors.values()]
    texts += [r.getMessage() for r in caplog.records]
    assert all(SECRET not in t for t in texts), [t for t in texts if SECRET in t]
    assert any("cassandra" in t for t in texts)


def test_authenticator_that_waits_holds_up_no_other_connection(auth_node):
    """A user's authenticator waiting (on a token service, a lock, the GIL) during the
    handshake: every request of another cluster completes meanwhile (2,000 of them), and
    the handshake then succeeds. The authenticator runs on a thread of its own, never on
    the engine's I/O thread that drives every connection."""
    import threading

    import turbocql.auth
    from tests.integration._traffic import Gate, run_traffic, traffic_cluster

    gate = Gate()
    threads = []

    class WaitingAuthenticator(_RecordingAuthenticator, turbocql.auth.Authenticator):
        def initial_response(self):
            threads.append(threading.current_thread().name)
            gate.hold()
            return super().initial_response()

    class Provider(turbocql.auth.AuthProvider):
        def new_authenticator(self, host):
            return WaitingAuthenticator([], "cassandra", "cassandra")

    with traffic_cluster() as busy:
        busy_session = busy.connect()
        connected = {}

        def connect():
            c = Cluster([HOST], port=AUTH_PORT, auth_provider=Provider(), connect_timeout=60)
            connected["cluster"] = c
            connected["session"] = c.connect()

        connecting = threading.Thread(target=connect)
        connecting.start()
        try:
            assert gate.entered.wait(30), "the authenticator was never called"
            assert run_traffic(busy_session) == 2000
        finally:
            gate.opened.set()
            connecting.join(60)
        try:
            assert connected["session"].execute("SELECT key FROM system.local").one().key == "local"
        finally:
            connected["cluster"].shutdown()
    assert gate.outcomes[0] is True, "the authenticator gave up waiting: the traffic was held up"
    assert threading.main_thread().name not in threads
