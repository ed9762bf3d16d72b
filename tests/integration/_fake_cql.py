"""A fake CQL server (native protocol v4), for what a real node cannot be made to do on demand.

It answers enough for a driver to connect (OPTIONS, STARTUP, REGISTER, the system tables the
scylla crate and the classic driver read at connect and for schema agreement) and lets the
test choose the reply to every other request: a server error of any kind, a result, or a
hostile frame (a body shorter than its declared length, a 2 GiB declared length, an unknown
opcode, a reply on a stream nobody asked on, a ROWS body that lies...).

Written from the protocol specification (``doc/native_protocol_v4.spec`` of the Cassandra
repository), nothing else::

    with FakeCqlServer() as server:
        server.handler = lambda req: unavailable(ConsistencyLevel.QUORUM, 2, 1)
        cluster = Cluster([server.host], port=server.port)
        ...

``handler(request)`` is called (on the server's thread) for each *user* request: QUERY,
PREPARE, EXECUTE and BATCH that are not about the system tables. It returns a reply:

- ``(opcode, body)``: one frame on the request's stream (the helpers below build the bodies:
  ``unavailable(...)``, ``result_rows(...)``, ``result_prepared(...)``, ...);
- ``Raw(data, then)``: bytes written as they are (``data`` may be a function of the request,
  for its stream id), then the connection is kept, closed (``CLOSE``) or left silent
  (``STALL``: nothing more is read or written on it until the client goes away);
- ``NO_REPLY``: nothing at all (the request is left unanswered, the connection goes on);
- a list of replies, sent in order.

:func:`default_reply` is what a handler returns for what it does not care about (PREPARE:
a statement without bind markers, anything else: VOID). ``server.requests`` lists the user
requests seen (to count attempts: a retry is a second request).
"""

import asyncio
import contextlib
import hashlib
import ipaddress
import re
import struct
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

# Opcodes (spec section 2.4).
ERROR = 0x00
STARTUP = 0x01
READY = 0x02
AUTHENTICATE = 0x03
OPTIONS = 0x05
SUPPORTED = 0x06
QUERY = 0x07
RESULT = 0x08
PREPARE = 0x09
EXECUTE = 0x0A
REGISTER = 0x0B
EVENT = 0x0C
BATCH = 0x0D
AUTH_CHALLENGE = 0x0E
AUTH_RESPONSE = 0x0F
AUTH_SUCCESS = 0x10

RESPONSE_V4 = 0x84
HEADER = struct.Struct(">BBhBI")  # version, flags, stream, opcode, length

# Result kinds (spec 4.2.5).
VOID, ROWS, SET_KEYSPACE, PREPARED, SCHEMA_CHANGE = 1, 2, 3, 4, 5

# What happens to a connection after a Raw reply.
KEEP, CLOSE, STALL = "keep", "close", "stall"


# --------------------------------------------------------------------------
# Notations of spec section 3


def short(n):
    return struct.pack(">H", n)


def int32(n):
    return struct.pack(">i", n)


def string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return short(len(b)) + b


def long_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return int32(len(b)) + b


def string_list(items):
    return short(len(items)) + b"".join(string(s) for s in items)


def bytes_value(b):
    """[bytes]: the length then the bytes; None is null (length -1)."""
    return int32(-1) if b is None else int32(len(b)) + b


def short_bytes(b):
    return short(len(b)) + b


def string_multimap(d):
    return short(len(d)) + b"".join(string(k) + string_list(v) for k, v in d.items())


def frame(opcode, body, stream=0, flags=0, version=RESPONSE_V4, length=None):
    """One frame: the 9-byte header (``length`` may lie about the body) and the body."""
    return HEADER.pack(version, flags, stream, opcode, len(body) if length is None else length) + body


# --------------------------------------------------------------------------
# Types ([option], spec 4.2.5.2) and values (section 6)

_NATIVE_IDS = {
    "ascii": 0x0001,
    "bigint": 0x0002,
    "blob": 0x0003,
    "boolean": 0x0004,
    "counter": 0x0005,
    "decimal": 0x0006,
    "double": 0x0007,
    "float": 0x0008,
    "int": 0x0009,
    "timestamp": 0x000B,
    "uuid": 0x000C,
    "varchar": 0x000D,
    "text": 0x000D,
    "varint": 0x000E,
    "timeuuid": 0x000F,
    "inet": 0x0010,
    "date": 0x0011,
    "time": 0x0012,
    "smallint": 0x0013,
    "tinyint": 0x0014,
}


