"""The `tls` benchmark scenario without a server: run_tls.py's table, arguments and order,
patterns.py's TLS options, the report's TLS section, and `turbocql bench`'s TLS node handling."""

import argparse
import ssl
import sys
from pathlib import Path

import pytest

from benchmarks import report, run_tls
from benchmarks import runner as bench
from benchmarks.clients import patterns as patterns_client
from benchmarks.runner import discover, server
from turbocql_localdb import TLSFiles

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(label, spec, wl, transport, cpu, ops, **extra):
    return {
        "label": label,
        "spec": spec,
        "workload": wl,
        "transport": transport,
        "cpu_us_per_op": cpu,
        "ops_per_s": ops,
        "server_cpu_us_per_op": 50.0,
        "p50_us": 900.0 if spec == "asyncio" else None,
        "process_max_rss_mb": 40.0,
        "errors": 0,
        **extra,
    }


RESULTS = [
    _run("rust", "rust_concurrent", "write", "plain", 10.0, 20000.0),
    _run("rust", "rust_concurrent", "write", "tls", 12.5, 18000.0),
    _run("classic", "execute_concurrent", "write", "plain", 100.0, 8000.0),
    _run("classic", "execute_concurrent", "write", "tls", 125.0, 6000.0),
    _run("turbocql", "execute_concurrent", "write", "plain", 20.0, 16000.0),
    _run("turbocql", "execute_concurrent", "write", "tls", 23.0, 15000.0),
    _run("turbocql", "asyncio", "write", "plain", 30.0, 14000.0),
    {"label": "turbocql", "spec": "asyncio", "workload": "write", "transport": "tls", "failed": "boom | bust"},
    _run("turbocql", "execute_concurrent", "read", "tls", 25.0, 12000.0, errors=3),
]


def test_the_table_pairs_each_clients_plain_and_tls_rows_with_the_overhead():
    md = run_tls.markdown_table(RESULTS)
    lines = md.splitlines()
    assert lines[0] == run_tls.HEADER and lines[1].count("---") == run_tls.COLUMNS
    assert all(ln.count("|") == run_tls.COLUMNS + 1 for ln in lines)
    rows = lines[2:]
    # Per workload: the Rust reference first, then per pattern and client plain, then TLS.
    assert [r.split(" | ")[2:4] for r in rows[:6]] == [
        ["rust", "plain text"],
        ["rust", "TLS"],
        ["classic", "plain text"],
        ["classic", "TLS"],
        ["turbocql", "plain text"],
        ["turbocql", "TLS"],
    ]
    assert "reference: `scylla` crate, 120 in flight" in rows[0]
    # Ratios on the TLS row only: CPU TLS/plain, the extra µs, ops/s TLS/plain.
    assert rows[0].endswith("|  |  |  |")
    assert rows[1].endswith("| 1.25× | +2.5 | 0.90× |")
    assert rows[3].endswith("| 1.25× | +25.0 | 0.75× |")
    assert rows[5].endswith("| 1.15× | +3.0 | 0.94× |")
    asyncio_plain, asyncio_tls = rows[6], rows[7]
    assert "asyncio, 120 coroutines" in asyncio_plain and "| 900 |" in asyncio_plain
    assert "failed: boom / bust" in asyncio_tls
    # A TLS row without its plain row: no ratios; errors are shown.
    head = "| read | execute_concurrent_with_args (list, 120) | turbocql (3 errors) | TLS | 12,000 |"
    assert rows[8].startswith(head)
    assert rows[8].endswith("|  |  |  |")
    assert len(rows) == 9


def test_the_table_follows_the_chosen_workloads_and_patterns():
    md = run_tls.markdown_table(RESULTS, workloads=("read",), patterns=("execute_concurrent",))
    assert len(md.splitlines()) == 3
    assert run_tls.markdown_table([]) == ""
    assert run_tls.markdown_table(RESULTS, workloads=("read",), patterns=("asyncio",)) == ""


