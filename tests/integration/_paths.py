"""The ways of running a statement that turbocql has, for the fault tests: each function runs
a statement on a session and lets the request's exception out (``PATHS``), and ``raised``
returns that exception."""

import asyncio
import threading

TIMEOUT = 5.0


def _execute(s, q):
    s.execute(q, timeout=TIMEOUT)


def _async_result(s, q):
    s.execute_async(q, timeout=TIMEOUT).result()


def _async_errback(s, q):
    future = s.execute_async(q, timeout=TIMEOUT)
    done, got = threading.Event(), []

    def ok(rows):
        got.append(("result", rows))
        done.set()

    def failed(exc):
        got.append(("error", exc))
        done.set()

    future.add_callback(ok)
    future.add_errback(failed)
    assert done.wait(TIMEOUT + 5), "neither callback nor errback ran"
    kind, value = got[0]
    if kind == "error":
        raise value


def _concurrent(raise_on_first_error, with_args):
    def run(s, q):
        from turbocql.concurrent import execute_concurrent, execute_concurrent_with_args

        if with_args:
            results = execute_concurrent_with_args(s, q, [()], raise_on_first_error=raise_on_first_error)
        else:
            results = execute_concurrent(s, [(q, ())], raise_on_first_error=raise_on_first_error)
        (success, value) = results[0]
        if not success:
            raise value

    return run


def _write_pipeline(with_handler):
    def run(s, q):
        from turbocql.concurrent import WritePipeline

        if not with_handler:
            with WritePipeline(s, timeout=TIMEOUT) as pipeline:
                pipeline.execute(q, ())
            return
        failures = []
        with WritePipeline(s, error_handler=failures.append, timeout=TIMEOUT) as pipeline:
            pipeline.execute(q, ())
        if failures:
            raise failures[0]

    return run


def _read_pipeline(with_handler):
    def run(s, q):
        from turbocql.concurrent import ReadPipeline

        failures = []
        handler = failures.append if with_handler else None
        with ReadPipeline(s, error_handler=handler, timeout=TIMEOUT) as pipeline:
            pipeline.execute(q, ())
            results = list(pipeline.results())
        if failures:
            raise failures[0]
        assert len(results) == 1

    return run


def _aio(s, q):
    from turbocql.aio import Session as AioSession

    async def run():
        await AioSession(s).execute(q, timeout=TIMEOUT)

    asyncio.run(run())


def _prepared(s, q):
    s.execute(s.prepare(q), timeout=TIMEOUT)


PATHS = {
    "execute": _execute,
    "execute_async.result": _async_result,
    "execute_async.errback": _async_errback,
    "execute_concurrent.raise": _concurrent(True, False),
    "execute_concurrent.collect": _concurrent(False, False),
    "execute_concurrent_with_args.raise": _concurrent(True, True),
    "execute_concurrent_with_args.collect": _concurrent(False, True),
    "WritePipeline": _write_pipeline(False),
    "WritePipeline.error_handler": _write_pipeline(True),
    "ReadPipeline": _read_pipeline(False),
    "ReadPipeline.error_handler": _read_pipeline(True),
    "aio": _aio,
    "prepared": _prepared,
}


def raised(path, session, query):
    """The exception the path raised (the test fails if it raised none)."""
    try:
        path(session, query)
    except Exception as exc:
        return exc
    raise AssertionError("no exception raised")
