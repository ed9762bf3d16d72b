"""turbocql's loggers, one per concern, and the logger names they log under.

Every record turbocql emits goes through one of the objects here: the Python modules keep
them (``log = _loggers.cluster``), and so does the engine (src/pyrefs.rs ``cluster_log``,
``pool_log``, ``protocol_log``, handed over by ``_cluster.bootstrap``). Each is a
:class:`logging.LoggerAdapter` that adds nothing to a record: it passes every call to the
:class:`logging.Logger` of its concern's current name, so a record is the one a
``logging.getLogger(name).warning(...)`` call would make (caller, level, arguments), and a
user's handlers, levels and filters on that name apply.

The names: ``turbocql.<concern>`` by default; ``cassandra.<concern>``, the classic driver's
logger names, once the compat shim is installed (``turbocql.compat.install()`` calls
:func:`use_prefix`), so that logging configured for the classic driver sees turbocql's
records under the names it filters on. Imports nothing of turbocql.
"""

from __future__ import annotations

import logging

#: The concerns, named as the classic driver's modules whose loggers carry those records.
CONCERNS = ("cluster", "pool", "connection", "policies", "metadata", "query", "protocol", "auth", "timestamps")

#: turbocql's own prefix, and the classic driver's (the compat shim's).
OWN_PREFIX = "turbocql"
CLASSIC_PREFIX = "cassandra"


class ConcernLogger(logging.LoggerAdapter[logging.Logger]):
    """The logger of one concern: every call goes to ``self.logger``, the
    :class:`logging.Logger` named ``<prefix>.<concern>`` for the current prefix."""

    def __init__(self, concern: str) -> None:
        super().__init__(logging.getLogger("%s.%s" % (OWN_PREFIX, concern)))
        self.concern = concern

    def process(self, msg, kwargs):
        return msg, kwargs  # no ``extra``: the record is the underlying logger's own

    def __repr__(self) -> str:
        return "<%s %s -> %s>" % (type(self).__name__, self.concern, self.logger.name)


cluster = ConcernLogger("cluster")
pool = ConcernLogger("pool")
connection = ConcernLogger("connection")
policies = ConcernLogger("policies")
metadata = ConcernLogger("metadata")
query = ConcernLogger("query")
protocol = ConcernLogger("protocol")
auth = ConcernLogger("auth")
timestamps = ConcernLogger("timestamps")

_BY_CONCERN = {c.concern: c for c in (cluster, pool, connection, policies, metadata, query, protocol, auth, timestamps)}
assert tuple(_BY_CONCERN) == CONCERNS

_prefix = OWN_PREFIX


def prefix() -> str:
    """The prefix the loggers log under now (``"turbocql"`` or ``"cassandra"``)."""
    return _prefix


def use_prefix(new_prefix: str) -> None:
    """Re-points every concern's logger to ``<new_prefix>.<concern>``. Takes effect for the
    next record, in Python and in the engine alike (both hold the objects of this module).
    ``use_prefix("cassandra")`` is what the compat shim's ``install()`` does;
    ``uninstall()`` calls ``use_prefix("turbocql")``."""
    global _prefix
    for concern, adapter in _BY_CONCERN.items():
        adapter.logger = logging.getLogger("%s.%s" % (new_prefix, concern))
    _prefix = new_prefix


def get(concern: str) -> ConcernLogger:
    """The logger of ``concern`` (one of :data:`CONCERNS`)."""
    return _BY_CONCERN[concern]
