"""The connections scenario's CQL table (issue 17 §2) without a server: the runner's pure parts
(models, commands, the responder's node count, the table with FF cells, the execute_concurrent
mean latency and the targets), the CQL framing of the Python I/O models, the drivers client's
options and result line, the report's section and plot, and `turbocql bench` running the CQL
table after the ping-pong one."""

import argparse
import importlib.util
import json
import os
import resource
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import cql_node as node
from benchmarks import run_cql_connections as rcc
from benchmarks import runner as bench
from benchmarks.clients import cql_drivers, cql_models
from benchmarks.runner import discover

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

bench_run = importlib.import_module("benchmarks.runner.run")


def run(key, n, rate, p50=100.0, p95=200.0, cores=0.9, share=0.6, rnd=1, **extra):
    client, model = rcc.MODELS[key]
    return {
        "kind": "run",
        "client": client,
        "model": model,
        "connections": n,
        "round": rnd,
        "msgs_per_s": rate,
        "p50_us": p50,
        "p95_us": p95,
        "cpu_cores": cores,
        "user_share": share,
        "errors": 0,
        **extra,
    }


CANNED = [
    run("turbocql-concurrent", 10_000, 40_000.0, p50=None, p95=None, cores=0.5),
    run("turbocql-futures", 10_000, 30_000.0, p50=300_000.0, p95=400_000.0, cores=0.9),
    run("uvloop-protocol", 10_000, 16_000.0, cores=1.0),
    run("selectors", 10_000, 10_000.0, cores=1.0),
    {**run("classic-default", 10_000, 0), "failed": "only 3000 of 10001 connections (pool + control) open"},
    run("rust", 10_000, 50_000.0, p50=180_000.0, p95=250_000.0, cores=0.4),
    run("rust", 10, 30_000.0, p50=300.0, p95=500.0, cores=0.5),
]


def test_models_commands_and_nodes():
    assert rcc.parse_models("rust, turbocql-futures,rust") == ["rust", "turbocql-futures"]
    with pytest.raises(ValueError, match="unknown model"):
        rcc.parse_models("threads")
    with pytest.raises(ValueError):
        rcc.parse_models(" , ")
    # The classic driver holds one connection per host: N responder nodes; the others one.
    assert rcc.responder_nodes("classic-asyncio", 1000) == 1000
    assert rcc.responder_nodes("turbocql-asyncio", 1000) == 1
    cmd = rcc.client_command("turbocql-futures", "/py", 9000, 100, 3, 1)
    assert cmd[:2] == ["/py", str(rcc.DRIVERS)] and cmd[cmd.index("--client") + 1] == "turbocql"
    assert cmd[cmd.index("--model") + 1] == "futures" and cmd[cmd.index("--connect") + 1] == "127.0.0.1:9000"
    cmd = rcc.client_command("selectors", "/py", 9000, 10_000, 3, 1)
    assert cmd[1] == str(rcc.MODELS_PY) and cmd[cmd.index("--addresses") + 1] == "127.0.0.1,127.0.0.2,127.0.0.3"
    cmd = rcc.client_command("rust", None, 9000, 10, 2.5, 0)
    assert cmd[0] == str(rcc.RUST_BIN) and cmd[cmd.index("--seconds") + 1] == "2.5"


