"""One hostile-frame scenario, run in a child process (tests/integration/test_hostile_frames.py).

``python -m tests.integration._hostile_child <driver> <mode> [--rlimit-as-mb N]`` starts the
fake server (tests/integration/_fake_cql.py) in this process, connects ``driver`` (turbocql or
classic) to it, has the server answer one statement with the hostile reply of ``mode`` and
prints one JSON line: what the request raised (class, module, message), how long it took,
this process's resident and virtual memory before, while the request was pending and after,
whether a later statement on the same session succeeds, and the exception class names of
everything raised (a pyo3 PanicException shows there).

A child process, because a hostile frame may crash the process (an allocation failure aborts
a Rust program) or hang it: the parent sees an exit status or a timeout instead of dying with
it. ``--rlimit-as-mb`` caps the address space (RLIMIT_AS) once connected, to see what an
allocation of the declared length does on a machine without that much memory to promise.
"""

import argparse
import json
import logging
import os
import resource
import sys
import threading
import time

from benchmarks.harness.reliability import current_rss_mb
from tests.integration import _fake_cql as fake

TIMEOUT = 3.0
RECOVERY_WAIT = 5.0  # how long a good statement is retried after the hostile one
QUERY = "SELECT v FROM ks.t WHERE k = 1"
GIB = 2**30