def test_patterns_order_and_client_arguments():
    assert run_tls.select_patterns("all") == ["execute_concurrent", "asyncio"]
    assert run_tls.select_patterns("asyncio, execute_concurrent") == ["execute_concurrent", "asyncio"]
    with pytest.raises(ValueError, match="unknown pattern 'callback_chain'"):
        run_tls.select_patterns("callback_chain")
    assert run_tls.transport_order(0) == ("plain", "tls") and run_tls.transport_order(1) == ("tls", "plain")
    assert run_tls.python_args("turbocql", "plain", "/ca.pem") == []
    assert run_tls.python_args("turbocql", "tls", "/ca.pem") == ["--tls-ca", "/ca.pem"]
    assert run_tls.python_args("classic", "plain", "/ca.pem") == ["--protocol-version", "4"]
    assert run_tls.python_args("scylla", "tls", "/ca.pem") == ["--protocol-version", "4", "--tls-ca", "/ca.pem"]
    assert run_tls.rust_supports_tls(None) is False
    assert run_tls.rust_supports_tls(Path("/nonexistent/turbocql-rust-ref")) is False


def test_runner_rejects_bad_arguments_before_any_connection(capsys):
    with pytest.raises(SystemExit) as e:
        run_tls.main(["--patterns", "nope", "--tls-ca", "/ca.pem"])
    assert e.value.code == 2 and "unknown pattern 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        run_tls.main(["--workloads", "scan", "--tls-ca", "/ca.pem"])
    assert e.value.code == 2 and "unknown workload 'scan'" in capsys.readouterr().err


def _client_args(*argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls-ca", default=None)
    ap.add_argument("--protocol-version", type=int, default=None)
    return ap.parse_args(list(argv))


def test_patterns_client_connection_options(tmp_path):
    assert patterns_client.connection_options(_client_args()) == {}
    assert patterns_client.connection_options(_client_args("--protocol-version", "4")) == {"protocol_version": 4}
    assert patterns_client.connection_options(_client_args("--protocol-version", "4"), aio=True) == {}
    assert patterns_client.acsylla_tls_options(_client_args()) == {}
    pytest.importorskip("cryptography")
    from turbocql_localdb import ensure_tls_files

    files = ensure_tls_files(tmp_path, "127.0.0.1")
    opts = patterns_client.connection_options(_client_args("--tls-ca", str(files.ca)))
    ctx = opts["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext) and ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    acs = patterns_client.acsylla_tls_options(_client_args("--tls-ca", str(files.ca)))
    assert acs["ssl_enabled"] is True and acs["ssl_trusted_cert"].startswith("-----BEGIN CERTIFICATE-----")


def test_the_report_has_a_tls_section():
    data = {
        "meta": {"options": {}},
        "scenarios": {
            "tls": {
                "heading": "5,000 ops per client run.",
                "results": RESULTS,
                "tls_node": {
                    "host": "127.0.0.1",
                    "port": 9044,
                    "ca": "/x/ca.pem",
                    "started": True,
                    "server": {
                        "release_version": "5.0.6",
                        "pid": 7,
                        "heap": "768M",
                        "tls_protocol": "TLSv1.3",
                        "tls_cipher": "TLS_AES_256_GCM_SHA384",
                    },
                },
            }
        },
    }
    md = report.build_markdown(data)
    assert "## TLS: execute_concurrent and asyncio over TLS beside plain text" in md
    assert "5,000 ops per client run." in md
    assert (
        "TLS node: 127.0.0.1:9044, Cassandra 5.0.6, pid 7, heap 768M, TLSv1.3 with TLS_AES_256_GCM_SHA384, "
        "started for this run and stopped after it." in md
    )
    assert run_tls.markdown_table(RESULTS) in md
    assert report.tls_node_line({}) == ""
    assert report.tls_node_line({"host": "h", "port": 1}).endswith("already running, left running.")
    assert "## TLS" not in report.build_markdown({"scenarios": {"tls": {"failed": "x"}}})


def test_the_tls_plot(tmp_path):
    pytest.importorskip("matplotlib")
    scen = {"tls": {"results": RESULTS}}
    assert report.plot_tls(scen, tmp_path / "t.png") and (tmp_path / "t.png").stat().st_size > 0
    assert not report.plot_tls({}, tmp_path / "none.png")


def test_bench_knows_the_scenario_and_its_options():
    assert "tls" in bench.SCENARIOS and "run_tls.py" in bench.REQUIRED_FILES
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "--scenarios", "tls"])
    assert (args.tls_port, args.tls_ca, args.tls_heap) == (discover.TLS_PORT, None, "768M")
    args = parser.parse_args(["bench", "--tls-port", "9244", "--tls-ca", "/c.pem", "--tls-heap", "1G"])
    assert (args.tls_port, args.tls_ca, args.tls_heap) == (9244, "/c.pem", "1G")


