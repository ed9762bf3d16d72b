"""A server that stops while 10,000 requests are in flight: every future resolves within
its timeout with a result or a typed exception, and nothing hangs. Uses its own node."""

import threading
import time

import pytest

import turbocql_localdb as localdb
from tests.conftest import HOST, PORT
from turbocql import DriverException, OperationTimedOut
from turbocql.cluster import Cluster, NoHostAvailable

# Its own port: 9043 is the auth node, 9044 and 9045 the TLS nodes (tests/integration/conftest.py).
STOP_PORT = PORT + 4


@pytest.fixture(scope="module")
def doomed_node(cassandra, tmp_path_factory):
    d = tmp_path_factory.mktemp("stop-node")
    node = localdb.start(dir=str(d), port=STOP_PORT, heap="1G", timeout=300, out=lambda *a, **k: None)
    yield node
    localdb.stop(dir=str(d), port=STOP_PORT)


@pytest.mark.timeout(300)
def test_stop_server_with_10000_in_flight(doomed_node):
    cluster = Cluster([HOST], port=STOP_PORT)
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS ks.t (k int PRIMARY KEY, v text)")
    ins = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    timeout = 10.0
    resolved = []
    lock = threading.Lock()
    all_done = threading.Event()
    n = 10_000

    def record(outcome):
        with lock:
            resolved.append(outcome)
            if len(resolved) == n:
                all_done.set()

    killer = threading.Timer(0.05, lambda: localdb.stop(dir=str(doomed_node.dir), port=STOP_PORT, timeout=1))
    killer.start()
    t0 = time.monotonic()
    for i in range(n):
        session.execute_async(ins, (i, "x" * 100), timeout=timeout).add_callbacks(record, record)
    assert all_done.wait(timeout + 20), "only %d of %d futures resolved" % (len(resolved), n)
    elapsed = time.monotonic() - t0
    killer.join()
    failures = [r for r in resolved if isinstance(r, BaseException)]
    assert failures, "the server was stopped mid-run, some requests must fail"
    assert all(isinstance(e, (NoHostAvailable, OperationTimedOut, DriverException)) for e in failures), {
        type(e) for e in failures
    }
    assert elapsed < timeout + 20
    # The session stays usable: a request to the dead node fails fast with a typed error.
    with pytest.raises((NoHostAvailable, OperationTimedOut)):
        session.execute(ins, (0, "y"), timeout=2)
    cluster.shutdown()
