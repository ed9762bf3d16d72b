"""Authentication providers, under the classic driver's names (``cassandra.auth``).

The engine performs the SASL exchange itself; :class:`PlainTextAuthProvider` supplies the
credentials for Cassandra's ``PasswordAuthenticator``.
"""


class AuthProvider:
    """Base class: gives an authenticator for each new connection."""

    def new_authenticator(self, host):
        raise NotImplementedError()


class Authenticator:
    """Base class of the per-connection SASL exchange."""

    server_authenticator_class = None

    def initial_response(self):
        return None

    def evaluate_challenge(self, challenge):
        raise NotImplementedError()

    def on_authentication_success(self, token):
        pass


class PlainTextAuthenticator(Authenticator):
    """SASL PLAIN with a username and password."""

    def __init__(self, username, password):
        self.username = username
        self.password = password

    def initial_response(self):
        return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()

    def evaluate_challenge(self, challenge):
        return None


class PlainTextAuthProvider(AuthProvider):
    """Username and password authentication::

    from turbocql.auth import PlainTextAuthProvider
    cluster = Cluster(auth_provider=PlainTextAuthProvider(username="cassandra", password="cassandra"))
    """

    def __init__(self, username=None, password=None):
        self.username = username
        self.password = password

    def new_authenticator(self, host):
        return PlainTextAuthenticator(self.username, self.password)
