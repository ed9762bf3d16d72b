"""Unit tests of turbocql_localdb.toxiproxy without a toxiproxy server: argument checks, the
JSON bodies, Go's environment, the build with a fake ``go``, and the client's HTTP calls
against a small recording HTTP server."""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .helpers import localdb

tp = importlib.import_module(localdb.__name__ + ".toxiproxy")


# --------------------------------------------------------------------------
# Addresses


@pytest.mark.parametrize(
    "listen",
    ["127.0.0.1:19042", "127.0.0.11:19042", "127.255.0.3:1", "[::1]:19042", "localhost:8000", "127.0.0.1:0"],
)
def test_loopback_listen_addresses_are_accepted(listen):
    assert tp.check_listen(listen) == listen


@pytest.mark.parametrize(
    "listen", ["0.0.0.0:19042", "[::]:19042", "10.0.0.1:19042", "192.168.1.2:9042", "example.com:80", ":19042"]
)
def test_other_listen_addresses_are_refused(listen):
    with pytest.raises(ValueError):
        tp.check_listen(listen)


@pytest.mark.parametrize(
    "bad", ["127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:70000", "::1:9042", "[::1:9", 9042]
)
def test_malformed_addresses(bad):
    with pytest.raises(ValueError):
        tp.split_address(bad)


def test_split_address():
    assert tp.split_address("127.0.0.1:9042") == ("127.0.0.1", 9042)
    assert tp.split_address("[::1]:19042") == ("::1", 19042)
    assert tp.split_address("db.example:9042") == ("db.example", 9042)


# --------------------------------------------------------------------------
# Bodies


def test_proxy_body():
    assert tp.proxy_body("node1", "127.0.0.1:19042", "127.0.0.1:9042") == {
        "name": "node1",
        "listen": "127.0.0.1:19042",
        "upstream": "127.0.0.1:9042",
        "enabled": True,
    }
    assert tp.proxy_body("n", "[::1]:1", "10.1.2.3:9042", enabled=False)["enabled"] is False


@pytest.mark.parametrize(
    "args",
    [
        ("", "127.0.0.1:1", "127.0.0.1:2"),
        ("a/b", "127.0.0.1:1", "127.0.0.1:2"),
        (" a", "127.0.0.1:1", "127.0.0.1:2"),
        ("a", "0.0.0.0:1", "127.0.0.1:2"),
        ("a", "127.0.0.1:1", "no-port"),
    ],
)
def test_proxy_body_refuses(args):
    with pytest.raises(ValueError):
        tp.proxy_body(*args)


def test_toxic_body_defaults_to_toxiproxys_own_name():
    assert tp.toxic_body("latency", attributes={"latency": 200, "jitter": 50}) == {
        "name": "latency_downstream",
        "type": "latency",
        "stream": "downstream",
        "toxicity": 1.0,
        "attributes": {"latency": 200, "jitter": 50},
    }
    body = tp.toxic_body("limit_data", "upstream", 0.25, "cut", {"bytes": 10})
    assert body == {
        "name": "cut",
        "type": "limit_data",
        "stream": "upstream",
        "toxicity": 0.25,
        "attributes": {"bytes": 10},
    }


def test_every_toxic_type_and_its_attributes():
    attrs = {
        "latency": {"latency": 1, "jitter": 0},
        "bandwidth": {"rate": 64},
        "slow_close": {"delay": 5},
        "timeout": {"timeout": 0},
        "reset_peer": {"timeout": 0},
        "limit_data": {"bytes": 100},
        "slicer": {"average_size": 64, "size_variation": 8, "delay": 10},
    }
    assert set(attrs) == set(tp.TOXIC_ATTRIBUTES)
    for toxic_type, a in attrs.items():
        assert tp.toxic_body(toxic_type, attributes=a)["attributes"] == a


@pytest.mark.parametrize(
    "kwargs",
    [
        {"toxic_type": "packet_loss"},
        {"toxic_type": "latency", "stream": "both"},
        {"toxic_type": "latency", "toxicity": 1.5},
        {"toxic_type": "latency", "toxicity": -0.1},
        {"toxic_type": "latency", "toxicity": True},
        {"toxic_type": "latency", "attributes": {"rate": 1}},
        {"toxic_type": "latency", "attributes": {"latency": -1}},
        {"toxic_type": "latency", "attributes": {"latency": 0.5}},
        {"toxic_type": "latency", "attributes": {"latency": "200"}},
        {"toxic_type": "limit_data", "attributes": {"bytes": True}},
        {"toxic_type": "latency", "name": "a/b"},
    ],
)
def test_toxic_body_refuses(kwargs):
    with pytest.raises(ValueError):
        tp.toxic_body(**kwargs)


def test_toxic_update_body_sends_only_what_changes():
    assert tp.toxic_update_body("latency", attributes={"latency": 5}) == {"attributes": {"latency": 5}}
    assert tp.toxic_update_body("latency", toxicity=0.5) == {"attributes": {}, "toxicity": 0.5}
    with pytest.raises(ValueError):
        tp.toxic_update_body("latency", attributes={"bytes": 5})


