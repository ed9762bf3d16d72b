"""APM agents, unmodified from PyPI, see turbocql through the shim as they see the classic
driver: OpenTelemetry's ``opentelemetry-instrumentation-cassandra`` (which wraps
``Session.execute_async`` on the class) and ddtrace 3.x's cassandra integration (which wraps
``Cluster.connect``, then each session's ``execute_async`` and each future's settling
methods). ``apm_probe.py`` runs every request path of the classic API under one agent; it
runs once on the classic driver and once on turbocql (``python -m turbocql.compat``), against
the same node, and the spans must be the same.

The hooks themselves (an agent's wrapper of ``execute_async`` makes ``execute`` and
``execute_concurrent`` go through it; a wrapper of a future's ``_set_final_result`` runs
before ``result()`` returns) are tested here too, in process.
"""

import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import HOST, PORT

PROBE = Path(__file__).with_name("apm_probe.py")


@pytest.fixture(scope="module")
def apm_keyspace(cluster):
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS turbocql_apm WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS turbocql_apm.kv (k int PRIMARY KEY, v text)")
    session.execute("CREATE TABLE IF NOT EXISTS turbocql_apm.paged (k int, c int, PRIMARY KEY (k, c))")
    session.shutdown()
    return "turbocql_apm"


def _spans(agent, keyspace, turbocql):
    shim = ["-m", "turbocql.compat", "--allow-shadow"] if turbocql else []
    run = subprocess.run(
        [sys.executable, *shim, str(PROBE), agent, HOST, str(PORT), keyspace],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    spans = json.loads(run.stdout.strip().splitlines()[-1])
    for span in spans:
        meta = span.get("meta", {})
        # A traceback: file paths and line numbers of each driver.
        meta.pop("error.stack", None)
        # turbocql's message for a query with too few values says how many were given, after
        # the classic driver's own words (Python's `%` message), which are compared.
        if meta.get("error.type") == "builtins.TypeError":
            meta["error.message"] = meta["error.message"].split(":")[0]
    return Counter(json.dumps(s, sort_keys=True) for s in spans)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("agent", ["otel", "ddtrace"])
def test_agent_spans_match_the_classic_driver(agent, apm_keyspace):
    classic = _spans(agent, apm_keyspace, turbocql=False)
    ours = _spans(agent, apm_keyspace, turbocql=True)
    assert ours == classic, "only classic: %s\nonly turbocql: %s" % (
        list((classic - ours).elements()),
        list((ours - classic).elements()),
    )
    spans = [json.loads(s) for s in ours.elements()]
    if agent == "otel":
        # One span per execute_async, sync statements and execute_concurrent's included:
        # 7 sync (2 failing), 2 async, 3 + 2 concurrent, 5 inserts and a paged read.
        assert len(spans) == 20
        statements = [s["attributes"]["db.statement"] for s in spans]
        assert "SELECT * FROM no_such_table" in statements
        assert all(s["attributes"]["db.system"] == "cassandra" for s in spans)
    else:
        # The same 20, and the paged read's second and third pages, each its own span.
        assert len(spans) == 22
        failed = [s for s in spans if s["error"]]
        assert sorted(s["meta"]["error.type"] for s in failed) == ["InvalidRequest"] * 3 + ["builtins.TypeError"]
        pages = sorted(s["metrics"].get("cassandra.page_number", 1) for s in spans if "paged" in s["resource"])
        assert pages[-3:] == [1, 2, 3]
        assert all(s["meta"].get("out.host") == HOST for s in spans if not s["error"])


def _wrapper(calls, name):
    def wrap(*args, **kwargs):
        calls.append(name)
        return wrap.inner(*args, **kwargs)

    return wrap


def test_execute_goes_through_a_replaced_execute_async(cluster, keyspace):
    """An agent's wrapper of execute_async, on the class (OpenTelemetry) or on the session
    (ddtrace), sees session.execute and execute_concurrent; put back, it sees nothing."""
    from turbocql.cluster import Session
    from turbocql.concurrent import execute_concurrent_with_args

    session = cluster.connect(keyspace)
    calls = []
    own = Session.execute_async
    wrap = _wrapper(calls, "class")
    wrap.inner = own
    Session.execute_async = wrap
    try:
        assert session.execute("SELECT release_version FROM system.local").one() is not None
        assert calls == ["class"]
        results = execute_concurrent_with_args(session, "SELECT key FROM system.local WHERE key = %s", [("local",)] * 3)
        assert [ok for ok, _ in results] == [True] * 3
        assert calls == ["class"] * 4
    finally:
        Session.execute_async = own
    session.execute("SELECT release_version FROM system.local")
    assert calls == ["class"] * 4
    # Put back as read from the class, both are the engine's one-call forms again.
    assert type(session.execute).__name__ == "SyncExecute"
    assert type(session.execute_async).__name__ == "AsyncExecute"

    inner = session.execute_async
    # Wrapped on the instance by wrapt (ddtrace), it binds like a method: to the session.
    assert inner.__self__ is session
    wrap = _wrapper(calls, "instance")
    wrap.inner = inner
    session.execute_async = wrap
    session.execute("SELECT release_version FROM system.local")
    assert calls[-1] == "instance"
    del session.execute_async
    session.execute("SELECT release_version FROM system.local")
    assert calls.count("instance") == 1
    assert type(session.execute_async).__name__ == "AsyncExecute"
    # The cluster's own reads are never an agent's.
    cluster.refresh_schema_metadata()
    session.shutdown()


def test_settling_hooks_run_before_result_and_callbacks(session):
    """A future whose _set_final_result is replaced calls it once settled, before result()
    returns and before the callbacks; it can read the answering host and build the classic
    ResultSet(future, rows)."""
    from turbocql.cluster import ResultSet

    seen = []
    ready = threading.Event()
    future = session.execute_async("SELECT release_version FROM system.local")
    original = future._set_final_result

    def hook(rows):
        rs = ResultSet(future, rows)
        seen.append(("hook", future.coordinator_host.address, rs.one().release_version, rs.response_future is future))
        return original(rows)

    future._set_final_result = hook
    future.add_callback(lambda rows: (seen.append(("callback",)), ready.set()))
    rs = future.result()
    assert ready.wait(10)
    if seen[0][0] == "hook":  # settled after the hook was set: the hook ran first
        assert seen[0][1:] == (HOST, rs.one().release_version, True)
        assert seen[1] == ("callback",)
    else:  # settled before: the classic agents add a callback for this case
        assert seen == [("callback",)]
    assert future.attempted_hosts == [future.coordinator_host]
    assert future.coordinator_host.address == HOST

    failing = session.execute_async("SELECT * FROM no_such_table")
    errors = []
    failing._set_final_exception = lambda exc: errors.append(type(exc).__name__)
    with pytest.raises(Exception, match="no_such_table"):
        failing.result()
    assert errors in ([], ["InvalidRequest"])
    assert failing.coordinator_host is None
