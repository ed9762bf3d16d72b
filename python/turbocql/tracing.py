"""OpenTelemetry spans of a cluster's requests, made by turbocql itself (opt-in).

::

    import turbocql.tracing
    turbocql.tracing.instrument(cluster)            # the global tracer provider
    turbocql.tracing.instrument(cluster, tracer_provider=provider, include_query_text=False)
    turbocql.tracing.uninstrument(cluster)

Needs ``opentelemetry-api`` (the extra ``turbocql[opentelemetry]``); importing this module
without it works, ``instrument`` raises ImportError.

What one span covers:

* ``session.execute``, ``execute_async`` and asyncio's ``execute``: one span per request
  (each further page fetched is a request of its own, with a span of its own), a child of
  the OpenTelemetry context current where the request was started, kind CLIENT, from the
  request's start to its result or error (the engine's clock: the span is made once the
  request has ended, before ``execute`` returns, before callbacks run and before ``await``
  gives the result). Retries, ignored errors, failed attempts and speculative executions
  are events of it, each naming the node and the error.
* ``execute_concurrent*`` and the pipelines: one span per call (per pipeline, from its
  creation to the end of its ``with`` block), with the statement count and the failure
  count for ``execute_concurrent``; no span per statement (a million-row load would make a
  million spans).

Attributes, after OpenTelemetry's database conventions: ``db.system.name`` and the older
``db.system`` (``cassandra``), ``db.namespace`` (the keyspace), ``db.collection.name`` (a
prepared statement's table), ``db.operation.name`` (the statement's first word, or
``BATCH``), ``db.query.text`` (unless ``include_query_text=False``; values of a simple
statement with ``%s`` parameters are inlined in its text), ``server.address`` and
``server.port`` (the coordinator that answered, or the last node tried), and on failure
``error.type`` (the exception's class), ``db.response.status_code`` (the CQL error code
the node sent, ``0x2200``) and status ERROR. Span name: ``{operation} {keyspace}.{table}``,
or as much of it as is known.

A cluster that is not instrumented pays nothing for this: its requests carry no recorder.
"""

import threading

from turbocql import _engine

__all__ = ["instrument", "uninstrument", "is_instrumented"]

_INSTRUMENTATION_NAME = "turbocql"


def _otel():
    try:
        from opentelemetry import context, trace
    except ImportError as exc:
        raise ImportError(
            "turbocql.tracing needs the opentelemetry-api package: pip install 'turbocql[opentelemetry]'"
        ) from exc
    return context, trace


def _version():
    try:
        from importlib.metadata import version

        return version("turbocql")
    except Exception:
        return None


class _Instrumentation:
    """A cluster's tracing: the tracer, and ``record``, which the engine calls once per
    finished request."""

    def __init__(self, tracer_provider, include_query_text):
        context, trace = _otel()
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self._trace = trace
        self._kind = SpanKind.CLIENT
        self._error = StatusCode.ERROR
        self._status = Status
        self.tracer = trace.get_tracer(_INSTRUMENTATION_NAME, _version(), tracer_provider=tracer_provider)
        self.include_query_text = include_query_text
        self.engine = _engine.Tracing(self.record, context.get_current, include_query_text)

    def record(self, req):
        """Makes and ends the span of ``req`` (an ``_engine.FinishedRequest``)."""
        attrs = {"db.system.name": "cassandra", "db.system": "cassandra"}
        op, ks, table = req.operation, req.keyspace, req.table
        if ks is not None:
            attrs["db.namespace"] = ks
        if table is not None:
            attrs["db.collection.name"] = table
        if op is not None:
            attrs["db.operation.name"] = op
        if req.query is not None:
            attrs["db.query.text"] = req.query
        if req.address is not None:
            attrs["server.address"] = req.address
            attrs["server.port"] = req.port
        span = self.tracer.start_span(
            _span_name(op, ks, table), context=req.parent, kind=self._kind, attributes=attrs, start_time=req.start_ns
        )
        for ev in req.events:
            ev_attrs = {}
            if ev.address is not None:
                ev_attrs["server.address"] = ev.address
                ev_attrs["server.port"] = ev.port
            if ev.error_type is not None:
                ev_attrs["error.type"] = ev.error_type
                ev_attrs["exception.message"] = ev.message
            if ev.status_code is not None:
                ev_attrs["db.response.status_code"] = ev.status_code
            span.add_event(ev.name, ev_attrs, timestamp=ev.time_ns)
        exc = req.error
        if exc is not None:
            cls = type(exc)
            span.set_attribute("error.type", "%s.%s" % (cls.__module__, cls.__qualname__))
            if req.status_code is not None:
                span.set_attribute("db.response.status_code", req.status_code)
            span.set_status(self._status(self._error, "%s: %s" % (cls.__name__, exc)))
        span.end(end_time=req.end_ns)

    def bulk_span(self, session, name, attributes=None):
        """A started span for one bulk call (``execute_concurrent``, a pipeline)."""
        attrs = {"db.system.name": "cassandra", "db.system": "cassandra", "db.operation.name": name}
        ks = session.keyspace
        if ks:
            attrs["db.namespace"] = ks
        if attributes:
            attrs.update(attributes)
        return self.tracer.start_span(name if not ks else "%s %s" % (name, ks), kind=self._kind, attributes=attrs)

    def end_bulk(self, span, exc=None):
        if exc is not None:
            cls = type(exc)
            span.set_attribute("error.type", "%s.%s" % (cls.__module__, cls.__qualname__))
            span.set_status(self._status(self._error, "%s: %s" % (cls.__name__, exc)))
        span.end()


def _span_name(op, ks, table):
    target = "%s.%s" % (ks, table) if ks and table else ks
    if op and target:
        return "%s %s" % (op, target)
    return op or target or "cassandra"


_lock = threading.Lock()


def instrument(cluster, tracer_provider=None, include_query_text=True):
    """Makes ``cluster``'s sessions (open and future) emit an OpenTelemetry span per
    request (see the module doc). ``tracer_provider``: None for the global one.
    ``include_query_text``: record ``db.query.text``. Instrumenting again replaces the
    settings. ImportError without ``opentelemetry-api``."""
    inst = _Instrumentation(tracer_provider, include_query_text)
    with _lock:
        cluster._tracing = inst
        _settings_changed(cluster)
    return inst


def uninstrument(cluster):
    """Stops ``cluster``'s spans: requests built from now on are not traced."""
    with _lock:
        cluster._tracing = None
        _settings_changed(cluster)


def is_instrumented(cluster):
    return getattr(cluster, "_tracing", None) is not None


def _settings_changed(cluster):
    # The sessions read `_engine_tracing` with their other defaults: read them again.
    for session in tuple(getattr(cluster, "sessions", ())):
        session._build_request.settings_changed()


def _of(session):
    """The instrumentation of ``session``'s cluster, or None."""
    return getattr(getattr(session, "cluster", None), "_tracing", None)
