"""Where the scenarios are: the checkout's ``benchmarks/`` directory and its runners.

The suite's constants (scenarios, default clients, local host names) and :class:`BenchError`
live here too, since every other module of the package uses them.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

SCENARIOS = ("sync", "patterns", "tuning", "vectors", "tls", "bulk", "ingest", "connections", "spark")
# Scenarios that `--scenarios all` leaves out: they need more than the suite does (spark:
# Maven, Java 17 and pyspark; benchmarks/spark_ref is built with Maven on first use). Named
# in --scenarios, they run.
OPTIONAL_SCENARIOS = ("spark",)
SYNC_THREADS = "1,2,4,8,16"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
REQUIRED_FILES = (
    "run_sync.py",
    "run_patterns.py",
    "run_tuning.py",
    "run_vectors.py",
    "run_tls.py",
    "run_bulk.py",
    "run_ingest.py",
    "run_connections.py",
    "run_cql_connections.py",
    "report.py",
    "peers.py",
    "common.py",
)
DEFAULT_CLIENTS = "classic,turbocql,rust"
# The connections scenario (document 002): connection counts; it needs no Cassandra.
CONNECTIONS = "10,100,1000,10000"
QUICK_CONNECTIONS = "10,100,1000"
# The tls scenario's node (`turbocql localdb start --tls`): its port and, when the scenario
# starts it, its heap.
TLS_PORT = 9044
TLS_HEAP = "768M"


class BenchError(Exception):
    """A failure with a message meant for a person (exit status 2)."""


def _is_benchmarks_dir(path: Path) -> bool:
    return all((path / f).is_file() for f in REQUIRED_FILES)


def find_benchmarks_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The ``benchmarks/`` directory of a turbocql source checkout.

    ``explicit`` (``--benchmarks-dir``) if given, else ``$TURBOCQL_BENCHMARKS_DIR``, else the
    directory this package is in (``benchmarks/runner/`` -> ``benchmarks/``), else
    ``benchmarks/`` in the current directory or one of its parents.
    """
    if explicit is not None:
        path = Path(explicit).expanduser().resolve()
        if not _is_benchmarks_dir(path):
            raise BenchError(f"{path} is not turbocql's benchmarks directory (it needs {', '.join(REQUIRED_FILES)})")
        return path
    candidates = []
    env = os.environ.get("TURBOCQL_BENCHMARKS_DIR")
    if env:
        candidates.append(Path(env).expanduser())
    candidates.append(Path(__file__).resolve().parents[1])  # benchmarks/runner/discover.py
    cwd = Path.cwd().resolve()
    candidates += [d / "benchmarks" for d in (cwd, *cwd.parents)]
    for c in candidates:
        if _is_benchmarks_dir(c):
            return c.resolve()
    raise BenchError(
        "cannot find turbocql's benchmarks/ directory (the one with this runner, or one in the "
        "current directory or its parents): pass --benchmarks-dir PATH (or set TURBOCQL_BENCHMARKS_DIR)."
    )


def _import_runners(bdir: Path) -> dict:
    """The runners, as modules of the ``benchmarks`` package (the same modules the runners
    import of one another, and the tests import): ``bdir``'s parent, the checkout's root, goes
    on ``sys.path``. ``bdir`` must hold the package imported (one checkout per process)."""
    root = str(bdir.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    mods = {
        name: importlib.import_module(f"benchmarks.{name}")
        for name in (
            "run_sync",
            "run_patterns",
            "run_tuning",
            "run_vectors",
            "run_tls",
            "run_bulk",
            "run_ingest",
            "run_connections",
            "run_cql_connections",
            "run_spark",
            "report",
            "peers",
            "common",
        )
    }
    found = Path(str(mods["common"].__file__)).resolve().parent
    if found != bdir.resolve():
        raise BenchError(f"the benchmarks package imported here is {found}, not {bdir}: run that checkout's runner")
    return mods
