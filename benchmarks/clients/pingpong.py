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
"""

from __future__ import annotations

import argparse
import array
import json
import os
import resource
import sys
import time

MSG_SIZE = 64
MESSAGE = b"x" * MSG_SIZE
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
CONNECT_TIMEOUT = 10.0  # seconds per connection
STOP_GRACE = 10.0  # seconds for the workers to notice the end of the window
LATENCY_NOTE = "every message, perf_counter_ns, exact percentiles"
now_ns = time.perf_counter_ns


class Failed(Exception):
    """The model could not open or hold its connections: the "FF" cell."""


# ---------------------------------------------------------------------------------------------
# Pure parts (unit-tested)


def parse_addresses(text: str) -> list[str]:
    out = [a.strip() for a in text.split(",") if a.strip()]
    if not out:
        raise ValueError("--addresses: no address")
    return out


def percentile(sorted_values, q: float) -> float | None:
    """Nearest-rank quantile of sorted values (None when empty)."""
    n = len(sorted_values)
    if not n:
        return None
    rank = min(n, max(1, -(-int(q * n * 1_000_000) // 1_000_000)))  # ceil(q * n), no float drift
    return sorted_values[rank - 1]


def summary(
    a: argparse.Namespace,
    lat: array.array,
    ru0: resource.struct_rusage,
    ru1: resource.struct_rusage,
    errors: list[str],
) -> dict:
    """The JSON line of a run: messages = the round trips recorded in the window."""
    lats = sorted(lat)
    user = ru1.ru_utime - ru0.ru_utime
    sys_ = ru1.ru_stime - ru0.ru_stime
    cpu = user + sys_
    us = lambda v: None if v is None else round(v / 1000, 1)  # noqa: E731
    return {
        "client": "python",
        "model": a.model,
        "connections": a.connections,
        "seconds": a.seconds,
        "warmup": a.warmup,
        "messages": len(lats),
        "msgs_per_s": round(len(lats) / a.seconds, 1) if a.seconds > 0 else 0.0,
        "p50_us": us(percentile(lats, 0.5)),
        "p95_us": us(percentile(lats, 0.95)),
        "p99_us": us(percentile(lats, 0.99)),
        "user_s": round(user, 4),
        "sys_s": round(sys_, 4),
        "user_share": round(user / cpu, 3) if cpu > 0 else None,
        "cpu_cores": round(cpu / a.seconds, 3) if a.seconds > 0 else None,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "addresses": a.addresses,
        "rlimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "latency": LATENCY_NOTE,
        "python_version": sys.version.split()[0],
        **versions(a.model),
    }


def failure(a: argparse.Namespace, reason: str) -> dict:
    return {
        "client": "python",
        "model": a.model,
        "connections": a.connections,
        "seconds": a.seconds,
        "failed": reason,
        "python_version": sys.version.split()[0],
        **versions(a.model),
    }


def print_outcome(run, failed, errors: tuple = (OSError,)) -> int:
    """Runs ``run()`` and prints its JSON line; when it raises :class:`Failed` or one of
    ``errors`` (EMFILE on a selector, an event loop or a thread's own fds, a driver's
    NoHostAvailable...), ``failed(reason)``'s line instead: the runner's FF cell, with why."""
    try:
        result = run()
    except Failed as e:
        result = failed(str(e))
    except errors as e:
        result = failed(f"{type(e).__name__}: {str(e)[:300]}")
    print(json.dumps(result), flush=True)
    return 0


def exit_without_teardown(code: int) -> None:
    """Exits at once: thousands of connections, threads or greenlets may still be closing or
    sitting in recv, and the interpreter's teardown would wait for them; the figures are out."""
    sys.stdout.flush()
    os._exit(code)


def versions(model: str) -> dict:
    out = {}
    if model.startswith("uvloop"):
        mod = sys.modules.get("uvloop")
        out["uvloop_version"] = getattr(mod, "__version__", None)
    if model == "gevent":
        mod = sys.modules.get("gevent")
        out["gevent_version"] = getattr(mod, "__version__", None)
    return out


def raise_nofile() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------------------------------------
# Sockets


