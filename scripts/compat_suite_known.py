"""Why a test of the classic driver's suites passes on it and not through turbocql's shim.

The reasons `scripts/compat_suite.py` gives its report: KNOWN_TESTS (by test id) and
KNOWN_ERRORS (by the first error line), each saying why turbocql differs and where a fix
would go (the engine, src/, or a deliberate choice documented in docs/migrating.md's migration
table); a difference neither names is "unexplained".
"""

from __future__ import annotations

import fnmatch
import re

# test id (fnmatch pattern on "file::Class::test") -> reason. Checked before KNOWN_ERRORS.
# The reasons say why turbocql differs and where a fix would go (the engine, src/, or a
# deliberate choice documented in docs/migrating.md's migration table).
_V5 = "crate limit: the engine (the scylla crate) speaks protocol v4 only"
_V3 = (
    "crate limit: the engine (the scylla crate) speaks protocol v4 only; protocol_version=3 raises "
    "UnsupportedOperation at Cluster() rather than speak v4 under its name"
)
_REACTOR = (
    "deliberate: turbocql has no event-loop reactors; the engine does the I/O, so reactor connection "
    "classes are configuration-only names (no Connection.factory, no per-connection objects)"
)
_CONTROL = (
    "crate limit: the control connection is the crate's, which does not say which node it uses; its "
    "connection object, host and event handlers (ControlConnection._connection, "
    "Cluster.get_control_connection_host, Cluster.on_down) are not exposed"
)
_CONNECTIONS = (
    "crate limit: the crate's connection pools are not exposed (Cluster.get_connection_holders, "
    "Session.get_pool_state()'s open_count / in_flights); heartbeats are its keepalives"
)
_PREPARE_ON_ALL_HOSTS = (
    "deliberate: Cluster(prepare_on_all_hosts=False) raises UnsupportedOperation (the engine prepares every "
    "statement on every node; docs/audit-accepted-settings.md), and the classic driver's 'Re-preparing' debug "
    "message the test counts never comes"
)
_SINGLE_NODE_ORDER = (
    "single node: a QUORUM write is Unavailable on one node; the engine reports the first error in "
    "completion order (that Unavailable), the classic driver the bind TypeError it raises while still "
    "submitting; passes on the three-node cluster"
)
_SCHEMA_PARSER = (
    "deliberate: the tests patch or call the classic driver's schema parser (get_schema_parser, "
    "SchemaParserV4._build_*); turbocql reads system_schema itself (turbocql._metadata.schema_read) and "
    "get_schema_parser raises UnsupportedOperation; they first read the control connection's "
    "_connection (" + _CONTROL + ")"
)

