"""The `connections` benchmark scenario (document 002: Python's I/O models vs connection count)
without Cassandra: the runner's pure parts (aggregation of repeats, the table with an FF cell,
the `strace -c` summary and system calls per message), the report's section and plot, the
scenario's wiring into `turbocql bench`, and one real run of the Python ping-pong client
against a tiny asyncio echo server started by the test (no build, no Cassandra)."""

import argparse
import importlib.util
import json
import resource
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import connections_host as host
from benchmarks import run_connections as rc
from benchmarks import runner as bench
from benchmarks.clients import pingpong
from benchmarks.runner import discover

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
CLIENT = BENCH / "clients" / "pingpong.py"

# The module (the package's `run` attribute is its function).
bench_run = importlib.import_module("benchmarks.runner.run")


def run(model, n, rate, p50=100.0, p95=200.0, share=0.5, rnd=1, client="python", **extra):
    return {
        "kind": "run",
        "client": client,
        "model": model,
        "connections": n,
        "round": rnd,
        "msgs_per_s": rate,
        "p50_us": p50,
        "p95_us": p95,
        "user_share": share,
        "cpu_cores": 0.99,
        "errors": 0,
        **extra,
    }


CANNED = [
    run("asyncio-streams", 10, 30_000.0, 250.0, 330.0, 0.9, 1),
    run("asyncio-streams", 10, 36_000.0, 270.0, 340.0, 0.8, 2),
    run("asyncio-streams", 10, 33_000.0, 260.0, 400.0, 0.85, 3),
    run("asyncio-streams", 10_000, 20_000.0, 300_000.0, 450_000.0, 0.9, 1),
    run("threads", 10, 130_000.0, 65.0, 99.0, 0.3, 1),
    {
        "kind": "run",
        "client": "python",
        "model": "threads",
        "connections": 10_000,
        "round": 1,
        "failed": "thread 9,001 of 10,000: can't start new thread",
    },
    {
        "kind": "run",
        "client": "python",
        "model": "gevent",
        "connections": 10,
        "round": 1,
        "unavailable": "no virtualenv",
    },
    run("tokio", 10, 400_000.0, 40.0, 50.0, 0.05, client="rust"),
    run("tokio", 10_000, 230_000.0, 29_000.0, 31_000.0, 0.06, client="rust"),
    {
        "kind": "syscalls",
        "client": "python",
        "model": "asyncio-streams",
        "connections": 1000,
        "per_message": {"total": 5.02, "calls": {"recvfrom": 1.0, "sendto": 1.0, "mmap": 0.97, "epoll_wait": 0.02}},
    },
    {"kind": "syscalls", "client": "python", "model": "threads", "connections": 1000, "failed": "timed out"},
    {
        "kind": "syscalls",
        "client": "rust",
        "model": "tokio",
        "connections": 1000,
        "per_message": {"total": 2.02, "calls": {"recvfrom": 1.0, "sendto": 1.0, "epoll_wait": 0.02}},
    },
]

# `strace -c -f -o FILE` summaries: strace 6 (usecs/call on the total line) and an older one
# (blank usecs/call on the total line), both with blank errors cells.
STRACE_NEW = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.11    0.092963           5     17853           sendto
 17.52    0.040594           2     16853           mremap
 12.63    0.029265           1     17853           recvfrom
  4.51    0.010447          27       375           epoll_wait
  0.27    0.000618           6       100       100 connect
------ ----------- ----------- --------- --------- ----------------
100.00    0.231766           2     53034       100 total
"""
STRACE_OLD = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 60.00    0.000600           1      1000           sendto
 40.00    0.000400           0      1000        12 recvfrom
------ ----------- ----------- --------- --------- ----------------
100.00    0.001000                  2000        12 total
"""


# ------------------------------------------------------------------------------------ pure parts


