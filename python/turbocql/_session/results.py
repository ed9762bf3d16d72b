"""What a request gives back, under the classic ``cassandra.cluster`` names (re-exported
by ``turbocql.cluster``): :class:`ResultSet`, the rows, a page at a time, in its two forms
(made by the engine, or by the classic constructor from a future that is not one of ours).

:class:`ResultSet` is built on the engine's core (``_engine.ResultCore``), which the engine
also makes it from. This module imports, of the cluster layer, only ``future`` (the
response future a result makes when asked for one, the errors and the query-tracing
helpers): the session and the cluster import it.
"""

import functools
import sys
import warnings
from collections.abc import Mapping

from turbocql import ConsistencyLevel, _engine, _loggers
from turbocql._session.future import ResponseFuture, _populated, _traces_seen
from turbocql.query import (
    BatchStatement,
    dict_factory,
    named_tuple_factory,
    tuple_factory,
)

# The classic logger name (``cassandra.cluster``'s), shared by the modules cluster.py was split into.
log = _loggers.cluster

_RESULT_CORE_COLUMN_NAMES = _engine.ResultCore.column_names
_RESULT_CORE_COLUMN_TYPES = _engine.ResultCore.column_types
_RESULT_CORE_RESPONSE_FUTURE = _engine.ResultCore.response_future


@functools.lru_cache(maxsize=256)
def _column_type_classes(names):
    """The cqltypes classes of a result's CQL type names (cached per column list)."""
    from turbocql._query.prepared import _type_class

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
        from turbocql._query import arrow as _arrow

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
