"""Faults matrix, row 5: every server error, through every way of running a statement.

Each ERROR frame of the native protocol (Unavailable, ReadTimeout, WriteTimeout, ReadFailure,
WriteFailure, FunctionFailure, Overloaded, IsBootstrapping, TruncateError, Unprepared,
ServerError, ProtocolError, InvalidRequest, Unauthorized, SyntaxError, ConfigurationError,
AlreadyExists) is sent by the fake server (tests/integration/_fake_cql.py) in answer to a
statement run through each path turbocql has: ``execute``, ``execute_async().result()``, an
errback, ``execute_concurrent`` / ``execute_concurrent_with_args`` (raising or collecting),
``WritePipeline`` / ``ReadPipeline`` (raising or with an ``error_handler``), asyncio, and a
prepared statement (the EXECUTE frame).

The oracle is the classic driver (cassandra-driver 3.30.1) against the same fake server with
the same reply: the exception must have the same class name, the same classic fields and the
same ``str()``. The retry policy decides what is raised, so both policies are run: the
default ``RetryPolicy`` (with one node, what it retries on the next host ends as
``NoHostAvailable``) and ``FallthroughRetryPolicy`` (the server's error itself).

Where the real node can produce the error (Unavailable, InvalidRequest, SyntaxException,
AlreadyExists, FunctionFailure), it is checked there too, against the classic driver on the
same node. FunctionFailure needs a user-defined function, so user_defined_functions_enabled
in the node's cassandra.yaml (localdb's has it): on a node without it those cases are
skipped, naming the setting, and the others still run.
"""

import threading

import pytest

from benchmarks.harness.reliability import record
from tests.integration import _fake_cql as fake
from tests.integration._paths import PATHS, TIMEOUT, _aio, _concurrent, _execute, _prepared, raised
from tests.integration._settings import require_setting
from turbocql import ConsistencyLevel

QUERY = "SELECT v FROM ks.t WHERE k = 1"

# --------------------------------------------------------------------------
# The errors: name -> reply to the statement (the request is given: Unprepared names its id)

ERRORS = {
    "Overloaded": lambda req: fake.overloaded(),
    "Unavailable": lambda req: fake.unavailable(ConsistencyLevel.QUORUM, 3, 1),
    # received < blockfor: no retry by either default policy
    "ReadTimeout": lambda req: fake.read_timeout(ConsistencyLevel.QUORUM, 1, 2, False),
    # enough replicas answered but not the data: retried once on the same host, then raised
    "ReadTimeout-retried": lambda req: fake.read_timeout(ConsistencyLevel.LOCAL_QUORUM, 2, 2, False),
    "WriteTimeout": lambda req: fake.write_timeout(ConsistencyLevel.QUORUM, 1, 2, "SIMPLE"),
    "WriteTimeout-batch-log": lambda req: fake.write_timeout(ConsistencyLevel.ONE, 0, 1, "BATCH_LOG"),
    "ReadFailure": lambda req: fake.read_failure(ConsistencyLevel.QUORUM, 1, 2, 1, True),
    "WriteFailure": lambda req: fake.write_failure(ConsistencyLevel.ALL, 2, 3, 1, "COUNTER"),
    "FunctionFailure": lambda req: fake.function_failure("ks", "fails", ["int", "frozen<list<text>>"]),
    "IsBootstrapping": lambda req: fake.is_bootstrapping(),
    "TruncateError": lambda req: fake.truncate_error(),
    "Unprepared": lambda req: fake.unprepared(req.query_id or fake.prepared_id(req.query)),
    "ServerError": lambda req: fake.server_error("java.lang.NullPointerException"),
    "ProtocolError": lambda req: fake.protocol_error("Invalid query flags"),
    "InvalidRequest": lambda req: fake.invalid("Undefined column name v in table ks.t"),
    "Unauthorized": lambda req: fake.unauthorized(),
    "SyntaxError": lambda req: fake.syntax_error(),
    "ConfigurationError": lambda req: fake.config_error(),
    "AlreadyExists-keyspace": lambda req: fake.already_exists("ks"),
    "AlreadyExists-table": lambda req: fake.already_exists("ks", "t"),
}

