"""Document 002 on this machine: Python's I/O models against the number of TCP connections
(scenario ``connections`` of ``turbocql bench``; no Cassandra involved).

64-byte ping-pong, one message outstanding per connection, a fixed time per run. The runner
starts the echo server itself, ``pingpong-server`` (``benchmarks/pingpong``, a Rust tokio
stand-in for the document's C++ epoll server; built with ``cargo build --release -p
turbocql-pingpong`` when missing or with ``--build``), pinned to CPU 1 (``--pin-server``), and
runs every client pinned to CPU 0 (``--pin-client``: one core, as the document's Python
process), one at a time, each in its own process:

* ``clients/pingpong.py`` with ``--python`` (default: this interpreter): ``asyncio-streams``,
  ``asyncio-protocol``, ``asyncio-sock``, ``selectors``, ``threads``; and ``uvloop-streams``,
  ``uvloop-protocol``, ``uvloop-sock`` if uvloop imports there (else with the acsylla peer's
  venv, which has uvloop);
* ``clients/pingpong.py`` with the gevent peer's venv (``.venvs/gevent``, ``--gevent-python``):
  ``gevent`` (monkey-patched sockets, one greenlet per connection);
* ``pingpong-client`` (a binary): ``tokio``, the limit row (the document's ``cpp_epoll``), one
  current-thread runtime;

for every connection count of ``--connections`` (default 10, 100, 1,000, 10,000; ``--quick``
10, 100, 1,000), ``--seconds`` per run (default 10; ``--quick`` 3) after ``--warmup`` (1 s),
``--repeat`` runs each (default 3; ``--quick`` 1) in interleaved rounds. Connections are spread
over 127.0.0.x source addresses (:func:`source_addresses`, one per 4,000 connections). Both
sides raise ``RLIMIT_NOFILE`` to the hard limit (the server's is recorded in the meta).

System calls per message: for one sample per model at ``--strace-connections`` (1,000), the
client runs under ``strace -c -f`` twice, for ``--strace-seconds`` (2) and for 0 seconds
(connections opened and closed, no window); (calls of the first - calls of the second) /
messages of the first, in total and per system call. strace slows the client many times over,
so these runs' throughput is not reported; only the calls per message. It also stops each
thread at every call, so the ``threads`` model's other threads wait on the GIL meanwhile: its
futex count under strace (about 25 per message) is strace's own. ``--syscall-tool perf`` counts
with ``perf stat`` on the system calls' tracepoints instead (the document used ``perf stat``;
there ``threads`` shows about 0.25 futex per message at 1,000 connections).

Prints a Markdown table in the document's style (:func:`markdown`): one row per (client,
model), per connection count the mean msgs/s (± half the min-max range of the runs, in % of
the mean), the median p50 / p95 round trip in ms and the median share of user time in the
client's CPU time, "FF" where the model could not open or hold the connections (the reasons
under the table), then the system calls per message, with their make-up below. ``--out``
writes the JSON (``common.write_json``: every run and every strace sample).

Example::

    python3 benchmarks/run_connections.py --connections 10,100 --seconds 2 --repeat 1

This module holds the ping-pong runner (its models, binaries, table and ``main``); what both
connections runners share is in ``connections_figures`` (counts, aggregation, system calls
per message), ``connections_table`` (the Markdown), ``connections_host`` (the server, the
kernel settings, the system-call sample) and ``connections_options``, whose names this
module re-exports.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import fmt_num, run_client, run_meta, write_json  # noqa: E402
from benchmarks.connections_figures import (  # noqa: E402, F401 - names of run_connections, moved
    PER_ADDRESS,
    PERF_SYSCALLS,
    _ok,
    aggregate,
    parse_counts,
    parse_names,
    parse_perf_stat,
    parse_strace_summary,
    source_addresses,
    syscalls_per_message,
)
from benchmarks.connections_host import (  # noqa: E402, F401 - names of run_connections, moved
    PORT_RANGE_SYSCTL,
    TUNED_PORT_RANGE,
    TUNED_TW_BUCKETS,
    TW_BUCKETS_SYSCTL,
    Server,
    _sysctl,
    _sysctl_path,
    has_module,
    parse_port_range,
    parse_tw_buckets,
    perf_events,
    run_sysctl_values,
    run_sysctls,
    run_timeout,
    syscall_sample,
)
from benchmarks.connections_options import (  # noqa: E402, F401 - names of run_connections, moved
    DEFAULT_CONNECTIONS,
    DEFAULT_REPEAT,
    DEFAULT_SECONDS,
    QUICK_CONNECTIONS,
    QUICK_REPEAT,
    QUICK_SECONDS,
    add_run_arguments,
    run_settings,
    settings_meta,
)
from benchmarks.connections_table import (  # noqa: E402, F401 - names of run_connections, moved
    SPLICED_MARK,
    SPLICED_NOTE,
    UNIT_WORDS,
    composition,
    count_cells,
    fmt_ms,
    fmt_rate,
    kernel_note,
    table_lines,
    window_bits,
)

CLIENT = HERE / "clients" / "pingpong.py"
BIN_DIR = ROOT / "target" / "release"
SERVER_BIN, CLIENT_BIN = BIN_DIR / "pingpong-server", BIN_DIR / "pingpong-client"
PYTHON_MODELS = (
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
# (client, model) in table order; --models takes the model names, "rust" for the last row.
ROWS = tuple(("python", m) for m in PYTHON_MODELS) + (("rust", "tokio"),)
MODEL_KEYS = (*PYTHON_MODELS, "rust")
CLIENT_NAMES = {"python": "Python", "rust": "Rust (limit)"}


def row_key(model: str) -> tuple[str, str]:
    return ("rust", "tokio") if model in ("rust", "tokio") else ("python", model)


def parse_models(text: str) -> list[str]:
    return parse_names(text, MODEL_KEYS, {"tokio": "rust"})


def _latency_and_share(a: dict, n: int) -> list[str]:
    share = a.get("user_share")
    return [f"{fmt_ms(a.get('p50_us'))}/{fmt_ms(a.get('p95_us'))}", "" if share is None else f"{100 * share:.0f}"]


def markdown(
    results: list[dict],
    counts: list[int],
    seconds: float | None = None,
    warmup: float | None = None,
    repeat: int | None = None,
    pins: tuple[str | None, str | None] = ("0", "1"),
    kernel: dict | None = None,
) -> str:
    """The table in the document's style, then the FF reasons, the system calls' make-up and
    the kernel settings the runs had."""
    bits = ["64-byte ping-pong, one message outstanding per connection", *window_bits(seconds, warmup, repeat)]
    cpu_client, cpu_server = pins
    if cpu_client is not None:
        bits.append(f"clients on CPU {cpu_client}")
    if cpu_server is not None:
        bits.append(f"the Rust echo server on CPU {cpu_server}")
    lines, after, _ = table_lines(
        results, counts, ROWS, CLIENT_NAMES, "user %", "msg", _latency_and_share, lambda c, m: m
    )
    title = "**Connections** (document 002): " + "; ".join(bits)
    note = kernel_note(kernel)
    return "\n".join(
        [
            title + ". FF: the model could not open or hold the connections.",
            "",
            *lines,
            *after,
            *([""] + note if note else []),
        ]
    )


def ensure_bins(build: bool) -> str | None:
    """Build ``turbocql-pingpong`` (release) when a binary is missing or with ``build``; the
    reason when it cannot be built."""
    if build or not (SERVER_BIN.exists() and CLIENT_BIN.exists()):
        print(
            "building the ping-pong server and client (cargo build --release -p turbocql-pingpong)...", file=sys.stderr
        )
        try:
            r = subprocess.run(
                ["cargo", "build", "--release", "-p", "turbocql-pingpong"],
                cwd=ROOT,
                stdout=sys.stderr,
                stderr=sys.stderr,
            )
        except OSError as e:
            return f"cargo: {e}"
        if r.returncode != 0:
            return f"cargo build failed (status {r.returncode})"
    missing = [p.name for p in (SERVER_BIN, CLIENT_BIN) if not p.exists()]
    return f"missing {', '.join(missing)}" if missing else None


def client_command(model: str, python: str | None, port: int, n: int, seconds: float, warmup: float) -> list[str]:
    addrs = ",".join(source_addresses(n))
    if model == "rust":
        cmd = [str(CLIENT_BIN), "--connect", f"127.0.0.1:{port}"]
    else:
        cmd = [str(python), str(CLIENT), "--model", model, "--connect", f"127.0.0.1:{port}"]
    return cmd + ["--connections", str(n), "--seconds", f"{seconds:g}", "--warmup", f"{warmup:g}", "--addresses", addrs]


def _line(r: dict) -> str:
    if "unavailable" in r:
        return f"not available: {r['unavailable']}"
    if "failed" in r:
        return f"FF: {r['failed']}"
    text = f"{fmt_num(r.get('msgs_per_s'))} msgs/s, p50 {fmt_ms(r.get('p50_us'))} ms, p95 {fmt_ms(r.get('p95_us'))} ms"
    if r.get("user_share") is not None:
        text += f", user {100 * r['user_share']:.0f}%"
    if r.get("errors"):
        text += f", {r['errors']} errors (first: {r.get('first_error')})"
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(ap, MODEL_KEYS, "the echo server", "the ping-pong server and client", "connections")
    a = ap.parse_args(argv)
    counts, models, seconds, repeat, (pin_client, pin_server) = run_settings(ap, a, parse_models)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    load_start = os.getloadavg()[0]

    why = ensure_bins(a.build)
    if why:
        log(f"connections: the ping-pong binaries are not available: {why}")
        return 2
    # Interpreters: --python for the stdlib models and uvloop (else the acsylla peer's venv),
    # the gevent peer's venv for gevent.
    python = a.python
    interpreters: dict[str, dict] = {"python": {"python": python}}
    unavailable: dict[str, str] = {}
    uvloop_python: str | None = python
    if any(m.startswith("uvloop") for m in models) and not has_module(python, "uvloop"):
        acs = peers.resolve(
            ["acsylla"],
            turbocql_python=python,
            explicit={"acsylla": a.acsylla_python},
            venvs_dir=a.venvs_dir,
            install=not a.no_install,
        )["acsylla"]
        uvloop_python = acs.python if acs.available else None
        if uvloop_python is None:
            unavailable["uvloop"] = f"uvloop is not installed in {python}, and the acsylla peer: {acs.reason}"
        interpreters["uvloop"] = {"python": uvloop_python, "via": "acsylla peer venv", "reason": acs.reason}
    elif any(m.startswith("uvloop") for m in models):
        interpreters["uvloop"] = {"python": python, "via": "--python"}
    gevent_python: str | None = None
    if "gevent" in models:
        g = peers.from_args(a, ["gevent"])["gevent"]
        gevent_python = g.python if g.available else None
        if not g.available:
            unavailable["gevent"] = g.reason or "not available"
        interpreters["gevent"] = g.to_json()

    def python_of(model: str) -> str | None:
        if model == "rust":
            return None
        if model.startswith("uvloop"):
            return uvloop_python
        return gevent_python if model == "gevent" else python

    def reason_unavailable(model: str) -> str | None:
        if model.startswith("uvloop"):
            return unavailable.get("uvloop")
        return unavailable.get(model)

    with run_sysctls(a.port_range, a.tw_buckets) as sysctls_set:
        server = Server(SERVER_BIN, pin_server, a.server_threads)
        results: list[dict] = []
        try:
            server.start()
            log(
                f"connections: pingpong-server on 127.0.0.1:{server.port} (CPU {pin_server}, RLIMIT_NOFILE "
                f"{server.nofile()}); counts {counts}, {seconds:g} s + {a.warmup:g} s warm-up, {repeat} run(s) each"
            )
            for n in counts:
                for rnd in range(repeat):
                    for model in models:
                        client, mname = row_key(model)
                        base = {"kind": "run", "client": client, "model": mname, "connections": n, "round": rnd + 1}
                        why = reason_unavailable(model)
                        if why:
                            results.append({**base, "unavailable": why})
                            continue
                        server.ensure()
                        cmd = client_command(model, python_of(model), server.port, n, seconds, a.warmup)
                        r = run_client(cmd, pin_client, a.timeout or run_timeout(n, seconds, a.warmup))
                        r = {**base, **r} if "failed" in r else {**r, **base}
                        r["interpreter"] = python_of(model) or str(CLIENT_BIN)
                        results.append(r)
                        log(f"{n:,} connections, round {rnd + 1}/{repeat}: {mname}: {_line(r)}")
            if not a.no_strace and shutil.which(a.syscall_tool):
                n = a.strace_connections
                for model in models:
                    client, mname = row_key(model)
                    base = {"kind": "syscalls", "client": client, "model": mname, "connections": n}
                    why = reason_unavailable(model)
                    if why:
                        results.append({**base, "unavailable": why})
                        continue

                    def command(secs: float, model: str = model) -> list[str]:
                        server.ensure()
                        return client_command(model, python_of(model), server.port, n, secs, 0.0)

                    s = syscall_sample(command, n, a.strace_seconds, pin_client, a.syscall_tool)
                    results.append({**base, "seconds": a.strace_seconds, **s})
                    per = s.get("per_message")
                    log(
                        f"{a.syscall_tool}, {n:,} connections: {mname}: "
                        + (f"{per['total']} calls/msg = {composition(per)}" if per else s.get("failed", "no messages"))
                    )
            elif not a.no_strace:
                log(f"{a.syscall_tool} not found: no system calls per message")
        finally:
            server_nofile = server.nofile()
            server.stop()
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        None,
        f"Connections (document 002): 64-byte ping-pong over {', '.join(f'{n:,}' for n in counts)} connections, "
        f"{seconds:g} s per run after {a.warmup:g} s of warm-up, {repeat} run(s) each, clients on CPU {pin_client}, "
        f"the Rust echo server on CPU {pin_server}; loopback.",
        **settings_meta(a, counts, seconds, repeat, models, (pin_client, pin_server), sysctls_set),
        server={
            "binary": str(SERVER_BIN),
            "threads": a.server_threads,
            "rlimit_nofile": server_nofile,
            "starts": server.starts,
        },
        client_binary=str(CLIENT_BIN),
        interpreters=interpreters,
        unavailable=unavailable,
        per_address=PER_ADDRESS,
    )
    kernel = {"sysctl": meta.get("sysctl"), "sysctls_set": meta.get("sysctls_set")}
    print(markdown(results, counts, seconds, a.warmup, repeat, (pin_client, pin_server), kernel))
    if a.out is not None:
        write_json(a.out, "connections", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
