"""turbocql.tracing: OpenTelemetry spans made by the engine, on every path, on the one node."""

import asyncio

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

import turbocql.tracing  # noqa: E402
from turbocql import ConsistencyLevel, InvalidRequest  # noqa: E402
from turbocql.cluster import Cluster, NoHostAvailable  # noqa: E402
from turbocql.concurrent import WritePipeline, execute_concurrent_with_args  # noqa: E402
from turbocql.query import SimpleStatement  # noqa: E402

from .conftest import HOST, KEYSPACE, PORT  # noqa: E402


@pytest.fixture(scope="module")
def traced(keyspace):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    cluster = Cluster([HOST], port=PORT)
    turbocql.tracing.instrument(cluster, tracer_provider=provider)
    session = cluster.connect(KEYSPACE)
    session.execute("CREATE TABLE IF NOT EXISTS traced (k int PRIMARY KEY, v text)")
    yield cluster, session, exporter, provider
    cluster.shutdown()


@pytest.fixture
def spans(traced):
    exporter = traced[2]
    exporter.clear()
    return exporter


def _only(exporter):
    got = exporter.get_finished_spans()
    assert len(got) == 1, [s.name for s in got]
    return got[0]


def _check_request_span(span, op, text=None):
    a = span.attributes
    assert span.kind == SpanKind.CLIENT
    assert a["db.system.name"] == "cassandra"
    assert a["db.system"] == "cassandra"
    assert a["db.operation.name"] == op
    assert a["db.namespace"] == KEYSPACE
    assert a["server.address"] == HOST
    assert a["server.port"] == PORT
    if text is not None:
        assert a["db.query.text"] == text
    assert span.start_time <= span.end_time


def test_sync_execute(traced, spans):
    _, session, _, _ = traced
    session.execute("INSERT INTO traced (k, v) VALUES (1, 'a')")
    span = _only(spans)
    assert span.name == "INSERT %s" % KEYSPACE
    _check_request_span(span, "INSERT", "INSERT INTO traced (k, v) VALUES (1, 'a')")
    assert span.status.status_code == StatusCode.UNSET
    assert span.events == ()


def test_prepared_names_table(traced, spans):
    _, session, _, _ = traced
    ps = session.prepare("SELECT v FROM traced WHERE k = ?")
    spans.clear()
    session.execute(ps, (1,))
    span = _only(spans)
    assert span.name == "SELECT %s.traced" % KEYSPACE
    assert span.attributes["db.collection.name"] == "traced"
    _check_request_span(span, "SELECT", "SELECT v FROM traced WHERE k = ?")


def test_execute_async_ends_before_callbacks(traced, spans):
    _, session, _, _ = traced
    seen = []
    fut = session.execute_async("SELECT v FROM traced WHERE k = 1")
    fut.add_callback(lambda _rows: seen.append(len(spans.get_finished_spans())))
    fut.result()
    span = _only(spans)
    _check_request_span(span, "SELECT")
    # The span was ended before the future settled, hence before its callbacks.
    fut.add_callback(lambda _rows: seen.append(len(spans.get_finished_spans())))
    assert seen and all(n == 1 for n in seen)


def test_parent_context(traced, spans):
    _, session, _, provider = traced
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("parent") as parent:
        session.execute("SELECT v FROM traced WHERE k = 1")
        session.execute_async("SELECT v FROM traced WHERE k = 1").result()
    children = [s for s in spans.get_finished_spans() if s.name != "parent"]
    assert len(children) == 2
    for child in children:
        assert child.parent is not None
        assert child.parent.span_id == parent.get_span_context().span_id
        assert child.context.trace_id == parent.get_span_context().trace_id


def test_asyncio(traced, spans):
    _, session, _, provider = traced
    from turbocql.aio import Session as AioSession

    s = AioSession(session)

    async def main():
        tracer = provider.get_tracer("test")
        with tracer.start_as_current_span("aparent") as parent:
            await s.execute("SELECT v FROM traced WHERE k = 1")
        return parent.get_span_context().span_id

    parent_id = asyncio.run(main())
    got = [s for s in spans.get_finished_spans() if s.attributes.get("db.operation.name") == "SELECT"]
    assert len(got) == 1
    _check_request_span(got[0], "SELECT")
    assert got[0].parent.span_id == parent_id


def test_error_span(traced, spans):
    _, session, _, _ = traced
    with pytest.raises(InvalidRequest):
        session.execute("SELECT nope FROM traced")
    span = _only(spans)
    assert span.status.status_code == StatusCode.ERROR
    assert span.attributes["error.type"].endswith("InvalidRequest")
    assert span.attributes["db.response.status_code"] == "0x2200"
    assert span.attributes["server.address"] == HOST

    with pytest.raises(InvalidRequest):
        session.execute_async("SELECT nope FROM traced").result()
    assert len(spans.get_finished_spans()) == 2
    assert spans.get_finished_spans()[1].status.status_code == StatusCode.ERROR


