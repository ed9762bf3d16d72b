"""The connections scenario's CQL table, Python's own I/O models (issue 17, section 2): the
models of ``pingpong.py`` speaking the CQL native protocol v4 themselves, against
``cql-responder`` or a Cassandra node (3.0 to 5.0 accept v4; runner
``benchmarks/run_cql_connections.py``).

One ``--model`` per process (``asyncio-protocol``, ``uvloop-protocol``, ``selectors``, and
``uvloop-protocol-rows``, ``selectors-rows``),
``--connections N`` TCP connections (bound to the ``--addresses`` source addresses, round
robin, as in ``pingpong.py``). Each connection does the handshake first, blocking, one after
the other (``STARTUP`` → ``READY``); the first one prepares ``SELECT k, v FROM bench.kv WHERE
k = ?`` (prepared statements are shared by a node's connections, the responder's too).
Then each connection keeps ONE ``EXECUTE`` outstanding (stream 1, consistency ONE, the value
k = 1, the skip-metadata flag a driver sets): send the 36-byte frame, read the RESULT frame
(header, then its length), send again. A frame that is not a RESULT counts as an error.

The ``-rows`` models also do a driver's least work per request, in Python: the key is bound
anew for each EXECUTE (an int packed into the frame: k = 1, the row a real node holds) and
the RESULT's row is decoded into a tuple of Python values (``decode_rows``: the int and text
columns the PREPARE announced; what a response's header flags put before the body, a node's
warnings say, skipped).
Without it the plain models only move bytes, which no driver can do: they measure the I/O
model, the ``-rows`` ones what a pure-Python driver core would cost at the least.

Measured as ``pingpong.py`` does (every round trip in the window, ``getrusage`` over the
window), printing the same JSON line with ``"client": "python-cql"``, or ``{"failed": ...}``
when the N connections cannot be opened (the runner's "FF").
"""

from __future__ import annotations

import argparse
import array
import os
import resource
import struct
import sys

# Run as a script, by the interpreter of the driver measured: the checkout's root, from which the
# clients import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.pingpong_asyncio import TimedProtocol, finish_protocols, new_event_loop, timed_window  # noqa: E402
from benchmarks.clients.pingpong_common import (  # noqa: E402
    Failed,
    connect_blocking,
    exit_without_teardown,
    now_ns,
    parse_addresses,
    print_outcome,
    raise_nofile,
    summary,
)

MODELS = ("asyncio-protocol", "uvloop-protocol", "selectors", "uvloop-protocol-rows", "selectors-rows")
ROWS_SUFFIX = "-rows"
QUERY = "SELECT k, v FROM bench.kv WHERE k = ?"
HEADER = 9
OP_ERROR, OP_STARTUP, OP_READY, OP_RESULT, OP_PREPARE, OP_EXECUTE = 0x00, 0x01, 0x02, 0x08, 0x09, 0x0A
# Response header flags that put something before the body proper (protocol v4 §2.2):
# a tracing id, a node's warnings, a custom payload. The responder sets none; a node may.
FLAG_TRACING, FLAG_CUSTOM_PAYLOAD, FLAG_WARNING = 0x02, 0x04, 0x08
PREFIX_FLAGS = FLAG_TRACING | FLAG_CUSTOM_PAYLOAD | FLAG_WARNING
KEY = 1  # the key bound: bench.kv holds k = 1 on a real node (the responder answers any key)


# ---------------------------------------------------------------------------------------------
# Framing (pure; unit-tested)


def frame(stream: int, opcode: int, body: bytes) -> bytes:
    """A v4 request frame."""
    return struct.pack(">BBhBi", 0x04, 0, stream, opcode, len(body)) + body


def startup_frame(stream: int = 0) -> bytes:
    key, value = b"CQL_VERSION", b"3.0.0"
    body = struct.pack(">H", 1) + struct.pack(">H", len(key)) + key + struct.pack(">H", len(value)) + value
    return frame(stream, OP_STARTUP, body)


