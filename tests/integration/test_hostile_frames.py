"""Faults matrix, row 11: hostile frames from the server.

The fake server (tests/integration/_fake_cql.py) answers one statement with a frame no real
node sends: a body shorter than its declared length (then closing, or then going silent), a
declared length of 2 or 4 GiB, an unknown opcode, a reply on a stream nobody asked on, a frame
with the request direction bit or another protocol version, ROWS bodies whose column count,
row count, value length, UTF-8 or collection element count lie, truncated ERROR and RESULT
bodies, PREPARED metadata with 2^31 columns or partition key indexes, and a ROWS row count of
2^31-1 read by the columnar decoder (numpy_factory), which sizes its arrays by that count.

Each scenario runs in a child process (tests/integration/_hostile_child.py: a crash must not
take the test run with it), for turbocql and for the classic driver on the same frame. For
turbocql it must end with a typed error (a DriverException, ConnectionException inside
NoHostAvailable, or OperationTimedOut) or a result, within the request timeout; no pyo3
PanicException and no panic message; the process alive; its resident memory not grown by the
declared length (a few MiB at most). The classic driver's outcome is recorded beside it.

The scylla crate sized buffers by counts read from the frame before reading what they count
(scylla-cql 2.0.0: frame/mod.rs read_response_frame ``Vec::with_capacity(length)`` of the
declared body length; result.rs the column specs by the column count, partition key indexes by
their count), and a failed allocation aborts a Rust program. The engine builds the crate with
vendor/patches/scylla-cql: a declared body over ``Cluster(max_frame_length)`` (256 MiB by
default) fails its connection before anything is allocated, with an error naming the length,
the limit and the setting, and the counts reserve no more than the bytes received can hold. So
every case also runs with the address space capped (RLIMIT_AS, as a container without
overcommit): a typed error, never an abort.
"""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks.harness.reliability import record
from tests.integration._hostile_child import MODES, PREPARE_MODES, QUERY, TIMEOUT
from tests.integration._paths import PATHS, raised
from tests.integration._paths import TIMEOUT as PATH_TIMEOUT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RSS_GROWTH_LIMIT_MB = 8.0

TYPED = ("DriverException", "NoHostAvailable", "OperationTimedOut", "ConnectionException")
# What turbocql must do: "typed" (one of TYPED), "ok" (the statement succeeds), or both.
EXPECT = {mode: {"typed"} for mode in list(MODES) + list(PREPARE_MODES)}
# A reply on a stream nobody asked on: the classic driver drops it and takes the real reply;
# turbocql (the crate) closes the connection as broken, the request failing typed. Both are
# acceptable. A negative stream id is an event's: dropped by both.
EXPECT["foreign-stream-then-answer"] = {"typed", "ok"}
EXPECT["negative-stream-result"] = {"ok"}
# A collection element of length -7 is null by the [bytes] rule (n < 0); the classic driver
# refuses it (DriverException "Length must be positive"). Either is acceptable.
EXPECT["rows-list-element-length-negative"] = {"typed", "ok"}

# None left: 2^31 column specs (a 223 GB reservation) aborted the process until src/alloc.rs.
KNOWN: dict = {}
# With the address space capped at what the process uses + 1 GiB (RLIMIT_AS): an allocation
# of a count read from the frame would fail, and a failed allocation aborts a Rust program.
RLIMIT_MB = 1024
RLIMIT_KNOWN: dict = {}
# The classic driver is not run on these (its outcome is noted instead).
CLASSIC_NOT_RUN = {
    "numpy-rows-row-count-2G-vector": "not run: its NumpyProtocolHandler had not finished after 40 s (killed)",
    "2GiB-length-streamed": "not run here: it buffers the 2 GiB (benchmarks/run_hostile_frame.py measures it)",
}
RLIMIT_OK = [
    # the two that aborted before the crate's patch (a 2 GiB body, 8 GiB of key indexes)
    "2GiB-length-then-stall",
    "2GiB-length-streamed",
    "prepared-pk-count-2G",
    "short-body-then-stall",
    "unknown-opcode",
    "empty-result-body",
    # sizes from the metadata no byte stands for: refused by the fill budget, never an abort
    "numpy-null-vector-64k-dimension",
    "arrow-null-vector-64k-dimension",
    "arrow-null-tuple-of-64k-fields",
    "rows-short-tuples-of-64k-fields",
    "rows-no-columns-2G-rows",
]
# Frames that do not lie but ask for much: a page of nulls that fill in what no received byte
# stands for (a null vector<double, 65535> is 512 KiB of masked zeros). The engine fills in up
# to its fill budget (src/codec/fill.rs: the frame limit, 256 MiB) and then refuses the page
# with a DriverException naming the setting: memory is bounded by the budget (with numpy's
# mask or Arrow's validity beside it), not by the bytes received, and time by what it fills.
FILL_MODES = {
    "numpy-null-vector-64k-dimension",
    "arrow-null-vector-64k-dimension",
    "arrow-null-tuple-of-64k-fields",
    "rows-short-tuples-of-64k-fields",
}
FILL_RSS_LIMIT_MB = 768.0
FILL_SECONDS = 15.0


