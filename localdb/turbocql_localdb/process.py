"""The localdb daemon's life: start, stop, status.

Finding our daemon (its pid file, or its command line's directory marker in ``/proc``),
spawning it detached, terminating it (only ever the process started for that directory), and
the public :func:`start`, :func:`stop`, :func:`status` and :func:`is_running`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from .classpath import find_java, resolve_classpath
from .config import java_command, write_config
from .node import (
    CLUSTER_FILE,
    DAEMON_CLASS,
    DEFAULT_ADDRESS,
    DEFAULT_HEAP,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    EXIT_FAILED,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    _load_node,
    _locked,
    _resolve_tls,
    _tail,
    _write_atomic,
    make_node,
)
from .probe import check_ports_free, cql_answers, cql_login_ok, wait_for_cql


def _without_emulator(args: list[str]) -> list[str]:
    """``args`` without the user-mode emulator that runs a foreign program through
    binfmt_misc (qemu-user: an arm64 container on x86_64, or the reverse; scripts/arm64.sh):
    its /proc/PID/cmdline is the emulator, the program's path, then the program's own argv
    (from its argv[0] when the registration preserves it, flag P, as qemu-user-static's does;
    from argv[1] otherwise)."""
    if len(args) < 2 or not (os.path.basename(args[0]).startswith("qemu-") or "qemu-binfmt" in args[0]):
        return args
    if len(args) > 2 and os.path.basename(args[2]) == os.path.basename(args[1]):
        return args[2:]
    return args[1:]


def _cmdline(pid: int) -> list[str] | None:
    """The argv of a live (non-zombie) process, or None if it is gone; a program run by a
    user-mode emulator shows its own (:func:`_without_emulator`)."""
    proc = Path(f"/proc/{pid}")
    if Path("/proc/self").exists():
        try:
            stat = (proc / "stat").read_text()
            if stat[stat.rindex(")") + 2 :].startswith(("Z", "X")):
                return None
            raw = (proc / "cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return _without_emulator([a.decode(errors="replace") for a in raw.split(b"\0") if a])
    try:  # pragma: no cover - non-Linux fallback
        res = subprocess.run(["ps", "-o", "stat=,command=", "-p", str(pid)], capture_output=True, text=True)
    except OSError:  # pragma: no cover
        return None
    line = res.stdout.strip()  # pragma: no cover
    if res.returncode != 0 or not line or line.split(None, 1)[0].startswith("Z"):  # pragma: no cover
        return None
    return line.split(None, 1)[1].split() if " " in line else []  # pragma: no cover


def _is_our_daemon(pid: int, node: Node) -> bool:
    args = _cmdline(pid)
    return args is not None and DAEMON_CLASS in args and node.marker in args


def _read_pid(node: Node) -> int | None:
    try:
        text = node.pid_file.read_text().strip()
    except OSError:
        return None
    try:
        pid = int(text)
    except ValueError:
        return None
    return pid if pid > 0 else None


def _scan_for_daemon(node: Node) -> int | None:
    """Find our daemon by its command line when the pid file is missing or stale."""
    proc = Path("/proc")
    if not (proc / "self").exists():
        return None
    for entry in proc.iterdir():
        if entry.name.isdigit() and _is_our_daemon(int(entry.name), node):
            return int(entry.name)
    return None


def running_pid(node: Node) -> int | None:
    """The pid of this node's daemon if it runs; cleans up a stale pid file."""
    pid = _read_pid(node)
    if pid is not None and _is_our_daemon(pid, node):
        return pid
    if node.pid_file.exists():
        with contextlib.suppress(OSError):
            node.pid_file.unlink()
    found = _scan_for_daemon(node)
    if found is not None:
        with contextlib.suppress(OSError):
            _write_atomic(node.pid_file, f"{found}\n")
    return found


def _spawn(cmd: list[str], output: Path, cwd: Path) -> int:
    """Start ``cmd`` detached (own session, reparented to init); return its pid.

    A throwaway ``sh`` starts it in the background and exits, so the daemon
    is not our child: no zombie and no ResourceWarning from an unwaited Popen.
    """
    script = 'out="$1"; shift; "$@" </dev/null >>"$out" 2>&1 & echo $!'
    res = subprocess.run(
        ["sh", "-c", script, "sh", str(output), *cmd],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        pid = int(res.stdout.strip())
    except ValueError:
        raise LocalDBError(f"could not start java: {res.stderr.strip() or res.stdout.strip()}") from None
    _wait_for_exec(pid)
    return pid


def _wait_for_exec(pid: int, timeout: float = 30.0) -> None:
    """Waits until the background child ``pid`` has run its command (or is gone).

    Until its ``exec`` it is still a copy of the shell (``sh -c ...``): on a loaded machine
    that lasts long enough for a liveness check by command line to take the starting
    daemon for a dead one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        args = _cmdline(pid)
        if args is None or (args and args[:2] != ["sh", "-c"]):
            return
        time.sleep(0.01)


def _is_starting_or_ours(pid: int, node: Node) -> bool:
    """The liveness check while ``pid`` starts: our daemon, or still on its way to it.

    In the middle of its ``execve`` a process shows an empty command line for a moment, and
    until then the shell's; a CI run once took such a moment for a dead daemon and stopped
    a starting cluster. Only a gone (or zombie) process, or one running something else,
    counts as dead."""
    args = _cmdline(pid)
    if args is None:
        return False
    if not args or args[:2] == ["sh", "-c"]:
        return True
    return DAEMON_CLASS in args and node.marker in args


def _wait_gone(pid: int, node: Node, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_our_daemon(pid, node):
            return True
        time.sleep(0.2)
    return not _is_our_daemon(pid, node)


def _terminate(pid: int, node: Node, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, wait up to ``timeout``, then SIGKILL; only if ``pid`` is our daemon."""
    if not _is_our_daemon(pid, node):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, node, timeout):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait_gone(pid, node, 10.0)