def prepare_frame(query: str, stream: int = 0) -> bytes:
    q = query.encode()
    return frame(stream, OP_PREPARE, struct.pack(">i", len(q)) + q)


def execute_frame(statement_id: bytes, stream: int = 1) -> bytes:
    """EXECUTE at consistency ONE, flags VALUES | SKIP_METADATA, one int value (1)."""
    body = struct.pack(">H", len(statement_id)) + statement_id
    body += struct.pack(">HB", 0x0001, 0x01 | 0x02) + struct.pack(">H", 1) + struct.pack(">ii", 4, 1)
    return frame(stream, OP_EXECUTE, body)


class Requests:
    """The EXECUTE frames of one connection: the fixed frame, or with ``bind`` the key packed
    anew for each request behind the frame's fixed part (what a driver's bind costs at least).
    The key stays :data:`KEY`: a real node holds that one row, and another key would read
    none (the responder, which answers any key, once hid that)."""

    __slots__ = ("fixed", "head", "key", "bind")

    def __init__(self, statement_id: bytes, bind: bool) -> None:
        self.fixed = execute_frame(statement_id)
        self.head = self.fixed[:-4]
        self.key = KEY
        self.bind = bind

    def next(self) -> bytes:
        if not self.bind:
            return self.fixed
        return self.head + self.key.to_bytes(4, "big")


def _string_end(body, pos: int) -> int:
    (n,) = struct.unpack_from(">H", body, pos)
    return pos + 2 + n


def decode_rows(body) -> list[tuple]:
    """The rows of a RESULT Rows body of ``SELECT k, v`` (int, text) as tuples; the metadata,
    when the server sends it, is read and skipped (simple column types only)."""
    kind, flags, ncols = struct.unpack_from(">iii", body)
    if kind != 2:
        raise ValueError(f"RESULT kind {kind}, not Rows")
    pos = 12
    if flags & 0x0002:  # HAS_MORE_PAGES: the paging state
        (n,) = struct.unpack_from(">i", body, pos)
        pos += 4 + max(n, 0)
    if not flags & 0x0004:  # the metadata: [global table spec], then name and type per column
        if flags & 0x0001:
            pos = _string_end(body, _string_end(body, pos))
        for _ in range(ncols):
            if not flags & 0x0001:
                pos = _string_end(body, _string_end(body, pos))
            pos = _string_end(body, pos) + 2
    (nrows,) = struct.unpack_from(">i", body, pos)
    pos += 4
    rows = []
    for _ in range(nrows):
        (n,) = struct.unpack_from(">i", body, pos)
        pos += 4
        k = None if n < 0 else int.from_bytes(body[pos : pos + n], "big", signed=True)
        pos += max(n, 0)
        (n,) = struct.unpack_from(">i", body, pos)
        pos += 4
        v = None if n < 0 else bytes(body[pos : pos + n]).decode()
        pos += max(n, 0)
        rows.append((k, v))
    return rows


def body_start(buf, pos: int = HEADER) -> int:
    """Where the body proper of the response whose header ends at ``pos`` begins: after the
    tracing id, the warnings and the custom payload its header's flags announce, in that order
    (as a node writes them). A node warns, for one, about an aggregate over a table without a
    partition key, or a large batch."""
    flags = buf[pos - HEADER + 1]
    if not flags & PREFIX_FLAGS:
        return pos
    if flags & FLAG_TRACING:
        pos += 16
    if flags & FLAG_WARNING:
        (n,) = struct.unpack_from(">H", buf, pos)
        pos += 2
        for _ in range(n):
            pos = _string_end(buf, pos)
    if flags & FLAG_CUSTOM_PAYLOAD:
        (n,) = struct.unpack_from(">H", buf, pos)
        pos += 2
        for _ in range(n):
            pos = _string_end(buf, pos)
            (m,) = struct.unpack_from(">i", buf, pos)
            pos += 4 + max(m, 0)
    return pos


def parse_header(buf) -> tuple[int, int, int]:
    """(stream, opcode, body length) of a response header."""
    _, _, stream, opcode, length = struct.unpack_from(">BBhBi", buf)
    return stream, opcode, length


