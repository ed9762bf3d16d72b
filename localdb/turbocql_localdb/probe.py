"""Is a CQL server there? The native protocol probe and the port checks.

:func:`cql_answers` sends OPTIONS (protocol v4) and expects SUPPORTED; :func:`wait_for_cql`
polls it; :func:`cql_login_ok` logs in with PasswordAuthenticator. Each speaks TLS when given an
``ssl_context`` (a TLS node's: ``node.ssl_context()``). :func:`port_in_use` and
:func:`check_ports_free` tell whether a node's ports are taken before java starts.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import ssl
import struct
import time
from collections.abc import Iterator

from .node import DEFAULT_TIMEOUT, EXIT_USAGE, LocalDBError, Node

_OPCODE_ERROR = 0x00
_OPCODE_STARTUP = 0x01
_OPCODE_READY = 0x02
_OPCODE_AUTHENTICATE = 0x03
_OPCODE_OPTIONS = 0x05
_OPCODE_SUPPORTED = 0x06
_OPCODE_AUTH_RESPONSE = 0x0F
_OPCODE_AUTH_SUCCESS = 0x10


def _frame(opcode: int, body: bytes = b"", stream: int = 0) -> bytes:
    return struct.pack(">BBhBi", 0x04, 0, stream, opcode, len(body)) + body


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return buf


def _request(sock: socket.socket, opcode: int, body: bytes = b"") -> tuple[int, bytes]:
    sock.sendall(_frame(opcode, body))
    header = _recv_exact(sock, 9)
    version, _flags, _stream, op, length = struct.unpack(">BBhBi", header)
    if not version & 0x80 or length < 0 or length > 1 << 20:
        raise ConnectionError("not a CQL response")
    return op, _recv_exact(sock, length)


@contextlib.contextmanager
def _connect(host: str, port: int, timeout: float, ssl_context: ssl.SSLContext | None) -> Iterator[socket.socket]:
    """A connection to host:port, over TLS (server name ``host``) when ``ssl_context`` is given."""
    with socket.create_connection((host, port), timeout=timeout) as raw:
        raw.settimeout(timeout)
        if ssl_context is None:
            yield raw
            return
        with ssl_context.wrap_socket(raw, server_hostname=host) as tls:
            yield tls


def cql_answers(host: str, port: int, timeout: float = 2.0, *, ssl_context: ssl.SSLContext | None = None) -> bool:
    """True if a CQL server at host:port answers OPTIONS (v4) with SUPPORTED.

    ``ssl_context``: speak TLS (a node started with ``tls=True``: ``node.ssl_context()``)."""
    try:
        with _connect(host, port, timeout, ssl_context) as sock:
            op, _ = _request(sock, _OPCODE_OPTIONS)
            return op == _OPCODE_SUPPORTED
    except (OSError, ConnectionError, struct.error):  # ssl.SSLError is an OSError
        return False


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def cql_login_ok(
    host: str,
    port: int,
    user: str = "cassandra",
    password: str = "cassandra",
    timeout: float = 5.0,
    *,
    ssl_context: ssl.SSLContext | None = None,
) -> bool:
    """True if STARTUP + PasswordAuthenticator login with user/password succeeds."""
    try:
        with _connect(host, port, timeout, ssl_context) as sock:
            startup = struct.pack(">H", 1) + _string("CQL_VERSION") + _string("3.0.0")
            op, _ = _request(sock, _OPCODE_STARTUP, startup)
            if op == _OPCODE_READY:
                return True
            if op != _OPCODE_AUTHENTICATE:
                return False
            token = b"\0" + user.encode() + b"\0" + password.encode()
            op, _ = _request(sock, _OPCODE_AUTH_RESPONSE, struct.pack(">i", len(token)) + token)
            return op == _OPCODE_AUTH_SUCCESS
    except (OSError, ConnectionError, struct.error):
        return False


def wait_for_cql(
    host: str,
    port: int,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    alive=None,
    ssl_context: ssl.SSLContext | None = None,
) -> bool:
    """Poll until CQL answers at host:port (True); False after ``timeout`` seconds.

    ``alive``, if given, is a callable polled meanwhile: once it returns False
    (e.g. the server process died) the wait ends with False. ``ssl_context``: over TLS.
    """
    deadline = time.monotonic() + timeout
    while True:
        probe_timeout = min(2.0, max(0.1, deadline - time.monotonic()))
        if cql_answers(host, port, timeout=probe_timeout, ssl_context=ssl_context):
            return True
        if alive is not None and not alive():
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


def port_in_use(address: str, port: int) -> bool:
    """True if ``address:port`` cannot be bound (something listens there)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise LocalDBError(f"cannot use {address}:{port}: {e}", EXIT_USAGE) from None
    return False


def check_ports_free(node: Node) -> None:
    """Raise a LocalDBError naming the port if a port of ``node`` is taken.

    The native and storage ports on the node's address, and its JMX port (a cluster's
    nodes) on 127.0.0.1, where Cassandra binds local-only JMX."""
    checks = [
        ("native CQL port", node.address, node.port, "--port"),
        ("storage port", node.address, node.storage_port, "--storage-port"),
    ]
    if node.jmx_port is not None:
        checks.append(("JMX port", "127.0.0.1", node.jmx_port, "--first-address"))
    for what, address, port, option in checks:
        if port_in_use(address, port):
            raise LocalDBError(
                f"port {port} on {address} ({what}) is already in use by another process "
                f"(not the localdb node in {node.dir}); stop it or pick another {option}",
                EXIT_USAGE,
            )