# The classic exception fields compared (those an exception has).
FIELDS = (
    "consistency",
    "required_replicas",
    "alive_replicas",
    "received_responses",
    "required_responses",
    "data_retrieved",
    "write_type",
    "failures",
    "error_code_map",
    "keyspace",
    "table",
    "function",
    "arg_types",
    "code",
    "message",
    "info",
    "summary",
    "error_code",
)


def describe(exc):
    """What is compared of an exception: class name, classic fields, str(); a
    NoHostAvailable's message and, per host, its error described so."""
    if type(exc).__name__ == "NoHostAvailable":
        return {
            "class": "NoHostAvailable",
            "message": exc.args[0],
            "errors": sorted((str(host), describe(e)) for host, e in exc.errors.items()),
        }
    out = {"class": type(exc).__name__, "str": str(exc)}
    for name in FIELDS:
        if hasattr(exc, name):
            value = getattr(exc, name)
            out[name] = value() if callable(value) else value
    return out


# --------------------------------------------------------------------------
# Known differences from the classic driver: (error, policy or None for both, path or None for
# all) -> the reason, what is wrong and where.

# None left: a RETRY_NEXT_HOST decision past the last host raised the bare error until
# src/exec/attempts.rs made it NoHostAvailable({host: error}) as in the classic driver.
KNOWN: dict = {}


def known(error, policy):
    return KNOWN.get((error, policy)) or KNOWN.get((error, None))


# A deliberate difference (docs/migrating.md, migration table, "retry policies"): after these errors the
# built-in RetryPolicy does not send a non-idempotent statement again (the node may have applied
# it), where the classic one sends it to the next host and, with none left, raises
# NoHostAvailable holding the error. turbocql raises that same error itself, after one attempt.
NOT_RESENT = {"Overloaded", "ServerError", "TruncateError"}


# --------------------------------------------------------------------------
# Sessions on the fake server


def _fallthrough_profiles(module):
    if module == "turbocql":
        from turbocql.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
        from turbocql.policies import FallthroughRetryPolicy
    else:
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
        from cassandra.policies import FallthroughRetryPolicy
    return {EXEC_PROFILE_DEFAULT: ExecutionProfile(retry_policy=FallthroughRetryPolicy())}


def _cluster(module, server, policy):
    kwargs = {"port": server.port}
    if policy == "fallthrough":
        kwargs["execution_profiles"] = _fallthrough_profiles(module)
    if module == "turbocql":
        from turbocql.cluster import Cluster
    else:
        from cassandra.cluster import Cluster

        kwargs["protocol_version"] = 4
    return Cluster([server.host], **kwargs)


def _answer(reply):
    """A handler: PREPARE prepares (a statement without bind markers), the rest gets ``reply``."""

    def handler(req):
        if req.opcode == fake.PREPARE:
            return fake.default_reply(req)
        return reply(req)

    return handler


@pytest.fixture(scope="module")
def server():
    with fake.FakeCqlServer() as s:
        yield s


@pytest.fixture(scope="module")
def sessions(server):
    """turbocql sessions on the fake server, by retry policy."""
    clusters = {p: _cluster("turbocql", server, p) for p in ("default", "fallthrough")}
    yield {p: c.connect() for p, c in clusters.items()}
    for c in clusters.values():
        c.shutdown()


_ORACLE: dict = {}


def classic_outcome(server, error, policy, path):
    """What the classic driver raises for ``error`` under ``policy`` (cached), through execute
    (a simple statement) or a prepared statement. A fresh cluster each time: a ProtocolError
    makes the classic driver close its connection."""
    key = (error, policy, path == "prepared")
    if key not in _ORACLE:
        server.handler = fake.default_reply
        cluster = _cluster("classic", server, policy)
        try:
            session = cluster.connect()
            server.handler = _answer(ERRORS[error])
            before = len(server.requests)
            exc = raised(_prepared if path == "prepared" else _execute, session, QUERY)
            _ORACLE[key] = (describe(exc), len(server.requests) - before)
        finally:
            server.handler = fake.default_reply
            cluster.shutdown()
    return _ORACLE[key]