def error_message(body: bytes) -> str:
    code, n = struct.unpack_from(">iH", body)
    return f"error {code:#06x}: {body[6 : 6 + n].decode(errors='replace')}"


def prepared_id(body: bytes) -> bytes:
    """The statement id of a RESULT Prepared body."""
    kind, n = struct.unpack_from(">iH", body)
    if kind != 4:
        raise ValueError(f"RESULT kind {kind}, not Prepared")
    return bytes(body[6 : 6 + n])


# ---------------------------------------------------------------------------------------------
# The handshake (blocking)


def read_frame(sock) -> tuple[int, bytes]:
    buf = b""
    while len(buf) < HEADER:
        got = sock.recv(HEADER - len(buf))
        if not got:
            raise ConnectionError("closed by the server")
        buf += got
    _, opcode, length = parse_header(buf)
    body = b""
    while len(body) < length:
        got = sock.recv(length - len(body))
        if not got:
            raise ConnectionError("closed by the server")
        body += got
    frame_ = buf + body
    return opcode, frame_[body_start(frame_) :]


def handshake(socks: list) -> bytes:
    """STARTUP on every connection, PREPARE on the first; the statement id."""
    for i, s in enumerate(socks):
        try:
            s.sendall(startup_frame())
            op, body = read_frame(s)
        except OSError as e:
            raise Failed(f"handshake of connection {i + 1} of {len(socks)}: {e}") from None
        if op != OP_READY:
            raise Failed(
                f"STARTUP of connection {i + 1}: opcode {op:#04x}"
                + (f", {error_message(body)}" if op == OP_ERROR else "")
            )
    socks[0].sendall(prepare_frame(QUERY))
    op, body = read_frame(socks[0])
    if op != OP_RESULT:
        raise Failed(f"PREPARE: opcode {op:#04x}" + (f", {error_message(body)}" if op == OP_ERROR else ""))
    return prepared_id(body)


# ---------------------------------------------------------------------------------------------
# asyncio and uvloop


class CqlPingPong(TimedProtocol):
    """The ``*-protocol`` models: ``data_received`` sends the next EXECUTE as soon as the
    RESULT frame is complete."""

    __slots__ = ("requests", "decode", "buf", "need")

    def __init__(self, clock: list, lat: array.array, errors: list, requests: Requests) -> None:
        super().__init__(clock, lat, errors)
        self.requests = requests
        self.decode = requests.bind
        self.buf = bytearray()
        self.need = HEADER

    def first(self) -> bytes:
        return self.requests.next()

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if self.need == HEADER and len(buf) >= HEADER:
            self.need = HEADER + struct.unpack_from(">i", buf, 5)[0]
        if len(buf) < self.need or self.done:
            return
        if buf[4] != OP_RESULT:
            self.errors.append(f"opcode {buf[4]:#04x}")
        elif self.decode and len(decode_rows(memoryview(buf)[body_start(buf) : self.need])) != 1:
            self.errors.append("not one row")
        del buf[: self.need]
        self.need = HEADER
        n = now_ns()
        if n >= self.clock[1]:
            self.done = True
            return
        if n >= self.clock[0]:
            self.lat.append(n - self.t)
        self.t = n
        self.transport.write(self.requests.next())


def run_asyncio(a: argparse.Namespace) -> dict:
    loop = new_event_loop(a.model)
    socks = connect_blocking(a, blocking=True)
    try:
        statement_id = handshake(socks)
        for s in socks:
            s.setblocking(False)
        return loop.run_until_complete(_amain(a, loop, socks, statement_id))
    finally:
        for s in socks:
            s.close()
        loop.close()


async def _amain(a, loop, socks: list, statement_id: bytes) -> dict:
    lat = array.array("q")
    errors: list[str] = []
    clock = [0, 0]
    protos = []
    for s in socks:
        requests = Requests(statement_id, a.rows)
        _, p = await loop.create_connection(lambda r=requests: CqlPingPong(clock, lat, errors, r), sock=s)
        protos.append(p)
    clock[0] = now_ns() + int(a.warmup * 1e9)
    clock[1] = clock[0] + int(a.seconds * 1e9)
    for p in protos:
        p.start()
    ru0, ru1 = await timed_window(clock)
    await finish_protocols(protos)
    return summary(a, lat, ru0, ru1, errors)


