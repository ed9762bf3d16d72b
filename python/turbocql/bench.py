"""``turbocql bench``: the benchmark suite of the seed documents, in one run, with a report.

This module holds the command only; the scenarios are the scripts in the source checkout's
``benchmarks/`` directory (found next to the package, in the current directory or its
parents, or given with ``--benchmarks-dir``), imported and run in this order:

* ``sync``     ``run_sync.py``: sync execute with 1, 2, 4, 8, 16 threads, writes and reads
  (document 000; document 001's "Synchronous Requests" is the 1-thread row);
* ``patterns`` ``run_patterns.py``: futures, callback chains, ``execute_concurrent``, the
  pipelines and the asyncio API, writes and reads (documents 000 and 001);
* ``tuning``   ``run_tuning.py``: document 001's ``pipeline_tuning`` grid search;
* ``vectors``  ``run_vectors.py``: document 004's vector ingestion.

Every client runs in its own process (classic driver, turbocql, the Rust reference, and on
request scylla-driver and acsylla) against one Cassandra. The Python peers run in their own
virtualenvs (``benchmarks/.venvs/<client>``, created on first use by ``benchmarks/peers.py``;
``--classic-python`` etc. to use another interpreter), turbocql with ``--python``. The server
is by default the local one at 127.0.0.1:9042 (``$TURBOCQL_PORT``), started with
:mod:`turbocql.localdb` if it does not answer. The server is warmed up once, first. The run
writes, in ``--out-dir`` (default ``benchmarks/results``): ``<name>.json`` (machine
description, versions, every result), ``<name>.md`` (one table per seed document, turbocql
and the Rust reference beside the classic driver, with ratios) and ``<name>-*.png`` plots.

Like every subcommand module it imports nothing of the engine at import time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIOS = ("sync", "patterns", "tuning", "vectors")
SYNC_THREADS = "1,2,4,8,16"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
REQUIRED_FILES = ("run_sync.py", "run_patterns.py", "run_tuning.py", "run_vectors.py",
                  "report.py", "peers.py")
DEFAULT_CLIENTS = "classic,turbocql,rust"


class BenchError(Exception):
    """A failure with a message meant for a person (exit status 2)."""


# ---------------------------------------------------------------------------------------------
# Where the scenarios are


def _is_benchmarks_dir(path: Path) -> bool:
    return all((path / f).is_file() for f in REQUIRED_FILES)


def find_benchmarks_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The ``benchmarks/`` directory of a turbocql source checkout.

    ``explicit`` (``--benchmarks-dir``) if given, else ``$TURBOCQL_BENCHMARKS_DIR``, else the
    checkout this package was imported from (``python/turbocql/`` -> ``benchmarks/``), else
    ``benchmarks/`` in the current directory or one of its parents.
    """
    if explicit is not None:
        path = Path(explicit).expanduser().resolve()
        if not _is_benchmarks_dir(path):
            raise BenchError(f"{path} is not turbocql's benchmarks directory (it needs "
                             f"{', '.join(REQUIRED_FILES)})")
        return path
    candidates = []
    env = os.environ.get("TURBOCQL_BENCHMARKS_DIR")
    if env:
        candidates.append(Path(env).expanduser())
    here = Path(__file__).resolve()
    candidates += [parent / "benchmarks" for parent in here.parents[1:4]]
    cwd = Path.cwd().resolve()
    candidates += [d / "benchmarks" for d in (cwd, *cwd.parents)]
    for c in candidates:
        if _is_benchmarks_dir(c):
            return c.resolve()
    raise BenchError(
        "cannot find turbocql's benchmarks/ directory: it is in the source checkout, not in "
        "the installed package. Run it from a source checkout of turbocql, or pass "
        "--benchmarks-dir PATH (or set TURBOCQL_BENCHMARKS_DIR).")


def _import_runners(bdir: Path) -> dict:
    if str(bdir) not in sys.path:
        sys.path.insert(0, str(bdir))
    return {name: importlib.import_module(name)
            for name in ("run_sync", "run_patterns", "run_tuning", "run_vectors", "report",
                         "peers")}


