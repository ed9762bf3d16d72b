"""Sync-execute benchmark runner: classic driver vs turbocql vs the pure-Rust reference.

In one run, after warming the server up with the Rust client, it runs for each workload
(``--workloads write,read``) and each thread count (``--threads 1,16``) each client in its
own subprocess, one after the other:

* ``classic``  — ``clients/sync_threads.py --driver cassandra`` (cassandra-driver, in its own
  virtualenv: ``peers.py``),
* ``scylla``   — the same client on scylla-driver (optional, its own virtualenv),
* ``turbocql`` — ``clients/sync_threads.py --driver turbocql``,
* ``rust``     — ``rust_ref`` with ``--pattern sync --threads N`` (N tokio tasks),

(acsylla has no sync API: it is not run here),

plus, unless ``--no-concurrent-ref``, the Rust reference with 120 requests in flight
(the ceiling of any pattern). It prints a Markdown table with ratios (ops/s vs classic,
client CPU vs rust at the same thread count) and, with ``--out``, writes the raw JSON lines
to ``benchmarks/results/sync-<date>.json``. A client that fails is reported as failed.

Example::

    python3 benchmarks/run_sync.py --ops 20000 --pin-client 1 --out
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import peers  # noqa: E402
CLIENT_PY = HERE / "clients" / "sync_threads.py"
DEFAULT_RUST_BIN = ROOT / "target" / "release" / "turbocql-rust-ref"


def wait_for_port(host: str, port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=2):
                return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(2)


def find_server_pid(port: int) -> int | None:
    """pid of the process listening on ``port`` (read-only look at /proc), or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local, state, inode = parts[1], parts[3], parts[9]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{inode}]")
        except OSError:
            pass
    if not inodes:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def ensure_rust_bin(path: Path, build: bool) -> Path | None:
    if build or not path.exists():
        print("building the Rust reference (cargo build --release -p turbocql-rust-ref)...",
              file=sys.stderr, flush=True)
        r = subprocess.run(
            ["cargo", "build", "--release", "-p", "turbocql-rust-ref"], cwd=ROOT,
            stdout=sys.stderr, stderr=sys.stderr,
        )
        if r.returncode != 0:
            return None
    return path if path.exists() else None


def run_client(cmd: list[str], pin: str | None, timeout: float) -> dict:
    """Run one client; return its JSON result, or {"failed": reason}.

    ``process_max_rss_mb`` is the client's peak RSS: the ``VmHWM`` of its own image, polled
    from ``/proc/PID/status`` while it runs (every client, the Rust reference included), or the
    client's own report of it at exit (``max_rss_mb``) if higher. Not ``ru_maxrss`` from
    ``wait4``: Linux carries the parent's RSS at fork time over ``execve`` into it, so every
    small client would show the runner's own size.
    """
    if pin is not None:
        cmd = ["taskset", "-c", pin, *cmd]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, text=True)
        except OSError as e:
            return {"failed": str(e)}
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            p.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        peak_kb = [0]
        done = threading.Event()

        def poll_rss():  # Popen returned after the exec, so this is the client's own image
            path = f"/proc/{p.pid}/status"
            while not done.is_set():
                kb = vm_hwm_kb(path)
                if kb:
                    peak_kb[0] = max(peak_kb[0], kb)
                done.wait(0.05)

        poller = threading.Thread(target=poll_rss, daemon=True)
        poller.start()
        try:
            _, status, _ = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
            done.set()
            poller.join()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if timed_out.is_set():
        return {"failed": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        msg = (stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]
        return {"failed": msg[:240]}
    try:
        r = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        return {"failed": f"bad JSON line: {e}"}
    r["process_max_rss_mb"] = round(max(peak_kb[0] / 1024, r.get("max_rss_mb") or 0), 1)
    return r


def vm_hwm_kb(status_path: str) -> int | None:
    """Peak resident set (``VmHWM``, kB) from a ``/proc/PID/status`` file, or None."""
    try:
        with open(status_path) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def warm_up_server(rust_bin: Path | None, common: list[str], ops: int, pin: str | None,
                   timeout: float) -> None:
    """Warm the server up with the Rust client, 120 in flight: ``ops`` writes and reads.

    The JVM gets 2-3x cheaper per request once warm; this also writes the read rows.
    Does nothing if ``ops`` is 0 or the Rust reference is not built.
    """
    if rust_bin is None:
        print("Rust reference unavailable: server warm-up skipped", file=sys.stderr)
        return
    if ops <= 0:
        return
    print(f"warming the server up ({ops} writes and reads, rust, 120 in flight)...",
          file=sys.stderr, flush=True)
    for wl in ("populate", "write", "read"):
        r = run_client([str(rust_bin), *common, "--workload", wl, "--ops", str(ops),
                        "--pattern", "concurrent", "--warmup", "0"], pin, timeout)
        if "failed" in r:
            print(f"  warm-up {wl} failed: {r['failed']}", file=sys.stderr)


def add_reset_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--no-reset", dest="reset", action="store_false",
                    help="do not TRUNCATE the table (and write the read rows again) before "
                         "each group of client runs")