def _split_args(s):
    depth, start, out = 0, 0, []
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[start:i].strip())
            start = i + 1
    out.append(s[start:].strip())
    return out


def _parse_type(name):
    name = name.strip()
    if "<" not in name:
        return name.lower(), []
    head, inner = name[: name.index("<")].strip().lower(), name[name.index("<") + 1 : -1]
    return head, _split_args(inner)


def type_option(name):
    """The [option] of a CQL type name: ``text``, ``list<int>``, ``map<text, text>``,
    ``set<text>``, ``tuple<int, text>``, ``frozen<...>``, ``vector<float, 3>``."""
    head, args = _parse_type(name)
    if head in _NATIVE_IDS:
        return short(_NATIVE_IDS[head])
    if head == "frozen":
        return type_option(args[0])
    if head == "list":
        return short(0x0020) + type_option(args[0])
    if head == "map":
        return short(0x0021) + type_option(args[0]) + type_option(args[1])
    if head == "set":
        return short(0x0022) + type_option(args[0])
    if head == "tuple":
        return short(0x0031) + short(len(args)) + b"".join(type_option(a) for a in args)
    if head == "vector" and args[0].lower() in _MARSHAL_CLASSES:
        # A custom type (option 0x0000) named by its Cassandra class, as a node sends vectors.
        return short(0x0000) + string(
            "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.%s, %d)"
            % (_MARSHAL_CLASSES[args[0].lower()], int(args[1]))
        )
    raise ValueError("type not known to the fake server: %r" % name)


_MARSHAL_CLASSES = {"float": "FloatType", "double": "DoubleType", "int": "Int32Type", "bigint": "LongType"}


@dataclass
class RawValue:
    """A cell written as it is: ``data`` is the whole [bytes] (length included), so it may lie."""

    data: bytes


def encode_value(typ, value):
    """The bytes of ``value`` as a value of CQL type ``typ`` (no length prefix); None stays None."""
    if value is None:
        return None
    head, args = _parse_type(typ)
    if head in ("text", "varchar", "ascii"):
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    if head == "blob":
        return bytes(value)
    if head == "int":
        return struct.pack(">i", value)
    if head in ("bigint", "counter", "timestamp"):
        return struct.pack(">q", value)
    if head == "smallint":
        return struct.pack(">h", value)
    if head == "tinyint":
        return struct.pack(">b", value)
    if head == "boolean":
        return b"\x01" if value else b"\x00"
    if head == "double":
        return struct.pack(">d", value)
    if head == "float":
        return struct.pack(">f", value)
    if head in ("uuid", "timeuuid"):
        return uuid.UUID(str(value)).bytes
    if head == "inet":
        return ipaddress.ip_address(value).packed
    if head == "frozen":
        return encode_value(args[0], value)
    if head in ("list", "set"):
        items = list(value)
        return int32(len(items)) + b"".join(bytes_value(encode_value(args[0], v)) for v in items)
    if head == "map":
        return int32(len(value)) + b"".join(
            bytes_value(encode_value(args[0], k)) + bytes_value(encode_value(args[1], v)) for k, v in value.items()
        )
    if head == "tuple":
        return b"".join(bytes_value(encode_value(t, v)) for t, v in zip(args, value))
    if head == "vector":  # fixed-size elements only: concatenated, no lengths
        return b"".join(encode_value(args[0], v) for v in value)
    raise ValueError("type not known to the fake server: %r" % typ)


# --------------------------------------------------------------------------
# Results (spec 4.2.5)


def result_void():
    return RESULT, int32(VOID)


def result_set_keyspace(keyspace):
    return RESULT, int32(SET_KEYSPACE) + string(keyspace)


def _col_specs(columns, keyspace, table):
    body = string(keyspace) + string(table) if columns else b""
    return body + b"".join(string(name) + type_option(typ) for name, typ in columns)


def rows_body(columns, rows, keyspace="ks", table="t", column_count=None, row_count=None):
    """The body of a ROWS result: ``columns`` is a list of (name, CQL type), each row a list of
    Python values (or RawValue cells). ``column_count`` / ``row_count`` may lie."""
    flags = 0x0001 if columns else 0x0000  # Global_tables_spec
    body = int32(ROWS) + int32(flags) + int32(len(columns) if column_count is None else column_count)
    body += _col_specs(columns, keyspace, table)
    body += int32(len(rows) if row_count is None else row_count)
    for row in rows:
        for (_name, typ), v in zip(columns, row):
            body += v.data if isinstance(v, RawValue) else bytes_value(encode_value(typ, v))
    return body


