"""The run: every scenario through its runner's ``main()``, then the JSON, report and plots."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .describe import describe_machine, describe_server
from .discover import (
    CONNECTIONS,
    LOCAL_HOSTS,
    OPTIONAL_SCENARIOS,
    QUICK_CONNECTIONS,
    SCENARIOS,
    BenchError,
    _import_runners,
    find_benchmarks_dir,
)
from .server import _rust_bin, ensure_server, pinned_server, tls_server


def _scenario(main, argv: list[str]) -> dict:
    """Run one runner's ``main(argv + --out tmp)``; its JSON, or {"failed": reason}."""
    with tempfile.TemporaryDirectory(prefix="turbocql-bench-") as tmp:
        out = Path(tmp) / "out.json"
        try:
            rc = main([*argv, "--out", str(out)])
        except SystemExit as e:  # argparse errors
            rc = e.code if isinstance(e.code, int) else 2
        except Exception as e:
            return {"failed": f"{type(e).__name__}: {e}"}
        if rc != 0 or not out.exists():
            return {"failed": f"runner exited with status {rc}"}
        data = json.loads(out.read_text())
    return {"meta": data["meta"], "heading": data["meta"].get("heading"), "results": data["results"]}


def _tls_scenario(args: argparse.Namespace, argv: list[str], main, shared) -> dict:
    """The ``tls`` scenario: its TLS node (found, or started and then stopped), described and
    pinned like the main one, then ``run_tls.py``; the node's description and whether this run
    started it are kept in the scenario's ``tls_node``."""
    try:
        with tls_server(args.host, args.tls_port, not args.no_start, args.wait, args.tls_ca, args.tls_heap) as node:
            pid = shared.find_server_pid(args.tls_port, args.host) if args.host in LOCAL_HOSTS else None
            info = {**node.to_json(), "server": describe_server(args.host, args.tls_port, pid, node.ssl_context())}
            argv = [*argv, "--tls-port", str(args.tls_port), "--tls-ca", str(node.ca)]
            if pid:
                argv += ["--tls-server-pid", str(pid)]
            with pinned_server(pid, args.pin_server):
                result = _scenario(main, argv)
    except BenchError as e:
        return {"failed": str(e)}
    result["tls_node"] = info
    return result


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except BenchError as e:
        print(f"turbocql bench: {e}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    scenarios = (
        [s for s in SCENARIOS if s not in OPTIONAL_SCENARIOS]
        if args.scenarios == "all"
        else [s.strip() for s in args.scenarios.split(",") if s.strip()]
    )
    for s in scenarios:
        if s not in SCENARIOS:
            raise BenchError(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)}, all)")
    if args.pin_client is not None and not shutil.which("taskset"):
        raise BenchError("--pin-client needs taskset (util-linux)")
    bdir = find_benchmarks_dir(args.benchmarks_dir)
    out_dir = Path(args.out_dir).expanduser() if args.out_dir else bdir / "results"
    name = args.name or f"bench-{dt.datetime.now():%Y-%m-%d-%H%M%S}"
    mods = _import_runners(bdir)
    run_sync, report, peers = mods["run_sync"], mods["report"], mods["peers"]
    shared = mods["common"]
    try:
        clients = peers.parse_clients(args.clients + (",scylla,acsylla" if args.peers else ""))
    except ValueError as e:
        raise BenchError(str(e)) from None

    # The connections scenario (document 002's ping-pong) runs its own echo server: a run of
    # it alone neither needs nor starts Cassandra.
    cassandra = any(s != "connections" for s in scenarios)
    if cassandra:
        ensure_server(args.host, args.port, not args.no_start, args.wait)
    local = args.host in LOCAL_HOSTS
    server_pid = args.server_pid or (shared.find_server_pid(args.port, args.host) if local and cassandra else None)
    rust_bin = _rust_bin(shared, bdir, args.build) if "rust" in clients and cassandra else None
    if "rust" in clients and rust_bin is None and cassandra:
        print("the Rust reference is not built: its rows are shown as failed", file=sys.stderr)

    q = args.quick
    ops = args.ops or (5000 if q else 20000)
    warmup = 1000 if q else 2000
    server_warmup = args.server_warmup_ops if args.server_warmup_ops is not None else 50000 if q else 100000
    vector_rows = args.vector_rows or (5000 if q else 100_000)
    common = ["--host", args.host, "--port", str(args.port), "--wait", str(args.wait)]
    repeat = ["--repeat", str(args.repeat)] if args.repeat > 1 else []
    if server_pid:
        common += ["--server-pid", str(server_pid)]
    if args.pin_client is not None:
        common += ["--pin-client", args.pin_client]

    argv = args.argv if args.argv is not None else sys.argv[1:]
    command = " ".join(["turbocql", *(["bench"] if args.argv is not None else []), *(shlex.quote(a) for a in argv)])
    meta = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": command,
        "scenarios": scenarios,
        "clients": clients,
        "benchmarks_dir": str(bdir),
        "pin_client": args.pin_client,
        "pin_server": args.pin_server,
        "loadavg_start": round(os.getloadavg()[0], 2),
        "options": {
            "quick": q,
            "ops": ops,
            "repeat": args.repeat,
            "client_warmup": warmup,
            "server_warmup_ops": server_warmup,
            "sync_threads": args.threads,
            "vector_rows": vector_rows,
            "bulk_rows": args.bulk_rows or (200_000 if q else 1_000_000),
            "spark_rows": (args.spark_rows or (100_000 if q else 1_000_000)) if "spark" in scenarios else None,
            "ingest_records": args.ingest_records or (144_000 if q else 1_440_000),
            "ingest_pools": args.ingest_pools or ("15,150" if q else "15,150,350"),
            "tuning_grid": "fine" if args.fine else "quick" if q else "coarse",
            "tuning_ops": args.tuning_ops,
            "tls_port": args.tls_port if "tls" in scenarios else None,
            "connections": args.connections or (QUICK_CONNECTIONS if q else CONNECTIONS),
        },
    }
    print(
        f"turbocql bench: scenarios {', '.join(scenarios)}; clients {', '.join(clients)}; benchmarks {bdir}",
        file=sys.stderr,
        flush=True,
    )
    machine = describe_machine(args.python, bdir)
    # Every Python client's interpreter, once: created or reused here, handed on to the runners.
    pyclients = peers.from_args(args, clients)
    machine["clients"] = {n: c.to_json() for n, c in pyclients.items()}
    meta["unavailable"] = {n: c.reason for n, c in pyclients.items() if not c.available}
    classic = pyclients.get("classic")
    if classic is not None and classic.versions:
        machine["cassandra_driver"] = classic.versions["packages"].get("cassandra-driver")
    clients = [c for c in clients if c not in meta["unavailable"]]
    py_args = [*peers.explicit_args(pyclients), "--no-install"]
    if "turbocql" not in pyclients:
        py_args += ["--python", args.python]
    server = describe_server(args.host, args.port, server_pid) if cassandra else {}
    t0 = time.monotonic()
    results: dict[str, dict] = {}
    with pinned_server(server_pid, args.pin_server):
        if server_warmup > 0 and rust_bin is not None:
            rust_common = ["--host", args.host, "--port", str(args.port)]
            if server_pid:
                rust_common += ["--server-pid", str(server_pid)]
            shared.warm_up_server(rust_bin, rust_common, server_warmup, args.pin_client, 1800)
        client_list = ",".join(clients)
        for s in scenarios:
            print(f"\n=== scenario {s} ===", file=sys.stderr, flush=True)
            if s == "sync":
                argv = [
                    *common,
                    *py_args,
                    "--ops",
                    str(ops),
                    "--threads",
                    args.threads,
                    "--warmup",
                    str(warmup),
                    "--server-warmup-ops",
                    "0",
                    "--clients",
                    client_list,
                    *repeat,
                ]
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _scenario(run_sync.main, argv)
            elif s == "patterns":
                argv = [
                    *common,
                    *py_args,
                    "--ops",
                    str(ops),
                    "--warmup",
                    str(warmup),
                    "--server-warmup-ops",
                    "0",
                    "--no-report",
                    "--clients",
                    client_list,
                    *repeat,
                ]
                if q:
                    argv.append("--quick")
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _scenario(mods["run_patterns"].main, argv)
            elif s == "tuning":
                if "turbocql" not in clients:
                    continue
                argv = [*common, "--python", args.python]
                if args.fine:
                    argv.append("--fine")
                elif q:
                    argv.append("--quick")
                if args.tuning_ops:
                    argv += ["--ops", str(args.tuning_ops)]
                if args.in_flight_grid:
                    argv += ["--in-flight-grid", args.in_flight_grid]
                if args.buffer_grid:
                    argv += ["--buffer-grid", args.buffer_grid]
                results[s] = _scenario(mods["run_tuning"].main, argv)
            elif s == "tls":
                argv = [
                    *common,
                    *py_args,
                    "--ops",
                    str(ops),
                    "--warmup",
                    str(warmup),
                    "--server-warmup-ops",
                    "0",
                    "--tls-server-warmup-ops",
                    str(server_warmup),
                    "--no-report",
                    "--clients",
                    client_list,
                    *repeat,
                ]
                if q:
                    argv.append("--quick")
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _tls_scenario(args, argv, mods["run_tls"].main, shared)
            elif s == "vectors":
                argv = [*common, *py_args, "--rows", str(vector_rows), "--clients", client_list]
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _scenario(mods["run_vectors"].main, argv)
            elif s == "bulk":
                bulk_clients = [c for c in ("turbocql", "classic", "rust") if c in clients] + ["cqlsh"]
                argv = ["--host", args.host, "--port", str(args.port), "--python", args.python]
                argv += ["--clients", ",".join(bulk_clients)]
                if "classic" in pyclients and pyclients["classic"].python:
                    argv += ["--classic-python", pyclients["classic"].python]
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                if args.bulk_rows:
                    argv += ["--rows", str(args.bulk_rows)]
                elif q:
                    argv.append("--quick")
                results[s] = _scenario(mods["run_bulk"].main, argv)
            elif s == "spark":
                # Optional (not in "all"): turbocql.spark (pyspark from --python) against the
                # Spark Cassandra Connector (benchmarks/spark_ref, built with Maven on first use).
                argv = ["--host", args.host, "--port", str(args.port), "--wait", str(args.wait)]
                argv += ["--python", args.python, "--no-plot"]
                if server_pid:
                    argv += ["--server-pid", str(server_pid)]
                if args.repeat > 1:
                    argv += ["--repeat", str(args.repeat)]
                elif q:
                    argv += ["--repeat", "1"]
                if args.spark_rows:
                    argv += ["--rows", str(args.spark_rows)]
                elif q:
                    argv.append("--quick")
                results[s] = _scenario(mods["run_spark"].main, argv)
            elif s == "ingest":
                ingest_clients = [c for c in ("classic", "turbocql", "acsylla") if c in clients]
                if not ingest_clients:
                    continue
                argv = ["--host", args.host, "--port", str(args.port), "--wait", str(args.wait)]
                argv += ["--python", args.python, "--clients", ",".join(ingest_clients)]
                for peer in ("classic", "acsylla"):
                    if peer in pyclients and pyclients[peer].available:
                        argv += [f"--{peer}-python", str(pyclients[peer].python)]
                if args.venvs_dir:
                    argv += ["--venvs-dir", args.venvs_dir]
                if args.no_install:  # else the runner creates the gevent peer's venv on first use
                    argv.append("--no-install")
                if server_pid:
                    argv += ["--server-pid", str(server_pid)]
                if args.pin_client is not None:
                    argv += ["--pin-client", args.pin_client]
                if args.ingest_records:
                    argv += ["--records", str(args.ingest_records)]
                if args.ingest_pools:
                    argv += ["--pools", args.ingest_pools]
                if q:
                    argv.append("--quick")
                results[s] = _scenario(mods["run_ingest"].main, argv)
            elif s == "connections":
                # Its own server (pingpong-server, CPU 1) and clients (CPU 0, or --pin-client).
                argv = ["--python", args.python]
                if args.connections:
                    argv += ["--connections", args.connections]
                if args.venvs_dir:
                    argv += ["--venvs-dir", args.venvs_dir]
                if args.no_install:  # else the runner creates the gevent peer's venv on first use
                    argv.append("--no-install")
                if "acsylla" in pyclients and pyclients["acsylla"].available:  # uvloop, if --python lacks it
                    argv += ["--acsylla-python", str(pyclients["acsylla"].python)]
                if args.repeat > 1:
                    argv += ["--repeat", str(args.repeat)]
                if args.pin_client is not None:
                    argv += ["--pin-client", args.pin_client]
                if getattr(args, "tune_sysctls", False):
                    argv.append("--tune-sysctls")
                if q:
                    argv.append("--quick")
                results[s] = _scenario(mods["run_connections"].main, argv)
                # The same question for CQL drivers (issue 17 section 2): its own Rust CQL
                # responder (CPU 1), the same counts, pinning and repeats; the classic driver
                # from its peer venv when the run resolved one (else --python's).
                cql_argv = list(argv)
                if "classic" in pyclients and pyclients["classic"].available:
                    cql_argv += ["--classic-python", str(pyclients["classic"].python)]
                results["connections_cql"] = _scenario(mods["run_cql_connections"].main, cql_argv)
                if results["connections_cql"].get("failed"):
                    print(f"scenario connections (CQL) failed: {results['connections_cql']['failed']}", file=sys.stderr)
            if results.get(s, {}).get("failed"):
                print(f"scenario {s} failed: {results[s]['failed']}", file=sys.stderr)
    meta["loadavg_end"] = round(os.getloadavg()[0], 2)
    meta["seconds"] = round(time.monotonic() - t0, 1)

    data = {"meta": meta, "machine": machine, "server": server, "scenarios": results}
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath = out_dir / f"{name}.json"
    jpath.write_text(json.dumps(data, indent=1) + "\n")
    paths = report.write_report(data, out_dir, name, plots=not args.no_plots)
    print(f"\nturbocql bench: {meta['seconds']:.0f} s", file=sys.stderr)
    print(f"  results: {jpath}")
    print(f"  report:  {paths['markdown']}")
    if args.latest:
        latest = out_dir / "bench-latest.md"
        latest.write_text(
            f"<!-- copy of {paths['markdown'].name}; raw results {jpath.name} -->\n" + paths["markdown"].read_text()
        )
        print(f"  latest:  {latest}")
    for p in paths["plots"]:
        print(f"  plot:    {p}")
    return 1 if any(r.get("failed") for r in results.values()) else 0