# ---------------------------------------------------------------------------------------------
# Machine and server description


def _run(cmd: list[str], timeout: float = 20) -> str | None:
    """stdout (or stderr, for ``java -version``) of a command, or None."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    out = (r.stdout.strip() or r.stderr.strip())
    return out if r.returncode == 0 and out else None


def _first_line(text: str | None) -> str | None:
    lines = (text or "").splitlines()
    return lines[0] if lines else None


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


_VERSIONS_SNIPPET = """
import importlib, json, platform
d = {"python": platform.python_implementation() + " " + platform.python_version()}
for name, mod in (("turbocql", "turbocql"), ("numpy", "numpy"), ("uvloop", "uvloop"),
                  ("matplotlib", "matplotlib")):
    try:
        d[name] = getattr(importlib.import_module(mod), "__version__", "installed")
    except Exception as e:
        d[name] = None
print(json.dumps(d))
"""


def describe_machine(python: str, bdir: Path) -> dict:
    """CPU, memory, OS, toolchains and the turbocql clients' package versions (the other
    clients' interpreters and versions are ``machine["clients"]``, from ``peers.py``)."""
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    osr = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', _read("/etc/os-release"), re.M)
    m = {
        "hostname": platform.node(),
        "cpu_model": model.group(1).strip() if model else platform.processor() or None,
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gb": round(int(mem.group(1)) / 2**20, 1) if mem else None,
        "kernel": platform.release(),
        "os": osr.group(1) if osr else platform.platform(),
        "arch": platform.machine(),
        "runner_python": platform.python_version(),
        "rustc": _run(["rustc", "--version"]),
        "cargo": _run(["cargo", "--version"]),
        "java": _first_line(_run(["java", "-version"])),
    }
    versions = _run([python, "-c", _VERSIONS_SNIPPET], timeout=60)
    try:
        v = json.loads(versions.splitlines()[-1]) if versions else {}
    except ValueError:
        v = {}
    m["client_python"] = v.pop("python", None)
    m.update(v)
    root = bdir.parent
    commit = _run(["git", "-C", str(root), "rev-parse", "HEAD"])
    if commit:
        m["git_commit"] = commit
        m["git_dirty"] = bool(_run(["git", "-C", str(root), "status", "--porcelain",
                                    "--untracked-files=no"]))
    return m


def describe_server(host: str, port: int, pid: int | None) -> dict:
    """Cassandra's version (system.local), and, for a local pid, its JVM and settings."""
    s: dict = {"host": host, "port": port, "pid": pid}
    try:
        from turbocql.cluster import Cluster

        cluster = Cluster([host], port=port)
        try:
            session = cluster.connect()
            row = session.execute(
                "SELECT release_version, cluster_name, cql_version, native_protocol_version "
                "FROM system.local").one()
            s.update(release_version=row.release_version, cluster_name=row.cluster_name,
                     cql_version=row.cql_version,
                     native_protocol_version=row.native_protocol_version)
        finally:
            cluster.shutdown()
    except Exception as e:  # the report says why, the run goes on
        s["query_error"] = f"{type(e).__name__}: {e}"[:300]
    if pid:
        with contextlib.suppress(OSError):
            exe = os.readlink(f"/proc/{pid}/exe")
            s["java"] = _first_line(_run([exe, "-version"]))
        cmdline = _read(f"/proc/{pid}/cmdline").split("\0")
        heap = next((a[4:] for a in cmdline if a.startswith("-Xmx")), None)
        s["heap"] = heap
        conf = next((a.split("=", 1)[1] for a in cmdline
                     if a.startswith("-Dcassandra.config=")), None)
        if conf:
            yaml = _read(conf.removeprefix("file://"))
            cs = re.search(r"^commitlog_sync:\s*(\S+)", yaml, re.M)
            s["commitlog_sync"] = cs.group(1) if cs else None
        with contextlib.suppress(OSError):
            s["affinity"] = sorted(os.sched_getaffinity(pid))
    return s


