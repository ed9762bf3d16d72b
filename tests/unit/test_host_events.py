"""How the engine's host events (``_engine.HostEvent``) update the one ``Host`` object of
each node and reach listeners: in the order delivered, "moved" updating the endpoint of
the same object (as the classic driver keeps a host whose address changed)."""

import types
import uuid

from turbocql import pool
from turbocql.cluster import Cluster
from turbocql.policies import HostStateListener


def _event(kind, host_id, address, port=9042, old=None):
    return types.SimpleNamespace(
        kind=kind,
        host_id=host_id,
        address=address,
        port=port,
        old_address=old[0] if old else None,
        old_port=old[1] if old else None,
    )


class Recorder(HostStateListener):
    def __init__(self):
        self.calls = []

    def on_up(self, host):
        self.calls.append(("up", host, host.is_up))

    def on_down(self, host):
        self.calls.append(("down", host, host.is_up))

    def on_add(self, host):
        self.calls.append(("add", host, host.is_up))

    def on_remove(self, host):
        self.calls.append(("remove", host, host.is_up))


def test_a_sequence_of_events_reaches_listeners_in_order_on_one_host_object():
    host_id = str(uuid.uuid4())
    cluster = Cluster(["127.0.0.1"])
    recorder = Recorder()
    cluster.register_listener(recorder)
    for kind in ("add", "up", "down", "up", "down", "remove"):
        cluster._host_event(_event(kind, host_id, "10.0.0.1"))
    assert [(k, up) for k, _h, up in recorder.calls] == [
        ("add", None),  # not known yet, as a new classic Host
        ("up", True),
        ("down", False),
        ("up", True),
        ("down", False),
        ("remove", False),
    ]
    assert len({id(h) for _k, h, _up in recorder.calls}) == 1


def test_moved_updates_the_endpoint_of_the_same_host_and_calls_no_listener():
    host_id = str(uuid.uuid4())
    cluster = Cluster(["127.0.0.1"])
    recorder = Recorder()
    cluster.register_listener(recorder)
    cluster._host_event(_event("up", host_id, "10.0.0.1"))
    (_, host, _) = recorder.calls[0]
    cluster._host_event(_event("moved", host_id, "10.0.0.2", 9043, old=("10.0.0.1", 9042)))
    assert len(recorder.calls) == 1
    assert host.address == "10.0.0.2" and host.endpoint.port == 9043
    cluster._host_event(_event("down", host_id, "10.0.0.2", 9043))
    assert recorder.calls[-1][1] is host and not host.is_up
    # The engine's own view of the node (metadata) also keeps the object.
    assert pool._host_of(host_id, "10.0.0.2", 9043, "dc1", "r1", True) is host


def test_host_of_keeps_the_object_when_the_address_changes():
    host_id = str(uuid.uuid4())
    first = pool._host_of(host_id, "10.1.0.1", 9042, "dc1", "r1", True)
    moved = pool._host_of(host_id, "10.1.0.2", 9042, "dc1", "r1", True)
    assert moved is first and moved.address == "10.1.0.2"
