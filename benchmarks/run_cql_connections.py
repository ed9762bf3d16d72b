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
``run_connections.py``, whose helpers this module uses. Prints the table (:func:`markdown`),
``--out`` writes the JSON. Method and deviations: ``benchmarks/README.md``.

Example::

    python3 benchmarks/run_cql_connections.py --connections 10,100 --seconds 2 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

HERE = __import__("pathlib").Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import peers  # noqa: E402
import run_connections as rc  # noqa: E402
from common import fmt_num, run_client, run_meta, write_json  # noqa: E402

DRIVERS, MODELS_PY = HERE / "clients" / "cql_drivers.py", HERE / "clients" / "cql_models.py"
RESPONDER_BIN = rc.BIN_DIR / "cql-responder"
RUST_BIN = rc.BIN_DIR / "cql-connections"
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
CLIENT_NAMES = {
    "turbocql": "turbocql",
    "classic": "classic driver",
    "python-cql": "Python, own CQL framing",
    "rust": "Rust `scylla` crate (limit)",
}


def parse_models(text: str) -> list[str]:
    out = []
    for m in (m.strip() for m in text.split(",")):
        if not m:
            continue
        if m not in MODELS:
            raise ValueError(f"unknown model {m!r} (known: {', '.join(MODELS)})")
        if m not in out:
            out.append(m)
    if not out:
        raise ValueError("no model")
    return out


def client_command(key: str, python: str | None, port: int, n: int, seconds: float, warmup: float) -> list[str]:
    client, model = MODELS[key]
    common = ["--connect", f"127.0.0.1:{port}", "--connections", str(n), "--seconds", f"{seconds:g}"]
    common += ["--warmup", f"{warmup:g}"]
    if client == "rust":
        return [str(RUST_BIN), *common]
    if client == "python-cql":
        return [str(python), str(MODELS_PY), "--model", model, *common, "--addresses", ",".join(rc.source_addresses(n))]
    return [str(python), str(DRIVERS), "--client", client, "--model", model, *common]


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
                f"p95: {k} {rc.fmt_ms(a['p95_us'])} ms = {a['p95_us'] / rust['p95_us']:.2f}× the Rust crate's "
                f"({rc.fmt_ms(rust['p95_us'])} ms); target ≤ 1.5×"
            )
    return out


def _latency_and_cpu(a: dict, n: int) -> list[str]:
    """p50/p95 (the mean, N / rate by Little's law, where the client gives no percentiles:
    execute_concurrent) and CPU µs per request (user %)."""
    if a.get("p95_us") is not None:
        lat = f"{rc.fmt_ms(a.get('p50_us'))}/{rc.fmt_ms(a['p95_us'])}"
    else:
        lat = f"mean {rc.fmt_ms(n / a['msgs_per_s'] * 1e6)}"
    cpu, share = cpu_us(a), a.get("user_share")
    return [lat, ("?" if cpu is None else f"{cpu:.1f}") + ("" if share is None else f" ({100 * share:.0f})")]


