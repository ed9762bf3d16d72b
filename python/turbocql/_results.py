"""What a request gives back, under the classic ``cassandra.cluster`` names (re-exported
by ``turbocql.cluster``): :class:`ResultSet` (the rows, a page at a time), :class:`ResponseFuture`
(``execute_async``'s future), the errors :class:`NoHostAvailable` and :class:`QueryExhausted`,
and the query-tracing helpers the two share (``_traces_seen``, ``_populated``).

Both classes are built on the engine's cores (``_engine.ResultCore``,
``_engine.ResponseFutureCore``), which the engine also makes them from. This module imports
no other module of the cluster layer: the session and the cluster import it.
"""

import functools
import sys
import warnings
from collections.abc import Mapping

from turbocql import ConsistencyLevel, DriverException, _engine, _loggers
from turbocql._protocol_messages import _message_of
from turbocql.query import (
    BatchStatement,
    QueryTrace,
    TraceUnavailable,
    dict_factory,
    named_tuple_factory,
    tuple_factory,
)

# The classic logger name (``cassandra.cluster``'s), shared by the modules cluster.py was split into.
log = _loggers.cluster

# Session.max_trace_wait's default, kept here so that tracing does not import the session.
_MAX_TRACE_WAIT = 2.0


class NoHostAvailable(Exception):
    """No host could serve the request. ``errors`` maps each host tried to its exception."""

    # The classic module's name (reprs, tracebacks, pickles): the class lives in _results.
    __module__ = "turbocql.cluster"

    errors = None

    def __init__(self, message, errors):
        Exception.__init__(self, message, errors)
        self.errors = errors


class QueryExhausted(Exception):
    """``start_fetching_next_page()`` was called on the last page."""

    # The classic module's name (reprs, tracebacks, pickles): the class lives in _results.
    __module__ = "turbocql.cluster"


_RESULT_CORE_COLUMN_NAMES = _engine.ResultCore.column_names
_RESULT_CORE_COLUMN_TYPES = _engine.ResultCore.column_types
_RESULT_CORE_RESPONSE_FUTURE = _engine.ResultCore.response_future
_CORE_START_FETCHING_NEXT_PAGE = _engine.ResponseFutureCore.start_fetching_next_page


@functools.lru_cache(maxsize=256)
def _column_type_classes(names):
    """The cqltypes classes of a result's CQL type names (cached per column list)."""
    from turbocql._prepared import _type_class

    return tuple(_type_class(n) for n in names)


class _ResultSetType(type):
    """ResultSet's metaclass: ``ResultSet(future, initial_response)`` with a future that is
    not one of ours (a ``Mock`` in tests, an agent's stand-in) makes a
    :class:`_ForeignFutureResultSet`, which pages through that future as the classic
    ResultSet does. The engine makes its results without calling the class (see
    ``results::make_result``), so this runs only for results made in Python."""

    def __call__(cls, *args, **kwargs):
        if len(args) == 2 and not kwargs:
            future, rows = args
        elif len(args) == 1 and kwargs.keys() == {"initial_response"}:
            future, rows = args[0], kwargs["initial_response"]
        elif not args and kwargs.keys() == {"response_future", "initial_response"}:
            future, rows = kwargs["response_future"], kwargs["initial_response"]
        else:
            return type.__call__(cls, *args, **kwargs)
        if type(future) is _PAGE:
            return type.__call__(cls, *args, **kwargs)
        if cls is not ResultSet or isinstance(future, _engine.ResponseFutureCore):
            return type.__call__(cls, future, rows)
        return _foreign_future_result(future, rows)


_PAGE = _engine.Page


def _index_warning():
    """The classic DeprecationWarning of ``result[0]``, through ``turbocql.cluster.warn`` as
    the classic ``cassandra.cluster.warn`` (tests patch it there)."""
    global _index_warned
    _index_warned = True
    warn = getattr(sys.modules.get("turbocql.cluster"), "warn", warnings.warn)
    warn(
        "ResultSet indexing support will be removed in 4.0. Consider using ResultSet.one() to get a single row.",
        DeprecationWarning,
        stacklevel=3,
    )


# Whether a result made by the engine has warned about ``result[0]``: it does once per
# process (the classic driver at each call, which costs ~2 us through the warnings
# machinery; Python's default filters show it at most once per place anyway).
_index_warned = False


