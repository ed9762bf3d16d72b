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


def test_rounds_alternate_the_sides_save_each_sample_and_resume_from_the_json(tmp_path):
    import argparse
    import json

    from benchmarks.run_ab_instructions import run_rounds

    cases = make_cases("execute_concurrent", ["write", "read"], [], "sliding")
    out = tmp_path / "run.json"
    taken = []

    def take(side, case, rnd):
        taken.append((rnd, case.workload, side))
        saved = json.loads(out.read_text()) if out.exists() else None
        # Every earlier sample is on disk before the next one is measured.
        assert (
            saved is None
            or sum(len(ss) for e in saved["samples"] for k, ss in e.items() if k != "key") == len(taken) - 1
        )
        if (rnd, case.workload, side) == (1, "read", "b"):
            raise KeyboardInterrupt  # the run stopped here
        return {"round": rnd, "ir": 1000.0 * (rnd + 1), "seconds": 1.0}

    args = argparse.Namespace(rounds=2, out=out, resume=None)
    try:
        run_rounds(args, cases, ["a", "b"], take, {"m": 1})
    except KeyboardInterrupt:
        pass
    # Round 0: a then b; round 1: b then a.
    assert taken == [
        (0, "write", "a"),
        (0, "write", "b"),
        (0, "read", "a"),
        (0, "read", "b"),
        (1, "write", "b"),
        (1, "write", "a"),
        (1, "read", "b"),
    ]
    saved = json.loads(out.read_text())
    assert saved["partial"] is True and saved["meta"] == {"m": 1}

    taken.clear()

    def take_rest(side, case, rnd):
        taken.append((rnd, case.workload, side))
        return {"round": rnd, "ir": 5.0, "seconds": 0.0}

    meta: dict = {}
    samples = run_rounds(argparse.Namespace(rounds=2, out=out, resume=out), cases, ["a", "b"], take_rest, meta)
    # Only what the stopped run had not measured.
    assert taken == [(1, "read", "b"), (1, "read", "a")]
    assert all(len(ss) == 2 for by in samples.values() for ss in by.values())
    assert "seconds" in meta and len(meta["round_seconds"]) == 2
