"""The benchmark's clients and the Python interpreter each one runs with.

Every Python peer of turbocql runs in its own virtualenv, created by the suite on first use
and reused afterwards, so that the classic driver, scylla-driver (a fork of the classic driver
that installs the same ``cassandra`` module) and acsylla never share an environment with
turbocql or with each other:

* ``classic``  cassandra-driver 3.30.1 (+ numpy for the vector clients), ``<venvs>/classic``;
* ``scylla``   scylla-driver 3.29.12 (same API, module ``cassandra``) + numpy, ``<venvs>/scylla``;
* ``acsylla``  acsylla 1.2.0 (asyncio over the C++ driver) + uvloop, ``<venvs>/acsylla``;
* ``gevent``   cassandra-driver 3.30.1 + gevent, ``<venvs>/gevent``: the classic driver on
  ``GeventConnection`` with greenlets (the ``ingest`` scenario's gevent model, document 003);
  not a client of its own (``--clients`` has no ``gevent``): the ``classic`` client's gevent
  interpreter, resolved by ``run_ingest.py`` when it runs that model.

``<venvs>`` is ``benchmarks/.venvs`` (git-ignored) unless ``--venvs-dir`` says otherwise. A
venv is created with ``<python> -m venv`` (the interpreter that runs the runner, so the peers
get the same Python version as turbocql) and ``pip install`` of the peer's requirements; the
requirements are written to ``<venv>/turbocql-peer.json`` once installed, and a venv whose
file matches is reused as it is. ``--classic-python PATH`` (``--scylla-python``,
``--acsylla-python``) uses another interpreter instead, with no installation. turbocql runs
with ``--python`` (default: the runner's own interpreter), the Rust reference is a binary.

If a peer cannot be installed (no wheel for this Python, no network) or does not import, it
is reported as ``not available: <reason>`` and the run goes on without it.

:func:`plan` (what to do with a venv) and :func:`availability_note` are pure and unit-tested;
:func:`resolve` does the work.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VENVS_DIR = HERE / ".venvs"
MARKER = "turbocql-peer.json"
INSTALL_TIMEOUT = 900.0


@dataclasses.dataclass(frozen=True)
class Peer:
    name: str  # client name in --clients and in the results
    title: str  # shown in reports
    module: str  # what the clients import
    dists: tuple[str, ...]  # distributions whose versions are recorded
    requirements: tuple[str, ...]  # pip install arguments
    driver: str  # the clients' --driver value


PEERS: dict[str, Peer] = {
    "classic": Peer(
        "classic",
        "classic driver (cassandra-driver)",
        "cassandra",
        ("cassandra-driver", "numpy"),
        ("cassandra-driver==3.30.1", "numpy"),
        "cassandra",
    ),
    "scylla": Peer(
        "scylla",
        "scylla-driver",
        "cassandra",
        ("scylla-driver", "numpy"),
        ("scylla-driver==3.29.12", "numpy"),
        "cassandra",
    ),
    "acsylla": Peer(
        "acsylla", "acsylla (asyncio)", "acsylla", ("acsylla", "uvloop"), ("acsylla==1.2.0", "uvloop"), "acsylla"
    ),
    # The classic driver with gevent (GeventConnection and greenlets), kept apart from the
    # classic venv so that gevent never sits beside the other classic clients.
    "gevent": Peer(
        "gevent",
        "classic driver + gevent",
        "gevent",
        ("cassandra-driver", "gevent"),
        ("cassandra-driver==3.30.1", "gevent"),
        "cassandra",
    ),
}
TURBOCQL_DISTS = ("turbocql", "numpy", "uvloop")
# Every client the runners know, in table order.
ALL_CLIENTS = ("classic", "scylla", "turbocql", "acsylla", "rust")
PYTHON_CLIENTS = ("classic", "scylla", "turbocql", "acsylla")


@dataclasses.dataclass
class Client:
    """One client of a run: its interpreter, versions, or why it is not available."""

    name: str
    python: str | None = None
    versions: dict | None = None
    reason: str | None = None  # set when not available
    action: str | None = None  # explicit / reuse / create / reinstall / none

    @property
    def available(self) -> bool:
        return self.reason is None

    def to_json(self) -> dict:
        d = {"python": self.python, "available": self.available}
        if self.versions:
            d["versions"] = self.versions
        if self.reason:
            d["reason"] = self.reason
        if self.action:
            d["venv"] = self.action
        return d


def parse_clients(text: str, known: tuple[str, ...] = ALL_CLIENTS) -> list[str]:
    """``--clients``: comma-separated names, in the order given, without repeats."""
    out: list[str] = []
    for c in (c.strip() for c in text.split(",")):
        if not c:
            continue
        if c not in known:
            raise ValueError(f"unknown client {c!r} (known: {', '.join(known)})")
        if c not in out:
            out.append(c)
    return out


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def plan(explicit: str | None, python_exists: bool, recorded: list[str] | None, wanted: tuple[str, ...]) -> str:
    """What to do for one peer's interpreter.

    ``explicit``: a ``--<peer>-python`` given (then nothing is installed); ``python_exists``:
    the venv's interpreter is there; ``recorded``: the requirements its marker file lists
    (None if no marker: an unfinished or foreign venv). Returns ``explicit``, ``reuse`` (the
    venv has these requirements), ``reinstall`` (it exists with other or unknown requirements:
    pip install into it) or ``create``.
    """
    if explicit:
        return "explicit"
    if not python_exists:
        return "create"
    if recorded is not None and list(recorded) == list(wanted):
        return "reuse"
    return "reinstall"


def availability_note(clients: dict[str, Client]) -> list[str]:
    """One line per client that is not available, for tables and logs."""
    return [f"{name}: not available: {c.reason}" for name, c in clients.items() if not c.available]


def last_line(text: str, limit: int = 240) -> str:
    """The last informative line of a tool's output (pip's error, a traceback's message)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith(("ERROR:", "error:")) or "Error" in ln.split(":")[0]:
            return ln[:limit]
    return (lines[-1] if lines else "no output")[:limit]