def _usable(server, session):
    """Waits until ``session`` runs a statement again (a ProtocolError may have closed its
    connection)."""
    server.handler = fake.default_reply
    last = None
    for _ in range(50):
        try:
            session.execute(QUERY, timeout=2)
            return
        except Exception as exc:
            last = exc
            threading.Event().wait(0.1)
    raise AssertionError("the session did not recover: %r" % (last,))


def _expected_unprepared_on_query(server):
    """The classic driver 3.30.1 cannot raise Unprepared for a simple statement (its
    ResponseFuture fails with AttributeError, ``bytes.encode``): the oracle is then the classic
    PreparedQueryNotFound built from the same ERROR frame."""
    from cassandra.protocol import PreparedQueryNotFound

    qid = fake.prepared_id(QUERY)
    _op, body = fake.unprepared(qid)
    message = body[6 : 6 + int.from_bytes(body[4:6], "big")].decode()
    return describe(PreparedQueryNotFound(0x2500, message, qid))


# --------------------------------------------------------------------------
# The matrix


def _params():
    for error in ERRORS:
        for policy in ("default", "fallthrough"):
            for path in PATHS:
                marks = []
                reason = known(error, policy)
                if reason:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                yield pytest.param(error, policy, path, id="%s-%s-%s" % (error, policy, path), marks=marks)


@pytest.mark.parametrize("error,policy,path", list(_params()))
def test_server_error_as_the_classic_driver(server, sessions, error, policy, path):
    session = sessions[policy]
    _usable(server, session)
    if error == "Unprepared":
        # A statement the node never knows: the classic driver re-prepares it in a loop until
        # the client timeout (thousands of requests); turbocql prepares it again once, then
        # raises the node's answer, as the classic class built from the same frame says it.
        expected, classic_attempts = _expected_unprepared_on_query(server), 1
    else:
        expected, classic_attempts = classic_outcome(server, error, policy, path)
        if policy == "default" and error in NOT_RESENT:
            assert expected["class"] == "NoHostAvailable" and len(expected["errors"]) == 1, expected
            expected, classic_attempts = expected["errors"][0][1], 1
    server.handler = _answer(ERRORS[error])
    before = len(server.requests)
    try:
        exc = raised(PATHS[path], session, QUERY)
    finally:
        server.handler = fake.default_reply
    attempts = len([r for r in server.requests[before:] if r.opcode != fake.PREPARE])
    got = describe(exc)
    record(
        "5",
        "%s / %s / %s retry policy" % (error, path, policy),
        injected="fake server answers %s" % error,
        requests=1,
        succeeded=0,
        failed={got["class"]: 1},
        hung=0,
        notes="classic driver: %s; server attempts turbocql %d, classic %s; same as classic: %s"
        % (expected["class"], attempts, classic_attempts, got == expected),
    )
    assert got == expected
    if policy == "default" and error in NOT_RESENT:
        assert attempts == 1, "a non-idempotent statement was sent again after %s" % error


def test_unprepared_once_is_reprepared_on_every_path(server, sessions):
    """An EXECUTE answered Unprepared once: the statement is prepared again and executed, as
    the classic driver does (no error reaches the application)."""
    session = sessions["default"]
    prepared = session.prepare(QUERY)
    for name, run in [
        ("execute", lambda: session.execute(prepared, timeout=TIMEOUT)),
        ("execute_async", lambda: session.execute_async(prepared, timeout=TIMEOUT).result()),
        ("concurrent", lambda: _concurrent(True, False)(session, prepared)),
        ("aio", lambda: _aio(session, prepared)),
    ]:
        state = {"n": 0}

        def once(req, state=state):
            if req.opcode == fake.EXECUTE:
                state["n"] += 1
                if state["n"] == 1:
                    return fake.unprepared(req.query_id)
            return fake.default_reply(req)

        server.handler = once
        before = len(server.requests)
        try:
            run()
        finally:
            server.handler = fake.default_reply
        ops = [r.opcode for r in server.requests[before:]]
        assert ops == [fake.EXECUTE, fake.PREPARE, fake.EXECUTE], name
        record(
            "5", "Unprepared once / %s" % name, injected="first EXECUTE answered Unprepared", requests=1, succeeded=1
        )


