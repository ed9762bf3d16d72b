"""What the benchmark runners share: set-up, running a client, timing bookkeeping, reporting.

Every runner (``run_sync.py``, ``run_patterns.py``, ``run_vectors.py``, ``run_tuning.py``,
``run_vector_reads.py``) and ``turbocql bench`` import it from this directory (what each
runner measures: benchmarks/README.md):

* set-up: the common options (:func:`add_server_arguments`, :func:`add_client_arguments`,
  :func:`add_run_arguments`, ``--repeat``, ``--no-reset``), waiting for the server
  (:func:`require_server`), its pid (:func:`find_server_pid`), the Rust reference
  (:func:`ensure_rust_bin`), the server's warm-up and the table reset;
* running one client in its own process and reading its JSON line (:func:`run_client`, with
  its peak RSS), the command of a Python client (:func:`client_cmd`) or of the Rust reference
  (:func:`rust_command`);
* reporting: numbers (:func:`fmt_num`), the median of repeated runs (:func:`median_runs`),
  the heading's notes, the clients that were not available, and the raw JSON
  (:func:`run_meta`, :func:`write_json`).
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

from benchmarks import peers

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

DEFAULT_RUST_BIN = ROOT / "target" / "release" / "turbocql-rust-ref"


# ---------------------------------------------------------------------------------------------
# Options


def add_server_arguments(ap: argparse.ArgumentParser) -> None:
    """``--host``, ``--port``, ``--keyspace``: where the benchmark tables are."""
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="turbocql_bench")


def add_client_arguments(ap: argparse.ArgumentParser, per: str = "op", build: bool = True) -> None:
    """``--pin-client``, ``--server-pid``, ``--rust-bin`` (and ``--build``): how clients run.

    ``per`` is the unit of the server CPU column (``op``, ``row``)."""
    ap.add_argument("--pin-client", metavar="CPU", default=None, help="run each client under taskset -c CPU")
    ap.add_argument(
        "--server-pid",
        type=int,
        default=None,
        help=f"server pid for server CPU µs/{per} (default: found from the port)",
    )
    ap.add_argument("--rust-bin", type=Path, default=DEFAULT_RUST_BIN)
    if build:
        ap.add_argument("--build", action="store_true", help="cargo build the Rust reference first")


def add_run_arguments(
    ap: argparse.ArgumentParser, stem: str, timeout: float | None, timeout_help: str = "per client run, seconds"
) -> None:
    """``--wait``, ``--timeout``, ``--out``: waiting for the server, a client's time limit,
    the raw JSON (default path ``benchmarks/results/<stem>-<date>.json``)."""
    ap.add_argument("--wait", type=float, default=0, help="seconds to wait for the server port")
    ap.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    add_out_argument(ap, stem)


def add_out_argument(ap: argparse.ArgumentParser, stem: str) -> None:
    """``--out [PATH]``: write the raw JSON (without PATH: ``benchmarks/results/<stem>-<date>.json``)."""
    ap.add_argument(
        "--out",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help=f"write raw JSON (default path benchmarks/results/{stem}-<date>.json)",
    )


def check_pin_client(ap: argparse.ArgumentParser, pin: str | None) -> None:
    """``--pin-client`` needs taskset: an argparse error (exit 2) without it."""
    if pin is not None and not shutil.which("taskset"):
        ap.error("--pin-client needs taskset (util-linux)")


def add_repeat_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every client N times, in N interleaved rounds, and report each "
        "one's run with the median client CPU µs/op (default 1)",
    )


def add_reset_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--no-reset",
        dest="reset",
        action="store_false",
        help="do not TRUNCATE the table (and write the read rows again) before each group of client runs",
    )


# ---------------------------------------------------------------------------------------------
# The server and the Rust reference


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


def require_server(host: str, port: int, wait: float, hint: bool = True) -> bool:
    """True once the server's port answers (up to ``wait`` s); otherwise says so on stderr."""
    if wait_for_port(host, port, wait):
        return True
    print(
        f"no server at {host}:{port}" + (" (start one with: turbocql localdb start)" if hint else ""), file=sys.stderr
    )
    return False