# --------------------------------------------------------------------------
# Public API


def _death_report(node: Node) -> str:
    parts = []
    out = _tail(node.output_path, 20)
    if out.strip():
        parts.append(f"--- last lines of {node.output_path} ---\n{out}")
    log = _tail(node.log_path, 40)
    if log.strip():
        parts.append(f"--- last lines of {node.log_path} ---\n{log}")
    return "\n".join(parts) or f"(no log output in {node.logs_dir})"


def start(
    dir: str | os.PathLike | None = None,
    port: int = DEFAULT_PORT,
    heap: str = DEFAULT_HEAP,
    auth: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    address: str = DEFAULT_ADDRESS,
    storage_port: int | None = None,
    version: str = DEFAULT_VERSION,
    commitlog: str = "periodic",
    tls: bool | None = None,
    require_client_auth: bool | None = None,
    yaml_settings: Mapping[str, str] | None = None,
    out=None,
) -> Node:
    """Start a node (or find it already running) and wait until CQL answers.

    Returns the :class:`Node` with ``pid`` set (``already_running`` tells
    whether it was started by this call).  Raises :class:`LocalDBError`.
    ``out`` is a ``print``-like callable for progress messages (default: none).

    ``tls=True``: the native port speaks TLS only, with certificates made in the node's
    ``tls/`` (kept across restarts; ``node.tls_files()``); ``require_client_auth=True`` (implies
    TLS): clients must present a certificate signed by its CA (``tls_files().client_cert``).
    None (the default) for either: as the directory's ``node.json`` has it (off for a new node).

    ``yaml_settings``: top-level cassandra.yaml settings, name to value, each replacing
    localdb's own value or added (e.g. ``{"materialized_views_enabled": "false"}``: a node
    configured as Cassandra's stock cassandra.yaml has it); ``{}`` for none. None (the
    default): as the directory's ``node.json`` has them (none for a new node).
    """
    say = out or (lambda *a, **k: None)
    tls, require_client_auth = _tls_choice(dir, port, tls, require_client_auth)
    if yaml_settings is None:
        yaml_settings = _load_node(dir, port).yaml_settings
    node = make_node(
        dir,
        port,
        heap,
        auth,
        address=address,
        storage_port=storage_port,
        version=version,
        commitlog=commitlog,
        tls=tls,
        require_client_auth=require_client_auth,
        yaml_settings=yaml_settings,
    )
    node.dir.mkdir(parents=True, exist_ok=True)
    if (node.dir / CLUSTER_FILE).exists():
        raise LocalDBError(
            f"{node.dir} holds a localdb cluster ({CLUSTER_FILE}), not a single node: start it "
            "with `turbocql localdb start --dir DIR` or localdb.start_cluster, or use another --dir",
            EXIT_USAGE,
        )
    with _locked(node.dir / ".lock"):
        pid = running_pid(node)
        if pid is not None:
            return _attach(node, pid, timeout, say)
        java = find_java()
        classpath = resolve_classpath(node.version, out=say)
        return _launch(node, java, classpath, timeout, say)


def _tls_choice(
    dir: str | os.PathLike | None, port: int, tls: bool | None, require_client_auth: bool | None
) -> tuple[bool, bool]:
    """``tls`` and ``require_client_auth`` with None replaced by the directory's saved settings."""
    if tls is not None and require_client_auth is not None:
        return _resolve_tls(tls, require_client_auth, False, False)
    saved = _load_node(dir, port)
    return _resolve_tls(tls, require_client_auth, saved.tls, saved.require_client_auth)


