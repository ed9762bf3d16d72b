"""The benchmark suite's client environments (benchmarks/peers.py) and client bookkeeping,
without installing anything: venv decisions, availability reporting, argument hand-off,
and the tables' handling of the optional peers."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peers, run_patterns, run_sync

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


REQ = ("cassandra-driver==3.30.1", "numpy")


def test_plan_explicit_interpreter_wins():
    assert peers.plan("/usr/bin/python3", False, None, REQ) == "explicit"
    assert peers.plan("/usr/bin/python3", True, list(REQ), REQ) == "explicit"


def test_plan_creates_a_missing_venv():
    assert peers.plan(None, False, None, REQ) == "create"
    assert peers.plan(None, False, list(REQ), REQ) == "create"  # marker left, python gone


def test_plan_reuses_a_venv_with_the_same_requirements():
    assert peers.plan(None, True, list(REQ), REQ) == "reuse"


def test_plan_reinstalls_when_requirements_changed_or_unknown():
    assert peers.plan(None, True, ["cassandra-driver==3.29.0", "numpy"], REQ) == "reinstall"
    assert peers.plan(None, True, None, REQ) == "reinstall"  # interrupted install: no marker


def test_parse_clients_keeps_order_and_drops_repeats():
    assert peers.parse_clients("turbocql, classic,,turbocql,rust") == ["turbocql", "classic", "rust"]
    with pytest.raises(ValueError, match="unknown client 'asyncpg'"):
        peers.parse_clients("classic,asyncpg")


def test_every_peer_has_a_pinned_driver_and_its_own_venv_name():
    for name, peer in peers.PEERS.items():
        assert peer.name == name
        assert "==" in peer.requirements[0], peer.requirements
    assert peers.PEERS["scylla"].module == "cassandra"  # the classic clients run unchanged
    assert peers.PEERS["acsylla"].driver == "acsylla"


def test_availability_note_lists_only_unavailable_clients():
    clients = {
        "classic": peers.Client("classic", "/v/classic/bin/python", {"packages": {}}),
        "acsylla": peers.Client(
            "acsylla",
            None,
            None,
            "pip install acsylla==1.2.0 failed: ERROR: No matching distribution found for acsylla==1.2.0",
        ),
    }
    assert peers.availability_note(clients) == [
        "acsylla: not available: pip install acsylla==1.2.0 failed: ERROR: No matching "
        "distribution found for acsylla==1.2.0"
    ]
    assert clients["acsylla"].to_json()["available"] is False
    assert "reason" in clients["acsylla"].to_json()
    assert clients["classic"].to_json() == {
        "python": "/v/classic/bin/python",
        "available": True,
        "versions": {"packages": {}},
    }
    assert run_sync.unavailable_lines(clients).startswith("* acsylla: not available: pip")


def test_last_line_prefers_the_error_line():
    out = (
        "Collecting acsylla\n  Downloading acsylla-1.2.0.tar.gz\n"
        "ERROR: Could not build wheels for acsylla\n\n[notice] A new release of pip\n"
    )
    assert peers.last_line(out) == "ERROR: Could not build wheels for acsylla"
    assert peers.last_line("") == "no output"
    assert (
        peers.last_line("Traceback ...\nModuleNotFoundError: No module named 'x'\n")
        == "ModuleNotFoundError: No module named 'x'"
    )


def test_explicit_args_hand_on_only_available_interpreters():
    clients = {
        "turbocql": peers.Client("turbocql", "/repo/.venv/bin/python"),
        "classic": peers.Client("classic", "/v/classic/bin/python"),
        "scylla": peers.Client("scylla", None, reason="no network"),
    }
    assert peers.explicit_args(clients) == [
        "--python",
        "/repo/.venv/bin/python",
        "--classic-python",
        "/v/classic/bin/python",
    ]


def test_resolve_without_install_reports_a_missing_venv(tmp_path):
    got = peers.resolve(["classic", "rust"], turbocql_python=sys.executable, venvs_dir=tmp_path, install=False)
    assert list(got) == ["classic"]  # rust is a binary, not a Python client
    assert not got["classic"].available
    assert "no virtualenv" in got["classic"].reason


def test_resolve_explicit_interpreter_is_probed_not_installed(tmp_path):
    # This interpreter has no acsylla: the peer is unavailable with the import error.
    got = peers.resolve(
        ["acsylla"], turbocql_python=sys.executable, explicit={"acsylla": sys.executable}, venvs_dir=tmp_path
    )
    c = got["acsylla"]
    assert c.action == "explicit" and c.python == sys.executable
    if c.available:  # acsylla happens to be installed here
        assert c.versions["packages"]["acsylla"]
    else:
        assert c.reason.startswith("import acsylla failed")
    assert not (tmp_path / "acsylla").exists()


def test_probe_records_python_and_package_versions():
    v, err = peers.probe(sys.executable, "json", ("pytest", "surely-not-installed-dist"))
    assert err is None
    assert v["python_version"].endswith(".".join(map(str, sys.version_info[:3])))
    assert v["packages"]["pytest"] == pytest.__version__
    assert v["packages"]["surely-not-installed-dist"] is None


def test_reused_venv_marker_round_trip(tmp_path):
    venv = tmp_path / "classic"
    (venv / "bin").mkdir(parents=True)
    (venv / peers.MARKER).write_text(json.dumps({"requirements": list(REQ)}))
    assert peers._read_marker(venv) == list(REQ)
    (venv / peers.MARKER).write_text("{not json")
    assert peers._read_marker(venv) is None


def test_client_cmd_uses_the_clients_own_interpreter_and_name():
    scylla = peers.Client("scylla", "/v/scylla/bin/python")
    cmd = run_sync.client_cmd(scylla, Path("clients/sync_threads.py"), ["--threads", "4"])
    assert cmd == [
        "/v/scylla/bin/python",
        "clients/sync_threads.py",
        "--driver",
        "cassandra",
        "--client-name",
        "scylla",
        "--threads",
        "4",
    ]
    tq = peers.Client("turbocql", "/repo/.venv/bin/python")
    assert run_sync.client_cmd(tq, Path("x.py"), [])[2:4] == ["--driver", "turbocql"]


def test_which_patterns_each_client_runs():
    spec = run_patterns.SPEC_BY_NAME
    assert spec["asyncio"].runs_on("acsylla") and spec["asyncio_uvloop"].runs_on("acsylla")
    assert not spec["callback_chain:120"].runs_on("acsylla")
    assert spec["callback_chain:120"].runs_on("scylla")
    assert not spec["write_pipeline"].runs_on("scylla")
    assert not spec["asyncio"].runs_on("classic")
    assert all(s.runs_on("turbocql") for s in run_patterns.SPECS)


def _row(label, spec, ops, cpu, wl="write"):
    return {
        "label": label,
        "spec": spec,
        "workload": wl,
        "ops_per_s": ops,
        "cpu_us_per_op": cpu,
        "p50_us": 100.0,
        "p95_us": 150.0,
        "p99_us": 200.0,
        "process_max_rss_mb": 50.0,
    }


def test_patterns_table_shows_peers_beside_turbocql():
    results = [
        _row("rust", "rust_concurrent", 50000, 10.0),
        _row("classic", "callback_chain:120", 5000, 120.0),
        _row("scylla", "callback_chain:120", 4000, 150.0),
        _row("turbocql", "callback_chain:120", 40000, 15.0),
        _row("turbocql", "asyncio", 30000, 20.0),
        _row("acsylla", "asyncio", 45000, 13.0),
    ]
    md = run_patterns.markdown_table([("write", "callback_chain:120"), ("write", "asyncio")], results)
    lines = md.splitlines()
    assert "p95 µs" in lines[0]
    scylla = next(ln for ln in lines if "| scylla |" in ln)
    assert "0.80×" in scylla  # ops/s vs classic on the same pattern
    acsylla = next(ln for ln in lines if "| acsylla |" in ln)
    assert "9.00×†" in acsylla and "1.30×" in acsylla  # vs classic chains; CPU vs rust
    assert lines.index(acsylla) > next(i for i, ln in enumerate(lines) if "asyncio" in ln and "turbocql" in ln)


def test_runner_help_mentions_peer_interpreters():
    out = subprocess.run(
        [sys.executable, str(BENCH / "run_patterns.py"), "--help"], capture_output=True, text=True, check=True
    ).stdout
    for opt in ("--classic-python", "--scylla-python", "--acsylla-python", "--venvs-dir", "--no-install"):
        assert opt in out


def test_a_peer_that_cannot_be_installed_is_unavailable_with_the_reason(tmp_path):
    # A base interpreter whose "-m venv" fails stands for any installation failure.
    got = peers.resolve(
        ["scylla", "turbocql"],
        turbocql_python=sys.executable,
        venvs_dir=tmp_path,
        base_python="/bin/false",
        log=lambda msg: None,
    )
    assert not got["scylla"].available
    assert got["scylla"].reason.startswith("python -m venv failed")
    assert got["turbocql"].python == sys.executable
    assert peers.availability_note(got) == [f"scylla: not available: {got['scylla'].reason}"]


def test_bench_command_offers_the_peer_options():
    import argparse

    from benchmarks import runner as bench

    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "--peers", "--classic-python", "/x/python", "--latest"])
    assert args.peers and args.latest and args.classic_python == "/x/python"
    assert args.clients == "classic,turbocql,rust"


def test_median_runs_keeps_the_median_run_of_each_client():
    runs = [
        {"label": "rust", "workload": "write", "cpu_us_per_op": 9.0, "ops_per_s": 100},
        {"label": "turbocql", "workload": "write", "cpu_us_per_op": 14.0, "ops_per_s": 70},
        {"label": "rust", "workload": "write", "cpu_us_per_op": 6.0, "ops_per_s": 120},
        {"label": "turbocql", "workload": "write", "failed": "exit 1"},
        {"label": "rust", "workload": "write", "cpu_us_per_op": 7.0, "ops_per_s": 110},
        {"label": "turbocql", "workload": "write", "cpu_us_per_op": 12.0, "ops_per_s": 80},
        {"label": "classic", "workload": "write", "failed": "not installed"},
    ]
    out = run_sync.median_runs(runs, lambda r: (r["label"], r["workload"]))
    assert [r["label"] for r in out] == ["rust", "turbocql", "classic"]
    rust, turbo, classic = out
    assert rust["cpu_us_per_op"] == 7.0 and rust["ops_per_s"] == 110  # the whole median run
    assert rust["cpu_us_per_op_runs"] == [6.0, 7.0, 9.0] and rust["failed_runs"] == 0
    # Two good runs out of three: the lower middle one; the failure is counted.
    assert turbo["cpu_us_per_op"] == 12.0 and turbo["failed_runs"] == 1
    assert classic == {"label": "classic", "workload": "write", "failed": "not installed"}


def test_a_single_run_is_reported_as_it_is():
    run = {"label": "rust", "workload": "read", "cpu_us_per_op": 9.0, "ops_per_s": 100}
    assert run_sync.median_runs([run], lambda r: r["label"]) == [run]


def test_the_classic_driver_state_is_recorded_for_its_interpreter_and_by_each_client():
    """Every report says what the classic driver ran on: the probe of a classic
    interpreter (meta.clients) records its default reactor and its Cython state, and each
    client script that can run the classic driver puts the same fields, with the reactor
    it chose, into its JSON line."""
    pytest.importorskip("cassandra.cluster")
    import cassandra

    if "turbocql" in getattr(cassandra, "__file__", ""):
        pytest.skip("the classic driver is not importable as cassandra here")
    versions, err = peers.probe(sys.executable, "cassandra", ("cassandra-driver",))
    assert err is None
    state = versions["classic_driver"]
    assert set(state) == {"reactor", "cython_extensions", "cython_row_parser"}
    assert state["reactor"].startswith("cassandra.io.") and state["reactor"].endswith("Connection")
    assert isinstance(state["cython_extensions"], bool) and isinstance(state["cython_row_parser"], bool)
    from cassandra.io.asyncioreactor import AsyncioConnection

    from benchmarks.clients.sync_threads import classic_driver_state

    assert classic_driver_state("cassandra") == state
    chosen = classic_driver_state("cassandra", AsyncioConnection)
    assert chosen["reactor"] == "cassandra.io.asyncioreactor.AsyncioConnection"
    assert classic_driver_state("turbocql") is None
    # every client of the classic driver records it in its JSON line
    for name in ("sync_threads", "patterns", "vectors", "ingest", "cql_drivers"):
        text = (BENCH / "clients" / f"{name}.py").read_text()
        assert (
            "classic_driver=classic_driver_state(" in text or 'out["classic_driver"] = classic_driver_state(' in text
        ), name
    assert 'out["classic_driver"] = classic_driver_state(' in (BENCH / "run_cqlengine.py").read_text()
