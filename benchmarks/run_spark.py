"""turbocql's Spark source against the Spark Cassandra Connector, in one run (issue 31 item 5;
scenario ``spark`` of ``turbocql bench``, an optional one: it needs Maven, Java 17 and pyspark).

One table, ``spark_bench.rows (id bigint PRIMARY KEY, i int, t text, d double, ts timestamp)``
(and ``spark_bench.warmup``, the same, for the clients' warm-ups), and three clients, each a
local[2] SparkSession in its own process tree, one phase per process:

* ``connector``: ``benchmarks/spark_ref`` (Java 17, Spark 3.5 with Scala 2.13,
  ``com.datastax.spark:spark-cassandra-connector_2.13:3.5.1``; built with ``mvn -q package``
  on first use, which needs Maven Central once), format ``org.apache.spark.sql.cassandra``;
* ``connector-tuned`` (writes only): the same with its writer tuned for this table
  (``TUNED_WRITE_CONF``: batches grouped by replica set, 4 KiB, 32 in flight per task), given
  to ``SparkRef`` as ``--conf`` settings;
* ``turbocql``: ``clients/spark_turbocql.py`` (pyspark 4.3 from ``--python``, ``turbocql.spark``),
  format ``turbocql``.

``write``: ``--rows`` rows (1,000,000) of ``spark.range(N)`` with the same computed columns on
both sides, appended (the table TRUNCATEd before each write run; its row count checked after
it, untimed). ``read``: the whole table loaded and materialized through the ``noop`` sink, rows
counted by an ``Observation`` on the way (the same on both sides). Each client first warms up
(the same write and read of ``--warmup-rows`` rows into ``warmup``), then prints a start
marker, runs the phase, prints an end marker; at each marker it waits for the runner, which
samples the CPU time (user + system, ``/proc/PID/stat``, reaped children's included) of the
client's whole process tree (the Python driver, its JVM, the Python workers; or the one JVM)
and of the Cassandra process. Per client and phase: rows/s, client CPU µs per row, server CPU
µs per row, the tree's peak memory (the sum of its processes' PSS, sampled every 0.5 s).
``--repeat`` rounds (3), the clients' order flipping each round: writes of both clients, then
reads of both (both reads meet the table the round's last write left); the report shows the
run with the median client CPU µs/row, the JSON keeps every run. Writes
``results/spark-<date>-<time>.json``, ``.md`` and ``.png`` (``--out PATH``: the JSON there, the
others beside it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.common import find_server_pid, fmt_num, require_server, run_meta  # noqa: E402
from benchmarks.common import median_runs as _median_runs  # noqa: E402
from benchmarks.proctree import (  # noqa: E402
    CLK_TCK,
    descendants,
    process_table,
    process_ticks,
    tree_commands,
    tree_cpu_ticks,
    tree_memory_kb,
)

KEYSPACE = "spark_bench"
TABLE = "rows"
WARMUP_TABLE = "warmup"
SCHEMA = "(id bigint PRIMARY KEY, i int, t text, d double, ts timestamp)"
MARKER = "TURBOCQL-SPARK-BENCH"
CLIENTS = ("connector", "connector-tuned", "turbocql")
# The connector's writer as one would tune it for this table (one partition per row, one node):
# rows grouped into unlogged batches by replica set rather than by partition (the default,
# which leaves one row per batch here), batches of up to 4 KiB (under the server's 5 KiB
# batch_size_warn_threshold), and 32 batches in flight per task instead of 5. Writes only.
TUNED_WRITE_CONF = {
    "spark.cassandra.output.batch.grouping.key": "replica_set",
    "spark.cassandra.output.batch.size.bytes": "4096",
    "spark.cassandra.output.concurrent.writes": "32",
}
CONNECTORS = ("connector", "connector-tuned")
PHASES = ("write", "read")
SPARK_REF = HERE / "spark_ref"
CLIENT_SCRIPT = HERE / "clients" / "spark_turbocql.py"
MAIN_CLASS = "turbocql.bench.SparkRef"
# What Spark's launcher adds for Java 17 (org.apache.spark.launcher.JavaModuleOptions, Spark
# 3.5): spark-submit adds them for pyspark's JVM; SparkRef's JVM is started here.
JAVA_MODULE_OPTIONS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
    "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
    "-Djdk.reflect.useDirectMethodHandle=false",
]
# pyspark's driver JVM gets spark.driver.memory (default 1g) as -Xmx: the same here.
JAVA_HEAP = "-Xmx1g"
CLIENT_NAMES = {
    "connector": "Spark Cassandra Connector",
    "connector-tuned": "Spark Cassandra Connector, tuned writer",
    "turbocql": "turbocql.spark",
}


def runs_phase(client: str, phase: str) -> bool:
    """The tuned connector is a write setting: it writes only."""
    return client != "connector-tuned" or phase == "write"


# ---------------------------------------------------------------------------------------------
# The clients


def ensure_spark_ref(build: bool, log) -> tuple[list[str] | None, str | None]:
    """The connector client's classpath (its jar and its dependencies' jars), built with
    ``mvn -q package`` when missing or older than pom.xml or the sources; or why not."""
    jar, cp = SPARK_REF / "target" / "spark-ref.jar", SPARK_REF / "target" / "classpath.txt"
    sources = [SPARK_REF / "pom.xml", *SPARK_REF.glob("src/**/*.java")]
    stale = not jar.exists() or not cp.exists() or max(s.stat().st_mtime for s in sources) > jar.stat().st_mtime
    if stale:
        if not build:
            return None, f"{jar} is missing or stale (--no-build)"
        log("building benchmarks/spark_ref (mvn -q -B package) ...")
        try:
            p = subprocess.run(["mvn", "-q", "-B", "package"], cwd=SPARK_REF, capture_output=True, text=True)
        except OSError as e:
            return None, f"mvn: {e}"
        if p.returncode != 0:
            lines = [ln for ln in (p.stdout + p.stderr).splitlines() if "ERROR" in ln] or ["exit %d" % p.returncode]
            return None, "mvn package failed: " + lines[0][:300]
    return [str(jar), *cp.read_text().strip().split(os.pathsep)], None


def client_command(client: str, phase: str, a, classpath: list[str] | None) -> list[str]:
    args = [phase, "--rows", str(a.rows), "--host", a.host, "--port", str(a.port), "--keyspace", a.keyspace]
    args += ["--table", TABLE, "--warmup-table", WARMUP_TABLE, "--warmup-rows", str(a.warmup_rows), "--sync-stdin"]
    if client in CONNECTORS:
        if client == "connector-tuned":
            args += ["--client-name", client]
            for key, value in TUNED_WRITE_CONF.items():
                args += ["--conf", f"{key}={value}"]
        return [a.java, JAVA_HEAP, *JAVA_MODULE_OPTIONS, "-cp", os.pathsep.join(classpath or []), MAIN_CLASS, *args]
    return [a.python, str(CLIENT_SCRIPT), *args]


def _failure(stderr: str, rc: int | None) -> str:
    """The line of a client's stderr that says why it failed (an exception, else the last)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ("Error" in ln or "Exception" in ln) and not ln.startswith("at "):
            return ln[:300]
    return (lines[-1] if lines else f"exit code {rc}")[:300]