# ---------------------------------------------------------------------------------------------
# Server


def ensure_server(host: str, port: int, start: bool, wait: float) -> None:
    from turbocql import localdb

    if localdb.wait_for_cql(host, port, timeout=max(wait, 0.1)):
        return
    if not start or host not in LOCAL_HOSTS:
        raise BenchError(f"no Cassandra answers at {host}:{port}"
                         + ("" if host not in LOCAL_HOSTS else
                            " (start one with: turbocql localdb start)"))
    print(f"no Cassandra at {host}:{port}: starting the local one (turbocql localdb start)...",
          file=sys.stderr, flush=True)
    try:
        node = localdb.start(port=port, out=lambda msg: print(msg, file=sys.stderr, flush=True))
    except localdb.LocalDBError as e:
        raise BenchError(f"could not start the local Cassandra: {e}") from None
    print(f"Cassandra {node.version} is up (pid {node.pid})", file=sys.stderr, flush=True)


@contextlib.contextmanager
def pinned_server(pid: int | None, cpu: str | None):
    """``taskset -a -p -c CPU PID`` (every thread of the server) for the run; restored after."""
    if cpu is None:
        yield
        return
    if pid is None:
        raise BenchError("--pin-server: the server's pid is unknown (not a local process?)")
    if not shutil.which("taskset"):
        raise BenchError("--pin-server needs taskset (util-linux)")
    before = ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
    r = subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise BenchError(f"taskset -a -p -c {cpu} {pid}: {r.stderr.strip()}")
    print(f"server (pid {pid}) pinned to CPU {cpu} (was {before})", file=sys.stderr)
    try:
        yield
    finally:
        subprocess.run(["taskset", "-a", "-p", "-c", before, str(pid)], capture_output=True)
        print(f"server (pid {pid}) affinity restored to {before}", file=sys.stderr)


def _rust_bin(run_sync, bdir: Path, build: bool) -> Path | None:
    """The Rust reference, (re)built if missing, asked for, or older than its sources."""
    binary = Path(run_sync.DEFAULT_RUST_BIN)
    src = bdir / "rust_ref"
    if binary.exists() and not build:
        newest = max((p.stat().st_mtime for p in src.rglob("*") if p.is_file()
                      and p.suffix in (".rs", ".toml")), default=0)
        build = newest > binary.stat().st_mtime
    if build and not shutil.which("cargo"):
        print("cargo not found: the Rust reference cannot be built", file=sys.stderr)
        return binary if binary.exists() else None
    return run_sync.ensure_rust_bin(binary, build)


