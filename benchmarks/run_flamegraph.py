"""Flame graphs of the sync path: where turbocql's and the Rust reference's client CPU goes,
with ``perf`` sampling every thread and unwinding by DWARF (CPython and libc are built
without frame pointers, so frame-pointer call graphs stop at their first frame).

For each client (``turbocql``: ``clients/sync_threads.py``; ``rust``: the Rust reference with
N blocking OS threads), each workload and each thread count it runs the client under::

    perf record -e cpu-clock -F <hz> --call-graph dwarf,16384 -- <client>

then folds the stacks with ``inferno-collapse-perf --all`` (kernel frames marked ``_[k]``) and
draws them with ``inferno-flamegraph`` (the ``inferno`` crate, installed with ``cargo install``
into ``~/.cache/turbocql/tools`` when missing). It writes, per run, ``<name>.svg`` and
``<name>.folded.gz`` into ``--out-dir``, and one ``summary.md`` (and ``summary.json``): each
run's samples by thread and by where its leaf frame is (kernel, the engine's Rust,
the allocator, CPython, other user code), and the share under ``take_gil`` (a thread waiting
for the GIL, in the kernel or spinning).

The req/s and CPU figures are the client's own, under ``perf`` (unwinding costs each sample a
copy of 16 KiB of stack): for where the time goes, not for the tables. Samples are CPU time
(``cpu-clock``): a thread asleep is not sampled, a thread that is
runnable but waiting for a core is not either. Needs ``perf`` and the rights to use it
(root here).

    python benchmarks/run_flamegraph.py --threads 1,16 --out-dir benchmarks/results/flame-<date>
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.common import (  # noqa: E402  (the runners' shared set-up)
    DEFAULT_RUST_BIN,
    add_server_arguments,
    ensure_rust_bin,
    require_server,
    run_client,
    rust_command,
    server_args,
    warm_up_server,
)

CLIENT_PY = HERE / "clients" / "sync_threads.py"
TOOLS = Path.home() / ".cache" / "turbocql" / "tools"
CATEGORIES = ("kernel", "engine (Rust)", "allocator", "CPython", "other user code")


def ensure_inferno() -> Path:
    """The directory holding ``inferno-collapse-perf`` and ``inferno-flamegraph``."""
    found = shutil.which("inferno-flamegraph")
    if found:
        return Path(found).parent
    bindir = TOOLS / "bin"
    if not (bindir / "inferno-flamegraph").exists():
        print("installing inferno (cargo install --locked inferno)...", file=sys.stderr, flush=True)
        subprocess.run(["cargo", "install", "--locked", "inferno", "--root", str(TOOLS)], check=True)
    return bindir


def leaf_category(frame: str) -> str:
    """Where a sample's innermost frame is, by its symbol."""
    if frame.endswith("_[k]"):
        return "kernel"
    if frame.startswith(("mi_", "_mi_")):
        return "allocator"
    if "::" in frame or frame.startswith("_ZN"):
        return "engine (Rust)"
    if frame.startswith(("_Py", "Py", "_PyEval", "cfunction_", "method_vectorcall", "take_gil", "drop_gil")):
        return "CPython"
    return "other user code"


def summarize(folded: str) -> dict:
    """Samples of a folded profile by thread, by leaf category, and under ``take_gil``, in
    nanoseconds of CPU (inferno weighs each ``cpu-clock`` sample by its period)."""
    by_thread: collections.Counter[str] = collections.Counter()
    by_leaf: collections.Counter[str] = collections.Counter()
    gil = total = 0
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        total += n
        by_thread[frames[0]] += n
        by_leaf[leaf_category(frames[-1])] += n
        if any(f.startswith("take_gil") for f in frames):
            gil += n
    return {"cpu_ns": total, "by_thread": dict(by_thread), "by_leaf": dict(by_leaf), "under_take_gil": gil}