def test_unprepared_always_ends_after_one_reprepare(server, sessions):
    """Unprepared again after the re-prepare: turbocql raises PreparedQueryNotFound after one
    re-prepare. (The classic driver 3.30.1 re-prepares and re-executes in a loop until the
    client timeout, thousands of requests, then raises OperationTimedOut: not a behaviour to
    copy, so it is not the oracle here.)"""
    from turbocql.protocol import PreparedQueryNotFound

    session = sessions["fallthrough"]
    prepared = session.prepare(QUERY)
    server.handler = _answer(ERRORS["Unprepared"])
    before = len(server.requests)
    try:
        with pytest.raises(PreparedQueryNotFound) as info:
            session.execute(prepared, timeout=TIMEOUT)
    finally:
        server.handler = fake.default_reply
    ops = [r.opcode for r in server.requests[before:]]
    assert ops == [fake.EXECUTE, fake.PREPARE, fake.EXECUTE]
    assert info.value.message.startswith("Prepared query with ID %s" % prepared.query_id.hex())
    record(
        "5",
        "Unprepared always / execute",
        injected="every EXECUTE answered Unprepared",
        requests=1,
        failed={"PreparedQueryNotFound": 1},
    )


# --------------------------------------------------------------------------
# The same errors from the real node


REAL_PATHS = ["execute", "execute_async.result", "execute_concurrent.collect", "ReadPipeline", "WritePipeline", "aio"]


@pytest.fixture(scope="module")
def rf3_keyspace(cluster):
    """A keyspace with replication factor 3 on the single node: QUORUM needs 2 replicas."""
    s = cluster.connect()
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS turbocql_test_rf3 WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}"
    )
    s.execute("CREATE TABLE IF NOT EXISTS turbocql_test_rf3.t (k int PRIMARY KEY, v int)")
    s.shutdown()
    return "turbocql_test_rf3"


@pytest.fixture(scope="module")
def udf_input(cluster, keyspace):
    """A table with one row (k 1, v 0): the failing function's input, and the existing table of
    AlreadyExists-table."""
    s = cluster.connect(keyspace)
    s.execute("CREATE TABLE IF NOT EXISTS udf_input (k int PRIMARY KEY, v int)")
    s.execute("INSERT INTO udf_input (k, v) VALUES (1, 0)")
    s.shutdown()
    return "udf_input"


@pytest.fixture(scope="module")
def failing_function(cluster, keyspace, udf_input, node_settings):
    """A Java UDF that throws. It needs user_defined_functions_enabled in the node's
    cassandra.yaml (localdb's has it, Cassandra's stock one not): skipped without it."""
    require_setting(node_settings, "user_defined_functions_enabled")
    s = cluster.connect(keyspace)
    s.execute(
        "CREATE OR REPLACE FUNCTION fails_on_zero(x int) RETURNS NULL ON NULL INPUT RETURNS int "
        "LANGUAGE java AS 'return Integer.valueOf(1 / x);'"
    )
    s.shutdown()
    return "SELECT fails_on_zero(v) FROM %s.%s WHERE k = 1" % (keyspace, udf_input)


def _real_statement(kind, keyspace, rf3_keyspace, udf_input, request):
    from turbocql.query import SimpleStatement

    if kind == "Unavailable":
        return SimpleStatement(
            "SELECT v FROM %s.t WHERE k = 1" % rf3_keyspace, consistency_level=ConsistencyLevel.QUORUM
        )
    if kind == "Unavailable-ALL-write":
        return SimpleStatement(
            "INSERT INTO %s.t (k, v) VALUES (1, 1)" % rf3_keyspace, consistency_level=ConsistencyLevel.ALL
        )
    if kind == "InvalidRequest":
        return "SELECT * FROM %s.no_such_table_here" % keyspace
    if kind == "SyntaxError":
        return "SELEC * FROM system.local"
    if kind == "AlreadyExists-table":
        return "CREATE TABLE %s.%s (k int PRIMARY KEY, v int)" % (keyspace, udf_input)
    if kind == "AlreadyExists-keyspace":
        return "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace
    if kind == "FunctionFailure":
        # Only here: the other kinds run on a node without user-defined functions.
        return request.getfixturevalue("failing_function")
    raise AssertionError(kind)


