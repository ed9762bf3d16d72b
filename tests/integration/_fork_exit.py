"""A forked child that exits normally, with the parent's Cluster and Session in its memory
(tests/integration/test_fork.py).

``python -m tests.integration._fork_exit <how> [--in-flight] [--child-connects]`` connects a
Cluster (the parent's), forks with ``os.fork()``, and in the child does ``how`` to the
inherited Cluster and Session:

* ``del-gc``: deletes every reference to them (and to whatever else of the parent's the
  child has) and runs ``gc.collect()``; weak references prove they were collected;
* ``untouched``: never touches them: interpreter finalization drops them (they are module
  globals here, so they live until then);
* ``shutdown``: ``cluster.shutdown()`` on the parent's cluster.

then exits NORMALLY: ``sys.exit(0)`` (or falling off the end of the program), so that
atexit handlers, the cycle collector and interpreter finalization run in the child, and
with them the engine's Drop of every parent's object still alive. ``--in-flight``: at the
fork the parent has requests running on every kind of engine object (execute_async futures,
a ReadPipeline, a paused execute_concurrent generator), all inherited by the child.
``--child-connects``: before exiting the child connects a Cluster of its own, runs
requests on it and leaves it open.

The parent waits for the child with a deadline (killed after it: hung), then checks that
its own connections are the ones it had before the fork, as the kernel (this process's
sockets, still ESTABLISHED) and the node (``system_views.clients``: the same client ports
with the same SESSION_ID) see them, and that its session still works (its requests in
flight complete; 1000 execute_async and 100 execute). Prints one JSON line.
"""

import gc
import json
import logging
import os
import sys
import time
import weakref

from tests.conftest import HOST, PORT
from tests.integration._clients import _own_ports

CHILD_DEADLINE = 30.0
LOCAL = "SELECT key FROM system.local"

# What the child inherits; module globals, so that in the child they live until
# interpreter finalization unless the child drops them.
INHERITED = {}


def _tcp_states(ports):
    """``{local port: kernel TCP state}`` of this process's sockets on ``ports`` (01 is
    ESTABLISHED)."""
    states = {}
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    port = int(fields[1].rsplit(":", 1)[1], 16)
                    if port in ports:
                        states[port] = fields[3]
        except OSError:
            continue
    return states


def _node_view(session, ports):
    """``{client port: (SESSION_ID, request_count)}``: the node's rows for ``ports``."""
    rows = session.execute("SELECT port, client_options, request_count FROM system_views.clients")
    return {r.port: ((r.client_options or {}).get("SESSION_ID"), r.request_count) for r in rows if r.port in ports}


def _connections(session):
    """This process's connections to the node, as the kernel and the node see them."""
    own = _own_ports() or set()
    node = _node_view(session, own)
    return {"ports": sorted(node), "states": _tcp_states(set(node)), "node": node}


def _start_in_flight(session):
    from turbocql.concurrent import ReadPipeline, execute_concurrent_with_args

    sel = session.prepare("SELECT key FROM system.local WHERE key = ?")
    INHERITED["futures"] = [session.execute_async(sel, ("local",)) for _ in range(2000)]
    rp = ReadPipeline(session, max_in_flight_requests=50)
    for _ in range(500):
        rp.execute(sel, ("local",))
    INHERITED["read_pipeline"] = rp
    gen = execute_concurrent_with_args(session, sel, [("local",)] * 5000, concurrency=200, results_generator=True)
    first = next(gen)  # paused: requests of the run are held by the generator
    assert first.success
    INHERITED["concurrent"] = gen


def _collect_in_flight():
    futures = INHERITED.pop("futures")
    assert all(f.result(timeout=30).one().key == "local" for f in futures)
    rp = INHERITED.pop("read_pipeline")
    assert [rs.one().key for rs in rp.results()] == ["local"] * 500
    gen = INHERITED.pop("concurrent")
    assert sum(r.success for r in gen) == 4999
    return 2000 + 500 + 5000


