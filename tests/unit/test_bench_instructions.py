"""benchmarks/run_instructions_vs_rust.py: each row's reference and its table (no server)."""

from benchmarks import run_instructions_vs_rust as ivr
from benchmarks.run_ab_instructions import make_cases


def test_each_row_is_compared_with_the_reference_of_its_timed_table():
    cases = make_cases("queued_futures,read_pipeline", ["write", "read"], [1, 16], "sliding")
    by_key = {c.key: c for c in cases}
    # Pattern rows: the 120-in-flight reference; sync rows: as many OS threads.
    assert ivr.rust_args(by_key[("patterns", "queued_futures", "write")]) == [
        "--pattern",
        "concurrent",
        "--concurrency",
        "120",
    ]
    assert ivr.rust_args(by_key[("sync", "16 threads", "read")]) == ["--pattern", "sync-threads", "--threads", "16"]
    assert ivr.rust_label(by_key[("sync", "1 threads", "write")]) == "rust, 1 OS threads"
    # read_pipeline has no write row.
    assert ("patterns", "read_pipeline", "write") not in by_key


def test_the_ratio_is_of_the_medians_and_failed_or_erring_samples_are_left_out():
    (case,) = make_cases("execute_concurrent", ["write"], [], "sliding")
    samples = {
        case.key: {
            "turbocql": [{"ir": 24000.0}, {"ir": 26000.0}, {"ir": 25000.0}, {"ir": 90000.0, "errors": 3}],
            "rust": [{"ir": 20000.0}, {"failed": "timed out"}],
        }
    }
    (row,) = ivr.summarise([case], samples)
    assert row["n"] == [3, 1]
    assert row["turbocql"] == 25000.0 and row["rust"] == 20000.0 and row["ratio"] == 1.25
    assert row["failed"] == "timed out"
    line = ivr.table([row])[2]
    assert "| 25,000 | 20,000 | 1.25× |" in line and line.endswith("| 3/1 |")


def test_a_row_without_samples_says_why():
    (case,) = make_cases("execute_concurrent", ["read"], [], "sliding")
    (row,) = ivr.summarise([case], {case.key: {"turbocql": [{"failed": "no node"}], "rust": []}})
    assert "ratio" not in row
    assert "failed: no node" in ivr.table([row])[2]


def test_both_scripts_read_the_same_run_options_with_their_own_defaults():
    import argparse

    import pytest

    from benchmarks.run_ab_instructions import parse_run_arguments

    args, cases = parse_run_arguments(argparse.ArgumentParser(), ["--patterns", "asyncio"], n2=8000, threads="1,16")
    assert (args.n1, args.n2, args.threads, args.port) == (2000, 8000, "1,16", 9042)
    assert {c.row for c in cases} == {"asyncio", "1 threads", "16 threads"}
    with pytest.raises(SystemExit):
        parse_run_arguments(argparse.ArgumentParser(), ["--n1", "9000"], n2=8000, threads="")
