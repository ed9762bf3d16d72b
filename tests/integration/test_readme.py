"""The README's code blocks run as written against the local Cassandra."""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import PORT

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    return [
        b.replace("port=9042", "port=%d" % PORT).replace(
            'Cluster(["127.0.0.1"])', 'Cluster(["127.0.0.1"], port=%d)' % PORT
        )
        for b in blocks
    ]


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_quick_start_runs(cassandra):
    quick = _blocks()[0]
    lines = _run(quick)
    assert "1 Ada L." in lines and "3 Linus" in lines and "4 Barbara" in lines
    assert lines[-1] == "Ada L."


def test_many_requests_block_runs(cassandra):
    quick, many = _blocks()[0], _blocks()[1]
    assert quick.rstrip().endswith("cluster.shutdown()")
    code = quick.rstrip()[: -len("cluster.shutdown()")] + many + "\nprint(len(names))\ncluster.shutdown()\n"
    lines = _run(code)
    assert "done" in lines and lines[-1] == "100"


def test_asyncio_block_runs(cassandra):
    quick, aio = _blocks()[0], _blocks()[2]
    _run(quick)  # creates demo.users
    lines = _run(aio)
    assert lines and lines[-1].startswith("[")


def test_numpy_block_runs(cassandra):
    lines = _run(_blocks()[3])
    assert lines == ["int32 (3, 768)"]


def test_arrow_block_runs(cassandra):
    lines = _run(_blocks()[4])
    assert lines == ["1000 double", "4 250", "{'click': 666, 'view': 334}"]


def test_bulk_block_runs(cassandra):
    lines = _run(_blocks()[5])
    assert lines == ["2 1 0", "2", "2"]


def test_clusters_block_runs(cassandra):
    lines = _run(_blocks()[6])
    assert lines[0].startswith("5.")
    assert lines[1] == "['aggregates', 'column_masks', 'columns']"
    assert "datacenter1" in lines[2]


def test_tls_block_runs(mtls_node):
    from tests.integration.conftest import MTLS_PORT

    files = mtls_node.tls_files()
    code = _blocks()[7].replace("port=9045", "port=%d" % MTLS_PORT)
    for name, path in (("ca.pem", files.ca), ("client.pem", files.client_cert), ("client-key.pem", files.client_key)):
        code = code.replace('"%s"' % name, repr(str(path)))
    # The TLS node runs without authentication: the provider is offered and never asked.
    lines = _run(code)
    assert lines == ["Row(ssl_enabled=True, ssl_protocol='TLSv1.3')"]


def _block(marker):
    """The README block that contains ``marker`` (found by content: sections move)."""
    found = [b for b in _blocks() if marker in b]
    assert len(found) == 1, marker
    return found[0]


def test_metrics_and_prometheus_blocks_run(cassandra):
    import socket

    metrics = _block("timer = cluster.metrics.request_timer")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    prometheus = _block("PrometheusCollector(cluster)").replace(
        "start_http_server(9100)", "start_http_server(%d)" % port
    )
    assert metrics.rstrip().endswith("cluster.shutdown()")
    scrape = "import urllib.request\nprint(b'cassandra_client_requests_count' in urllib.request.urlopen('http://127.0.0.1:%d/metrics').read())\n"
    lines = _run(metrics.rstrip()[: -len("cluster.shutdown()")] + prometheus + scrape % port + "cluster.shutdown()\n")
    assert lines[0].split()[0] == "100"
    assert lines[-1] == "True"


def test_serving_host_block_runs(cassandra):
    code = (
        "from turbocql.cluster import Cluster\ncluster = Cluster(['127.0.0.1'], port=%d)\nsession = cluster.connect()\n"
        % PORT
    )
    lines = _run(code + _block("rs.response_future.coordinator_host") + "cluster.shutdown()\n")
    host, attempted = lines[-1].split(" ", 1)
    assert host == "127.0.0.1:%d" % PORT and attempted == "[<Host: 127.0.0.1:%d datacenter1>]" % PORT


def test_apm_block_runs(cassandra):
    import os

    code = (
        _block("CassandraInstrumentor().instrument")
        + (
            "from cassandra.cluster import Cluster\n"
            "session = Cluster(['127.0.0.1'], port=%d).connect()\n"
            "print(session.execute('SELECT release_version FROM system.local').one() is not None)\n"
            "print(type(session.execute).__name__, type(session.execute_async).__name__)\n"
        )
        % PORT
    )
    env = dict(os.environ, TURBOCQL_COMPAT_SHADOW="1", DD_INSTRUMENTATION_TELEMETRY_ENABLED="false")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    # execute goes through the agents' wrappers of execute_async.
    assert out.stdout.splitlines()[-2:] == ["True", "method FunctionWrapper"]


def test_tracing_block_runs(cassandra):
    code = "from turbocql.cluster import Cluster\ncluster = Cluster(['127.0.0.1'], port=%d)\n" % PORT
    check = (
        "import turbocql.tracing\n"
        "print(turbocql.tracing.is_instrumented(cluster))\n"
        "turbocql.tracing.instrument(cluster)\n"
        "print(turbocql.tracing.is_instrumented(cluster))\n"
        "cluster.shutdown()\n"
    )
    lines = _run(code + _block("turbocql.tracing.instrument(cluster)") + check)
    assert lines == ["False", "True"]


def test_cqlengine_block_runs(cassandra):
    lines = _run(_block("from turbocql.cqlengine.query import BatchQuery, LWTException"))
    assert lines == ["[4, 3]", "2", "exists: 0.0"]


def test_cqlengine_bulk_save_block_runs(cassandra):
    lines = _run(_block("from turbocql.cqlengine.query import bulk_save"))
    assert lines == ["1000"]