def _child(how, child_connects):
    """In the child. Returns None to fall off the end of the program, or raises SystemExit."""
    if how == "del-gc":
        if "futures" in INHERITED:
            # The parent's requests in flight at the fork are tasks of the parent's runtime,
            # which the child leaks whole (src/runtime.rs): their futures, and through them
            # the Session and Cluster, stay referenced. The pipeline is not.
            refs = [weakref.ref(INHERITED["read_pipeline"])]
        else:
            refs = [weakref.ref(INHERITED["cluster"]), weakref.ref(INHERITED["session"])]
        INHERITED.clear()
        gc.collect()
        alive = [r for r in refs if r() is not None]
        if alive:
            print("the parent's objects were not collected: %r" % [r() for r in alive], file=sys.stderr)
            sys.exit(3)
    elif how == "shutdown":
        INHERITED["cluster"].shutdown()
        if not (INHERITED["session"].is_shutdown and INHERITED["cluster"].is_shutdown):
            sys.exit(4)
    elif how != "untouched":
        raise AssertionError(how)
    if child_connects:
        from turbocql.cluster import Cluster

        cluster = Cluster([HOST], port=PORT)
        session = cluster.connect()
        keys = [session.execute_async(LOCAL).result().one().key for _ in range(20)]
        if keys != ["local"] * 20 or session.execute(LOCAL).one().key != "local":
            sys.exit(5)
        INHERITED["child_cluster"] = cluster  # left open: finalization drops it
    if how == "untouched":
        return None  # off the end of the program
    sys.exit(0)


def _write_calls(pid):
    """How many write-family system calls (write, writev, pwrite: an eventfd's wake-up is one)
    the exited, not yet reaped child made in its life (/proc/PID/io, zeroed at fork)."""
    try:
        with open("/proc/%d/io" % pid) as f:
            return next(int(line.split()[1]) for line in f if line.startswith("syscw:"))
    except (OSError, StopIteration):
        return None


def _wait(pid, deadline):
    """(exit status, write calls) of the child; (None, None) if it was still running at the
    deadline (then killed: hung)."""
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        # WNOWAIT: the child stays a zombie, its /proc/PID/io readable, until reaped below.
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            writes = _write_calls(pid)
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status), writes
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None, None


def main():
    from turbocql.cluster import Cluster

    # Quiet: the child's stderr is expected empty (no "Exception ignored", no panic).
    logging.disable(logging.WARNING)
    how = sys.argv[1]
    in_flight = "--in-flight" in sys.argv
    child_connects = "--child-connects" in sys.argv
    INHERITED["cluster"] = Cluster([HOST], port=PORT)
    session = INHERITED["session"] = INHERITED["cluster"].connect()
    # Every pool connection open and used, and the dispatcher thread started.
    for _ in range(50):
        session.execute_async(LOCAL).result()
    before = _connections(session)
    if in_flight:
        _start_in_flight(session)
    stderr_path = "/tmp/turbocql-fork-child-%d.err" % os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        del session  # the child keeps no reference of its own
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
        return _child(how, child_connects)
    t0 = time.monotonic()
    status, child_writes = _wait(pid, CHILD_DEADLINE)
    child_s = time.monotonic() - t0
    try:
        with open(stderr_path) as f:
            child_stderr = f.read()
        os.unlink(stderr_path)
    except OSError:
        child_stderr = None
    after_child = _connections(session)
    completed = _collect_in_flight() if in_flight else 0
    sel = session.prepare("SELECT key FROM system.local WHERE key = ?")
    futures = [session.execute_async(sel, ("local",)) for _ in range(1000)]
    completed += sum(f.result(timeout=30).one().key == "local" for f in futures)
    completed += sum(session.execute(sel, ("local",)).one().key == "local" for _ in range(100))
    after_use = _connections(session)
    print(
        json.dumps(
            {
                "status": status,
                "child_s": round(child_s, 3),
                "child_stderr": child_stderr,
                "child_writes": child_writes,
                "before": before,
                "after_child": after_child,
                "after_use": after_use,
                "completed": completed,
            }
        ),
        flush=True,
    )
    INHERITED["cluster"].shutdown()
    return None


if __name__ == "__main__":
    main()
