"""Peak memory of the hostile frame of issue 43 for turbocql and the classic driver: a reply
whose header declares a body of 2^31-1 bytes (the largest the classic driver reads as
positive), then all of those bytes, sent as the client reads them.

Each run is one child process (``tests/integration/_hostile_child.py``, mode
``2GiB-length-streamed``: the fake CQL server in the child, writing a MiB at a time), with
and without an address-space limit (RLIMIT_AS, 1 GiB above what the process has mapped once
connected). The child stays ``--linger-s`` seconds after the request ends (the classic driver
goes on reading the frame after the request timed out), then reports its peak RSS (VmHWM),
its peak address space (VmPeak), what the request raised and whether the session serves a
statement again. turbocql refuses the header against ``max_frame_length`` (256 MiB) before
reading the body.

    python -m benchmarks.run_hostile_frame [--linger-s 30] [--out benchmarks/results]

Writes ``hostile-frame-DATE.md`` and ``.json``; docs/faults.md quotes them. Not in the test
suite: the classic driver's run buffers gigabytes."""

import argparse
import datetime
import json
import pathlib
import subprocess
import sys

from benchmarks.common import run_meta

MODE = "2GiB-length-streamed"
RLIMIT_MB = 1024


def run_child(driver, rlimit, linger):
    cmd = [sys.executable, "-m", "tests.integration._hostile_child", driver, MODE, "--linger-s", str(linger)]
    if rlimit:
        cmd += ["--rlimit-as-mb", str(RLIMIT_MB)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=linger + 120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    result = json.loads(lines[-1]) if lines else None
    return {
        "driver": driver,
        "rlimit_as_mb": RLIMIT_MB if rlimit else None,
        "returncode": proc.returncode,
        "stderr_tail": proc.stderr.strip().splitlines()[-3:],
        "result": result,
    }


def outcome(run):
    r = run["result"]
    if r is None:
        return "process died (exit status %s): %s" % (run["returncode"], " / ".join(run["stderr_tail"])[:200])
    if r["hung"]:
        return "request hung"
    e = r["exception"]
    if not e:
        return "result"
    # the host's own error when there is one (NoHostAvailable's message repeats it, cut short)
    detail = next(iter(e.get("errors", {}).values()), e["message"])
    return "%s: %s" % (e["class"], detail[:220])


def _figure(r, key):
    v = r.get(key)
    return "-" if v is None else ("%.0f" % v if isinstance(v, float) and key.endswith("_mb") else str(v))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--linger-s", type=float, default=30.0)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    runs = [run_child(d, rl, args.linger_s) for d in ("turbocql", "classic") for rl in (False, True)]
    day = datetime.date.today().isoformat()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = run_meta(sys.argv, None, None, "hostile frame: 2^31-1 bytes declared, then sent", linger_s=args.linger_s)
    (out / ("hostile-frame-%s.json" % day)).write_text(json.dumps({"meta": meta, "results": runs}, indent=1) + "\n")
    lines = [
        "# Hostile frame: a 2^31-1 byte body declared, then sent (%s)" % day,
        "",
        "`python -m benchmarks.run_hostile_frame --linger-s %g`; each row one child process, the"
        " fake CQL server in it writing the body a MiB at a time as the client reads." % args.linger_s,
        "",
        "| driver | RLIMIT_AS | outcome | RSS before (MiB) | peak RSS (MiB) | peak VmSize (MiB)"
        " | request ended after (s) | session serves again after (s) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        r = run["result"] or {}
        lines.append(
            "| %s | %s | %s | %s | %s | %s | %s | %s |"
            % (
                run["driver"],
                "+%d MiB" % RLIMIT_MB if run["rlimit_as_mb"] else "none",
                outcome(run).replace("|", "/"),
                _figure(r, "rss_before_mb"),
                _figure(r, "rss_peak_mb"),
                _figure(r, "vmsize_peak_mb"),
                _figure(r, "elapsed_s"),
                _figure(r, "recovered_after_s"),
            )
        )
    (out / ("hostile-frame-%s.md" % day)).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
