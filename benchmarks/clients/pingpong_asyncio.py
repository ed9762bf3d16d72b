"""The ping-pong client's asyncio and uvloop models (``pingpong.py``: ``asyncio-streams``,
``asyncio-protocol``, ``asyncio-sock`` and their ``uvloop-*`` twins), with the timed window and
the protocol base class the CQL models share (``cql_models.py``).
"""

from __future__ import annotations

import argparse
import array
import resource
import sys

from benchmarks.clients.pingpong_common import (
    CONNECT_TIMEOUT,
    MESSAGE,
    MSG_SIZE,
    STOP_GRACE,
    Failed,
    new_socket,
    now_ns,
    summary,
)


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
