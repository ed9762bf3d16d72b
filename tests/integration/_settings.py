"""Tests that need a non-default setting of the node's cassandra.yaml.

`turbocql localdb start` writes a cassandra.yaml that differs from Cassandra 5.0's stock
`conf/cassandra.yaml` where the tests need it (localdb/turbocql_localdb/config.py):
materialized views, user-defined functions and SASI indexes are enabled. A node the project
did not start may have them off, and then refuses the statements that need them. Such a
test is marked ``@pytest.mark.requires_setting("materialized_views_enabled")`` (the value
"true" unless given: ``requires_setting(NAME, VALUE)``), or, for a fixture of a wider scope
than the test, calls :func:`require_setting`. It is then skipped, naming the setting, when
the node's ``system_views.settings`` says otherwise, rather than failing the run.

The settings are read once per session (the ``node_settings`` fixture of conftest.py); the
decision is :func:`skip_reason`, a pure function (tests/unit/test_node_settings.py).
"""

from __future__ import annotations

import pytest

from tests.conftest import HOST, PORT


class Unreadable:
    """The node's settings could not be read (``system_views.settings`` refused: ``error``)."""

    def __init__(self, error: str):
        self.error = error


def skip_reason(settings, name: str, value: str = "true", where: str | None = None) -> str | None:
    """Why a test that needs ``name: value`` in cassandra.yaml cannot run on the node whose
    ``system_views.settings`` rows are ``settings`` (a dict name -> value, or
    :class:`Unreadable`), or None when it can. ``where``: the node's address, for the message."""
    where = where or "%s:%d" % (HOST, PORT)
    if isinstance(settings, Unreadable):
        return "needs %s: %s in cassandra.yaml, and the node at %s does not tell its settings (%s)" % (
            name,
            value,
            where,
            settings.error,
        )
    if name not in settings:
        return "needs %s: %s in cassandra.yaml; the node at %s does not report %s in system_views.settings" % (
            name,
            value,
            where,
            name,
        )
    actual = settings[name]
    if str(actual).strip().lower() == str(value).strip().lower():
        return None
    return (
        "the node at %s has %s: %s in its cassandra.yaml; this test needs %s: %s "
        "(as `turbocql localdb start` configures it)" % (where, name, actual, name, value)
    )


def require_setting(settings, name: str, value: str = "true") -> None:
    """Skips the test (or the fixture, and so every test using it) unless the node has
    ``name: value`` (:func:`skip_reason`)."""
    reason = skip_reason(settings, name, value)
    if reason is not None:
        pytest.skip(reason)


def marked_skip_reason(item, settings) -> str | None:
    """The skip reason of the first ``requires_setting`` mark of ``item`` the node does not
    satisfy, or None."""
    for mark in item.iter_markers("requires_setting"):
        reason = skip_reason(settings, *mark.args, **mark.kwargs)
        if reason is not None:
            return reason
    return None