def new_socket(a: argparse.Namespace, i: int):
    """Socket ``i``: TCP_NODELAY, SO_LINGER 0, bound to its source address (port 0)."""
    import socket
    import struct

    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.bind((a.addresses[i % len(a.addresses)], 0))
    except BaseException:
        s.close()
        raise
    return s


def connect_blocking(a: argparse.Namespace, blocking: bool) -> list:
    """Every connection, one after the other; blocking (no timeout) or non-blocking after."""
    socks: list = []
    try:
        for i in range(a.connections):
            try:
                s = new_socket(a, i)
                socks.append(s)
                s.settimeout(CONNECT_TIMEOUT)
                s.connect((a.host, a.port))
            except OSError as e:
                raise Failed(f"connection {i + 1} of {a.connections}: {e}") from None
            # Blocking without a timeout: with one, CPython polls before every recv and send.
            s.settimeout(None) if blocking else s.setblocking(False)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


def sleep_until(deadline_ns: int) -> None:
    while True:
        left = deadline_ns - now_ns()
        if left <= 0:
            return
        time.sleep(left / 1e9)


# ---------------------------------------------------------------------------------------------
# asyncio and uvloop


def new_event_loop(model: str):
    """The event loop of an ``asyncio-*`` or ``uvloop-*`` model, set as the current one;
    :class:`Failed` when uvloop does not import."""
    import asyncio

    if model.startswith("uvloop"):
        try:
            import uvloop
        except ImportError as e:
            raise Failed(f"uvloop is not installed in {sys.executable}: {e}") from None
        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


async def timed_window(clock: list) -> tuple:
    """Sleeps through the warm-up and the window (``clock``: their ends, ns) and returns the
    process's ``getrusage`` at the window's two ends."""
    import asyncio

    await asyncio.sleep(max(0, clock[0] - now_ns()) / 1e9)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.sleep(max(0, clock[1] - now_ns()) / 1e9)
    return ru0, resource.getrusage(resource.RUSAGE_SELF)


async def finish_protocols(protos: list) -> None:
    """Gives the protocols :data:`STOP_GRACE` to see the window's end, then closes them."""
    import asyncio

    deadline = now_ns() + int(STOP_GRACE * 1e9)
    while any(not p.done for p in protos) and now_ns() < deadline:
        await asyncio.sleep(0.01)
    for p in protos:
        if p.transport is not None:
            p.transport.close()
    await asyncio.sleep(0)


def run_asyncio(a: argparse.Namespace) -> dict:
    loop = new_event_loop(a.model)
    flavour = a.model.split("-", 1)[1]
    try:
        return loop.run_until_complete(_amain(a, loop, flavour))
    finally:
        loop.close()


async def _aconnect(a, loop, i: int, flavour: str, make_protocol):
    """One connection of the asyncio / uvloop models: (reader, writer), protocol or socket."""
    import asyncio

    s = new_socket(a, i)
    try:
        s.setblocking(False)
        await asyncio.wait_for(loop.sock_connect(s, (a.host, a.port)), CONNECT_TIMEOUT)
        if flavour == "streams":
            return await asyncio.open_connection(sock=s)
        if flavour == "protocol":
            _, proto = await loop.create_connection(make_protocol, sock=s)
            return proto
        return s
    except BaseException:
        s.close()
        raise


async def _amain(a: argparse.Namespace, loop, flavour: str) -> dict:
    import asyncio

    lat = array.array("q")
    errors: list[str] = []
    clock = [0, 0]  # warm_end, end (ns), set once every connection is open
    make_protocol = lambda: PingPong(clock, lat, errors)  # noqa: E731
    conns: list = []
    batch = 100  # connections opened concurrently
    try:
        for first in range(0, a.connections, batch):
            idx = range(first, min(first + batch, a.connections))
            got = await asyncio.gather(
                *(_aconnect(a, loop, i, flavour, make_protocol) for i in idx), return_exceptions=True
            )
            for i, g in zip(idx, got):
                if isinstance(g, BaseException):
                    why = "timed out" if isinstance(g, asyncio.TimeoutError) else str(g)
                    raise Failed(f"connection {i + 1} of {a.connections}: {why}")
                conns.append(g)
    except BaseException:
        _aclose(conns, flavour)
        raise
    clock[0] = now_ns() + int(a.warmup * 1e9)
    clock[1] = clock[0] + int(a.seconds * 1e9)
    if flavour == "streams":
        tasks = [loop.create_task(_streams_worker(r, w, clock, lat, errors)) for r, w in conns]
    elif flavour == "sock":
        tasks = [loop.create_task(_sock_worker(loop, s, clock, lat, errors)) for s in conns]
    else:
        tasks = []
        for p in conns:
            p.start()
    ru0, ru1 = await timed_window(clock)
    if not tasks:
        await finish_protocols(conns)
        return summary(a, lat, ru0, ru1, errors)
    _, pending = await asyncio.wait(tasks, timeout=STOP_GRACE)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending)
    _aclose(conns, flavour)
    await asyncio.sleep(0)
    return summary(a, lat, ru0, ru1, errors)


