"""Where a request's instructions go: named functions' inclusive instruction counts per
request, from two callgrind dumps of the same client's timed section (``run_ab_instructions.py``'s
runs: ``--dump-before=resource_getrusage``, the second dump of each), one run of ``--n1``
requests and one of ``--n2``, differenced over ``n2 - n1`` as that script's figure is.

    valgrind --tool=callgrind --dump-before=resource_getrusage --dump-instr=no \\
        --collect-jumps=no --callgrind-out-file=cg.out python benchmarks/clients/patterns.py \\
        --driver turbocql --pattern queued_futures --workload write --ops 8000 --warmup 2000
    (the same with --ops 2000), then
    python benchmarks/callgrind_breakdown.py --n1-file A/cg.out.2 --n2-file B/cg.out.2 \\
        --n1 2000 --n2 8000 --out benchmarks/results/<name>.json

Each part is a function (a substring of callgrind_annotate's name, first match) and its
inclusive count: what it and everything it calls executed. Needs ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

# The parts of a request on the engine's paths: (label, function name as callgrind names it).
# `parse` ends every name with a space, so a pattern ending in one matches that function only,
# not a longer name it begins (`start_settled` against `start_settled::{{closure}}`) nor a
# recursive level of it (callgrind's `name'2`).
PARTS = [
    ("whole client", "PROGRAM TOTALS"),
    ("runtime threads", "<std::sys::thread::unix::Thread>::new::thread_start"),
    ("request task", "_engine::api::request::PyRequest::start_settled::{{closure}}"),
    ("crate Session::execute", "scylla::client::session::Session::execute::{{closure}}"),
    ("connection reader and writer", "<futures_util::future::future::remote_handle::Remote<Fut>"),
    ("application thread", "Modules/main.c:Py_RunMain"),
    ("execute_async", "_engine::api::execute::AsyncExecute::__call__ "),
    ("building the request", "_engine::api::builder::RequestBuilder::build_classic"),
    ("classifying the statement", "_engine::exec::statement::classify"),
    ("binding the values", "_engine::codec::values::bind_row "),
    ("the statement's copy with its options", "_engine::exec::request::with_values"),
    ("starting it", "_engine::api::request::PyRequest::start_settled "),
    ("handing it to the runtime", "tokio::runtime::runtime::Runtime::spawn"),
    ("result()", "_engine::api::future::ResponseFutureCore::__pymethod_result__"),
    ("freeing the future and the result", "Objects/typeobject.c:subtype_dealloc "),
    ("dispatcher thread", "_engine::exec::completion::__pyfunction_run_dispatcher"),
    ("the page", "_engine::exec::page::Page::from_outcome"),
    ("settling the future", "_engine::api::future::settle "),
]
_LINE = re.compile(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)")


def inclusive(path: Path) -> list[tuple[str, int]]:
    """callgrind_annotate's inclusive count per function of one dump, as (name, count)."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return parse(out)


def parse(text: str) -> list[tuple[str, int]]:
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            rows.append((m.group(2).strip() + " ", int(m.group(1).replace(",", ""))))
    return rows


def count(rows: list[tuple[str, int]], function: str) -> int:
    """The first row whose name holds ``function`` (0 when none does)."""
    return next((n for name, n in rows if function in name), 0)


def breakdown(short: list[tuple[str, int]], long: list[tuple[str, int]], n1: int, n2: int) -> dict[str, int]:
    """Each part's instructions per request: (long run - short run) / (n2 - n1), rounded."""
    return {label: round((count(long, f) - count(short, f)) / (n2 - n1)) for label, f in PARTS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n1-file", type=Path, required=True, help="the timed section's dump of the --n1 run")
    ap.add_argument("--n2-file", type=Path, required=True, help="the timed section's dump of the --n2 run")
    ap.add_argument("--n1", type=int, default=2000)
    ap.add_argument("--n2", type=int, default=8000)
    ap.add_argument("--what", default="", help="what was run (kept in the JSON)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    parts = breakdown(inclusive(args.n1_file), inclusive(args.n2_file), args.n1, args.n2)
    for label, n in parts.items():
        print(f"{n:>8,}  {label}")
    if args.out:
        body = {"what": args.what, "n1": args.n1, "n2": args.n2, "parts": parts}
        args.out.write_text(json.dumps(body, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