def result_rows(columns, rows, **kw):
    return RESULT, rows_body(columns, rows, **kw)


def prepared_id(query):
    return hashlib.md5(query.encode("utf-8")).digest()


def result_prepared(query_id, bind=(), result=None, pk_indexes=(), keyspace="ks", table="t"):
    """A PREPARED result: ``bind`` and ``result`` are lists of (name, CQL type); ``result``
    None is a statement without result metadata (No_metadata, as for a write)."""
    bind = list(bind)
    body = int32(PREPARED) + short_bytes(query_id)
    body += int32(0x0001 if bind else 0) + int32(len(bind)) + int32(len(pk_indexes))
    body += b"".join(short(i) for i in pk_indexes)
    body += _col_specs(bind, keyspace, table)
    if result is None:
        body += int32(0x0004) + int32(0)
    else:
        result = list(result)
        body += int32(0x0001 if result else 0) + int32(len(result)) + _col_specs(result, keyspace, table)
    return RESULT, body


# --------------------------------------------------------------------------
# Errors (spec section 9): each returns (ERROR, body)


def error(code, message, extra=b""):
    return ERROR, int32(code) + string(message) + extra


def server_error(message="fake server error"):
    return error(0x0000, message)


def protocol_error(message="fake protocol error"):
    return error(0x000A, message)


def bad_credentials(message="fake bad credentials"):
    return error(0x0100, message)


def unavailable(cl, required, alive, message="Cannot achieve consistency level"):
    return error(0x1000, message, short(cl) + int32(required) + int32(alive))


def overloaded(message="fake overloaded"):
    return error(0x1001, message)


def is_bootstrapping(message="fake bootstrapping"):
    return error(0x1002, message)


def truncate_error(message="fake truncate error"):
    return error(0x1003, message)


def write_timeout(cl, received, blockfor, write_type, message="Operation timed out"):
    return error(0x1100, message, short(cl) + int32(received) + int32(blockfor) + string(write_type))


def read_timeout(cl, received, blockfor, data_present, message="Operation timed out"):
    return error(0x1200, message, short(cl) + int32(received) + int32(blockfor) + bytes([1 if data_present else 0]))


def read_failure(cl, received, blockfor, numfailures, data_present, message="Operation failed"):
    extra = short(cl) + int32(received) + int32(blockfor) + int32(numfailures) + bytes([1 if data_present else 0])
    return error(0x1300, message, extra)


def function_failure(keyspace, function, arg_types, message="execution of function failed"):
    return error(0x1400, message, string(keyspace) + string(function) + string_list(arg_types))


def write_failure(cl, received, blockfor, numfailures, write_type, message="Operation failed"):
    extra = short(cl) + int32(received) + int32(blockfor) + int32(numfailures) + string(write_type)
    return error(0x1500, message, extra)


def syntax_error(message="line 1:0 no viable alternative at input 'SELEC'"):
    return error(0x2000, message)


def unauthorized(message="User fake has no SELECT permission"):
    return error(0x2100, message)


def invalid(message="fake invalid request"):
    return error(0x2200, message)


def config_error(message="fake configuration error"):
    return error(0x2300, message)


def already_exists(keyspace, table="", message=None):
    if message is None:
        message = "Cannot add already existing %s" % ("table %s" % table if table else "keyspace %s" % keyspace)
    return error(0x2400, message, string(keyspace) + string(table))


def unprepared(query_id, message=None):
    if message is None:
        message = "Prepared query with ID %s not found" % query_id.hex()
    return error(0x2500, message, short_bytes(query_id))


# --------------------------------------------------------------------------
# Replies that are not one well-formed frame


@dataclass
class Raw:
    """Bytes written as they are (``data``: bytes, or a function of the request giving them),
    then the connection is kept (KEEP), closed (CLOSE) or left silent (STALL)."""

    data: bytes | Callable[["Request"], bytes]
    then: str = KEEP
    # Zero bytes written after ``data``, a MiB at a time as the client reads them (the server
    # holds one MiB, whatever the count), until the count or the client is gone.
    streamed: int = 0


NO_REPLY = object()
_ZEROS = bytes(2**20)


def partial_body(declared, sent, then=CLOSE, opcode=RESULT, streamed=0):
    """A header declaring ``declared`` body bytes followed by only ``sent`` of them, then
    ``streamed`` more zero bytes written as the client reads them."""
    return Raw(lambda req: frame(opcode, b"", req.stream, length=declared) + b"\x00" * sent, then, streamed)


