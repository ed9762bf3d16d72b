"""Bulk load and unload, and full-table reads into Python (issue "Bulk data in and out";
scenario ``bulk`` of ``turbocql bench``).

One table of mixed types, ``bench_bulk.mixed (id int PRIMARY KEY, n bigint, name text, ts
timestamp, u uuid, score double, tags set<int>, attrs map<text, int>)``, and ``--rows`` rows
of it (1,000,000; 200,000 with ``--quick``) generated once from a seeded generator into a CSV
file (cqlsh's text forms) and a Parquet file of the same values (typed columns), kept in
``benchmarks/.data/``. Then, one process at a time:

* **load** (the table truncated before each): ``turbocql load`` from the CSV and from the
  Parquet file (rows in replica batches, its default), and from the CSV with a request per
  row (``--batch-rows 1``); ``cqlsh COPY FROM`` the CSV (cqlsh from PyPI, in its own virtualenv
  ``benchmarks/.venvs/cqlsh``); the Rust reference (``rust_ref --workload bulk-load``: the
  same CSV parsed and inserted by the ``scylla`` crate). The row count is checked after each.
* **unload** of the loaded table: ``turbocql unload`` to CSV and to Parquet, ``cqlsh COPY TO``
  CSV, the Rust reference (``--workload bulk-unload``); the rows written are counted.
* **full-table reads into Python**, one paged ``SELECT *`` (``clients/scan.py``): named
  tuples with the classic driver and with turbocql, turbocql's ``numpy_factory`` and
  ``to_arrow()``; the Rust reference decoding the same pages (``--workload scan``).

Loads and unloads are timed as whole processes (what a user waits for and pays: the
interpreter's start included, about 0.2-0.5 s of CPU, which matters little at these sizes):
wall time, CPU (user + system of the process and the worker processes it waited for, from
``wait4``), peak RSS (``VmHWM`` of the main process). Reads are timed inside the client
around the read. Prints Markdown tables; ``--out`` writes the JSON.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import peers  # noqa: E402
from benchmarks.common import find_server_pid, fmt_num, require_server, run_meta, vm_hwm_kb, write_json  # noqa: E402

KEYSPACE = "bench_bulk"
TABLE = "mixed"
COLUMNS = ["id", "n", "name", "ts", "u", "score", "tags", "attrs"]
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS %s.%s (id int PRIMARY KEY, n bigint, name text, ts timestamp, u uuid, "
    "score double, tags set<int>, attrs map<text, int>)" % (KEYSPACE, TABLE)
)
CQLSH = peers.Peer("cqlsh", "cqlsh COPY", "cqlshlib", ("cqlsh", "cassandra-driver"), ("cqlsh==6.2.2",), "cqlsh")
DATA_DIR = HERE / ".data"


# ------------------------------------------------------------------------------------ data


def generate(rows: int, data_dir: Path) -> tuple[Path, Path]:
    """The CSV and Parquet files of ``rows`` rows (made once, then reused)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    csv_path, parquet_path = data_dir / f"mixed-{rows}.csv", data_dir / f"mixed-{rows}.parquet"
    if csv_path.exists() and parquet_path.exists():
        return csv_path, parquet_path
    import pyarrow as pa
    import pyarrow.parquet as pq

    rnd = random.Random(20261124)
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    cols: dict[str, list] = {c: [] for c in COLUMNS}
    tmp = csv_path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for i in range(rows):
            ms = i * 1000 + rnd.randrange(1000)
            u = uuid.UUID(int=rnd.getrandbits(128), version=4)
            score = rnd.random() * 1000
            tags = sorted({rnd.randrange(100) for _ in range(rnd.randrange(1, 4))})
            attrs = {"k%d" % rnd.randrange(10): rnd.randrange(1000) for _ in range(rnd.randrange(1, 3))}
            n = rnd.getrandbits(63)
            name = "name-%d-%s" % (i, "x" * rnd.randrange(20))
            ts = base + dt.timedelta(milliseconds=ms)
            w.writerow(
                [
                    i,
                    n,
                    name,
                    ts.strftime("%Y-%m-%d %H:%M:%S.") + "%03d+0000" % (ms % 1000),
                    str(u),
                    repr(score),
                    "{%s}" % ", ".join(map(str, tags)),
                    "{%s}" % ", ".join("'%s': %d" % kv for kv in sorted(attrs.items())),
                ]
            )
            for c, v in zip(COLUMNS, (i, n, name, ms, u.bytes, score, tags, sorted(attrs.items())), strict=True):
                cols[c].append(v)
    table = pa.table(
        {
            "id": pa.array(cols["id"], pa.int32()),
            "n": pa.array(cols["n"], pa.int64()),
            "name": pa.array(cols["name"], pa.string()),
            "ts": pa.array(cols["ts"], pa.timestamp("ms")),
            "u": pa.array(cols["u"], pa.binary(16)),
            "score": pa.array(cols["score"], pa.float64()),
            "tags": pa.array(cols["tags"], pa.list_(pa.int32())),
            "attrs": pa.array(cols["attrs"], pa.map_(pa.string(), pa.int32())),
        }
    )
    pq.write_table(table, parquet_path)
    tmp.rename(csv_path)
    return csv_path, parquet_path


