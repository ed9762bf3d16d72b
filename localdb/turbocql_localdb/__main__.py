"""``python -m turbocql_localdb ...`` (and the ``turbocql-localdb`` script): the same as
``turbocql localdb ...``, without the driver."""

from __future__ import annotations

import argparse
import sys

from .cli import add_parser


def main(argv: list[str] | None = None) -> int:
    """Run ``turbocql localdb ARGV``; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="turbocql")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["localdb", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
