"""A hostile or broken server at the connection level, on the fake CQL server
(tests/integration/_fake_cql.py), for turbocql and the classic driver (the oracle):

- a node that accepts connections and never answers (not even OPTIONS);
- a node that answers STARTUP with garbage, then closes or goes silent;
- one hostile node of two: the session goes on with the other, requests retried there;
- no thread left behind by failed connects.

Each must end with the typed error a classic user catches (NoHostAvailable), within the
configured connect timeout, and leave nothing running. The frame- and value-level cases
(truncated frames, lying lengths, unknown stream ids, opcodes and type codes) are the matrix
of test_hostile_frames.py.
"""

import os
import time

import pytest

from benchmarks.harness.reliability import record
from tests.integration import _fake_cql as fake

CONNECT_TIMEOUT = 1.0
# Connect gives up within its timeout, plus the reconnection bookkeeping of one attempt.
DEADLINE = CONNECT_TIMEOUT + 4.0
GARBAGE = bytes(range(256)) * 4


def _os_threads():
    return len(os.listdir("/proc/self/task"))


def _connect_fails(driver, server):
    """(exception, seconds) of connecting `driver` to `server`."""
    if driver == "turbocql":
        from turbocql.cluster import Cluster

        kwargs = {}
    else:
        from cassandra.cluster import Cluster

        kwargs = {"protocol_version": 4}
    cluster = Cluster([server.host], port=server.port, connect_timeout=CONNECT_TIMEOUT, **kwargs)
    start = time.monotonic()
    try:
        with pytest.raises(Exception) as info:
            cluster.connect()
        return info.value, time.monotonic() - start
    finally:
        cluster.shutdown()


def _threads_settle(baseline, within=20.0):
    """Waits until the process has no more OS threads than `baseline` (idle pool threads
    leave after their keep-alive); returns the last count."""
    deadline = time.monotonic() + within
    while True:
        n = _os_threads()
        if n <= baseline or time.monotonic() > deadline:
            return n
        time.sleep(0.2)


SERVERS = {
    "accepts-never-answers": lambda s: setattr(s, "silent", True),
    "garbage-after-startup-then-close": lambda s: setattr(s, "startup_reply", fake.Raw(GARBAGE, fake.CLOSE)),
    "garbage-after-startup-then-stall": lambda s: setattr(s, "startup_reply", fake.Raw(GARBAGE, fake.STALL)),
    "no-reply-to-startup": lambda s: setattr(s, "startup_reply", fake.NO_REPLY),
}


@pytest.mark.parametrize("kind", list(SERVERS))
@pytest.mark.timeout(120)
def test_a_broken_node_fails_connect_typed_in_time_and_leaves_no_thread(kind):
    from cassandra.cluster import NoHostAvailable as ClassicNoHostAvailable

    from turbocql.cluster import NoHostAvailable

    with fake.FakeCqlServer() as server:
        SERVERS[kind](server)
        # The first connect starts what a process starts once (the engine's runtime, the
        # dispatcher); the next ones must add nothing.
        exc, elapsed = _connect_fails("turbocql", server)
        assert isinstance(exc, NoHostAvailable), repr(exc)
        assert elapsed < DEADLINE, f"{elapsed:.1f} s"
        baseline = _os_threads()
        for _ in range(4):
            exc, elapsed = _connect_fails("turbocql", server)
            assert isinstance(exc, NoHostAvailable), repr(exc)
            assert elapsed < DEADLINE, f"{elapsed:.1f} s"
            assert str(server.host) in str(exc), str(exc)
        threads = _threads_settle(baseline)
        assert threads <= baseline, f"{threads} OS threads after 4 more failed connects, {baseline} after the first"
        # The classic driver on the same server raises the same class.
        classic, classic_elapsed = _connect_fails("classic", server)
        assert isinstance(classic, ClassicNoHostAvailable), repr(classic)
        record(
            "11",
            "server: %s" % kind,
            injected="fake node: %s" % kind,
            requests=5,
            failed={"NoHostAvailable": 5},
            notes="connect failed in %.2f s (connect_timeout %.1f s); OS threads %d after the first, %d after 4 more;"
            " classic driver: %s in %.2f s"
            % (elapsed, CONNECT_TIMEOUT, baseline, threads, type(classic).__name__, classic_elapsed),
        )


@pytest.mark.timeout(120)
def test_a_hostile_node_leaves_the_session_usable_on_the_other():
    """Two fake nodes, one of which answers every user request with a frame declaring 2 GiB:
    each idempotent request sent there fails its connection (frame limit) and goes on to the
    other node by the retry policy, so every one succeeds; the session stays usable."""
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import RoundRobinPolicy
    from turbocql.query import SimpleStatement

    with fake.FakeCqlServer(host="127.0.0.2") as good:
        with fake.FakeCqlServer(host="127.0.0.3", port=good.port) as hostile:
            good.peers, hostile.peers = [hostile.host], [good.host]
            hostile.handler = lambda req: fake.partial_body(2**31, 0, fake.STALL)
            profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=5)
            cluster = Cluster([good.host], port=good.port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
            try:
                session = cluster.connect()
                hosts = {str(h.address) for h in cluster.metadata.all_hosts()}
                assert hosts == {good.host, hostile.host}, hosts
                deadline = time.monotonic() + 20
                while not all(h.is_up for h in cluster.metadata.all_hosts()):
                    assert time.monotonic() < deadline, "both nodes up"
                    time.sleep(0.1)
                statement = SimpleStatement("SELECT v FROM ks.t WHERE k = 1", is_idempotent=True)
                for _ in range(20):
                    session.execute(statement)
                tried = len(hostile.user_requests())
                assert tried, "the hostile node was tried"
                assert len(good.user_requests()) >= 20
                record(
                    "11",
                    "server: one hostile node of two (2 GiB frames)",
                    injected="fake node 127.0.0.3 answers every request with a 2 GiB frame header",
                    requests=20,
                    succeeded=20,
                    notes="%d requests sent to the hostile node, each retried on the other" % tried,
                )
            finally:
                cluster.shutdown()