# ------------------------------------------------------------------------------------ runs


def measure(cmd: list[str], timeout: float, env: dict | None = None) -> dict:
    """Runs ``cmd``; wall seconds, CPU seconds (its own and its waited-for children's),
    peak RSS of the main process, exit code and the end of its output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        peak = [0]
        done = threading.Event()

        def poll():
            while not done.is_set():
                kb = vm_hwm_kb(f"/proc/{p.pid}/status")
                if kb:
                    peak[0] = max(peak[0], kb)
                done.wait(0.05)

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
            done.set()
            th.join()
        seconds = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return {
        "seconds": seconds,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_rss_mb": round(peak[0] / 1024, 1),
        "rc": p.returncode,
        "stdout": stdout,
        "stderr": stderr,
    }


def _result(kind, client, what, rows, m, expected=None) -> dict:
    r = {"kind": kind, "client": client, "what": what}
    if m.get("rc"):
        tail = (m["stderr"].strip().splitlines() or m["stdout"].strip().splitlines() or ["exit %d" % m["rc"]])[-1]
        r["failed"] = tail[:240]
        return r
    if expected is not None and rows != expected:
        r["failed"] = "%s rows where %s were expected" % (rows, expected)
        return r
    r.update(
        rows=rows,
        seconds=round(m["seconds"], 3),
        rows_per_s=round(rows / m["seconds"], 1),
        cpu_s=round(m["cpu_s"], 3),
        cpu_us_per_row=round(m["cpu_s"] / rows * 1e6, 3),
        peak_rss_mb=m["peak_rss_mb"],
    )
    return r


class Setup:
    """The table, through turbocql in this process (schema, truncate, count)."""

    def __init__(self, host: str, port: int):
        from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from turbocql.policies import RoundRobinPolicy

        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=120)
        self.cluster = Cluster([host], port=port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        self.session = self.cluster.connect()
        self.session.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
            % KEYSPACE
        )
        self.session.execute(SCHEMA)

    def truncate(self) -> None:
        self.session.execute("TRUNCATE %s.%s" % (KEYSPACE, TABLE), timeout=120)

    def count(self) -> int:
        from turbocql import bulk

        return bulk.count(self.session, KEYSPACE, TABLE)

    def close(self) -> None:
        self.cluster.shutdown()


def _cqlsh(venvs: Path, base_python: str, install: bool, log) -> tuple[str | None, str | None]:
    if not install and not (venvs / "cqlsh" / "bin" / "cqlsh").exists():
        return None, "no cqlsh virtualenv (--no-install)"
    py, _action, err = peers.ensure_venv(CQLSH, venvs, base_python, log)
    if py is None:
        return None, err
    exe = Path(py).parent / "cqlsh"
    return (str(exe), None) if exe.exists() else (None, "cqlsh not installed in %s" % venvs)


def _rust_has_bulk(rust: Path) -> bool:
    """Whether the Rust reference knows the bulk workloads (its option parser refuses an
    unknown one before connecting)."""
    try:
        p = subprocess.run([str(rust), "--workload", "scan", "--port", "1"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "unknown" not in (p.stderr + p.stdout)


def _csv_rows(path: Path) -> int:
    with open(path, newline="") as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)


def _summary_rows(m: dict, key: str) -> int | None:
    lines = m["stdout"].strip()
    try:
        return int(json.loads(lines)[key])
    except (ValueError, KeyError, TypeError):
        return None


def _rust_json(m: dict) -> dict:
    lines = [ln for ln in m["stdout"].splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=int(os.environ.get("TURBOCQL_PORT", "9042")))
    ap.add_argument("--rows", type=int, default=None, help="rows of the table (default 1,000,000; --quick 200,000)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--clients", default="turbocql,cqlsh,rust,classic", help="of turbocql, cqlsh, rust, classic")
    ap.add_argument("--python", default=sys.executable, help="turbocql's interpreter")
    ap.add_argument("--rust-bin", default=str(HERE.parent / "target" / "release" / "turbocql-rust-ref"))
    ap.add_argument("--venvs-dir", default=str(peers.DEFAULT_VENVS_DIR))
    ap.add_argument("--classic-python", default=None)
    ap.add_argument("--no-install", action="store_true", help="do not create the peers' virtualenvs")
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--concurrency", type=int, default=256, help="writes in flight of turbocql load and the Rust load")
    ap.add_argument("--unload-concurrency", type=int, default=4, help="token ranges read at once by the unloaders")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per process")
    ap.add_argument("--out", nargs="?", const="", default=None, help="write the JSON (default results/bulk-DATE.json)")
    a = ap.parse_args(argv)
    rows = a.rows or (200_000 if a.quick else 1_000_000)
    wanted = [c.strip() for c in a.clients.split(",") if c.strip()]
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if not require_server(a.host, a.port, 30):
        return 2
    load_start = os.getloadavg()[0]
    server_pid = find_server_pid(a.port, a.host)
    log(f"bulk: {rows:,} rows; generating the data files (once) ...")
    csv_path, parquet_path = generate(rows, Path(a.data_dir))
    unavailable: dict[str, str] = {}
    cqlsh = None
    if "cqlsh" in wanted:
        cqlsh, why = _cqlsh(Path(a.venvs_dir), sys.executable, not a.no_install, log)
        if cqlsh is None:
            unavailable["cqlsh"] = why or "unavailable"
    rust = Path(a.rust_bin) if "rust" in wanted else None
    if rust is not None and not rust.exists():
        unavailable["rust"] = "no %s (cargo build --release -p turbocql-rust-ref)" % rust
        rust = None
    elif rust is not None and not _rust_has_bulk(rust):
        unavailable["rust"] = "this build of the Rust reference has no bulk workloads (bulk-load, bulk-unload, scan)"
        rust = None
    classic_py = None
    if "classic" in wanted:
        resolved = peers.resolve(
            ["classic"],
            turbocql_python=a.python,
            explicit={"classic": a.classic_python},
            venvs_dir=a.venvs_dir,
            install=not a.no_install,
            log=log,
        )
        c = resolved.get("classic")
        if c is not None and c.available:
            classic_py = c.python
        else:
            unavailable["classic"] = c.reason if c is not None else "unavailable"
    setup = Setup(a.host, a.port)
    results: list[dict] = []
    common_cli = ["--host", a.host, "--port", str(a.port)]
    # As many tokio workers as turbocql's engine runs (TURBOCQL_IO_THREADS, default 1), so that
    # both sides have the same threads to spread the I/O over.
    rust_workers = ["--tokio-workers", os.environ.get("TURBOCQL_IO_THREADS", "1")]
    tmp = Path(tempfile.mkdtemp(prefix="turbocql-bulk-"))
    try:
        # ---- loads
        loads = []
        if "turbocql" in wanted:
            for label, path in (("CSV", csv_path), ("Parquet", parquet_path)):
                cmd = [a.python, "-m", "turbocql", "load", "-k", KEYSPACE, "-t", TABLE, "-f", str(path)]
                cmd += [*common_cli, "--quiet", "--summary-json", "-", "--bad-rows", str(tmp / "bad.jsonl")]
                cmd += ["--concurrency", str(a.concurrency), "--max-errors", "0"]
                loads.append(("turbocql load", label, cmd, "loaded"))
            # A request per row (no replica batches), as the Rust reference and COPY send them.
            cmd = [a.python, "-m", "turbocql", "load", "-k", KEYSPACE, "-t", TABLE, "-f", str(csv_path)]
            cmd += [*common_cli, "--quiet", "--summary-json", "-", "--bad-rows", str(tmp / "bad.jsonl")]
            cmd += ["--concurrency", str(a.concurrency), "--max-errors", "0", "--batch-rows", "1"]
            loads.append(("turbocql load --batch-rows 1", "CSV", cmd, "loaded"))
        if cqlsh:
            copy = "COPY %s.%s (%s) FROM '%s' WITH HEADER = true" % (KEYSPACE, TABLE, ", ".join(COLUMNS), csv_path)
            loads.append(
                ("cqlsh COPY FROM", "CSV", [cqlsh, a.host, str(a.port), "--request-timeout", "120", "-e", copy], None)
            )
        if rust:
            cmd = [str(rust), *common_cli, "--keyspace", KEYSPACE, "--table", TABLE, "--workload", "bulk-load"]
            cmd += ["--file", str(csv_path), "--concurrency", str(a.concurrency), *rust_workers]
            loads.append(("Rust reference", "CSV", cmd, "rust"))
        for client, label, cmd, key in loads:
            setup.truncate()
            log(f"load: {client} from {label} ...")
            m = measure(cmd, a.timeout)
            counted = setup.count() if not m["rc"] else None
            r = _result("load", client, label, counted, m, expected=rows)
            if key == "rust" and "failed" not in r:
                r["in_process"] = _rust_json(m)
            results.append(r)
            log("  " + _line(r))
        if setup.count() != rows:  # the unloads need the whole table
            setup.truncate()
            m = measure(
                [
                    a.python,
                    "-m",
                    "turbocql",
                    "load",
                    "-k",
                    KEYSPACE,
                    "-t",
                    TABLE,
                    "-f",
                    str(csv_path),
                    *common_cli,
                    "--quiet",
                ],
                a.timeout,
            )
            if m["rc"]:
                raise SystemExit("could not load the table for the unloads: " + m["stderr"][-300:])
        # ---- unloads
        if "turbocql" in wanted:
            for label, ext in (("CSV", "csv"), ("Parquet", "parquet")):
                out = tmp / ("unload." + ext)
                cmd = [a.python, "-m", "turbocql", "unload", "-k", KEYSPACE, "-t", TABLE, "-o", str(out), *common_cli]
                cmd += ["--quiet", "--summary-json", "-", "--concurrency", str(a.unload_concurrency)]
                log(f"unload: turbocql to {label} ...")
                m = measure(cmd, a.timeout)
                n = _summary_rows(m, "rows") if not m["rc"] else None
                results.append(_result("unload", "turbocql unload", label, n, m, expected=rows))
                log("  " + _line(results[-1]))
                out.unlink(missing_ok=True)
        if cqlsh:
            out = tmp / "copy.csv"
            copy = "COPY %s.%s (%s) TO '%s' WITH HEADER = true" % (KEYSPACE, TABLE, ", ".join(COLUMNS), out)
            log("unload: cqlsh COPY TO ...")
            m = measure([cqlsh, a.host, str(a.port), "--request-timeout", "120", "-e", copy], a.timeout)
            n = _csv_rows(out) if not m["rc"] and out.exists() else None
            results.append(_result("unload", "cqlsh COPY TO", "CSV", n, m, expected=rows))
            log("  " + _line(results[-1]))
            out.unlink(missing_ok=True)
        if rust:
            out = tmp / "rust.csv"
            cmd = [str(rust), *common_cli, "--keyspace", KEYSPACE, "--table", TABLE, "--workload", "bulk-unload"]
            cmd += [
                "--file",
                str(out),
                "--ranges",
                str(max(64, 8 * a.unload_concurrency)),
                "--concurrency",
                str(a.unload_concurrency),
                *rust_workers,
            ]
            log("unload: Rust reference ...")
            m = measure(cmd, a.timeout)
            n = _csv_rows(out) if not m["rc"] and out.exists() else None
            results.append(_result("unload", "Rust reference", "CSV", n, m, expected=rows))
            if "failed" not in results[-1]:
                results[-1]["in_process"] = _rust_json(m)
            log("  " + _line(results[-1]))
            out.unlink(missing_ok=True)
        # ---- full-table reads into Python
        scan = HERE / "clients" / "scan.py"
        reads = []
        if classic_py:
            reads.append(
                ("classic driver", "named tuples", [classic_py, str(scan), "--driver", "cassandra", "--shape", "named"])
            )
        if "turbocql" in wanted:
            for shape, label in (("named", "named tuples"), ("numpy", "numpy_factory"), ("arrow", "to_arrow()")):
                reads.append(("turbocql", label, [a.python, str(scan), "--driver", "turbocql", "--shape", shape]))
        for client, label, cmd in reads:
            log(f"read: {client}, {label} ...")
            m = measure([*cmd, *common_cli, "--keyspace", KEYSPACE, "--table", TABLE], a.timeout)
            r = {"kind": "read", "client": client, "what": label}
            inner = _rust_json(m) if not m["rc"] else {}
            if m["rc"] or "rows" not in inner:
                r["failed"] = (m["stderr"].strip().splitlines() or ["exit %d" % m["rc"]])[-1][:240]
            elif inner["rows"] != rows:
                r["failed"] = "%s rows where %s were expected" % (inner["rows"], rows)
            else:
                r.update(
                    {k: inner[k] for k in ("rows", "seconds", "rows_per_s", "cpu_us_per_row")},
                    peak_rss_mb=m["peak_rss_mb"],
                )
            results.append(r)
            log("  " + _line(r))
        if rust:
            cmd = [
                str(rust),
                *common_cli,
                "--keyspace",
                KEYSPACE,
                "--table",
                TABLE,
                "--workload",
                "scan",
                "--ranges",
                "1",
                "--concurrency",
                "1",
                *rust_workers,
            ]
            log("read: Rust reference ...")
            m = measure(cmd, a.timeout)
            inner = _rust_json(m) if not m["rc"] else {}
            r = {"kind": "read", "client": "Rust reference", "what": "typed rows"}
            if m["rc"] or inner.get("rows") != rows:
                r["failed"] = (m["stderr"].strip().splitlines() or ["rows: %s" % inner.get("rows")])[-1][:240]
            else:
                r.update(
                    rows=inner["rows"],
                    seconds=inner.get("seconds"),
                    rows_per_s=inner.get("rows_per_s"),
                    cpu_us_per_row=inner.get("cpu_us_per_row"),
                    peak_rss_mb=m["peak_rss_mb"],
                )
            results.append(r)
            log("  " + _line(r))
    finally:
        setup.close()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        server_pid,
        f"Bulk load, unload and full-table reads: {rows:,} rows of {TABLE}",
        rows=rows,
        unavailable=unavailable,
    )
    print(markdown(results, rows, unavailable))
    if a.out is not None:
        write_json(a.out, "bulk", meta, results)
    # Failed rows are in the results (and the report): the run itself went through.
    return 0


def _line(r: dict) -> str:
    if "failed" in r:
        return "%s %s: failed: %s" % (r["client"], r["what"], r["failed"])
    return "%s %s: %s rows/s, %s µs CPU/row, peak RSS %s MB" % (
        r["client"],
        r["what"],
        fmt_num(r["rows_per_s"]),
        fmt_num(r["cpu_us_per_row"], 2),
        r.get("peak_rss_mb"),
    )


def markdown(results: list[dict], rows: int, unavailable: dict | None = None) -> str:
    """The three tables: loads and unloads beside cqlsh COPY and the Rust reference, reads
    beside the classic driver's named tuples and the Rust reference."""
    out = []
    for kind, title, base_client in (
        ("load", "Load", "cqlsh COPY FROM"),
        ("unload", "Unload", "cqlsh COPY TO"),
        ("read", "Full-table read into Python", "classic driver"),
    ):
        rs = [r for r in results if r["kind"] == kind]
        if not rs:
            continue
        base = next((r for r in rs if r["client"] == base_client and "failed" not in r), None)
        rust = next((r for r in rs if r["client"] == "Rust reference" and "failed" not in r), None)
        vs = "cqlsh COPY" if kind != "read" else "classic named tuples"
        out.append(f"**{title}**, {rows:,} rows\n")
        column = {"load": "from", "unload": "to"}.get(kind, "as")
        out.append(
            f"| client | {column} | rows/s | client CPU µs/row | peak RSS MB "
            f"| rows/s vs {vs} | CPU vs {vs} | CPU vs Rust |"
        )
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rs:
            if "failed" in r:
                out.append(f"| {r['client']} | {r['what']} | failed: {r['failed'].replace('|', '/')} | | | | | |")
                continue
            ratio = lambda x, y: "%.2f×" % (x / y) if x and y else ""  # noqa: E731
            out.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s |"
                % (
                    r["client"],
                    r["what"],
                    fmt_num(r["rows_per_s"]),
                    fmt_num(r["cpu_us_per_row"], 2),
                    fmt_num(r.get("peak_rss_mb"), 1),
                    ratio(r["rows_per_s"], base["rows_per_s"]) if base else "",
                    ratio(r["cpu_us_per_row"], base["cpu_us_per_row"]) if base else "",
                    ratio(r["cpu_us_per_row"], rust["cpu_us_per_row"]) if rust else "",
                )
            )
        out.append("")
    for name, why in (unavailable or {}).items():
        out.append(f"- {name}: not run ({why})")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