class ResultSet(_engine.ResultCore, metaclass=_ResultSetType):
    """The rows of a request, a page at a time.

    Iterating goes through every page, fetching the next one (GIL released) when the
    current one is exhausted. ``current_rows`` is the current page; ``one()`` and ``all()``
    are shortcuts; ``was_applied`` reads a lightweight transaction's outcome.

    Built as ``ResultSet(page, session, request, row_factory, query, rows=None,
    response_future=None)``: cheap, the row factory runs on first access to the rows; or
    in the classic form ``ResultSet(response_future, initial_response)``. The page's
    fields (``column_names``, ``column_types``, ``paging_state``, ``warnings``),
    ``current_rows`` and ``one()`` come from the engine (``_engine.ResultCore``).
    """

    # The classic module's name (reprs, tracebacks, pickles): the class lives in _results.
    __module__ = "turbocql.cluster"

    _list_mode = False
    _page_iter = None

    def _set_page(self, page):
        self._reset_page(page)
        self._page_iter = None

    def fetch_next_page(self):
        """Replaces ``current_rows`` with the next page (no-op on the last page).

        A result with a response future (``execute_async``'s, or one read from
        ``response_future``) fetches it through the future, as classic: its callbacks run
        again, and an agent's wrapper of ``start_fetching_next_page`` sees it. Otherwise the
        request runs again at once, from the page's paging state."""
        if self.paging_state is None:
            self._current_rows = []
            return
        future = _RESULT_CORE_RESPONSE_FUTURE.__get__(self)
        if future is None:
            self._set_page(self._request.run(self.paging_state))
            return
        future.start_fetching_next_page()
        self._set_page(future.result()._page)

    @property
    def response_future(self):
        """The :class:`ResponseFuture` of the request (as classic, ``session.execute``'s
        results have one too: made, settled with this page, when first read)."""
        future = _RESULT_CORE_RESPONSE_FUTURE.__get__(self)
        if future is None and self._session is not None:
            request = self._request
            timeout = request.timeout if request is not None else None
            future = ResponseFuture(self._session, request, self.query, self._row_factory, timeout)
            future._settle_with(self._page)
            _RESULT_CORE_RESPONSE_FUTURE.__set__(self, future)
        return future

    @response_future.setter
    def response_future(self, future):
        _RESULT_CORE_RESPONSE_FUTURE.__set__(self, future)

    def __iter__(self):
        if self._list_mode:
            return iter(self._current_rows)
        self._page_iter = iter(self._current_rows)
        return self._rows()

    def _rows(self):
        while True:
            yield from self._page_iter
            if self.paging_state is None:
                # As classic: an iterated result holds no rows (``bool(rs)`` is False).
                self._current_rows = []
                return
            self.fetch_next_page()
            self._page_iter = iter(self._current_rows)

    def __next__(self):
        if self._page_iter is None:
            self._page_iter = iter(self._current_rows)
        while True:
            try:
                return next(self._page_iter)
            except StopIteration:
                if self.paging_state is None:
                    if not self._list_mode:
                        self._current_rows = []
                    raise
                self.fetch_next_page()
                self._page_iter = iter(self._current_rows)

    def all(self):
        """Every row of every remaining page, as a list."""
        return [row for row in self]

    def _enter_list_mode(self, operator):
        if self._list_mode:
            return
        if self._page_iter is not None:
            raise RuntimeError("Cannot use %s when results have been iterated." % operator)
        rows = [row for row in self]
        self._current_rows = rows
        self._page = self._page.as_last()
        self._list_mode = True

    @property
    def column_names(self):
        """The result's column names, a list as in the classic driver (None for a result
        without rows); made on access from the engine's tuple."""
        names = _RESULT_CORE_COLUMN_NAMES.__get__(self)
        return None if names is None else list(names)

    @property
    def column_types(self):
        """The result's column types, a list of cqltypes classes as in the classic driver
        (None for a result without rows); made on access from the engine's type names."""
        names = _RESULT_CORE_COLUMN_TYPES.__get__(self)
        return None if names is None else list(_column_type_classes(tuple(names)))

    def __eq__(self, other):
        """Compares all rows with ``other`` (every page is fetched first, as in the
        classic driver, e.g. ``result == [(1, 2)]``)."""
        self._enter_list_mode("equality operator")
        return self._current_rows == other

    __hash__ = None  # type: ignore[assignment]  # as classic: __eq__ without __hash__

    def __getitem__(self, i):
        """Index into all rows (every page is fetched first, as in the classic driver,
        which also warns that ``result[0]`` is deprecated: ``DeprecationWarning``, here
        once per process)."""
        if i == 0 and not _index_warned:
            _index_warning()
        self._enter_list_mode("index operator")
        return self._current_rows[i]

    def __bool__(self):
        return bool(self._current_rows) or self.has_more_pages

    @property
    def was_applied(self):
        """For a lightweight transaction (``IF ...``): whether it was applied."""
        if self._row_factory not in (named_tuple_factory, dict_factory, tuple_factory):
            raise RuntimeError("Cannot determine LWT result with row factory %s" % (self._row_factory,))
        is_batch = isinstance(self.query, BatchStatement)
        if is_batch and (not self.column_names or self.column_names[0] != "[applied]"):
            raise RuntimeError("No LWT were present in the BatchStatement")
        if not is_batch and len(self.current_rows) != 1:
            raise RuntimeError("LWT result should have exactly one row. This has %d." % len(self.current_rows))
        row = self.current_rows[0]
        if isinstance(row, tuple):
            return row[0]
        return row["[applied]"]

    def get_query_trace(self, max_wait_sec=None):
        """The server's trace of the current page's request (execute with ``trace=True``),
        or None; as classic, the response future's (one QueryTrace object per trace)."""
        future = self.response_future
        if future is not None:
            return future.get_query_trace(max_wait_sec)
        traces = _traces_seen(self, self._trace_id)
        return _populated(traces[-1], max_wait_sec, ConsistencyLevel.LOCAL_ONE) if traces else None

    def get_all_query_traces(self, max_wait_sec_per=None):
        """The traces of the pages seen so far (the classic driver keeps one per page)."""
        future = self.response_future
        if future is not None:
            return future.get_all_query_traces(max_wait_sec_per)
        return [_populated(t, max_wait_sec_per, ConsistencyLevel.LOCAL_ONE) for t in _traces_seen(self, self._trace_id)]

    def to_arrow(self):
        """Every remaining page as one ``pyarrow.Table`` (needs pyarrow; turbocql's own).

        With ``row_factory = turbocql.query.arrow_factory`` the pages are decoded by the
        engine straight into Arrow buffers; with another row factory the rows are converted
        from their Python values (slower, types as pyarrow infers them)."""
        from turbocql import _arrow

        return _arrow.result_table(self)

    def to_pandas(self):
        """Every remaining page as one ``pandas.DataFrame`` (needs pyarrow and pandas)."""
        return self.to_arrow().to_pandas()

    def to_polars(self):
        """Every remaining page as one ``polars.DataFrame`` (needs pyarrow and polars)."""
        import polars

        return polars.from_arrow(self.to_arrow())

    def __repr__(self):
        return "<ResultSet rows=%d, has_more_pages=%s>" % (len(self.current_rows), self.has_more_pages)