def _unknown_code_kept(e):
    # As the classic driver: the error message itself, its code kept.
    assert e["class"] == "ErrorMessage", e["class"]
    assert e["message"] == '<Error from server: code=7777 [Unknown] message="what is this">', e["message"]


# Checks beyond "typed" for some modes (on the exception's description).
EXTRA = {"error-unknown-code": _unknown_code_kept}


def _run_child(driver, mode, rlimit_mb=None):
    cmd = [sys.executable, "-m", "tests.integration._hostile_child", driver, mode]
    if rlimit_mb is not None:
        cmd += ["--rlimit-as-mb", str(rlimit_mb)]
    env = dict(os.environ, RUST_BACKTRACE="0")
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        return {"returncode": None, "stderr": str(exc.stderr)[-2000:], "result": None, "child_hung": True}
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
    return {"returncode": proc.returncode, "stderr": proc.stderr[-4000:], "result": result, "child_hung": False}


_RESULTS: dict = {}


@pytest.fixture(scope="module")
def outcomes():
    """Every mode through both drivers, four children at a time (most of a child's time is
    spent waiting: connect, a request timeout)."""
    jobs = [
        (d, m, None)
        for m in list(MODES) + list(PREPARE_MODES)
        for d in ("turbocql", "classic")
        if not (d == "classic" and m in CLASSIC_NOT_RUN)
    ]
    jobs += [("turbocql", m, RLIMIT_MB) for m in list(RLIMIT_KNOWN) + RLIMIT_OK]
    jobs += [("classic", "2GiB-length-then-stall", RLIMIT_MB)]
    with ThreadPoolExecutor(4) as pool:
        for job, out in zip(jobs, pool.map(lambda j: _run_child(*j), jobs)):
            _RESULTS[job] = out
    return _RESULTS


def _summary(child):
    """A short account of a child's outcome, for the record and for messages."""
    if child["child_hung"]:
        return "child process hung (killed after 60 s)"
    if child["result"] is None:
        first = child["stderr"].strip().splitlines()[:1]
        return "process died (exit status %s): %s" % (child["returncode"], first[0] if first else "")
    r = child["result"]
    if r["hung"]:
        return "request hung"
    if r["succeeded"]:
        return "result"
    e = r["exception"]
    text = "%s: %s" % (e["class"], e["message"][:200])
    if e.get("errors"):
        text += " %s" % list(e["errors"].values())[:1]
    return text


def _names_the_fill_budget(e):
    assert e["class"] == "DriverException", e["class"]
    assert "over the page's budget of 268435456 bytes (Cluster max_frame_length)" in e["message"], e["message"]


EXTRA.update(dict.fromkeys(FILL_MODES, _names_the_fill_budget))


def _check(child, expect, extra=None, fill=False):
    """The assertions of row 11 on one turbocql child (`fill`: a FILL_MODES frame)."""
    assert not child["child_hung"], "the child process hung"
    assert child["returncode"] == 0 and child["result"] is not None, _summary(child)
    assert "panicked" not in child["stderr"], child["stderr"][-2000:]
    r = child["result"]
    assert "PanicException" not in r["raised"], r["raised"]
    assert not r["hung"], "the request never ended"
    # A fill mode's time is its fill's (up to the 256 MiB budget, written after the frame has
    # arrived, so past the request's timeout): 4.6 s once with the other test lane on both cores.
    allowed = TIMEOUT + (FILL_SECONDS if fill else 1.5)
    assert r["elapsed_s"] <= allowed, "the request took %.1f s (timeout %.1f s)" % (r["elapsed_s"], TIMEOUT)
    if r["succeeded"]:
        assert "ok" in expect, "the statement succeeded on a hostile frame"
    else:
        e = r["exception"]
        assert "typed" in expect, _summary(child)
        assert any(name in TYPED for name in e["mro"]), _summary(child)
        if e["class"] == "NoHostAvailable":
            assert all(v.startswith("ConnectionException") for v in e["errors"].values()), e["errors"]
        if extra is not None:
            extra(e)
    grown = max(r["rss_during_mb"], r["rss_after_mb"]) - r["rss_before_mb"]
    limit = FILL_RSS_LIMIT_MB if fill else RSS_GROWTH_LIMIT_MB
    assert grown < limit, "RSS grew by %.1f MiB" % grown


def _record(mode, child, classic, rlimit=None):
    r = child["result"] or {}
    record(
        "11",
        mode if rlimit is None else "%s (RLIMIT_AS +%d MiB)" % (mode, rlimit),
        injected="fake server: %s" % mode,
        requests=1,
        succeeded=1 if r.get("succeeded") else 0,
        failed={} if r.get("succeeded") or not r.get("exception") else {r["exception"]["class"]: 1},
        hung=1 if r.get("hung") or child["child_hung"] else 0,
        peak_rss_mb=r.get("rss_peak_mb"),
        notes="turbocql: %s; rss %s -> %s -> %s MiB, VmSize %s -> %s MiB; recovered after %s s. classic driver: %s"
        % (
            _summary(child),
            r.get("rss_before_mb"),
            r.get("rss_during_mb"),
            r.get("rss_after_mb"),
            r.get("vmsize_before_mb"),
            r.get("vmsize_during_mb"),
            r.get("recovered_after_s"),
            _summary(classic) if classic else CLASSIC_NOT_RUN.get(mode, "-"),
        ),
    )


