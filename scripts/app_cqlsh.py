#!/usr/bin/env python3
"""Run cqlsh, unmodified, on the classic driver and on turbocql through the shim, and compare.

cqlsh (PyPI ``cqlsh``, a real application built on the classic driver: its formatting reads
``cassandra.cqltypes``, its DESCRIBE / COPY read ``cluster.metadata`` and the token map,
COPY runs worker processes with their own clusters, prepared statements and batches) is
installed in its own virtualenv (default ~/.cache/turbocql/cqlsh-venv) if absent, with its
dependency cassandra-driver. Each command of COMMANDS is then run against a node twice:

* classic: ``python -m cqlshlib HOST PORT -e "..."`` (the real cassandra-driver);
* turbocql: ``python -m turbocql.compat --allow-shadow -m cqlshlib HOST PORT -e "..."`` with
  this checkout's python/ first on PYTHONPATH, so every ``import cassandra`` is turbocql;

and, when the checkout lacks driver names cqlsh uses that live outside the modules this
runner's author owns (PENDING below: each patches a missing attribute only, so it turns into
a no-op once the real change lands), a third time with those stand-ins applied first:
"turbocql + pending". The outputs are normalized (timings, rates, trace ids and times) and
compared; the report (``scripts/app_cqlsh.md`` by default) gives per command: same output /
differs / fails, with the reason (REASONS) and the first differing lines.

Usage:

    .venv/bin/python scripts/app_cqlsh.py [--target HOST:PORT ...] [--out scripts/app_cqlsh.md]
        [--venv DIR] [--no-pending]

Several --target (default 127.0.0.1:9042) give one table each in the same report. The
keyspace ``app_cqlsh`` is created (replication 1) and left in place.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "turbocql"
CQLSH_VERSION = "6.2.2"
KS = "app_cqlsh"

COLUMNS = (
    "k int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, d date, de decimal, db double, du duration, "
    "f float, i inet, it int, sm smallint, t text, ts timestamp, tm time, tu timeuuid, ti tinyint, u uuid, "
    "vc varchar, vi varint, l list<int>, s set<text>, m map<text, int>, fm frozen<map<int, text>>, "
    "tp tuple<int, text, boolean>, ud addr, fu frozen<addr>, v vector<float, 3>, nl list<frozen<list<int>>>, "
    "ms map<frozen<set<int>>, text>, mu map<frozen<addr>, int>, mb map<blob, int>"
)
# COPY FROM cannot read a duration, nor a date/timestamp outside Python's years (cqlsh
# itself, on either driver): the COPY tables leave those out.
COPY_COLUMNS = COLUMNS.replace(" du duration,", "")

SETUP = [
    "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" % KS,
    # {rf}: 1 on one node, 3 on a cluster (reads at ONE then survive a node another test stopped)
    "ALTER KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': {rf}};" % KS,
    "CREATE TYPE IF NOT EXISTS %s.addr (street text, zip int, tags frozen<set<text>>);" % KS,
    "CREATE TABLE IF NOT EXISTS %s.all_types (%s);" % (KS, COLUMNS),
    "CREATE TABLE IF NOT EXISTS %s.copy_src (%s);" % (KS, COPY_COLUMNS),
    "CREATE TABLE IF NOT EXISTS %s.copy_dst (%s);" % (KS, COPY_COLUMNS),
    "CREATE TABLE IF NOT EXISTS %s.kv (k int PRIMARY KEY, v text);" % KS,
    "CREATE TABLE IF NOT EXISTS %s.wide (p int, c int, v text, PRIMARY KEY (p, c));" % KS,
    # (DELETE, not TRUNCATE: TRUNCATE needs every node up)
    "DELETE FROM %s.all_types WHERE k IN (1, 2, 3, 4, 5);" % KS,
    "DELETE FROM %s.copy_src WHERE k IN (1, 2, 3);" % KS,
]
ROW1 = (
    "1, 'ascii', -9223372036854775808, 0xcafe00, true, '2024-02-29', 123.456e-10, 3.141592653589793, "
    "%s1.5, '192.168.0.1', -2147483648, -32768, 'text ünïcödé ''q''', '2024-02-29 12:34:56.789+0000', "
    "'23:59:59.123456789', 50554d6e-29bb-11e5-b345-feff819cdc9f, -128, 6ab09bec-e68e-48d9-a5f8-97e6fb4c9b47, "
    "'varchar', 123456789012345678901234567890, [1, 2, 3], {'a', 'b'}, {'x': 1, 'y': 2}, {1: 'one'}, "
    "(1, 'two', false), {street: 'Main', zip: 12345, tags: {'t1'}}, {street: 'Elm', zip: null, tags: null}, "
    "[1.0, -2.5, 3.25], [[1, 2], [3]], {{1, 2}: 'set12'}, {{street: 'k', zip: 1, tags: {'z'}}: 7}, "
    "{0x01: 1, 0x0203: 2}"
)
NAMES = (
    "k, a, b, bl, bo, d, de, db, %sf, i, it, sm, t, ts, tm, tu, ti, u, vc, vi, l, s, m, fm, tp, ud, fu, v, nl, ms, mu, "
    "mb"
)
ROW2_NAMES = "k, a, b, bl, bo, d, de, db, %sf, i, it, sm, t, ts, tm, tu, ti, u, vc, vi"
ROW2 = (
    "2, '', 9223372036854775807, 0x, false, '1970-01-01', -0.0, NaN, %s-Infinity, '::1', 2147483647, 32767, '', "
    "'1969-12-31 23:59:59.999+0000', '00:00:00', d725b330-e753-11f1-81b9-b37194e7d15e, 127, "
    "00000000-0000-0000-0000-000000000000, 'x', -1"
)
for table, du, du_value, du_value2 in (
    ("all_types", "du, ", "1y2mo3w4d5h6m7s8ms9us10ns, ", "-1d, "),
    ("copy_src", "", "", ""),
):
    SETUP.append("INSERT INTO %s.%s (%s) VALUES (%s);" % (KS, table, NAMES % du, ROW1 % du_value))
    SETUP.append("INSERT INTO %s.%s (%s) VALUES (%s);" % (KS, table, ROW2_NAMES % du, ROW2 % du_value2))
    SETUP.append("INSERT INTO %s.%s (k) VALUES (3);" % (KS, table))
SETUP += [
    # out of Python's datetime range: cqlsh shows the raw number (its DateType hook)
    "INSERT INTO %s.all_types (k, ts, d, db, f, de) VALUES (4, '9999-12-31 23:59:59.999+0000', '-5877641-06-23', "
    "1e300, 3.4e38, 1e-50);" % KS,
    "INSERT INTO %s.all_types (k, ts, d) VALUES (5, -62135596800001, 0);" % KS,
    "BEGIN UNLOGGED BATCH "
    + " ".join("INSERT INTO %s.wide (p, c, v) VALUES (%d, %d, 'v%d');" % (KS, i % 3, i, i) for i in range(25))
    + " APPLY BATCH;",
]

# (name, cqlsh commands). {csv} is a file of this run, {classic_csv} the one the classic
# run of copy_to wrote (the same input for both COPY FROM runs).
COMMANDS = [
    ("select release_version", "SELECT release_version FROM system.local;"),
    ("DESCRIBE KEYSPACES", "DESCRIBE KEYSPACES;"),
    ("DESCRIBE TABLE", "DESCRIBE TABLE %s.all_types;" % KS),
    ("DESCRIBE TYPE", "DESCRIBE TYPE %s.addr;" % KS),
    ("DESCRIBE KEYSPACE", "DESCRIBE KEYSPACE %s;" % KS),
    ("DESCRIBE SCHEMA", "DESCRIBE SCHEMA;"),
    ("DESCRIBE CLUSTER", "DESCRIBE CLUSTER;"),
    ("SHOW VERSION / HOST", "SHOW VERSION; SHOW HOST;"),
    ("SELECT every CQL type", "SELECT * FROM %s.all_types;" % KS),
    ("EXPAND ON", "EXPAND ON; SELECT * FROM %s.all_types WHERE k = 1;" % KS),
    (
        "SELECT token(), functions",
        "SELECT token(k), k, toJson(l), blobAsText(bl), ttl(a) FROM %s.all_types WHERE k = 1;" % KS,
    ),
    ("SELECT JSON", "SELECT JSON k, m, ms, tp, ud FROM %s.all_types WHERE k = 1;" % KS),
    (
        "CREATE/INSERT/UPDATE/DELETE",
        f"DELETE FROM {KS}.kv WHERE k IN (1, 2); INSERT INTO {KS}.kv (k, v) VALUES (1, 'a'); "
        f"UPDATE {KS}.kv SET v = 'b' WHERE k = 1; "
        f"INSERT INTO {KS}.kv (k, v) VALUES (2, 'c') USING TTL 1000; SELECT k, v FROM {KS}.kv; "
        f"DELETE FROM {KS}.kv WHERE k = 1; SELECT * FROM {KS}.kv;",
    ),
    (
        "lightweight transactions",
        f"DELETE FROM {KS}.kv WHERE k = 7; INSERT INTO {KS}.kv (k, v) VALUES (7, 'x') IF NOT EXISTS; "
        f"INSERT INTO {KS}.kv (k, v) VALUES (7, 'y') IF NOT EXISTS; "
        f"UPDATE {KS}.kv SET v = 'z' WHERE k = 7 IF v = 'x';",
    ),
    (
        "BATCH",
        f"BEGIN BATCH INSERT INTO {KS}.kv (k, v) VALUES (10, 'p'); INSERT INTO {KS}.kv (k, v) VALUES (11, 'q'); "
        f"APPLY BATCH; SELECT * FROM {KS}.kv WHERE k IN (10, 11);",
    ),
    ("USE + unqualified", "USE %s; SELECT * FROM kv WHERE k = 10;" % KS),
    ("paging (PAGING 4)", "PAGING 4; SELECT * FROM %s.wide;" % KS),
    ("PAGING OFF", "PAGING OFF; SELECT c, v FROM %s.wide WHERE p = 1;" % KS),
    (
        "CONSISTENCY",
        "CONSISTENCY; CONSISTENCY QUORUM; CONSISTENCY; SERIAL CONSISTENCY; SERIAL CONSISTENCY LOCAL_SERIAL; "
        "SELECT k FROM %s.all_types WHERE k = 1;" % KS,
    ),
    (
        "CONSISTENCY ALL",
        "CONSISTENCY ALL; SELECT k FROM %s.kv WHERE k = 10;" % KS,
    ),
    ("TRACING ON", "TRACING ON; SELECT k FROM %s.all_types WHERE k = 1;" % KS),
    ("syntax error", "SELEC * FROM x;"),
    ("unknown table", "SELECT * FROM %s.nope;" % KS),
    ("unknown keyspace", "USE nope_ks;"),
    ("invalid query", "SELECT * FROM %s.all_types WHERE a = 'x';" % KS),
    ("type error in a value", "INSERT INTO %s.kv (k, v) VALUES ('one', 'x');" % KS),
    ("COPY TO", "COPY %s.copy_src TO '{csv}' WITH HEADER = true;" % KS),
    (
        "COPY FROM",
        f"DELETE FROM {KS}.copy_dst WHERE k IN (1, 2, 3); "
        f"COPY {KS}.copy_dst FROM '{{classic_csv}}' WITH HEADER = true; "
        f"SELECT * FROM {KS}.copy_dst;",
    ),
    (
        "COPY FROM (unprepared, small batches)",
        f"DELETE FROM {KS}.copy_dst WHERE k IN (1, 2, 3); "
        f"COPY {KS}.copy_dst FROM '{{classic_csv}}' WITH HEADER = true AND "
        f"PREPAREDSTATEMENTS = false AND MAXBATCHSIZE = 1; SELECT * FROM {KS}.copy_dst;",
    ),
]

# Why a command's output differs (or fails) on turbocql, when it is understood.
REASONS = {
    "SELECT every CQL type": (
        "cqlsh replaces `cassandra.cqltypes.DateType.deserialize` to show timestamps beyond Python's "
        "datetime as numbers, with a DateOverFlowWarning; turbocql's engine decodes rows in Rust and "
        "calls it only for the timestamps datetime cannot hold (so those show as numbers with the "
        "warning, as classic). For 9999-12-31 23:59:59.999 the classic hook computes `ms / 1000.0` in "
        "floating point and prints .998993; the engine prints the exact .999000."
    ),
    "SHOW VERSION / HOST": (
        "the native protocol version: the classic driver negotiates v5 with Cassandra 5, turbocql's engine "
        "(the scylla crate) speaks v4."
    ),
    "COPY FROM": (
        "cqlsh's COPY FROM workers fill the classic driver's private `BatchStatement._statements_and_parameters` "
        "with its internal triples, `(True, query_id, bound values)` (prepared) or `(False, query string, ())`; "
        "turbocql's batches hold `(statement, values)` pairs and the engine refuses the triples (\"batch statement "
        "0 must be a str or a prepared statement\"), so no row is written; the worker's error report then fails "
        "to pickle cqlsh's own UDT namedtuple (PicklingError, as on the classic driver when a batch fails). Needs "
        "query.py / the engine to accept the triples (a prepared one found by its query_id)."
    ),
    "DESCRIBE SCHEMA": (
        "when it differs: other sessions (the tests of other work on the same node) created or dropped keyspaces "
        "between the classic and the turbocql run."
    ),
    "DESCRIBE KEYSPACES": "when it differs: as for DESCRIBE SCHEMA.",
    "COPY FROM (unprepared, small batches)": (
        "as above (the `(False, query string, ())` triples). The classic run fails row 1 too: cqlsh writes its "
        "UDT literal `{street: 'Elm', zip: , tags: }` for null fields, a syntax error."
    ),
    "TRACING ON": (
        "compared on the trace's header and its first, Parsing and last events, with ids, times and "
        "numbers masked (they change at every run). Not compared: the classic driver 3.30.1 makes event "
        "times timezone-aware (cqlsh prints `+00:00` after them), turbocql's TraceEvent naive (query.py)."
    ),
}

# Stand-ins for names cqlsh uses that live in modules this runner's author does not own
# (cluster.py, query.py, protocol.py). Each is applied only when the name is missing.
PENDING = r"""
import turbocql.cluster as _c, turbocql.protocol as _p, turbocql.query as _q
from turbocql import cqltypes as _t
_R = _c.ResponseFuture
_applied = []
if not hasattr(_R, "is_schema_agreed"):
    _R.is_schema_agreed = True  # the engine awaits schema agreement after DDL itself
    _applied.append("ResponseFuture.is_schema_agreed")