def _status_mb(field):
    """A /proc/self/status memory field (VmSize, VmPeak, VmRSS, VmHWM) in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return None


def _rows(columns, rows, **kw):
    return lambda req: fake.result_rows(columns, rows, **kw)


def _column_of_option(option, rows):
    """A ROWS reply of one column "v" whose type is the raw [option] bytes `option` (what the
    fake's encoders cannot write), then `rows` (the row count and cells) as they are."""
    body = fake.int32(fake.ROWS) + fake.int32(1) + fake.int32(1) + fake.string("ks") + fake.string("t")
    return lambda req: (fake.RESULT, body + fake.string("v") + option + rows)


def _bad_cell(typ, raw):
    return lambda req: fake.result_rows([("v", typ)], [[fake.RawValue(raw)]])


# mode -> the reply to the statement (a function of the request)
MODES = {
    # The declared body length is larger than what is sent.
    "short-body-then-close": lambda req: fake.partial_body(1000, 10, fake.CLOSE),
    "short-body-then-stall": lambda req: fake.partial_body(1000, 10, fake.STALL),
    # A huge declared length (nothing of it sent): the reader must not allocate it.
    "2GiB-length-then-stall": lambda req: fake.partial_body(2**31, 0, fake.STALL),
    "2GiB-length-then-close": lambda req: fake.partial_body(2**31, 0, fake.CLOSE),
    "4GiB-length-then-stall": lambda req: fake.partial_body(2**32 - 1, 0, fake.STALL),
    # The largest length the classic driver reads as positive, and then all of it sent: what
    # a driver buffers before it sees the frame end (benchmarks/run_hostile_frame.py measures
    # the classic driver's peak; the test runs turbocql's, refused at the header).
    "2GiB-length-streamed": lambda req: fake.partial_body(2**31 - 1, 0, fake.CLOSE, streamed=2**31 - 1),
    "unknown-opcode": lambda req: fake.unknown_opcode(0x42, b"\x00\x00\x00\x01"),
    # An answer on a stream id nobody asked on, then the real answer.
    "foreign-stream-then-answer": lambda req: [
        fake.on_stream((req.stream + 1000) % 32768, fake.result_void()),
        fake.result_void(),
    ],
    # An EVENT-like negative stream that is not an EVENT.
    "negative-stream-result": lambda req: [fake.on_stream(-5, fake.result_void()), fake.result_void()],
    "request-direction-bit": lambda req: fake.with_version(0x04, fake.result_void()),
    "protocol-v5-version-byte": lambda req: fake.with_version(0x85, fake.result_void()),
    "protocol-v3-version-byte": lambda req: fake.with_version(0x83, fake.result_void()),
    # ROWS bodies that lie.
    "rows-column-count-larger": _rows([("v", "int")], [[1]], column_count=3),
    "rows-column-count-2G": _rows([("v", "int")], [[1]], column_count=2**31 - 1),
    "rows-row-count-larger": _rows([("v", "int")], [[1]], row_count=5),
    "rows-row-count-2G": _rows([("v", "int")], [[1]], row_count=2**31 - 1),
    # Rows with no column take no byte: 2^31-1 of them declared in a 16-byte body.
    "rows-no-columns-2G-rows": _rows([], [], row_count=2**31 - 1),
    "numpy-no-columns-2G-rows": _rows([], [], row_count=2**31 - 1),
    "rows-value-length-larger": _bad_cell("int", fake.int32(1000) + b"\x00\x00\x00\x01"),
    "rows-value-length-2G": _bad_cell("blob", fake.int32(2**31 - 1) + b"\x00"),
    "rows-int-of-3-bytes": _bad_cell("int", fake.int32(3) + b"\x00\x00\x01"),
    "rows-invalid-utf8-text": _bad_cell("text", fake.int32(4) + b"a\xff\xfeb"),
    "rows-list-count-larger": _bad_cell("list<int>", fake.int32(12) + fake.int32(1000) + fake.int32(4) + fake.int32(7)),
    "rows-set-count-2G": _bad_cell("set<int>", fake.int32(12) + fake.int32(2**31 - 1) + fake.int32(4) + fake.int32(7)),
    "rows-map-count-2G": _bad_cell("map<int, int>", fake.int32(4) + fake.int32(2**31 - 1)),
    # A null map key (no node sends one): pyarrow aborts the process on a map array with one, so
    # the Arrow decoder refuses it (found by the columns fuzz target).
    "arrow-map-null-key": _bad_cell(
        "map<int, int>", fake.int32(16) + fake.int32(1) + fake.int32(-1) + fake.int32(4) + fake.int32(7)
    ),
    # An empty key of a type with no empty form reads as null: refused the same way (found by
    # the columns fuzz target: CI's smoke aborted in MapArray::SetData on an int key of 0 bytes).
    "arrow-map-empty-int-key": _bad_cell(
        "map<int, int>", fake.int32(16) + fake.int32(1) + fake.int32(0) + fake.int32(4) + fake.int32(7)
    ),
    "arrow-map-empty-varint-key": _bad_cell(
        "map<varint, int>", fake.int32(16) + fake.int32(1) + fake.int32(0) + fake.int32(4) + fake.int32(7)
    ),
    # A time outside the day (a node never sends one) is no valid Arrow time64 (found by the
    # columns fuzz target); the row path refuses it too.
    "arrow-time-outside-the-day": _bad_cell("time", fake.int32(8) + (-5).to_bytes(8, "big", signed=True)),
    "rows-nested-list-count-larger": _bad_cell(
        "list<frozen<list<int>>>",
        fake.int32(20) + fake.int32(1) + fake.int32(12) + fake.int32(99) + fake.int32(4) + fake.int32(7),
    ),
    "rows-list-element-length-negative": _bad_cell("list<int>", fake.int32(8) + fake.int32(1) + fake.int32(-7)),
    # Bodies cut short.
    "rows-truncated-metadata": lambda req: (fake.RESULT, fake.int32(fake.ROWS) + fake.int32(1) + fake.int32(1)),
    "error-truncated-unavailable": lambda req: (fake.ERROR, fake.int32(0x1000) + fake.string("x") + b"\x00\x04"),
    "error-unknown-code": lambda req: fake.error(0x7777, "what is this"),
    "result-unknown-kind": lambda req: (fake.RESULT, fake.int32(99)),
    # The columnar (numpy) decoder sizes its arrays by the declared row count.
    "numpy-rows-row-count-2G-int": _rows([("v", "int")], [[1]], row_count=2**31 - 1),
    "numpy-rows-row-count-2G-vector": _rows([("v", "vector<float, 1000>")], [[[0.5] * 1000]], row_count=2**31 - 1),
    "empty-result-body": lambda req: (fake.RESULT, b""),
    # A type code no protocol version has (0x00AA) in the result metadata.
    "rows-unknown-type-code": _column_of_option(fake.short(0x00AA), fake.int32(1) + fake.bytes_value(b"x")),
    # A custom type name cut after its "(": scylla-cql 2.0.0 counted its parameters forever
    # (vendor/patches/scylla-cql/0002, found by the rows fuzz target).
    "rows-custom-type-unterminated": _column_of_option(
        fake.short(0x0000) + fake.string("org.apache.cassandra.db.marshal.FrozenType("), fake.int32(0)
    ),
    "rows-unknown-type-code-in-list": _column_of_option(fake.short(0x0020) + fake.short(0x7FFF), fake.int32(0)),
    # Sizes from the metadata that no received byte stands for (src/codec/fill.rs), at the
    # protocol's largest (a vector's dimension and a tuple's field count are 16-bit): a null
    # vector<double, 65535> is 512 KiB of masked zeros in a numpy or Arrow column (4,000 rows:
    # 2 GiB from 16 KB), a null 65,535-field tuple a null in each field of an Arrow struct, and
    # each element of a list of 65,535-field tuples that ends after its first field 65,534
    # Nones (1,000 of 8 bytes: 512 MiB). (An empty element is None, as in the classic driver.)
    "numpy-null-vector-64k-dimension": _rows([("v", "vector<double, 65535>")], [[None]] * 4000),
    "arrow-null-vector-64k-dimension": _rows([("v", "vector<double, 65535>")], [[None]] * 4000),
    "arrow-null-tuple-of-64k-fields": _rows([("v", "tuple<%s>" % ", ".join(["int"] * 65535))], [[None]] * 4000),
    "rows-short-tuples-of-64k-fields": _bad_cell(
        "list<frozen<tuple<%s>>>" % ", ".join(["int"] * 65535),
        fake.int32(4 + 1000 * 8) + fake.int32(1000) + (fake.int32(4) + fake.int32(-1)) * 1000,
    ),
}

# Modes of the PREPARE reply (the statement is prepared: the lie is in the PREPARED result).
PREPARE_MODES = {
    "prepared-pk-count-2G": lambda req: (
        fake.RESULT,
        fake.int32(fake.PREPARED)
        + fake.short_bytes(fake.prepared_id(req.query))
        + fake.int32(0)
        + fake.int32(0)
        + fake.int32(2**31 - 1),
    ),
    "prepared-unknown-type-code": lambda req: (
        fake.RESULT,
        fake.int32(fake.PREPARED)
        + fake.short_bytes(fake.prepared_id(req.query))
        + fake.int32(1)  # Global_tables_spec
        + fake.int32(1)
        + fake.int32(0)
        + fake.string("ks")
        + fake.string("t")
        + fake.string("k")
        + fake.short(0x00AA)
        + fake.int32(0x0004)  # No_metadata
        + fake.int32(0),
    ),
    "prepared-column-count-2G": lambda req: (
        fake.RESULT,
        fake.int32(fake.PREPARED)
        + fake.short_bytes(fake.prepared_id(req.query))
        + fake.int32(1)  # Global_tables_spec
        + fake.int32(2**31 - 1)
        + fake.int32(0)
        + fake.string("ks")
        + fake.string("t"),
    ),
}


def _connect(driver, server, numpy=False, arrow=False):
    if driver == "turbocql":
        from turbocql.cluster import Cluster
        from turbocql.policies import FallthroughRetryPolicy

        kwargs = {}
    else:
        from cassandra.cluster import Cluster
        from cassandra.policies import FallthroughRetryPolicy

        kwargs = {"protocol_version": 4}
    if driver == "turbocql":
        from turbocql.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    else:
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    profile = ExecutionProfile(retry_policy=FallthroughRetryPolicy(), request_timeout=TIMEOUT)
    if numpy:  # the columnar decoder: turbocql's numpy_factory, the classic NumpyProtocolHandler's
        if driver == "turbocql":
            from turbocql.query import numpy_factory as factory
        else:
            from cassandra.query import tuple_factory as factory
        profile.row_factory = factory
    if arrow:  # the Arrow decoder (turbocql's arrow_factory); the classic driver has none
        if driver == "turbocql":
            from turbocql.query import arrow_factory as factory
        else:
            from cassandra.query import tuple_factory as factory
        profile.row_factory = factory
    cluster = Cluster([server.host], port=server.port, execution_profiles={EXEC_PROFILE_DEFAULT: profile}, **kwargs)
    return cluster, cluster.connect()


def _describe(exc):
    if exc is None:
        return None
    out = {
        "class": type(exc).__name__,
        "module": type(exc).__module__,
        "mro": [c.__name__ for c in type(exc).__mro__],
        "message": str(exc)[:500],
    }
    errors = getattr(exc, "errors", None)
    if isinstance(errors, dict):
        out["errors"] = {str(k): "%s: %s" % (type(v).__name__, str(v)[:300]) for k, v in errors.items()}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("driver", choices=["turbocql", "classic"])
    parser.add_argument("mode", choices=sorted(MODES) + sorted(PREPARE_MODES))
    parser.add_argument("--rlimit-as-mb", type=int, default=None)
    parser.add_argument(
        "--linger-s",
        type=float,
        default=0.0,
        help="seconds to stay after the request before the peak is read (a driver may go on "
        "buffering a frame after the request timed out)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL)

    raised_classes = []
    original_excepthook = threading.excepthook

    def hook(hook_args):  # an exception escaping a thread (a panic in a callback, say)
        raised_classes.append(type(hook_args.exc_value).__name__)
        original_excepthook(hook_args)

    threading.excepthook = hook

    out = {"driver": args.driver, "mode": args.mode, "pid": os.getpid()}
    with fake.FakeCqlServer() as server:
        cluster, session = _connect(
            args.driver, server, numpy=args.mode.startswith("numpy-"), arrow=args.mode.startswith("arrow-")
        )
        if args.mode.startswith("numpy-") and args.driver == "classic":
            from cassandra.protocol import NumpyProtocolHandler

            session.client_protocol_handler = NumpyProtocolHandler
        session.execute(QUERY)  # warm: every connection open, the row path used once
        if args.mode.startswith("numpy-"):
            import numpy  # noqa: F401 - imported by the columnar decoder: not the frame's cost
        if args.mode.startswith("arrow-") and args.driver == "turbocql":
            import pyarrow  # noqa: F401 - imported by the Arrow decoder: not the frame's cost

        out["rss_before_mb"] = current_rss_mb()
        out["vmsize_before_mb"] = _status_mb("VmSize")
        if args.rlimit_as_mb is not None:
            limit = int(out["vmsize_before_mb"] * 2**20) + args.rlimit_as_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            out["rlimit_as_mb"] = limit / 2**20
        if args.mode in PREPARE_MODES:
            reply = PREPARE_MODES[args.mode]
            server.handler = lambda req: reply(req) if req.opcode == fake.PREPARE else fake.default_reply(req)

            def run():
                session.execute(session.prepare(QUERY + " AND 1 = 1"), timeout=TIMEOUT)

        else:
            reply = MODES[args.mode]
            server.handler = lambda req: fake.default_reply(req) if req.opcode == fake.PREPARE else reply(req)

            def run():
                session.execute(QUERY, timeout=TIMEOUT)

        result = {}

        def target():
            try:
                run()
                result["exc"] = None
            except BaseException as exc:
                raised_classes.append(type(exc).__name__)
                result["exc"] = exc

        start = time.monotonic()
        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join(0.7)  # mid-request: the declared length read, the body awaited
        out["rss_during_mb"] = current_rss_mb()
        out["vmsize_during_mb"] = _status_mb("VmSize")
        worker.join(TIMEOUT + 10)
        out["elapsed_s"] = round(time.monotonic() - start, 3)
        out["hung"] = worker.is_alive()
        out["exception"] = _describe(result.get("exc")) if not out["hung"] else None
        out["succeeded"] = "exc" in result and result["exc"] is None
        time.sleep(args.linger_s)
        out["rss_after_mb"] = current_rss_mb()
        out["vmsize_peak_mb"] = _status_mb("VmPeak")
        out["rss_peak_mb"] = _status_mb("VmHWM")

        # Does the session serve a good statement again (a new connection if needed)?
        server.handler = fake.default_reply
        recovered_after = None
        t0 = time.monotonic()
        while time.monotonic() - t0 < RECOVERY_WAIT:
            try:
                session.execute(QUERY, timeout=2)
                recovered_after = round(time.monotonic() - t0, 3)
                break
            except Exception as exc:
                raised_classes.append(type(exc).__name__)
                time.sleep(0.2)
        out["recovered_after_s"] = recovered_after
        out["connections"] = server.connections
        out["raised"] = raised_classes
        print(json.dumps(out), flush=True)
        if not out["hung"]:
            cluster.shutdown()
    sys.stdout.flush()
    os._exit(0)  # a hung request's thread must not keep the child alive


if __name__ == "__main__":
    main()