def test_api_host_must_be_loopback():
    with pytest.raises(ValueError):
        tp.Toxiproxy("0.0.0.0", 8475)
    with pytest.raises(ValueError):
        tp.server_command(tp.server_binary(), "0.0.0.0", 8475)
    assert tp.server_command("/x/server", "127.0.0.1", 8475) == ["/x/server", "-host", "127.0.0.1", "-port", "8475"]
    assert tp.Toxiproxy("::1", 1).base_url == "http://[::1]:1"


# --------------------------------------------------------------------------
# Where it is built, and the build


def test_build_directories_follow_xdg_cache_home(env):
    root = env / "cache" / "turbocql" / "localdb" / "toxiproxy"
    assert tp.toxiproxy_dir() == root
    assert tp.server_binary("v2.5.0") == root / "v2.5.0" / "bin" / "server"
    go_env = tp.build_env("v2.5.0", base={"PATH": "/bin", "GOFLAGS": "-buildvcs=false"})
    assert go_env["GOPATH"] == str(root / "go")
    assert go_env["GOMODCACHE"] == str(root / "go" / "pkg" / "mod")
    assert go_env["GOCACHE"].startswith(str(root))
    assert go_env["GOBIN"] == str(root / "v2.5.0" / "bin.partial")
    assert go_env["CGO_ENABLED"] == "0" and go_env["GOTOOLCHAIN"] == "local"
    assert go_env["GOFLAGS"] == "-buildvcs=false -modcacherw"
    assert go_env["PATH"] == "/bin"
    assert tp.build_command("/go", "v2.5.0") == ["/go", "install", "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0"]


def test_find_go_on_path_else_fallback_else_error(tmp_path, monkeypatch):
    go = tmp_path / "go"
    go.write_text("#!/bin/sh\n")
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert tp.find_go() == str(go)
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    monkeypatch.setattr(tp, "GO_FALLBACK", str(go))
    assert tp.find_go() == str(go)
    monkeypatch.setattr(tp, "GO_FALLBACK", str(tmp_path / "nothing"))
    with pytest.raises(localdb.LocalDBError) as info:
        tp.find_go()
    assert "Go" in str(info.value) and info.value.exit_code == localdb.EXIT_USAGE


FAKE_GO = """#!{python}
import os, sys
log = os.path.join(os.environ["GOPATH"], "calls")
os.makedirs(os.environ["GOPATH"], exist_ok=True)
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_GO_FAIL"):
    sys.stderr.write("go: module lookup disabled\\n")
    sys.exit(1)
os.makedirs(os.environ["GOBIN"], exist_ok=True)
os.makedirs(os.environ["GOCACHE"], exist_ok=True)
with open(os.path.join(os.environ["GOBIN"], "server"), "w") as f:
    f.write("binary")
"""


@pytest.fixture
def fake_go(env, monkeypatch):
    go = env / "fakego" / "go"
    go.parent.mkdir()
    go.write_text(FAKE_GO.format(python=sys.executable))
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(go.parent) + os.pathsep + os.environ.get("PATH", ""))
    return go


def test_ensure_server_builds_once(fake_go):
    said = []
    binary = tp.ensure_server("v9.9.9", out=said.append)
    assert binary == tp.server_binary("v9.9.9") and binary.read_text() == "binary"
    assert not (binary.parent.parent / "bin.partial").exists()
    assert not (tp.toxiproxy_dir() / "go" / "build-cache").exists()  # Go's build cache is dropped
    assert tp.ensure_server("v9.9.9") == binary  # built already: go is not run again
    calls = (tp.toxiproxy_dir() / "go" / "calls").read_text().splitlines()
    assert calls == ["install github.com/Shopify/toxiproxy/v2/cmd/server@v9.9.9"]
    assert any("building toxiproxy" in s for s in said)


def test_failed_build_says_why_and_leaves_no_binary(fake_go, monkeypatch):
    monkeypatch.setenv("FAKE_GO_FAIL", "1")
    with pytest.raises(localdb.LocalDBError) as info:
        tp.ensure_server("v9.9.9")
    assert "module lookup disabled" in str(info.value) and "go" in str(info.value)
    assert not tp.server_binary("v9.9.9").exists()


def test_start_server_refuses_a_taken_port(env):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        with pytest.raises(localdb.LocalDBError) as info:
            tp.start_server(port=busy.getsockname()[1])
    assert "already in use" in str(info.value)


# --------------------------------------------------------------------------
# The client against a recording HTTP server


class _Recorder(BaseHTTPRequestHandler):
    calls: list = []
    answers: dict = {}

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.calls.append((self.command, self.path, body, self.headers.get("Content-Type")))
        status, payload = self.answers.get((self.command, self.path), (200, {}))
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://192.0.2.1:3128")  # must not be used
    _Recorder.calls = []
    _Recorder.answers = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield tp.Toxiproxy("127.0.0.1", server.server_address[1], timeout=5)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


