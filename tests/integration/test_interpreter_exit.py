"""A program that exits with requests still running exits cleanly (row 9 of the reliability
matrix, at interpreter exit).

Python ends any thread that takes the GIL back once finalization has begun; for a thread in
the middle of Rust code (the dispatcher waiting for completions, a runtime thread calling a
host listener or a retry policy) that ends in an abort ("FATAL: exception not rethrown",
exit status 134). The dispatcher now leaves the engine from an ``atexit`` handler and the
runtime's threads do not take the GIL once Python is finalizing. Each case runs in its own
interpreter, exiting with tens of thousands of requests (with callbacks) in flight.
"""

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import HOST, PORT

pytestmark = pytest.mark.timeout(180)

PROGRAM = textwrap.dedent(
    """
    import sys
    from turbocql.cluster import Cluster
    from turbocql.policies import HostStateListener

    class Listener(HostStateListener):
        def on_up(self, host): pass
        def on_down(self, host): pass
        def on_add(self, host): pass
        def on_remove(self, host): pass

    c = Cluster([%(host)r], port=%(port)d)
    c.register_listener(Listener())
    s = c.connect()
    q = s.prepare("SELECT release_version FROM system.local WHERE key = ?")
    done = []
    for i in range(%(n)d):
        s.execute_async(q, ("local",)).add_callbacks(done.append, done.append)
    if sys.argv[1] == "shutdown":
        c.shutdown()
    print("exiting with", %(n)d - len(done), "requests unfinished", flush=True)
    """
)


@pytest.mark.parametrize("how", ["shutdown", "no-shutdown"])
def test_exit_with_requests_in_flight_is_clean(cassandra, how):
    code = PROGRAM % {"host": HOST, "port": PORT, "n": 60000}
    for _ in range(3):  # the abort depended on timing: several runs
        proc = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
        assert "FATAL" not in proc.stderr, proc.stderr[-2000:]
        assert "exiting with" in proc.stdout


def test_connected_clusters_are_shut_down_at_exit_as_classic(cassandra):
    """``cassandra.cluster._clusters_for_shutdown``: a cluster is in it from its first
    connect until its shutdown or collection, and one left connected is shut down at exit (a handler
    registered before turbocql was imported runs after turbocql's and sees it)."""
    code = textwrap.dedent(
        """
        import atexit
        clusters = []
        atexit.register(lambda: print("at exit: shut down", [c.is_shutdown for c in clusters], flush=True))
        from turbocql.cluster import Cluster, _clusters_for_shutdown
        a, b = Cluster([%(host)r], port=%(port)d), Cluster([%(host)r], port=%(port)d)
        clusters += [a, b]
        assert not _clusters_for_shutdown
        a.connect(); b.connect()
        assert set(_clusters_for_shutdown) == {a, b}
        b.shutdown()
        assert set(_clusters_for_shutdown) == {a}
        # Weak: a connected cluster the program drops is still collected.
        import gc
        d = Cluster([%(host)r], port=%(port)d)
        d.connect()
        assert len(_clusters_for_shutdown) == 2
        del d
        gc.collect()
        assert set(_clusters_for_shutdown) == {a}
        """
        % {"host": HOST, "port": PORT}
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "at exit: shut down [True, True]" in proc.stdout
