"""The skip decision of the tests that need a cassandra.yaml setting (tests/integration/_settings.py).

Given the ``system_views.settings`` rows of a node, which integration tests are skipped and
why: none on a node as ``turbocql localdb start`` configures it; on a node with Cassandra's
stock cassandra.yaml, exactly those that make materialized views, user-defined functions or
SASI indexes, each with a reason naming the setting.
"""

import pytest

from tests.integration import _settings
from tests.integration import test_metadata as metadata_tests
from tests.integration import test_server_errors as server_error_tests

WHERE = "127.0.0.1:9050"

# The rows of the settings concerned, as localdb's node and a stock 5.0.6 node report them.
LOCALDB = {
    "materialized_views_enabled": "true",
    "user_defined_functions_enabled": "true",
    "sasi_indexes_enabled": "true",
    "storage_compatibility_mode": "NONE",
}
STOCK = {
    "materialized_views_enabled": "false",
    "user_defined_functions_enabled": "false",
    "sasi_indexes_enabled": "false",
    "storage_compatibility_mode": "CASSANDRA_4",
}


def test_skip_reason_names_the_setting():
    assert _settings.skip_reason(LOCALDB, "materialized_views_enabled", where=WHERE) is None
    assert _settings.skip_reason({"x_enabled": "TRUE"}, "x_enabled", where=WHERE) is None
    assert _settings.skip_reason(STOCK, "storage_compatibility_mode", "CASSANDRA_4", where=WHERE) is None
    assert _settings.skip_reason(STOCK, "user_defined_functions_enabled", where=WHERE) == (
        "the node at 127.0.0.1:9050 has user_defined_functions_enabled: false in its cassandra.yaml; "
        "this test needs user_defined_functions_enabled: true (as `turbocql localdb start` configures it)"
    )
    assert _settings.skip_reason(LOCALDB, "storage_compatibility_mode", "CASSANDRA_4", where=WHERE) == (
        "the node at 127.0.0.1:9050 has storage_compatibility_mode: NONE in its cassandra.yaml; "
        "this test needs storage_compatibility_mode: CASSANDRA_4 (as `turbocql localdb start` configures it)"
    )
    # A node that does not report the setting, or refuses to tell its settings: skipped too.
    missing = _settings.skip_reason({}, "sasi_indexes_enabled", where=WHERE)
    assert missing is not None and "does not report sasi_indexes_enabled" in missing
    refused = _settings.skip_reason(_settings.Unreadable("InvalidRequest: unconfigured table settings"), "a_b", "x")
    assert refused is not None and "needs a_b: x" in refused and "unconfigured table settings" in refused


def _marked(function, params=()):
    """``function``'s requires_setting marks, and those of its parametrize case ``params``."""
    marks = [m for m in getattr(function, "pytestmark", []) if m.name == "requires_setting"]
    return marks + [m for m in getattr(params, "marks", ()) if m.name == "requires_setting"]


class _Item:
    """What ``marked_skip_reason`` reads of a collected test: its marks."""

    def __init__(self, marks):
        self.marks = marks

    def iter_markers(self, name):
        return (m for m in self.marks if m.name == name)


def _integration_tests():
    """name -> marks of the tests that use a node setting, and of some that must not."""
    tests = {
        name: _marked(getattr(metadata_tests, name))
        for name in dir(metadata_tests)
        if name.startswith("test_") and callable(getattr(metadata_tests, name))
    }
    for case in server_error_tests._real_params():
        tests["test_real_node_error_as_the_classic_driver[%s]" % case.id] = _marked(
            server_error_tests.test_real_node_error_as_the_classic_driver, case
        )
    return tests


def _skipped(settings):
    tests = _integration_tests()
    reasons = {name: _settings.marked_skip_reason(_Item(marks), settings) for name, marks in tests.items()}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def test_nothing_skips_on_a_localdb_node():
    assert _skipped(LOCALDB) == {}


def test_on_a_stock_node_exactly_the_tests_of_disabled_features_skip():
    skipped = _skipped(STOCK)
    function_failure = {
        "test_real_node_error_as_the_classic_driver[FunctionFailure-%s]" % path
        for path in server_error_tests.REAL_PATHS
    }
    assert set(skipped) == {
        "test_materialized_views_match_the_classic_driver",
        "test_refresh_keeps_the_views",
        "test_sasi_index",
        "test_functions_and_aggregates_match_the_classic_driver",
        "test_a_keyspaces_dicts_held_by_the_application_follow_changes_as_classic",
        *function_failure,
    }
    udf_tests = {
        "test_functions_and_aggregates_match_the_classic_driver",
        "test_a_keyspaces_dicts_held_by_the_application_follow_changes_as_classic",
    }
    for name in function_failure | udf_tests:
        assert "user_defined_functions_enabled: false" in skipped[name]
    assert "materialized_views_enabled: false" in skipped["test_refresh_keeps_the_views"]
    assert "sasi_indexes_enabled: false" in skipped["test_sasi_index"]
    # The other real-node errors (Unavailable, AlreadyExists on udf_input, ...) still run.
    assert "test_real_node_error_as_the_classic_driver[AlreadyExists-table-execute]" not in skipped


def test_a_fixture_that_needs_a_setting_skips():
    with pytest.raises(pytest.skip.Exception, match="user_defined_functions_enabled: false"):
        _settings.require_setting(STOCK, "user_defined_functions_enabled")
    _settings.require_setting(LOCALDB, "user_defined_functions_enabled")
