"""Authentication providers, under the classic driver's names (``cassandra.auth``).

A provider gives each new connection an :class:`Authenticator`, which the engine calls
during the connection's SASL exchange (``initial_response``, ``evaluate_challenge``,
``on_authentication_success``). :class:`PlainTextAuthProvider` is the exception: its
username and password go to the engine, which answers Cassandra's ``PasswordAuthenticator``
itself, without a call into Python per connection.

Credentials never appear in ``repr()``, in log records or in exception messages.

One difference from the classic driver: ``new_authenticator(host)`` is called with
``host=None``, because the engine does not tell which node a connection goes to. The
mechanisms that need the node's name (Kerberos: GSSAPI) raise ``UnsupportedOperation``
when the provider is made.
"""

from turbocql import UnsupportedOperation, _loggers

log = _loggers.auth

try:  # pure-sasl, as in the classic driver: optional
    from puresasl.client import SASLClient  # type: ignore[import-not-found]
except ImportError:
    SASLClient = None

_DSE_AUTHENTICATOR = "com.datastax.bdp.cassandra.auth.DseAuthenticator"


class AuthProvider:
    """Base class: gives an :class:`Authenticator` for each new connection."""

    def new_authenticator(self, host):
        raise NotImplementedError()


class Authenticator:
    """Base class of one connection's SASL exchange.

    ``server_authenticator_class`` is set to the server's authenticator class name
    before :meth:`initial_response` is called.
    """

    server_authenticator_class = None

    def initial_response(self):
        return None

    def evaluate_challenge(self, challenge):
        raise NotImplementedError()

    def on_authentication_success(self, token):
        pass


def _redacted(obj, *shown):
    fields = ", ".join("%s=%r" % (name, getattr(obj, name, None)) for name in shown)
    return "<%s(%s%spassword=<hidden>)>" % (type(obj).__name__, fields, ", " if fields else "")


class PlainTextAuthProvider(AuthProvider):
    """Username and password, for Cassandra's ``PasswordAuthenticator``.

    For example::

        from turbocql.auth import PlainTextAuthProvider
        cluster = Cluster(auth_provider=PlainTextAuthProvider(username="cassandra", password="cassandra"))
    """

    def __init__(self, username=None, password=None):
        self.username = username
        self.password = password

    def new_authenticator(self, host):
        return PlainTextAuthenticator(self.username, self.password)

    def __repr__(self):
        return _redacted(self, "username")


class BaseDSEAuthenticator(Authenticator):
    """An authenticator that names its mechanism first when the server is DSE's
    ``DseAuthenticator``, and otherwise answers its own initial challenge."""

    def get_mechanism(self):
        raise NotImplementedError("get_mechanism not implemented")

    def get_initial_challenge(self):
        raise NotImplementedError("get_initial_challenge not implemented")

    def initial_response(self):
        if self.server_authenticator_class == _DSE_AUTHENTICATOR:
            return self.get_mechanism()
        return self.evaluate_challenge(self.get_initial_challenge())


class PlainTextAuthenticator(BaseDSEAuthenticator):
    """SASL PLAIN with a username and password."""

    def __init__(self, username, password):
        self.username = username
        self.password = password

    def get_mechanism(self):
        return b"PLAIN"

    def get_initial_challenge(self):
        return b"PLAIN-START"

    def evaluate_challenge(self, challenge):
        if challenge == b"PLAIN-START":
            return b"\x00" + str(self.username).encode() + b"\x00" + str(self.password).encode()
        raise ValueError("unexpected SASL challenge for PLAIN authentication")

    def __repr__(self):
        return _redacted(self, "username")


DSEPlainTextAuthProvider = PlainTextAuthProvider


class TransitionalModePlainTextAuthenticator(PlainTextAuthenticator):
    """Empty credentials, for DSE's ``TransitionalModePlainTextAuthenticator``."""

    def __init__(self):
        super().__init__("", "")


class TransitionalModePlainTextAuthProvider:
    """For DSE's transitional authentication mode: empty credentials."""

    def __init__(self):
        log.warning(
            "TransitionalModePlainTextAuthProvider will be removed in cassandra-driver 4.0. The transitional "
            "mode will be handled internally without the need of any auth provider."
        )

    def new_authenticator(self, host):
        return TransitionalModePlainTextAuthenticator()


def _check_mechanism(mechanism):
    if str(mechanism).upper() == "GSSAPI":
        raise UnsupportedOperation(
            "SASL mechanism GSSAPI (Kerberos) needs the node's host name, which turbocql's engine does not give "
            "the authenticator"
        )
    if SASLClient is None and str(mechanism).upper() != "PLAIN":
        raise ImportError(
            "The puresasl library has not been installed (turbocql implements the PLAIN mechanism without it)"
        )


class SaslAuthProvider(AuthProvider):
    """A general SASL provider, taking pure-sasl's arguments::

        SaslAuthProvider(service="cassandra", mechanism="PLAIN", username="u", password="p")

    PLAIN works without pure-sasl installed; other mechanisms use pure-sasl's
    ``SASLClient``, as the classic driver does.
    """

    def __init__(self, **sasl_kwargs):
        if "host" in sasl_kwargs:
            raise ValueError("kwargs should not contain 'host' since it is passed dynamically to new_authenticator")
        _check_mechanism(sasl_kwargs.get("mechanism", "GSSAPI"))
        self.sasl_kwargs = sasl_kwargs

    def new_authenticator(self, host):
        return SaslAuthenticator(host, **self.sasl_kwargs)

    def __repr__(self):
        shown = {k: v for k, v in self.sasl_kwargs.items() if k != "password"}
        return "<SaslAuthProvider(%s, password=<hidden>)>" % ", ".join("%s=%r" % kv for kv in sorted(shown.items()))


class SaslAuthenticator(Authenticator):
    """One connection's SASL exchange through pure-sasl (or PLAIN built in)."""

    def __init__(self, host, service, mechanism="GSSAPI", **sasl_kwargs):
        _check_mechanism(mechanism)
        if SASLClient is not None:
            self.sasl = SASLClient(host, service, mechanism, **sasl_kwargs)
        else:
            self.sasl = _Plain(**sasl_kwargs)

    def initial_response(self):
        return self.sasl.process()

    def evaluate_challenge(self, challenge):
        return self.sasl.process(challenge)

    def __repr__(self):
        return "<SaslAuthenticator(mechanism=%r)>" % (getattr(self.sasl, "mechanism", "PLAIN"),)


class _Plain:
    """SASL PLAIN (RFC 4616), pure-sasl's ``process()`` interface."""

    mechanism = "PLAIN"

    def __init__(self, username=None, password=None, identity="", qops=None, **ignored):
        if ignored:
            raise TypeError("unexpected SASL PLAIN arguments: %s" % ", ".join(sorted(ignored)))
        if username is None or password is None:
            raise ValueError("SASL PLAIN needs username and password")
        self._message = b"\x00".join(str(x).encode() for x in (identity or "", username, password))

    def process(self, challenge=None):
        return self._message

    def __repr__(self):
        return "<SASL PLAIN>"


class DSEGSSAPIAuthProvider(AuthProvider):
    """DSE's Kerberos provider: not supported (the engine does not name the node a
    connection authenticates to, which GSSAPI needs)."""

    def __init__(self, service="dse", qops=("auth",), resolve_host_name=True, **properties):
        _check_mechanism("GSSAPI")