def test_options_counts_models_and_source_addresses():
    assert rc.parse_counts("10,100,1k,10_000,100") == [10, 100, 1000, 10_000]
    for bad in ("", "0", "10,-1"):
        with pytest.raises(ValueError):
            rc.parse_counts(bad)
    assert rc.parse_models("threads,tokio,rust,gevent") == ["threads", "rust", "gevent"]
    with pytest.raises(ValueError, match="unknown model"):
        rc.parse_models("asyncio")
    assert rc.source_addresses(10) == ["127.0.0.1"]
    assert rc.source_addresses(4000) == ["127.0.0.1"]
    assert rc.source_addresses(10_000) == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    assert len(rc.source_addresses(10_000_000)) == 254
    cmd = rc.client_command("threads", "/py", 5555, 10_000, 2, 1)
    assert cmd[:5] == ["/py", str(CLIENT), "--model", "threads", "--connect"]
    assert cmd[-2:] == ["--addresses", "127.0.0.1,127.0.0.2,127.0.0.3"]
    assert rc.client_command("rust", None, 5555, 10, 2, 1)[0] == str(rc.CLIENT_BIN)


def test_repeats_aggregate_to_mean_spread_and_medians():
    agg = {(a["client"], a["model"], a["connections"]): a for a in rc.aggregate(CANNED)}
    a = agg[("python", "asyncio-streams", 10)]
    assert a["runs"] == a["ok_runs"] == 3 and a["failed_runs"] == 0
    assert a["msgs_per_s"] == pytest.approx(33_000.0)
    assert (a["msgs_per_s_min"], a["msgs_per_s_max"]) == (30_000.0, 36_000.0)
    assert a["spread_pct"] == pytest.approx(100 * 3000 / 33_000)
    assert (a["p50_us"], a["p95_us"], a["user_share"]) == (260.0, 340.0, 0.85)
    assert agg[("python", "threads", 10_000)]["failed"].startswith("thread 9,001")
    assert agg[("python", "gevent", 10)]["unavailable"] == "no virtualenv"
    assert ("python", "asyncio-streams", 1000) not in agg  # the strace samples are not runs
    # One run of three failed: the others' figures, the failure counted.
    mixed = rc.aggregate([run("selectors", 100, 10.0), {**run("selectors", 100, 0), "failed": "EMFILE"}])
    assert mixed[0]["ok_runs"] == 1 and mixed[0]["failed_runs"] == 1 and mixed[0]["first_failure"] == "EMFILE"


def test_markdown_table_in_the_documents_style_with_ff_cells():
    md = rc.markdown(CANNED, [10, 10_000], 10, 1, 3, ("0", "1"))
    lines = md.splitlines()
    head = next(ln for ln in lines if ln.startswith("| client"))
    assert head.split(" | ")[2:5] == ["10: msgs/s", "10: p50/p95 ms", "10: user %"]
    assert head.endswith("| syscalls/msg (1,000 conn.) |")
    assert "| Python | asyncio-streams | 33.0k ±9% | 0.260/0.340 | 85 | 20.0k | 300/450 | 90 | 5.02 |" in lines
    assert "| Python | threads | 130k | 0.065/0.099 | 30 | FF |  |  | FF |" in lines
    assert "| Python | gevent | n/a |  |  |  |  |  |  |" in lines
    assert "| Rust (limit) | tokio | 400k | 0.040/0.050 | 5 | 230k | 29.0/31.0 | 6 | 2.02 |" in lines
    # Rows in the document's order, the limit last; the reasons and the system calls below.
    models = [ln.split(" | ")[1] for ln in lines if ln.startswith("| Python") or ln.startswith("| Rust")]
    assert models == ["asyncio-streams", "threads", "gevent", "tokio"]
    assert "* FF: threads, 10,000 connections: thread 9,001 of 10,000: can't start new thread" in lines
    assert "* asyncio-streams = 1.00 recvfrom + 1.00 sendto + 0.97 mmap + 0.02 epoll_wait" in lines
    assert "* threads: no system-call figure (timed out)" in lines
    assert "10 s per run after 1 s of warm-up" in md and "clients on CPU 0" in md


