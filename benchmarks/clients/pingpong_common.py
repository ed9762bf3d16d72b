"""What every ping-pong model shares (``pingpong.py``), and the CQL clients too
(``cql_models.py``, ``cql_drivers.py``): the message, the clock, :class:`Failed` (the runner's
FF cell), the run's JSON line (:func:`summary`, :func:`failure`, :func:`print_outcome`), the
file-descriptor limit, and the sockets (bound to their source address, connected one after
the other). Stdlib only: the gevent model patches the standard library after this is imported,
so nothing here imports ``threading`` or ``socket`` at import time.
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
