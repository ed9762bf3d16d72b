"""Connecting: contact points, keyspaces, down or silent servers, shutdown."""

import socket
import threading
import time

import pytest

from tests.conftest import HOST, PORT
from turbocql import DriverException, InvalidRequest
from turbocql.cluster import Cluster, NoHostAvailable, Session
from turbocql.connection import ConnectionException


def test_connect_and_query_system_local(cluster):
    session = cluster.connect()
    assert isinstance(session, Session)
    row = session.execute("SELECT release_version FROM system.local").one()
    assert row.release_version.startswith("5.")
    session.shutdown()


def test_connect_with_keyspace_sets_it(cluster, keyspace):
    session = cluster.connect(keyspace)
    assert session.keyspace == keyspace
    session.shutdown()


def test_connect_unknown_keyspace_is_invalid_request(cluster):
    with pytest.raises(InvalidRequest, match="no_such_keyspace"):
        cluster.connect("no_such_keyspace")


def test_set_keyspace(cluster, keyspace):
    session = cluster.connect()
    session.set_keyspace(keyspace)
    assert session.keyspace == keyspace
    with pytest.raises(InvalidRequest):
        session.set_keyspace("no_such_keyspace_either")
    # Still usable afterwards.
    assert session.execute("SELECT key FROM system.local").one().key == "local"
    session.shutdown()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_raises_no_host_available_quickly(cassandra):
    port = _free_port()  # nothing listens there
    cluster = Cluster(["127.0.0.1"], port=port, connect_timeout=2)
    t0 = time.monotonic()
    with pytest.raises(NoHostAvailable) as info:
        cluster.connect()
    assert time.monotonic() - t0 < 3
    assert info.value.errors, "NoHostAvailable.errors names the hosts tried"
    host, err = next(iter(info.value.errors.items()))
    assert str(port) in host
    assert isinstance(err, ConnectionException)


def test_silent_server_times_out_within_connect_timeout():
    """A server that accepts TCP but never answers the CQL handshake."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted = []

    def accept():
        try:
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)  # keep it open, say nothing
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        cluster = Cluster(["127.0.0.1"], port=port, connect_timeout=1.0)
        t0 = time.monotonic()
        with pytest.raises(NoHostAvailable):
            cluster.connect()
        elapsed = time.monotonic() - t0
        assert elapsed < 2.5, elapsed
        assert accepted, "the driver did reach the silent server"
    finally:
        listener.close()
        for c in accepted:
            c.close()


def test_cluster_and_session_context_managers(cassandra):
    with Cluster([HOST], port=PORT) as cluster:
        with cluster.connect() as session:
            assert session.execute("SELECT key FROM system.local").one().key == "local"
        assert session.is_shutdown
        with pytest.raises(DriverException, match="shut down"):
            session.execute("SELECT key FROM system.local")
    assert cluster.is_shutdown
    with pytest.raises(DriverException):
        cluster.connect()


def test_contact_points_must_be_a_sequence():
    with pytest.raises(TypeError):
        Cluster("127.0.0.1")