class _FakeLocalDB:
    """localdb's calls that tls_server makes, recorded."""

    class LocalDBError(Exception):
        pass

    def __init__(self, answers, ca_dir):
        self.answers = answers
        self.ca_dir = ca_dir
        self.calls = []

    def wait_for_cql(self, host, port, timeout, ssl_context=None):
        self.calls.append(("wait", port, ssl_context is not None))
        return self.answers

    def status(self, port):
        ca_dir = self.ca_dir

        class _Node:
            def tls_files(self):
                return TLSFiles(ca_dir) if (ca_dir / "ca.pem").exists() else None

        return _Node()

    def start(self, **kw):
        self.calls.append(("start", kw["port"], kw["heap"], kw["tls"], kw["require_client_auth"]))
        (self.ca_dir / "ca.pem").write_text("CA")
        ca_dir = self.ca_dir

        class _Node:
            version, pid, already_running = "5.0.6", 42, False

            def tls_files(self):
                return TLSFiles(ca_dir)

        return _Node()

    def stop(self, port):
        self.calls.append(("stop", port))
        return True


def _with_fake_localdb(monkeypatch, fake):
    monkeypatch.setitem(sys.modules, "turbocql_localdb", fake)
    monkeypatch.setattr(server.TLSNode, "ssl_context", lambda self: object())


def test_tls_server_starts_a_missing_node_and_stops_it_after(monkeypatch, tmp_path, capsys):
    fake = _FakeLocalDB(answers=False, ca_dir=tmp_path)
    _with_fake_localdb(monkeypatch, fake)
    with server.tls_server("127.0.0.1", 9044, True, 1, None, "768M") as node:
        assert node.started and node.ca == tmp_path / "ca.pem"
        assert fake.calls == [("start", 9044, "768M", True, False)]  # no CA yet: nothing to probe with
    assert fake.calls[-1] == ("stop", 9044)
    assert node.to_json() == {"host": "127.0.0.1", "port": 9044, "ca": str(tmp_path / "ca.pem"), "started": True}


def test_tls_server_uses_a_running_node_and_leaves_it(monkeypatch, tmp_path):
    (tmp_path / "ca.pem").write_text("CA")
    fake = _FakeLocalDB(answers=True, ca_dir=tmp_path)
    _with_fake_localdb(monkeypatch, fake)
    with server.tls_server("127.0.0.1", 9044, True, 1) as node:
        assert not node.started
    assert fake.calls == [("wait", 9044, True)]


def test_tls_server_refusals(monkeypatch, tmp_path):
    fake = _FakeLocalDB(answers=False, ca_dir=tmp_path)
    _with_fake_localdb(monkeypatch, fake)
    with pytest.raises(bench.BenchError, match="no Cassandra answers over TLS .*CA certificate is unknown"):
        with server.tls_server("127.0.0.1", 9044, False, 1):
            pass
    with pytest.raises(bench.BenchError, match="no such file"):
        with server.tls_server("127.0.0.1", 9044, True, 1, str(tmp_path / "missing.pem")):
            pass
    (tmp_path / "ca.pem").write_text("CA")
    with pytest.raises(bench.BenchError, match=r"no Cassandra answers over TLS at db:9044$"):
        with server.tls_server("db", 9044, True, 1):
            pass
    assert not [c for c in fake.calls if c[0] in ("start", "stop")]
