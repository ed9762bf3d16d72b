"""The `bulk` benchmark scenario without a server: run_bulk.py's tables and its data files."""

import csv

import pytest

from benchmarks import run_bulk


def _r(kind, client, what, rows_per_s, cpu):
    return {
        "kind": kind,
        "client": client,
        "what": what,
        "rows": 1000,
        "rows_per_s": rows_per_s,
        "cpu_us_per_row": cpu,
        "peak_rss_mb": 50.0,
    }


def test_tables_put_each_row_beside_cqlsh_and_the_rust_reference():
    results = [
        _r("load", "turbocql load", "CSV", 40000, 8.0),
        _r("load", "cqlsh COPY FROM", "CSV", 5000, 80.0),
        _r("load", "Rust reference", "CSV", 50000, 4.0),
        {"kind": "unload", "client": "cqlsh COPY TO", "what": "CSV", "failed": "no | cqlsh"},
        _r("unload", "turbocql unload", "CSV", 100000, 1.0),
        _r("read", "classic driver", "named tuples", 20000, 40.0),
        _r("read", "turbocql", "to_arrow()", 400000, 0.5),
    ]
    md = run_bulk.markdown(results, 1000, {"dsbulk": "not resolved"})
    load = md.split("**Unload**")[0]
    assert "| turbocql load | CSV | 40,000 | 8.00 | 50.0 | 8.00× | 0.10× | 2.00× |" in load
    assert "| Rust reference | CSV | 50,000 | 4.00 | 50.0 | 10.00× | 0.05× | 1.00× |" in load
    assert "failed: no / cqlsh" in md  # a pipe cannot break the table
    assert "| turbocql | to_arrow() | 400,000 | 0.50 | 50.0 | 20.00× | 0.01× |  |" in md
    assert "- dsbulk: not run (not resolved)" in md


def test_generated_files_hold_the_same_rows(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    csv_path, parquet_path = run_bulk.generate(50, tmp_path)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    table = pq.read_table(parquet_path)
    assert len(rows) == table.num_rows == 50
    assert [int(r["id"]) for r in rows] == table.column("id").to_pylist()
    assert rows[3]["ts"].endswith("+0000") and rows[3]["tags"].startswith("{")
    # Made once: the second call reuses the files.
    mtime = csv_path.stat().st_mtime_ns
    assert run_bulk.generate(50, tmp_path) == (csv_path, parquet_path) and csv_path.stat().st_mtime_ns == mtime