def markdown(results: list[dict], counts: list[int], seconds=None, warmup=None, repeat=None, pins=("0", "1")) -> str:
    """The CQL table: per (client, model) and connection count, msgs/s, p50/p95 ms, client CPU
    µs per request and user share; "FF" where the client could not open or hold the
    connections; then the system calls per request and the targets at the largest count."""
    agg = {(a["client"], a["model"], a["connections"]): a for a in rc.aggregate(results)}
    sys_rows = {(r["client"], r["model"]): r for r in results if r.get("kind") == "syscalls"}
    rows = [k for k in ROWS if any((*k, n) in agg for n in counts) or k in sys_rows]
    strace_n = next((r.get("connections") for r in sys_rows.values()), None)
    head = ["client", "model"]
    for n in counts:
        head += [f"{n:,}: msgs/s", f"{n:,}: p50/p95 ms", f"{n:,}: CPU µs/req (user %)"]
    if sys_rows:
        head.append(f"syscalls/req ({strace_n:,} conn.)" if strace_n else "syscalls/req")
    bits = ["one prepared one-row SELECT in flight per connection, against the Rust CQL responder"]
    if seconds is not None:
        bits.append(f"{seconds:g} s per run" + (f" after {warmup:g} s of warm-up" if warmup else ""))
    if repeat:
        bits.append(f"{repeat} run{'s' if repeat != 1 else ''} each (mean msgs/s ± half the min–max range)")
    if pins[0] is not None:
        bits.append(f"clients on CPU {pins[0]}")
    if pins[1] is not None:
        bits.append(f"the responder on CPU {pins[1]}")
    out = [
        "**Connections, CQL** (issue 17 §2): "
        + "; ".join(bits)
        + ". FF: the client could not open or hold the connections. The classic driver holds one "
        "connection per host, so it talks to N responder nodes; the others hold N connections to one.",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
    ]
    notes: list[str] = []
    for client, model in rows:
        cells = [CLIENT_NAMES.get(client, client), model]
        for n in counts:
            cells += rc.count_cells(agg.get((client, model, n)), f"{client} {model}", n, notes, _latency_and_cpu)
        if sys_rows:
            s = sys_rows.get((client, model))
            per = (s or {}).get("per_message")
            cells.append("" if s is None else f"{per['total']:.2f}" if per else "FF" if s.get("failed") else "n/a")
        out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if notes:
        out += [""] + [f"* {n}" for n in notes]
    made = [(f"{c} {m}", s["per_message"]) for (c, m), s in sys_rows.items() if s.get("per_message")]
    if made:
        tool = next((s.get("tool") for s in sys_rows.values() if s.get("tool")), "strace")
        how = "`strace -c -f`" if tool == "strace" else "`perf stat` on the syscalls tracepoints"
        out += ["", f"System calls per request ({how}, {strace_n:,} connections, a 0-second run subtracted):", ""]
        out += [f"* {m} = {rc.composition(per)}" for m, per in made]
    for (c, m), s in sys_rows.items():
        if not s.get("per_message"):
            out.append(f"* {c} {m}: no system-call figure ({s.get('failed') or s.get('unavailable') or 'no requests'})")
    top = max((n for n in counts if any(k[2] == n for k in agg)), default=None)
    if top is not None:
        got = targets({k: v for k, v in agg.items()}, top)
        if got:
            out += ["", f"Targets at {top:,} connections:", ""] + [f"* {t}" for t in got]
    return "\n".join(out)


# ------------------------------------------------------------------------------------ runs


def ensure_bins(build: bool) -> str | None:
    """Build the responder (turbocql-pingpong) and the Rust client (turbocql-rust-ref) when
    missing or with ``build``; the reason when they cannot be built."""
    for pkg, bins in (("turbocql-pingpong", [RESPONDER_BIN]), ("turbocql-rust-ref", [RUST_BIN])):
        if build or not all(b.exists() for b in bins):
            print(f"building {pkg} (cargo build --release -p {pkg})...", file=sys.stderr)
            try:
                r = subprocess.run(
                    ["cargo", "build", "--release", "-p", pkg], cwd=ROOT, stdout=sys.stderr, stderr=sys.stderr
                )
            except OSError as e:
                return f"cargo: {e}"
            if r.returncode != 0:
                return f"cargo build -p {pkg} failed (status {r.returncode})"
    missing = [p.name for p in (RESPONDER_BIN, RUST_BIN) if not p.exists()]
    return f"missing {', '.join(missing)}" if missing else None


