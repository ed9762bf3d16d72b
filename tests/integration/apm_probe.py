"""One run of an APM agent over the classic API, for tests/integration/test_apm.py.

Run as ``python apm_probe.py AGENT HOST PORT KEYSPACE`` with the classic driver, or as
``python -m turbocql.compat --allow-shadow apm_probe.py AGENT HOST PORT KEYSPACE`` with
turbocql: the same unmodified ``import cassandra`` code either way. ``AGENT`` is ``otel``
(OpenTelemetry's ``opentelemetry-instrumentation-cassandra``) or ``ddtrace`` (Datadog's
cassandra integration, 3.x). The agent is set up the way its documentation says, the
workload runs every request path of the classic API (sync, ``execute_async`` with
callbacks, ``execute_concurrent``, paging, failing statements), and the spans the agent
recorded are printed as one JSON line, each reduced to what does not change between runs.
The keyspace must hold the tables ``kv (k int PRIMARY KEY, v text)`` and ``paged (k int,
c int, PRIMARY KEY (k, c))``.
"""

import json
import os
import sys
import threading

AGENT, HOST, PORT, KEYSPACE = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

if AGENT == "otel":
    from opentelemetry import trace
    from opentelemetry.instrumentation.cassandra import CassandraInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    CassandraInstrumentor().instrument(include_db_statement=True, skip_dep_check=True)

    def recorded():
        return [
            {
                "name": s.name,
                "kind": s.kind.name,
                "status": s.status.status_code.name,
                "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in s.attributes.items()},
            }
            for s in exporter.get_finished_spans()
        ]

elif AGENT == "ddtrace":
    os.environ.setdefault("DD_INSTRUMENTATION_TELEMETRY_ENABLED", "false")
    os.environ.setdefault("DD_REMOTE_CONFIGURATION_ENABLED", "false")
    from ddtrace import patch, tracer
    from ddtrace.trace import TraceFilter

    finished = []

    class _Keep(TraceFilter):
        def process_trace(self, trace):
            finished.extend(trace)
            return None  # nothing is sent to an agent

    tracer.configure(trace_processors=[_Keep()])
    patch(cassandra=True)

    # Per process or per run, not per request.
    _VOLATILE = ("runtime-id", "process_id")

    def recorded():
        tracer.flush()
        return [
            {
                "name": s.name,
                "service": s.service,
                "resource": s.resource,
                "span_type": s.span_type,
                "error": s.error,
                "meta": {k: v for k, v in s.get_tags().items() if not k.startswith("_dd") and k not in _VOLATILE},
                "metrics": {k: v for k, v in s.get_metrics().items() if not k.startswith("_dd") and k not in _VOLATILE},
            }
            for s in finished
        ]

else:
    raise SystemExit("unknown agent %r" % AGENT)

from cassandra.cluster import Cluster  # noqa: E402
from cassandra.concurrent import execute_concurrent, execute_concurrent_with_args  # noqa: E402
from cassandra.policies import RoundRobinPolicy  # noqa: E402
from cassandra.query import BatchStatement, SimpleStatement  # noqa: E402

cluster = Cluster([HOST], port=PORT, load_balancing_policy=RoundRobinPolicy())
session = cluster.connect(KEYSPACE)
insert = session.prepare("INSERT INTO kv (k, v) VALUES (?, ?)")

# Sync: a string, a simple statement, a prepared statement, a bound one, a batch.
session.execute("SELECT v FROM kv WHERE k = 1")
session.execute(SimpleStatement("INSERT INTO kv (k, v) VALUES (%s, %s)"), (1, "one"))
session.execute(insert, (2, "two"))
session.execute(insert.bind((3, "three")))
batch = BatchStatement()
batch.add(SimpleStatement("INSERT INTO kv (k, v) VALUES (%s, %s)"), (4, "four"))
batch.add(insert, (5, "five"))
session.execute(batch)

# Failing statements: the server refuses one; one fails before anything is sent.
try:
    session.execute("SELECT * FROM no_such_table")
except Exception as exc:
    assert type(exc).__name__ == "InvalidRequest", exc
try:
    session.execute("INSERT INTO kv (k, v) VALUES (%s, %s)", (6,))
except Exception as exc:
    assert isinstance(exc, TypeError), exc

# execute_async with callbacks, a success and a failure.
done = threading.Event()
outcomes = []


def _on_rows(rows):
    outcomes.append(("rows", len(list(rows or ()))))
    if len(outcomes) == 2:
        done.set()


def _on_error(exc):
    outcomes.append(("error", type(exc).__name__))
    if len(outcomes) == 2:
        done.set()


session.execute_async("SELECT v FROM kv WHERE k = 2").add_callbacks(_on_rows, _on_error)
session.execute_async("SELECT * FROM no_such_table").add_callbacks(_on_rows, _on_error)
assert done.wait(10), outcomes
assert sorted(outcomes) == [("error", "InvalidRequest"), ("rows", 1)], outcomes

# execute_concurrent: pairs with a failure among them, then one statement with rows of args.
results = execute_concurrent(
    session,
    [("SELECT v FROM kv WHERE k = %s", (1,)), (insert, (7, "seven")), ("SELECT * FROM no_such_table", ())],
    concurrency=2,
    raise_on_first_error=False,
)
assert [ok for ok, _ in results] == [True, True, False], results
execute_concurrent_with_args(session, insert, [(8, "eight"), (9, "nine")], concurrency=2)

# Paging: five rows two at a time (the classic driver fetches the next pages through the
# response future).
for c in range(5):
    session.execute("INSERT INTO paged (k, c) VALUES (0, %s)", (c,))
rows = list(session.execute(SimpleStatement("SELECT c FROM paged WHERE k = 0", fetch_size=2)))
assert [r.c for r in rows] == [0, 1, 2, 3, 4], rows

cluster.shutdown()
spans = recorded()
print(json.dumps(sorted(spans, key=lambda s: json.dumps(s, sort_keys=True)), sort_keys=True))
