"""Shared helpers of the localdb unit tests: the module under test, the CLI, free ports.

``localdb`` is ``turbocql_localdb`` (the turbocql-localdb distribution, ``localdb/`` in the
checkout; it does not need the driver nor its engine).
"""

from __future__ import annotations

import argparse
import random
import socket
import subprocess
import sys

import turbocql_localdb as localdb

# The package's modules (private names are tested, and patched, where they live).
node_mod = sys.modules[localdb.__name__ + ".node"]
classpath_mod = sys.modules[localdb.__name__ + ".classpath"]
probe_mod = sys.modules[localdb.__name__ + ".probe"]
process_mod = sys.modules[localdb.__name__ + ".process"]


def cli(*argv: str) -> int:
    """Run ``turbocql localdb ARGV`` through the module's own argparse registration."""
    parser = argparse.ArgumentParser(prog="turbocql")
    sub = parser.add_subparsers(dest="command", required=True)
    localdb.add_parser(sub)
    args = parser.parse_args(["localdb", *argv])
    return args.func(args)


_GIVEN: set[int] = set()
_RANDOM = random.Random()


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range and not given before in this
    process. Below the range: a port the kernel hands out (bind to port 0) is also what it
    gives other processes' outgoing connections as their local port, so on a busy machine
    another program's connection could take it between this call and the node's listen (or
    between a stop and a restart of the node); no outgoing connection takes a port below
    the range. Not given before: two nodes of a test, or a node's native and storage ports,
    must differ."""
    low = _ephemeral_low()
    while True:
        port = _RANDOM.randrange(10000, low)
        if port in _GIVEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _GIVEN.add(port)
        return port


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (``net.ipv4.ip_local_port_range``)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def start_args(node_dir, port=None, storage_port=None, *extra):
    port = port or free_port()
    storage_port = storage_port or free_port()
    return ["start", "--dir", str(node_dir), "--port", str(port), "--storage-port", str(storage_port), *extra]


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="turbocql")
    sub = parser.add_subparsers(dest="command", required=True)
    localdb.add_parser(sub)
    return parser.parse_args(["localdb", *argv])


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


FAKE_JAVA = r'''#!{python}
"""A stand-in for `java ... CassandraDaemon`; FAKE_JAVA_MODE = serve | die | hang.

FAKE_JAVA_DIE_ADDRESS: the node listening on that address dies at startup (a cluster's).
FAKE_JAVA_NO_SEED=ADDRESS:N:FILE: that node dies N times as Cassandra does when it cannot reach
its seed (FILE counts the deaths), then serves."""
import json, os, socket, ssl, struct, sys, time

mode = os.environ.get("FAKE_JAVA_MODE", "serve")
if mode == "die":
    print("Error: fake failure before startup", file=sys.stderr, flush=True)
    sys.exit(1)
if mode == "hang":
    while True:
        time.sleep(1)
config = next(a for a in sys.argv if a.startswith("-Dcassandra.config=file://"))
conf = {{}}
tls = {{}}  # client_encryption_options: TLS as Cassandra would speak it with these PEM files
for line in open(config[len("-Dcassandra.config=file://"):]):
    if ":" in line and not line.startswith((" ", "#")):
        k, v = line.split(":", 1)
        conf[k.strip()] = v.strip()
    elif line.startswith("  ") and not line.startswith("   ") and list(conf)[-1] == "client_encryption_options":
        k, v = line.split(":", 1)
        tls[k.strip()] = v.strip()
server_ctx = None
if tls.get("enabled") == "true":
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(json.loads(tls["keystore"]))
    if tls.get("require_client_auth") == "true":
        server_ctx.verify_mode = ssl.CERT_REQUIRED
        server_ctx.load_verify_locations(json.loads(tls["truststore"]))
no_seed = os.environ.get("FAKE_JAVA_NO_SEED")
if no_seed and no_seed.split(":")[0] == conf["rpc_address"]:
    _addr, times, counter = no_seed.split(":", 2)
    died = int(open(counter).read() or 0) if os.path.exists(counter) else 0
    if died < int(times):
        open(counter, "w").write(str(died + 1))
        print("java.lang.IllegalStateException: Unable to contact any seeds: [/127.0.0.201:7000]", flush=True)
        sys.exit(3)
if os.environ.get("FAKE_JAVA_DIE_ADDRESS") == conf["rpc_address"]:
    print("Error: fake failure of the node at " + conf["rpc_address"], file=sys.stderr, flush=True)
    sys.exit(1)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((conf["rpc_address"], int(conf["native_transport_port"])))
srv.listen(16)
print("fake cassandra listening", flush=True)
while True:
    conn, _ = srv.accept()
    with conn:
        try:
            if server_ctx is not None:
                conn.settimeout(5)
                conn = server_ctx.wrap_socket(conn, server_side=True)
            while True:
                head = b""
                while len(head) < 9:
                    chunk = conn.recv(9 - len(head))
                    if not chunk:
                        raise EOFError
                    head += chunk
                _v, _f, stream, op, length = struct.unpack(">BBhBi", head)
                if length:
                    conn.recv(length)
                if op == 0x05:  # OPTIONS -> SUPPORTED (empty multimap)
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, 0x06, 2) + b"\0\0")
                elif op == 0x01:  # STARTUP -> READY
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, 0x02, 0))
                else:
                    break
        except (EOFError, OSError):
            pass
'''