# ---------------------------------------------------------------------------------------------
# The run


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
    return {"meta": data["meta"], "heading": data["meta"].get("heading"),
            "results": data["results"]}


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except BenchError as e:
        print(f"turbocql bench: {e}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    scenarios = list(SCENARIOS) if args.scenarios == "all" else [
        s.strip() for s in args.scenarios.split(",") if s.strip()]
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
    try:
        clients = peers.parse_clients(args.clients + (",scylla,acsylla" if args.peers else ""))
    except ValueError as e:
        raise BenchError(str(e)) from None

    ensure_server(args.host, args.port, not args.no_start, args.wait)
    local = args.host in LOCAL_HOSTS
    server_pid = args.server_pid or (run_sync.find_server_pid(args.port) if local else None)
    rust_bin = _rust_bin(run_sync, bdir, args.build) if "rust" in clients else None
    if "rust" in clients and rust_bin is None:
        print("the Rust reference is not built: its rows are shown as failed", file=sys.stderr)

    q = args.quick
    ops = args.ops or (5000 if q else 20000)
    warmup = 1000 if q else 2000
    server_warmup = (args.server_warmup_ops if args.server_warmup_ops is not None
                     else 50000 if q else 100000)
    vector_rows = args.vector_rows or (5000 if q else 100_000)
    common = ["--host", args.host, "--port", str(args.port), "--wait", str(args.wait)]
    repeat = ["--repeat", str(args.repeat)] if args.repeat > 1 else []
    if server_pid:
        common += ["--server-pid", str(server_pid)]
    if args.pin_client is not None:
        common += ["--pin-client", args.pin_client]

    argv = args.argv if args.argv is not None else sys.argv[1:]
    command = " ".join(["turbocql", *(["bench"] if args.argv is not None else []),
                        *(shlex.quote(a) for a in argv)])
    meta = {"date": dt.datetime.now().isoformat(timespec="seconds"), "command": command,
            "scenarios": scenarios, "clients": clients, "benchmarks_dir": str(bdir),
            "pin_client": args.pin_client, "pin_server": args.pin_server,
            "loadavg_start": round(os.getloadavg()[0], 2),
            "options": {"quick": q, "ops": ops, "repeat": args.repeat, "client_warmup": warmup,
                        "server_warmup_ops": server_warmup, "sync_threads": args.threads,
                        "vector_rows": vector_rows, "tuning_grid": "fine" if args.fine else
                        "quick" if q else "coarse", "tuning_ops": args.tuning_ops}}
    print(f"turbocql bench: scenarios {', '.join(scenarios)}; clients {', '.join(clients)}; "
          f"benchmarks {bdir}", file=sys.stderr, flush=True)
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
    server = describe_server(args.host, args.port, server_pid)
    t0 = time.monotonic()
    results: dict[str, dict] = {}
    with pinned_server(server_pid, args.pin_server):
        if server_warmup > 0 and rust_bin is not None:
            rust_common = ["--host", args.host, "--port", str(args.port)]
            if server_pid:
                rust_common += ["--server-pid", str(server_pid)]
            run_sync.warm_up_server(rust_bin, rust_common, server_warmup, args.pin_client,
                                    1800)
        client_list = ",".join(clients)
        for s in scenarios:
            print(f"\n=== scenario {s} ===", file=sys.stderr, flush=True)
            if s == "sync":
                argv = [*common, *py_args, "--ops", str(ops), "--threads", args.threads,
                        "--warmup", str(warmup), "--server-warmup-ops", "0",
                        "--clients", client_list, *repeat]
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _scenario(run_sync.main, argv)
            elif s == "patterns":
                argv = [*common, *py_args, "--ops", str(ops), "--warmup", str(warmup),
                        "--server-warmup-ops", "0", "--no-report", "--clients", client_list,
                        *repeat]
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
            elif s == "vectors":
                argv = [*common, *py_args, "--rows", str(vector_rows), "--clients", client_list]
                if rust_bin is not None:
                    argv += ["--rust-bin", str(rust_bin)]
                results[s] = _scenario(mods["run_vectors"].main, argv)
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
        latest.write_text(f"<!-- copy of {paths['markdown'].name}; raw results {jpath.name} -->\n"
                          + paths["markdown"].read_text())
        print(f"  latest:  {latest}")
    for p in paths["plots"]:
        print(f"  plot:    {p}")
    return 1 if any(r.get("failed") for r in results.values()) else 0