def _params():
    for mode in list(MODES) + list(PREPARE_MODES):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[mode])] if mode in KNOWN else []
        yield pytest.param(mode, id=mode, marks=marks)


@pytest.mark.parametrize("mode", list(_params()))
def test_hostile_frame_ends_typed_without_panic_or_memory_jump(outcomes, mode):
    child, classic = outcomes[("turbocql", mode, None)], outcomes.get(("classic", mode, None))
    _record(mode, child, classic)
    _check(child, EXPECT[mode], EXTRA.get(mode), fill=mode in FILL_MODES)


def _rlimit_params():
    for mode in list(RLIMIT_KNOWN) + RLIMIT_OK:
        marks = [pytest.mark.xfail(strict=True, reason=RLIMIT_KNOWN[mode])] if mode in RLIMIT_KNOWN else []
        yield pytest.param(mode, id=mode, marks=marks)


@pytest.mark.parametrize("mode", list(_rlimit_params()))
def test_hostile_frame_with_capped_address_space(outcomes, mode):
    """The same frames with the address space capped 1 GiB above what the process uses: a
    lying count must not turn into an allocation of that size (it aborts the process)."""
    child = outcomes[("turbocql", mode, RLIMIT_MB)]
    classic = outcomes.get(("classic", mode, RLIMIT_MB))
    _record(mode, child, classic, RLIMIT_MB)
    _check(child, EXPECT[mode], EXTRA.get(mode), fill=mode in FILL_MODES)


@pytest.mark.parametrize("declared", ["2GiB", "4GiB"])
def test_lying_length_is_refused_before_anything_is_reserved(outcomes, declared):
    """A declared body over max_frame_length fails the connection before the body is read:
    no reservation (VmSize grows by thread stacks at most, not by the declared length), no
    memory, and an error naming the length, the limit and the setting."""
    child = outcomes[("turbocql", "%s-length-then-stall" % declared, None)]
    r = child["result"]
    assert r is not None, _summary(child)
    size = {"2GiB": 2**31, "4GiB": 2**32 - 1}[declared]
    vm_growth = r["vmsize_during_mb"] - r["vmsize_before_mb"]
    rss_growth = r["rss_during_mb"] - r["rss_before_mb"]
    record(
        "11",
        "%s declared length: memory" % declared,
        injected="a RESULT header declaring %s, no body, connection left open" % declared,
        peak_rss_mb=r["rss_peak_mb"],
        notes="VmSize +%.0f MiB, RSS +%.1f MiB while waiting; RSS after %.1f MiB (before %.1f)"
        % (vm_growth, rss_growth, r["rss_after_mb"], r["rss_before_mb"]),
    )
    assert rss_growth < RSS_GROWTH_LIMIT_MB
    assert vm_growth < 256, "VmSize grew by %.0f MiB: the declared length was reserved" % vm_growth
    (error,) = set(r["exception"]["errors"].values())
    assert error.startswith("ConnectionException"), error
    assert "body of %d bytes, over the limit of %d bytes" % (size, 256 * 2**20) in error, error
    assert "max_frame_length" in error, error
    assert r["elapsed_s"] < 1.0, "refused at the header, not after a timeout: %.1f s" % r["elapsed_s"]


# --------------------------------------------------------------------------
# The same frames through every path (in this process: these modes cannot crash it)

PATH_MODES = ["unknown-opcode", "short-body-then-close", "empty-result-body", "error-truncated-unavailable"]


@pytest.fixture(scope="module")
def fake_session():
    from tests.integration._fake_cql import FakeCqlServer
    from turbocql.cluster import Cluster

    with FakeCqlServer() as server:
        cluster = Cluster([server.host], port=server.port)
        yield server, cluster.connect()
        cluster.shutdown()


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("mode", PATH_MODES)
def test_hostile_frame_on_every_path(fake_session, mode, path):
    """Every way of running a statement ends with the same typed error, within the timeout."""
    import time

    from tests.integration import _fake_cql as fake
    from turbocql import DriverException
    from turbocql.cluster import NoHostAvailable

    server, session = fake_session
    for _ in range(50):  # the connection a previous frame broke is open again
        try:
            session.execute(QUERY, timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    reply = MODES[mode]
    server.handler = lambda req: fake.default_reply(req) if req.opcode == fake.PREPARE else reply(req)
    start = time.monotonic()
    try:
        exc = raised(PATHS[path], session, QUERY)
    finally:
        server.handler = fake.default_reply
    elapsed = time.monotonic() - start
    assert isinstance(exc, DriverException | NoHostAvailable), repr(exc)
    assert elapsed < PATH_TIMEOUT
    record("11", "%s / %s" % (mode, path), requests=1, failed={type(exc).__name__: 1}, notes="%.3f s" % elapsed)