def _aclose(conns: list, flavour: str) -> None:
    for c in conns:
        if flavour == "streams":
            c[1].close()
        elif flavour == "protocol":
            if c.transport is not None:
                c.transport.close()
        else:
            c.close()


async def _streams_worker(reader, writer, clock, lat, errors) -> None:
    append, warm_end, end = lat.append, clock[0], clock[1]
    write, readexactly = writer.write, reader.readexactly
    t = now_ns()
    try:
        while True:
            write(MESSAGE)
            await readexactly(MSG_SIZE)
            n = now_ns()
            if n >= end:
                return
            if n >= warm_end:
                append(n - t)
            t = n
    except Exception as e:  # asyncio.IncompleteReadError, ConnectionError
        errors.append(f"{type(e).__name__}: {e}")


async def _sock_worker(loop, sock, clock, lat, errors) -> None:
    append, warm_end, end = lat.append, clock[0], clock[1]
    sendall, recv = loop.sock_sendall, loop.sock_recv
    t = now_ns()
    try:
        while True:
            await sendall(sock, MESSAGE)
            got = 0
            while got < MSG_SIZE:
                data = await recv(sock, MSG_SIZE - got)
                if not data:
                    raise ConnectionError("closed by the server")
                got += len(data)
            n = now_ns()
            if n >= end:
                return
            if n >= warm_end:
                append(n - t)
            t = n
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")


class TimedProtocol:
    """What every ``*-protocol`` model's ``asyncio.Protocol`` (duck-typed: uvloop takes it
    too) shares: the clock, latencies and errors of the run, its transport, the start of the
    request in flight and whether it saw the window's end. A subclass's ``data_received``
    writes the next request as soon as the response is complete (inline: it is the loop
    being measured); :meth:`start` sends the first, :meth:`first`."""

    __slots__ = ("clock", "lat", "errors", "transport", "t", "done")

    def __init__(self, clock: list, lat: array.array, errors: list) -> None:
        self.clock, self.lat, self.errors = clock, lat, errors
        self.transport = None
        self.t = 0
        self.done = False

    def first(self) -> bytes:
        raise NotImplementedError

    def connection_made(self, transport) -> None:
        self.transport = transport

    def start(self) -> None:
        self.t = now_ns()
        self.transport.write(self.first())

    def eof_received(self) -> None:
        return None

    def connection_lost(self, exc) -> None:
        if not self.done:
            self.done = True
            self.errors.append(f"connection lost: {exc or 'closed by the server'}")
        self.transport = None

    def pause_writing(self) -> None:
        pass

    def resume_writing(self) -> None:
        pass


class PingPong(TimedProtocol):
    """The ``*-protocol`` models of the ping-pong: the next 64-byte message as soon as the
    echo is complete."""

    __slots__ = ("got",)

    def __init__(self, clock: list, lat: array.array, errors: list) -> None:
        super().__init__(clock, lat, errors)
        self.got = 0

    def first(self) -> bytes:
        return MESSAGE

    def data_received(self, data: bytes) -> None:
        self.got += len(data)
        if self.got < MSG_SIZE or self.done:
            return
        self.got -= MSG_SIZE
        n = now_ns()
        if n >= self.clock[1]:
            self.done = True
            return
        if n >= self.clock[0]:
            self.lat.append(n - self.t)
        self.t = n
        self.transport.write(MESSAGE)


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