def test_table_has_ff_cells_mean_latency_cpu_per_request_and_targets():
    md = rcc.markdown(CANNED, [10, 10_000], 10, 1, 1)
    lines = md.splitlines()
    head = next(line for line in lines if line.startswith("| client"))
    assert "10,000: CPU µs/req (user %)" in head
    concurrent = next(line for line in lines if "| execute_concurrent |" in line)
    # No percentiles from execute_concurrent: the mean, N / rate = 10,000 / 40,000 s = 250 ms.
    assert "| 40.0k | mean 250 | 12.5 (60) |" in concurrent
    futures = next(line for line in lines if "| futures |" in line)
    assert "| 30.0k | 300/400 | 30.0 (60) |" in futures
    assert "| FF |" in next(
        line for line in lines if line.startswith("| classic driver (1 connection to each of N hosts) | default |")
    )
    assert "* FF: classic default, 10,000 connections: only 3000 of 10001" in md
    rust = next(line for line in lines if line.startswith("| Rust"))
    assert "| 30.0k | 0.300/0.500 |" in rust and "| 50.0k | 180/250 | 8.0 (60) |" in rust
    # Targets at the largest count, from the figures.
    assert "Targets at 10,000 connections:" in md
    assert "rate: turbocql-concurrent 40,000/s = 2.50× the best pure-Python model (uvloop-protocol" in md
    assert "CPU per request: turbocql-concurrent 12.5 µs = 1.56× the Rust crate's (8.0 µs)" in md
    assert "p95: turbocql-futures 400 ms = 1.60× the Rust crate's (250 ms)" in md


def test_table_lists_system_calls_per_request():
    sample = {
        "kind": "syscalls",
        "client": "turbocql",
        "model": "futures",
        "connections": 1000,
        "tool": "perf",
        "per_message": {"total": 1.5, "calls": {"sendmsg": 0.5, "recvmsg": 0.5, "epoll_wait": 0.5}},
    }
    failed = {"kind": "syscalls", "client": "rust", "model": "scylla", "connections": 1000, "failed": "no perf"}
    md = rcc.markdown([*CANNED, sample, failed], [10, 10_000])
    assert "syscalls/req (1,000 conn.)" in md
    assert "* turbocql futures = 0.50 sendmsg + 0.50 recvmsg + 0.50 epoll_wait" in md
    assert "* rust scylla: no system-call figure (no perf)" in md
    assert "`perf stat`" in md


def test_cql_framing_of_the_python_models():
    m = cql_models
    startup = m.startup_frame()
    assert startup[:5] == bytes([0x04, 0, 0, 0, m.OP_STARTUP])
    assert struct.unpack(">i", startup[5:9])[0] == len(startup) - 9 and b"CQL_VERSION" in startup
    sid = bytes(range(16))
    ex = m.execute_frame(sid)
    assert len(ex) == 9 + 2 + 16 + 2 + 1 + 2 + 8
    assert m.parse_header(ex) == (1, m.OP_EXECUTE, len(ex) - 9)
    # consistency ONE, flags VALUES | SKIP_METADATA, one value: int 1
    assert ex[27:] == bytes([0, 1, 3, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1])
    body = struct.pack(">iH", 4, 16) + sid + b"metadata..."
    assert m.prepared_id(body) == sid
    with pytest.raises(ValueError):
        m.prepared_id(struct.pack(">iH", 2, 0))
    err = struct.pack(">iH", 0x2200, 5) + b"oops!"
    assert m.error_message(err) == "error 0x2200: oops!"


def test_drivers_client_options_and_result_line():
    d = cql_drivers
    a = d.parse_args(
        [
            "--client",
            "turbocql",
            "--model",
            "asyncio",
            "--connect",
            "127.0.0.1:9",
            "--connections",
            "4",
            "--seconds",
            "2",
        ]
    )
    assert (a.host, a.port, a.seconds, a.warmup) == ("127.0.0.1", 9, 2.0, 1.0)
    with pytest.raises(SystemExit):
        d.parse_args(
            ["--client", "classic", "--model", "futures", "--connect", "h:1", "--connections", "1", "--seconds", "1"]
        )
    with pytest.raises(SystemExit):
        d.parse_args(
            ["--client", "turbocql", "--model", "asyncio", "--connect", "h:1", "--connections", "0", "--seconds", "1"]
        )
    a = d.parse_args(
        ["--client", "classic", "--model", "default", "--connect", "h:1", "--connections", "2", "--seconds", "0"]
    )
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    ru1 = SimpleNamespace(ru_utime=ru0.ru_utime + 0.3, ru_stime=ru0.ru_stime + 0.1)
    line = d.result_line(a, 4000, 2.0, [1000, 2000, 3000, 4000], ru0, ru1, ["boom"], reactor="LibevConnection")
    assert line["msgs_per_s"] == 2000.0 and line["p50_us"] == 2.0 and line["p95_us"] == 4.0
    assert line["cpu_us_per_request"] == 100.0 and line["user_share"] == 0.75 and line["errors"] == 1
    assert line["mean_latency_us"] == 1000.0 and line["reactor"] == "LibevConnection"
    json.dumps(line)