# ---------------------------------------------------------------------------------------------
# Command line


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``bench`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "bench",
        help="run the benchmark suite (seed documents 000, 001, 004) and write a report",
        description="Run the benchmark scenarios of the source checkout's benchmarks/ "
                    "directory (classic driver, turbocql and the pure-Rust reference, each in "
                    "its own process) and write a JSON, a Markdown report and PNG plots.",
    )
    p.add_argument("--scenarios", default="all",
                   help=f"comma-separated: {', '.join(SCENARIOS)}; or all (default)")
    p.add_argument("--quick", action="store_true",
                   help="small runs (5,000 ops, a 4×4 tuning grid, 5,000 vector rows): a few "
                        "minutes per scenario")
    p.add_argument("--ops", type=int, default=None,
                   help="timed requests per client run for sync and patterns "
                        "(default 20000; --quick: 5000)")
    p.add_argument("--threads", default=SYNC_THREADS,
                   help=f"sync thread counts (default {SYNC_THREADS})")
    p.add_argument("--clients", default=DEFAULT_CLIENTS,
                   help="comma-separated: classic, scylla, turbocql, acsylla, rust (default "
                        f"{DEFAULT_CLIENTS}); scylla-driver and acsylla get their own "
                        "virtualenvs, and one that cannot be installed is reported as not "
                        "available while the run goes on")
    p.add_argument("--peers", action="store_true",
                   help="add the optional peers scylla-driver and acsylla to --clients")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="sync and patterns: run every client N times in interleaved rounds and "
                        "report each one's median run by client CPU (default 1)")
    p.add_argument("--fine", action="store_true", help="tuning: the fine grid (13 × 11)")
    p.add_argument("--tuning-ops", type=int, default=None,
                   help="tuning: requests per grid point (default 10000; --quick: 3000)")
    p.add_argument("--in-flight-grid", default=None,
                   help="tuning: in-flight values or start:stop:step (e.g. 100:4900:100)")
    p.add_argument("--buffer-grid", default=None,
                   help="tuning: buffer values or start:stop:step (e.g. 100:49900:100)")
    p.add_argument("--vector-rows", type=int, default=None,
                   help="vectors: rows per timed run (default 100000; --quick: 5000)")
    p.add_argument("--pin-client", metavar="CPU", default=None,
                   help="run every client under taskset -c CPU")
    p.add_argument("--pin-server", metavar="CPU", default=None,
                   help="pin every thread of the server process to CPU for the run "
                        "(taskset -a -p; restored afterwards)")
    p.add_argument("--out-dir", default=None,
                   help="where to write the JSON, report and plots (default benchmarks/results)")
    p.add_argument("--name", default=None,
                   help="file name stem of the outputs (default bench-<date>-<time>)")
    p.add_argument("--benchmarks-dir", default=None,
                   help="the checkout's benchmarks/ directory (default: found from the package "
                        "or the current directory)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=int(os.environ.get("TURBOCQL_PORT") or 9042),
                   help="CQL port (default $TURBOCQL_PORT or 9042)")
    p.add_argument("--no-start", action="store_true",
                   help="do not start the local Cassandra if nothing answers")
    p.add_argument("--wait", type=float, default=60,
                   help="seconds to wait for the server to answer (default 60)")
    p.add_argument("--server-pid", type=int, default=None,
                   help="server pid for server CPU µs/op (default: found from the port)")
    p.add_argument("--server-warmup-ops", type=int, default=None,
                   help="Rust writes and reads before anything (default 100000; --quick: 50000)")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter of the turbocql clients (default: this one)")
    for name, title in (("classic", "classic driver"), ("scylla", "scylla-driver"),
                        ("acsylla", "acsylla")):
        p.add_argument(f"--{name}-python", metavar="PATH", default=None,
                       help=f"interpreter of the {title} clients (default: the virtualenv "
                            f"benchmarks/.venvs/{name}, created on first use)")
    p.add_argument("--venvs-dir", default=None,
                   help="where the peers' virtualenvs are (default benchmarks/.venvs)")
    p.add_argument("--no-install", action="store_true",
                   help="do not create or update the peers' virtualenvs (a missing one makes "
                        "its client unavailable)")
    p.add_argument("--build", action="store_true",
                   help="cargo build the Rust reference first (it is rebuilt anyway when "
                        "missing or older than its sources)")
    p.add_argument("--no-plots", action="store_true", help="no PNG plots")
    p.add_argument("--latest", action="store_true",
                   help="also write the report as <out-dir>/bench-latest.md (its plots stay "
                        "<name>-*.png beside it)")
    p.set_defaults(func=_cmd_bench, argv=None)
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m turbocql.bench ...``: the same as ``turbocql bench ...``."""
    parser = argparse.ArgumentParser(prog="turbocql")
    add_parser(parser.add_subparsers(dest="command", required=True))
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(["bench", *argv])
    args.argv = argv
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