PROXY = {"name": "node1", "listen": "127.0.0.1:19042", "upstream": "127.0.0.1:9042", "enabled": True, "toxics": []}


def test_client_calls(api):
    _Recorder.answers = {
        ("GET", "/version"): (200, "git"),
        ("POST", "/proxies"): (201, PROXY),
        ("POST", "/proxies/node1"): (200, dict(PROXY, enabled=False)),
        ("POST", "/proxies/node1/toxics"): (200, {"name": "latency_downstream"}),
        ("GET", "/proxies/node1/toxics/latency_downstream"): (200, {"type": "latency", "name": "latency_downstream"}),
        ("DELETE", "/proxies/node1"): (204, ""),
    }
    assert api.version() == "git" and api.is_up()
    proxy = api.create_proxy("node1", "127.0.0.1:19042", "127.0.0.1:9042")
    assert (proxy.name, proxy.listen, proxy.upstream, proxy.enabled) == (
        "node1",
        "127.0.0.1:19042",
        "127.0.0.1:9042",
        True,
    )
    assert proxy.latency(200, jitter=50) == "latency_downstream"
    proxy.update_toxic("latency_downstream", latency=100)
    proxy.reset_peer(timeout=0, stream="upstream", toxicity=0.5)
    proxy.limit_data(5000)
    proxy.slicer(64, 8, 10)
    proxy.remove_toxic("latency_downstream")
    proxy.disable()
    assert proxy.enabled is False
    proxy.delete()
    api.reset()
    calls = [(m, p, b) for m, p, b, _ in _Recorder.calls]
    assert calls == [
        ("GET", "/version", None),
        ("GET", "/version", None),
        ("POST", "/proxies", tp.proxy_body("node1", "127.0.0.1:19042", "127.0.0.1:9042")),
        ("POST", "/proxies/node1/toxics", tp.toxic_body("latency", attributes={"latency": 200, "jitter": 50})),
        ("GET", "/proxies/node1/toxics/latency_downstream", None),
        ("POST", "/proxies/node1/toxics/latency_downstream", {"attributes": {"latency": 100}}),
        ("POST", "/proxies/node1/toxics", tp.toxic_body("reset_peer", "upstream", 0.5, None, {"timeout": 0})),
        ("POST", "/proxies/node1/toxics", tp.toxic_body("limit_data", attributes={"bytes": 5000})),
        (
            "POST",
            "/proxies/node1/toxics",
            tp.toxic_body("slicer", attributes={"average_size": 64, "size_variation": 8, "delay": 10}),
        ),
        ("DELETE", "/proxies/node1/toxics/latency_downstream", None),
        ("POST", "/proxies/node1", {"enabled": False}),
        ("DELETE", "/proxies/node1", None),
        ("POST", "/reset", None),
    ]
    assert all(ct == "application/json" for m, _, b, ct in _Recorder.calls if b is not None)


def test_client_errors_carry_the_status(api):
    _Recorder.answers = {
        ("POST", "/proxies"): (409, {"error": "proxy already exists", "status": 409}),
        ("DELETE", "/proxies/gone"): (404, {"error": "proxy not found", "status": 404}),
    }
    with pytest.raises(tp.ToxiproxyError) as info:
        api.create_proxy("node1", "127.0.0.1:19042", "127.0.0.1:9042")
    assert info.value.status == 409 and "proxy already exists" in str(info.value)
    api.delete_proxy("gone", missing_ok=True)
    with pytest.raises(tp.ToxiproxyError):
        api.delete_proxy("gone")


def test_replace_deletes_first_and_proxy_nodes_uses_each_nodes_address(api):
    _Recorder.answers = {("DELETE", "/proxies/cassandra_127.0.0.11"): (404, {"error": "proxy not found"})}

    def created(name, address):
        return {"name": name, "listen": address + ":19042", "upstream": address + ":9042", "enabled": True}

    # The recorder answers {} to POST /proxies: a Proxy needs a name, so answer each in turn.
    _Recorder.answers[("POST", "/proxies")] = (201, created("cassandra_127.0.0.11", "127.0.0.11"))
    proxies = api.proxy_nodes(["127.0.0.11"])
    assert [p.listen for p in proxies] == ["127.0.0.11:19042"]
    calls = [(m, p, b) for m, p, b, _ in _Recorder.calls]
    assert calls == [
        ("DELETE", "/proxies/cassandra_127.0.0.11", None),
        ("POST", "/proxies", tp.proxy_body("cassandra_127.0.0.11", "127.0.0.11:19042", "127.0.0.11:9042")),
    ]


def test_an_absent_server_is_an_error_not_a_hang(env):
    from .helpers import free_port

    client = tp.Toxiproxy("127.0.0.1", free_port(), timeout=2)
    assert not client.is_up()
    assert tp.find_server("127.0.0.1", client.port) is None
    with pytest.raises(tp.ToxiproxyError) as info:
        client.proxies()
    assert info.value.status == 0 and "does not answer" in str(info.value)