def test_report_has_the_cql_section_and_plot(tmp_path):
    from benchmarks import report

    meta = {"connections": [10, 10_000], "seconds": 10, "warmup": 1, "repeat": 1, "pin_client": "0", "pin_server": "1"}
    scen = {"connections_cql": {"heading": "CQL.", "meta": meta, "results": CANNED}}
    md = report.build_markdown({"meta": {}, "machine": {}, "server": {}, "scenarios": scen})
    assert "## Document 002's question for CQL drivers (issue 17 §2)" in md
    assert "| turbocql | futures |  |  |  | 30.0k | 300/400 |" in md and "Rust CQL responder" in md
    pytest.importorskip("matplotlib")
    assert report.plot_cql_connections(scen, tmp_path / "c.png") and (tmp_path / "c.png").stat().st_size > 0
    assert not report.plot_cql_connections({}, tmp_path / "none.png")


def test_bench_runs_the_cql_table_after_the_ping_pong(monkeypatch, tmp_path):
    seen = {}

    def fake(name):
        def main(argv):
            seen[name] = argv
            out = Path(argv[argv.index("--out") + 1])
            key = "threads" if name == "pingpong" else None
            res = [{"kind": "run", "client": "python", "model": key, "connections": 10}] if key else CANNED
            out.write_text(json.dumps({"meta": {"heading": name}, "results": res}))
            return 0

        return main

    real = discover._import_runners(BENCH)
    assert real["run_cql_connections"].main is rcc.main and "run_cql_connections.py" in discover.REQUIRED_FILES
    classic = real["peers"].Client(
        "classic", python="/venvs/classic/bin/python", versions={"packages": {"cassandra-driver": "3.30.1"}}
    )
    peers = SimpleNamespace(
        parse_clients=real["peers"].parse_clients,
        from_args=lambda args, names: {"classic": classic},
        explicit_args=lambda clients: [],
    )
    written = {}
    report = SimpleNamespace(
        write_report=lambda data, out_dir, name, plots=True: (
            written.update(data=data) or {"markdown": tmp_path / "r.md", "plots": []}
        )
    )
    mods = {
        **real,
        "run_connections": SimpleNamespace(main=fake("pingpong")),
        "run_cql_connections": SimpleNamespace(main=fake("cql")),
        "peers": peers,
        "report": report,
    }
    monkeypatch.setattr(bench_run, "_import_runners", lambda bdir: mods)
    monkeypatch.setattr(bench_run, "ensure_server", lambda *a, **k: pytest.fail("Cassandra was needed"))
    monkeypatch.setattr(bench_run, "describe_server", lambda *a, **k: pytest.fail("Cassandra was needed"))
    monkeypatch.setattr(bench_run, "describe_machine", lambda python, bdir: {})
    (tmp_path / "r.md").write_text("")
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["bench", "--scenarios", "connections", "--quick", "--out-dir", str(tmp_path), "--no-plots"]
        + ["--benchmarks-dir", str(BENCH)]
    )
    assert bench_run.run(args) == 0
    cql = seen["cql"]
    assert "--quick" in cql and cql[cql.index("--classic-python") + 1] == "/venvs/classic/bin/python"
    scen = written["data"]["scenarios"]
    assert scen["connections"]["results"][0]["model"] == "threads"
    assert scen["connections_cql"]["results"] == CANNED


