"""The `spark` benchmark without a server or Spark: the /proc process-tree CPU
sampler, its figures and report table, and the two clients' shared column expressions."""

import argparse
import re
from pathlib import Path

import pytest

from benchmarks import proctree, run_spark
from benchmarks.clients import spark_turbocql

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _stat(pid, comm, ppid, utime, stime, cutime=0, cstime=0):
    # Fields 1..17 of /proc/PID/stat, then the rest (zeros).
    head = f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 100 0 0 0"
    return f"{head} {utime} {stime} {cutime} {cstime} 20 0 4 0 " + " ".join(["0"] * 30) + "\n"


def _fake_proc(tmp_path, procs):
    """procs: {pid: (comm, ppid, utime, stime, cutime, cstime, rss_kb)}; a process with an
    odd pid also has a smaps_rollup, with a PSS of half its RSS."""
    for pid, (comm, ppid, ut, st, cut, cst, rss) in procs.items():
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "stat").write_text(_stat(pid, comm, ppid, ut, st, cut, cst))
        (d / "status").write_text(f"Name:\t{comm}\nVmHWM:\t{rss * 2} kB\nVmRSS:\t{rss} kB\n")
        if pid % 2:
            (d / "smaps_rollup").write_text(f"00400000-7ff [rollup]\nRss:  {rss} kB\nPss:  {rss // 2} kB\n")
    (tmp_path / "self").mkdir()  # not a pid: skipped
    return str(tmp_path)


def test_parse_stat_counts_fields_from_the_last_parenthesis():
    line = _stat(42, "java (x) y)", 7, 100, 20, 5, 1)
    assert proctree.parse_stat(line) == (7, 120, 6)


def test_tree_cpu_sums_the_client_tree_with_reaped_children_and_nothing_else(tmp_path):
    proc = _fake_proc(
        tmp_path,
        {
            1: ("init", 0, 1000, 1000, 0, 0, 10),
            100: ("python3", 1, 50, 10, 0, 0, 100),  # the client
            101: ("java", 100, 400, 40, 0, 0, 1000),  # its JVM
            102: ("python3 -m pyspark.daemon", 101, 5, 1, 30, 4, 50),  # reaped workers' time
            103: ("python3", 102, 60, 6, 0, 0, 70),  # a live worker
            200: ("cassandra", 1, 9000, 900, 0, 0, 4000),  # not in the tree
        },
    )
    ticks, n = proctree.tree_cpu_ticks(100, proc)
    assert n == 4
    assert ticks == 60 + 440 + (6 + 34) + 66
    assert proctree.descendants(100, proctree.process_table(proc))[0] == 100
    assert proctree.tree_memory_kb(100, proc) == 100 + 1000 // 2 + 50 + 70 // 2  # PSS where known
    assert proctree.tree_commands(100, proc) == {"python3": 2, "java": 1, "python3 -m pyspark.daemon": 1}
    assert proctree.process_ticks(200, proc) == 9900
    assert proctree.process_ticks(999, proc) is None
    assert proctree.tree_cpu_ticks(999, proc) == (0, 0)  # gone


def test_with_figures_divides_the_sampled_cpu_by_the_rows():
    start = {"t": 10.0, "ticks": 1000, "processes": 4, "server_ticks": 5000}
    end = {"t": 12.5, "ticks": 1300, "processes": 5, "server_ticks": 5500}
    end["commands"] = {"java": 1}
    r = run_spark.with_figures({"rows": 100_000, "seconds": 2.5}, start, end, 2048 * 1024, clk_tck=100)
    assert r["rows_per_s"] == 40_000
    assert r["cpu_s"] == 3.0 and r["cpu_us_per_row"] == 30.0
    assert r["server_cpu_s"] == 5.0 and r["server_cpu_us_per_row"] == 50.0
    assert r["processes"] == 5 and r["peak_mem_mb"] == 2048 and r["sampled_seconds"] == 2.5
    assert r["process_commands"] == {"java": 1}


def _r(client, phase, rnd, rows_per_s, cpu, server=10.0):
    return {
        "client": client,
        "phase": phase,
        "round": rnd,
        "rows": 1000,
        "seconds": 1000 / rows_per_s,
        "rows_per_s": rows_per_s,
        "cpu_us_per_row": cpu,
        "server_cpu_us_per_row": server,
        "peak_mem_mb": 900.0,
        "processes": 3,
        "partitions": 2,
    }


def test_median_run_and_table_with_ratios_to_the_connector():
    results = [
        _r("connector", "write", 1, 10000, 40.0),
        _r("turbocql", "write", 1, 20000, 12.0),
        _r("turbocql", "write", 2, 18000, 10.0),
        _r("connector", "write", 2, 9000, 50.0),
        _r("turbocql", "write", 3, 25000, 14.0),
        _r("connector", "write", 3, 11000, 30.0),
        _r("connector", "read", 1, 50000, 8.0),
        {"client": "turbocql", "phase": "read", "round": 1, "failed": "Py4JError | boom"},
    ]
    med = run_spark.median_runs(results)
    tw = next(r for r in med if r["client"] == "turbocql" and r["phase"] == "write")
    assert tw["round"] == 1 and tw["cpu_us_per_row_runs"] == [10.0, 12.0, 14.0]
    assert tw["rows_per_s_runs"] == [18000, 20000, 25000] and tw["failed_runs"] == 0
    cw = next(r for r in med if r["client"] == "connector" and r["phase"] == "write")
    assert cw["cpu_us_per_row"] == 40.0
    md = run_spark.markdown(results, 1000, {"connector": "mvn package failed"})
    assert (
        "| write | turbocql.spark | 1,000 | 0.05 | 20,000 | 12.00 | 10.00 | 900 | 3 | 2 | 2.00× | 0.30× "
        "| 18,000, 10.00; 20,000, 12.00; 25,000, 14.00 |" in md
    )
    assert "| write | Spark Cassandra Connector | 1,000 | 0.10 | 10,000 | 40.00 |" in md
    assert "| read | turbocql.spark | failed: Py4JError / boom |" in md  # a pipe cannot break the table
    assert md.index("| write |") < md.index("| read |")
    assert "- connector: not run (mvn package failed)" in md


