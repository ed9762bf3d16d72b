"""The dispatcher thread (``turbocql-dispatcher``): it runs the callbacks of
``execute_async`` requests, taking every ready completion from the engine's queue under one
GIL acquisition (src/exec/completion.rs). Started on first use, stopped at interpreter exit,
forgotten in a forked child. Imports only the engine.
"""

import atexit
import os
import threading

from turbocql import _engine

_dispatcher_lock = threading.Lock()
_dispatcher_thread = None


def _start_dispatcher():
    """Starts the dispatcher thread on first use (and again in a forked child)."""
    global _dispatcher_thread
    with _dispatcher_lock:
        if _dispatcher_thread is None:
            t = threading.Thread(target=_engine.run_dispatcher, name="turbocql-dispatcher", daemon=True)
            t.start()
            _dispatcher_thread = t
            atexit.register(_stop_dispatcher, t)


def _stop_dispatcher(thread):
    """At interpreter exit: the dispatcher thread leaves the engine before Python finalizes
    (src/exec/completion.rs, ``stop_dispatcher``); callbacks of requests still running are
    not called, as the classic driver's daemon threads do not run them either."""
    _engine.stop_dispatcher()
    thread.join(5.0)


def _forget_dispatcher():
    """In a forked child: the engine starts a new runtime and queue, and the dispatcher
    thread is started again on first use. Sessions of the parent are not usable in the
    child (as with the classic driver): connect again there."""
    global _dispatcher_thread, _dispatcher_lock
    _engine._after_fork()
    _dispatcher_thread = None
    _dispatcher_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_dispatcher)