def run_client(cmd: list[str], server_pid: int | None, timeout: float, env: dict | None = None) -> dict:
    """Runs one client; at each marker line samples its tree's CPU and the server's, then lets
    it go on. Its JSON line with the runner's figures, or ``{"failed": why}``."""
    with tempfile.TemporaryFile("w+") as err:
        try:
            p = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=ROOT,
                text=True,
                bufsize=1,
                start_new_session=True,  # its own process group: a timeout kills the whole tree
                env=env,
            )
        except OSError as e:
            return {"failed": str(e)}
        timed_out = threading.Event()
        done = threading.Event()
        peak = [0]

        def kill():
            # The whole tree, by pid (pyspark's daemon leaves the process group), then the group.
            timed_out.set()
            for pid in descendants(p.pid, process_table()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        def poll_rss():
            while not done.is_set():
                peak[0] = max(peak[0], tree_memory_kb(p.pid))
                done.wait(0.5)

        timer = threading.Timer(timeout, kill)
        timer.start()
        poller = threading.Thread(target=poll_rss, daemon=True)
        poller.start()
        samples: dict[str, dict] = {}
        result = None
        try:
            for line in p.stdout:
                line = line.strip()
                if line.startswith(MARKER):
                    what = line.split()[-1]
                    ticks, procs = tree_cpu_ticks(p.pid)
                    samples[what] = {
                        "t": time.perf_counter(),
                        "ticks": ticks,
                        "processes": procs,
                        "server_ticks": process_ticks(server_pid) if server_pid else None,
                    }
                    if what == "end":
                        samples[what]["commands"] = tree_commands(p.pid)
                    try:
                        p.stdin.write("\n")
                        p.stdin.flush()
                    except OSError:
                        pass
                elif line.startswith("{"):
                    try:
                        result = json.loads(line)
                    except json.JSONDecodeError:
                        pass
            rc = p.wait()
        finally:
            timer.cancel()
            done.set()
            poller.join()
            if p.poll() is None:  # an exception here (e.g. Ctrl-C): leave nothing running
                kill()
                p.wait()
        err.seek(0)
        stderr = err.read()
    if timed_out.is_set():
        return {"failed": f"timed out after {timeout:.0f} s"}
    if rc != 0 or result is None or "start" not in samples or "end" not in samples:
        return {"failed": _failure(stderr, rc), "stderr_tail": stderr.splitlines()[-15:]}
    return with_figures(result, samples["start"], samples["end"], peak[0])


def with_figures(result: dict, start: dict, end: dict, peak_mem_kb: int, clk_tck: int = CLK_TCK) -> dict:
    """A client's JSON line with rows/s, CPU seconds and µs per row (its tree's and the
    server's, between the two samples), the tree's processes and its peak memory."""
    r = dict(result)
    rows, seconds = r["rows"], r["seconds"]
    cpu_s = (end["ticks"] - start["ticks"]) / clk_tck
    r["rows_per_s"] = round(rows / seconds, 1) if seconds > 0 else None
    r["cpu_s"] = round(cpu_s, 3)
    r["cpu_us_per_row"] = round(cpu_s / rows * 1e6, 3) if rows else None
    if start.get("server_ticks") is not None and end.get("server_ticks") is not None:
        server_s = (end["server_ticks"] - start["server_ticks"]) / clk_tck
        r["server_cpu_s"] = round(server_s, 3)
        r["server_cpu_us_per_row"] = round(server_s / rows * 1e6, 3) if rows else None
    r["sampled_seconds"] = round(end["t"] - start["t"], 3)
    r["processes"] = end["processes"]
    if end.get("commands"):
        r["process_commands"] = end["commands"]
    r["peak_mem_mb"] = round(peak_mem_kb / 1024, 1)
    return r


# ---------------------------------------------------------------------------------------------
# The table


class Setup:
    """The keyspace and tables, through turbocql in this process (schema, truncate, count)."""

    def __init__(self, host: str, port: int, keyspace: str):
        from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from turbocql.policies import RoundRobinPolicy

        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=120)
        self.keyspace = keyspace
        self.cluster = Cluster([host], port=port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        self.session = self.cluster.connect()
        self.session.execute(
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
            % keyspace
        )
        for t in (TABLE, WARMUP_TABLE):
            self.session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{t} {SCHEMA}")

    def server_version(self) -> str | None:
        row = self.session.execute("SELECT release_version FROM system.local").one()
        return row[0] if row else None

    def truncate(self) -> None:
        self.session.execute(f"TRUNCATE {self.keyspace}.{TABLE}", timeout=120)

    def count(self) -> int:
        from turbocql import bulk

        return bulk.count(self.session, self.keyspace, TABLE)

    def close(self) -> None:
        self.cluster.shutdown()


# ---------------------------------------------------------------------------------------------
# Reporting


def median_runs(results: list[dict]) -> list[dict]:
    """Per (client, phase), the run with the median client CPU µs/row (common.median_runs),
    every run's CPU, rows/s and server CPU in ``<field>_runs``."""
    return _median_runs(
        results,
        lambda r: (r["client"], r["phase"]),
        cpu="cpu_us_per_row",
        figures=("rows_per_s", "server_cpu_us_per_row"),
    )


def versions_line(results: list[dict]) -> str:
    """Both sides' versions, from their JSON lines."""
    parts = []
    c = next((r for r in results if r["client"] == "connector" and "failed" not in r), None)
    if c:
        parts.append(
            f"connector: Spark {c.get('spark_version')} (Scala {c.get('scala_version')}), "
            f"spark-cassandra-connector {c.get('connector_version')}, Java {c.get('java_version')}"
        )
    t = next((r for r in results if r["client"] == "turbocql" and "failed" not in r), None)
    if t:
        parts.append(
            f"turbocql: pyspark {t.get('pyspark_version')} (Spark {t.get('spark_version')}), "
            f"turbocql {t.get('turbocql_version')}, Python {t.get('python_version')}, Java {t.get('java_version')}"
        )
    return "; ".join(parts)


def markdown(results: list[dict], rows: int, unavailable: dict | None = None) -> str:
    """One table: each client and phase's median run, with every run's figures and the ratios
    to the connector's run of the same phase."""
    med = median_runs(results)
    out = [f"**Spark: write and read {rows:,} rows** (local[2], median run by client CPU)\n"]
    out.append(
        "| phase | client | rows | seconds | rows/s | client CPU µs/row | server CPU µs/row "
        "| peak memory MB (tree PSS) | processes | partitions | rows/s vs connector | CPU vs connector "
        "| runs: rows/s; client CPU µs/row |"
    )
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")

    def ratio(x, y):
        return "%.2f×" % (x / y) if x and y else ""

    for phase in PHASES:
        base = next((r for r in med if r["client"] == "connector" and r["phase"] == phase and "failed" not in r), None)
        for client in CLIENTS:
            r = next((r for r in med if r["client"] == client and r["phase"] == phase), None)
            if r is None:
                continue
            name = CLIENT_NAMES.get(client, client)
            if "failed" in r:
                why = str(r["failed"]).replace("|", "/")
                out.append(f"| {phase} | {name} | failed: {why} | | | | | | | | | | |")
                continue
            speeds = r.get("rows_per_s_runs", [r["rows_per_s"]])
            cpus = r.get("cpu_us_per_row_runs", [r["cpu_us_per_row"]])
            runs = "; ".join(f"{fmt_num(s)}, {fmt_num(c, 2)}" for s, c in zip(speeds, cpus, strict=True))
            if r.get("failed_runs"):
                runs += f" ({r['failed_runs']} failed)"
            out.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
                % (
                    phase,
                    name,
                    fmt_num(r["rows"]),
                    fmt_num(r["seconds"], 2),
                    fmt_num(r["rows_per_s"]),
                    fmt_num(r["cpu_us_per_row"], 2),
                    fmt_num(r.get("server_cpu_us_per_row"), 2),
                    fmt_num(r.get("peak_mem_mb"), 0),
                    r.get("processes", ""),
                    r.get("partitions", ""),
                    ratio(r["rows_per_s"], base["rows_per_s"]) if base else "",
                    ratio(r["cpu_us_per_row"], base["cpu_us_per_row"]) if base else "",
                    runs,
                )
            )
    out.append("")
    v = versions_line(results)
    if v:
        out.append(f"Versions: {v}.\n")
    out.append(
        "Client CPU: user + system of the client's whole process tree (Python driver, JVM, Python "
        "workers; or the one JVM) between the start and end markers, reaped children included; "
        "server CPU: the Cassandra process over the same interval. Read: every row through the "
        "`noop` sink, counted by an `Observation`; write: `spark.range(N)` with the same computed "
        "columns, appended. Peak memory: the sum of the tree's proportional set sizes (PSS), sampled every 0.5 s "
        "over the client's whole life."
    )
    for name, why in (unavailable or {}).items():
        out.append(f"\n- {name}: not run ({why})")
    return "\n".join(out)


