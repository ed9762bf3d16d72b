"""The requests of toxiproxy's JSON API, checked before they are sent (pure: no I/O).

Addresses (:func:`split_address`, :func:`is_loopback`, :func:`check_listen`: a proxy listens on
a loopback address only), the toxic types and their attributes (:data:`TOXIC_ATTRIBUTES`), the
streams (:data:`UPSTREAM`, :data:`DOWNSTREAM`) and the JSON bodies of the calls that create a
proxy or create or change a toxic (:func:`proxy_body`, :func:`toxic_body`,
:func:`toxic_update_body`). Bad arguments raise ``ValueError``. :mod:`.toxiproxy` re-exports
every name: use ``toxiproxy.X``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

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
