"""Steady traffic beside a user's callback that is kept waiting: the callback runs off the
engine's I/O thread when every request of the traffic completes while it waits."""

import threading

from tests.conftest import HOST, PORT


class Gate:
    """What a user's callback waits on: opened by the test once the traffic is done. The
    callback notes whether it was opened (True) or it gave up waiting (False)."""

    def __init__(self, wait=20.0):
        self.opened = threading.Event()
        self.entered = threading.Event()
        self.wait = wait
        self.outcomes = []

    def hold(self):
        """Called by the callback: waits for the test to open the gate."""
        self.entered.set()
        self.outcomes.append(self.opened.wait(self.wait))


def run_traffic(session, requests=2000, timeout=10.0):
    """``requests`` reads through ``execute_async``, all in flight at once; returns how many
    completed (with a result or an error) within ``timeout`` seconds."""
    done = threading.Semaphore(0)
    futures = [session.execute_async("SELECT key FROM system.local") for _ in range(requests)]
    for f in futures:
        f.add_callbacks(lambda _rows: done.release(), lambda _exc: done.release())
    finished = 0
    for _ in range(requests):
        if not done.acquire(timeout=timeout):
            break
        finished += 1
    return finished


def traffic_cluster():
    from turbocql.cluster import Cluster

    return Cluster([HOST], port=PORT)
