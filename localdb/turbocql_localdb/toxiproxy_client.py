"""A client of toxiproxy's JSON API: :class:`Toxiproxy` (the server) and :class:`Proxy` (one proxy).

:class:`Toxiproxy` calls the API at ``host:port`` (loopback only; urllib, no dependency, no
environment proxy): the server's version, its proxies (create, get, delete, one per node with
:meth:`Toxiproxy.proxy_nodes`), ``reset``. :class:`Proxy` enables, disables, resets and deletes
one proxy, and adds, changes and removes its toxics (one method per toxic type, or
:meth:`Proxy.toxic` for the duration of a block). A failed call raises :class:`ToxiproxyError`
(a ``LocalDBError`` with the HTTP status). :mod:`.toxiproxy` re-exports every name: use
``toxiproxy.X``.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .node import EXIT_FAILED, LocalDBError
from .toxiproxy_requests import (
    DOWNSTREAM,
    _check_name,
    is_loopback,
    node_proxy_name,
    proxy_body,
    split_address,
    toxic_body,
    toxic_update_body,
)

DEFAULT_API_HOST = "127.0.0.1"
DEFAULT_API_PORT = 8475


class ToxiproxyError(LocalDBError):
    """A request to toxiproxy's API failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message, EXIT_FAILED)
        self.status = status


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