KNOWN_TESTS: dict[str, str] = {
    # test_cluster.py
    "test_cluster.py::ClusterTests::test_protocol_negotiation": _V5 + " (negotiates v4 with Cassandra 5, not v5)",
    "test_cluster.py::BetaProtocolTest::*": _V5 + " (no beta v6)",
    "test_cluster.py::ClusterTests::test_idle_heartbeat*": _CONNECTIONS,
    "test_cluster.py::ClusterTests::test_pool_management": _CONNECTIONS,
    "test_cluster.py::HostStateTest::test_down_event_with_active_connection": _CONTROL,
    # test_concurrent.py
    "test_concurrent.py::ClusterTests::test_first_failure_client_side": _SINGLE_NODE_ORDER,
    # test_connection.py
    "test_connection.py::*ConnectionTests::*": _REACTOR,
    "test_connection.py::ConnectionTimeoutTest::test_in_flight_timeout": _REACTOR,
    # test_control_connection.py
    "test_control_connection.py::*": _CONTROL,
    # test_custom_protocol_handler.py
    "test_custom_protocol_handler.py::CustomProtocolHandlerTest::test_custom_raw_*": (
        "deliberate: a client_protocol_handler that replaces message decoding (message_types_by_opcode) "
        "raises UnsupportedOperation: the engine encodes and decodes every frame"
    ),
    "test_custom_protocol_handler.py::CustomProtocolHandlerTest::test_protocol_*": (
        "deliberate: the tests build ResponseFuture(session, QueryMessage, ...) by hand and call "
        "send_request() to send classic message objects; the engine builds and sends every frame itself "
        "(three of the four are protocol v5 tests: " + _V5 + ")"
    ),
    # test_metadata.py
    "test_metadata.py::BadMetaTest::*": _SCHEMA_PARSER,
    "test_metadata.py::SchemaMetadataTests::test_basic_table_meta_properties": _SCHEMA_PARSER,
    "test_metadata.py::AggregateMetadata::test_init_cond": _V3,
    # test_prepared_statements.py
    "test_prepared_statements.py::PreparedStatementInvalidationTest::test_id_is_not_updated_conditional_v*": (
        _V5 + ": result_metadata_id and the re-prepare on changed result metadata are v5 features"
    ),
    "test_prepared_statements.py::PreparedStatementInvalidationTest::test_invalidated_result_metadata": (
        "crate limit: PreparedStatement.result_metadata is its PREPARE's; the crate prepares again on "
        "UNPREPARED and decodes each page with the metadata that page carries (the rows are right), but "
        "does not hand the new metadata back"
    ),
    # test_query.py
    "test_query.py::PreparedStatementTests::test_*_routing_key_indexes": (
        "deliberate: PreparedStatement.routing_key_indexes other than the server's partition key columns "
        "raises UnsupportedOperation: the engine routes a prepared statement by the columns the server "
        "reports, so another value would be accepted and ignored"
    ),
    "test_query.py::PreparedStatementMetdataTest::test_prepared_metadata_generation": _V3,
    "test_query.py::BatchStatementTests::test_too_many_statements": (
        "deliberate: the test appends a malformed tuple to BatchStatement._statements_and_parameters; "
        "turbocql refuses it when building the request (TypeError), the classic driver when encoding "
        "(NoHostAvailable)"
    ),
    "test_query.py::PreparedStatementArgTest::test_prepare_batch_statement": _PREPARE_ON_ALL_HOSTS,
    "test_query.py::*WithKeyspaceTests::*": _V5 + " (a statement's own keyspace, prepare(keyspace=...))",
    # test_types.py
    "test_types.py::TypeTests::test_des_bytes_type_array": (
        "deliberate: turbocql has no Cython deserializers (cython_deps.HAVE_CYTHON is False), so the test skips itself"
    ),
    # cqlengine
    "model/test_model.py::TestDeprecationWarning::test_deprecation_warnings": (
        "deliberate: 3 warnings, not 4: the classic sync_table works on a clone of the model class "
        "(ContextQuery), whose table name is derived again, so the case-sensitive name warning comes once "
        "for the clone and once for the class; turbocql syncs the class itself and warns once"
    ),
    "test_types.py::TypeTests::test_can_read_composite_type": (
        "crate limit: the crate cannot decode a result column of a custom type "
        "(org.apache.cassandra.db.marshal.CompositeType): its result metadata parser refuses it"
    ),
}

# regular expression on the first error line -> reason.
KNOWN_ERRORS: dict[str, str] = {
    r"prepare_on_all_hosts": _PREPARE_ON_ALL_HOSTS,
    r"(retry_policy|custom_payload): ": (
        "deliberate: a statement's retry_policy or custom_payload raises UnsupportedOperation (the engine "
        "applies the profile's retry policy and sends no payload; docs/audit-accepted-settings.md)"
    ),
}

UNEXPLAINED = "unexplained"


def explain(test_id: str, first_error: str) -> str:
    for pattern, reason in KNOWN_TESTS.items():
        if fnmatch.fnmatchcase(test_id, pattern):
            return reason
    for pattern, reason in KNOWN_ERRORS.items():
        if re.search(pattern, first_error):
            return reason
    return UNEXPLAINED


def regressions(files: dict) -> list[dict]:
    """Every test that passes on the classic driver and not on turbocql, with its reason."""
    out = []
    for name, per_run in files.items():
        classic, turbo = per_run.get("classic") or {}, per_run.get("turbocql") or {}
        t_tests = turbo.get("tests") or {}
        for test, status in (classic.get("tests") or {}).items():
            if status != "passed" or t_tests.get(test) == "passed":
                continue
            test_id = "%s::%s" % (name, test)
            t_status = t_tests.get(test, "not run")
            first = (turbo.get("first_errors") or {}).get(test) or t_status
            if t_status == "not run" and turbo.get("reasons"):
                first = next(iter(turbo["reasons"]))
            out.append({"test": test_id, "status": t_status, "first_error": first, "reason": explain(test_id, first)})
    return out
