"""Splice a rerun into a day's benchmark JSON, marked so that every table built from it says
which cells came from the rerun.

A run disturbed by something else on the machine (or rerun after a fix) is rerun with the same
options into its own JSON; this puts its results in place of the day's results with the same
key (``--key``, default: the fields of the scenario's runs that name a cell, e.g. client, model
and connections), stamps each spliced result with ``"spliced": {"started", "argv"}`` and adds
``{"started", "argv", "keys", "why"}`` to the day's ``meta.reruns``. The tables mark those
cells (``†``, with a note naming the rerun), so a spliced figure never reads as one of the
day's run. Usage::

    python3 benchmarks/splice.py results/cql-connections-2026-11-26.json /tmp/rerun.json \\
        --why "the first runs at 10 connections were disturbed by ..." [--out OTHER.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# Fields that name a table cell, in the order tried: the first present in the rerun's
# results are its key.
KEY_FIELDS = ("client", "model", "connections", "pool", "pattern", "workload", "input", "kind")


def default_key(results: list[dict]) -> tuple[str, ...]:
    """The fields every result of ``results`` has among :data:`KEY_FIELDS`."""
    return tuple(k for k in KEY_FIELDS if results and all(k in r for r in results))


def splice(day: dict, rerun: dict, why: str, key: tuple[str, ...] | None = None, add: bool = False) -> dict:
    """``day`` with ``rerun``'s results in place of those with the same ``key``, each
    stamped, and the rerun in ``meta.reruns`` (pure: unit-tested). ValueError when the
    rerun has no results or no key field, or (unless ``add``: a row the day's run did not
    have, measured later) a result of it matches none of the day's."""
    new = rerun.get("results") or []
    if not new:
        raise ValueError("the rerun has no results")
    key = key or default_key(new)
    if not key:
        raise ValueError(f"no key: the rerun's results share none of {', '.join(KEY_FIELDS)}")
    if not why.strip():
        raise ValueError("--why: say why the rerun replaces the day's figures")

    def k(r):
        return tuple(r.get(f) for f in key)

    wanted = {k(r) for r in new}
    old = day.get("results") or []
    known = {k(r) for r in old}
    unknown = sorted(str(x) for x in wanted - known)
    if unknown and not add:
        raise ValueError(f"the rerun has cells the day's run does not: {', '.join(unknown)}")
    meta = rerun.get("meta", {})
    stamp = {"started": meta.get("date") or meta.get("started"), "argv": meta.get("argv")}
    kept = [r for r in old if k(r) not in wanted]
    out = dict(day)
    out["results"] = kept + [{**r, "spliced": stamp} for r in new]
    out_meta = dict(day.get("meta", {}))
    cells = [list(x) for x in sorted(wanted, key=str)]
    out_meta["reruns"] = [*out_meta.get("reruns", []), {**stamp, "key": list(key), "cells": cells, "why": why}]
    out["meta"] = out_meta
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("day", type=Path, help="the day's JSON (rewritten unless --out)")
    ap.add_argument("rerun", type=Path, help="the rerun's JSON, same runner and options")
    ap.add_argument("--why", required=True, help="why the rerun replaces the day's figures (kept in meta.reruns)")
    ap.add_argument("--key", default=None, help=f"comma-separated fields naming a cell (default: of {KEY_FIELDS})")
    ap.add_argument("--add", action="store_true", help="the rerun may hold rows the day's run did not (marked too)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    key = tuple(x.strip() for x in a.key.split(",") if x.strip()) if a.key else None
    try:
        out = splice(json.loads(a.day.read_text()), json.loads(a.rerun.read_text()), a.why, key, a.add)
    except ValueError as e:
        print(f"splice: {e}", file=sys.stderr)
        return 2
    (a.out or a.day).write_text(json.dumps(out, indent=1) + "\n")
    spliced = sum(1 for r in out["results"] if r.get("spliced"))
    print(f"{spliced} result(s) marked spliced in {a.out or a.day}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
