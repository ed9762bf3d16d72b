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
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .node import EXIT_FAILED, EXIT_USAGE, LocalDBError, _locked, _tail, cache_base
from .probe import port_in_use

TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2"
# Pinned: the Go module proxy serves v2.3.0 and v2.5.0 here; v2.5.0 has every toxic used below.
TOXIPROXY_VERSION = "v2.5.0"
DEFAULT_API_HOST = "127.0.0.1"
DEFAULT_API_PORT = 8475
GO_FALLBACK = "/usr/local/go/bin/go"
BUILD_TIMEOUT = 900.0
START_TIMEOUT = 30.0

UPSTREAM = "upstream"
DOWNSTREAM = "downstream"
STREAMS = (UPSTREAM, DOWNSTREAM)

# The attributes of each toxic type (toxiproxy v2.5.0, toxics/*.go), all integers.
TOXIC_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "latency": ("latency", "jitter"),
    "bandwidth": ("rate",),
    "slow_close": ("delay",),
    "timeout": ("timeout",),
    "reset_peer": ("timeout",),
    "limit_data": ("bytes",),
    "slicer": ("average_size", "size_variation", "delay"),
}


class ToxiproxyError(LocalDBError):
    """A request to toxiproxy's API failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message, EXIT_FAILED)
        self.status = status


# --------------------------------------------------------------------------
# Validation and request bodies (pure)


def split_address(address: str) -> tuple[str, int]:
    """``("host", port)`` of ``"host:port"`` or ``"[v6]:port"``; ValueError if malformed."""
    if not isinstance(address, str):
        raise ValueError(f"an address is a 'host:port' string, not {address!r}")
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ValueError(f"{address!r} is not 'host:port'")
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError(f"{address!r} is not 'host:port'")
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{address!r}: write an IPv6 address as '[addr]:port'")
    port = int(port_text)
    if not 0 <= port <= 65535:
        raise ValueError(f"{address!r}: port {port} is out of range")
    return host, port


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(listen: str) -> str:
    """``listen`` if it is a loopback ``host:port``; ValueError otherwise (never expose a proxy)."""
    host, _port = split_address(listen)
    if not is_loopback(host):
        raise ValueError(f"a proxy listens on a loopback address only (127.0.0.0/8, ::1, localhost), not {listen!r}")
    return listen


def _check_name(kind: str, name: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or name.strip() != name:
        raise ValueError(f"a {kind} name is a non-empty string without '/' or surrounding spaces, not {name!r}")
    return name


def proxy_body(name: str, listen: str, upstream: str, enabled: bool = True) -> dict[str, Any]:
    """The JSON body of ``POST /proxies`` (checked: loopback ``listen``, ``host:port`` upstream)."""
    _check_name("proxy", name)
    check_listen(listen)
    split_address(upstream)
    return {"name": name, "listen": listen, "upstream": upstream, "enabled": bool(enabled)}


def _check_toxicity(toxicity: float) -> float:
    if isinstance(toxicity, bool) or not isinstance(toxicity, (int, float)) or not 0.0 <= toxicity <= 1.0:
        raise ValueError(f"toxicity is a probability between 0 and 1, not {toxicity!r}")
    return float(toxicity)


def _check_attributes(toxic_type: str, attributes: Mapping[str, Any]) -> dict[str, int]:
    allowed = TOXIC_ATTRIBUTES[toxic_type]
    out = {}
    for key, value in attributes.items():
        if key not in allowed:
            raise ValueError(f"a {toxic_type} toxic has the attributes {', '.join(allowed)}, not {key!r}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{toxic_type} toxic: {key} is a non-negative integer, not {value!r}")
        out[key] = value
    return out


def toxic_body(
    toxic_type: str,
    stream: str = DOWNSTREAM,
    toxicity: float = 1.0,
    name: str | None = None,
    attributes: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /proxies/{proxy}/toxics``; the name defaults to toxiproxy's
    own ``<type>_<stream>``."""
    if toxic_type not in TOXIC_ATTRIBUTES:
        raise ValueError(f"unknown toxic type {toxic_type!r} (known: {', '.join(TOXIC_ATTRIBUTES)})")
    if stream not in STREAMS:
        raise ValueError(f"a toxic's stream is 'upstream' or 'downstream', not {stream!r}")
    return {
        "name": _check_name("toxic", name) if name is not None else f"{toxic_type}_{stream}",
        "type": toxic_type,
        "stream": stream,
        "toxicity": _check_toxicity(toxicity),
        "attributes": _check_attributes(toxic_type, attributes or {}),
    }


