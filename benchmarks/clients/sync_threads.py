"""Sync-execute benchmark client: Python threads each calling ``session.execute`` in a loop.

The same code runs on the classic driver (``--driver cassandra``) and on turbocql
(``--driver turbocql``); only the imported module differs. It uses only the classic API
surface (``Cluster``, ``connect``, ``prepare``, ``execute``, ``shutdown``).

Workloads (same as ``benchmarks/rust_ref``):

* ``write``: prepared ``INSERT INTO t (thekey, col0, col1) VALUES (?, ?, ?)`` with distinct
  keys ``<prefix><i>`` and the values ``'a'``, ``'b'``;
* ``read``: prepared ``SELECT * FROM t WHERE thekey = ?`` of one row by key, over the keys
  ``row<i>`` (``i < --rows``), written before timing if missing.

Client CPU is ``resource.getrusage(RUSAGE_SELF)`` (user + system, all threads) around the
timed section only; setup and warm-up are outside it. Prints one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys
import threading
import time

CLIENT_NAMES = {"cassandra": "classic", "turbocql": "turbocql"}


def proc_cpu_us(pid: int | None) -> float | None:
    """utime + stime of another process (the server) in µs, from /proc/PID/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) * 1e6 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def self_cpu_us() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1e6


def peak_rss_mb() -> float:
    """This process's peak RSS in MB: ``VmHWM`` of its own image (``ru_maxrss`` would include
    the parent's RSS at fork time, which Linux carries over ``execve``)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def cluster_options(driver: str) -> dict:
    """Extra ``Cluster(...)`` arguments: with TURBOCQL_BENCH_PROFILE=dc-token, turbocql's
    default execution profile is TokenAwarePolicy(DCAwareRoundRobinPolicy(local DC)), the
    routing of a multi-DC production setup (TURBOCQL_BENCH_LOCAL_DC, default datacenter1)."""
    if driver != "turbocql" or os.environ.get("TURBOCQL_BENCH_PROFILE") != "dc-token":
        return {}
    cluster_mod = importlib.import_module("turbocql.cluster")
    policies = importlib.import_module("turbocql.policies")
    local_dc = os.environ.get("TURBOCQL_BENCH_LOCAL_DC", "datacenter1")
    lbp = policies.TokenAwarePolicy(policies.DCAwareRoundRobinPolicy(local_dc))
    return {"execution_profiles": {cluster_mod.EXEC_PROFILE_DEFAULT: cluster_mod.ExecutionProfile(lbp)}}


def classic_driver_state(driver: str, connection_class=None) -> dict | None:
    """For a client of the classic driver (``--driver cassandra``): the reactor it runs on
    (``connection_class``, else its ``Cluster``'s default, the first of libev / asyncore /
    asyncio that loads here) and whether its Cython extensions are loaded
    (``cassandra.cluster`` compiled; the Cython row parser of ``cassandra.cython_deps``).
    None for other drivers. Every report keeps it beside the client's figures."""
    if driver != "cassandra":
        return None
    import cassandra.cluster as cc
    import cassandra.cython_deps as cd

    cls = connection_class or cc.Cluster.connection_class
    return {
        "reactor": f"{cls.__module__}.{cls.__qualname__}",
        "cython_extensions": not cc.__file__.endswith(".py"),
        "cython_row_parser": bool(cd.HAVE_CYTHON),
    }


def driver_version(driver: str) -> str | None:
    """``__version__`` of the driver's top-level module (cassandra, turbocql, acsylla)."""
    try:
        v = getattr(importlib.import_module(driver), "__version__", None)
    except ImportError:
        return None
    if v is None:  # acsylla keeps it in its distribution's metadata only
        import importlib.metadata as md

        try:
            v = md.version(driver)
        except md.PackageNotFoundError:
            pass
    return v


def add_client_name(ap) -> None:
    """``--client-name``: the name in the JSON line (e.g. ``scylla`` for scylla-driver, which
    is imported as ``cassandra``); default from ``--driver``."""
    ap.add_argument(
        "--client-name",
        default=None,
        help="client name in the output (default: classic for cassandra, else the driver)",
    )


def read_key(i: int) -> str:
    return f"row{i}"


