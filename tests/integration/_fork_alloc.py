"""fork() while other threads allocate in the engine (tests/integration/test_fork.py).

``python -m tests.integration._fork_alloc threads <forks>``: threads that start, allocate in
the engine (``_engine.encode``, no session) and exit, back to back, while the main thread
forks; each child starts a thread that allocates in the engine (mimalloc makes that
thread's heap under the allocator's global locks: a lock left held by a parent's thread
that was starting or exiting at the fork would hang it), allocates itself and exits
normally. Prints one JSON line: the children's exit statuses (None: hung, killed after 10 s,
times ``TURBOCQL_TEST_TIMEOUT_SCALE``)
and, for each hung child, where its threads were (``hung``: see ``_where``).

``python -m tests.integration._fork_alloc queries <forks>``: several Python threads keep the engine
busy (and its allocator, mimalloc: src/alloc.rs) while the main thread forks ``forks`` times:

* ``rows``: reads a table of its own (400 rows of text, list and map columns, decoded into
  named tuples);
* ``paged``: the same in pages of 50 (each page decoded as it comes);
* ``futures``: 200 execute_async at a time, and their results;
* ``concurrent``: execute_concurrent_with_args of 300 requests;
* ``churn``: a new thread per request (each thread's first allocation makes its mimalloc
  heap, its exit frees it: the allocator's thread-init and thread-exit paths take its locks).

Meanwhile the requests are polled by these threads in ``block_on`` (the GIL released) and
by the runtime's two I/O threads (``TURBOCQL_IO_THREADS=2``). Each child connects a Cluster
of its own, reads and decodes rows on every path, shuts it down (or, every other child,
leaves it to interpreter finalization) and exits normally (``sys.exit(0)``). The parent
waits for each child with a deadline (killed after it: hung), then checks that its threads
kept working. Prints one JSON line.
"""

import json
import logging
import os
import sys
import threading
import time
import uuid

from tests.conftest import HOST, PORT
from tests.integration.conftest import KEYSPACE
from tests.timeout_scale import scale_from_env

# Under emulation (scripts/arm64.sh) everything runs several times slower: the deadlines are
# multiplied as pytest-timeout's limits are, so that a slow child is not taken for a hung one.
SCALE = scale_from_env()
CHILD_DEADLINE = 30.0 * SCALE
THREAD_CHILD_DEADLINE = 10.0 * SCALE
ROWS = 400
TABLE = "%s.fork_alloc_%s" % (KEYSPACE, uuid.uuid4().hex[:12])
SELECT = "SELECT * FROM %s" % TABLE


def _child(n):
    from turbocql.cluster import Cluster
    from turbocql.concurrent import execute_concurrent_with_args
    from turbocql.query import SimpleStatement

    cluster = Cluster([HOST], port=PORT)
    session = cluster.connect()
    rows = session.execute(SELECT).all()
    paged = list(session.execute(SimpleStatement(SELECT, fetch_size=50)))
    futures = [session.execute_async(SELECT) for _ in range(20)]
    results = [len(f.result().all()) for f in futures]
    sel = session.prepare("SELECT key FROM system.local WHERE key = ?")
    done = execute_concurrent_with_args(session, sel, [("local",)] * 300)
    ok = len(rows) == len(paged) == ROWS and results == [ROWS] * 20 and all(r.success for r in done)
    if n % 2 == 0:
        cluster.shutdown()
    sys.exit(0 if ok else 3)


class _Worker(threading.Thread):
    def __init__(self, name, work):
        super().__init__(name=name)
        self.work, self.count, self.errors, self.stop = work, 0, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.work()
                self.count += 1
            except Exception as exc:  # noqa: BLE001 - reported to the test
                self.errors.append("%s: %s" % (type(exc).__name__, exc))
                if len(self.errors) > 20:
                    return


def _workers(session):
    from turbocql.concurrent import execute_concurrent_with_args
    from turbocql.query import SimpleStatement

    sel = session.prepare("SELECT key FROM system.local WHERE key = ?")

    def rows():
        assert len(session.execute(SELECT).all()) == ROWS

    def paged():
        assert len(list(session.execute(SimpleStatement(SELECT, fetch_size=50)))) == ROWS

    def futures():
        fs = [session.execute_async(sel, ("local",)) for _ in range(200)]
        assert all(f.result(timeout=30).one().key == "local" for f in fs)

    def concurrent():
        assert all(r.success for r in execute_concurrent_with_args(session, sel, [("local",)] * 300))

    def churn():
        out = []
        t = threading.Thread(target=lambda: out.append(session.execute(sel, ("local",)).one().key))
        t.start()
        t.join(30)
        assert out == ["local"]

    return [_Worker(name, work) for name, work in [(f.__name__, f) for f in (rows, paged, futures, concurrent, churn)]]


