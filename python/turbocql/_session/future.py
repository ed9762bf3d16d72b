"""``execute_async``'s future and what it shares with the results, under the classic
``cassandra.cluster`` names (re-exported by ``turbocql.cluster``): :class:`ResponseFuture`, the
errors of a request :class:`NoHostAvailable` and :class:`QueryExhausted`, and the
query-tracing helpers futures and results share (``_traces_seen``, ``_populated``).

:class:`ResponseFuture` is built on the engine's core (``_engine.ResponseFutureCore``), which
settles it. This module imports no other module of the cluster layer: ``results`` (whose
results make a future when asked for one), the session and the cluster import it.
"""

from turbocql import ConsistencyLevel, DriverException, _engine
from turbocql._query.messages import _message_of
from turbocql.query import QueryTrace, TraceUnavailable

# Session.max_trace_wait's default, kept here so that tracing does not import the session.
_MAX_TRACE_WAIT = 2.0


class NoHostAvailable(Exception):
    """No host could serve the request. ``errors`` maps each host tried to its exception."""

    errors = None

    def __init__(self, message, errors):
        Exception.__init__(self, message, errors)
        self.errors = errors


class QueryExhausted(Exception):
    """``start_fetching_next_page()`` was called on the last page."""


_CORE_START_FETCHING_NEXT_PAGE = _engine.ResponseFutureCore.start_fetching_next_page


def _traces_seen(owner, trace_id):
    """The QueryTrace objects recorded on ``owner`` (a future or a ResultSet), with
    ``trace_id`` (the current page's) appended when new: one object per trace, so that
    the future's and its result sets' traces are the same objects, as in the classic driver."""
    traces = owner.__dict__.setdefault("_traces", [])
    if trace_id is not None and not any(t.trace_id == trace_id for t in traces):
        session = owner.session if isinstance(owner, ResponseFuture) else owner._session
        traces.append(QueryTrace(trace_id, session))
    return traces


def _replaceable_on_instance(name, default):
    """A ResponseFuture method that an agent may replace on the instance: the replacement is
    kept in the instance's dict, and the engine is told to call it when the future settles
    (``_hook_settling``); until then, ``default`` bound."""

    def get(self):
        hook = self.__dict__.get(name)
        return hook if hook is not None else default.__get__(self)

    def set(self, hook):
        self.__dict__[name] = hook
        self._hook_settling()

    def delete(self):
        self.__dict__.pop(name, None)

    return property(get, set, delete, default.__doc__)


def _hosts_named(session, errors):
    """The cluster's hosts whose ``address:port`` (or address) is a key of ``errors``."""
    named = set(map(str, errors))
    return [h for h in session.cluster.metadata.all_hosts() if str(h) in named or h.address in named]


def _populated(trace, max_wait, query_cl):
    if not trace.events:
        if max_wait is None:
            max_wait = getattr(trace._session, "max_trace_wait", _MAX_TRACE_WAIT)
        trace.populate(max_wait=max_wait, query_cl=query_cl)
    return trace


