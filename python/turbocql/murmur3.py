"""The Murmur3 hash of Cassandra's ``Murmur3Partitioner`` (classic ``cassandra.murmur3``).

``murmur3(data)`` is the engine's (native, what routing uses); ``_murmur3(data)`` is the
same hash in pure Python, kept as the classic module keeps its fallback: a reference to
check the native one against. Both give the first 64 bits of MurmurHash3 x64/128 with
seed 0 as Cassandra computes it, whose tail bytes are signed (Java bytes), as a signed int.
"""

import struct

from turbocql import _engine

_MASK = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F


def murmur3(data):
    """The token of a partition key's bytes (computed in the engine)."""
    return _engine.murmur3(bytes(data))


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _MASK


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    return k ^ (k >> 33)


def _mix_k1(k1):
    return (_rotl((k1 * _C1) & _MASK, 31) * _C2) & _MASK


def _mix_k2(k2):
    return (_rotl((k2 * _C2) & _MASK, 33) * _C1) & _MASK


def _murmur3(data):
    """``murmur3`` in pure Python (64-bit arithmetic done modulo 2**64)."""
    data = bytes(data)
    length = len(data)
    blocks = length // 16
    h1 = h2 = 0
    for k1, k2 in struct.iter_unpack("<QQ", data[: blocks * 16]):
        h1 ^= _mix_k1(k1)
        h1 = (_rotl(h1, 27) + h2) & _MASK
        h1 = (h1 * 5 + 0x52DCE729) & _MASK
        h2 ^= _mix_k2(k2)
        h2 = (_rotl(h2, 31) + h1) & _MASK
        h2 = (h2 * 5 + 0x38495AB5) & _MASK
    tail = data[blocks * 16 :]
    k1 = k2 = 0
    for i, byte in enumerate(tail):
        # Sign-extended, as Java widens a byte to a long.
        value = ((byte - 256 if byte > 127 else byte) << (8 * (i % 8))) & _MASK
        if i < 8:
            k1 ^= value
        else:
            k2 ^= value
    if len(tail) > 8:
        h2 ^= _mix_k2(k2)
    if tail:
        h1 ^= _mix_k1(k1)
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & _MASK
    h2 = (h2 + h1) & _MASK
    h1 = (_fmix(h1) + _fmix(h2)) & _MASK
    return h1 - (1 << 64) if h1 >> 63 else h1


__all__ = ["murmur3"]