def _mapping(pid, address):
    """What the mapping of /proc/PID/maps whose range holds ``address`` is: the file (a
    library's data, the emulator's own) or anonymous memory a lock word lives in; anonymous
    memory is named with the file mapped just before it (a program's .bss follows its file)."""
    previous = ""
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                name = " ".join(line.split()[5:])
                if lo <= address < hi:
                    return name or ("[anonymous] after " + (previous or "nothing named"))
                previous = name or previous
    except OSError:
        pass
    return None


def _where(pid):
    """Each thread of a stuck process: its name, state, kernel wait channel and system call
    (/proc/PID/task/TID/syscall: its number and first argument, for a futex the lock word's
    address, with the mapping that holds it). Under qemu-user the threads are the emulator's,
    so this tells a guest's lock (in a guest library or its heap) from the emulator's."""
    tasks = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        base = "/proc/%d/task/%s/" % (pid, tid)
        info = {"tid": int(tid)}
        for name in ("comm", "wchan", "syscall"):
            try:
                with open(base + name) as f:
                    info[name] = f.read().strip()
            except OSError as exc:
                info[name] = "(%s)" % exc.strerror
        fields = info["syscall"].split()
        if len(fields) > 1 and fields[1].startswith("0x"):
            info["arg1_in"] = _mapping(pid, int(fields[1], 16))
        try:
            with open(base + "stat") as f:
                info["state"] = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass
        tasks.append(info)
    return tasks


def _wait(pid, deadline, hung):
    """The child's exit code, or None when it is still running after ``deadline`` seconds: it
    is then described into the list ``hung`` and killed."""
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    try:
        hung.append(_where(pid))
    except OSError as exc:
        hung.append([{"error": str(exc)}])
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def threads(forks):
    import turbocql.cluster  # noqa: F401 - bootstraps the engine
    from turbocql import _engine

    def work():
        assert len(_engine.encode("list<text>", ["x" * 100] * 50)) > 5000

    stop = threading.Event()

    def churn():
        while not stop.is_set():
            t = threading.Thread(target=work)
            t.start()
            t.join()

    churners = [threading.Thread(target=churn) for _ in range(3)]
    for t in churners:
        t.start()
    statuses, hung = [], []
    t0 = time.monotonic()
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            t = threading.Thread(target=work)
            t.start()
            t.join()
            work()
            sys.exit(0)
        statuses.append(_wait(pid, THREAD_CHILD_DEADLINE, hung))
    forks_s = time.monotonic() - t0
    stop.set()
    for t in churners:
        t.join(30)
    print(json.dumps({"statuses": statuses, "hung": hung, "forks_s": round(forks_s, 2)}), flush=True)


def queries(forks):
    from turbocql.cluster import Cluster

    logging.disable(logging.WARNING)
    cluster = Cluster([HOST], port=PORT)
    session = cluster.connect()
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, t text, l list<text>, m map<text, int>)" % TABLE)
    ins = session.prepare("INSERT INTO %s (k, t, l, m) VALUES (?, ?, ?, ?)" % TABLE)
    for k in range(ROWS):
        session.execute(ins, (k, "t%d" % k * 10, ["x%d" % i for i in range(20)], {"m%d" % i: i for i in range(20)}))
    workers = _workers(session)
    for w in workers:
        w.start()
    while not all(w.count for w in workers):  # every thread is at work
        time.sleep(0.01)
    statuses, stderr, hung = [], [], []
    err_path = "/tmp/turbocql-fork-alloc-%d.err" % os.getpid()
    t0 = time.monotonic()
    for n in range(forks):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 2)
            os.close(fd)
            _child(n)
        statuses.append(_wait(pid, CHILD_DEADLINE, hung))
        with open(err_path) as f:
            stderr.append(f.read())
    forks_s = time.monotonic() - t0
    at_last_fork = {w.name: w.count for w in workers}
    # Still working after the forks: every thread completes more rounds.
    until = time.monotonic() + 30
    while time.monotonic() < until and not all(w.count >= at_last_fork[w.name] + 3 for w in workers):
        time.sleep(0.05)
    for w in workers:
        w.stop.set()
    for w in workers:
        w.join(60)
    os.unlink(err_path)
    print(
        json.dumps(
            {
                "statuses": statuses,
                "hung": hung,
                "child_stderr": [s for s in stderr if s],
                "forks_s": round(forks_s, 2),
                "at_last_fork": at_last_fork,
                "final": {w.name: w.count for w in workers},
                "alive": [w.name for w in workers if w.is_alive()],
                "errors": {w.name: w.errors[:3] for w in workers if w.errors},
            }
        ),
        flush=True,
    )
    session.execute("DROP TABLE %s" % TABLE)
    cluster.shutdown()


if __name__ == "__main__":
    {"threads": threads, "queries": queries}[sys.argv[1]](int(sys.argv[2]))