def test_the_rows_models_bind_a_key_per_request_and_decode_the_row():
    m = cql_models
    sid = bytes(range(16))
    fixed = m.Requests(sid, bind=False)
    assert fixed.next() == fixed.next() == m.execute_frame(sid)
    bound = m.Requests(sid, bind=True)
    first, second = bound.next(), bound.next()
    assert len(first) == len(m.execute_frame(sid)) and first[:-4] == m.execute_frame(sid)[:-4]
    # Packed anew each time, but always k = 1: a real node holds that row only.
    assert first is not second and struct.unpack(">i", first[-4:])[0] == struct.unpack(">i", second[-4:])[0] == 1
    # RESULT Rows, NO_METADATA, 2 columns, 2 rows: (7, "seven") and (null, "")
    cells = struct.pack(">ii", 4, 7) + struct.pack(">i", 5) + b"seven" + struct.pack(">ii", -1, 0)
    body = struct.pack(">iiii", 2, 0x0004, 2, 2) + cells
    assert m.decode_rows(body) == [(7, "seven"), (None, "")]
    # With metadata: global table spec, then name and type (int 0x0009, varchar 0x000D) per column.
    spec = struct.pack(">H", 5) + b"bench" + struct.pack(">H", 2) + b"kv"
    cols = struct.pack(">H", 1) + b"k" + struct.pack(">H", 0x0009) + struct.pack(">H", 1) + b"v"
    cols += struct.pack(">H", 0x000D)
    body = struct.pack(">iii", 2, 0x0001, 2) + spec + cols + struct.pack(">i", 1) + cells[:17]
    assert m.decode_rows(body) == [(7, "seven")]
    with pytest.raises(ValueError):
        m.decode_rows(struct.pack(">iii", 1, 0, 0))
    argv = ["--model", "selectors-rows", "--connect", "127.0.0.1:1", "--connections", "1", "--seconds", "1"]
    args = m.parse_args(argv)
    assert args.rows and args.io_model == "selectors"


# ------------------------------------------------------------------------------------------------
# --server cassandra


def test_server_option_count_query_and_the_classic_rows():
    # The drivers and the Rust client poll the server's count; the Python models need none.
    for key in ("turbocql-asyncio", "classic-default", "rust"):
        cmd = rcc.client_command(key, "/py", 9042, 10, 1, 1, "127.0.0.5", "cassandra")
        assert cmd[cmd.index("--count-query") + 1] == "SELECT COUNT(*) FROM system_views.clients"
        assert cmd[cmd.index("--connect") + 1] == "127.0.0.5:9042"
        cmd = rcc.client_command(key, "/py", 7000, 10, 1, 1)
        assert cmd[cmd.index("--count-query") + 1] == "SELECT connections FROM responder.stats"
    assert "--count-query" not in rcc.client_command("selectors-rows", "/py", 9042, 10, 1, 1, "h", "cassandra")
    # One connection per host, one host: the classic rows above N = 1 are unavailable, and say why.
    why = rcc.server_unavailable("classic-asyncio", 10, "cassandra")
    assert "one connection per host" in why and "more than one connection" in why
    assert rcc.server_unavailable("classic-asyncio", 1, "cassandra") is None
    assert rcc.server_unavailable("classic-asyncio", 10, "responder") is None
    assert rcc.server_unavailable("turbocql-futures", 10_000, "cassandra") is None
    assert rcc.OUT_STEMS["cassandra"] == "cql-connections-cassandra"


def test_server_cassandra_without_a_node_says_so_and_exits_2(capsys):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    argv = ["--server", "cassandra", "--port", str(port), "--models", "turbocql-futures", "--connections", "10"]
    assert rcc.main([*argv, "--no-strace", "--local-port-range", "keep", "--max-tw-buckets", "keep"]) == 2
    err = capsys.readouterr().err
    assert f"no usable Cassandra node at 127.0.0.1:{port}" in err and "Traceback" not in err
    assert "localdb start" in err
    with pytest.raises(SystemExit):
        rcc.main(["--server", "scylla"])


