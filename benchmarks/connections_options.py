"""The options both connections runners take (``run_connections.py``, ``run_cql_connections.py``),
what they come to (``--quick`` filling what was not given) and the meta recorded of them.
"""

from __future__ import annotations

import argparse
import shutil
import sys

from benchmarks import peers
from benchmarks.common import add_out_argument
from benchmarks.connections_figures import parse_counts
from benchmarks.connections_host import (
    PORT_RANGE_SYSCTL,
    TUNED_PORT_RANGE,
    TUNED_TW_BUCKETS,
    TW_BUCKETS_SYSCTL,
    _sysctl,
    parse_port_range,
    parse_tw_buckets,
)

DEFAULT_CONNECTIONS, QUICK_CONNECTIONS = "10,100,1000,10000", "10,100,1000"
DEFAULT_SECONDS, QUICK_SECONDS = 10.0, 3.0
DEFAULT_REPEAT, QUICK_REPEAT = 3, 1


def add_run_arguments(ap: argparse.ArgumentParser, model_keys, server: str, binaries: str, stem: str) -> None:
    """The options both connections runners take (this one and run_cql_connections.py):
    counts, run length, models, pinning, the server's threads, the build, the system-call
    sample, the kernel settings, the peers' interpreters, a client run's time limit and the
    JSON (``--out``, default name from ``stem``); ``server`` and ``binaries`` name what is
    pinned and built."""
    add_out_argument(ap, stem)
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="per client run, seconds (default: warm-up + seconds + time to open the N connections)",
    )
    ap.add_argument(
        "--connections",
        default=None,
        help=f"connection counts, comma-separated (default {DEFAULT_CONNECTIONS}; --quick {QUICK_CONNECTIONS})",
    )
    ap.add_argument(
        "--seconds", type=float, default=None, help=f"per run (default {DEFAULT_SECONDS:g}; --quick {QUICK_SECONDS:g})"
    )
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before each run's window (default 1)")
    ap.add_argument(
        "--repeat", type=int, default=None, help=f"runs each (default {DEFAULT_REPEAT}; --quick {QUICK_REPEAT})"
    )
    ap.add_argument(
        "--quick", action="store_true", help=f"counts {QUICK_CONNECTIONS}, {QUICK_SECONDS:g} s, {QUICK_REPEAT} run"
    )
    ap.add_argument("--models", default=",".join(model_keys), help=f"of {', '.join(model_keys)} (default all)")
    ap.add_argument("--pin-client", metavar="CPU", default="0", help="taskset -c CPU for every client (default 0)")
    ap.add_argument("--pin-server", metavar="CPU", default="1", help=f"taskset -c CPU for {server} (default 1)")
    ap.add_argument("--no-pin", action="store_true", help="pin neither")
    ap.add_argument("--server-threads", type=int, default=1, help=f"{server}'s worker threads (default 1)")
    ap.add_argument("--build", action="store_true", help=f"cargo build {binaries} first")
    ap.add_argument(
        "--strace-connections", type=int, default=1000, help="the system-call sample's connections (default 1000)"
    )
    ap.add_argument("--strace-seconds", type=float, default=2.0, help="the system-call sample's seconds (default 2)")
    ap.add_argument("--no-strace", action="store_true", help="no system-call sample")
    ap.add_argument(
        "--tune-sysctls",
        action="store_true",
        help=f"for the runs' duration, widen {PORT_RANGE_SYSCTL} to {TUNED_PORT_RANGE} and cap "
        f"{TW_BUCKETS_SYSCTL} at {TUNED_TW_BUCKETS}, both put back after (needs root; the settings of the "
        "committed tables' runs). Without it (or the two options below) the machine's settings are kept, "
        "and each run's pool fill time (pool_fill_s) shows what they cost",
    )
    ap.add_argument(
        "--local-port-range",
        default=None,
        metavar="LO-HI|keep",
        help=f"widen {PORT_RANGE_SYSCTL} to cover LO-HI during the runs, restored after (needs root, else it "
        f"is kept and the meta says why); default: keep it (--tune-sysctls: {TUNED_PORT_RANGE})",
    )
    ap.add_argument(
        "--max-tw-buckets",
        default=None,
        metavar="N|keep",
        help=f"cap {TW_BUCKETS_SYSCTL} (sockets kept in TIME_WAIT) at N during the runs, restored after "
        f"(needs root); default: keep it (--tune-sysctls: {TUNED_TW_BUCKETS})",
    )
    ap.add_argument(
        "--syscall-tool",
        choices=("strace", "perf"),
        default="strace",
        help="count the sample's system calls with strace -c -f (default; it stops the client at every call) "
        "or perf stat on the syscalls tracepoints (barely slows it; needs perf and tracepoint access)",
    )
    peers.add_arguments(ap)


def run_settings(ap: argparse.ArgumentParser, a: argparse.Namespace, parse_models):
    """(counts, models, seconds, repeat, (client CPU, server CPU)) from the options of
    :func:`add_run_arguments`, ``--quick`` filling what was not given; a bad value is
    ``ap.error``; no pinning without taskset."""
    try:
        counts = parse_counts(a.connections or (QUICK_CONNECTIONS if a.quick else DEFAULT_CONNECTIONS))
        models = parse_models(a.models)
        tuned = getattr(a, "tune_sysctls", False)
        a.port_range = parse_port_range(a.local_port_range or (TUNED_PORT_RANGE if tuned else "keep"))
        a.tw_buckets = parse_tw_buckets(a.max_tw_buckets or (TUNED_TW_BUCKETS if tuned else "keep"))
    except ValueError as e:
        ap.error(str(e))
    seconds = a.seconds if a.seconds is not None else (QUICK_SECONDS if a.quick else DEFAULT_SECONDS)
    repeat = a.repeat or (QUICK_REPEAT if a.quick else DEFAULT_REPEAT)
    if seconds <= 0 or repeat <= 0 or a.warmup < 0:
        ap.error("--seconds and --repeat must be positive, --warmup not negative")
    pin_client, pin_server = (None, None) if a.no_pin else (a.pin_client, a.pin_server)
    if (pin_client or pin_server) and not shutil.which("taskset"):
        print("taskset not found: clients and server are not pinned", file=sys.stderr)
        pin_client = pin_server = None
    return counts, models, seconds, repeat, (pin_client, pin_server)


def settings_meta(a: argparse.Namespace, counts, seconds, repeat, models, pins, sysctls_set: dict) -> dict:
    """The meta both runners record of their options (:func:`add_run_arguments`) and of the
    kernel: the run settings, the system-call sample, the sysctls that bear on many
    connections and what :func:`run_sysctls` set."""
    return {
        "connections": counts,
        "seconds": seconds,
        "warmup": a.warmup,
        "repeat": repeat,
        "models": models,
        "pin_client": pins[0],
        "pin_server": pins[1],
        "syscalls": None
        if a.no_strace
        else {"tool": a.syscall_tool, "connections": a.strace_connections, "seconds": a.strace_seconds},
        "sysctl": {
            k: _sysctl(k) for k in (PORT_RANGE_SYSCTL, "net.core.somaxconn", "net.ipv4.tcp_tw_reuse", TW_BUCKETS_SYSCTL)
        },
        "sysctls_set": sysctls_set,
    }