def reset_table(rust_bin: Path | None, common: list[str], pin: str | None,
                timeout: float) -> None:
    """``TRUNCATE`` the benchmark table and write the read rows again (Rust reference,
    untimed), so that every group of runs meets a table of the same size.

    Without it the table grows with every write of the run: a full run leaves millions of
    rows, the server slows down as it flushes and compacts them, and the clients measured
    late in a run meet a slower server than those measured early.
    """
    if rust_bin is None:
        return
    r = run_client([str(rust_bin), *common, "--workload", "reset", "--ops", "1",
                    "--warmup", "0"], pin, timeout)
    if "failed" in r:
        print(f"  table reset failed: {r['failed']}", file=sys.stderr)


def fmt_num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return ""
    return f"{x:,.{digits}f}"


def client_cmd(client: "peers.Client", script: Path, extra: list[str]) -> list[str]:
    """The command of one Python client: its own interpreter, ``--driver`` and name."""
    driver = "turbocql" if client.name == "turbocql" else peers.PEERS[client.name].driver
    return [client.python, str(script), "--driver", driver, "--client-name", client.name,
            *extra]


def clients_meta(clients: dict) -> dict:
    """``meta["clients"]``: every Python client's interpreter and versions, or why not."""
    return {name: c.to_json() for name, c in clients.items()}


def unavailable_lines(clients: dict) -> str:
    notes = peers.availability_note(clients)
    return "\n".join(f"* {n}" for n in notes)


RUST_OS_LABEL = "rust, OS threads"
"""The Rust reference with N blocking OS threads (``--pattern sync-threads``), beside the
``rust`` row's N tokio tasks on one worker thread."""


def add_repeat_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run every client N times, in N interleaved rounds, and report each "
                         "one's run with the median client CPU µs/op (default 1)")