def test_drivers_client_count_query_setup_and_pool_wait(monkeypatch):
    d = cql_drivers
    base = ["--client", "turbocql", "--model", "futures", "--connect", "127.0.0.1:9042"]
    a = d.parse_args([*base, "--connections", "2", "--seconds", "1"])
    assert a.count_query == "SELECT connections FROM responder.stats" and not a.setup
    a = d.parse_args([*base, "--connections", "2", "--seconds", "1", "--count-query", "SELECT 1"])
    assert a.count_query == "SELECT 1"
    a = d.parse_args(["--setup", "--connect", "127.0.0.1:9042"])
    assert a.setup and (a.host, a.port) == ("127.0.0.1", 9042)
    with pytest.raises(SystemExit):  # a run needs its client, model, connections and seconds
        d.parse_args(["--connect", "127.0.0.1:9042", "--client", "turbocql", "--model", "futures"])
    # The one waiting rule of every client: at least `want`, else Failed past the timeout.
    counts = iter([1, 2, 3])
    rows = SimpleNamespace(one=lambda: (next(counts),))
    seen = []
    monkeypatch.setattr(d.time, "sleep", lambda s: None)
    fill = d.wait_for_connections(lambda q: seen.append(q) or rows, "SELECT n", 3, 60)
    assert seen == ["SELECT n"] * 3 and fill >= 0
    w = d.PoolWait(5, 0)
    with pytest.raises(d.Failed, match="only 4 of 5 connections"):
        w.done(4)
    assert d.PoolWait(5, 0).done(6)
    # A count that stops growing fails after STALL seconds, long before the timeout.
    clock = [100.0]
    monkeypatch.setattr(d.time, "monotonic", lambda: clock[0])
    w = d.PoolWait(10, 600)
    for have, t in ((3, 100.0), (7, 110.0), (7, 130.0), (6, 139.9)):
        clock[0] = t
        assert not w.done(have)
    clock[0] = 110.0 + w.STALL
    with pytest.raises(d.Failed, match=r"only 7 of 10 connections .* none more for 30 s"):
        w.done(7)


def test_python_models_skip_what_the_header_flags_put_before_the_body():
    m = cql_models
    cells = struct.pack(">ii", 4, 1) + struct.pack(">i", 16) + b"0123456789abcdef"
    rows = struct.pack(">iiii", 2, 0x0004, 2, 1) + cells
    plain = struct.pack(">BBhBi", 0x84, 0, 1, m.OP_RESULT, len(rows)) + rows
    assert m.body_start(plain) == m.HEADER and m.decode_rows(plain[m.body_start(plain) :]) == [(1, "0123456789abcdef")]
    # A node's warnings (a [string list]) after a tracing id, then a custom payload ([bytes map]).
    warn = b"Aggregation query used without partition key"
    prefix = bytes(range(16)) + struct.pack(">HH", 1, len(warn)) + warn
    prefix += struct.pack(">HH", 1, 1) + b"k" + struct.pack(">i", 2) + b"vv"
    body = prefix + rows
    framed = struct.pack(">BBhBi", 0x84, 0x02 | 0x04 | 0x08, 1, m.OP_RESULT, len(body)) + body
    assert m.body_start(framed) == m.HEADER + len(prefix)
    assert m.decode_rows(memoryview(framed)[m.body_start(framed) :]) == [(1, "0123456789abcdef")]

    class Sock:
        def __init__(self, data):
            self.data = data

        def recv(self, n):
            got, self.data = self.data[:n], self.data[n:]
            return got

    assert m.read_frame(Sock(framed)) == (m.OP_RESULT, rows)


