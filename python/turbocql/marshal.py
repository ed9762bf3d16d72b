"""Byte packing helpers under the classic driver's names (``cassandra.marshal``).

Fixed-size integers and floats in network byte order (``int32_pack`` / ``int32_unpack``,
...), CQL ``varint`` (``varint_pack`` / ``varint_unpack``), Cassandra's unsigned variable
length integers and the zig-zag encoding ``duration`` values use (``uvint_pack``,
``vints_pack``, ...), and the ``struct`` formats of geometric points and circles. The engine
encodes requests itself; these serve :mod:`turbocql.cqltypes` and classic code that packs
values by hand (custom routing keys, for one).
"""

import struct


def _pair(fmt):
    s = struct.Struct(fmt)
    return s.pack, lambda data: s.unpack(data)[0]


int64_pack, int64_unpack = _pair(">q")
int32_pack, int32_unpack = _pair(">i")
int16_pack, int16_unpack = _pair(">h")
int8_pack, int8_unpack = _pair(">b")
uint64_pack, uint64_unpack = _pair(">Q")
uint32_pack, uint32_unpack = _pair(">I")
uint32_le_pack, uint32_le_unpack = _pair("<I")
uint16_pack, uint16_unpack = _pair(">H")
uint8_pack, uint8_unpack = _pair(">B")
float_pack, float_unpack = _pair(">f")
double_pack, double_unpack = _pair(">d")

point_be = struct.Struct(">dd")
point_le = struct.Struct("<dd")
circle_be = struct.Struct(">ddd")
circle_le = struct.Struct("<ddd")


def varint_unpack(term):
    """A CQL ``varint`` (big-endian two's complement, any length) as an int."""
    return int.from_bytes(term, "big", signed=True)


def bit_length(n):
    """The number of bits of ``n`` (without its sign)."""
    return int(n).bit_length()


def varint_pack(big):
    """An int as a CQL ``varint``: the shortest big-endian two's complement."""
    length = (big + (big < 0)).bit_length() // 8 + 1
    return big.to_bytes(length, "big", signed=True)


def encode_zig_zag(n):
    """A signed 64-bit int as the unsigned zig-zag value (0, -1, 1, -2 -> 0, 1, 2, 3)."""
    return (n << 1) ^ (n >> 63)


def decode_zig_zag(n):
    """The inverse of :func:`encode_zig_zag`."""
    return (n >> 1) ^ -(n & 1)


def uvint_pack(val):
    """An unsigned int (up to 64 bits) as Cassandra's variable-length integer: as many
    leading one bits in the first byte as bytes follow it, the value big-endian after."""
    if val < 0x80:
        return bytes((val,))
    extra = 1
    while extra < 8 and val >= 1 << (7 + 7 * extra):
        extra += 1
    data = bytearray(val.to_bytes(extra + 1, "big"))
    data[0] |= (0xFF << (8 - extra)) & 0xFF
    return bytes(data)


def uvint_unpack(bytes):  # the classic parameter name
    """(value, bytes used) of the variable-length integer at the start of ``bytes``."""
    first = bytes[0]
    extra = 0
    while extra < 8 and first & (0x80 >> extra):
        extra += 1
    value = first & (0xFF >> extra) if extra < 8 else 0
    for i in range(1, extra + 1):
        value = (value << 8) | bytes[i]
    return value, extra + 1


def vints_pack(values):
    """Signed ints, each zig-zag encoded then packed by :func:`uvint_pack`."""
    return b"".join(uvint_pack(encode_zig_zag(v)) for v in values)


def vints_unpack(term):
    """The tuple of signed ints :func:`vints_pack` packed into ``term``."""
    values = []
    pos = 0
    while pos < len(term):
        value, size = uvint_unpack(term[pos:])
        values.append(decode_zig_zag(value))
        pos += size
    return tuple(values)
