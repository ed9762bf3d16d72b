"""A fault-injecting TCP proxy for tests: Shopify's toxiproxy, built and driven from Python.

The server is built from source with Go the first time it is needed (:func:`ensure_server`:
``go install github.com/Shopify/toxiproxy/v2/cmd/server@<TOXIPROXY_VERSION>``, with GOBIN,
GOPATH, GOMODCACHE and GOCACHE under ``<localdb cache>/toxiproxy/``, i.e.
``$XDG_CACHE_HOME/turbocql/localdb/toxiproxy`` by default; the build cache is removed once the
binary is in place). Measured here (2 shared cores, empty caches): about 40 s, once; the
binary is then ``<cache>/toxiproxy/<version>/bin/server``. Go is found on PATH, else at
``/usr/local/go/bin/go``.

:func:`start_server` runs it with its HTTP API on 127.0.0.1:8475 (:data:`DEFAULT_API_PORT`,
not toxiproxy's default 8474, so that a toxiproxy of the machine is left alone) and returns a
:class:`ToxiproxyServer` whose ``stop()`` ends it; :func:`find_server` returns a client of a
server already answering there. :class:`Toxiproxy` is a small client of its JSON API
(urllib, no dependency; checked against toxiproxy v2.5.0's README and ``api.go``)::

    from turbocql_localdb import toxiproxy

    server = toxiproxy.start_server()              # builds on first use; None-safe stop()
    api = server.client()                          # or toxiproxy.Toxiproxy(port=8475)
    proxy = api.create_proxy("node1", listen="127.0.0.1:19042", upstream="127.0.0.1:9042")
    proxy.latency(200, jitter=50)                  # downstream (server -> client) by default
    proxy.add_toxic("limit_data", stream="downstream", bytes=5000, toxicity=1.0)
    proxy.reset_peer(timeout=0); proxy.timeout(0); proxy.bandwidth(rate_kb=64)
    proxy.slow_close(delay=500); proxy.slicer(average_size=64, size_variation=32, delay_us=10)
    proxy.update_toxic("latency_downstream", latency=50)   # attributes and/or toxicity
    proxy.remove_toxic("latency_downstream"); proxy.toxics()
    with proxy.toxic("reset_peer", timeout=0): ...  # removed at the end of the block
    proxy.disable(); proxy.enable(); proxy.reset()  # reset: this proxy's toxics off, enabled
    proxy.delete(); api.reset()                     # reset(): every proxy of the server
    server.stop()

Proxies listen on loopback addresses only (127.0.0.0/8, ::1, ``localhost``): any other
``listen`` raises ``ValueError``, as does a non-loopback API host. A toxic's ``stream`` is
``"downstream"`` (server to client, the default) or ``"upstream"`` (client to server); its
``toxicity`` (0..1, default 1) is the probability that it applies to a connection. Toxics
added to a proxy apply to its open connections at once. Attributes (integers) by type:
``latency`` (``latency``, ``jitter``: ms), ``bandwidth`` (``rate``: KB/s), ``slow_close``
(``delay``: ms), ``timeout`` (``timeout``: ms; 0 holds the data until the toxic goes),
``reset_peer`` (``timeout``: ms, then a TCP RST), ``limit_data`` (``bytes``, then the
connection is closed), ``slicer`` (``average_size``, ``size_variation``: bytes; ``delay``: us).

A pitfall of toxiproxy 2.5.0: removing a toxic that holds data (``latency``, ``bandwidth``,
``slicer``) from a connection whose client has already closed it wedges the server (it tries to
flush each held chunk to the gone client for 5 s, holding the lock every API call needs, so the
API stops answering for minutes). Remove such toxics (``proxy.reset()``) while the client's
connections are open, i.e. before ``cluster.shutdown()``; a connection the client drops by
itself while such a toxic holds its data (say, a driver closing a connection it finds too
slow) sets the same trap for the toxic's removal.

The scylla crate under turbocql addresses the node it was given by the address it connected
to, and its peers by their own IP with the contact port: to put a cluster behind proxies,
run one proxy per node on that node's own address with one common port
(:meth:`Toxiproxy.proxy_nodes`: ``127.0.0.11:19042 -> 127.0.0.11:9042``, ...).

Failures of the API raise :class:`ToxiproxyError` (a ``LocalDBError`` with the HTTP status);
a missing Go or a failed build raise ``LocalDBError``.

This module builds and runs the server; the checks and JSON bodies of the API's requests are
in :mod:`.toxiproxy_requests`, the client (:class:`Toxiproxy`, :class:`Proxy`,
:class:`ToxiproxyError`) in :mod:`.toxiproxy_client`. Every name of both is re-exported here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from .node import EXIT_FAILED, EXIT_USAGE, LocalDBError, _locked, _tail, cache_base
from .probe import port_in_use
from .toxiproxy_client import (  # noqa: F401 - re-exported: toxiproxy's names stay importable from here
    DEFAULT_API_HOST,
    DEFAULT_API_PORT,
    Proxy,
    Toxiproxy,
    ToxiproxyError,
)
from .toxiproxy_requests import (  # noqa: F401 - re-exported: toxiproxy's names stay importable from here
    DOWNSTREAM,
    STREAMS,
    TOXIC_ATTRIBUTES,
    UPSTREAM,
    check_listen,
    is_loopback,
    node_proxy_name,
    proxy_body,
    split_address,
    toxic_body,
    toxic_update_body,
)

TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2"
# Pinned: the Go module proxy serves v2.3.0 and v2.5.0 here; v2.5.0 has every toxic used below.
TOXIPROXY_VERSION = "v2.5.0"
GO_FALLBACK = "/usr/local/go/bin/go"
BUILD_TIMEOUT = 900.0
START_TIMEOUT = 30.0


# --------------------------------------------------------------------------
# Building and running the server


def toxiproxy_dir() -> Path:
    """``<localdb cache>/toxiproxy``: the Go workspace, the binaries and the server logs."""
    return cache_base() / "toxiproxy"


def server_binary(version: str = TOXIPROXY_VERSION) -> Path:
    """Where the server binary of ``version`` is (``go install`` names it ``server``)."""
    return toxiproxy_dir() / version / "bin" / "server"


def find_go() -> str:
    """The ``go`` command: on PATH, else /usr/local/go/bin/go. LocalDBError if neither."""
    found = shutil.which("go")
    if found:
        return found
    if os.access(GO_FALLBACK, os.X_OK):
        return GO_FALLBACK
    raise LocalDBError(
        "toxiproxy is built with Go, which was not found (not on PATH, not at "
        f"{GO_FALLBACK}); install Go 1.17 or later, or put a toxiproxy server at {server_binary()}",
        EXIT_USAGE,
    )


def build_command(go: str, version: str = TOXIPROXY_VERSION) -> list[str]:
    return [go, "install", f"{TOXIPROXY_MODULE}/cmd/server@{version}"]


def build_env(version: str = TOXIPROXY_VERSION, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of ``go install``: Go's directories under :func:`toxiproxy_dir` (the
    binary first in a staging directory), no cgo (no C compiler needed), the local toolchain."""
    root = toxiproxy_dir()
    env = dict(os.environ if base is None else base)
    env.update(
        GOPATH=str(root / "go"),
        GOMODCACHE=str(root / "go" / "pkg" / "mod"),
        GOCACHE=str(root / "go" / "build-cache"),
        GOBIN=str(root / version / "bin.partial"),
        CGO_ENABLED="0",
        GOTOOLCHAIN="local",
        # Writable module files, so that the cache can be removed with rm -r.
        GOFLAGS=(env.get("GOFLAGS", "") + " -modcacherw").strip(),
    )
    return env