def toxic_update_body(
    toxic_type: str, toxicity: float | None = None, attributes: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON body of ``POST /proxies/{proxy}/toxics/{toxic}``: what changes (toxiproxy keeps
    the attributes and the toxicity left out)."""
    if toxic_type not in TOXIC_ATTRIBUTES:
        raise ValueError(f"unknown toxic type {toxic_type!r}")
    body: dict[str, Any] = {"attributes": _check_attributes(toxic_type, attributes or {})}
    if toxicity is not None:
        body["toxicity"] = _check_toxicity(toxicity)
    return body


def node_proxy_name(address: str, prefix: str = "cassandra") -> str:
    """The name of the proxy of the node at ``address``: ``cassandra_127.0.0.11``."""
    return f"{prefix}_{address}"


# --------------------------------------------------------------------------
# The client


class Toxiproxy:
    """A client of the toxiproxy server whose API is at ``host:port`` (loopback only)."""

    def __init__(self, host: str = DEFAULT_API_HOST, port: int = DEFAULT_API_PORT, timeout: float = 10.0):
        if not is_loopback(host):
            raise ValueError(f"toxiproxy's API is reached on a loopback address only, not {host!r}")
        self.host = host
        self.port = port
        self.timeout = timeout
        self.base_url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        # No environment proxy (http_proxy) between us and a loopback server.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __repr__(self) -> str:
        return f"Toxiproxy({self.base_url})"

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One API call: the decoded JSON answer (None when empty). Raises ToxiproxyError."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            with e:  # the error holds the answer's connection (Python 3.14 warns if left to the GC)
                text = e.read().decode(errors="replace").strip()
            with contextlib.suppress(ValueError, AttributeError):
                text = json.loads(text).get("error", text)
            raise ToxiproxyError(f"toxiproxy {method} {path}: {e.code} {text}", e.code) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ToxiproxyError(f"toxiproxy at {self.base_url} does not answer ({reason})") from None
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:  # GET /version answers text/plain
            return raw.decode(errors="replace").strip()

    def version(self) -> str:
        """The server's version (``GET /version``; "git" for a server built by ``go install``)."""
        answer = self.request("GET", "/version")
        return str(answer.get("version", "")) if isinstance(answer, dict) else str(answer)

    def is_up(self) -> bool:
        """True if a toxiproxy answers there."""
        try:
            self.version()
        except ToxiproxyError:
            return False
        return True

    def wait_up(self, timeout: float, alive=None) -> bool:
        """Polls until the server answers (True), ``timeout`` passes or ``alive()`` is false."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.is_up():
                return True
            if alive is not None and not alive():
                return False
            time.sleep(0.05)
        return self.is_up()

    def proxies(self) -> dict[str, Proxy]:
        """Every proxy of the server, by name."""
        answer = self.request("GET", "/proxies") or {}
        return {name: Proxy(self, fields) for name, fields in answer.items()}

    def get_proxy(self, name: str) -> Proxy:
        return Proxy(self, self.request("GET", f"/proxies/{_check_name('proxy', name)}"))

    def create_proxy(self, name: str, listen: str, upstream: str, enabled: bool = True, replace: bool = False) -> Proxy:
        """Creates the proxy ``name``: ``listen`` (a loopback ``host:port``) to ``upstream``.
        ``replace``: delete a proxy of that name first (else it is a 409 ToxiproxyError)."""
        body = proxy_body(name, listen, upstream, enabled)
        if replace:
            self.delete_proxy(name, missing_ok=True)
        return Proxy(self, self.request("POST", "/proxies", body))

    def delete_proxy(self, name: str, missing_ok: bool = False) -> None:
        try:
            self.request("DELETE", f"/proxies/{_check_name('proxy', name)}")
        except ToxiproxyError as e:
            if not (missing_ok and e.status == 404):
                raise

    def reset(self) -> None:
        """Every proxy of the server enabled, every toxic removed (``POST /reset``)."""
        self.request("POST", "/reset")

    def proxy_nodes(
        self,
        addresses: Sequence[str],
        listen_port: int = 19042,
        upstream_port: int = 9042,
        prefix: str = "cassandra",
        replace: bool = True,
    ) -> list[Proxy]:
        """One proxy per node, each on the node's own (loopback) address: ``A:listen_port ->
        A:upstream_port`` (the crate reaches peers at their IP with the contact port)."""
        return [
            self.create_proxy(
                node_proxy_name(address, prefix),
                listen=f"{address}:{listen_port}",
                upstream=f"{address}:{upstream_port}",
                replace=replace,
            )
            for address in addresses
        ]


class Proxy:
    """One proxy of a toxiproxy server (as last read: ``name``, ``listen``, ``upstream``,
    ``enabled``); its methods call the API."""

    def __init__(self, api: Toxiproxy, fields: Mapping[str, Any]):
        self.api = api
        self.name: str = fields["name"]
        self._load(fields)

    def _load(self, fields: Mapping[str, Any]) -> Proxy:
        self.listen: str = fields.get("listen", "")
        self.upstream: str = fields.get("upstream", "")
        self.enabled: bool = bool(fields.get("enabled", True))
        return self

    def __repr__(self) -> str:
        state = "" if self.enabled else ", disabled"
        return f"Proxy({self.name!r}, {self.listen} -> {self.upstream}{state})"

    @property
    def _path(self) -> str:
        return f"/proxies/{self.name}"

    @property
    def listen_address(self) -> tuple[str, int]:
        """``(host, port)`` the proxy listens on (the port toxiproxy chose, for port 0)."""
        return split_address(self.listen)

    def _update(self, **fields: Any) -> Proxy:
        return self._load(self.api.request("POST", self._path, fields))

    def refresh(self) -> Proxy:
        """Reads the proxy's fields again."""
        return self._load(self.api.request("GET", self._path))

    def enable(self) -> Proxy:
        return self._update(enabled=True)

    def disable(self) -> Proxy:
        """Takes the proxy down: its connections are closed, new ones refused."""
        return self._update(enabled=False)

    def delete(self) -> None:
        self.api.delete_proxy(self.name, missing_ok=True)

    def toxics(self) -> list[dict[str, Any]]:
        return self.api.request("GET", self._path + "/toxics") or []

    def add_toxic(
        self, toxic_type: str, stream: str = DOWNSTREAM, toxicity: float = 1.0, name: str | None = None, **attributes
    ) -> str:
        """Adds a toxic; returns its name (``<type>_<stream>`` unless ``name`` is given)."""
        body = toxic_body(toxic_type, stream, toxicity, name, attributes)
        answer = self.api.request("POST", self._path + "/toxics", body)
        return answer["name"] if isinstance(answer, dict) and "name" in answer else body["name"]

    def update_toxic(self, name: str, toxicity: float | None = None, **attributes) -> dict[str, Any]:
        """Changes a toxic's attributes and/or toxicity; the others keep their values."""
        path = f"{self._path}/toxics/{_check_name('toxic', name)}"
        current = self.api.request("GET", path)
        return self.api.request("POST", path, toxic_update_body(current["type"], toxicity, attributes))

    def remove_toxic(self, name: str, missing_ok: bool = False) -> None:
        try:
            self.api.request("DELETE", f"{self._path}/toxics/{_check_name('toxic', name)}")
        except ToxiproxyError as e:
            if not (missing_ok and e.status == 404):
                raise

    def reset(self) -> Proxy:
        """This proxy alone back to normal: every toxic removed, enabled."""
        for toxic in self.toxics():
            self.remove_toxic(toxic["name"], missing_ok=True)
        return self if self.refresh().enabled else self.enable()

    @contextlib.contextmanager
    def toxic(self, toxic_type: str, stream: str = DOWNSTREAM, toxicity: float = 1.0, **attributes) -> Iterator[str]:
        """A toxic for the duration of the block (its name is yielded)."""
        name = self.add_toxic(toxic_type, stream, toxicity, **attributes)
        try:
            yield name
        finally:
            self.remove_toxic(name, missing_ok=True)

    # One method per toxic type, with its attributes spelled out.

    def latency(self, latency_ms: int, jitter: int = 0, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """Every chunk delayed by ``latency_ms`` +/- ``jitter`` ms (in order)."""
        return self.add_toxic("latency", stream, toxicity, latency=latency_ms, jitter=jitter)

    def bandwidth(self, rate_kb: int, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """At most ``rate_kb`` KB/s."""
        return self.add_toxic("bandwidth", stream, toxicity, rate=rate_kb)

    def slow_close(self, delay: int, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """The close of the connection delayed by ``delay`` ms."""
        return self.add_toxic("slow_close", stream, toxicity, delay=delay)

    def timeout(self, timeout: int = 0, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """No data passes; the connection is closed after ``timeout`` ms (0: never, data held)."""
        return self.add_toxic("timeout", stream, toxicity, timeout=timeout)

    def reset_peer(self, timeout: int = 0, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """On the next data (after ``timeout`` ms), the connection is reset (TCP RST)."""
        return self.add_toxic("reset_peer", stream, toxicity, timeout=timeout)

    def limit_data(self, nbytes: int, stream: str = DOWNSTREAM, toxicity: float = 1.0) -> str:
        """``nbytes`` more bytes pass (counted from now on open connections), then it is closed."""
        return self.add_toxic("limit_data", stream, toxicity, bytes=nbytes)

    def slicer(
        self,
        average_size: int,
        size_variation: int = 0,
        delay_us: int = 0,
        stream: str = DOWNSTREAM,
        toxicity: float = 1.0,
    ) -> str:
        """Data cut into chunks of ``average_size`` +/- ``size_variation`` bytes, ``delay_us`` apart."""
        return self.add_toxic(
            "slicer", stream, toxicity, average_size=average_size, size_variation=size_variation, delay=delay_us
        )


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