def listen_inodes(tables: list[str], host: str | None, port: int) -> set[str]:
    """Socket inodes listening on ``host:port`` (or on every address, at that port) in
    ``/proc/net/tcp``-format tables. Several local nodes listen on one port at different
    addresses (a cluster on 127.0.0.11-13 beside the node on 127.0.0.1): the address tells
    them apart. IPv4 hosts only; None or an unresolvable host: any address."""
    want = None
    if host is not None:
        try:
            want = socket.inet_aton(socket.gethostbyname(host))[::-1].hex().upper()
        except OSError:
            want = None
    out = set()
    for table in tables:
        for line in table.splitlines()[1:]:
            parts = line.split()
            if len(parts) < 10 or parts[3] != "0A":
                continue
            addr, _, p = parts[1].rpartition(":")
            if int(p, 16) != port:
                continue
            if want is None or len(addr) != 8 or addr in (want, "00000000"):
                out.add(f"socket:[{parts[9]}]")
    return out


def find_server_pid(port: int, host: str | None = None) -> int | None:
    """pid of the process listening on ``host:port`` (read-only look at /proc), or None."""
    tables = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                tables.append(f.read())
        except OSError:
            pass
    inodes = listen_inodes(tables, host, port)
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
        print(
            "building the Rust reference (cargo build --release -p turbocql-rust-ref)...", file=sys.stderr, flush=True
        )
        r = subprocess.run(
            ["cargo", "build", "--release", "-p", "turbocql-rust-ref"],
            cwd=ROOT,
            stdout=sys.stderr,
            stderr=sys.stderr,
        )
        if r.returncode != 0:
            return None
    return path if path.exists() else None


def server_args(host: str, port: int, keyspace: str, server_pid: int | None, rows: int | None = None) -> list[str]:
    """The options every client of a run gets: server, keyspace, (read rows), server pid."""
    common = ["--host", host, "--port", str(port), "--keyspace", keyspace]
    if rows is not None:
        common += ["--rows", str(rows)]
    if server_pid:
        common += ["--server-pid", str(server_pid)]
    return common


def rust_command(rust_bin: Path | None, common: list[str], workload: str, ops: int, extra: list[str]) -> list[str]:
    """The Rust reference's command for one workload."""
    return [str(rust_bin), *common, "--workload", workload, "--ops", str(ops), *extra]


def warm_up_server(rust_bin: Path | None, common: list[str], ops: int, pin: str | None, timeout: float) -> None:
    """Warm the server up with the Rust client, 120 in flight: ``ops`` writes and reads.

    The JVM gets 2-3x cheaper per request once warm; this also writes the read rows.
    Does nothing if ``ops`` is 0 or the Rust reference is not built.
    """
    if rust_bin is None:
        print("Rust reference unavailable: server warm-up skipped", file=sys.stderr)
        return
    if ops <= 0:
        return
    print(f"warming the server up ({ops} writes and reads, rust, 120 in flight)...", file=sys.stderr, flush=True)
    for wl in ("populate", "write", "read"):
        r = run_client(
            [str(rust_bin), *common, "--workload", wl, "--ops", str(ops), "--pattern", "concurrent", "--warmup", "0"],
            pin,
            timeout,
        )
        if "failed" in r:
            print(f"  warm-up {wl} failed: {r['failed']}", file=sys.stderr)


