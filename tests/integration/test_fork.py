"""A forked child (multiprocessing) connects and runs requests of its own."""

import multiprocessing

from tests.conftest import HOST, PORT


def _child(q):
    from turbocql.cluster import Cluster
    from turbocql.concurrent import execute_concurrent_with_args

    c = Cluster([HOST], port=PORT)
    s = c.connect()
    key = s.execute("SELECT key FROM system.local").one().key
    fut = s.execute_async("SELECT key FROM system.local").result().one().key
    sel = s.prepare("SELECT key FROM system.local WHERE key = ?")
    n = len(execute_concurrent_with_args(s, sel, [("local",)] * 100))
    c.shutdown()
    q.put((key, fut, n))


def test_forked_children_work(session):
    # The parent has a running engine (runtime threads, dispatcher) before forking.
    session.execute_async("SELECT key FROM system.local").result()
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(q,)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [q.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert results == [("local", "local", 100)] * 2
    # The parent is unaffected.
    assert session.execute("SELECT key FROM system.local").one().key == "local"
