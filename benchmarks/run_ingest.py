"""Document 003 ("Big Data Demo") on Cassandra: is ingestion from Python IO-bound or CPU-bound?
Threads vs gevent vs asyncio, by pool size (scenario ``ingest`` of ``turbocql bench``).

The runner creates keyspace ``bench_ingest`` (tables ``geo`` with two SAI indexes,
``dictionary``, ``elements``) and loads the data dictionary, with turbocql, untimed; then, for
each pool size (``--pools``, default 15, 150, 350 as the document's runs; ``--quick`` 15, 150)
and each row below, runs ``clients/ingest.py`` in its own process (one after the other):

| driver | model | interpreter |
| --- | --- | --- |
| classic driver | ``threads``: N threads, blocking ``session.execute`` | ``.venvs/classic`` |
| classic driver | ``gevent``: ``GeventConnection``, N greenlets | ``.venvs/gevent`` (+ gevent) |
| turbocql | ``threads`` | ``--python`` |
| turbocql | ``asyncio``: ``turbocql.aio``, N coroutines | ``--python`` |
| acsylla | ``asyncio``: N coroutines | ``.venvs/acsylla`` |
| classic driver | ``bulk``: ``execute_concurrent*``, N in flight (phase 2 in windows) | ``.venvs/classic`` |
| turbocql | ``bulk``: ``execute_concurrent*``, N in flight | ``--python`` |

Each client inserts ``records / 25`` geo records (phase 1), then ``--records`` data-element
records (phase 2: per chunk of about 200, two SELECTs, then one INSERT per record); default
1,440,000 + 57,600, about 1.5 million rows as the document's run (``--quick``: 144,000 + 5,760).
What the client does exactly: ``clients/ingest.py``'s docstring.

Prints a Markdown table in the document's style, one row per (driver, model), per pool size
the geo and element records/s, the client's CPU µs per record and its CPU cores (client CPU
seconds per wall second) with the user / system split, then the answer to the document's
question computed from the figures (:func:`answer`). ``--out`` writes the JSON. A peer that
cannot be installed is shown as ``not available: <reason>``; a run with failed requests is
marked with its error count.

Example::

    python3 benchmarks/run_ingest.py --quick --pools 15 --records 20000
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.clients import ingest_data  # noqa: E402  (the ingestion client's schema and generated data)
from benchmarks.common import (  # noqa: E402
    add_run_arguments,
    check_pin_client,
    find_server_pid,
    fmt_num,
    require_server,
    run_client,
    run_meta,
    write_json,
)
from benchmarks.connections_table import SPLICED_MARK, SPLICED_NOTE  # noqa: E402

CLIENT = HERE / "clients" / "ingest.py"
# (driver, model) in table order, and the peer whose interpreter runs it.
ROWS = (
    ("classic", "threads"),
    ("classic", "gevent"),
    ("turbocql", "threads"),
    ("turbocql", "asyncio"),
    ("acsylla", "asyncio"),
    ("classic", "bulk"),
    ("turbocql", "bulk"),
)
CLIENTS = ("classic", "turbocql", "acsylla")
MODELS = ("threads", "gevent", "asyncio", "bulk")
DRIVER_NAMES = {"classic": "classic driver", "turbocql": "turbocql", "acsylla": "acsylla"}
DRIVER_ARG = {"classic": "cassandra", "turbocql": "turbocql", "acsylla": "acsylla"}
DEFAULT_POOLS, QUICK_POOLS = "15,150,350", "15,150"
DEFAULT_RECORDS, QUICK_RECORDS = 1_440_000, 144_000
CPU_BOUND = 0.85  # client CPU seconds per wall second from which a run counts as CPU-bound


def interpreter_of(client: str, model: str) -> str:
    """The peer (``peers.PEERS`` key, or ``turbocql``) whose interpreter runs a row."""
    return "gevent" if (client, model) == ("classic", "gevent") else client


def parse_list(text: str, known: tuple[str, ...], what: str) -> list[str]:
    out = []
    for x in (x.strip() for x in text.split(",")):
        if not x:
            continue
        if x not in known:
            raise ValueError(f"unknown {what} {x!r} (known: {', '.join(known)})")
        if x not in out:
            out.append(x)
    return out


def parse_pools(text: str) -> list[int]:
    pools = [int(x) for x in text.split(",") if x.strip()]
    if not pools or min(pools) <= 0:
        raise ValueError(f"--pools needs positive numbers, not {text!r}")
    return pools


# ------------------------------------------------------------------------------------ setup


def setup_schema(host: str, port: int) -> None:
    """Keyspace, tables, the two SAI indexes, and the dictionary (truncated and loaded again),
    through turbocql in this process (untimed)."""
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.concurrent import execute_concurrent_with_args
    from turbocql.policies import RoundRobinPolicy

    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=120)
    cluster = Cluster([host], port=port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        session = cluster.connect()
        for cql in ingest_data.SCHEMA:
            session.execute(cql)
        session.set_keyspace(ingest_data.KEYSPACE)
        session.execute("TRUNCATE dictionary")
        insert = session.prepare(ingest_data.INSERT_DICTIONARY)
        execute_concurrent_with_args(session, insert, ingest_data.dictionary_rows(), concurrency=64)
    finally:
        cluster.shutdown()


# ------------------------------------------------------------------------------------ table


def _cell_rate(r: dict, phase: str) -> str:
    p = r["phases"][phase]
    text = fmt_num(p.get("records_per_s"))
    if p.get("errors"):
        text += f" ({p['errors']:,} errors)"
    return text


def _share(r: dict) -> str:
    u, s = r.get("user_share"), r.get("system_share")
    if u is None or s is None:
        return ""
    return f"{r.get('cpu_cores', 0):.2f}, {100 * u:.0f}/{100 * s:.0f}"


def markdown(results: list[dict], pools: list[int], records: int, cpus: int | None = None) -> str:
    """The table (rows: driver and model; per pool size: geo records/s, element records/s,
    client CPU µs per record, client cores with the user/system split of its CPU), then
    :func:`answer`."""
    by = {(r["client"], r["model"], r["pool"]): r for r in results}
    rows = [rm for rm in ROWS if any((rm[0], rm[1], p) in by for p in pools)]
    geo = ingest_data.geo_count(records)
    head = ["driver", "model"]
    for p in pools:
        head += [f"{p}: geo rec/s", f"{p}: elements rec/s", f"{p}: CPU µs/rec", f"{p}: cores, user/sys %"]
    out = [
        f"**Ingestion** (document 003): {geo:,} geo records (phase 1), then {records:,} element records "
        f"(phase 2), per pool size (threads, greenlets, coroutines, or requests in flight)",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
    ]
    for client, model in rows:
        cells = [DRIVER_NAMES.get(client, client), model]
        for p in pools:
            r = by.get((client, model, p))
            if r is None:
                cells += ["", "", "", ""]
            elif "unavailable" in r:
                cells += [f"not available: {r['unavailable']}".replace("|", "/"), "", "", ""]
            elif "failed" in r:
                cells += [f"failed: {r['failed']}".replace("|", "/"), "", "", ""]
            else:
                mark = f" {SPLICED_MARK}" if r.get("spliced") else ""
                cells += [
                    _cell_rate(r, "geo") + mark,
                    _cell_rate(r, "elements"),
                    fmt_num(r.get("cpu_us_per_record"), 1),
                    _share(r),
                ]
        out.append("| " + " | ".join(cells) + " |")
    if any(r.get("spliced") for r in results):
        out += ["", SPLICED_NOTE]
    out += ["", answer(results, cpus)]
    return "\n".join(out)


def _ok(r: dict) -> bool:
    return "phases" in r and "failed" not in r and "unavailable" not in r


def _range(xs: list[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}–{hi:.2f}"


def answer(results: list[dict], cpus: int | None = None) -> str:
    """The document's question answered from the figures: per driver, whether the client was
    CPU-bound (its CPU seconds per wall second, over both phases, at least ``CPU_BOUND``) and
    which model was fastest (element records/s, the bulk of the rows; the geo phase's fastest
    too when it differs); then the fastest run overall. Pure: unit-tested."""
    ok = [r for r in results if _ok(r)]
    if not ok:
        return "**Answer:** no run succeeded."
    lines = ["**Answer** (client CPU-bound = its CPU seconds per wall second ≥ %.2f):" % CPU_BOUND, ""]
    for client in [c for c in CLIENTS if any(r["client"] == c for r in ok)] + sorted(
        {r["client"] for r in ok} - set(CLIENTS)
    ):
        runs = [r for r in ok if r["client"] == client]
        cores = [r["cpu_cores"] for r in runs if r.get("cpu_cores") is not None]
        bound = [c for c in cores if c >= CPU_BOUND]
        if cores and len(bound) == len(cores):
            verdict = f"CPU-bound in every run ({_range(cores)} cores)"
        elif bound:
            verdict = f"CPU-bound in {len(bound)} of {len(cores)} runs ({_range(cores)} cores)"
        else:
            verdict = (
                f"not CPU-bound ({_range(cores)} cores): it waited part of the time, on responses or for a CPU"
                if cores
                else "no CPU figures"
            )
        server = [r["server_cores"] for r in runs if r.get("server_cores") is not None]
        if server:
            verdict += f"; the server used {_range(server)} cores"
        if cpus and server:
            full = sum(
                1
                for r in runs
                if r.get("server_cores") is not None and r["cpu_cores"] + r["server_cores"] >= 0.9 * cpus
            )
            if full:
                verdict += f", client + server filled the machine's {cpus} CPUs in {full} of {len(runs)} runs"
        best = max(runs, key=lambda r: r["phases"]["elements"].get("records_per_s") or 0)
        text = (
            f"- **{DRIVER_NAMES.get(client, client)}**: {verdict}. Fastest model: **{best['model']}** "
            f"(pool {best['pool']}: {fmt_num(best['phases']['elements']['records_per_s'])} element records/s, "
            f"{fmt_num(best['phases']['geo']['records_per_s'])} geo records/s)"
        )
        best_geo = max(runs, key=lambda r: r["phases"]["geo"].get("records_per_s") or 0)
        if best_geo["model"] != best["model"]:
            text += (
                f"; for the geo inserts {best_geo['model']} "
                f"(pool {best_geo['pool']}: {fmt_num(best_geo['phases']['geo']['records_per_s'])}/s)"
            )
        if any(r.get("errors") for r in runs):
            text += f"; {sum(r.get('errors') or 0 for r in runs):,} failed requests in its runs"
        lines.append(text + ".")
    top = max(ok, key=lambda r: r["phases"]["elements"].get("records_per_s") or 0)
    lines += [
        "",
        f"Fastest run: {DRIVER_NAMES.get(top['client'], top['client'])} {top['model']} at pool {top['pool']}, "
        f"{fmt_num(top['phases']['elements']['records_per_s'])} element records/s.",
    ]
    return "\n".join(lines)


def _line(r: dict) -> str:
    if "unavailable" in r:
        return f"not available: {r['unavailable']}"
    if "failed" in r:
        return f"failed: {r['failed']}"
    g, e = r["phases"]["geo"], r["phases"]["elements"]
    text = (
        f"geo {fmt_num(g['records_per_s'])}/s, elements {fmt_num(e['records_per_s'])}/s, "
        f"{fmt_num(r.get('cpu_us_per_record'), 1)} µs CPU/record, {r.get('cpu_cores') or 0:.2f} cores"
    )
    if r.get("errors"):
        text += f", {r['errors']} errors (first: {r.get('first_error')})"
    return text


# ------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=int(os.environ.get("TURBOCQL_PORT") or 9042))
    ap.add_argument("--pools", default=None, help=f"pool sizes (default {DEFAULT_POOLS}; --quick {QUICK_POOLS})")
    ap.add_argument(
        "--records",
        type=int,
        default=None,
        help=f"phase-2 records per run (default {DEFAULT_RECORDS:,}; --quick {QUICK_RECORDS:,}); phase 1: / 25",
    )
    ap.add_argument("--quick", action="store_true", help=f"pools {QUICK_POOLS}, {QUICK_RECORDS:,} records")
    ap.add_argument("--clients", default=",".join(CLIENTS), help=f"of {', '.join(CLIENTS)}")
    ap.add_argument("--models", default=",".join(MODELS), help=f"of {', '.join(MODELS)}")
    ap.add_argument("--pin-client", metavar="CPU", default=None, help="run each client under taskset -c CPU")
    ap.add_argument("--server-pid", type=int, default=None, help="server pid (default: found from the port)")
    peers.add_arguments(ap)
    add_run_arguments(ap, "ingest", None, "per client run, seconds (default 600 + records / 500)")
    a = ap.parse_args(argv)
    check_pin_client(ap, a.pin_client)
    try:
        pools = parse_pools(a.pools or (QUICK_POOLS if a.quick else DEFAULT_POOLS))
        clients = parse_list(a.clients, CLIENTS, "client")
        models = parse_list(a.models, MODELS, "model")
    except ValueError as e:
        ap.error(str(e))
    records = a.records or (QUICK_RECORDS if a.quick else DEFAULT_RECORDS)
    timeout = a.timeout or 600 + records / 500
    rows = [(c, m) for c, m in ROWS if c in clients and m in models]
    if not rows:
        ap.error("no (client, model) row left by --clients and --models")
    if not require_server(a.host, a.port, a.wait):
        return 2
    load_start = os.getloadavg()[0]
    server_pid = a.server_pid or find_server_pid(a.port, a.host)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    wanted = []
    for c, m in rows:
        if interpreter_of(c, m) not in wanted:
            wanted.append(interpreter_of(c, m))
    resolved = peers.from_args(a, wanted)
    log(f"ingest: {ingest_data.geo_count(records):,} geo + {records:,} element records per run, pools {pools}")
    setup_schema(a.host, a.port)
    results: list[dict] = []
    for pool in pools:
        for client, model in rows:
            py = resolved[interpreter_of(client, model)]
            base = {"client": client, "model": model, "pool": pool}
            if not py.available:
                results.append({**base, "unavailable": py.reason})
                continue
            cmd = [py.python, str(CLIENT), "--driver", DRIVER_ARG[client], "--model", model]
            cmd += ["--client-name", client, "--pool", str(pool), "--records", str(records)]
            cmd += ["--host", a.host, "--port", str(a.port), "--keyspace", ingest_data.KEYSPACE]
            if server_pid:
                cmd += ["--server-pid", str(server_pid)]
            log(f"pool {pool}: {DRIVER_NAMES[client]}, {model} ...")
            r = run_client(cmd, a.pin_client, timeout)
            r = {**base, **r} if "failed" in r else {**r, **base}
            r["interpreter"] = py.python
            results.append(r)
            log("  " + _line(r))
    unavailable = {f"{c} {m}": resolved[interpreter_of(c, m)].reason for c, m in rows}
    unavailable = {k: v for k, v in unavailable.items() if v}
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        server_pid,
        f"Ingestion (document 003): {ingest_data.geo_count(records):,} geo + {records:,} element records "
        f"per run, pools {', '.join(map(str, pools))}.",
        clients=resolved,
        records=records,
        geo_records=ingest_data.geo_count(records),
        pools=pools,
        rows=[f"{c} {m}" for c, m in rows],
        unavailable=unavailable,
    )
    print(markdown(results, pools, records, os.cpu_count()))
    if a.out is not None:
        write_json(a.out, "ingest", meta, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