if not hasattr(_c.Cluster, "get_control_connection_host"):
    def get_control_connection_host(self):
        for point in self.contact_points:
            host = self.metadata.get_host(point)
            if host is not None and host.is_up is not False:
                return host
        return next((h for h in self.metadata.all_hosts() if h.is_up is not False), None)
    _c.Cluster.get_control_connection_host = get_control_connection_host
    _applied.append("Cluster.get_control_connection_host")
if "message" not in _p.ErrorMessage.__dict__:
    def _message(self):
        text = str(self)
        i = text.find(' message="')
        return text[i + 10:-1] if i >= 0 and text.endswith('"') else text
    _p.ErrorMessage.message = property(_message)
    _applied.append("ErrorMessage.message")
if not hasattr(_q.PreparedStatement, "protocol_version"):
    _q.PreparedStatement.protocol_version = 4
    _applied.append("PreparedStatement.protocol_version")
if True:  # a no-op once column_metadata holds classes
    _init = _q.PreparedStatement.__init__
    def __init__(self, *args, **kwargs):
        _init(self, *args, **kwargs)
        self.column_metadata = [m._replace(type=_t._lookup_cql_type(m.type)) if isinstance(m.type, str) else m
                                for m in self.column_metadata]
    _q.PreparedStatement.__init__ = __init__
    _applied.append("PreparedStatement.column_metadata types as cqltypes classes (when they are str)")