def test_strace_summary_and_calls_per_message():
    new = rc.parse_strace_summary(STRACE_NEW)
    assert new == {
        "sendto": 17853,
        "mremap": 16853,
        "recvfrom": 17853,
        "epoll_wait": 375,
        "connect": 100,
        "total": 53034,
    }
    old = rc.parse_strace_summary(STRACE_OLD)
    assert old == {"sendto": 1000, "recvfrom": 1000, "total": 2000}
    assert rc.parse_strace_summary("strace: exec: No such file or directory\n") == {}
    # The 0-second run's calls (connections opened and closed) subtracted, per message.
    base = {"sendto": 100, "recvfrom": 100, "connect": 100, "epoll_wait": 5, "total": 305}
    per = rc.syscalls_per_message(new, base, 17_000)
    assert per["total"] == pytest.approx((53034 - 305) / 17_000, abs=0.01)
    assert list(per["calls"]) == ["recvfrom", "sendto", "mremap", "epoll_wait"]  # largest first, >= 0.005
    assert per["calls"]["sendto"] == pytest.approx(1.044, abs=0.001)
    assert rc.composition(per).startswith("1.04 recvfrom + 1.04 sendto + 0.99 mremap")
    assert rc.syscalls_per_message(new, base, 0) is None


PERF_STAT = """\
# started on Tue Nov 24 06:10:09 2026

149258,,raw_syscalls:sys_enter,534889317,100.00,,
120,,syscalls:sys_enter_futex,534889317,100.00,,
73848,,syscalls:sys_enter_recvfrom,534889317,100.00,,
<not counted>,,syscalls:sys_enter_epoll_pwait2,0,100.00,,
"""


def test_perf_stat_counts():
    assert rc.parse_perf_stat(PERF_STAT) == {"total": 149258, "futex": 120, "recvfrom": 73848}
    per = rc.syscalls_per_message(rc.parse_perf_stat(PERF_STAT), {"total": 258, "recvfrom": 48}, 73_800)
    assert per == {"total": 2.02, "calls": {"recvfrom": 1.0, "futex": 0.002}}
    assert rc.composition(per) == "1.00 recvfrom + 0.002 futex"


def test_number_formats():
    assert [rc.fmt_rate(x) for x in (950, 36_400, 610_000)] == ["950", "36.4k", "610k"]
    assert [rc.fmt_ms(x) for x in (46, 2_500, 24_000, 1_250_000, None)] == ["0.046", "2.50", "24.0", "1,250", "?"]


def test_client_percentiles_and_failure_line():
    pp = pingpong
    assert pp.percentile([], 0.5) is None
    vals = list(range(1, 21))
    assert (pp.percentile(vals, 0.5), pp.percentile(vals, 0.95), pp.percentile(vals, 1.0)) == (10, 19, 20)
    assert pp.parse_addresses(" 127.0.0.1, 127.0.0.2 ,") == ["127.0.0.1", "127.0.0.2"]
    a = pp.parse_args(["--model", "gevent", "--connect", "127.0.0.1:1", "--connections", "3", "--seconds", "1"])
    f = pp.failure(a, "EMFILE")
    assert f["failed"] == "EMFILE" and f["model"] == "gevent" and f["client"] == "python"
    assert set(pp.MODELS) == set(rc.PYTHON_MODELS)


# ------------------------------------------------------------------------------------ report, bench


def test_report_has_the_connections_section_and_plot(tmp_path):
    from benchmarks import report

    meta = {"connections": [10, 10_000], "seconds": 10, "warmup": 1, "repeat": 3, "pin_client": "0", "pin_server": "1"}
    scen = {"connections": {"heading": "Connections.", "meta": meta, "results": CANNED}}
    md = report.build_markdown({"meta": {}, "machine": {}, "server": {}, "scenarios": scen})
    assert "## Document 002: Python's I/O models vs connection count" in md
    assert "| Python | asyncio-streams | 33.0k ±9% |" in md
    assert md.index("## Document 002") < md.index("Columns:")
    pytest.importorskip("matplotlib")
    assert report.plot_connections(scen, tmp_path / "c.png") and (tmp_path / "c.png").stat().st_size > 0
    assert not report.plot_connections({}, tmp_path / "none.png")