def plot(results: list[dict], path: Path) -> bool:
    """Rows/s, and client and server CPU µs per row, per phase and client (median runs)."""
    med = [r for r in median_runs(results) if "failed" not in r]
    if not med:
        return False
    from benchmarks.plotting import pyplot

    plt = pyplot()
    colors = {"turbocql": "#1f77b4", "connector": "#d62728", "connector-tuned": "#ff9896"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / len(CLIENTS)
    for ax, (key, title) in zip(axes, (("rows_per_s", "rows/s"), ("cpu_us_per_row", "CPU µs per row")), strict=True):
        for k, client in enumerate(CLIENTS):
            xs, ys, server = [], [], []
            for i, phase in enumerate(PHASES):
                r = next((r for r in med if r["client"] == client and r["phase"] == phase), None)
                if r is not None:
                    xs.append(i + (k - (len(CLIENTS) - 1) / 2) * width)
                    ys.append(r[key])
                    server.append(r.get("server_cpu_us_per_row") or 0)
            if not xs:
                continue
            cpu = key != "rows_per_s"
            label = CLIENT_NAMES[client] + (" (client)" if cpu else "")
            cx = [x - width / 4 for x in xs] if cpu else xs
            bars = ax.bar(cx, ys, width / 2 if cpu else width, color=colors[client], label=label)
            ax.bar_label(bars, labels=[f"{y:,.0f}" if y >= 100 else f"{y:,.1f}" for y in ys], fontsize=7)
            if cpu:  # the server's CPU per row beside each client's, hatched
                sx = [x + width / 4 for x in xs]
                label = CLIENT_NAMES[client] + " (server)"
                sbars = ax.bar(sx, server, width / 2, color=colors[client], alpha=0.35, hatch="//", label=label)
                ax.bar_label(sbars, labels=[f"{y:,.1f}" for y in server], fontsize=7)
        ax.set_xticks(range(len(PHASES)), PHASES)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.15)
        ax.legend(fontsize=7)
    rows = med[0]["rows"]
    fig.suptitle(f"Spark, local[2]: {rows:,} rows (bigint, int, text, double, timestamp); median runs", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=int(os.environ.get("TURBOCQL_PORT", "9042")))
    ap.add_argument("--keyspace", default=KEYSPACE)
    ap.add_argument("--rows", type=int, default=None, help="rows written and read (default 1,000,000; --quick 100,000)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--warmup-rows", type=int, default=20_000, help="rows of each client's warm-up write and read")
    ap.add_argument("--repeat", type=int, default=3, metavar="N", help="rounds (default 3); the median run is shown")
    ap.add_argument(
        "--clients",
        default=",".join(CLIENTS),
        help="of connector, connector-tuned (writes only), turbocql (default all)",
    )
    ap.add_argument("--phases", default=",".join(PHASES), help="of write, read (default both)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter with turbocql and pyspark")
    ap.add_argument("--java", default="java", help="Java 17 for the connector's client")
    ap.add_argument("--no-build", action="store_true", help="do not run mvn package for benchmarks/spark_ref")
    ap.add_argument("--server-pid", type=int, default=None, help="server pid (default: found from the port)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per client process, seconds")
    ap.add_argument("--wait", type=float, default=30)
    ap.add_argument("--out", default=None, metavar="PATH", help="the JSON (default results/spark-<date>-<time>.json)")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    a.rows = a.rows or (100_000 if a.quick else 1_000_000)
    wanted = [c.strip() for c in a.clients.split(",") if c.strip()]
    phases = [p.strip() for p in a.phases.split(",") if p.strip()]
    if any(c not in CLIENTS for c in wanted) or any(p not in PHASES for p in phases):
        ap.error(f"--clients is of {', '.join(CLIENTS)}; --phases of {', '.join(PHASES)}")
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if not require_server(a.host, a.port, a.wait):
        return 2
    load_start = os.getloadavg()[0]
    server_pid = a.server_pid or find_server_pid(a.port, a.host)
    if server_pid is None:
        log("the server's pid was not found: no server CPU column")
    unavailable: dict[str, str] = {}
    classpath = None
    if any(c in wanted for c in CONNECTORS):
        classpath, why = ensure_spark_ref(not a.no_build, log)
        if classpath is None:
            for c in CONNECTORS:
                if c in wanted:
                    unavailable[c] = why or "unavailable"
                    wanted.remove(c)
    if "turbocql" in wanted:
        p = subprocess.run([a.python, "-c", "import pyspark, turbocql.spark"], capture_output=True, text=True)
        if p.returncode != 0:
            unavailable["turbocql"] = "pyspark or turbocql.spark does not import in %s: %s" % (
                a.python,
                (p.stderr.strip().splitlines() or ["?"])[-1],
            )
            wanted.remove("turbocql")
    env = dict(os.environ, PYSPARK_PYTHON=a.python, PYSPARK_DRIVER_PYTHON=a.python)
    setup = Setup(a.host, a.port, a.keyspace)
    server_version = setup.server_version()
    results: list[dict] = []
    log(f"spark: {a.rows:,} rows, {a.repeat} round(s), clients {', '.join(wanted) or 'none'}")
    try:
        for rnd in range(a.repeat):
            order = wanted if rnd % 2 == 0 else wanted[::-1]
            for phase in phases:
                for client in order:
                    if not runs_phase(client, phase):
                        continue
                    if phase == "write":
                        setup.truncate()
                    log(f"round {rnd + 1}: {client} {phase} ...")
                    r = run_client(client_command(client, phase, a, classpath), server_pid, a.timeout, env)
                    r = {"client": client, "phase": phase, "round": rnd + 1, **r}
                    if "failed" not in r:
                        if phase == "write":
                            r["table_rows"] = setup.count()
                            if r["table_rows"] != a.rows:
                                r["failed"] = f"{r['table_rows']} rows in the table where {a.rows} were written"
                        elif r["rows"] != a.rows:
                            r["failed"] = f"read {r['rows']} rows where {a.rows} were expected"
                    results.append(r)
                    log("  " + _line(r))
    finally:
        setup.close()
    meta = run_meta(
        sys.argv if argv is None else argv,
        load_start,
        server_pid,
        f"Spark: turbocql.spark and the Spark Cassandra Connector, {a.rows:,} rows written and read, local[2]",
        rows=a.rows,
        warmup_rows=a.warmup_rows,
        repeat=a.repeat,
        keyspace=a.keyspace,
        schema=f"{TABLE} {SCHEMA}",
        unavailable=unavailable,
        versions=versions_line(results),
        server_version=server_version,
    )
    meta["scenario"] = "spark"
    md = markdown(results, a.rows, unavailable)
    print(md)
    path = Path(a.out) if a.out else HERE / "results" / f"spark-{dt.datetime.now():%Y-%m-%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    md_path = path.with_suffix(".md")
    png = path.with_suffix(".png")
    plotted = False
    if not a.no_plot:
        try:
            plotted = plot(results, png)
        except ImportError:
            log("matplotlib is not installed: no plot")
    heading = (
        f"# {meta['heading']}\n\n{meta['date']}, {meta['host']}, {meta['cpus']} CPUs, Cassandra {server_version} "
        f"(pid {server_pid}); 1-min load average {load_start:.1f} at the start, {meta['loadavg_end']:.1f} at the end."
        "\n\n"
    )
    md_path.write_text(heading + md + (f"\n\n![spark]({png.name})\n" if plotted else "\n"))
    log(f"results: {path}\nreport:  {md_path}" + (f"\nplot:    {png}" if plotted else ""))
    return 0


def _line(r: dict) -> str:
    if "failed" in r:
        return f"{r['client']} {r['phase']}: failed: {r['failed']}"
    return "%s %s: %s rows in %.2f s, %s rows/s, client CPU %s µs/row, server CPU %s µs/row, peak PSS %s MB" % (
        r["client"],
        r["phase"],
        fmt_num(r["rows"]),
        r["seconds"],
        fmt_num(r["rows_per_s"]),
        fmt_num(r["cpu_us_per_row"], 2),
        fmt_num(r.get("server_cpu_us_per_row"), 2),
        r.get("peak_mem_mb"),
    )


if __name__ == "__main__":
    sys.exit(main())
