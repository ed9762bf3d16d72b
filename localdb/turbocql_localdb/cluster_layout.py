"""A local cluster's layout: its nodes' addresses, datacenters, racks and JMX ports, its directory.

Pure (nothing runs, nothing is written): :func:`node_addresses` (consecutive loopback
addresses, validated), :func:`split_datacenters` (each node's datacenter and rack),
:func:`jmx_port_for` and :func:`cluster_dir`, with the layout's defaults. :mod:`.cluster`
re-exports every name (``localdb.X`` too).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from .node import DEFAULT_PORT, EXIT_USAGE, LocalDBError, cache_base

DEFAULT_CLUSTER_NODES = 3
# Measured here: three nodes with 768 MB of heap each start in about 40 s and fit beside
# a single 1-2 GB node in 24 GB.
DEFAULT_CLUSTER_HEAP = "768M"
DEFAULT_FIRST_ADDRESS = "127.0.0.1"
# A node's JMX port (local only, on 127.0.0.1) is JMX_PORT_BASE + the last byte of its address.
JMX_PORT_BASE = 7200


def cluster_dir(first_address: str = DEFAULT_FIRST_ADDRESS, port: int = DEFAULT_PORT) -> Path:
    """The default base directory of a cluster: ``<cache>/cluster-<first address>``.

    ``<cache>`` is ``$XDG_CACHE_HOME/turbocql/localdb`` (``~/.cache/...``); a native port
    other than 9042 adds ``-<port>``."""
    name = f"cluster-{first_address}" if port == DEFAULT_PORT else f"cluster-{first_address}-{port}"
    return cache_base() / name


def jmx_port_for(address: str) -> int:
    """The JMX port of the node at ``address``: 7200 + the address's last byte."""
    return JMX_PORT_BASE + int(address.rsplit(".", 1)[1])


def node_addresses(first_address: str, nodes: int) -> list[str]:
    """``nodes`` consecutive loopback addresses from ``first_address`` (validated)."""
    try:
        first = ipaddress.IPv4Address(first_address)
    except ValueError:
        raise LocalDBError(f"invalid IPv4 address {first_address!r} for --first-address", EXIT_USAGE) from None
    if not first.is_loopback:
        raise LocalDBError(
            f"--first-address {first_address} is not a loopback address: a local cluster's nodes "
            "listen on 127.x.y.z (e.g. 127.0.0.11)",
            EXIT_USAGE,
        )
    last_byte = int(first) & 0xFF
    if last_byte < 1 or last_byte + nodes - 1 > 254:
        prefix = first_address.rsplit(".", 1)[0]
        raise LocalDBError(
            f"address out of range: {nodes} node(s) from {first_address} would need "
            f"{first_address}..{prefix}.{last_byte + nodes - 1}; the addresses must stay within "
            f"{prefix}.1-254 (pick a lower --first-address)",
            EXIT_USAGE,
        )
    return [str(first + i) for i in range(nodes)]


def split_datacenters(nodes: int, dcs: int = 1, racks: int = 1) -> list[tuple[str, str]]:
    """The (datacenter, rack) of each node, in node order.

    Datacenters dc1..dcD hold contiguous blocks of nodes, the earlier ones one node more when
    ``nodes`` is not a multiple of ``dcs`` (3 nodes, 2 DCs: dc1 = node1, node2; dc2 = node3);
    racks rack1..rackR go round-robin within each datacenter."""
    _check_counts(nodes, dcs, racks)
    out = []
    for dc in range(dcs):
        size = nodes // dcs + (1 if dc < nodes % dcs else 0)
        out += [(f"dc{dc + 1}", f"rack{i % racks + 1}") for i in range(size)]
    return out


def _check_counts(nodes: int, dcs: int, racks: int) -> None:
    for what, value, option in (
        ("nodes", nodes, "--nodes"),
        ("datacenters", dcs, "--dcs"),
        ("racks", racks, "--racks"),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise LocalDBError(f"invalid number of {what} {value!r} ({option}): at least 1", EXIT_USAGE)
    if dcs > nodes:
        raise LocalDBError(
            f"{dcs} datacenters need at least {dcs} nodes, not {nodes} (--dcs must not exceed --nodes)", EXIT_USAGE
        )
