"""The connections scenario's CQL table (issue 17, section 2): document 002's question asked of
CQL drivers, requests per second against the number of connections each holds (scenario
``connections`` of ``turbocql bench`` runs it after the ping-pong table of
``run_connections.py``; no Cassandra involved).

The server is ``cql-responder`` (``benchmarks/pingpong``, Rust, tokio; built with ``cargo build
--release -p turbocql-pingpong`` when missing or with ``--build``), pinned to CPU 1: it answers
the drivers' real handshake and metadata queries and the benchmark's one-row SELECT from
prepared bytes (``benchmarks/pingpong/src/cql.rs``). It is started afresh for every client run
(its connection count then is that client's alone). Every client runs pinned to CPU 0, one at
a time, in its own process, holding N connections with one small request per connection in
flight (a prepared ``SELECT k, v FROM bench.kv WHERE k = ?``, one row back):

* ``clients/cql_drivers.py``: ``turbocql-concurrent``, ``turbocql-asyncio``,
  ``turbocql-futures`` (``Cluster(connections_per_host=N)``, one node; execute_concurrent,
  turbocql.aio, execute_async + callbacks), ``classic-default``, ``classic-asyncio`` (the
  cassandra-driver, one connection per host with protocol v4: the responder plays N nodes on
  127.0.0.x addresses, so the driver holds N connections; its default reactor and
  ``AsyncioConnection``; callback chains);
* ``clients/cql_models.py``: ``uvloop-protocol``, ``asyncio-protocol``, ``selectors``, and
  ``uvloop-protocol-rows``, ``selectors-rows`` binding a key and decoding the row in Python (the I/O
  models of the ping-pong table speaking CQL framing themselves: STARTUP, one PREPARE, then
  one EXECUTE outstanding per connection);
* ``cql-connections`` (``benchmarks/rust_ref``, a binary): ``rust``, the ``scylla`` crate with
  ``PoolSize::PerHost(N)``, one current-thread runtime: the limit row.

Counts, seconds, warm-up, repeats, pinning and the system-call sample (``strace -c -f`` or
``perf stat``, a timed and a 0-second run, the difference per request) as in
``run_connections.py``, through the helpers both share (``connections_figures``,
``connections_table``, ``connections_host``, ``connections_options``). Prints the table
(:func:`markdown`), ``--out`` writes the JSON. Method and deviations: ``benchmarks/README.md``.

``--server cassandra`` asks the same of a real node (issue 17 §2: "also the real Cassandra
node for the counts it can hold"; ``--host``/``--port``, default 127.0.0.1:9042, the node
``python -m turbocql localdb start`` runs): no responder; the runner creates ``bench.kv`` and
its one row on the node first (``clients/cql_drivers.py --setup``), pins the node's JVM (every
thread, ``taskset -a -p``) to the server CPU for the runs and puts its affinity back after,
and the drivers count the node's connections in ``system_views.clients`` (Cassandra 4.0+)
instead of ``responder.stats``. Before each run it waits until the node has closed the
previous client's connections (its sockets on the port, ``/proc/net/tcp``). The classic
driver holds one connection per host and a node is one host: its rows are unavailable above
one connection. No targets (the node, not the client, is the bottleneck); the node's CPU per
request instead (the JVM's, ``/proc/PID/stat``, over the run's busiest ``--seconds``).
``--out`` writes ``results/cql-connections-cassandra-<date>.json``.

Example::

    python3 benchmarks/run_cql_connections.py --connections 10,100 --seconds 2 --repeat 1
    python3 benchmarks/run_cql_connections.py --server cassandra --connections 10,100,1000 --seconds 5
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import find_server_pid, fmt_num, run_client, run_meta, write_json  # noqa: E402
from benchmarks.connections_figures import parse_names, source_addresses  # noqa: E402
from benchmarks.connections_host import Server, has_module, run_sysctls, syscall_sample  # noqa: E402
from benchmarks.connections_options import add_run_arguments, run_settings, settings_meta  # noqa: E402
from benchmarks.connections_table import composition, fmt_ms, kernel_note, table_lines, window_bits  # noqa: E402
from benchmarks.cql_node import CpuSampler, node_reachable, open_sockets, pinned_node, settle  # noqa: E402

DRIVERS, MODELS_PY = HERE / "clients" / "cql_drivers.py", HERE / "clients" / "cql_models.py"
# The test command (scripts/test.sh) builds these two in a debug build of its own and names
# its directory here; a benchmark run takes the release build.
BIN_DIR = Path(os.environ.get("TURBOCQL_RUST_BIN_DIR") or ROOT / "target" / "release")
RESPONDER_BIN = BIN_DIR / "cql-responder"
RUST_BIN = BIN_DIR / "cql-connections"
# --models key -> (client, model) of the table, in table order.
MODELS = {
    "turbocql-concurrent": ("turbocql", "execute_concurrent"),
    "turbocql-asyncio": ("turbocql", "asyncio"),
    "turbocql-futures": ("turbocql", "futures"),
    "classic-default": ("classic", "default"),
    "classic-asyncio": ("classic", "asyncio"),
    "uvloop-protocol": ("python-cql", "uvloop-protocol"),
    "asyncio-protocol": ("python-cql", "asyncio-protocol"),
    "selectors": ("python-cql", "selectors"),
    "uvloop-protocol-rows": ("python-cql", "uvloop-protocol-rows"),
    "selectors-rows": ("python-cql", "selectors-rows"),
    "rust": ("rust", "scylla"),
}
ROWS = tuple(MODELS.values())
SERVERS = ("responder", "cassandra")
# The query the drivers poll until the server counts N + 1 open connections (the pool and the
# control connection): one row of one bigint. system_views.clients (Cassandra 4.0+) lists
# every client connection of the node, the one asking included, so it counts the control
# connection as responder.stats does.
COUNT_QUERIES = {
    "responder": "SELECT connections FROM responder.stats",
    "cassandra": "SELECT COUNT(*) FROM system_views.clients",
}
DEFAULT_NODE = ("127.0.0.1", 9042)  # the project's local node (turbocql localdb)
OUT_STEMS = {"responder": "connections-cql", "cassandra": "cql-connections-cassandra"}
# The report's scenario key of each server's table (report_connections.py).
SCENARIOS = {"responder": "connections_cql", "cassandra": "connections_cql_cassandra"}
CLASSIC_ONE_CONNECTION = (
    "the classic driver holds one connection per host with protocol v3+ (its "
    "set_core_connections_per_host raises UnsupportedOperation) and a Cassandra node is one host"
)
CLIENT_NAMES = {
    "turbocql": "turbocql",
    "classic": "classic driver",
    "python-cql": "Python, own CQL framing",
    "rust": "Rust `scylla` crate (limit)",
}


def parse_models(text: str) -> list[str]:
    return parse_names(text, MODELS)


def client_command(
    key: str,
    python: str | None,
    port: int,
    n: int,
    seconds: float,
    warmup: float,
    host: str = "127.0.0.1",
    server: str = "responder",
) -> list[str]:
    """The client's command line; the drivers and the Rust client poll ``server``'s count
    query (the Python models open their sockets one by one and need no count)."""
    client, model = MODELS[key]
    common = ["--connect", f"{host}:{port}", "--connections", str(n), "--seconds", f"{seconds:g}"]
    common += ["--warmup", f"{warmup:g}"]
    if client == "python-cql":
        return [str(python), str(MODELS_PY), "--model", model, *common, "--addresses", ",".join(source_addresses(n))]
    common += ["--count-query", COUNT_QUERIES[server]]
    if client == "rust":
        return [str(RUST_BIN), *common]
    return [str(python), str(DRIVERS), "--client", client, "--model", model, *common]


def server_unavailable(key: str, n: int, server: str) -> str | None:
    """Why ``key`` cannot hold ``n`` connections to ``server``, or None: the classic driver,
    one connection per host, holds N against the responder playing N nodes, but a real node
    is one host, so only N = 1 (the responder's workaround would not be that node)."""
    if server == "cassandra" and MODELS[key][0] == "classic" and n > 1:
        return f"{CLASSIC_ONE_CONNECTION}: it cannot hold more than one connection to it"
    return None


# What the drivers' clients say when their pool did not fill (clients/cql_drivers.py, PoolWait).
POOL_NOT_OPEN = "connections (pool + control) open"


def responder_nodes(key: str, n: int) -> int:
    """The nodes the responder plays for a run: N for the classic driver (one connection per
    host), else one."""
    return n if MODELS[key][0] == "classic" else 1


def run_timeout(key: str, n: int, seconds: float, warmup: float) -> float:
    # The drivers connect, fill their pools and wait for the responder's count first.
    return warmup + seconds + 90 + n / 25


# ------------------------------------------------------------------------------------ the table


def cpu_us(a: dict) -> float | None:
    """Client CPU µs per request: CPU seconds per second / requests per second."""
    if a.get("cpu_cores") is None or not a.get("msgs_per_s"):
        return None
    return a["cpu_cores"] / a["msgs_per_s"] * 1e6


def targets(agg: dict, n: int) -> list[str]:
    """The issue's targets at ``n`` connections, as measured: turbocql's best rate against the
    best pure-Python model's (≥ 2×), its CPU per request and p95 against the Rust crate's
    (within 1.5×)."""
    got = {k: agg.get((*v, n)) for k, v in MODELS.items()}
    got = {k: a for k, a in got.items() if a and a.get("msgs_per_s")}
    turbo = [(k, a) for k, a in got.items() if k.startswith("turbocql")]
    python = [(k, a) for k, a in got.items() if MODELS[k][0] == "python-cql"]
    rust = got.get("rust")
    out = []
    if turbo and python:
        tk, ta = max(turbo, key=lambda x: x[1]["msgs_per_s"])
        framing = [(k, a) for k, a in python if not k.endswith("-rows")]
        rows = [(k, a) for k, a in python if k.endswith("-rows")]
        for group, what in ((framing, "pure-Python model"), (rows, "pure-Python model binding and decoding")):
            if not group:
                continue
            pk, pa = max(group, key=lambda x: x[1]["msgs_per_s"])
            out.append(
                f"rate: {tk} {fmt_num(ta['msgs_per_s'])}/s = {ta['msgs_per_s'] / pa['msgs_per_s']:.2f}× the best "
                f"{what} ({pk}, {fmt_num(pa['msgs_per_s'])}/s); target ≥ 2×"
            )
    if turbo and rust and cpu_us(rust):
        k, a = min(((k, a) for k, a in turbo if cpu_us(a)), key=lambda x: cpu_us(x[1]), default=(None, None))
        if a:
            out.append(
                f"CPU per request: {k} {cpu_us(a):.1f} µs = {cpu_us(a) / cpu_us(rust):.2f}× the Rust crate's "
                f"({cpu_us(rust):.1f} µs); target ≤ 1.5×"
            )
    if turbo and rust and rust.get("p95_us"):
        with_p95 = [(k, a) for k, a in turbo if a.get("p95_us")]
        if with_p95:
            k, a = min(with_p95, key=lambda x: x[1]["p95_us"])
            out.append(
                f"p95: {k} {fmt_ms(a['p95_us'])} ms = {a['p95_us'] / rust['p95_us']:.2f}× the Rust crate's "
                f"({fmt_ms(rust['p95_us'])} ms); target ≤ 1.5×"
            )
    return out


def _latency_and_cpu(a: dict, n: int) -> list[str]:
    """p50/p95 (the mean, N / rate by Little's law, where the client gives no percentiles:
    execute_concurrent) and CPU µs per request (user %)."""
    if a.get("p95_us") is not None:
        lat = f"{fmt_ms(a.get('p50_us'))}/{fmt_ms(a['p95_us'])}"
    else:
        lat = f"mean {fmt_ms(n / a['msgs_per_s'] * 1e6)}"
    cpu, share = cpu_us(a), a.get("user_share")
    return [lat, ("?" if cpu is None else f"{cpu:.1f}") + ("" if share is None else f" ({100 * share:.0f})")]


def node_cpu_notes(results: list[dict], counts: list[int]) -> list[str]:
    """Per (client, model), the node's CPU µs per request at each count (median of the runs;
    ``node_cpu_us_per_request``: the JVM's CPU over the run's busiest window / the rate)."""
    got: dict[tuple, dict[int, list[float]]] = {}
    for r in results:
        if r.get("kind", "run") == "run" and r.get("node_cpu_us_per_request") is not None:
            got.setdefault((r["client"], r["model"]), {}).setdefault(r["connections"], []).append(
                r["node_cpu_us_per_request"]
            )
    out = []
    for key in [k for k in ROWS if k in got] + [k for k in got if k not in ROWS]:
        cells = [f"{n:,}: {statistics.median(got[key][n]):.1f} µs" for n in counts if n in got[key]]
        out.append(f"{CLIENT_NAMES.get(key[0], key[0])} {key[1]}: " + ", ".join(cells))
    return out


def fill_notes(results: list[dict], counts: list[int], kernel: dict | None) -> list[str]:
    """What opening the pools cost: per row, the median seconds until the server counted every
    connection (``pool_fill_s``) at the largest count each row reached, and the kernel
    settings the runs had (``kernel``: the meta's ``sysctl`` and ``sysctls_set``), which set
    that cost for thousands of connections."""
    fills: dict = {}
    for r in results:
        if r.get("kind", "run") == "run" and r.get("pool_fill_s") is not None:
            fills.setdefault((r["client"], r["model"]), {}).setdefault(r["connections"], []).append(r["pool_fill_s"])
    if not fills:
        return []
    cells = []
    for (client, model), by_n in fills.items():
        n = max(by_n)
        hosts = " (one connection per host)" if client == "classic" else ""
        cells.append(f"{CLIENT_NAMES.get(client, client)} {model}{hosts} {statistics.median(by_n[n]):.1f} s at {n:,}")
    out = ["", "Pool fill (until the server counted every connection, median): " + "; ".join(cells) + "."]
    return out + kernel_note(kernel)


def markdown(
    results: list[dict],
    counts: list[int],
    seconds=None,
    warmup=None,
    repeat=None,
    pins=("0", "1"),
    server: dict | None = None,
    kernel: dict | None = None,
) -> str:
    """The CQL table: per (client, model) and connection count, msgs/s, p50/p95 ms, client CPU
    µs per request and user share; "FF" where the client could not open or hold the
    connections; then the system calls per request and the targets at the largest count.
    With ``server`` a Cassandra node's meta (``{"kind": "cassandra", ...}``), the real-node
    table: its own title, no targets, the node's CPU per request instead."""
    cassandra = (server or {}).get("kind") == "cassandra"
    if cassandra:
        version = server.get("release_version")
        against = f"a Cassandra {version} node" if version else "a Cassandra node"
    else:
        against = "the Rust CQL responder"
    bits = [f"one prepared one-row SELECT in flight per connection, against {against}"]
    bits += window_bits(seconds, warmup, repeat)
    if pins[0] is not None:
        bits.append(f"clients on CPU {pins[0]}")
    if pins[1] is not None:
        bits.append(f"{'the node (every JVM thread)' if cassandra else 'the responder'} on CPU {pins[1]}")
    if cassandra:
        title = "**Connections over CQL, a real Cassandra node** (issue 17 §2)"
        classic = (
            "n/a: not available. The classic driver holds one connection per host and a node is one "
            "host, so it runs at 1 connection only; the others hold N connections to the node."
        )
    else:
        title = "**Connections, CQL** (issue 17 §2)"
        classic = (
            "The classic driver holds one connection per host, so it talks to N responder nodes; the "
            "others hold N connections to one."
        )
    # Not like for like, said in the row itself: the classic driver's N connections are one
    # to each of N hosts (its protocol-v4 pool), the others' N to one host.
    names = dict(CLIENT_NAMES)
    names["classic"] = (
        "classic driver (one host: its one connection)"
        if cassandra
        else "classic driver (1 connection to each of N hosts)"
    )
    lines, after, agg = table_lines(
        results, counts, ROWS, names, "CPU µs/req (user %)", "req", _latency_and_cpu, lambda c, m: f"{c} {m}"
    )
    out = [f"{title}: " + "; ".join(bits) + ". FF: the client could not open or hold the connections. " + classic, ""]
    out += lines + after
    out += fill_notes(results, counts, kernel)
    top = max((n for n in counts if any(k[2] == n for k in agg)), default=None)
    if cassandra:
        # The issue's targets compare clients through a server that is not the bottleneck;
        # here the node is (its CPU per request is several times any client's).
        out += [
            "",
            "No targets: the node, not the client, is the bottleneck here (the targets are computed "
            "against the responder). The node's CPU per request (its JVM's user + system CPU over the "
            "run's busiest stretch of the window's length, /proc/PID/stat, per request of the client):",
        ]
        out += [""] + [f"* {line}" for line in node_cpu_notes(results, counts) or ["not measured"]]
    elif top is not None:
        got = targets({k: v for k, v in agg.items()}, top)
        if got:
            out += ["", f"Targets at {top:,} connections:", ""] + [f"* {t}" for t in got]
    return "\n".join(out)


# ------------------------------------------------------------------------------------ a real node


def setup_node(python: str, host: str, port: int) -> dict:
    """``clients/cql_drivers.py --setup`` with turbocql: bench.kv and its row on the node, its
    release version; ``{"failed": ...}`` when it cannot."""
    cmd = [python, str(DRIVERS), "--setup", "--connect", f"{host}:{port}", "--count-query", COUNT_QUERIES["cassandra"]]
    return run_client(cmd, None, 180)


# ------------------------------------------------------------------------------------ runs


def ensure_bins(build: bool, responder: bool = True) -> str | None:
    """Build the responder (turbocql-pingpong, unless not ``responder``) and the Rust client
    (turbocql-rust-ref) when missing or with ``build``; the reason when they cannot be built."""
    wanted = ((("turbocql-pingpong", RESPONDER_BIN),) if responder else ()) + (("turbocql-rust-ref", RUST_BIN),)
    if BIN_DIR != ROOT / "target" / "release":  # built by whoever named the directory
        missing = [b.name for _, b in wanted if not b.exists()]
        return f"missing {', '.join(missing)} in TURBOCQL_RUST_BIN_DIR={BIN_DIR}" if missing else None
    for pkg, binary in wanted:
        if build or not binary.exists():
            print(f"building {pkg} (cargo build --release -p {pkg})...", file=sys.stderr)
            try:
                r = subprocess.run(
                    ["cargo", "build", "--release", "-p", pkg], cwd=ROOT, stdout=sys.stderr, stderr=sys.stderr
                )
            except OSError as e:
                return f"cargo: {e}"
            if r.returncode != 0:
                return f"cargo build -p {pkg} failed (status {r.returncode})"
    missing = [b.name for _, b in wanted if not b.exists()]
    return f"missing {', '.join(missing)}" if missing else None


def _line(r: dict) -> str:
    if "unavailable" in r or "failed" in r:
        return f"{'n/a' if 'unavailable' in r else 'FF'}: {r.get('unavailable') or r.get('failed')}"
    text = f"{fmt_num(r.get('msgs_per_s'))} req/s, p50 {fmt_ms(r.get('p50_us'))} ms"
    text += f", p95 {fmt_ms(r.get('p95_us'))} ms"
    if r.get("cpu_us_per_request") is not None:
        text += f", {r['cpu_us_per_request']:.1f} µs CPU/req"
    if r.get("errors"):
        text += f", {r['errors']} errors (first: {r.get('first_error')})"
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    server_s = "the server (the responder, or the node's JVM)"
    add_run_arguments(ap, MODELS, server_s, "the Rust binaries", OUT_STEMS["responder"])
    ap.add_argument(
        "--server",
        choices=SERVERS,
        default="responder",
        help="the Rust CQL responder, started for every run (default), or a running Cassandra node (--host, "
        f"--port; --out's default path then results/{OUT_STEMS['cassandra']}-<date>.json)",
    )
    ap.add_argument("--host", default=DEFAULT_NODE[0], help=f"--server cassandra: the node (default {DEFAULT_NODE[0]})")
    ap.add_argument("--port", type=int, default=DEFAULT_NODE[1], help=f"its CQL port (default {DEFAULT_NODE[1]})")
    a = ap.parse_args(argv)
    counts, models, seconds, repeat, (pin_client, pin_server) = run_settings(ap, a, parse_models)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    load_start = os.getloadavg()[0]
    cassandra = a.server == "cassandra"
    unavailable: dict[str, str] = {}
    if not cassandra:
        why = ensure_bins(a.build)
        if why:
            log(f"connections (CQL): the responder or the Rust client is not available: {why}")
            return 2
    elif "rust" in models:  # no responder needed; without the Rust client only its row is missing
        why = ensure_bins(a.build, responder=False)
        if why:
            unavailable["rust"] = f"the Rust client: {why}"
    node: dict = {}
    # Client sockets the node holds before this runner touches it (another client's): the
    # level each run waits for the previous one's to fall back to.
    baseline = open_sockets(a.port) if cassandra else 0
    if cassandra:
        # The node answers or the run stops here, before anything is pinned or changed.
        why = node_reachable(a.host, a.port)
        if why is None:
            got = setup_node(a.python, a.host, a.port)
            why = got.get("failed")
        if why:
            log(
                f"connections (CQL): no usable Cassandra node at {a.host}:{a.port}: {why}\n"
                "  (the local one: .venv/bin/python -m turbocql localdb start --heap 1G)"
            )
            return 2
        pid = find_server_pid(a.port, a.host)
        node = {"kind": "cassandra", "host": a.host, "port": a.port, "pid": pid}
        node["release_version"] = got.get("release_version")
        log(f"connections (CQL): Cassandra {node['release_version']} at {a.host}:{a.port} (pid {pid}); bench.kv ready")
    # Interpreters: turbocql and the Python models with --python; the classic driver there too
    # if it imports, else its peer venv; uvloop's models unavailable without uvloop.
    python = a.python
    interpreters: dict[str, dict] = {"python": {"python": python}}
    classic_python: str | None = python
    if any(m.startswith("classic") for m in models):
        if a.classic_python:
            classic_python = a.classic_python
        elif not has_module(python, "cassandra.cluster"):
            c = peers.from_args(a, ["classic"])["classic"]
            classic_python = c.python if c.available else None
            if classic_python is None:
                unavailable["classic"] = c.reason or "the classic driver is not installed"
        interpreters["classic"] = {"python": classic_python}
    if any(m.startswith("turbocql") for m in models) and not has_module(python, "turbocql"):
        unavailable["turbocql"] = f"turbocql does not import in {python}"
    for m in ("uvloop-protocol", "uvloop-protocol-rows"):
        if m in models and not has_module(python, "uvloop"):
            unavailable[m] = f"uvloop is not installed in {python}"

    def python_of(key: str) -> str | None:
        return classic_python if key.startswith("classic") else None if key == "rust" else python

    def reason(key: str, n: int) -> str | None:
        return unavailable.get(key) or unavailable.get(key.split("-")[0]) or server_unavailable(key, n, a.server)

    results: list[dict] = []
    server: Server | None = None

    def target(key: str, n: int) -> tuple[str, int]:
        """Where the client connects: the node, once it has closed the previous client's
        connections, or a responder started afresh (N nodes for the classic driver)."""
        nonlocal server
        if cassandra:
            left, waited = settle(a.port, baseline, 60 + n / 100)
            if left > baseline:
                log(f"  the node still holds {left} client sockets (before the runs: {baseline}) after {waited} s")
            return a.host, a.port
        if server is not None:
            server.stop()
        server = Server(RESPONDER_BIN, pin_server, a.server_threads, ("--nodes", str(responder_nodes(key, n))))
        server.start(timeout=60 + n / 100)
        return "127.0.0.1", server.port

    def command(key: str, n: int, secs: float, warmup: float) -> list[str]:
        host, port = target(key, n)
        return client_command(key, python_of(key), port, n, secs, warmup, host, a.server)

    with contextlib.ExitStack() as stack:
        sysctls_set = stack.enter_context(run_sysctls(a.port_range, a.tw_buckets))
        if cassandra:
            node["pinning"] = stack.enter_context(pinned_node(node["pid"], pin_server))
        try:
            log(f"connections (CQL): counts {counts}, {seconds:g} s + {a.warmup:g} s warm-up, {repeat} run(s) each")
            warm = next((k for k in models if not reason(k, counts[0])), None)
            if cassandra and warm:
                # A node just started runs its read path interpreted until the JIT has compiled
                # it (the first client measured would meet a slower node): an untimed run first.
                secs = max(seconds, 5.0)
                log(f"warming the node up: {warm}, {counts[0]:,} connections, {secs:g} s (not recorded)")
                run_client(command(warm, counts[0], secs, 0.0), pin_client, run_timeout(warm, counts[0], secs, 0))
            # A client whose connections did not all open in a round is not run again at that
            # count: its next rounds would wait as long to fail the same way (the classic
            # driver at 10,000 hosts spends minutes connecting).
            could_not_open: set[tuple[str, int]] = set()
            for n in counts:
                for rnd in range(repeat):
                    for key in models:
                        client, model = MODELS[key]
                        base = {"kind": "run", "client": client, "model": model, "connections": n, "round": rnd + 1}
                        if reason(key, n):
                            results.append({**base, "unavailable": reason(key, n)})
                            continue
                        if (key, n) in could_not_open:
                            continue
                        try:
                            cmd = command(key, n, seconds, a.warmup)
                        except RuntimeError as e:
                            results.append({**base, "failed": f"the responder: {e}"})
                            continue
                        with CpuSampler(node.get("pid")) as node_cpu:
                            r = run_client(cmd, pin_client, a.timeout or run_timeout(key, n, seconds, a.warmup))
                        r = {**base, **r} if "failed" in r else {**r, **base}
                        if cassandra:
                            r.update(node_cpu.figures(seconds, r.get("msgs_per_s")))
                        else:
                            r["responder_nodes"] = responder_nodes(key, n)
                        results.append(r)
                        if POOL_NOT_OPEN in r.get("failed", ""):
                            could_not_open.add((key, n))
                        log(f"{n:,} connections, round {rnd + 1}/{repeat}: {client} {model}: {_line(r)}")
            if not a.no_strace and shutil.which(a.syscall_tool):
                n = a.strace_connections
                for key in models:
                    client, model = MODELS[key]
                    base = {"kind": "syscalls", "client": client, "model": model, "connections": n}
                    if reason(key, n):
                        results.append({**base, "unavailable": reason(key, n)})
                        continue
                    cmd_of = lambda secs, key=key: command(key, n, secs, 0.0)  # noqa: E731
                    s = syscall_sample(cmd_of, n, a.strace_seconds, pin_client, a.syscall_tool)
                    results.append({**base, "seconds": a.strace_seconds, **s})
                    per = s.get("per_message")
                    log(
                        f"{a.syscall_tool}, {n:,} connections: {client} {model}: "
                        + (f"{per['total']} calls/req = {composition(per)}" if per else s.get("failed", "no requests"))
                    )
        finally:
            if server is not None:
                server.stop()
    against = f"Cassandra {node.get('release_version')} at {a.host}:{a.port}" if cassandra else "the Rust CQL responder"
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        node.get("pid"),
        f"Connections, CQL (issue 17 §2): one request in flight per connection over "
        f"{', '.join(f'{n:,}' for n in counts)} connections, {seconds:g} s per run after {a.warmup:g} s of warm-up, "
        f"{repeat} run(s) each, clients on CPU {pin_client}, {against} on CPU {pin_server}; loopback.",
        scenario=SCENARIOS[a.server],
        **settings_meta(a, counts, seconds, repeat, models, (pin_client, pin_server), sysctls_set),
        server=node if cassandra else {"kind": "responder", "binary": str(RESPONDER_BIN), "threads": a.server_threads},
        count_query=COUNT_QUERIES[a.server],
        client_binary=str(RUST_BIN),
        interpreters=interpreters,
        unavailable=unavailable,
    )
    kernel = {"sysctl": meta.get("sysctl"), "sysctls_set": meta.get("sysctls_set")}
    print(markdown(results, counts, seconds, a.warmup, repeat, (pin_client, pin_server), meta["server"], kernel))
    if a.out is not None:
        write_json(a.out, OUT_STEMS[a.server], meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