def _classic_statement(stmt):
    if isinstance(stmt, str):
        return stmt
    from cassandra.query import SimpleStatement

    return SimpleStatement(stmt.query_string, consistency_level=stmt.consistency_level)


REAL_KNOWN: dict = {}

_REAL_ORACLE: dict = {}


def _real_params():
    for kind in (
        "Unavailable",
        "Unavailable-ALL-write",
        "InvalidRequest",
        "SyntaxError",
        "AlreadyExists-table",
        "AlreadyExists-keyspace",
        "FunctionFailure",
    ):
        for path in REAL_PATHS:
            marks = [pytest.mark.xfail(strict=True, reason=REAL_KNOWN[kind])] if kind in REAL_KNOWN else []
            if kind == "FunctionFailure":
                marks.append(pytest.mark.requires_setting("user_defined_functions_enabled"))
            yield pytest.param(kind, path, id="%s-%s" % (kind, path), marks=marks)


@pytest.mark.parametrize("kind,path", list(_real_params()))
def test_real_node_error_as_the_classic_driver(
    request, cluster, session, keyspace, rf3_keyspace, udf_input, kind, path
):
    stmt = _real_statement(kind, keyspace, rf3_keyspace, udf_input, request)
    if kind not in _REAL_ORACLE:
        from cassandra.cluster import Cluster as ClassicCluster

        from tests.conftest import HOST, PORT

        classic = ClassicCluster([HOST], port=PORT, protocol_version=4)
        try:
            _REAL_ORACLE[kind] = describe(raised(_execute, classic.connect(), _classic_statement(stmt)))
        finally:
            classic.shutdown()
    got = describe(raised(PATHS[path], session, stmt))
    record(
        "5",
        "real node %s / %s" % (kind, path),
        injected="single node, %s" % kind,
        requests=1,
        succeeded=0,
        failed={got["class"]: 1},
        hung=0,
        notes="classic driver: %s" % _REAL_ORACLE[kind]["class"],
    )
    assert got == _REAL_ORACLE[kind]


def test_real_node_unavailable_under_fallthrough_is_the_bare_error(cluster, rf3_keyspace):
    """With FallthroughRetryPolicy both drivers raise the node's Unavailable itself (QUORUM of
    RF 3 on one node: 2 required, 1 alive), with the same fields and message."""
    from cassandra.cluster import Cluster as ClassicCluster

    from tests.conftest import HOST, PORT
    from turbocql.cluster import Cluster
    from turbocql.query import SimpleStatement

    q = "SELECT v FROM %s.t WHERE k = 1" % rf3_keyspace
    ours = Cluster([HOST], port=PORT, execution_profiles=_fallthrough_profiles("turbocql"))
    theirs = ClassicCluster([HOST], port=PORT, protocol_version=4, execution_profiles=_fallthrough_profiles("classic"))
    try:
        s, cs = ours.connect(), theirs.connect()
        got = describe(raised(_execute, s, SimpleStatement(q, consistency_level=ConsistencyLevel.QUORUM)))
        from cassandra.query import SimpleStatement as ClassicStatement

        expected = describe(raised(_execute, cs, ClassicStatement(q, consistency_level=ConsistencyLevel.QUORUM)))
    finally:
        ours.shutdown()
        theirs.shutdown()
    assert got == expected
    assert got["class"] == "Unavailable" and (got["required_replicas"], got["alive_replicas"]) == (2, 1)
    record("5", "real node Unavailable / execute / fallthrough", requests=1, failed={"Unavailable": 1})
