"""benchmarks/run_patterns.py: the pattern table's reference rows (no server)."""

from benchmarks import run_patterns


def _run(label, spec, wl, cpu, ops=20000.0):
    return {"label": label, "spec": spec, "workload": wl, "cpu_us_per_op": cpu, "ops_per_s": ops}


def test_unthrottled_futures_are_also_compared_at_their_own_depth():
    results = [
        _run("rust", "rust_concurrent", "write", 5.0),
        _run("rust", run_patterns.RUST_ALL_SPEC, "write", 8.0),
        _run("turbocql", "unthrottled_futures", "write", 12.0),
        _run("turbocql", "execute_concurrent", "write", 6.0),
    ]
    table = run_patterns.markdown_table([("write", "unthrottled_futures"), ("write", "execute_concurrent")], results)
    lines = table.splitlines()
    # The 120-in-flight reference heads the table; the deep one comes before the unthrottled rows only.
    assert "120 in flight" in lines[2] and "| 5.0 |" in lines[2]
    assert "every request in flight" in lines[3] and "| 8.0 |" in lines[3] and "1.60×" in lines[3]
    unthrottled = next(line for line in lines if "unthrottled futures" in line)
    assert unthrottled.rstrip(" |").endswith("2.40× (1.50× at the same depth)")
    concurrent = next(line for line in lines if "execute_concurrent" in line)
    assert concurrent.rstrip(" |").endswith("1.20×") and "same depth" not in concurrent
    assert sum("every request in flight" in line for line in lines) == 1