def test_node_sockets_cpu_and_busiest_window():
    tcp = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:2352 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"
        "   1: 0100007F:2352 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
        "   2: 0100007F:C350 0100007F:2352 01 00000000:00000000 00:00000000 00000000     0        0 3\n"
        "   3: 0100007F:2352 0200007F:C351 08 00000000:00000000 00:00000000 00000000     0        0 4\n"
        "   4: 0100007F:2352 0200007F:C352 06 00000000:00000000 00:00000000 00000000     0        0 5\n"
    )
    # Listening (0A), the client's own end (local port 50000) and TIME_WAIT (06) do not count.
    assert node.node_sockets([tcp], 9042) == 2 and node.node_sockets([tcp], 9043) == 0
    assert node.proc_cpu_s(os.getpid()) >= 0 and node.proc_cpu_s(2**22 + 7) is None
    # 0.1 core for 2 s, 0.9 core for 3 s, then idle: the busiest 2 s run at 0.9 core.
    samples = [(t / 10, 0.01 * min(t, 20) + 0.09 * max(0, min(t, 50) - 20)) for t in range(0, 70)]
    assert node.busiest_rate(samples, 2.0) == pytest.approx(0.9)
    assert node.busiest_rate(samples, 100.0) == pytest.approx(samples[-1][1] / samples[-1][0])
    assert node.busiest_rate([], 1.0) is None
    sampler = node.CpuSampler(None)
    sampler.samples = samples
    got = sampler.figures(2.0, 30_000.0)
    assert got["node_cpu_cores"] == 0.9 and got["node_cpu_us_per_request"] == 30.0


NODE_META = {
    "connections": [10, 100],
    "seconds": 5,
    "warmup": 1,
    "repeat": 1,
    "pin_client": "0",
    "pin_server": "1",
    "scenario": "connections_cql_cassandra",
    "heading": "On the node.",
    "server": {"kind": "cassandra", "host": "127.0.0.1", "port": 9042, "pid": 42, "release_version": "5.0.6"},
}
NODE_RUNS = [
    run("turbocql-futures", 10, 20_000.0, node_cpu_us_per_request=45.0),
    run("turbocql-futures", 100, 25_000.0, node_cpu_us_per_request=38.5),
    run("selectors", 100, 24_000.0, node_cpu_us_per_request=39.0),
    run("rust", 100, 26_000.0, cores=0.2, node_cpu_us_per_request=36.0),
    run("classic-default", 10, 0.0)
    | {"unavailable": rcc.server_unavailable("classic-default", 10, "cassandra"), "msgs_per_s": None},
]


def test_the_real_node_table_has_its_title_no_targets_and_the_node_cpu():
    md = rcc.markdown(NODE_RUNS, [10, 100], 5, 1, 1, ("0", "1"), NODE_META["server"])
    assert md.startswith("**Connections over CQL, a real Cassandra node** (issue 17 §2)")
    assert "against a Cassandra 5.0.6 node" in md and "the node (every JVM thread) on CPU 1" in md
    assert "Targets at" not in md and "No targets: the node, not the client, is the bottleneck" in md
    assert "* turbocql futures: 10: 45.0 µs, 100: 38.5 µs" in md
    assert "* Rust `scylla` crate (limit) scylla: 100: 36.0 µs" in md
    classic = next(
        line
        for line in md.splitlines()
        if line.startswith("| classic driver (one host: its one connection) | default |")
    )
    assert "| n/a |" in classic and "one connection per host" in md
    # The responder's table is unchanged by the option.
    assert "Targets at 10,000 connections:" in rcc.markdown(CANNED, [10, 10_000], 10, 1, 1)


def test_report_renders_a_cassandra_run_json_as_its_own_table_and_plot(tmp_path):
    from benchmarks import report

    data = report.as_report_data({"meta": NODE_META, "results": NODE_RUNS})
    assert list(data["scenarios"]) == ["connections_cql_cassandra"]
    assert report.as_report_data({"scenarios": {}}) == {"scenarios": {}}
    md = report.build_markdown(data)
    assert "## Connections over CQL, a real Cassandra node (issue 17 §2)" in md
    assert "On the node." in md and "a real Cassandra node (its JVM pinned" in md
    assert "Document 002's question for CQL drivers" not in md
    out = tmp_path / "cql-connections-cassandra-x.json"
    out.write_text(json.dumps({"meta": NODE_META, "results": NODE_RUNS}))
    assert report.main([str(out), "--no-plots"]) == 0
    assert "Connections over CQL, a real Cassandra node" in (tmp_path / "cql-connections-cassandra-x.md").read_text()
    pytest.importorskip("matplotlib")
    png = tmp_path / "node.png"
    assert report.plot_cql_connections(data["scenarios"], png, "connections_cql_cassandra") and png.stat().st_size