def median_runs(results: list[dict], key) -> list[dict]:
    """Repeated runs (``--repeat``) collapsed: for each ``key(run)``, in first-seen order,
    the successful run with the median client CPU µs/op (the lower middle one for an even
    count), carrying every run's CPU and ops/s figures in ``cpu_us_per_op_runs`` and
    ``ops_per_s_runs``; a key whose runs all failed keeps its first failure."""
    groups: dict = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    out = []
    for runs in groups.values():
        ok = sorted((r for r in runs if "failed" not in r), key=lambda r: r["cpu_us_per_op"])
        if not ok:
            out.append(runs[0])
            continue
        chosen = dict(ok[(len(ok) - 1) // 2])
        if len(runs) > 1:
            chosen["cpu_us_per_op_runs"] = [r["cpu_us_per_op"] for r in ok]
            chosen["ops_per_s_runs"] = [r["ops_per_s"] for r in ok]
            chosen["failed_runs"] = len(runs) - len(ok)
        out.append(chosen)
    return out


def markdown_table(results: list[dict]) -> str:
    head = ("| client | workload | threads | ops/s | client CPU µs/op | server CPU µs/op "
            "| p50 µs | p95 µs | p99 µs | peak RSS MB | ops/s vs classic | CPU vs rust "
            "| CPU vs rust, OS threads |")
    lines = [head, "| " + " | ".join(["---"] * 13) + " |"]
    by = {(r["label"], r["workload"], r["threads"]): r for r in results}

    def cpu_vs(r: dict, ref: dict | None) -> str:
        if not ref or "failed" in ref:
            return ""
        return f"{r['cpu_us_per_op'] / ref['cpu_us_per_op']:.2f}×"

    for r in results:
        name, wl, th = r["label"], r["workload"], r["threads"]
        if "failed" in r:
            lines.append(f"| {name} | {wl} | {th} | failed: {r['failed'].replace('|', '/')} "
                         "| | | | | | | | | |")
            continue
        classic = by.get(("classic", wl, th))
        vs_classic = ""
        if classic and "failed" not in classic:
            vs_classic = f"{r['ops_per_s'] / classic['ops_per_s']:.2f}×"
        vs_rust = cpu_vs(r, by.get(("rust", wl, th)))
        vs_rust_os = cpu_vs(r, by.get((RUST_OS_LABEL, wl, th)))
        errs = f" ({r['errors']} errors)" if r.get("errors") else ""
        lines.append(
            f"| {name}{errs} | {wl} | {th} | {fmt_num(r['ops_per_s'])} "
            f"| {fmt_num(r['cpu_us_per_op'], 1)} | {fmt_num(r.get('server_cpu_us_per_op'), 1)} "
            f"| {fmt_num(r.get('p50_us'))} | {fmt_num(r.get('p95_us'))} "
            f"| {fmt_num(r.get('p99_us'))} "
            f"| {fmt_num(r.get('process_max_rss_mb', r.get('max_rss_mb')), 0)} "
            f"| {vs_classic} | {vs_rust} | {vs_rust_os} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")
    ap.add_argument("--ops", type=int, default=20000, help="timed operations per client run")
    ap.add_argument("--threads", default="1,16", help="comma-separated thread counts")
    ap.add_argument("--workloads", default="write,read", help="comma-separated: write,read")
    ap.add_argument("--clients", default="classic,turbocql,rust",
                    help="comma-separated subset of classic,scylla,turbocql,rust (acsylla "
                         "has no sync API and is skipped)")
    ap.add_argument("--no-concurrent-ref", action="store_true",
                    help="skip the Rust reference with 120 requests in flight")
    ap.add_argument("--warmup", type=int, default=2000, help="client warm-up requests")
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument("--server-warmup-ops", type=int, default=100000,
                    help="writes and reads by the Rust client (120 in flight) before anything")
    ap.add_argument("--pin-client", metavar="CPU", default=None,
                    help="run each client under taskset -c CPU")
    ap.add_argument("--server-pid", type=int, default=None,
                    help="server pid for server CPU µs/op (default: found from the port)")
    ap.add_argument("--rust-bin", type=Path, default=DEFAULT_RUST_BIN)
    ap.add_argument("--build", action="store_true", help="cargo build the Rust reference first")
    peers.add_arguments(ap)
    add_repeat_argument(ap)
    add_reset_argument(ap)
    ap.add_argument("--wait", type=float, default=0, help="seconds to wait for the server port")
    ap.add_argument("--timeout", type=float, default=1800, help="per client run, seconds")
    ap.add_argument("--out", nargs="?", const="", default=None, metavar="PATH",
                    help="write raw JSON (default path benchmarks/results/sync-<date>.json)")
    ap.add_argument("--report", nargs="?", const="", default=None, metavar="PATH",
                    help="write the Markdown report (default path benchmarks/results/sync-latest.md)")
    args = ap.parse_args(argv)

    threads = [int(t) for t in args.threads.split(",") if t]
    workloads = [w for w in args.workloads.split(",") if w]
    try:
        clients = peers.parse_clients(args.clients)
    except ValueError as e:
        ap.error(str(e))
    if args.pin_client is not None and not shutil.which("taskset"):
        ap.error("--pin-client needs taskset (util-linux)")
    if "acsylla" in clients:
        print("acsylla has no sync API: not run by the sync scenario", file=sys.stderr)
        clients.remove("acsylla")

    if not wait_for_port(args.host, args.port, args.wait):
        print(f"no server at {args.host}:{args.port}", file=sys.stderr)
        return 2
    server_pid = args.server_pid or find_server_pid(args.port)
    rust_bin = ensure_rust_bin(args.rust_bin, args.build) if "rust" in clients else None
    pyclients = peers.from_args(args, clients)
    reset_bin = rust_bin or (ensure_rust_bin(args.rust_bin, args.build) if args.reset else None)

    common = ["--host", args.host, "--port", str(args.port), "--keyspace", args.keyspace,
              "--rows", str(args.rows)]
    if server_pid:
        common += ["--server-pid", str(server_pid)]

    def rust_cmd(workload: str, ops: int, extra: list[str]) -> list[str]:
        return [str(rust_bin), *common, "--workload", workload, "--ops", str(ops), *extra]

    if args.server_warmup_ops > 0:
        warm_up_server(rust_bin or ensure_rust_bin(args.rust_bin, args.build), common,
                       args.server_warmup_ops, args.pin_client, args.timeout)

    results: list[dict] = []
    for wl in workloads:
        runs: list[tuple[str, int, list[str] | None]] = []
        for th in threads:
            for c in clients:
                if c == "rust":
                    cmd = None if rust_bin is None else rust_cmd(
                        wl, args.ops, ["--pattern", "sync", "--threads", str(th),
                                       "--warmup", str(args.warmup)])
                elif pyclients[c].available:
                    cmd = client_cmd(pyclients[c], CLIENT_PY, [
                        *common, "--workload", wl, "--ops", str(args.ops), "--threads", str(th),
                        "--warmup", str(args.warmup)])
                else:
                    continue  # not available: said once under the table
                runs.append((c, th, cmd))
                if c == "rust":
                    runs.append((RUST_OS_LABEL, th, None if rust_bin is None else rust_cmd(
                        wl, args.ops, ["--pattern", "sync-threads", "--threads", str(th),
                                       "--warmup", str(args.warmup)])))
        if "rust" in clients and not args.no_concurrent_ref:
            runs.append(("rust, 120 in flight", 120, None if rust_bin is None else rust_cmd(
                wl, args.ops, ["--pattern", "concurrent", "--concurrency", "120",
                               "--warmup", str(args.warmup)])))
        group = None
        for i, (label, th, cmd) in enumerate(runs * max(1, args.repeat)):
            if args.reset and (th, i // len(runs)) != group:  # each thread count, each round
                reset_table(reset_bin, common, args.pin_client, args.timeout)
            group = (th, i // len(runs))
            print(f"{wl:5} {label:>20} threads={th:<3} ...", end=" ", file=sys.stderr, flush=True)
            r = ({"failed": "Rust reference not built"} if cmd is None
                 else run_client(cmd, args.pin_client, args.timeout))
            r.update(label=label, workload=wl, threads=th)
            if label in pyclients:
                r["interpreter"] = pyclients[label].python
            print(r.get("failed") or f"{r['ops_per_s']:,.0f} ops/s, "
                  f"{r['cpu_us_per_op']:.1f} µs CPU/op", file=sys.stderr, flush=True)
            results.append(r)

    results = median_runs(results, lambda r: (r["label"], r["workload"], r["threads"]))
    cpu_info = f"{os.cpu_count()} CPUs"
    if args.repeat > 1:
        cpu_info += f"; each client run {args.repeat} times, the median run (client CPU) shown"
    if args.reset:
        cpu_info += "; table truncated and read rows rewritten before each thread count's runs"
    heading = (f"Sync execute, {args.ops:,} ops per run, prepared statements; {cpu_info}"
               f"{', client pinned to CPU ' + args.pin_client if args.pin_client else ''}; "
               f"server pid {server_pid or 'unknown'}.")
    table = markdown_table(results)
    missing = unavailable_lines(pyclients)
    if missing:
        table += "\n\n" + missing
    print(f"\n{heading}\n")
    print(table)
    if args.report is not None:
        rpath = Path(args.report) if args.report else HERE / "results" / "sync-latest.md"
        rpath.parent.mkdir(parents=True, exist_ok=True)
        command = "python benchmarks/run_sync.py " + " ".join(sys.argv[1:])
        rpath.write_text(f"# Sync execute: classic driver vs turbocql vs Rust\n\n"
                         f"{dt.datetime.now():%Y-%m-%d %H:%M}, `{command}`\n\n{heading}\n\n{table}\n")
        print(f"report: {rpath}", file=sys.stderr)

    if args.out is not None:
        path = Path(args.out) if args.out else (
            HERE / "results" / f"sync-{dt.datetime.now():%Y-%m-%d-%H%M%S}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"date": dt.datetime.now().isoformat(timespec="seconds"),
                "host": platform.node(), "cpus": os.cpu_count(), "argv": sys.argv[1:],
                "server_pid": server_pid, "python": platform.python_version(),
                "clients": clients_meta(pyclients), "heading": heading}
        path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"\nraw results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