def test_versions_line_names_both_sides():
    results = [
        dict(
            _r("connector", "write", 1, 1, 1),
            spark_version="3.5.8",
            scala_version="2.13.13",
            connector_version="3.5.1",
            java_version="17.0.15",
        ),
        dict(
            _r("turbocql", "write", 1, 1, 1),
            spark_version="4.3.0",
            pyspark_version="4.3.0",
            turbocql_version="0.1.0",
            python_version="3.11.7",
            java_version="17.0.15",
        ),
    ]
    line = run_spark.versions_line(results)
    assert "Spark 3.5.8 (Scala 2.13.13), spark-cassandra-connector 3.5.1, Java 17.0.15" in line
    assert "pyspark 4.3.0 (Spark 4.3.0), turbocql 0.1.0" in line


def test_both_clients_compute_the_same_columns():
    java = (BENCH / "spark_ref" / "src" / "main" / "java" / "turbocql" / "bench" / "SparkRef.java").read_text()
    block = java[java.index("COLUMNS = {") : java.index("};", java.index("COLUMNS = {"))]
    java_columns = tuple(s.encode().decode("unicode_escape") for s in re.findall(r'"((?:[^"\\]|\\.)*)"', block))
    assert java_columns == spark_turbocql.COLUMNS
    assert [c.rsplit(" AS ", 1)[-1] for c in java_columns] == ["id", "i", "t", "d", "ts"]
    for name in ("id", "i", "t", "d", "ts"):
        assert f"{name} " in run_spark.SCHEMA
    assert spark_turbocql.MARKER == run_spark.MARKER and f'MARKER = "{run_spark.MARKER}"' in java


def test_client_commands():
    a = argparse.Namespace(
        rows=2000, host="127.0.0.1", port=9042, keyspace="spark_bench", warmup_rows=500, java="java", python="py"
    )
    java = run_spark.client_command("connector", "read", a, ["/x/spark-ref.jar", "/m2/a.jar"])
    assert java[:2] == ["java", "-Xmx1g"] and "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED" in java
    assert java[java.index("-cp") + 1] == "/x/spark-ref.jar:/m2/a.jar"
    assert java[java.index(run_spark.MAIN_CLASS) + 1] == "read" and java[-1] == "--sync-stdin"
    py = run_spark.client_command("turbocql", "write", a, None)
    assert py[0] == "py" and py[1].endswith("clients/spark_turbocql.py") and py[2] == "write"
    assert py[py.index("--rows") + 1] == "2000" and py[py.index("--warmup-rows") + 1] == "500"


def test_failure_line_prefers_the_exception():
    err = "INFO starting\njava.io.IOException: Failed to open native connection\n\tat a.b(C.java:1)\n\tat d\n"
    assert run_spark._failure(err, 1) == "java.io.IOException: Failed to open native connection"
    assert run_spark._failure("", 3) == "exit code 3"


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "spark.png"
    results = [_r("connector", "write", 1, 10000, 40.0), _r("turbocql", "write", 1, 20000, 12.0)]
    results.append(_r("turbocql", "read", 1, 80000, 5.0))
    assert run_spark.plot(results, path) and path.stat().st_size > 1000
    assert not run_spark.plot([{"client": "turbocql", "phase": "read", "failed": "x"}], tmp_path / "none.png")


def test_the_tuned_connector_writes_with_its_settings_beside_the_defaults():
    import argparse

    a = argparse.Namespace(
        rows=1000, host="127.0.0.1", port=9042, keyspace="ks", warmup_rows=10, java="java", python="python"
    )
    plain = run_spark.client_command("connector", "write", a, ["x.jar"])
    tuned = run_spark.client_command("connector-tuned", "write", a, ["x.jar"])
    assert "--conf" not in plain and "--client-name" not in plain
    assert tuned[: len(plain)] == plain
    extra = tuned[len(plain) :]
    assert extra[:2] == ["--client-name", "connector-tuned"]
    confs = dict(v.split("=", 1) for k, v in zip(extra[2::2], extra[3::2], strict=True) if k == "--conf")
    assert confs == run_spark.TUNED_WRITE_CONF
    assert confs["spark.cassandra.output.batch.grouping.key"] == "replica_set"
    assert run_spark.runs_phase("connector-tuned", "write") and not run_spark.runs_phase("connector-tuned", "read")
    assert run_spark.runs_phase("connector", "read") and run_spark.runs_phase("turbocql", "read")
    results = [_r("connector", "write", 1, 10000, 40.0), _r("connector-tuned", "write", 1, 20000, 20.0)]
    md = run_spark.markdown(results, 1000)
    assert "| write | Spark Cassandra Connector, tuned writer | 1,000 |" in md
    tuned_row = next(line for line in md.splitlines() if "tuned writer" in line)
    assert "| 2.00× | 0.50× |" in tuned_row
