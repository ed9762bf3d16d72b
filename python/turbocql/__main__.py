"""The ``turbocql`` command line (also ``python -m turbocql``).

Each subcommand lives in its own module that exposes
``add_parser(subparsers)``: it registers its argparse parser(s) and sets
``func`` (``func(args) -> int`` exit code) with ``parser.set_defaults``.
To add one, add ``"name": "turbocql.module"`` to ``SUBCOMMANDS`` (a module
that registers several names is listed under each, and called once).  Such a
module must not import the compiled engine at import time (import it inside
``func``) so that every subcommand works even before the engine is built; a
module that fails to import only breaks its own subcommand.

Two subcommands are not the driver's own: ``localdb`` is the turbocql-localdb distribution
(``turbocql_localdb``; ``localdb/`` in the source checkout) and ``bench`` the benchmark
runner of a source checkout (``benchmarks/runner/``). When one is not there, the subcommand
says how to get it (``MISSING``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# subcommand name -> module that defines add_parser(subparsers)
SUBCOMMANDS: dict[str, str] = {
    # The turbocql-localdb distribution (localdb/ in the source checkout), not the driver's.
    "localdb": "turbocql_localdb.cli",
    # The benchmark runner: benchmarks/runner/ of the source checkout, importable when the
    # checkout's root is on sys.path (`python -m turbocql bench` run from there).
    "bench": "benchmarks.runner.cli",
    "load": "turbocql.bulk.cli",
    "unload": "turbocql.bulk.cli",
    "count": "turbocql.bulk.cli",
}

# Subcommands whose module is not in the driver's package: what to do when it is not there.
MISSING: dict[str, str] = {
    "turbocql_localdb.cli": "the turbocql-localdb package is not installed: pip install turbocql-localdb "
    "(from a source checkout of turbocql: pip install ./localdb)",
    "benchmarks.runner.cli": "the benchmark runner is in the source checkout of turbocql, not in the "
    "package: run python -m benchmarks.runner (or python -m turbocql bench) from the checkout's root",
}


def _is_missing(module_name: str, error: BaseException) -> bool:
    """Whether ``error`` says that ``module_name`` itself (or a package above it) is not there,
    rather than something it imports."""
    missing = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
    return bool(missing) and (module_name == missing or module_name.startswith(f"{missing}."))


def _broken_subcommand(subparsers, name: str, error: BaseException, hint: str | None = None) -> None:
    reason = hint or f"{type(error).__name__}: {error}"
    # Every argument, options too (no prefix character of its own: `--help` is one of them),
    # is taken, so that the message below is what any call of the subcommand prints.
    parser = subparsers.add_parser(name, help=f"(unavailable: {hint or error})", add_help=False, prefix_chars="\0")
    parser.add_argument("rest", nargs=argparse.REMAINDER)

    def func(_args: argparse.Namespace) -> int:
        print(f"turbocql {name}: unavailable: {reason}", file=sys.stderr)
        return 2

    parser.set_defaults(func=func)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="turbocql",
        description="turbocql: a Python driver for Apache Cassandra with a Rust engine.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    added: set[str] = set()
    for name, module_name in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # keep the other subcommands usable
            hint = MISSING.get(module_name) if _is_missing(module_name, e) else None
            _broken_subcommand(subparsers, name, e, hint)
            continue
        if module_name not in added:
            added.add(module_name)
            module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `turbocql ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1


if __name__ == "__main__":
    sys.exit(main())