def test_retry_event(traced, spans):
    """An Unavailable (consistency THREE, one replica): the default RetryPolicy tries the
    next host once, and there is none."""
    _, session, _, _ = traced
    stmt = SimpleStatement("SELECT v FROM traced WHERE k = 1", consistency_level=ConsistencyLevel.THREE)
    with pytest.raises(NoHostAvailable):
        session.execute(stmt)
    span = _only(spans)
    assert span.status.status_code == StatusCode.ERROR
    assert [e.name for e in span.events] == ["retry"]
    ev = span.events[0]
    assert ev.attributes["server.address"] == HOST
    assert ev.attributes["error.type"] == "Unavailable"
    assert ev.attributes["db.response.status_code"] == "0x1000"
    assert span.start_time <= ev.timestamp <= span.end_time


def test_query_text_opt_out(traced, spans):
    cluster, session, _, provider = traced
    turbocql.tracing.instrument(cluster, tracer_provider=provider, include_query_text=False)
    try:
        session.execute("SELECT v FROM traced WHERE k = 1")
        assert "db.query.text" not in _only(spans).attributes
    finally:
        turbocql.tracing.instrument(cluster, tracer_provider=provider)


def test_execute_concurrent_one_span(traced, spans):
    _, session, _, provider = traced
    ps = session.prepare("INSERT INTO traced (k, v) VALUES (?, ?)")
    spans.clear()
    with provider.get_tracer("test").start_as_current_span("load") as parent:
        results = execute_concurrent_with_args(session, ps, [(i, "x") for i in range(50)], raise_on_first_error=False)
    assert all(r.success for r in results)
    got = [s for s in spans.get_finished_spans() if s.name != "load"]
    assert len(got) == 1
    span = got[0]
    assert span.attributes["db.operation.name"] == "execute_concurrent"
    assert span.attributes["db.operation.batch.size"] == 50
    assert span.attributes["turbocql.failures"] == 0
    assert span.parent.span_id == parent.get_span_context().span_id


def test_pipeline_one_span(traced, spans):
    _, session, _, _ = traced
    ps = session.prepare("INSERT INTO traced (k, v) VALUES (?, ?)")
    spans.clear()
    with WritePipeline(session) as p:
        for i in range(20):
            p.execute(ps, (i, "y"))
    span = _only(spans)
    assert span.attributes["db.operation.name"] == "WritePipeline"
    assert span.status.status_code == StatusCode.UNSET


def test_uninstrument(traced, spans):
    cluster, session, _, provider = traced
    turbocql.tracing.uninstrument(cluster)
    try:
        assert not turbocql.tracing.is_instrumented(cluster)
        session.execute("SELECT v FROM traced WHERE k = 1")
        session.execute_async("SELECT v FROM traced WHERE k = 1").result()
        assert spans.get_finished_spans() == ()
    finally:
        turbocql.tracing.instrument(cluster, tracer_provider=provider)
    session.execute("SELECT v FROM traced WHERE k = 1")
    assert len(spans.get_finished_spans()) == 1


@pytest.mark.timeout(300)
def test_speculative_execution_event(multidc_cluster):
    """On the 3-node cluster with node2 frozen: an idempotent read whose first attempt goes
    to node2 is answered by a speculative execution on node1, an event of its span."""
    from tests.integration.conftest import frozen_nodes
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from turbocql.policies import ConstantSpeculativeExecutionPolicy, WhiteListRoundRobinPolicy

    node1, node2 = multidc_cluster.nodes[0].address, multidc_cluster.nodes[1].address
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    profile = ExecutionProfile(
        load_balancing_policy=WhiteListRoundRobinPolicy([node1, node2]),
        speculative_execution_policy=ConstantSpeculativeExecutionPolicy(delay=0.2, max_attempts=1),
        request_timeout=10,
    )
    # unresponsive_node_threshold=None: the engine would otherwise put the frozen node last
    # in every plan once it stops answering, and no request would start there.
    cluster = Cluster([node1], execution_profiles={EXEC_PROFILE_DEFAULT: profile}, unresponsive_node_threshold=None)
    try:
        turbocql.tracing.instrument(cluster, tracer_provider=provider)
        session = cluster.connect()
        stmt = SimpleStatement("SELECT release_version FROM system.local", is_idempotent=True)
        session.execute(stmt)
        with frozen_nodes(multidc_cluster, 2):
            exporter.clear()
            # Two hosts, a plan each request: among ten, some start on node2 (all ten on node1
            # has a chance of 1 in 1024 were the start picked at random).
            for _ in range(10):
                session.execute(stmt)
        spans = exporter.get_finished_spans()
        assert len(spans) == 10
        speculated = [s for s in spans if any(e.name == "speculative_execution" for e in s.events)]
        assert speculated, [(s.attributes.get("server.address"), [e.name for e in s.events]) for s in spans]
        for span in speculated:
            event = next(e for e in span.events if e.name == "speculative_execution")
            assert event.attributes["server.address"] == node1
            assert span.attributes["server.address"] == node1
            assert span.status.status_code == StatusCode.UNSET
            assert span.start_time <= event.timestamp <= span.end_time
    finally:
        cluster.shutdown()