def _launch(node: Node, java: str, classpath: str, timeout: float, say) -> Node:
    """Start ``node``'s daemon (known not to run) and wait until it answers CQL.

    Writes its configuration, spawns java, and waits; the caller holds the node's lock.
    Raises :class:`LocalDBError` (with the end of its logs) if it dies or does not answer
    within ``timeout`` seconds (then it is killed)."""
    check_ports_free(node)
    write_config(node)
    cmd = java_command(node, java, classpath)
    with open(node.output_path, "ab") as fh:
        fh.write(f"\n=== turbocql localdb start {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n".encode())
    t0 = time.monotonic()
    pid = _spawn(cmd, node.output_path, node.dir)
    _write_atomic(node.pid_file, f"{pid}\n")
    node.pid = pid
    node.already_running = False
    where = f"{node.name} " if node.name else ""
    say(
        f"started Cassandra {node.version} {where}(pid {pid}), waiting for CQL on "
        f"{node.address}:{node.port} (up to {timeout:.0f} s)..."
    )
    up = wait_for_cql(
        node.address, node.port, timeout, alive=lambda: _is_starting_or_ours(pid, node), ssl_context=node.ssl_context()
    )
    if not up:
        if not _is_starting_or_ours(pid, node):
            with contextlib.suppress(OSError):
                node.pid_file.unlink()
            raise LocalDBError(
                f"Cassandra (pid {pid}) exited during startup.\n{_death_report(node)}",
                EXIT_FAILED,
            )
        _terminate(pid, node, timeout=10.0)
        with contextlib.suppress(OSError):
            node.pid_file.unlink()
        raise LocalDBError(
            f"Cassandra did not answer CQL on {node.address}:{node.port} within "
            f"{timeout:.0f} s; killed it (pid {pid}). See {node.log_path}",
            EXIT_FAILED,
        )
    if node.auth:
        _wait_for_superuser(node, min(30.0, timeout))
    node.start_seconds = time.monotonic() - t0
    return node


def _attach(node: Node, pid: int, timeout: float, say) -> Node:
    """``start`` on a running node: report it, wait for CQL, use its saved settings."""
    saved = _load_node(node.dir, node.port)
    if saved.port != node.port or saved.address != node.address:
        raise LocalDBError(
            f"the localdb node in {node.dir} already runs on {saved.address}:{saved.port} "
            f"(pid {pid}), not {node.address}:{node.port}; stop it first or use another --dir",
            EXIT_USAGE,
        )
    if (saved.tls, saved.require_client_auth) != (node.tls, node.require_client_auth):
        raise LocalDBError(
            f"the localdb node in {node.dir} already runs (pid {pid}) with {_tls_words(saved)}, "
            f"not {_tls_words(node)}; stop it first or use another --dir",
            EXIT_USAGE,
        )
    if saved.yaml_settings != node.yaml_settings:
        raise LocalDBError(
            f"the localdb node in {node.dir} already runs (pid {pid}) with the settings "
            f"{settings_words(saved.yaml_settings)}, not {settings_words(node.yaml_settings)}; "
            "stop it first or use another --dir",
            EXIT_USAGE,
        )
    saved.pid = pid
    saved.already_running = True
    ctx = saved.ssl_context()
    if not cql_answers(saved.address, saved.port, ssl_context=ctx):
        say(f"Cassandra (pid {pid}) is already starting; waiting for CQL...")
        alive = lambda: _is_our_daemon(pid, saved)  # noqa: E731
        if not wait_for_cql(saved.address, saved.port, timeout, alive=alive, ssl_context=ctx):
            raise LocalDBError(
                f"Cassandra (pid {pid}) runs but CQL does not answer on "
                f"{saved.address}:{saved.port}; see {saved.log_path}",
                EXIT_FAILED,
            )
    return saved


def settings_words(settings: Mapping[str, str]) -> str:
    """``NAME=VALUE, ...`` (``(none)`` when empty): a node's ``yaml_settings`` for people."""
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "(none)"


def _tls_words(node: Node) -> str:
    if not node.tls:
        return "TLS off"
    return "TLS on (client auth required)" if node.require_client_auth else "TLS on"


def _wait_for_superuser(node: Node, timeout: float) -> None:
    """With auth on, wait until the default superuser cassandra/cassandra can log in."""
    deadline = time.monotonic() + timeout
    ctx = node.ssl_context()
    while time.monotonic() < deadline:
        if cql_login_ok(node.address, node.port, ssl_context=ctx):
            return
        time.sleep(0.5)
    # The password may have been changed on purpose: not an error.


def stop(dir: str | os.PathLike | None = None, port: int | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the node in ``dir`` (default: the default dir for ``port``).

    Only the daemon started there (found through its pid file) is signalled:
    SIGTERM, up to ``timeout`` seconds, then SIGKILL.  Returns True if a
    process was stopped, False if nothing was running.
    """
    node = _load_node(dir, port)
    if not node.dir.exists():
        return False
    with _locked(node.dir / ".lock"):
        pid = running_pid(node)
        if pid is None:
            return False
        _terminate(pid, node, timeout)
        if _is_our_daemon(pid, node):
            raise LocalDBError(f"could not stop Cassandra (pid {pid})", EXIT_FAILED)
        with contextlib.suppress(OSError):
            node.pid_file.unlink()
        return True


def status(dir: str | os.PathLike | None = None, port: int | None = None) -> Node:
    """The node in ``dir`` with ``pid`` set if it runs (None if not)."""
    node = _load_node(dir, port)
    node.pid = running_pid(node) if node.dir.exists() else None
    return node


def is_running(dir: str | os.PathLike | None = None, port: int | None = None) -> bool:
    """True if the daemon of the node in ``dir`` (or the default dir for ``port``) runs."""
    return status(dir, port).pid is not None