def test_bench_lists_the_scenario_and_its_option():
    assert "connections" in discover.SCENARIOS and "run_connections.py" in discover.REQUIRED_FILES
    mods = discover._import_runners(BENCH)
    assert mods["run_connections"].main is rc.main
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "--scenarios", "connections", "--connections", "10,100"])
    assert args.connections == "10,100"


def test_bench_runs_the_scenario_alone_without_cassandra(monkeypatch, tmp_path):
    """`turbocql bench --scenarios connections` neither starts nor describes Cassandra, and
    hands the runner its options."""
    seen = {}

    def fake_main(argv):
        seen["argv"] = argv
        out = Path(argv[argv.index("--out") + 1])
        out.write_text(json.dumps({"meta": {"heading": "Connections."}, "results": [run("threads", 10, 1.0)]}))
        return 0

    def no_cassandra(*a, **k):
        raise AssertionError("Cassandra was needed")

    real = discover._import_runners(BENCH)
    peers = SimpleNamespace(
        parse_clients=real["peers"].parse_clients,
        from_args=lambda args, names: {},
        explicit_args=lambda clients: [],
    )
    written = {}
    report = SimpleNamespace(
        write_report=lambda data, out_dir, name, plots=True: (
            written.update(data=data) or {"markdown": tmp_path / "r.md", "plots": []}
        )
    )
    # The CQL table (run_cql_connections.py, tests/unit/test_bench_cql_connections.py) runs
    # after it: faked here too.
    cql = SimpleNamespace(
        main=lambda argv: Path(argv[argv.index("--out") + 1]).write_text('{"meta": {}, "results": []}') and 0
    )
    mods = {
        **real,
        "run_connections": SimpleNamespace(main=fake_main),
        "run_cql_connections": cql,
        "peers": peers,
        "report": report,
    }
    monkeypatch.setattr(bench_run, "_import_runners", lambda bdir: mods)
    monkeypatch.setattr(bench_run, "ensure_server", no_cassandra)
    monkeypatch.setattr(bench_run, "describe_server", no_cassandra)
    monkeypatch.setattr(bench_run, "describe_machine", lambda python, bdir: {})
    (tmp_path / "r.md").write_text("")
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    argv = ["bench", "--scenarios", "connections", "--quick", "--connections", "10,100", "--out-dir", str(tmp_path)]
    args = parser.parse_args(
        [*argv, "--pin-client", "0", "--no-plots", "--repeat", "2", "--benchmarks-dir", str(BENCH)]
    )
    assert bench_run.run(args) == 0
    a = seen["argv"]
    assert a[a.index("--connections") + 1] == "10,100" and a[a.index("--repeat") + 1] == "2"
    assert a[a.index("--pin-client") + 1] == "0" and "--quick" in a
    data = written["data"]
    assert data["server"] == {} and data["scenarios"]["connections"]["results"][0]["model"] == "threads"
    assert data["meta"]["options"]["connections"] == "10,100"


# ------------------------------------------------------------------------------------ a real run

ECHO_SERVER = """
import asyncio, sys

async def handle(reader, writer):
    try:
        while True:
            writer.write(await reader.readexactly(64))
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(30)

asyncio.run(main())
"""