# ---------------------------------------------------------------------------------------------
# selectors


def run_selectors(a: argparse.Namespace) -> dict:
    # The select loop is written out here as in pingpong.py's selectors model, not shared
    # through a callback or a generator: it is the code being measured, and a call per
    # event would add to every request's cost.
    import selectors

    socks = connect_blocking(a, blocking=True)
    lat = array.array("q")
    append = lat.append
    errors: list[str] = []
    sel = selectors.DefaultSelector()
    try:
        statement_id = handshake(socks)
        decode = a.rows
        warm_end = now_ns() + int(a.warmup * 1e9)
        end = warm_end + int(a.seconds * 1e9)
        for s in socks:
            s.setblocking(False)
            requests = Requests(statement_id, a.rows)
            # buffer, bytes needed, start, the connection's requests
            sel.register(s, selectors.EVENT_READ, [bytearray(), HEADER, now_ns(), requests])
            s.send(requests.next())
        ru0 = None
        open_ = len(socks)
        while open_:
            events = sel.select(0.05)
            n = now_ns()
            if ru0 is None and n >= warm_end:
                ru0 = resource.getrusage(resource.RUSAGE_SELF)
            if n >= end:
                break
            for key, _ in events:
                s, st = key.fileobj, key.data
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError as e:
                    data = None
                    errors.append(f"{type(e).__name__}: {e}")
                if not data:
                    if data is not None:
                        errors.append("closed by the server")
                    sel.unregister(s)
                    open_ -= 1
                    continue
                buf = st[0]
                buf += data
                if st[1] == HEADER and len(buf) >= HEADER:
                    st[1] = HEADER + struct.unpack_from(">i", buf, 5)[0]
                if len(buf) < st[1]:
                    continue
                if buf[4] != OP_RESULT:
                    errors.append(f"opcode {buf[4]:#04x}")
                elif decode and len(decode_rows(memoryview(buf)[body_start(buf) : st[1]])) != 1:
                    errors.append("not one row")
                del buf[: st[1]]
                st[1] = HEADER
                n = now_ns()
                if warm_end <= n < end:
                    append(n - st[2])
                st[2] = n
                s.send(st[3].next())  # 36 bytes into an empty send buffer: never short
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        if ru0 is None:
            ru0 = ru1
    finally:
        sel.close()
        for s in socks:
            s.close()
    return summary(a, lat, ru0, ru1, errors)


RUNNERS = {"asyncio-protocol": run_asyncio, "uvloop-protocol": run_asyncio, "selectors": run_selectors}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=MODELS)
    ap.add_argument("--connect", required=True, metavar="HOST:PORT", help="the CQL responder or a node")
    ap.add_argument("--connections", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True, help="measured window")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before the window (default 1)")
    ap.add_argument("--addresses", default="127.0.0.1", help="local source addresses, comma-separated")
    a = ap.parse_args(argv)
    host, _, port = a.connect.rpartition(":")
    if not host or not port.isdigit():
        ap.error(f"--connect: HOST:PORT, not {a.connect!r}")
    if a.connections <= 0 or a.seconds < 0 or a.warmup < 0:
        ap.error("--connections must be positive, --seconds and --warmup not negative")
    a.addresses = parse_addresses(a.addresses)
    a.rows = a.model.endswith(ROWS_SUFFIX)
    a.io_model = a.model.removesuffix(ROWS_SUFFIX)
    a.host, a.port = host, int(port)
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    raise_nofile()
    return print_outcome(
        lambda: {**RUNNERS[a.io_model](a), "client": "python-cql"},
        lambda why: {"client": "python-cql", "model": a.model, "connections": a.connections, "failed": why},
    )


if __name__ == "__main__":
    exit_without_teardown(main())
