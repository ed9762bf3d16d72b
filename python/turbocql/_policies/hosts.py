"""What policies and listeners say of a host: how far it is (``HostDistance``), the events of
its state (``HostStateListener``), and how its address is translated (the address
translators). Classic names of ``cassandra.policies``, re-exported by and published as
``turbocql.policies``.
"""

import socket


class HostDistance:
    """How "far" a host is from the client (classic constants)."""

    IGNORED = -1
    LOCAL = 0
    REMOTE = 1


class HostStateListener:
    """Told when hosts come up, go down, join or leave (``cluster.register_listener``).
    A subclass implements the four methods (the classic base raises, as here)."""

    def on_up(self, host):
        raise NotImplementedError()

    def on_down(self, host):
        raise NotImplementedError()

    def on_add(self, host):
        raise NotImplementedError()

    def on_remove(self, host):
        raise NotImplementedError()


class AddressTranslator:
    def translate(self, addr):
        raise NotImplementedError()


class IdentityTranslator(AddressTranslator):
    def translate(self, addr):
        return addr


class EC2MultiRegionTranslator(AddressTranslator):
    """Translates a node's public address to its private one by a reverse then a forward
    DNS lookup (for clients inside the same EC2 region)."""

    def translate(self, addr):
        family = socket.getaddrinfo(addr, 0, socket.AF_UNSPEC, socket.SOCK_STREAM)[0][0]
        name = socket.getfqdn(addr)
        for info in socket.getaddrinfo(name, 0, family, socket.SOCK_STREAM):
            try:
                return info[4][0]
            except Exception:  # try the next address
                continue
        return addr