def unknown_opcode(opcode=0x42, body=b""):
    return Raw(lambda req: frame(opcode, body, req.stream))


def on_stream(stream, reply):
    """``reply`` (an (opcode, body) pair) on ``stream`` instead of the request's."""
    opcode, body = reply
    return Raw(frame(opcode, body, stream))


def with_version(version, reply, then=KEEP):
    """``reply`` with the version byte ``version`` (0x04: the request direction; 0x85: v5...)."""
    opcode, body = reply
    return Raw(lambda req: frame(opcode, body, req.stream, version=version), then)


# --------------------------------------------------------------------------
# The system tables a driver reads at connect

HOST_ID = uuid.UUID("c0ffee00-0000-4000-8000-000000000001")
SCHEMA_VERSION = uuid.UUID("5c4e3a00-0000-4000-8000-000000000002")

_LOCAL_COLUMNS = [
    ("key", "text"),
    ("bootstrapped", "text"),
    ("broadcast_address", "inet"),
    ("cluster_name", "text"),
    ("cql_version", "text"),
    ("data_center", "text"),
    ("gossip_generation", "int"),
    ("host_id", "uuid"),
    ("listen_address", "inet"),
    ("native_protocol_version", "text"),
    ("partitioner", "text"),
    ("rack", "text"),
    ("release_version", "text"),
    ("rpc_address", "inet"),
    ("schema_version", "uuid"),
    ("thrift_version", "text"),
    ("tokens", "set<text>"),
    ("truncated_at", "map<uuid, blob>"),
]

_PEERS_COLUMNS = [
    ("peer", "inet"),
    ("data_center", "text"),
    ("host_id", "uuid"),
    ("preferred_ip", "inet"),
    ("rack", "text"),
    ("release_version", "text"),
    ("rpc_address", "inet"),
    ("schema_version", "uuid"),
    ("tokens", "set<text>"),
]

# Tables the fake node does not have (as a Cassandra 3.11 node): the drivers ask and fall
# back on InvalidRequest (the classic driver: peers_v2 -> peers; the crate: ScyllaDB tables).
_MISSING_TABLES = {
    "system.peers_v2",
    "system_schema.scylla_keyspaces",
    "system_schema.scylla_tables",
    "system.client_routes",
}

_SYSTEM_KEYSPACES = (
    "system",
    "system_schema",
    "system_virtual_schema",
    "system_traces",
    "system_auth",
    "system_distributed",
)
_SYSTEM_RE = re.compile(r'\bFROM\s+"?(%s)"?\s*\.' % "|".join(_SYSTEM_KEYSPACES), re.I)
_SELECT_RE = re.compile(r"^\s*SELECT\s+(.+?)\s+FROM\s+([\w\".]+)", re.I | re.S)
_USE_RE = re.compile(r'^\s*USE\s+"?(\w+)"?\s*;?\s*$', re.I)


def host_id(host):
    """The host id of the fake node on `host` (HOST_ID for 127.0.0.1, the default)."""
    return HOST_ID if host == "127.0.0.1" else uuid.uuid5(HOST_ID, host)


def _tokens(host):
    if host == "127.0.0.1":
        return ["-9000000000000000000", "0", "4000000000000000000"]
    # Another node of a fake cluster: tokens of its own, by its address.
    base = int(ipaddress.ip_address(host)) % 1000
    return [str(-8000000000000000000 + base * 1000 + k * 3000000000000000000) for k in range(3)]


def _peer_row(host):
    return {
        "peer": host,
        "data_center": "dc1",
        "host_id": host_id(host),
        "preferred_ip": None,
        "rack": "rack1",
        "release_version": "3.11.16",
        "rpc_address": host,
        "schema_version": SCHEMA_VERSION,
        "tokens": _tokens(host),
    }


def _local_row(host):
    return {
        "key": "local",
        "bootstrapped": "COMPLETED",
        "broadcast_address": host,
        "cluster_name": "fake cluster",
        "cql_version": "3.4.4",
        "data_center": "dc1",
        "gossip_generation": 1,
        "host_id": host_id(host),
        "listen_address": host,
        "native_protocol_version": "4",
        "partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
        "rack": "rack1",
        "release_version": "3.11.16",
        "rpc_address": host,
        "schema_version": SCHEMA_VERSION,
        "thrift_version": "20.1.0",
        "tokens": _tokens(host),
        "truncated_at": None,
    }


