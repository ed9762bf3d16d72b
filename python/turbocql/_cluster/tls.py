"""TLS settings: the classic driver's ``ssl_context`` and ``ssl_options`` as the
``ssl.SSLContext`` (with ``server_hostname`` and the client certificate files) the engine
turns into its rustls context at connect (src/api/tls/mod.rs says what is honoured, and
how certificates are verified: by the context's own OpenSSL where it can be shared, else
by rustls against the CA certificates the context exposes).

``ssl_options`` alone builds a context as the classic driver does (``ca_certs``,
``certfile``/``keyfile``, ``cert_reqs``, ``check_hostname``, ``ssl_version``, ``ciphers``),
with one difference: ``cert_reqs`` is honoured as the verification mode (the classic driver
3.30 stores it in ``SSLContext.options`` instead, so it has no effect there). The files are
also handed to the engine, which reads them itself where the context's OpenSSL cannot be
shared.
"""

import socket
import ssl
import warnings
from typing import NamedTuple

from turbocql import _engine

# Keys that build a context (used only when no ssl_context is given).
_CONTEXT_KEYS = frozenset({"ssl_version", "cert_reqs", "check_hostname", "keyfile", "certfile", "ca_certs", "ciphers"})
# Keys the classic driver passes to SSLContext.wrap_socket.
_WRAP_KEYS = frozenset({"server_side", "do_handshake_on_connect", "suppress_ragged_eofs", "server_hostname"})


class TlsSettings(NamedTuple):
    context: ssl.SSLContext
    server_hostname: str | None
    # ssl_options' client certificate and key files (None with an ssl_context).
    certfile: str | None = None
    keyfile: str | None = None


def tls_settings(ssl_context, ssl_options):
    """The settings for the engine, or None for clear text; raises ``TypeError`` /
    ``ValueError`` for what cannot be honoured."""
    if ssl_context is None and not ssl_options:
        return None
    if ssl_options is not None and not isinstance(ssl_options, dict):
        raise TypeError("ssl_options must be a dict, not %s" % type(ssl_options).__name__)
    opts = dict(ssl_options or {})
    unknown = set(opts) - _CONTEXT_KEYS - _WRAP_KEYS
    if unknown:
        raise ValueError(
            "unknown ssl_options %s (known: %s)"
            % (", ".join(sorted(unknown)), ", ".join(sorted(_CONTEXT_KEYS | _WRAP_KEYS)))
        )
    if opts.get("server_side"):
        raise ValueError("ssl_options server_side=True: a driver connection is a TLS client")
    server_hostname = opts.get("server_hostname")
    if server_hostname is not None and not isinstance(server_hostname, str):
        raise TypeError("ssl_options['server_hostname'] must be a string")
    if ssl_context is not None:
        if not isinstance(ssl_context, ssl.SSLContext):
            raise TypeError("ssl_context must be an ssl.SSLContext, not %s" % type(ssl_context).__name__)
        ignored = sorted(set(opts) & _CONTEXT_KEYS)
        if ignored:
            raise ValueError(
                "ssl_options %s configure a context, but ssl_context is given: set them on the SSLContext "
                "(the classic driver ignores them in this case)" % ", ".join(ignored)
            )
        return TlsSettings(ssl_context, server_hostname)
    warnings.warn(
        "Using ssl_options without ssl_context is deprecated and will result in an error in the next major "
        "release. Please use ssl_context to prepare for that release.",
        DeprecationWarning,
        stacklevel=3,
    )
    return TlsSettings(
        _context_from_options(opts),
        server_hostname,
        str(opts["certfile"]) if opts.get("certfile") else None,
        str(opts["keyfile"]) if opts.get("keyfile") else None,
    )


def _context_from_options(opts):
    context = ssl.SSLContext(int(opts.get("ssl_version") or ssl.PROTOCOL_TLS_CLIENT))
    context.check_hostname = bool(opts.get("check_hostname", False))
    if opts.get("cert_reqs") is not None:
        context.verify_mode = ssl.VerifyMode(int(opts["cert_reqs"]))
    if opts.get("certfile"):
        context.load_cert_chain(opts["certfile"], opts.get("keyfile"))
    if opts.get("ca_certs"):
        context.load_verify_locations(opts["ca_certs"])
    if opts.get("ciphers"):
        context.set_ciphers(opts["ciphers"])
    return context


def load_lazy_cas(settings, contact_points, port, timeout):
    """Under the rustls verifier, the engine sees only the CA certificates the context's
    store holds (``get_ca_certs``), and OpenSSL loads those of a ``capath`` directory, or of
    the system's default directory after ``load_default_certs()``, only when a chain needs
    them. One handshake by Python's own ``ssl`` module with the context, to a contact point,
    makes OpenSSL load the ones the cluster's chain needs into the store, where the engine
    then finds them: nothing is trusted that the context does not trust.

    Returns ``{host:port: the ssl error}`` when the context rejects every contact point's
    certificate (the caller raises ``NoHostAvailable`` with it, in Python's own words, as the
    classic driver does), else ``{}`` (another failure, such as a node that does not answer,
    is left to the engine's connect to report)."""
    if settings is None or settings.context.verify_mode == ssl.CERT_NONE or _engine.tls_verifier()[0] != "rustls":
        return {}
    ctx = settings.context
    if ctx.verify_flags & (ssl.VERIFY_CRL_CHECK_LEAF | ssl.VERIFY_CRL_CHECK_CHAIN):
        return {}  # the engine refuses CRL checks under rustls, before any connection
    rejected = {}
    for host in contact_points:
        name = settings.server_hostname or (str(host) if ctx.check_hostname else None)
        try:
            with socket.create_connection((str(host), port), timeout=timeout) as sock:
                with ctx.wrap_socket(sock, server_hostname=name):
                    return {}
        except ssl.SSLCertVerificationError as e:
            rejected["%s:%d" % (host, port)] = e
        except (OSError, ValueError):
            continue
    return rejected
