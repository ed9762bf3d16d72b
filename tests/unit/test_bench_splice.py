"""Benchmarks like for like (issue 32), without a server: a rerun spliced into a day's JSON
is stamped and the tables mark its cells; the connections runners change kernel settings
only when asked (--tune-sysctls) and say which settings and pool fill time a run had; the
classic driver's rows say that its N connections go to N hosts."""

import argparse
from pathlib import Path

import pytest

from benchmarks import run_connections as rc
from benchmarks import run_cql_connections as rcc
from benchmarks import run_ingest, splice

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(client, model, n, rate, **extra):
    return {
        "kind": "run",
        "client": client,
        "model": model,
        "connections": n,
        "msgs_per_s": rate,
        "p50_us": 100.0,
        "p95_us": 200.0,
        "cpu_cores": 0.9,
        "user_share": 0.6,
        "errors": 0,
        **extra,
    }


DAY = {
    "meta": {"date": "2026-11-26T10:00:00", "argv": ["run"]},
    "results": [
        _run("turbocql", "execute_concurrent", 10, 1000.0),
        _run("turbocql", "execute_concurrent", 100, 2000.0),
        _run("classic", "default", 10, 100.0),
    ],
}
RERUN = {
    "meta": {"date": "2026-11-26T11:00:00", "argv": ["run", "--connections", "10"]},
    "results": [_run("turbocql", "execute_concurrent", 10, 1500.0)],
}


def test_a_spliced_rerun_replaces_its_cells_and_is_stamped():
    out = splice.splice(DAY, RERUN, "disturbed by other work")
    by = {(r["client"], r["connections"]): r for r in out["results"]}
    assert by[("turbocql", 10)]["msgs_per_s"] == 1500.0
    assert by[("turbocql", 10)]["spliced"] == {"started": "2026-11-26T11:00:00", "argv": RERUN["meta"]["argv"]}
    assert "spliced" not in by[("turbocql", 100)] and "spliced" not in by[("classic", 10)]
    assert len(out["results"]) == 3
    (rerun,) = out["meta"]["reruns"]
    assert rerun["why"] == "disturbed by other work" and rerun["key"] == ["client", "model", "connections", "kind"]
    assert "spliced" not in DAY["results"][0]  # pure


def test_splice_refuses_what_would_hide_a_difference():
    new_row = {"meta": {}, "results": [_run("acsylla", "asyncio", 10, 1.0)]}
    with pytest.raises(ValueError, match="cells the day's run does not"):
        splice.splice(DAY, new_row, "why")
    assert splice.splice(DAY, new_row, "a row measured later", add=True)["results"][-1]["spliced"]
    with pytest.raises(ValueError, match="--why"):
        splice.splice(DAY, RERUN, " ")
    with pytest.raises(ValueError, match="no results"):
        splice.splice(DAY, {"results": []}, "why")


def test_the_connections_tables_mark_spliced_cells():
    out = splice.splice(DAY, RERUN, "disturbed")
    md = rcc.markdown(out["results"], [10, 100], 5, 1, 1)
    row = next(line for line in md.splitlines() if line.startswith("| turbocql | execute_concurrent |"))
    cells = row.split(" | ")
    assert "†" in cells[2] and "†" not in cells[5]
    assert rc.SPLICED_NOTE in md
    assert rc.SPLICED_NOTE not in rcc.markdown(DAY["results"], [10, 100], 5, 1, 1)
    # the classic driver's row says its N connections go to N hosts
    assert "| classic driver (1 connection to each of N hosts) | default |" in md


def test_the_ingest_table_marks_spliced_rows():
    def result(client, model, rate, **extra):
        phase = {"records_per_s": rate, "records": 10, "seconds": 1.0, "errors": 0}
        return {
            "client": client,
            "model": model,
            "pool": 15,
            "phases": {"geo": phase, "elements": phase},
            "cpu_us_per_record": 5.0,
            "cpu_cores": 0.9,
            "user_share": 0.8,
            **extra,
        }

    rows = [result("turbocql", "bulk", 100.0), result("classic", "bulk", 50.0, spliced={"started": "x"})]
    md = run_ingest.markdown(rows, [15], 1000)
    classic = next(line for line in md.splitlines() if line.startswith("| classic driver | bulk"))
    turbo = next(line for line in md.splitlines() if line.startswith("| turbocql | bulk"))
    assert "†" in classic and "†" not in turbo and rc.SPLICED_NOTE in md


def _settings(argv):
    ap = argparse.ArgumentParser()
    rc.add_run_arguments(ap, rc.MODEL_KEYS, "the echo server", "bins", "connections")
    a = ap.parse_args(argv)
    rc.run_settings(ap, a, rc.parse_models)
    return a


def test_kernel_settings_change_only_when_asked():
    a = _settings([])
    assert a.port_range is None and a.tw_buckets is None
    # with nothing to set, run_sysctls touches nothing
    assert (
        rc.run_sysctl_values(a.port_range, a.tw_buckets, lambda name: "32768 60999" if "port" in name else "262144")
        == {}
    )
    a = _settings(["--tune-sysctls"])
    assert a.port_range == (10240, 65535) and a.tw_buckets == 1024
    a = _settings(["--tune-sysctls", "--max-tw-buckets", "keep"])
    assert a.port_range == (10240, 65535) and a.tw_buckets is None


def test_the_cql_table_says_the_kernel_settings_and_pool_fill():
    results = [_run("turbocql", "execute_concurrent", 100, 1000.0, pool_fill_s=1.25)]
    kept = {"sysctl": {rc.PORT_RANGE_SYSCTL: "32768 60999", rc.TW_BUCKETS_SYSCTL: "262144"}, "sysctls_set": {}}
    md = rcc.markdown(results, [100], 5, 1, 1, kernel=kept)
    assert (
        "Pool fill (until the server counted every connection, median): turbocql execute_concurrent 1.2 s at 100" in md
    )
    assert "Kernel settings as the machine had them (`net.ipv4.ip_local_port_range` 32768 60999" in md
    tuned = {
        "sysctl": kept["sysctl"],
        "sysctls_set": {rc.PORT_RANGE_SYSCTL: {"before": "32768 60999", "during": "10240 65535"}},
    }
    assert "`net.ipv4.ip_local_port_range` 32768 60999 → 10240 65535" in rcc.markdown(
        results, [100], 5, 1, 1, kernel=tuned
    )


def test_the_ping_pong_table_says_the_kernel_settings_too():
    results = [_run("python", "selectors", 10, 1000.0)]
    kept = {"sysctl": {rc.PORT_RANGE_SYSCTL: "32768 60999", rc.TW_BUCKETS_SYSCTL: "262144"}, "sysctls_set": {}}
    md = rc.markdown(results, [10], 5, 1, 1, kernel=kept)
    assert md.rstrip().endswith("`--tune-sysctls` widens the first and caps the second.")
    assert "Kernel settings" not in rc.markdown(results, [10], 5, 1, 1)
