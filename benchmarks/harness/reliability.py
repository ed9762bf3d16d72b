"""The figures of the reliability matrix (issue "Faults, overload and bad input").

Each fault test (``tests/integration``) asserts on what it exercises and, through
``record``, also hands its figures to the reliability report, as the network and soak runs
(``benchmarks/run_network.py``, ``run_soak.py``) do for rows 13 and 14:
``benchmarks/reliability.py`` runs them with ``TURBOCQL_RELIABILITY_OUT`` naming a
JSON-lines file and renders what they recorded as ``benchmarks/results/reliability-<date>.md``.
Without that variable ``record`` does nothing, so the figures never change what a test run
does.

One record per scenario, with these keys (all but ``row`` and ``scenario`` optional):

- ``row``: the matrix row, "1" to "14"; ``scenario``: a short name of what was injected
- ``injected``: what was done to the server or the network, in words
- ``requests``: how many requests were issued; ``succeeded``
- ``failed``: ``{exception class name: count}``
- ``lost``: acknowledged writes not found afterwards (must be 0); ``hung``: requests that
  never resolved (must be 0)
- ``detect_s`` / ``recover_s``: seconds from the fault to its detection / to recovery
- ``peak_rss_mb``: the client's peak resident memory; ``notes``: anything else, in words
"""

import json
import os
import resource
import threading
import time

_LOCK = threading.Lock()


def peak_rss_mb():
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb():
    """This process's resident set size now, in MiB (from /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0)


def record(row, scenario, **figures):
    """Appends one scenario's figures to $TURBOCQL_RELIABILITY_OUT (no-op when unset)."""
    out = os.environ.get("TURBOCQL_RELIABILITY_OUT")
    if not out:
        return
    entry = {"row": str(row), "scenario": scenario, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    entry.update(figures)
    with _LOCK, open(out, "a") as f:
        f.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
