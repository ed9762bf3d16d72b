"""Document 002's ping-pong client: Python's ways of handling TCP connections, by connection
count (scenario ``connections`` of ``turbocql bench``; runner ``benchmarks/run_connections.py``).

One ``--model`` per process, ``--connections N`` TCP connections to the echo server
(``pingpong-server``, the Rust stand-in for the document's C++ epoll server), each keeping ONE
64-byte message outstanding: send 64 bytes, wait for the 64-byte echo, send again. The models,
as the document's code had them (its client was the echo side; here the Python side sends and
measures, the same calls per message):

* ``asyncio-streams``  ``asyncio.open_connection``, ``writer.write`` + ``await reader.readexactly(64)``;
* ``asyncio-protocol`` an ``asyncio.Protocol``: ``data_received`` writes the next message;
* ``asyncio-sock``     raw non-blocking sockets: ``await loop.sock_sendall`` / ``loop.sock_recv``;
* ``uvloop-streams``, ``uvloop-protocol``, ``uvloop-sock``: the same code on
  ``uvloop.new_event_loop()``;
* ``selectors``        one thread, ``selectors.DefaultSelector`` (epoll), non-blocking sockets;
* ``threads``          one OS thread per connection, blocking ``sendall`` / ``recv``;
* ``gevent``           ``gevent.monkey.patch_all()`` first, then one greenlet per connection
  running the ``threads`` code on the patched (cooperative) sockets.

Connections: every socket is bound before it connects to a source address of ``--addresses``
(round robin over 127.0.0.x: 10,000+ connections on one address pair would run out of
ephemeral ports), with ``TCP_NODELAY`` (asyncio and uvloop set it on their transports anyway)
and ``SO_LINGER`` 0 (closing leaves no TIME_WAIT to eat the next run's ports). All of them are
opened, one after the other, before the first message; ``RLIMIT_NOFILE`` is raised to its hard
limit first.

Measured: the messages whose echo completes within the window (after ``--warmup`` seconds,
default 1, for ``--seconds``) and the round trip of EVERY one of them (``time.perf_counter_ns``
read once per message: the previous message's completion is the next one's start, kept in an
``array('q')``; p50/p95/p99 by nearest rank), the process's user and system CPU over the window
(``resource.getrusage``, finer than the document's ``os.times``, same figures). Prints ONE JSON
line, the same as the Rust client's (``"client": "python"``), or, when the model cannot open or
hold N connections (EMFILE, thread creation fails, timeouts), ``{"failed": "<reason>", ...}``
(exit status 0: the runner's "FF" cell).

Stdlib only, besides uvloop (the ``uvloop-*`` models) and gevent (``gevent``).

This module is the script, with the ``selectors``, ``threads`` and ``gevent`` models; the
asyncio and uvloop models are ``pingpong_asyncio``, what every model (and the CQL clients)
shares ``pingpong_common``; it re-exports their names.
"""

from __future__ import annotations

import argparse
import array
import json
import os
import resource
import sys
import time

# Run as a script, by the interpreter measured: the checkout's root, from which the clients
# import one another as modules of the benchmarks package.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)))
from benchmarks.clients.pingpong_asyncio import (  # noqa: E402, F401 - names of pingpong, moved
    PingPong,
    TimedProtocol,
    finish_protocols,
    new_event_loop,
    run_asyncio,
    timed_window,
)
from benchmarks.clients.pingpong_common import (  # noqa: E402, F401 - names of pingpong, moved
    CONNECT_TIMEOUT,
    LATENCY_NOTE,
    MESSAGE,
    MSG_SIZE,
    STOP_GRACE,
    Failed,
    connect_blocking,
    exit_without_teardown,
    failure,
    new_socket,
    now_ns,
    parse_addresses,
    percentile,
    print_outcome,
    raise_nofile,
    sleep_until,
    summary,
    versions,
)

MODELS = (
    "asyncio-streams",
    "asyncio-protocol",
    "asyncio-sock",
    "uvloop-streams",
    "uvloop-protocol",
    "uvloop-sock",
    "selectors",
    "threads",
    "gevent",
)


# ---------------------------------------------------------------------------------------------
# selectors