def profile(name: str, cmd: list[str], out_dir: Path, bindir: Path, hz: int, timeout: float) -> dict:
    """Runs ``cmd`` under perf; writes ``name``.svg and .folded.gz; returns the summary and
    the client's own JSON line."""
    data = out_dir / (name + ".perf.data")
    rec = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "--call-graph", "dwarf,16384", "-o", str(data)]
    result = run_client([*rec, "--", *cmd], None, timeout)
    try:
        script = subprocess.run(
            ["perf", "script", "-i", str(data)], capture_output=True, check=True, timeout=timeout
        ).stdout
    finally:
        data.unlink(missing_ok=True)
    folded = subprocess.run(
        [str(bindir / "inferno-collapse-perf"), "--all"], input=script, capture_output=True, check=True
    ).stdout
    (out_dir / (name + ".folded.gz")).write_bytes(gzip.compress(folded, mtime=0))
    svg = subprocess.run(
        # Frames narrower than a pixel left out: a tenth of the file, nothing one could see.
        [str(bindir / "inferno-flamegraph"), "--title", name, "--width", "1600", "--minwidth", "1"],
        input=folded,
        capture_output=True,
        check=True,
    ).stdout
    (out_dir / (name + ".svg")).write_bytes(svg)
    return {"name": name, "client_result": result, **summarize(folded.decode())}


def pct(n: int, total: int) -> str:
    return "%.0f%%" % (100.0 * n / total) if total else "-"


def markdown(runs: list[dict]) -> str:
    head = "| run | req/s | CPU µs/req | CPU sampled, s | under take_gil | " + " | ".join(CATEGORIES) + " |"
    lines = [head, "|" + " --- |" * (5 + len(CATEGORIES))]
    for r in runs:
        res, total = r["client_result"], r["cpu_ns"]
        cells = [
            r["name"],
            "%.0f" % res["ops_per_s"] if "ops_per_s" in res else res.get("failed", "-"),
            "%.1f" % res["cpu_us_per_op"] if "cpu_us_per_op" in res else "-",
            "%.2f" % (total / 1e9),
            pct(r["under_take_gil"], total),
            *(pct(r["by_leaf"].get(c, 0), total) for c in CATEGORIES),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Samples by thread (the first frame of each stack: the thread's name):")
    lines.append("")
    for r in runs:
        threads = sorted(r["by_thread"].items(), key=lambda kv: -kv[1])
        lines.append("- %s: %s" % (r["name"], ", ".join("%s %s" % (t, pct(n, r["cpu_ns"])) for t, n in threads)))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(ap)
    ap.set_defaults(keyspace="bench_sync")
    ap.add_argument("--rows", type=int, default=10000, help="rows the reads go over")
    ap.add_argument("--clients", default="turbocql,rust")
    ap.add_argument("--workloads", default="write,read")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--ops", type=int, default=20000, help="timed requests per run")
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--hz", type=int, default=999, help="samples per second of CPU, per thread")
    ap.add_argument("--server-warmup-ops", type=int, default=20000)
    ap.add_argument("--rust-bin", type=Path, default=DEFAULT_RUST_BIN)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out-dir", type=Path, required=True)
    a = ap.parse_args(argv)

    if shutil.which("perf") is None:
        print("perf is not installed (Debian: linux-perf)", file=sys.stderr)
        return 2
    if not require_server(a.host, a.port, 30):
        return 2
    bindir = ensure_inferno()
    rust_bin = ensure_rust_bin(a.rust_bin, False)
    common = server_args(a.host, a.port, a.keyspace, None, a.rows)
    warm_up_server(rust_bin, common, a.server_warmup_ops, None, a.timeout)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    for wl in a.workloads.split(","):
        for th in (int(t) for t in a.threads.split(",")):
            for client in a.clients.split(","):
                per_run = ["--threads", str(th), "--warmup", str(a.warmup)]
                if client == "rust":
                    if rust_bin is None:
                        print("the Rust reference is not built: its runs are left out", file=sys.stderr)
                        continue
                    cmd = rust_command(rust_bin, common, wl, a.ops, ["--pattern", "sync-threads", *per_run])
                else:
                    workload = ["--workload", wl, "--ops", str(a.ops)]
                    cmd = [sys.executable, str(CLIENT_PY), "--driver", client, *common, *workload, *per_run]
                name = "%s-%s-%dthread%s" % (client, wl, th, "" if th == 1 else "s")
                print("profiling %s..." % name, file=sys.stderr, flush=True)
                runs.append(profile(name, cmd, a.out_dir, bindir, a.hz, a.timeout))
    meta = {"command": " ".join([os.path.basename(sys.argv[0]), *(argv or sys.argv[1:])]), "hz": a.hz, "ops": a.ops}
    (a.out_dir / "summary.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1) + "\n")
    (a.out_dir / "summary.md").write_text(markdown(runs))
    print(markdown(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