def reset_table(rust_bin: Path | None, common: list[str], pin: str | None, timeout: float) -> None:
    """``TRUNCATE`` the benchmark table and write the read rows again (Rust reference,
    untimed), so that every group of runs meets a table of the same size.

    Without it the table grows with every write of the run: a full run leaves millions of
    rows, the server slows down as it flushes and compacts them, and the clients measured
    late in a run meet a slower server than those measured early.
    """
    if rust_bin is None:
        return
    r = run_client([str(rust_bin), *common, "--workload", "reset", "--ops", "1", "--warmup", "0"], pin, timeout)
    if "failed" in r:
        print(f"  table reset failed: {r['failed']}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# One client, in its own process


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


def client_cmd(client: peers.Client, script: Path, extra: list[str]) -> list[str]:
    """The command of one Python client: its own interpreter, ``--driver`` and name."""
    driver = "turbocql" if client.name == "turbocql" else peers.PEERS[client.name].driver
    return [client.python, str(script), "--driver", driver, "--client-name", client.name, *extra]


def clients_meta(clients: dict) -> dict:
    """``meta["clients"]``: every Python client's interpreter and versions, or why not."""
    return {name: c.to_json() for name, c in clients.items()}


# ---------------------------------------------------------------------------------------------
# Reporting


def fmt_num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return ""
    return f"{x:,.{digits}f}"


def median_runs(results: list[dict], key, cpu: str = "cpu_us_per_op", figures=("ops_per_s",)) -> list[dict]:
    """Repeated runs (``--repeat``) collapsed: for each ``key(run)``, in first-seen order,
    the successful run with the median client CPU (field ``cpu``: µs/op, or µs/row; the lower
    middle one for an even count), carrying every run's CPU and ``figures`` in
    ``<field>_runs`` lists (in the order of the CPU figures) and ``failed_runs``; a key whose
    runs all failed keeps its first failure."""
    groups: dict = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    out = []
    for runs in groups.values():
        ok = sorted((r for r in runs if "failed" not in r), key=lambda r: r[cpu])
        if not ok:
            out.append(runs[0])
            continue
        chosen = dict(ok[(len(ok) - 1) // 2])
        if len(runs) > 1:
            for name in (cpu, *figures):
                chosen[name + "_runs"] = [r.get(name) for r in ok]
            chosen["failed_runs"] = len(runs) - len(ok)
        out.append(chosen)
    return out


def ops_line(r: dict) -> str:
    """A run's progress line: its failure, or ops/s and client CPU µs/op."""
    return r.get("failed") or f"{r['ops_per_s']:,.0f} ops/s, {r['cpu_us_per_op']:.1f} µs CPU/op"


def pin_note(pin: str | None) -> str:
    """The heading's note on ``--pin-client`` (empty without it)."""
    return f", client pinned to CPU {pin}" if pin else ""


def load_note(load_start: float) -> str:
    """The heading's note on the machine's load, at the start and now (the end)."""
    return f"1-min load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."


def unavailable_lines(clients: dict) -> str:
    notes = peers.availability_note(clients)
    return "\n".join(f"* {n}" for n in notes)


def with_unavailable(text: str, clients: dict) -> str:
    """``text`` and, below it, the clients that were not available (if any)."""
    missing = unavailable_lines(clients)
    return f"{text}\n\n{missing}" if missing else text


def run_meta(
    argv: list[str],
    load_start: float | None,
    server_pid: int | None,
    heading: str,
    clients: dict | None = None,
    **options,
) -> dict:
    """``meta`` of a runner's raw JSON: date, load, host, argv, the runner's ``options``,
    server pid, Python, the clients' interpreters (if given) and the heading, in that order."""
    meta: dict = {"date": dt.datetime.now().isoformat(timespec="seconds")}
    if load_start is not None:
        meta.update(loadavg_start=load_start, loadavg_end=os.getloadavg()[0])
    meta.update(
        host=platform.node(),
        cpus=os.cpu_count(),
        argv=argv,
        **options,
        server_pid=server_pid,
        python=platform.python_version(),
    )
    if clients is not None:
        meta["clients"] = clients_meta(clients)
    meta["heading"] = heading
    return meta


def write_json(out: str, stem: str, meta: dict, results: list[dict], lead: str = "") -> Path:
    """``--out``: the raw results as JSON at ``out`` (empty: ``results/<stem>-<date>.json``)."""
    path = Path(out) if out else HERE / "results" / f"{stem}-{dt.datetime.now():%Y-%m-%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    print(f"{lead}raw results: {path}", file=sys.stderr)
    return path