class ResponseFuture(_engine.ResponseFutureCore):
    """The future result of :meth:`Session.execute_async`.

    ``result(timeout=None)`` waits (GIL released) and returns a :class:`ResultSet` or raises
    the request's exception; ``timeout`` bounds that wait only (``OperationTimedOut``).
    ``add_callback(fn, *args, **kwargs)``, ``add_errback``, ``add_callbacks(callback,
    errback, callback_args=(), callback_kwargs=None, errback_args=(), errback_kwargs=None)``
    and ``clear_callbacks()``: callbacks get the page's rows (``None`` for a write) and
    errbacks the exception; they run on the dispatcher thread, or at once in the caller's
    thread when added after completion; failures are logged. A callback may call
    ``execute_async`` again. ``has_more_pages`` and ``start_fetching_next_page()`` (the
    callbacks run again with the next page). ``done``, ``query``, ``session``,
    ``row_factory``, ``timeout``.

    Built as ``ResponseFuture(session, request, query, row_factory, timeout)``; the engine
    (``_engine.ResponseFutureCore``) settles it: the request's target is the future itself.
    """

    @property
    def is_schema_agreed(self):
        """False when the request was a schema change and the nodes were not seen to agree
        on the schema within ``max_schema_agreement_wait`` (the engine waits before it
        settles the request; the change is applied and a warning logged). As classic: True
        for anything else, a failed request included."""
        if not self.done:
            return True
        try:
            return self.result()._schema_agreed
        except Exception:  # noqa: BLE001 - a failed request: nothing to agree on
            return True

    @property
    def coordinator_host(self):
        """The :class:`~turbocql.pool.Host` that answered (the last page's), as classic; None
        while the request runs, and when it failed or the engine does not know it."""
        page = self._final_page
        return None if page is None else page.coordinator

    # The classic attribute of the host the request is (or was last) sent to.
    _current_host = coordinator_host

    @property
    def message(self):
        """The request as the classic driver's message (``turbocql.protocol``'s
        ``QueryMessage``, ``ExecuteMessage`` or ``BatchMessage``), with the consistency,
        serial consistency, fetch size and timestamp the engine sends. turbocql never sends
        these objects: the engine builds the frame; the bound values and a batch's
        statements are not copied out (``query_params`` / ``queries`` None)."""
        return _message_of(self._request.sent)

    @property
    def attempted_hosts(self):
        """The hosts the request was sent to, in order, as classic: those whose attempts
        failed (and were retried), then the one that answered; for a request that failed,
        the hosts its ``NoHostAvailable`` names. Empty while the request runs."""
        page = self._final_page
        if page is not None:
            answered = page.coordinator
            return page.retried_on + ([answered] if answered is not None else [])
        if not self.done:
            return []
        try:
            self.result()
        except NoHostAvailable as exc:
            return _hosts_named(self.session, exc.errors or {})
        except Exception:  # noqa: BLE001 - the engine names no host for other errors
            return []
        return []

    def start_fetching_next_page(self):
        """Fetches the next page; the callbacks run again with its rows. ``QueryExhausted``
        on the last page. (A Python method, as classic: an agent's ``wrapt`` wrapper of the
        bound method is given the future as its instance.)"""
        _CORE_START_FETCHING_NEXT_PAGE(self)

    # The classic settling methods, which an APM agent (ddtrace) wraps on the instance to
    # end its span: the engine settles the future and, once one is replaced, calls it (with
    # the rows, or the exception) before ``result()`` returns and before the callbacks.
    def _settled_result(self, response):
        """Called with the rows once the request succeeded (the engine has settled it)."""

    def _settled_exception(self, response):
        """Called with the exception once the request failed (the engine has settled it)."""

    _set_final_result = _replaceable_on_instance("_set_final_result", _settled_result)
    _set_final_exception = _replaceable_on_instance("_set_final_exception", _settled_exception)

    @property
    def warnings(self):
        """The server's warnings for the request (a list of str, or None). As classic:
        ``DriverException`` while the request is not done; None for a failed request."""
        if not self.done:
            raise DriverException("warnings cannot be retrieved before ResponseFuture is finalized")
        try:
            return self.result().warnings
        except Exception:  # noqa: BLE001 - the request's error: it brought no warnings
            return None

    @property
    def _query_traces(self):
        """The QueryTrace of each traced page seen so far (None when there is none), as the
        classic attribute. The engine hands the future its current page only: a page's
        trace is recorded when this (or a trace method) is read while it is current."""
        if not self.done:
            return self.__dict__.get("_traces") or None
        try:
            trace_id = self.result()._trace_id
        except Exception:  # noqa: BLE001 - a failed request has no trace id here
            trace_id = None
        return _traces_seen(self, trace_id) or None

    def get_query_trace_ids(self):
        """The trace ids of the traced pages (does not read the traces)."""
        return [trace.trace_id for trace in self._query_traces or ()]

    def get_query_trace(self, max_wait=None, query_cl=ConsistencyLevel.LOCAL_ONE):
        """The trace of the last response, read at ``query_cl``, or None when the request
        was not traced; ``TraceUnavailable`` when the future is not done or the trace is
        not written within ``max_wait`` seconds (``session.max_trace_wait``, 2 s, if None)."""
        if not self.done:
            raise TraceUnavailable("Trace information was not available. The ResponseFuture is not done.")
        traces = self._query_traces
        if traces:
            return _populated(traces[-1], max_wait, query_cl)
        return None

    def get_all_query_traces(self, max_wait_per=None, query_cl=ConsistencyLevel.LOCAL_ONE):
        """The traces of every traced page seen (see ``_query_traces``)."""
        return [_populated(t, max_wait_per, query_cl) for t in self._query_traces or ()]

    def __repr__(self):
        # The classic form, less what the engine does not tell (request id, coordinator).
        result, exception = "(no result yet)", None
        if self.done:
            try:
                result = self.result()
            except Exception as exc:  # noqa: BLE001 - shown, not raised
                result, exception = None, exc
        return "<ResponseFuture: query='%s' result=%s exception=%s>" % (self.query, result, exception)

    __str__ = __repr__