@pytest.fixture
def echo_port():
    p = subprocess.Popen([sys.executable, "-c", ECHO_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        yield int(p.stdout.readline())
    finally:
        p.kill()
        p.wait()
        p.stdout.close()


@pytest.mark.timeout(5)
def test_python_client_measures_round_trips_against_an_echo_server(echo_port):
    cmd = [sys.executable, str(CLIENT), "--model", "selectors", "--connect", f"127.0.0.1:{echo_port}"]
    cmd += ["--connections", "10", "--seconds", "1", "--warmup", "0.1", "--addresses", "127.0.0.1,127.0.0.2"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=4.5, check=True).stdout
    r = json.loads(out.splitlines()[-1])
    assert "failed" not in r, r
    assert r["client"] == "python" and r["model"] == "selectors" and r["connections"] == 10
    assert r["messages"] > 0 and r["msgs_per_s"] == pytest.approx(r["messages"] / 1.0)
    assert 0 < r["p50_us"] <= r["p95_us"] <= r["p99_us"]
    assert r["errors"] == 0 and r["addresses"] == ["127.0.0.1", "127.0.0.2"]


@pytest.mark.timeout(5)
def test_python_client_reports_ff_when_it_runs_out_of_file_descriptors(echo_port):
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))

    cmd = [sys.executable, str(CLIENT), "--model", "asyncio-protocol", "--connect", f"127.0.0.1:{echo_port}"]
    cmd += ["--connections", "100", "--seconds", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=4.5, preexec_fn=low_limit, check=True).stdout
    r = json.loads(out.splitlines()[-1])
    assert "Too many open files" in r["failed"] and r["connections"] == 100
    socket.socket().close()  # the test process itself is untouched


def test_run_sysctls_widen_the_port_range_and_cap_time_wait_never_the_other_way():
    assert rc.parse_port_range("10240-65535") == (10240, 65535)
    assert rc.parse_port_range("keep") is None
    assert rc.parse_tw_buckets("1024") == 1024 and rc.parse_tw_buckets("keep") is None
    for bad in ("65535-10240", "80-9000", "10240", "a-b"):
        with pytest.raises(ValueError, match="--local-port-range"):
            rc.parse_port_range(bad)
    with pytest.raises(ValueError, match="--max-tw-buckets"):
        rc.parse_tw_buckets("-1")
    now = {rc.PORT_RANGE_SYSCTL: "32768 60999", rc.TW_BUCKETS_SYSCTL: "131072"}.get
    assert rc.run_sysctl_values((10240, 65535), 1024, now) == {
        rc.PORT_RANGE_SYSCTL: "10240 65535",
        rc.TW_BUCKETS_SYSCTL: "1024",
    }
    # Only widened: a range already covering LO-HI, or larger on one side, keeps that side.
    assert rc.run_sysctl_values((40000, 65535), None, now) == {rc.PORT_RANGE_SYSCTL: "32768 65535"}
    assert rc.run_sysctl_values((40000, 50000), 200000, now) == {}
    assert rc.run_sysctl_values(None, None, now) == {}
    # An unreadable sysctl (no /proc/sys) is left alone.
    assert rc.run_sysctl_values((10240, 65535), 1024, lambda name: None) == {}


def test_run_sysctls_put_the_old_values_back(monkeypatch, tmp_path):
    files = {host.PORT_RANGE_SYSCTL: tmp_path / "range", host.TW_BUCKETS_SYSCTL: tmp_path / "tw"}
    files[host.PORT_RANGE_SYSCTL].write_text("32768\t60999\n")
    files[host.TW_BUCKETS_SYSCTL].write_text("131072\n")
    monkeypatch.setattr(host, "_sysctl_path", files.__getitem__)
    with pytest.raises(RuntimeError):
        with host.run_sysctls((10240, 65535), 1024) as done:
            assert host._sysctl(host.PORT_RANGE_SYSCTL) == "10240 65535"
            assert host._sysctl(host.TW_BUCKETS_SYSCTL) == "1024"
            assert done[host.TW_BUCKETS_SYSCTL] == {"before": "131072", "during": "1024"}
            raise RuntimeError("a run failed")
    assert host._sysctl(host.PORT_RANGE_SYSCTL) == "32768 60999"
    assert host._sysctl(host.TW_BUCKETS_SYSCTL) == "131072"
    # Not writable (not root, a read-only /proc/sys): kept, and the meta says why.

    class ReadOnly:
        def read_text(self):
            return "131072\n"

        def write_text(self, text):
            raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(host, "_sysctl_path", lambda name: ReadOnly())
    with host.run_sysctls(None, 1024) as done:
        assert done == {
            host.TW_BUCKETS_SYSCTL: {
                "before": "131072",
                "during": "131072",
                "reason": "not set to 1024: Permission denied",
            }
        }
