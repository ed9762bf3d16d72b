"""Why a test of the classic driver's suites passes on it and not through turbocql's shim.

The reasons `scripts/compat_suite.py` gives its report: KNOWN_TESTS (by test id) and
KNOWN_ERRORS (by the first error line), each saying why turbocql differs and where a fix
would go (the engine, src/, or a deliberate choice documented in the README's migration
table); a difference neither names is "unexplained".
"""

from __future__ import annotations

import fnmatch
import re

# test id (fnmatch pattern on "file::Class::test") -> reason. Checked before KNOWN_ERRORS.
# The reasons say why turbocql differs and where a fix would go (the engine, src/, or a
# deliberate choice documented in the README's migration table).
_COORDINATOR = (
    "engine: the host that served a request (ResponseFuture.coordinator_host / _current_host / "
    "attempted_hosts) is not reported by the engine to Python, and the sync path makes no ResponseFuture "
    "(ResultSet.response_future is None on session.execute)"
)
_V5 = "protocol v5: the engine (the scylla crate) speaks protocol v4 only"
_REACTOR = (
    "deliberate: turbocql has no event-loop reactors; the engine does the I/O, so reactor connection "
    "classes are configuration-only names (no Connection.factory, no per-connection objects)"
)
_CONTROL = (
    "engine: the control connection is the crate's; its connection object, host and event handlers "
    "(ControlConnection._connection, Cluster.get_control_connection_host, on_down) are not exposed"
)
_METRICS = (
    "deliberate: Cluster(metrics_enabled=True) raises UnsupportedOperation, cluster.metrics is not "
    "provided (README migration table)"
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
KNOWN_TESTS: dict[str, str] = {
    # test_cluster.py
    "test_cluster.py::ClusterTests::test_auth_provider_is_callable": (
        "deliberate: Cluster(protocol_version=1/2) raises UnsupportedOperation at construction (the engine "
        "speaks v4 only)"
    ),
    "test_cluster.py::ClusterTests::test_v2_auth_provider": (
        "deliberate: Cluster(protocol_version=1/2) raises UnsupportedOperation at construction (the engine "
        "speaks v4 only)"
    ),
    "test_cluster.py::ClusterTests::test_protocol_negotiation": _V5 + " (negotiates v4 with Cassandra 5, not v5)",
    "test_cluster.py::BetaProtocolTest::*": _V5 + " (no beta v6)",
    "test_cluster.py::ClusterTests::test_execute_query_timeout": _COORDINATOR,
    "test_cluster.py::ClusterTests::test_clone_shared_lbp": _COORDINATOR,
    "test_cluster.py::ClusterTests::test_profile_lb_swap": _COORDINATOR,
    "test_cluster.py::ClusterTests::test_idle_heartbeat": (
        "engine: heartbeats are the crate's; connections (Cluster.get_connection_holders) are not exposed"
    ),
    "test_cluster.py::ClusterTests::test_idle_heartbeat_disabled": (
        "engine: heartbeats are the crate's; idle_heartbeat_interval is a configuration-only attribute "
        "and connections (get_connection_holders) are not exposed"
    ),
    "test_cluster.py::ClusterTests::test_pool_management": (
        "engine: Session.get_pool_state() has open_count/in_flights None (the crate does not expose connection counts)"
    ),
    "test_cluster.py::ClusterTests::test_refresh_schema*": (
        "metadata.py (other engineer): a refresh builds new KeyspaceMetadata objects that do not compare "
        "equal to the old ones (the classic driver's compare equal)"
    ),
    "test_cluster.py::HostStateTest::test_down_event_with_active_connection": _CONTROL,
    # test_concurrent.py
    "test_concurrent.py::ClusterTests::test_first_failure_client_side": _SINGLE_NODE_ORDER,
    "test_concurrent.py::ClusterTests::test_execute_concurrent_paged_result*": (
        "engine: execute_concurrent's ResultSets carry no request (make_result(page) gets the page only), "
        "so iterating past the first page of a paged result fails (ResultSet._request is None); the "
        "request has to be handed to make_result in src/api/concurrent.rs"
    ),
    "test_query_paging.py::QueryPagingTests::test_concurrent_with_paging": (
        "engine: execute_concurrent's ResultSets carry no request (make_result(page) gets the page only), "
        "so iterating past the first page of a paged result fails (ResultSet._request is None); the "
        "request has to be handed to make_result in src/api/concurrent.rs"
    ),
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
        "engine: builds ResponseFuture(session, QueryMessage, ...) and calls send_request(); the engine "
        "builds and sends requests itself (and these exercise protocol v5 flags)"
    ),
    # test_metadata.py
    "test_metadata.py::BadMetaTest::*": _CONTROL + " (the tests patch the control connection's queries)",
    "test_metadata.py::SchemaMetadataTests::test_basic_table_meta_properties": _CONTROL,
    "test_metadata.py::SchemaMetadataTests::test_schema_metadata_disable": (
        "metadata.py (other engineer): with schema_metadata_enabled=False cluster.metadata.token_map is None"
    ),
    "test_metadata.py::SchemaMetadataTests::test_table_extensions": (
        "metadata.py (other engineer): registered table extensions are not read back"
    ),
    "test_metadata.py::FunctionMetadata::*": "metadata.py (other engineer): user functions missing from metadata",
    "test_metadata.py::AggregateMetadata::*": "metadata.py (other engineer): user aggregates missing from metadata",
    # test_policies.py
    "test_policies.py::*": _COORDINATOR,
    # test_prepared_statements.py
    "test_prepared_statements.py::PreparedStatementTests::*": _METRICS + " (their setUp uses it)",
    "test_prepared_statements.py::PreparedStatementInvalidationTest::test_prepare_id_is_updated_across_session": (
        _METRICS
    ),
    "test_prepared_statements.py::PreparedStatementInvalidationTest::*": (
        _V5 + ": result_metadata_id and the re-prepare on changed result metadata are v5 features; the "
        "engine re-prepares itself"
    ),
    # test_query.py
    "test_query.py::QueryTests::test_host_targeting_query": _COORDINATOR,
    "test_query.py::BatchStatementTests::test_too_many_statements": (
        "deliberate: the test appends a malformed tuple to BatchStatement._statements_and_parameters; "
        "turbocql refuses it when building the request (TypeError), the classic driver when encoding "
        "(NoHostAvailable)"
    ),
    "test_query.py::PreparedStatementArgTest::test_prepare_batch_statement": _PREPARE_ON_ALL_HOSTS,
    "test_query.py::SerialConsistencyTests::*": (
        "engine: ResponseFuture.message (the classic QueryMessage sent) is not kept; the engine builds the "
        "frame (the statement's serial_consistency_level is what is sent)"
    ),
    "test_query.py::*WithKeyspaceTests::*": _V5 + " (a statement's own keyspace, prepare(keyspace=...))",
    # test_types.py
    "test_types.py::TypeTests::test_des_bytes_type_array": (
        "deliberate: turbocql has no Cython deserializers (cython_deps.HAVE_CYTHON is False), so the test skips itself"
    ),
}

# regular expression on the first error line -> reason.
KNOWN_ERRORS: dict[str, str] = {
    r"metrics_enabled": _METRICS,
    r"prepare_on_all_hosts": _PREPARE_ON_ALL_HOSTS,
    r"(retry_policy|custom_payload): ": (
        "deliberate: a statement's retry_policy or custom_payload raises UnsupportedOperation (the engine "
        "applies the profile's retry policy and sends no payload; docs/audit-accepted-settings.md)"
    ),
    r"Unexpected receiver type": (
        "encoding of registered UDT instances in simple statements (fixed in this change: "
        "Session.user_type_registered); seen only in runs before it"
    ),
    r"unhashable type: '(bytearray|dict|list|SortedSet|set)'": (
        "util.OrderedMap with unhashable keys (other engineer's fix in util.py, landing)"
    ),
    r"Failed to parse a CQL type|Bad tables metadata|deserialize result metadata": (
        "engine: the crate's schema/metadata parser fails on a custom or quoted type "
        "(org.apache.cassandra.db.marshal.*, quoted UDT names; the Rust fix is landing)"
    ),
    r"Too few|UNSET_VALUE": "engine: bind pads short sequences with UNSET_VALUE like classic (landing in the engine)",
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
