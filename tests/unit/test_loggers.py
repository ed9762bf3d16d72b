"""turbocql._loggers: one logger per concern, logging under ``turbocql.<concern>``, or under
the classic driver's ``cassandra.<concern>`` once re-pointed (what the compat shim does)."""

import importlib
import logging
import subprocess
import sys
import textwrap

import pytest

from turbocql import _loggers

# The modules that log, and the concern each logs on.
MODULES = {
    "turbocql.cluster": "cluster",
    "turbocql._cluster.control": "cluster",
    "turbocql._session.results": "cluster",
    "turbocql._types.udt": "cluster",
    "turbocql.policies": "policies",
    "turbocql.metadata": "metadata",
    "turbocql._metadata.schema_read": "metadata",
    "turbocql._metadata.replication": "metadata",
    "turbocql.query": "query",
    "turbocql.auth": "auth",
    "turbocql.timestamps": "timestamps",
}


class Kept(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def kept():
    """A handler on both the ``turbocql`` and the ``cassandra`` loggers, at DEBUG."""
    handler = Kept()
    loggers = [logging.getLogger(n) for n in ("turbocql", "cassandra")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield handler
    for lg, level in zip(loggers, levels):
        lg.removeHandler(handler)
        lg.setLevel(level)


@pytest.fixture
def classic_names():
    """turbocql's loggers re-pointed to the classic names for the test, then back."""
    _loggers.use_prefix(_loggers.CLASSIC_PREFIX)
    try:
        yield
    finally:
        _loggers.use_prefix(_loggers.OWN_PREFIX)


@pytest.mark.parametrize("module, concern", sorted(MODULES.items()))
def test_every_module_logs_through_its_concerns_logger(module, concern):
    assert importlib.import_module(module).log is _loggers.get(concern)


def test_by_default_records_go_to_turbocqls_own_names(kept):
    import turbocql.cluster

    turbocql.cluster.log.warning("Host %s has been marked down", "127.0.0.12:9042")
    _loggers.pool.info("pool %s", 1)
    assert [(r.name, r.levelname, r.getMessage()) for r in kept.records] == [
        ("turbocql.cluster", "WARNING", "Host 127.0.0.12:9042 has been marked down"),
        ("turbocql.pool", "INFO", "pool 1"),
    ]
    assert _loggers.prefix() == "turbocql"


def test_re_pointed_records_go_to_the_classic_names_with_the_callers_location(kept, classic_names):
    import turbocql.cluster

    assert _loggers.prefix() == "cassandra"
    turbocql.cluster.log.warning("Host %s has been marked down", "127.0.0.12:9042")
    for concern in _loggers.CONCERNS:
        _loggers.get(concern).error("on %s", concern)
    names = [r.name for r in kept.records]
    assert names == ["cassandra.cluster"] + ["cassandra.%s" % c for c in _loggers.CONCERNS]
    first = kept.records[0]
    # The record is the classic logger's own: its caller is this function, not logging's.
    assert first.funcName == "test_re_pointed_records_go_to_the_classic_names_with_the_callers_location"
    assert first.pathname == __file__


def test_a_users_level_and_filter_on_a_classic_name_apply(kept, classic_names):
    pool = logging.getLogger("cassandra.pool")
    old_level = pool.level
    pool.setLevel(logging.ERROR)
    dropping = logging.Filter("nothing")  # passes only records of a logger named "nothing..."
    cluster = logging.getLogger("cassandra.cluster")
    cluster.addFilter(dropping)
    try:
        _loggers.pool.warning("below the level set on cassandra.pool")
        _loggers.pool.error("kept")
        _loggers.cluster.warning("filtered out on cassandra.cluster")
        assert _loggers.pool.isEnabledFor(logging.ERROR) and not _loggers.pool.isEnabledFor(logging.WARNING)
    finally:
        pool.setLevel(old_level)
        cluster.removeFilter(dropping)
    assert [(r.name, r.getMessage()) for r in kept.records] == [("cassandra.pool", "kept")]


def test_repointing_back_restores_turbocqls_names(kept):
    _loggers.use_prefix(_loggers.CLASSIC_PREFIX)
    _loggers.use_prefix(_loggers.OWN_PREFIX)
    _loggers.metadata.warning("m")
    assert [r.name for r in kept.records] == ["turbocql.metadata"]
    assert repr(_loggers.metadata) == "<ConcernLogger metadata -> turbocql.metadata>"


def _run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_shim_re_points_the_loggers_and_uninstall_puts_them_back():
    proc = _run(
        """
        import logging
        import turbocql.compat
        from turbocql import _loggers
        turbocql.compat.install(allow_shadow=True)
        import cassandra.cluster
        assert _loggers.prefix() == "cassandra", _loggers.prefix()
        assert cassandra.cluster.log.logger is logging.getLogger("cassandra.cluster")
        # As `import cassandra` does: a NullHandler on the cassandra logger, so a program
        # that configures no logging prints nothing (not even Python's last-resort output).
        assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("cassandra").handlers)
        cassandra.cluster.log.warning("not printed")
        turbocql.compat.uninstall()
        assert _loggers.prefix() == "turbocql"
        assert not logging.getLogger("cassandra").handlers
        """
    )
    assert proc.stderr == ""
