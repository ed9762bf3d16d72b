"""benchmarks/common.py: the runners' shared options, bookkeeping and raw JSON (no server)."""

import argparse
import importlib
import json
from pathlib import Path

import pytest

from benchmarks import common, run_sync

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_common_options_parse_as_each_runner_had_them():
    ap = argparse.ArgumentParser()
    common.add_server_arguments(ap)
    common.add_client_arguments(ap, per="row")
    common.add_run_arguments(ap, "vectors", 3600)
    a = ap.parse_args([])
    assert (a.host, a.port, a.keyspace) == ("127.0.0.1", 9042, "turbocql_bench")
    assert (a.pin_client, a.server_pid, a.rust_bin, a.build) == (None, None, common.DEFAULT_RUST_BIN, False)
    assert (a.wait, a.timeout, a.out) == (0, 3600, None)
    assert ap.parse_args(["--out"]).out == ""
    assert "µs/row" in ap.format_help() and "vectors-<date>.json" in ap.format_help()
    ap = argparse.ArgumentParser()
    common.add_client_arguments(ap, build=False)
    assert not hasattr(ap.parse_args([]), "build")


def test_server_args_and_rust_command():
    assert common.server_args("h", 1, "ks", None) == ["--host", "h", "--port", "1", "--keyspace", "ks"]
    assert common.server_args("h", 1, "ks", 42, rows=10) == [
        "--host",
        "h",
        "--port",
        "1",
        "--keyspace",
        "ks",
        "--rows",
        "10",
        "--server-pid",
        "42",
    ]
    assert common.rust_command(Path("/r"), ["--host", "h"], "read", 5, ["--pattern", "sync"]) == [
        "/r",
        "--host",
        "h",
        "--workload",
        "read",
        "--ops",
        "5",
        "--pattern",
        "sync",
    ]


def test_notes_and_lines():
    assert common.pin_note(None) == "" and common.pin_note("1") == ", client pinned to CPU 1"
    assert common.load_note(1.25).startswith("1-min load average 1.2 at the start, ")
    assert common.ops_line({"failed": "boom"}) == "boom"
    assert common.ops_line({"ops_per_s": 12345.6, "cpu_us_per_op": 7.04}) == "12,346 ops/s, 7.0 µs CPU/op"
    assert common.fmt_num(None) == "" and common.fmt_num(1234.56, 1) == "1,234.6"
    assert common.with_unavailable("table", {}) == "table"


def test_run_meta_keeps_each_runners_key_order():
    meta = common.run_meta(["--x"], 0.5, 7, "H", None, ops=10, grid="quick")
    assert list(meta) == [
        "date",
        "loadavg_start",
        "loadavg_end",
        "host",
        "cpus",
        "argv",
        "ops",
        "grid",
        "server_pid",
        "python",
        "heading",
    ]
    assert meta["loadavg_start"] == 0.5 and meta["argv"] == ["--x"] and meta["heading"] == "H"
    meta = common.run_meta([], None, None, "H", {})
    assert list(meta) == ["date", "host", "cpus", "argv", "server_pid", "python", "clients", "heading"]


def test_write_json(tmp_path, capsys):
    path = common.write_json(str(tmp_path / "sub" / "r.json"), "sync", {"a": 1}, [{"b": 2}], lead="\n")
    assert json.loads(path.read_text()) == {"meta": {"a": 1}, "results": [{"b": 2}]}
    assert capsys.readouterr().err == f"\nraw results: {path}\n"


def test_vm_hwm_kb(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t   2048 kB\n")
    assert common.vm_hwm_kb(str(status)) == 2048
    assert common.vm_hwm_kb(str(tmp_path / "missing")) is None


def test_run_sync_still_offers_the_helpers_it_used_to_hold():
    for name in (
        "DEFAULT_RUST_BIN",
        "client_cmd",
        "clients_meta",
        "ensure_rust_bin",
        "find_server_pid",
        "fmt_num",
        "median_runs",
        "run_client",
        "unavailable_lines",
        "wait_for_port",
        "warm_up_server",
    ):
        assert getattr(run_sync, name) is getattr(common, name)


@pytest.mark.parametrize("runner", ["run_sync", "run_patterns", "run_vectors", "run_tuning"])
def test_runner_refuses_pin_client_without_taskset(runner, monkeypatch, capsys):
    mod = importlib.import_module(f"benchmarks.{runner}")
    monkeypatch.setattr(common.shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(SystemExit) as e:
        mod.main(["--pin-client", "1", "--clients", "turbocql"] if runner != "run_tuning" else ["--pin-client", "1"])
    assert e.value.code == 2
    assert "--pin-client needs taskset" in capsys.readouterr().err