_PROBE = """
import importlib, importlib.metadata as md, json, platform, sys
mod, dists = sys.argv[1], sys.argv[2:]
out = {"python_version": platform.python_implementation() + " " + platform.python_version()}
try:
    importlib.import_module(mod) if mod else None
except Exception as e:
    out["import_error"] = f"import {mod} failed: {type(e).__name__}: {e}"
pk = {}
for d in dists:
    try:
        pk[d] = md.version(d)
    except md.PackageNotFoundError:
        pk[d] = None
out["packages"] = pk
if mod == "cassandra" or "cassandra-driver" in dists or "scylla-driver" in dists:
    # What the classic driver runs on here: its default reactor (Cluster.connection_class, the
    # first of libev / asyncore / asyncio that loads) and whether its Cython extensions are
    # loaded (cassandra.cluster compiled; the Cython row parser of cython_deps).
    state = {}
    try:
        import cassandra.cluster as cc
        cls = cc.Cluster.connection_class
        state["reactor"] = cls.__module__ + "." + cls.__qualname__
        state["cython_extensions"] = not cc.__file__.endswith(".py")
        import cassandra.cython_deps as cd
        state["cython_row_parser"] = bool(cd.HAVE_CYTHON)
    except Exception as e:
        state["error"] = f"{type(e).__name__}: {e}"
    out["classic_driver"] = state
print(json.dumps(out))
"""


