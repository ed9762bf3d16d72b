"""A pytest plugin for the runs under emulation: every pytest-timeout limit multiplied.

scripts/arm64.sh runs the tests on an arm64 Python under qemu, several times slower than the
same tests on the host, so it loads this plugin (``-p tests.timeout_scale``) and sets
``TURBOCQL_TEST_TIMEOUT_SCALE`` (a number, e.g. 8). Each test's limit, its own
``@pytest.mark.timeout`` or the run's (``--timeout``, ``PYTEST_TIMEOUT``, else the ``timeout``
of pyproject.toml), is multiplied by it; a test with no limit (0) keeps none. Not loaded,
or with the variable unset or 1, the limits are the usual ones.
"""

from __future__ import annotations

import os

import pytest

ENV = "TURBOCQL_TEST_TIMEOUT_SCALE"


def scale_from_env(environ=os.environ) -> float:
    """The multiplier the environment asks for (1 when unset); a bad value is an error."""
    raw = environ.get(ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError("%s=%r is not a number" % (ENV, raw)) from None
    if value <= 0:
        raise pytest.UsageError("%s=%r must be above 0" % (ENV, raw))
    return value


def scaled_marker_args(args: tuple, kwargs: dict, default: float | None, scale: float) -> tuple[tuple, dict]:
    """A timeout marker's arguments with its limit (positional or ``timeout=``; ``default``
    when it names none) multiplied by ``scale``; its method and func_only kept."""
    kwargs = dict(kwargs)
    if args:
        limit, rest = args[0], tuple(args[1:])
    else:
        limit, rest = kwargs.pop("timeout", default), ()
    if limit is None or float(limit) <= 0:
        return ((limit,) if limit is not None else ()) + rest, kwargs
    return (float(limit) * scale, *rest), kwargs


def _run_timeout(config: pytest.Config) -> float | None:
    """The run's limit as pytest-timeout reads it: --timeout, PYTEST_TIMEOUT, the ini value."""
    for value in (config.getoption("timeout", None), os.environ.get("PYTEST_TIMEOUT"), config.getini("timeout")):
        if value not in (None, ""):
            return float(value)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scale = scale_from_env()
    if scale == 1:
        return
    default = _run_timeout(config)
    for item in items:
        marker = item.get_closest_marker("timeout")
        args, kwargs = (marker.args, marker.kwargs) if marker else ((), {})
        if not marker and default is None:
            continue
        new_args, new_kwargs = scaled_marker_args(args, kwargs, default, scale)
        # First among the item's own markers: get_closest_marker (pytest-timeout's) finds it.
        item.add_marker(pytest.mark.timeout(*new_args, **new_kwargs), append=False)


def pytest_report_header(config: pytest.Config) -> str | None:
    scale = scale_from_env()
    return None if scale == 1 else "timeouts multiplied by %g (%s)" % (scale, ENV)
