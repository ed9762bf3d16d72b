"""Writes the fuzz targets' seed inputs into fuzz/corpus/<target>/ (python fuzz/seeds.py).

Well-formed bodies and frames of every kind the targets read, built with the project's fake
CQL server's encoders (tests/integration/_fake_cql.py, written from the protocol
specification) and, for what it does not encode (UDTs, durations, decimals, varints, variable
size vectors, compression), here; the fuzzer mutates from these. Each file is named by a hash
of its bytes, as libFuzzer names what it adds."""

import hashlib
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration._fake_cql import (  # noqa: E402
    EVENT,
    READY,
    RESULT,
    bytes_value,
    frame,
    int32,
    result_prepared,
    rows_body,
    short,
    string,
    string_list,
    type_option,
)

CORPUS = ROOT / "fuzz" / "corpus"


def write(target, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def udt_option(keyspace, name, fields):
    """A UDT [option] (0x0030): keyspace, name, then (field name, type option) pairs."""
    return (
        short(0x0030)
        + string(keyspace)
        + string(name)
        + short(len(fields))
        + b"".join(string(f) + t for f, t in fields)
    )


def custom(cls):
    return short(0x0000) + string(cls)


def raw_rows(columns, rows):
    """A ROWS body of columns given as (name, [option] bytes) and rows of cell bytes (None: null)."""
    body = int32(2) + int32(0x0001) + int32(len(columns)) + string("ks") + string("t")
    body += b"".join(string(n) + t for n, t in columns) + int32(len(rows))
    for row in rows:
        body += b"".join(bytes_value(c) for c in row)
    return body


def vint(n):
    """An unsigned vint (the protocol's variable-length integer)."""
    out = bytearray()
    extra = 0
    while extra < 8 and n >= 1 << (7 * (extra + 1)):
        extra += 1
    first = (0xFF << (8 - extra)) & 0xFF
    data = n.to_bytes(extra + 1, "big")
    out.append(first | data[0])
    out += data[1:]
    return bytes(out)


def zigzag(n):
    return vint((n << 1) ^ (n >> 63))


def lz4_literals(data):
    """An LZ4 block holding `data` as one run of literals, behind the 4-byte length the
    protocol puts first."""
    n = len(data)
    token = min(n, 15) << 4
    extra = b""
    if n >= 15:
        rest = n - 15
        extra = b"\xff" * (rest // 255) + bytes([rest % 255])
    return struct.pack(">I", n) + bytes([token]) + extra + data


def snappy_literals(data):
    n = len(data)
    out = bytearray()
    v = n
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    if n <= 60:
        out.append((n - 1) << 2)
    else:
        out.append(61 << 2)
        out += struct.pack("<H", n - 1)
    return bytes(out) + data


def rows_seeds():
    natives = [
        ("a", "ascii", "abc"),
        ("b", "bigint", -(2**63)),
        ("bl", "blob", b"\x00\xff"),
        ("bo", "boolean", True),
        ("c", "counter", 7),
        ("d", "double", 1.5),
        ("f", "float", -0.25),
        ("i", "int", 2**31 - 1),
        ("ts", "timestamp", 1_764_979_200_000),
        ("u", "uuid", "12345678-1234-5678-1234-567812345678"),
        ("t", "text", "é€"),
        ("tu", "timeuuid", "e6bd4c5a-d27f-11f0-8de9-0242ac120002"),
        ("in4", "inet", "127.0.0.1"),
        ("in6", "inet", "::1"),
        ("sm", "smallint", -2),
        ("ti", "tinyint", 3),
    ]
    cols = [(n, t) for n, t, _ in natives]
    yield rows_body(cols, [[v for _, _, v in natives], [None] * len(natives)])
    nested = [
        ("l", "list<int>", [1, 2, 3]),
        ("s", "set<text>", ["a", "b"]),
        ("m", "map<text, list<int>>", {"k": [1], "e": []}),
        ("fm", "frozen<map<int, frozen<set<text>>>>", {1: ["x"]}),
        ("tp", "tuple<int, text, list<double>>", (1, "x", [0.5])),
        ("v", "vector<float, 3>", [1.0, 2.0, 3.0]),
        ("vd", "vector<double, 2>", [1.0, -1.0]),
        ("vi", "vector<int, 2>", [1, -1]),
    ]
    yield rows_body([(n, t) for n, t, _ in nested], [[v for _, _, v in nested]] * 3)
    # Empty values (zero bytes) of every native type: None or EMPTY, as the classic driver.
    yield raw_rows([(n, type_option(t)) for n, t, _ in natives], [[b""] * len(natives)])
    # What the fake server does not encode.
    udt = udt_option(
        "ks", "addr", [("street", type_option("text")), ("zip", type_option("int")), ("tags", type_option("set<text>"))]
    )
    udt_value = (
        bytes_value(b"main st") + bytes_value(struct.pack(">i", 12345)) + bytes_value(int32(1) + bytes_value(b"t"))
    )
    decimal = int32(2) + (-12345).to_bytes(3, "big", signed=True)
    varint = (2**100).to_bytes(14, "big", signed=True)
    date = struct.pack(">I", 2**31 + 20000)
    time = struct.pack(">q", 86_399_999_999_999)
    duration = zigzag(-1) + zigzag(2) + zigzag(3_000_000_000)
    vtext = custom("org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.UTF8Type, 2)")
    vtext_value = vint(2) + b"hi" + vint(0)
    nested_udt = type_option("list<int>")[:2] + udt
    yield raw_rows(
        [
            ("udt", udt),
            ("dec", short(0x0006)),
            ("vi", short(0x000E)),
            ("dt", short(0x0011)),
            ("tm", short(0x0012)),
            ("du", short(0x0015)),
            ("vt", vtext),
            ("lu", nested_udt),
            ("cu", custom("org.apache.cassandra.db.marshal.DurationType")),
            ("ct", custom("com.example.Unknown")),
        ],
        [
            [
                udt_value,
                decimal,
                varint,
                date,
                time,
                duration,
                vtext_value,
                int32(1) + bytes_value(udt_value),
                duration,
                b"opaque",
            ],
            [None, None, None, None, None, None, None, None, None, None],
        ],
    )
    # A count that lies: more rows declared than sent.
    yield rows_body([("i", "int")], [[1]], row_count=1000)
    # No columns, many rows.
    yield int32(2) + int32(0) + int32(0) + int32(3)
    # A null map key (found by the columns target: pyarrow aborted the process on it).
    yield raw_rows([("m", type_option("map<int, int>"))], [[int32(1) + int32(-1) + bytes_value(int32(7))]])
    # Empty keys of types with no empty form (null in Arrow too: found by CI's columns smoke).
    for key in ("int", "varint"):
        yield raw_rows(
            [("m", type_option("map<%s, int>" % key))], [[int32(1) + bytes_value(b"") + bytes_value(int32(7))]]
        )


def main():
    rows = list(rows_seeds())
    for body in rows:
        write("rows", body)
        write("columns", body)
        write("frame", b"\x00" + frame(RESULT, body))
    for i, (_, body) in enumerate(
        [
            result_prepared(b"\x01" * 16, bind=[("k", "int"), ("v", "text")], result=[("v", "text")], pk_indexes=[0]),
            result_prepared(
                b"\x02" * 16,
                bind=[("m", "map<text, frozen<list<int>>>"), ("t", "tuple<int, text>"), ("v", "vector<float, 3>")],
            ),
            result_prepared(
                b"\x03" * 16,
                bind=[("a", "ascii"), ("b", "blob"), ("u", "uuid"), ("ts", "timestamp"), ("i", "inet")],
                pk_indexes=[2, 0],
            ),
            result_prepared(b"\x04" * 16),
        ]
    ):
        write("prepared", bytes([i * 5]) + body)
        write("frame", b"\x00" + frame(RESULT, body))
    events = [
        string("TOPOLOGY_CHANGE") + string("NEW_NODE") + bytes([4]) + bytes([127, 0, 0, 2]) + int32(9042),
        string("STATUS_CHANGE") + string("DOWN") + bytes([16]) + bytes(15) + b"\x01" + int32(9042),
        string("SCHEMA_CHANGE") + string("CREATED") + string("KEYSPACE") + string("ks"),
        string("SCHEMA_CHANGE") + string("UPDATED") + string("TABLE") + string("ks") + string("t"),
        string("SCHEMA_CHANGE")
        + string("DROPPED")
        + string("FUNCTION")
        + string("ks")
        + string("f")
        + string_list(["int", "text"]),
    ]
    for body in events:
        write("events", body)
        write("frame", b"\x00" + frame(EVENT, body, stream=-1))
    ready = frame(READY, b"")
    small = rows[0]
    write("frame", b"\x00" + ready + ready)
    # Compressed bodies (flag 0x01): LZ4 (control byte 1 << 2) and Snappy (2 << 2).
    write("frame", bytes([1 << 2]) + frame(RESULT, lz4_literals(small), flags=0x01))
    write("frame", bytes([2 << 2]) + frame(RESULT, snappy_literals(small), flags=0x01))
    # Tracing id and warnings (flags 0x02, 0x08) ahead of the body.
    write("frame", b"\x00" + frame(RESULT, bytes(range(16)) + string_list(["a warning"]) + small, flags=0x0A))
    # A declared length over the smallest cap.
    write("frame", b"\x03" + frame(RESULT, small))


if __name__ == "__main__":
    main()