def ensure_server(version: str = TOXIPROXY_VERSION, out=None, timeout: float = BUILD_TIMEOUT) -> Path:
    """The server binary of ``version``, built with ``go install`` if it is not there yet.

    Concurrent callers wait for one build (a lock file). The binary appears atomically
    (built in ``bin.partial/``, then renamed); Go's build cache is removed afterwards (the
    module cache is kept). ``out``: a ``print``-like callable for progress messages."""
    binary = server_binary(version)
    if binary.exists():
        return binary
    say = out or (lambda *a, **k: None)
    with _locked(toxiproxy_dir() / ".build.lock"):
        if binary.exists():
            return binary
        go = find_go()
        env = build_env(version)
        staging = Path(env["GOBIN"])
        toxiproxy_dir().mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        say(f"building toxiproxy {version} with {go} (once; about a minute)...")
        t0 = time.monotonic()
        try:
            res = subprocess.run(
                build_command(go, version),
                env=env,
                cwd=toxiproxy_dir(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise LocalDBError(f"building toxiproxy {version} took more than {timeout:.0f} s", EXIT_FAILED) from None
        built = staging / "server"
        if res.returncode != 0 or not built.exists():
            raise LocalDBError(
                f"`{' '.join(build_command(go, version))}` failed (exit {res.returncode}):\n"
                + "\n".join((res.stderr or res.stdout).strip().splitlines()[-20:]),
                EXIT_FAILED,
            )
        binary.parent.mkdir(parents=True, exist_ok=True)
        os.replace(built, binary)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(env["GOCACHE"], ignore_errors=True)
        say(f"built {binary} in {time.monotonic() - t0:.0f} s")
    return binary


class ToxiproxyServer:
    """A toxiproxy server this process started (:func:`start_server`)."""

    def __init__(self, process: subprocess.Popen, host: str, port: int, log_path: Path):
        self.process = process
        self.host = host
        self.port = port
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    def __repr__(self) -> str:
        return f"ToxiproxyServer(pid {self.pid}, {self.host}:{self.port})"

    def client(self, timeout: float = 10.0) -> Toxiproxy:
        return Toxiproxy(self.host, self.port, timeout)

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the server (SIGTERM, then SIGKILL after ``timeout`` s); its proxies go with it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        else:
            self.process.wait()


def server_command(binary: Path, host: str, port: int) -> list[str]:
    if not is_loopback(host):
        raise ValueError(f"toxiproxy's API listens on a loopback address only, not {host!r}")
    return [str(binary), "-host", host, "-port", str(port)]


def find_server(host: str = DEFAULT_API_HOST, port: int = DEFAULT_API_PORT) -> Toxiproxy | None:
    """A client of the toxiproxy answering at ``host:port``, or None."""
    client = Toxiproxy(host, port)
    return client if client.is_up() else None


def start_server(
    host: str = DEFAULT_API_HOST,
    port: int = DEFAULT_API_PORT,
    version: str = TOXIPROXY_VERSION,
    timeout: float = START_TIMEOUT,
    out=None,
) -> ToxiproxyServer:
    """Builds (:func:`ensure_server`) and starts a toxiproxy server with its API on
    ``host:port`` (loopback), and waits until it answers. Its log (level warn) is
    ``<cache>/toxiproxy/server-<port>.log``. LocalDBError if the port is taken or it dies."""
    cmd = server_command(server_binary(version), host, port)  # checks the host first
    if port_in_use(host, port):
        raise LocalDBError(f"port {port} on {host} is already in use: cannot start toxiproxy there", EXIT_USAGE)
    cmd[0] = str(ensure_server(version, out=out))
    log_path = toxiproxy_dir() / f"server-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, LOG_LEVEL=os.environ.get("TOXIPROXY_LOG_LEVEL", "warn"))
    with open(log_path, "ab") as log:
        log.write(f"\n=== toxiproxy {version} start {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n".encode())
        log.flush()
        process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = ToxiproxyServer(process, host, port, log_path)
    try:
        up = server.client().wait_up(timeout, alive=server.running)
    except BaseException:
        server.stop()
        raise
    if not up:
        server.stop()
        raise LocalDBError(
            f"toxiproxy did not answer on {host}:{port} within {timeout:.0f} s:\n{_tail(log_path, 20)}", EXIT_FAILED
        )
    return server