import os
if os.environ.get("APP_CQLSH_PENDING_LOG"):
    with open(os.environ["APP_CQLSH_PENDING_LOG"], "w") as _f:
        _f.write("\n".join(_applied))
"""

LAUNCH = r"""
import runpy, sys
import turbocql.compat
turbocql.compat.install(allow_shadow=True)
exec(compile(open(%r).read(), "pending", "exec"))
sys.argv = ["cqlsh"] + sys.argv[1:]
runpy.run_module("cqlshlib", run_name="__main__", alter_sys=True)
"""


def log(msg: str) -> None:
    print("[app_cqlsh] %s" % msg, flush=True)


def ensure_cqlsh(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(python), "-c", "import cqlshlib"], capture_output=True).returncode:
        log("installing cqlsh %s into %s" % (CQLSH_VERSION, venv))
        subprocess.run([str(python), "-m", "pip", "install", "-q", "cqlsh==%s" % CQLSH_VERSION], check=True)
    return python


def versions(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('cqlsh'), m.version('cassandra-driver'))"],
        capture_output=True,
        text=True,
    ).stdout.split()
    return "cqlsh %s, cassandra-driver %s" % (out[0], out[1]) if len(out) == 2 else "?"


def run_cqlsh(prefix: list[str], host: str, port: int, command: str, env: dict, cwd: Path) -> tuple:
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [*prefix, host, str(port), "-e", command],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=180,
        )
        rc, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, text = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
    return rc, text, time.monotonic() - start


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?")


def normalize(name: str, text: str, paths: dict) -> list[str]:
    for path, label in paths.items():
        text = text.replace(path, label)
    lines = []
    for line in text.replace("\r", "\n").splitlines():
        if line.startswith("Processed:") or "rows/s" in line:
            continue  # progress lines: their count depends on timing
        line = re.sub(r"in \d+\.\d+ seconds", "in N seconds", line)
        line = re.sub(r"in 0 day, 0 hour, 0 minute, and \d+\.\d+ seconds", "in N seconds", line)
        if name == "TRACING ON":
            line = UUID.sub("<uuid>", line)
            line = TIMESTAMP.sub("<time>", line)
            line = re.sub(r"\b\d+\b", "N", line)
            line = re.sub(r"[ -]+", " ", line).strip()
            if not (
                line.startswith("Tracing session")
                or "activity" in line
                or "Execute CQL" in line
                or "Request complete" in line
            ):
                continue
        lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare(name: str, classic: tuple, other: tuple, paths: dict, files: tuple | None) -> tuple[str, list[str]]:
    rc_c, out_c, _ = classic
    rc_o, out_o, _ = other
    a, b = normalize(name, out_c, paths), normalize(name, out_o, paths)
    if files is not None:
        fa, fb = files
        a += ["--- file ---"] + (sorted(fa.read_text().splitlines()) if fa.exists() else ["(no file)"])
        b += ["--- file ---"] + (sorted(fb.read_text().splitlines()) if fb.exists() else ["(no file)"])
    diff = list(difflib.unified_diff(a, b, "classic", "turbocql", n=0, lineterm=""))[2:]
    if rc_o == "timeout" or (rc_o != rc_c and rc_c == 0) or any("Traceback" in line for line in b if line not in a):
        status = "fails"
    elif a == b and rc_o == rc_c:
        status = "same output"
    else:
        status = "differs"
    return status, diff


def run_target(python: Path, host: str, port: int, pending: bool, work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURBOCQL_COMPAT", "PYTHON"))}
    env["CQLSH_NO_BUNDLED"] = "1"
    env["PYTHONPATH"] = str(ROOT / "python")
    setup = work / "setup.cql"
    rf = 1 if host in ("127.0.0.1", "localhost") else 3
    setup.write_text("\n".join(SETUP).replace("{rf}", str(rf)) + "\n")
    proc = subprocess.run(
        [str(python), "-m", "cqlshlib", host, str(port), "-f", str(setup)], capture_output=True, text=True, env=env
    )
    if proc.returncode:
        raise SystemExit("setup failed on %s:%d: %s" % (host, port, (proc.stdout + proc.stderr)[-2000:]))
    pending_file = work / "pending.py"
    pending_file.write_text(PENDING)
    launch = work / "launch.py"
    launch.write_text(LAUNCH % str(pending_file))
    modes = [
        ("classic", [str(python), "-m", "cqlshlib"]),
        ("turbocql", [str(python), "-m", "turbocql.compat", "--allow-shadow", "-m", "cqlshlib"]),
    ]
    if pending:
        modes.append(("pending", [str(python), str(launch)]))
    applied = work / "applied.txt"
    rows = []
    for name, command in COMMANDS:
        outputs = {}
        paths = {}
        for mode, prefix in modes:
            csv = work / ("%s.csv" % mode)
            if "{csv}" in command:
                csv.unlink(missing_ok=True)
            paths[str(csv)] = "<csv>"
            paths[str(work / "classic.csv")] = "<classic csv>"
            cmd = command.replace("{csv}", str(csv)).replace("{classic_csv}", str(work / "classic.csv"))
            run_env = dict(env, APP_CQLSH_PENDING_LOG=str(applied)) if mode == "pending" else env
            outputs[mode] = run_cqlsh(prefix, host, port, cmd, run_env, work)
        row: dict = {"name": name, "command": command, "classic_rc": outputs["classic"][0]}
        for mode, _ in modes[1:]:
            files = (work / "classic.csv", work / ("%s.csv" % mode)) if "{csv}" in command else None
            status, diff = compare(name, outputs["classic"], outputs[mode], paths, files)
            row[mode] = {"status": status, "rc": outputs[mode][0], "diff": diff, "seconds": outputs[mode][2]}
        log(
            "%-40s classic rc=%s  turbocql: %s%s"
            % (
                name,
                row["classic_rc"],
                row["turbocql"]["status"],
                ("  + pending: %s" % row["pending"]["status"]) if pending else "",
            )
        )
        rows.append(row)
    return {
        "target": "%s:%d" % (host, port),
        "rows": rows,
        "pending_applied": applied.read_text().split("\n") if pending and applied.exists() else [],
    }


def _windowed(diff: list[str], width: int = 160) -> list[str]:
    """Long changed lines cut to a window around their first difference with the line of
    the other side (tables of every CQL type are wide)."""
    removed = [line for line in diff if line.startswith("-")]
    added = [line for line in diff if line.startswith("+")]
    out = []
    for line in diff:
        if len(line) > width and line[0] in "+-":
            others = added if line[0] == "-" else removed
            other = min(others, key=lambda o: -len(os.path.commonprefix([o[1:], line[1:]])), default="")
            at = len(os.path.commonprefix([other[1:], line[1:]]))
            start = max(0, at - width // 2)
            line = line[0] + ("..." if start else "") + line[1 + start : 1 + start + width] + "..."
        out.append(line)
    return out


def report(results: list[dict], version: str) -> str:
    out = [
        "# cqlsh through the shim",
        "",
        "Generated by `scripts/app_cqlsh.py` (%s) on %s. Each command runs with "
        "`python -m cqlshlib HOST PORT -e ...` (classic) and `python -m turbocql.compat --allow-shadow -m "
        "cqlshlib HOST PORT -e ...` (turbocql, this checkout's python/ on PYTHONPATH); outputs are compared "
        "after masking timings, COPY rates and trace ids/times; COPY TO also compares the CSV files."
        % (version, time.strftime("%Y-%m-%d")),
        "",
    ]
    for result in results:
        pending = bool(result["pending_applied"]) or any("pending" in r for r in result["rows"])
        out += ["## %s" % result["target"], ""]
        if pending:
            applied = [a for a in result["pending_applied"] if a]
            out += [
                '"turbocql + pending": the same run with stand-ins for what cqlsh needs from modules outside this '
                "change (see PENDING in the runner): %s."
                % (", ".join(applied) if applied else "none needed: all landed"),
                "",
            ]
        head = "| # | command | classic rc | turbocql |" + (" turbocql + pending |" if pending else "")
        out += [head, "|---|---|---|---|" + ("---|" if pending else "")]
        for i, row in enumerate(result["rows"], 1):
            cells = [str(i), row["name"], str(row["classic_rc"]), row["turbocql"]["status"]]
            if pending:
                cells.append(row["pending"]["status"])
            out.append("| " + " | ".join(cells) + " |")
        details = []
        for i, row in enumerate(result["rows"], 1):
            modes = [m for m in ("turbocql", "pending") if m in row and row[m]["status"] != "same output"]
            if not modes:
                continue
            details += ["### %d. %s" % (i, row["name"]), "", "`%s`" % row["command"].replace("|", "\\|"), ""]
            if row["name"] in REASONS:
                details += ["Reason: " + REASONS[row["name"]], ""]
            for mode in modes:
                diff = _windowed(row[mode]["diff"][:14])
                details += ["%s (%s, rc %s):" % (mode, row[mode]["status"], row[mode]["rc"]), "", "```diff"]
                details += (
                    [line[:300] for line in diff] + (["..."] if len(row[mode]["diff"]) > 14 else []) + ["```", ""]
                )
        if details:
            out += ["", "### Differences", ""] + details
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", help="HOST:PORT (repeatable; default 127.0.0.1:9042)")
    parser.add_argument("--venv", type=Path, default=CACHE / "cqlsh-venv")
    parser.add_argument("--out", type=Path, default=ROOT / "scripts" / "app_cqlsh.md")
    parser.add_argument("--no-pending", action="store_true", help="skip the turbocql + pending run")
    args = parser.parse_args()
    python = ensure_cqlsh(args.venv)
    version = versions(python)
    results = []
    for target in args.target or ["127.0.0.1:9042"]:
        host, _, port = target.partition(":")
        log("%s on %s" % (version, target))
        with tempfile.TemporaryDirectory(prefix="app_cqlsh-") as tmp:
            results.append(run_target(python, host, int(port or 9042), not args.no_pending, Path(tmp)))
    args.out.write_text(report(results, version))
    log("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