def _table_columns(table):
    """The (name, type) columns of a known system table, else None."""
    if table == "system.local":
        return _LOCAL_COLUMNS
    if table == "system.peers":
        return _PEERS_COLUMNS
    if table == "system_schema.keyspaces":
        return [("keyspace_name", "text"), ("durable_writes", "boolean"), ("replication", "map<text, text>")]
    return None


def is_system(query):
    return bool(_SYSTEM_RE.search(query)) or bool(_USE_RE.match(query))


# --------------------------------------------------------------------------
# Requests


@dataclass
class Request:
    """One request as the server read it."""

    conn: int
    opcode: int
    stream: int
    version: int
    flags: int
    body: bytes
    query: str | None = None  # QUERY, PREPARE; EXECUTE: the prepared statement's text
    query_id: bytes | None = None  # EXECUTE
    consistency: int | None = None  # QUERY, EXECUTE, BATCH
    batch: list = field(default_factory=list)  # BATCH: (query text or id) per statement


class _Cursor:
    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, n):
        out = self.b[self.i : self.i + n]
        if len(out) != n:
            raise ValueError("truncated request")
        self.i += n
        return out

    def short(self):
        return struct.unpack(">H", self.take(2))[0]

    def int(self):
        return struct.unpack(">i", self.take(4))[0]

    def byte(self):
        return self.take(1)[0]

    def long_string(self):
        return self.take(self.int()).decode("utf-8")

    def short_bytes(self):
        return self.take(self.short())


def _parse(req, prepared):
    c = _Cursor(req.body)
    if req.opcode in (QUERY, PREPARE):
        req.query = c.long_string()
        if req.opcode == QUERY:
            req.consistency = c.short()
    elif req.opcode == EXECUTE:
        req.query_id = c.short_bytes()
        req.query = prepared.get(req.query_id)
        req.consistency = c.short()
    elif req.opcode == BATCH:
        c.byte()  # type
        for _ in range(c.short()):
            kind = c.byte()
            stmt = c.long_string() if kind == 0 else c.short_bytes()
            req.batch.append(prepared.get(stmt, stmt) if kind == 1 else stmt)
            for _ in range(c.short()):
                n = c.int()
                if n > 0:
                    c.take(n)
        req.consistency = c.short()


def default_reply(req):
    """What an uninterested handler answers: a PREPARE is a statement without markers, the
    rest VOID."""
    if req.opcode == PREPARE:
        return result_prepared(prepared_id(req.query))
    return result_void()


# --------------------------------------------------------------------------
# The server