def run_threads(session, stmt, params_list, nthreads: int):
    """Run ``session.execute(stmt, p)`` for every p, split over nthreads threads.

    Returns (latencies_ns, errors, seconds) with the clock started once every thread is ready.
    """
    n = len(params_list)
    chunks = [params_list[n * t // nthreads : n * (t + 1) // nthreads] for t in range(nthreads)]
    lat_lists: list[list[int]] = [[] for _ in range(nthreads)]
    errors = [0] * nthreads
    barrier = threading.Barrier(nthreads + 1)

    def worker(idx: int) -> None:
        execute = session.execute
        clock = time.perf_counter_ns
        lat = lat_lists[idx]
        append = lat.append
        err = 0
        chunk = chunks[idx]
        barrier.wait()
        for params in chunk:
            t0 = clock()
            try:
                execute(stmt, params)
            except Exception:
                err += 1
            append(clock() - t0)
        errors[idx] = err

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(nthreads)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    lat = [x for chunk in lat_lists for x in chunk]
    return lat, sum(errors), seconds


def percentile_us(sorted_ns: list[int], p: float) -> float:
    if not sorted_ns:
        return 0.0
    idx = round(p / 100 * (len(sorted_ns) - 1))
    return sorted_ns[min(idx, len(sorted_ns) - 1)] / 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=sorted(CLIENT_NAMES), default="cassandra")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--workload", choices=["write", "read"], default="write")
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2000, help="untimed requests before timing")
    ap.add_argument("--rows", type=int, default=10000, help="read keys row0..row<rows-1>")
    ap.add_argument("--key-prefix", default=None, help="write key prefix (default: per process)")
    ap.add_argument("--server-pid", type=int, default=None, help="measure this pid's CPU too")
    add_client_name(ap)
    args = ap.parse_args(argv)
    client = args.client_name or CLIENT_NAMES[args.driver]
    prefix = args.key_prefix or f"{client}-{os.getpid()}-"

    cluster_mod = importlib.import_module(f"{args.driver}.cluster")
    importlib.import_module(f"{args.driver}.query")  # same module set as an application

    cluster = cluster_mod.Cluster([args.host], port=args.port, compression=False, **cluster_options(args.driver))
    session = cluster.connect()
    try:
        ks = args.keyspace
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.t (thekey text PRIMARY KEY, col0 text, col1 text)")
        insert = session.prepare(f"INSERT INTO {ks}.t (thekey, col0, col1) VALUES (?, ?, ?)")
        select = session.prepare(f"SELECT * FROM {ks}.t WHERE thekey = ?")

        if args.workload == "read":
            stmt = select
            if not list(session.execute(select, (read_key(args.rows - 1),))):
                # Untimed setup: write the read keys (the runner normally did it already).
                rows = [(read_key(i), "a", "b") for i in range(args.rows)]
                _, errs, _ = run_threads(session, insert, rows, 16)
                if errs:
                    raise RuntimeError(f"populating {args.rows} rows: {errs} errors")

            def params_for(tag: str, n: int):
                return [(read_key(i * 7919 % args.rows),) for i in range(n)]
        else:
            stmt = insert

            def params_for(tag: str, n: int):
                return [(f"{prefix}{tag}{i}", "a", "b") for i in range(n)]

        if args.warmup:
            _, werr, _ = run_threads(session, stmt, params_for("w", args.warmup), args.threads)
            if werr == args.warmup:
                raise RuntimeError("every warm-up request failed")

        params = params_for("", args.ops)
        srv0 = proc_cpu_us(args.server_pid)
        cpu0 = self_cpu_us()
        lat, errors, seconds = run_threads(session, stmt, params, args.threads)
        cpu = self_cpu_us() - cpu0
        srv1 = proc_cpu_us(args.server_pid)
    finally:
        cluster.shutdown()

    lat.sort()
    out = {
        "client": client,
        "pattern": "sync",
        "workload": args.workload,
        "threads": args.threads,
        "ops": args.ops,
        "seconds": round(seconds, 4),
        "ops_per_s": round(args.ops / seconds, 1),
        "cpu_us_per_op": round(cpu / args.ops, 2),
    }
    if srv0 is not None and srv1 is not None:
        out["server_cpu_us_per_op"] = round((srv1 - srv0) / args.ops, 2)
    out.update(
        p50_us=round(percentile_us(lat, 50), 1),
        p95_us=round(percentile_us(lat, 95), 1),
        p99_us=round(percentile_us(lat, 99), 1),
        errors=errors,
    )
    out["driver_version"] = driver_version(args.driver)
    out["classic_driver"] = classic_driver_state(args.driver)
    out["python_version"] = sys.version.split()[0]
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