def _line(r: dict) -> str:
    if "unavailable" in r or "failed" in r:
        return f"{'n/a' if 'unavailable' in r else 'FF'}: {r.get('unavailable') or r.get('failed')}"
    text = f"{fmt_num(r.get('msgs_per_s'))} req/s, p50 {rc.fmt_ms(r.get('p50_us'))} ms"
    text += f", p95 {rc.fmt_ms(r.get('p95_us'))} ms"
    if r.get("cpu_us_per_request") is not None:
        text += f", {r['cpu_us_per_request']:.1f} µs CPU/req"
    if r.get("errors"):
        text += f", {r['errors']} errors (first: {r.get('first_error')})"
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    rc.add_run_arguments(ap, MODELS, "the responder", "the responder and the Rust client")
    ap.add_argument("--out", nargs="?", const="", default=None, metavar="PATH", help="write raw JSON")
    ap.add_argument("--timeout", type=float, default=None, help="per client run, seconds")
    a = ap.parse_args(argv)
    counts, models, seconds, repeat, (pin_client, pin_server) = rc.run_settings(ap, a, parse_models)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    load_start = os.getloadavg()[0]
    why = ensure_bins(a.build)
    if why:
        log(f"connections (CQL): the responder or the Rust client is not available: {why}")
        return 2
    # Interpreters: turbocql and the Python models with --python; the classic driver there too
    # if it imports, else its peer venv; uvloop's models unavailable without uvloop.
    python = a.python
    unavailable: dict[str, str] = {}
    interpreters: dict[str, dict] = {"python": {"python": python}}
    classic_python: str | None = python
    if any(m.startswith("classic") for m in models):
        if a.classic_python:
            classic_python = a.classic_python
        elif not rc.has_module(python, "cassandra.cluster"):
            c = peers.from_args(a, ["classic"])["classic"]
            classic_python = c.python if c.available else None
            if classic_python is None:
                unavailable["classic"] = c.reason or "the classic driver is not installed"
        interpreters["classic"] = {"python": classic_python}
    if any(m.startswith("turbocql") for m in models) and not rc.has_module(python, "turbocql"):
        unavailable["turbocql"] = f"turbocql does not import in {python}"
    for m in ("uvloop-protocol", "uvloop-protocol-rows"):
        if m in models and not rc.has_module(python, "uvloop"):
            unavailable[m] = f"uvloop is not installed in {python}"

    def python_of(key: str) -> str | None:
        return classic_python if key.startswith("classic") else None if key == "rust" else python

    def reason(key: str) -> str | None:
        return unavailable.get(key) or unavailable.get(key.split("-")[0])

    results: list[dict] = []
    server: rc.Server | None = None

    def fresh_server(key: str, n: int) -> rc.Server:
        nonlocal server
        if server is not None:
            server.stop()
        server = rc.Server(RESPONDER_BIN, pin_server, a.server_threads, ("--nodes", str(responder_nodes(key, n))))
        server.start(timeout=60 + n / 100)
        return server

    with rc.run_sysctls(a.port_range, a.tw_buckets) as sysctls_set:
        try:
            log(f"connections (CQL): counts {counts}, {seconds:g} s + {a.warmup:g} s warm-up, {repeat} run(s) each")
            for n in counts:
                for rnd in range(repeat):
                    for key in models:
                        client, model = MODELS[key]
                        base = {"kind": "run", "client": client, "model": model, "connections": n, "round": rnd + 1}
                        if reason(key):
                            results.append({**base, "unavailable": reason(key)})
                            continue
                        try:
                            srv = fresh_server(key, n)
                        except RuntimeError as e:
                            results.append({**base, "failed": f"the responder: {e}"})
                            continue
                        cmd = client_command(key, python_of(key), srv.port, n, seconds, a.warmup)
                        r = run_client(cmd, pin_client, a.timeout or run_timeout(key, n, seconds, a.warmup))
                        r = {**base, **r} if "failed" in r else {**r, **base}
                        r["responder_nodes"] = responder_nodes(key, n)
                        results.append(r)
                        log(f"{n:,} connections, round {rnd + 1}/{repeat}: {client} {model}: {_line(r)}")
            if not a.no_strace and shutil.which(a.syscall_tool):
                n = a.strace_connections
                for key in models:
                    client, model = MODELS[key]
                    base = {"kind": "syscalls", "client": client, "model": model, "connections": n}
                    if reason(key):
                        results.append({**base, "unavailable": reason(key)})
                        continue

                    def command(secs: float, key: str = key) -> list[str]:
                        srv = fresh_server(key, n)
                        return client_command(key, python_of(key), srv.port, n, secs, 0.0)

                    s = rc.syscall_sample(command, n, a.strace_seconds, pin_client, a.syscall_tool)
                    results.append({**base, "seconds": a.strace_seconds, **s})
                    per = s.get("per_message")
                    log(
                        f"{a.syscall_tool}, {n:,} connections: {client} {model}: "
                        + (
                            f"{per['total']} calls/req = {rc.composition(per)}"
                            if per
                            else s.get("failed", "no requests")
                        )
                    )
        finally:
            if server is not None:
                server.stop()
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        None,
        f"Connections, CQL (issue 17 §2): one request in flight per connection over "
        f"{', '.join(f'{n:,}' for n in counts)} connections, {seconds:g} s per run after {a.warmup:g} s of warm-up, "
        f"{repeat} run(s) each, clients on CPU {pin_client}, the Rust CQL responder on CPU {pin_server}; loopback.",
        connections=counts,
        seconds=seconds,
        warmup=a.warmup,
        repeat=repeat,
        models=models,
        pin_client=pin_client,
        pin_server=pin_server,
        server={"binary": str(RESPONDER_BIN), "threads": a.server_threads},
        client_binary=str(RUST_BIN),
        interpreters=interpreters,
        unavailable=unavailable,
        syscalls=None
        if a.no_strace
        else {"tool": a.syscall_tool, "connections": a.strace_connections, "seconds": a.strace_seconds},
        sysctl={
            k: rc._sysctl(k)
            for k in (
                "net.ipv4.ip_local_port_range",
                "net.core.somaxconn",
                "net.ipv4.tcp_tw_reuse",
                "net.ipv4.tcp_max_tw_buckets",
            )
        },
        sysctls_set=sysctls_set,
    )
    print(markdown(results, counts, seconds, a.warmup, repeat, (pin_client, pin_server)))
    if a.out is not None:
        write_json(a.out, "connections-cql", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