def run_selectors(a: argparse.Namespace) -> dict:
    import selectors

    socks = connect_blocking(a, blocking=False)
    lat = array.array("q")
    append = lat.append
    errors: list[str] = []
    sel = selectors.DefaultSelector()
    try:
        warm_end = now_ns() + int(a.warmup * 1e9)
        end = warm_end + int(a.seconds * 1e9)
        for s in socks:
            sel.register(s, selectors.EVENT_READ, [0, now_ns()])  # bytes of the echo so far, its start
            s.send(MESSAGE)
        ru0 = None
        open_ = len(socks)
        while open_:
            events = sel.select(0.05)
            n = now_ns()
            if ru0 is None and n >= warm_end:
                ru0 = resource.getrusage(resource.RUSAGE_SELF)
            if n >= end:
                break
            for key, _ in events:
                s, st = key.fileobj, key.data
                try:
                    data = s.recv(MSG_SIZE - st[0])
                except BlockingIOError:
                    continue
                except OSError as e:
                    data = None
                    errors.append(f"{type(e).__name__}: {e}")
                if not data:
                    if data is not None:
                        errors.append("closed by the server")
                    sel.unregister(s)
                    open_ -= 1
                    continue
                st[0] += len(data)
                if st[0] < MSG_SIZE:
                    continue
                st[0] = 0
                n = now_ns()
                if warm_end <= n < end:
                    append(n - st[1])
                st[1] = n
                s.send(MESSAGE)  # 64 bytes into an empty send buffer: never short
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        if ru0 is None:
            ru0 = ru1
    finally:
        sel.close()
        for s in socks:
            s.close()
    return summary(a, lat, ru0, ru1, errors)


# ---------------------------------------------------------------------------------------------
# threads and gevent


def run_threads(a: argparse.Namespace) -> dict:
    """``threads``: one OS thread per connection. ``gevent`` (after ``monkey.patch_all()``):
    one greenlet per connection, the same code on gevent's cooperative sockets."""
    import threading

    green = a.model == "gevent"
    if green:
        import gevent
    socks = connect_blocking(a, blocking=True)
    lat = array.array("q")
    errors: list[str] = []
    clock = [0, 0]
    go = threading.Event()  # gevent's Event after patching

    def worker(sock) -> None:
        go.wait()
        append, warm_end, end = lat.append, clock[0], clock[1]
        sendall, recv = sock.sendall, sock.recv
        t = now_ns()
        try:
            while True:
                sendall(MESSAGE)
                got = 0
                while got < MSG_SIZE:
                    data = recv(MSG_SIZE - got)
                    if not data:
                        raise ConnectionError("closed by the server")
                    got += len(data)
                n = now_ns()
                if n >= end:
                    return
                if n >= warm_end:
                    append(n - t)
                t = n
        except OSError as e:
            errors.append(f"{type(e).__name__}: {e}")

    workers: list = []
    try:
        for i, s in enumerate(socks):
            try:
                if green:
                    workers.append(gevent.spawn(worker, s))
                else:
                    th = threading.Thread(target=worker, args=(s,), daemon=True)
                    th.start()
                    workers.append(th)
            except (RuntimeError, MemoryError, OSError) as e:
                raise Failed(f"{'greenlet' if green else 'thread'} {i + 1} of {a.connections}: {e}") from None
        clock[0] = now_ns() + int(a.warmup * 1e9)
        clock[1] = clock[0] + int(a.seconds * 1e9)
        go.set()
        sleep_until(clock[0])  # time.sleep: gevent's after patching
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        sleep_until(clock[1])
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        deadline = time.monotonic() + STOP_GRACE
        if green:
            gevent.joinall(workers, timeout=STOP_GRACE)
        else:
            for th in workers:
                th.join(max(0.0, deadline - time.monotonic()))
        stuck = sum(1 for w in workers if (not w.dead if green else w.is_alive()))
        if stuck:
            errors.append(f"{stuck} workers still waiting {STOP_GRACE:.0f} s after the end")
    finally:
        go.set()  # a failed start must not leave the started ones waiting
        for s in socks:
            s.close()
    return summary(a, lat, ru0, ru1, errors)


RUNNERS = {
    **{m: run_asyncio for m in MODELS if m.startswith(("asyncio", "uvloop"))},
    "selectors": run_selectors,
    "threads": run_threads,
    "gevent": run_threads,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=MODELS)
    ap.add_argument("--connect", required=True, metavar="HOST:PORT", help="the echo server")
    ap.add_argument("--connections", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True, help="measured window")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before the window (default 1)")
    ap.add_argument(
        "--addresses", default="127.0.0.1", help="local source addresses, comma-separated (default 127.0.0.1)"
    )
    a = ap.parse_args(argv)
    host, _, port = a.connect.rpartition(":")
    if not host or not port.isdigit():
        ap.error(f"--connect: HOST:PORT, not {a.connect!r}")
    if a.connections <= 0 or a.seconds < 0 or a.warmup < 0:
        ap.error("--connections must be positive, --seconds and --warmup not negative")
    try:
        a.addresses = parse_addresses(a.addresses)
    except ValueError as e:
        ap.error(str(e))
    a.host, a.port = host, int(port)
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.model == "gevent":
        try:
            from gevent import monkey
        except ImportError as e:
            print(json.dumps(failure(a, f"gevent is not installed in {sys.executable}: {e}")), flush=True)
            return 0
        monkey.patch_all()
    raise_nofile()
    return print_outcome(lambda: RUNNERS[a.model](a), lambda why: failure(a, why))


if __name__ == "__main__":
    exit_without_teardown(main())
