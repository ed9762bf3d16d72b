"""Query tracing of ``turbocql.query`` (which re-exports every name here): :class:`QueryTrace`,
the server's trace of one request, read from ``system_traces``; :class:`TraceEvent`, one of
its events; :class:`TraceUnavailable`.
"""

import datetime
import time
from collections.abc import Mapping

from turbocql import OperationTimedOut
from turbocql._query.statement import SimpleStatement
from turbocql.util import unix_time_from_uuid1


class QueryTrace:
    """A server-side trace of one request (``execute(..., trace=True)``), read from
    ``system_traces`` by :meth:`populate`, as the classic driver does: ``events`` is a
    tuple of :class:`TraceEvent`; the rows are read whatever the session's row factory."""

    trace_id = None
    request_type = None
    duration = None
    client = None
    coordinator = None
    parameters = None
    started_at = None
    events = None
    _session = None

    _SELECT_SESSIONS_FORMAT = "SELECT * FROM system_traces.sessions WHERE session_id = %s"
    _SELECT_EVENTS_FORMAT = "SELECT * FROM system_traces.events WHERE session_id = %s"
    _BASE_RETRY_SLEEP = 0.003

    def __init__(self, trace_id, session):
        self.trace_id = trace_id
        self._session = session

    def populate(self, max_wait=2.0, wait_for_complete=True, query_cl=None):
        """Reads the trace (retrying until the server has written it all, up to
        ``max_wait`` seconds, forever if None: then ``TraceUnavailable``).
        ``wait_for_complete=False`` takes a trace whose duration is not written yet;
        ``query_cl`` is the consistency level of the reads (None: the session's)."""
        attempt = 0
        start = time.time()
        while True:
            time_spent = time.time() - start
            if max_wait is not None and time_spent >= max_wait:
                raise TraceUnavailable(
                    "Trace information was not available within %f seconds. Consider raising "
                    "Session.max_trace_wait." % (max_wait,)
                )
            rows = self._execute(self._SELECT_SESSIONS_FORMAT, query_cl, time_spent, max_wait)
            row = rows[0] if rows else None
            is_complete = row is not None and row.get("duration") is not None and row.get("started_at") is not None
            if row is None or (wait_for_complete and not is_complete):
                time.sleep(self._BASE_RETRY_SLEEP * (2**attempt))
                attempt += 1
                continue
            self.request_type = row.get("request")
            self.duration = datetime.timedelta(microseconds=row["duration"]) if is_complete else None
            self.started_at = row.get("started_at")
            self.coordinator = row.get("coordinator")
            self.parameters = row.get("parameters")
            self.client = row.get("client")
            time_spent = time.time() - start
            events = self._execute(self._SELECT_EVENTS_FORMAT, query_cl, time_spent, max_wait)
            self.events = tuple(
                TraceEvent(r.get("activity"), r["event_id"], r.get("source"), r.get("source_elapsed"), r.get("thread"))
                for r in events
            )
            break

    def _execute(self, query, query_cl, time_spent, max_wait):
        """The rows of ``query`` for this trace as dicts (any row factory)."""
        timeout = (max_wait - time_spent) if max_wait is not None else None
        statement = SimpleStatement(query, consistency_level=query_cl)
        try:
            result = self._session.execute(statement, (self.trace_id,), timeout=timeout)
        except OperationTimedOut:
            raise TraceUnavailable("Trace information was not available within %f seconds" % (max_wait,)) from None
        names = result.column_names
        return [dict(r) if isinstance(r, Mapping) else dict(zip(names, r)) for r in result]

    def __str__(self):
        return "%s [%s] coordinator: %s, started at: %s, duration: %s, parameters: %s" % (
            self.request_type,
            self.trace_id,
            self.coordinator,
            self.started_at,
            self.duration,
            self.parameters,
        )


class TraceUnavailable(Exception):
    """Trace data was not (yet) available."""


class TraceEvent:
    """One event of a query trace (a row of ``system_traces.events``)."""

    description = None
    datetime = None
    source = None
    source_elapsed = None
    thread_name = None

    def __init__(self, description, timeuuid, source, source_elapsed, thread_name):
        self.description = description
        # Timezone-aware (UTC), as in the classic driver 3.30.
        self.datetime = datetime.datetime.fromtimestamp(unix_time_from_uuid1(timeuuid), datetime.UTC)
        self.source = source
        self.source_elapsed = datetime.timedelta(microseconds=source_elapsed) if source_elapsed is not None else None
        self.thread_name = thread_name

    def __str__(self):
        return "%s on %s[%s] at %s" % (self.description, self.source, self.thread_name, self.datetime)