class FakeCqlServer:
    """A fake node on 127.0.0.1 (a free port), served by an asyncio loop on its own thread."""

    def __init__(self, handler=None, host="127.0.0.1", port=0):
        self.host = host
        self.port = None
        self._bind_port = port
        self.handler = handler or default_reply
        # The other nodes of a fake cluster (their addresses, same port): system.peers' rows.
        self.peers: list[str] = []
        # The reply to STARTUP when not READY (any reply form: Raw garbage, NO_REPLY, ...).
        self.startup_reply = None
        # Connections accepted and then never read nor answered.
        self.silent = False
        self.requests: list[Request] = []  # the user requests seen
        self.connections = 0  # how many connections were accepted
        self._prepared: dict[bytes, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server = None
        self._writers: set = set()
        self._next_conn = 0

    # --- life cycle

    def start(self):
        started = threading.Event()
        failure: list[BaseException] = []

        def run():
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(asyncio.start_server(self._serve, self.host, self._bind_port))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # handed to start()
                failure.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-cql-server", daemon=True)
        self._thread.start()
        started.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self):
        loop = self._loop
        if loop is None or self._thread is None:
            return

        async def close():
            self._server.close()
            for w in list(self._writers):
                w.close()
            await asyncio.sleep(0)
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(5)
        self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def close_connections(self):
        """Closes every client connection (the listening socket stays)."""

        def close():
            for w in list(self._writers):
                w.close()

        if self._loop is not None:
            self._loop.call_soon_threadsafe(close)

    def user_requests(self, opcode=None):
        return [r for r in self.requests if opcode is None or r.opcode == opcode]

    # --- serving

    async def _serve(self, reader, writer):
        self._next_conn += 1
        self.connections += 1
        conn = self._next_conn
        self._writers.add(writer)
        try:
            if self.silent:
                await asyncio.Event().wait()  # until the client goes or the server stops
            while True:
                header = await reader.readexactly(HEADER.size)
                version, flags, stream, opcode, length = HEADER.unpack(header)
                body = await reader.readexactly(length)
                if version & 0x7F != 4:
                    # Another protocol version: refused as Cassandra does (the client retries v4).
                    reply = protocol_error("Invalid or unsupported protocol version (%d)" % (version & 0x7F))
                    writer.write(frame(*reply, stream=stream, version=0x80 | (version & 0x7F)))
                    await writer.drain()
                    continue
                req = Request(conn, opcode, stream, version, flags, body)
                then = await self._answer(req, writer)
                if then == CLOSE:
                    break
                if then == STALL:
                    while await reader.read(65536):
                        pass
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, req, writer):
        reply = self._system_reply(req)
        if reply is None:
            self.requests.append(req)
            try:
                reply = self.handler(req)
            except Exception as exc:  # a bug of the test's handler: say so to the client
                reply = server_error("fake server handler raised %r" % (exc,))
        return await self._send(req, reply, writer)

    async def _send(self, req, reply, writer):
        then = KEEP
        if reply is NO_REPLY:
            return KEEP
        if isinstance(reply, list):
            for r in reply:
                then = await self._send(req, r, writer)
                if then != KEEP:
                    break
            return then
        if isinstance(reply, Raw):
            data = reply.data(req) if callable(reply.data) else reply.data
            writer.write(data)
            then = reply.then
            left = reply.streamed
            while left > 0:
                chunk = _ZEROS if left >= len(_ZEROS) else _ZEROS[:left]
                writer.write(chunk)
                await writer.drain()
                left -= len(chunk)
        else:
            opcode, body = reply
            if opcode == RESULT and body[:4] == int32(PREPARED) and req.query is not None:
                qid_len = struct.unpack(">H", body[4:6])[0]
                self._prepared[body[6 : 6 + qid_len]] = req.query
            writer.write(frame(opcode, body, req.stream))
        await writer.drain()
        return then

    def _system_reply(self, req):
        """The reply to a connection-level or system-table request, else None (a user one)."""
        if req.opcode == OPTIONS:
            return SUPPORTED, string_multimap(
                {"CQL_VERSION": ["3.4.4"], "COMPRESSION": [], "PROTOCOL_VERSIONS": ["3/v3", "4/v4"]}
            )
        if req.opcode == STARTUP and self.startup_reply is not None:
            return self.startup_reply
        if req.opcode in (STARTUP, REGISTER):
            return READY, b""
        if req.opcode not in (QUERY, PREPARE, EXECUTE, BATCH):
            return protocol_error("unexpected opcode 0x%02x" % req.opcode)
        try:
            _parse(req, self._prepared)
        except (ValueError, UnicodeDecodeError) as exc:
            return protocol_error("bad request body: %s" % exc)
        q = req.query
        if q is None or not is_system(q):
            return None
        m = _USE_RE.match(q)
        if m:
            return result_set_keyspace(m.group(1))
        sel = _SELECT_RE.match(q)
        table = sel.group(2).replace('"', "").lower() if sel else ""
        if table in _MISSING_TABLES:
            return invalid("unconfigured table %s" % table.split(".", 1)[1])
        columns, rows = self._select(sel, table)
        if req.opcode == PREPARE:
            qid = prepared_id(q)
            self._prepared[qid] = q
            bind = [("keyspace_name", "list<text>") for _ in re.finditer(r"\?", q)]
            return result_prepared(qid, bind=bind, result=columns, keyspace=table.split(".")[0], table=table)
        return result_rows(columns, rows, keyspace=table.split(".")[0], table=table.split(".")[-1])

    def _select(self, sel, table):
        """The columns and rows of a SELECT on a system table (unknown tables are empty)."""
        known = _table_columns(table)
        wanted = [c.strip() for c in sel.group(1).split(",")] if sel else []
        if wanted == ["*"]:
            # (An unknown table has one column: the classic driver cannot read a result without.)
            columns = list(known or [("keyspace_name", "text")])
        else:
            types = dict(known or [])
            columns = [(c, types.get(c, "text")) for c in wanted]
        rows = []
        if table == "system.local":
            row = _local_row(self.host)
            rows = [[row.get(name) for name, _t in columns]]
        elif table == "system.peers":
            rows = [[_peer_row(p).get(name) for name, _t in columns] for p in self.peers]
        return columns, rows
