"""Every public name of the classic driver's user-facing modules, checked against turbocql.

For each module of ``cassandra`` that classic code imports from (``MODULES``), the tool
lists the public names (no leading underscore) that module defines, plus the names it
imports from elsewhere in the ``cassandra`` package (re-exports: classic code does write
``from cassandra.cluster import ConsistencyLevel``). Names a module merely imports from the
standard library or a third-party package (``socket``, ``six``, ``namedtuple``, loggers)
are left out, except the few classic code imports through the driver (``KEPT_IMPORTS``).

The names are read from each module's source (its ``.py``, beside the compiled module) and,
when the module imports here, kept only if the imported module has them (conditional
definitions). A module that needs an optional package (gevent, eventlet, twisted) is read
from its source alone and reported as not importable in the classic driver here.

Each name is then looked up in ``turbocql.<same module>``:

* present: turbocql has it;
* absent: turbocql deliberately does not provide it; ``ABSENT`` gives the reason;
* missing: neither. Any missing name makes the tool exit with status 1.

Usage: ``python scripts/public_names.py`` writes ``scripts/public_names.md`` next to this
file; ``--check`` only checks (no file written). ``tests/unit/test_public_names.py`` calls
:func:`check`.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import importlib.util
import logging
import sys
import types
import warnings
from pathlib import Path

MODULES = (
    "cassandra",
    "cassandra.cluster",
    "cassandra.query",
    "cassandra.concurrent",
    "cassandra.policies",
    "cassandra.auth",
    "cassandra.util",
    "cassandra.metadata",
    "cassandra.connection",
    "cassandra.protocol",
    "cassandra.encoder",
    "cassandra.cqltypes",
    "cassandra.marshal",
    "cassandra.pool",
    "cassandra.timestamps",
    "cassandra.io.asyncorereactor",
    "cassandra.io.libevreactor",
    "cassandra.io.asyncioreactor",
    "cassandra.io.geventreactor",
    "cassandra.io.eventletreactor",
    "cassandra.io.twistedreactor",
)

# Names imported from outside the package that classic code nevertheless imports from the
# driver's module (``from cassandra.util import OrderedDict``: util defined it once).
KEPT_IMPORTS = {
    "cassandra.util": {"OrderedDict"},
}


_PROTOCOL_MESSAGE = "a protocol message class: the engine writes and reads the native protocol itself"
_PROTOCOL_CODEC = "a frame codec helper of the classic protocol layer: the engine encodes and decodes frames"
_REACTOR = "an internal of the classic driver's event loops: the engine does all I/O"
_DSE_GRAPH = "DSE Graph: not supported (turbocql targets Apache Cassandra and ScyllaDB)"
_DSE = "DataStax Enterprise only: not supported (turbocql targets Apache Cassandra and ScyllaDB)"
_INSIGHTS = "DSE Insights monitor reporting: not supported"
_POOL = "a connection-pool internal of the classic driver: the engine (the scylla crate) keeps the pools"
_CONN = "an internal of the classic driver's connections: the engine opens and runs the connections"
_SCHEMA_PARSER = "a schema parser of the classic driver: the schema is read by turbocql._metadata.schema_read"
_COLUMN_ENCRYPTION = "client-side column encryption: not supported (Cluster(column_encryption_policy=) is ignored)"
_CYTHON = "the classic driver's Cython/numpy decoding switch: the engine decodes rows in Rust"
_V5 = "native protocol v5 framing (segments, CRCs): the engine speaks protocol v4"

# name -> reason, or "module:name" -> reason for one module only. A name listed here that
# turbocql does provide counts as present (and is listed as a stale reason).
_SNI = "the engine connects to each node's own address; routing through an SNI proxy is not supported"

ABSENT: dict[str, str] = {
    # cassandra.cluster
    "GraphExecutionProfile": _DSE_GRAPH,
    "GraphAnalyticsExecutionProfile": _DSE_GRAPH,
    "conn_class": "the classic driver's choice of event loop at import: the engine does all I/O",
    "conn_fns": "the classic driver's choice of event loop at import: the engine does all I/O",
    "excs": "the classic driver's choice of event loop at import: the engine does all I/O",
    "refresh_schema_and_set_result": "a callback of the classic control connection: the engine refreshes the schema",
    "run_in_executor": "a decorator of the classic driver's executor threads: the engine runs requests",
    "ConnectionHeartbeat": _CONN,
    "ContinuousPagingState": "DSE continuous paging: not supported",
    "ContinuousPagingSession": "DSE continuous paging: not supported",
    "GraphOptions": _DSE_GRAPH,
    "GraphProtocol": _DSE_GRAPH,
    "GraphSON1Serializer": _DSE_GRAPH,
    "GraphSON2Serializer": _DSE_GRAPH,
    "GraphSON3Serializer": _DSE_GRAPH,
    "GraphStatement": _DSE_GRAPH,
    "SimpleGraphStatement": _DSE_GRAPH,
    "graph_graphson2_row_factory": _DSE_GRAPH,
    "graph_graphson3_row_factory": _DSE_GRAPH,
    "graph_object_row_factory": _DSE_GRAPH,
    "MonitorReporter": _INSIGHTS,
    "version_supports_insights": _INSIGHTS,
    "HostConnection": _POOL,
    "SniEndPoint": _SNI,
    "SniEndPointFactory": _SNI,
    "UnixSocketEndPoint": "the engine connects over TCP only",
    # cassandra.protocol: message classes and frame codecs
    **dict.fromkeys(
        (
            "AuthChallengeMessage",
            "AuthResponseMessage",
            "AuthSuccessMessage",
            "AuthenticateMessage",
            "CredentialsMessage",
            "EventMessage",
            "OptionsMessage",
            "PrepareMessage",
            "ReadyMessage",
            "RegisterMessage",
            "ReviseRequestMessage",
            "StartupMessage",
            "SupportedMessage",
        ),
        _PROTOCOL_MESSAGE,
    ),
    **dict.fromkeys(
        (
            "read_error_code_map",
            "read_uint_le",
            "write_uint_le",
            "register_class",
            "get_registered_classes",
            "error_classes",
            "known_event_types",
            "COMPRESSED_FLAG",
            "CUSTOM_PAYLOAD_FLAG",
            "TRACING_FLAG",
            "USE_BETA_FLAG",
            "USE_BETA_MASK",
            "WARNING_FLAG",
            "HEADER_DIRECTION_MASK",
            "HEADER_DIRECTION_TO_CLIENT",
            "HEADER_DIRECTION_FROM_CLIENT",
            "PROTOCOL_VERSION_MASK",
            "frame_header_v1_v2",
            "frame_header_v3",
            "header_pack",
            "header_struct",
            "header_unpack",
            "v3_header_pack",
            "v3_header_struct",
            "v3_header_unpack",
            "ErrorMessageSub",
            "ErrorMessageSubclass",
        ),
        _PROTOCOL_CODEC,
    ),
    "cython_protocol_handler": _CYTHON,
    "HAVE_CYTHON": _CYTHON,
    "HAVE_NUMPY": _CYTHON,
    "LazyParser": _CYTHON,
    "ListParser": _CYTHON,
    "NumpyParser": _CYTHON,
    # cassandra.connection
    "HeartbeatFuture": _CONN,
    "ResponseWaiter": _CONN,
    "defunct_on_error": _CONN,
    "locally_supported_compressions": "the classic driver's compressor table: the engine has LZ4 built in",
    "DEFAULT_CQL_VERSION": "a STARTUP option of the classic driver's connections: the engine sends its own",
    "DRIVER_NAME": "a STARTUP option of the classic driver's connections: the engine sends its own",
    "DRIVER_VERSION": "a STARTUP option of the classic driver's connections: the engine sends its own",
    "NONBLOCKING": _REACTOR,
    "Timer": _REACTOR,
    "TimerManager": _REACTOR,
    "CrcMismatchException": _V5,
    "CrcException": _V5,
    "SegmentCodec": _V5,
    "segment_codec_lz4": _V5,
    "segment_codec_no_compression": _V5,
    # reactors
    "AsyncoreLoop": _REACTOR,
    "WaitableTimer": _REACTOR,
    "LibevLoop": _REACTOR,
    "AsyncioTimer": _REACTOR,
    "TwistedConnectionProtocol": _REACTOR,
    "TwistedLoop": _REACTOR,
    "import_exception": _REACTOR,
    "no_pyopenssl_error": _REACTOR,
    # cassandra.policies
    "ColDesc": _COLUMN_ENCRYPTION,
    "ColumnEncryptionPolicy": _COLUMN_ENCRYPTION,
    "DSELoadBalancingPolicy": _DSE,
    "cassandra.connection:QueryMessage": _PROTOCOL_MESSAGE + " (turbocql.protocol has the class as a value)",
    "cassandra.connection:ResultMessage": _PROTOCOL_MESSAGE + " (turbocql.protocol has the class as a value)",
    "cassandra.policies:WT": "an import alias used inside cassandra.policies (classic code names it WriteType)",
    # cassandra.auth
    "GSSAPIAuthenticator": "Kerberos (GSSAPI) authentication: the engine authenticates with username/password only",
    # cassandra.metadata
    **dict.fromkeys(
        (
            "SchemaParserDSE60",
            "SchemaParserDSE67",
            "SchemaParserDSE68",
            "SchemaParserV22",
            "SchemaParserV3",
            "SchemaParserV4",
        ),
        _SCHEMA_PARSER,
    ),
    "TableMetadataDSE68": _DSE + " (graph tables)",
    "VertexMetadata": _DSE_GRAPH,
    "EdgeMetadata": _DSE_GRAPH,
    "RLACTableExtension": _DSE + " (row-level access control)",
    "ReplicationStrategyTypeType": "the metaclass registering the classic replication strategy classes "
    "(turbocql.metadata.ReplicationStrategy subclasses are looked up by name)",
    "NoMurmur3": "raised by the classic driver when its murmur3 C extension is missing: turbocql's is always there",
    # cassandra.cqltypes
    "casstype_scanner": "the classic driver's re.Scanner for type strings (lookup_casstype and "
    "parse_casstype_args are the API)",
    "cql_type_scanner": "the classic driver's re.Scanner for type strings (cql_types_from_string is the API)",
    "WKBGeometryType": "the classic driver's WKB constants (turbocql.cqltypes encodes points, lines and polygons)",
    # cassandra.util
    "cassandra.util:DATETIME_EPOC": "a module constant of the classic driver (datetime(1970, 1, 1))",
    "cassandra.util:UTC_DATETIME_EPOC": "a module constant of the classic driver (datetime(1970, 1, 1, tzinfo=utc))",
    "cassandra.util:VERSION_REGEX": "the regular expression behind Version (Version is the API)",
    "cassandra.util:is_little_endian": "the byte order of the machine (sys.byteorder)",
    "cassandra.util:WeakSet": "a Python 2 era copy of weakref.WeakSet",
    # cassandra.encoder: util's value classes, passed along by the classic module
    **{
        "cassandra.encoder:" + name: "a value class of turbocql.util (turbocql.encoder imports only the standard "
        "library, as tests/unit/test_encoder.py checks)"
        for name in (
            "Date",
            "LineString",
            "OrderedMap",
            "OrderedMapSerializedKey",
            "Point",
            "Polygon",
            "Time",
            "sortedset",
        )
    },
    # cassandra.concurrent
    "ConcurrentExecutorFutureResults": "the classic Python loop behind execute_concurrent_async: execute_concurrent "
    "runs in the engine",
    "ConcurrentExecutorGenResults": "the classic Python loop behind execute_concurrent: it runs in the engine",
    "ConcurrentExecutorListResults": "the classic Python loop behind execute_concurrent: it runs in the engine",
    # cassandra.query
    "HostTargetingStatement": "a DSE insights helper statement; execute(..., host=...) targets a host",
}


@dataclasses.dataclass
class ModuleReport:
    """The result for one classic module."""

    classic: str
    turbocql: str
    importable: bool
    defined: list[str]
    reexported: list[str]
    present: list[str] = dataclasses.field(default_factory=list)
    absent: dict[str, str] = dataclasses.field(default_factory=dict)
    missing: list[str] = dataclasses.field(default_factory=list)
    stale: list[str] = dataclasses.field(default_factory=list)
    turbocql_error: str | None = None

    @property
    def names(self) -> list[str]:
        return sorted(set(self.defined) | set(self.reexported))


@dataclasses.dataclass
class Report:
    modules: list[ModuleReport]

    @property
    def missing(self) -> list[str]:
        return ["%s.%s" % (m.turbocql, n) for m in self.modules for n in m.missing]

    @property
    def ok(self) -> bool:
        return not self.missing


def _source_of(module_name: str) -> Path:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise ImportError("no source for %s" % module_name)
    origin = Path(spec.origin)
    if origin.suffix != ".py":  # compiled with Cython: the .py is installed beside it
        origin = origin.with_name(origin.name.split(".")[0] + ".py")
    return origin


def _is_logger_call(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute | ast.Name)
        and (value.func.attr if isinstance(value.func, ast.Attribute) else value.func.id) == "getLogger"
    )


def _top_level_names(module_name: str, body: list[ast.stmt], out: dict[str, str]) -> None:
    """Fills ``out`` with name -> ``def``, ``re:<module>`` (imported from the package),
    ``ext`` (imported from elsewhere) or ``logger``, for the module's top-level statements
    (including those inside if / try / with blocks, where conditional definitions live)."""
    package = module_name.split(".")
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = "def"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            kind = "logger" if _is_logger_call(node.value) else "def"
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        out[sub.id] = kind
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + (1 if module_name == "cassandra" else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            internal = source == "cassandra" or source.startswith("cassandra.")
            for alias in node.names:
                out.setdefault(alias.asname or alias.name, ("re:" + source) if internal else "ext")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], "ext")
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
            for field in ("body", "orelse", "finalbody"):
                _top_level_names(module_name, getattr(node, field, None) or [], out)
            for handler in getattr(node, "handlers", []):
                _top_level_names(module_name, handler.body, out)


def classic_names(module_name: str) -> tuple[bool, list[str], list[str]]:
    """(importable here, names defined, names re-exported from the package) of one
    classic module."""
    kinds: dict[str, str] = {}
    _top_level_names(module_name, ast.parse(_source_of(module_name).read_text()).body, kinds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # asyncore and friends warn at import
        try:
            module: types.ModuleType | None = importlib.import_module(module_name)
        except ImportError:
            module = None
        except Exception as exc:  # the classic DependencyException (asyncore gone in 3.12)
            if type(exc).__name__ != "DependencyException":
                raise
            module = None
    kept = KEPT_IMPORTS.get(module_name, set())
    defined, reexported = [], []
    for name, kind in kinds.items():
        if name.startswith("_"):
            continue
        if name in kept:
            defined.append(name)
            continue
        if kind in ("ext", "logger"):
            continue
        if module is not None:
            if not hasattr(module, name):
                continue  # a conditional definition not taken here
            value = getattr(module, name)
            if isinstance(value, types.ModuleType | logging.Logger):
                continue
            owner = getattr(value, "__module__", None)
            if (
                kind.startswith("re:")
                and isinstance(owner, str)
                and isinstance(value, type | types.FunctionType | types.BuiltinFunctionType)
                and not (owner == "cassandra" or owner.startswith("cassandra."))
            ):
                continue  # the package passed a stdlib name along (OrderedDict via util)
        (defined if kind == "def" else reexported).append(name)
    return module is not None, sorted(defined), sorted(reexported)


def _turbocql_module(classic: str) -> str:
    return "turbocql" + classic[len("cassandra") :]


def _reason(classic: str, name: str) -> str | None:
    return ABSENT.get("%s:%s" % (classic, name)) or ABSENT.get(name)


def check_module(classic: str) -> ModuleReport:
    importable, defined, reexported = classic_names(classic)
    report = ModuleReport(classic, _turbocql_module(classic), importable, defined, reexported)
    try:
        target: types.ModuleType | None = importlib.import_module(report.turbocql)
    except ImportError as exc:
        target = None
        report.turbocql_error = "%s: %s" % (type(exc).__name__, exc)
    for name in report.names:
        reason = _reason(classic, name)
        if target is not None and hasattr(target, name):
            report.present.append(name)
            if reason is not None:
                report.stale.append(name)
        elif reason is not None:
            report.absent[name] = reason
        else:
            report.missing.append(name)
    return report


def check(modules: tuple[str, ...] = MODULES) -> Report:
    """Checks every module; ``report.missing`` lists the names turbocql lacks without a reason."""
    return Report([check_module(m) for m in modules])


def render(report: Report) -> str:
    lines = [
        "# Public names of the classic driver in turbocql",
        "",
        "Written by `scripts/public_names.py` (run it again after a change; "
        "`tests/unit/test_public_names.py` fails while a name is missing). For each module of the classic "
        "driver (`cassandra-driver` as installed in the venv): its public names (defined there, or "
        "imported from elsewhere in the package: re-exported), and whether `turbocql.<same module>` has "
        "each: present, absent (deliberately, with the reason), or missing.",
        "",
        "| classic module | names (defined + re-exported) | present | absent with reason | missing |",
        "| --- | --- | --- | --- | --- |",
    ]
    totals = [0, 0, 0, 0]
    for m in report.modules:
        counts = [len(m.names), len(m.present), len(m.absent), len(m.missing)]
        totals = [a + b for a, b in zip(totals, counts)]
        note = "" if m.importable else " (not importable in the classic driver here)"
        lines.append(
            "| `%s`%s | %d (%d + %d) | %d | %d | %d |"
            % (m.classic, note, counts[0], len(m.defined), len(m.reexported), counts[1], counts[2], counts[3])
        )
    lines.append("| **all** | %d | %d | %d | %d |" % tuple(totals))
    lines += [
        "",
        "A module marked not importable needs an optional package missing here (gevent, eventlet, "
        "twisted); its names are read from its source. turbocql's module of the same name imports "
        "without it: its connection class only names the choice, the engine does all I/O.",
    ]
    for m in report.modules:
        lines += ["", "## `%s` → `%s`" % (m.classic, m.turbocql), ""]
        if not m.importable:
            lines += ["Not importable in the classic driver here (an optional package is missing).", ""]
        if m.turbocql_error:
            lines += ["turbocql module not importable: %s" % m.turbocql_error, ""]
        defined = set(m.defined)
        present = ["`%s`%s" % (n, "" if n in defined else " (re-export)") for n in m.present]
        lines.append("Present (%d): %s" % (len(present), ", ".join(present) or "none"))
        lines.append("")
        if m.absent:
            lines.append("Absent, with the reason (%d):" % len(m.absent))
            lines.append("")
            lines += ["- `%s`: %s" % (n, r) for n, r in sorted(m.absent.items())]
            lines.append("")
        lines.append("Missing (%d): %s" % (len(m.missing), ", ".join("`%s`" % n for n in m.missing) or "none"))
        if m.stale:
            lines += ["", "Listed as absent but present (reason no longer needed): " + ", ".join(m.stale)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check only; do not write public_names.md")
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("public_names.md"))
    args = parser.parse_args(argv)
    report = check()
    if not args.check:
        args.output.write_text(render(report))
    for m in report.modules:
        print(
            "%-32s names %3d  present %3d  absent %3d  missing %3d"
            % (m.classic, len(m.names), len(m.present), len(m.absent), len(m.missing))
        )
    if report.missing:
        print("missing without a reason:", ", ".join(report.missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
