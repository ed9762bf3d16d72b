"""One Session shared by many threads: the GIL is released while requests wait."""

import threading
import time

from tests.integration.conftest import paused


def test_sixteen_threads_share_a_session(session, table):
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    errors = []

    def work(t):
        try:
            for i in range(200):
                session.execute(ins, ("t%d-%d" % (t, i), "a", "b"))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 16 * 200


def test_waiting_requests_do_not_hold_the_gil(cassandra, session, table):
    """With the server frozen, 16 threads wait inside execute() at once, and the main
    thread still runs Python code: the waits hold no GIL and really overlap."""
    ins = session.prepare("INSERT INTO %s (k, a, b) VALUES (?, ?, ?)" % table)
    entered = []
    done = []
    lock = threading.Lock()

    def work(t):
        with lock:
            entered.append(t)
        session.execute(ins, ("g%d" % t, "a", "b"), timeout=30)
        with lock:
            done.append(t)

    with paused(cassandra):
        threads = [threading.Thread(target=work, args=(t,)) for t in range(16)]
        for th in threads:
            th.start()
        deadline = time.monotonic() + 5
        while len(entered) < 16 and time.monotonic() < deadline:
            time.sleep(0.01)
        # The main thread keeps running Python while all 16 wait.
        n = 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.3:
            n += 1
        assert len(entered) == 16 and done == []
        assert n > 10000
    for th in threads:
        th.join(30)
    assert sorted(done) == list(range(16))
    assert session.execute("SELECT count(*) FROM %s" % table).one()[0] == 16