class _ForeignFutureResultSet(ResultSet):
    """``ResultSet(response_future, initial_response)`` for a future that is not one of
    ours (``_ResultSetType``): as the classic ResultSet, the rows are ``initial_response``
    and everything about paging is asked of that future (``has_more_pages``,
    ``start_fetching_next_page()``, ``result()._current_rows``, ``_paging_state``,
    ``_col_names``), in the classic order of calls (tests count them)."""

    @property
    def has_more_pages(self):
        return self.response_future.has_more_pages

    @property
    def paging_state(self):
        return self.response_future._paging_state

    @property
    def column_names(self):
        return getattr(self.response_future, "_col_names", None)

    @property
    def column_types(self):
        return getattr(self.response_future, "_col_types", None)

    def __iter__(self):
        if self._list_mode:
            return iter(self._current_rows)
        self._page_iter = iter(self._current_rows)
        return self

    def __next__(self):
        while True:
            try:
                return next(self._page_iter)
            except StopIteration:
                future = self.response_future
                if not future.has_more_pages:
                    if not self._list_mode:
                        self._current_rows = []
                    raise
            if getattr(future, "_continuous_paging_session", None):
                return next(self._page_iter)
            # A page may be empty (Scylla sends some): go on to the next one.
            self.fetch_next_page()
            self._page_iter = iter(self._current_rows)

    def fetch_next_page(self):
        future = self.response_future
        if future.has_more_pages:
            future.start_fetching_next_page()
            self._current_rows = future.result()._current_rows
        else:
            self._current_rows = []

    def _enter_list_mode(self, operator):
        if self._list_mode:
            return
        if self._page_iter:
            raise RuntimeError("Cannot use %s when results have been iterated." % operator)
        if self.response_future.has_more_pages:
            log.warning("Using %s on paged results causes entire result set to be materialized.", operator)
        self._current_rows = list(self)
        self._page_iter = None
        self._list_mode = True

    def __getitem__(self, i):
        if i == 0:
            _index_warning()  # at each call, as classic
        self._enter_list_mode("index operator")
        return self._current_rows[i]

    def __bool__(self):
        return bool(self._current_rows)

    def get_query_trace(self, max_wait_sec=None):
        return self.response_future.get_query_trace(max_wait_sec)

    def get_all_query_traces(self, max_wait_sec_per=None):
        return self.response_future.get_all_query_traces(max_wait_sec_per)


class _ForeignFuture:
    """What the engine reads of a future when it makes a result in the classic form
    (``_engine.ResultCore``): a foreign future's attributes, None for those it lacks."""

    __slots__ = ("_final_page", "session", "_request", "row_factory", "query")

    def __init__(self, future):
        self._final_page = None
        for name in ("session", "_request", "row_factory", "query"):
            setattr(self, name, getattr(future, name, None))


def _foreign_future_result(future, initial_response):
    """A :class:`_ForeignFutureResultSet` of ``future`` holding ``initial_response`` as
    the classic ResultSet does (a mapping or a non-iterable is one row)."""
    if isinstance(initial_response, Mapping) or not _iterable(initial_response):
        rows = [initial_response] if initial_response else []
    else:
        rows = initial_response
    result = type.__call__(_ForeignFutureResultSet, _ForeignFuture(future), None)
    result.response_future = future
    result._current_rows = rows
    return result


def _iterable(value):
    try:
        iter(value)
    except TypeError:
        return False
    return True


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

    # The classic module's name (reprs, tracebacks, pickles): the class lives in _results.
    __module__ = "turbocql.cluster"

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