def probe(python: str, module: str, dists: tuple[str, ...]) -> tuple[dict | None, str | None]:
    """(versions, error) of an interpreter: its Python version, the dists' versions, and
    whether ``module`` imports."""
    try:
        r = subprocess.run([python, "-c", _PROBE, module, *dists], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"cannot run {python}: {e}"
    if r.returncode != 0:
        return None, f"{python}: {last_line(r.stderr)}"
    try:
        v = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"{python}: unreadable version probe"
    err = v.pop("import_error", None)
    return v, err


def _read_marker(venv: Path) -> list[str] | None:
    try:
        return list(json.loads((venv / MARKER).read_text())["requirements"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ensure_venv(peer: Peer, venvs_dir: Path, base_python: str, log=None) -> tuple[str | None, str, str | None]:
    """Create or update ``<venvs_dir>/<peer>``; (python, action, error)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    venv = venvs_dir / peer.name
    py = venv_python(venv)
    action = plan(None, py.exists(), _read_marker(venv), peer.requirements)
    if action == "reuse":
        return str(py), action, None
    if action == "create":
        log(f"creating the {peer.name} client's virtualenv {venv} ...")
        venvs_dir.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([base_python, "-m", "venv", str(venv)], capture_output=True, text=True)
        if r.returncode != 0:
            return None, action, f"python -m venv failed: {last_line(r.stderr + r.stdout)}"
    log(f"installing {' '.join(peer.requirements)} into {venv} ...")
    try:
        r = subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *peer.requirements],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, action, f"pip install timed out after {INSTALL_TIMEOUT:.0f} s"
    if r.returncode != 0:
        return None, action, (f"pip install {' '.join(peer.requirements)} failed: {last_line(r.stderr + r.stdout)}")
    (venv / MARKER).write_text(json.dumps({"requirements": list(peer.requirements)}) + "\n")
    return str(py), action, None


def resolve(
    names: list[str],
    *,
    turbocql_python: str,
    explicit: dict[str, str | None] | None = None,
    venvs_dir: Path | str | None = None,
    install: bool = True,
    base_python: str | None = None,
    log=None,
) -> dict[str, Client]:
    """The interpreter of every Python client in ``names`` (``rust`` is left out).

    ``explicit``: ``{"classic": path or None, ...}`` from ``--<peer>-python``. With
    ``install=False`` a missing venv makes the peer unavailable instead of being created.
    """
    explicit = explicit or {}
    venvs = Path(venvs_dir) if venvs_dir else DEFAULT_VENVS_DIR
    base = base_python or sys.executable
    out: dict[str, Client] = {}
    for name in names:
        if name == "rust":
            continue
        if name == "turbocql":
            v, err = probe(turbocql_python, "turbocql", TURBOCQL_DISTS)
            out[name] = Client(name, turbocql_python, v, err, "none")
            continue
        peer = PEERS[name]
        given = explicit.get(name)
        if given:
            py, action, err = given, "explicit", None
        elif install:
            py, action, err = ensure_venv(peer, venvs, base, log)
        else:
            vpy = venv_python(venvs / name)
            py, action = (str(vpy), "reuse") if vpy.exists() else (None, "none")
            err = None if py else f"no virtualenv at {venvs / name} (installation disabled)"
        v = None
        if err is None:
            v, err = probe(py, peer.module, peer.dists)
        out[name] = Client(name, py, v, err, action)
    return out


def add_arguments(ap) -> None:
    """The runners' options for the clients' interpreters."""
    ap.add_argument("--python", default=sys.executable, help="interpreter of the turbocql clients (default: this one)")
    for name, peer in PEERS.items():
        ap.add_argument(
            f"--{name}-python",
            metavar="PATH",
            default=None,
            help=f"interpreter of the {peer.title} clients (default: the "
            f"virtualenv <venvs-dir>/{name}, created on first use)",
        )
    ap.add_argument("--venvs-dir", default=None, help="where the peers' virtualenvs are (default benchmarks/.venvs)")
    ap.add_argument(
        "--no-install",
        action="store_true",
        help="do not create or update the peers' virtualenvs: a missing one makes its client unavailable",
    )


def from_args(args, names: list[str], log=None) -> dict[str, Client]:
    """:func:`resolve` with the options of :func:`add_arguments`; prints what is unavailable."""
    clients = resolve(
        names,
        turbocql_python=args.python,
        explicit={n: getattr(args, f"{n}_python", None) for n in PEERS},
        venvs_dir=args.venvs_dir,
        install=not args.no_install,
        log=log,
    )
    for line in availability_note(clients):
        print(line, file=sys.stderr, flush=True)
    return clients


def explicit_args(clients: dict[str, Client]) -> list[str]:
    """Options that hand resolved interpreters on to a runner (no second resolution)."""
    out = []
    for name, c in clients.items():
        if name == "turbocql":
            out += ["--python", c.python]
        elif c.available:
            out += [f"--{name}-python", c.python]
    return out


if __name__ == "__main__":  # python3 benchmarks/peers.py [clients]: create and show the venvs
    wanted = parse_clients(sys.argv[1] if len(sys.argv) > 1 else "classic,scylla,acsylla")
    for n, c in resolve(wanted, turbocql_python=sys.executable).items():
        print(n, json.dumps(c.to_json()))
