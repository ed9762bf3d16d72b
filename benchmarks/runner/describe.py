"""What a run ran on: the machine (CPU, memory, OS, toolchains, versions) and the server.

Each value that cannot be found is None (or the server's ``query_error``): the report says
what is missing and the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import subprocess
from pathlib import Path


def _run(cmd: list[str], timeout: float = 20) -> str | None:
    """stdout (or stderr, for ``java -version``) of a command, or None."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.strip() or r.stderr.strip()
    return out if r.returncode == 0 and out else None


def _first_line(text: str | None) -> str | None:
    lines = (text or "").splitlines()
    return lines[0] if lines else None


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


_VERSIONS_SNIPPET = """
import importlib, json, platform
d = {"python": platform.python_implementation() + " " + platform.python_version()}
for name, mod in (("turbocql", "turbocql"), ("numpy", "numpy"), ("uvloop", "uvloop"),
                  ("matplotlib", "matplotlib")):
    try:
        d[name] = getattr(importlib.import_module(mod), "__version__", "installed")
    except Exception as e:
        d[name] = None
print(json.dumps(d))
"""


def describe_machine(python: str, bdir: Path) -> dict:
    """CPU, memory, OS, toolchains and the turbocql clients' package versions (the other
    clients' interpreters and versions are ``machine["clients"]``, from ``peers.py``)."""
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    osr = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', _read("/etc/os-release"), re.M)
    m = {
        "hostname": platform.node(),
        "cpu_model": model.group(1).strip() if model else platform.processor() or None,
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gb": round(int(mem.group(1)) / 2**20, 1) if mem else None,
        "kernel": platform.release(),
        "os": osr.group(1) if osr else platform.platform(),
        "arch": platform.machine(),
        "runner_python": platform.python_version(),
        "rustc": _run(["rustc", "--version"]),
        "cargo": _run(["cargo", "--version"]),
        "java": _first_line(_run(["java", "-version"])),
    }
    versions = _run([python, "-c", _VERSIONS_SNIPPET], timeout=60)
    try:
        v = json.loads(versions.splitlines()[-1]) if versions else {}
    except ValueError:
        v = {}
    m["client_python"] = v.pop("python", None)
    m.update(v)
    root = bdir.parent
    commit = _run(["git", "-C", str(root), "rev-parse", "HEAD"])
    if commit:
        m["git_commit"] = commit
        m["git_dirty"] = bool(_run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"]))
    return m


def describe_server(host: str, port: int, pid: int | None, ssl_context=None) -> dict:
    """Cassandra's version (system.local), and, for a local pid, its JVM and settings.

    With ``ssl_context`` it connects over TLS and adds the TLS version and cipher suite the
    node reports for that connection (``system_views.clients``: ``tls_protocol``, ``tls_cipher``)."""
    s: dict = {"host": host, "port": port, "pid": pid}
    try:
        from turbocql.cluster import Cluster

        tag = f"turbocql-bench-describe-{os.getpid()}"
        tls = {"ssl_context": ssl_context, "application_name": tag} if ssl_context is not None else {}
        cluster = Cluster([host], port=port, **tls)
        try:
            session = cluster.connect()
            row = session.execute(
                "SELECT release_version, cluster_name, cql_version, native_protocol_version FROM system.local"
            ).one()
            s.update(
                release_version=row.release_version,
                cluster_name=row.cluster_name,
                cql_version=row.cql_version,
                native_protocol_version=row.native_protocol_version,
            )
            if ssl_context is not None:
                rows = session.execute(
                    "SELECT ssl_enabled, ssl_protocol, ssl_cipher_suite, client_options FROM system_views.clients"
                )
                mine = [r for r in rows if (r.client_options or {}).get("APPLICATION_NAME") == tag and r.ssl_enabled]
                if mine:
                    s.update(tls_protocol=mine[0].ssl_protocol, tls_cipher=mine[0].ssl_cipher_suite)
        finally:
            cluster.shutdown()
    except Exception as e:  # the report says why, the run goes on
        s["query_error"] = f"{type(e).__name__}: {e}"[:300]
    if pid:
        with contextlib.suppress(OSError):
            exe = os.readlink(f"/proc/{pid}/exe")
            s["java"] = _first_line(_run([exe, "-version"]))
        cmdline = _read(f"/proc/{pid}/cmdline").split("\0")
        heap = next((a[4:] for a in cmdline if a.startswith("-Xmx")), None)
        s["heap"] = heap
        conf = next((a.split("=", 1)[1] for a in cmdline if a.startswith("-Dcassandra.config=")), None)
        if conf:
            yaml = _read(conf.removeprefix("file://"))
            cs = re.search(r"^commitlog_sync:\s*(\S+)", yaml, re.M)
            s["commitlog_sync"] = cs.group(1) if cs else None
        with contextlib.suppress(OSError):
            s["affinity"] = sorted(os.sched_getaffinity(pid))
    return s
