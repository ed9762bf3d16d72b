"""Row 14 of the faults matrix (issue 15): a soak of turbocql under mixed load with a node fault every few minutes.

What it measures, over ``--minutes`` (default 30) on the local 3-node cluster (127.0.0.11-13,
``turbocql localdb cluster``; dc1: node1, node2, dc2: node3; keyspace replicated dc1: 2, dc2: 1):

* acknowledged writes lost: every write the driver acknowledged (QUORUM) is read back at QUORUM
  at the end; each one not found is lost (must be 0);
* requests never resolved: at the end the script waits, at most ``--request-timeout`` + 30 s, for
  every request it started; the ones still open are counted (must be 0), and so are requests
  that resolved later than their timeout + 2 s (``late``);
* reads of an acknowledged key that found no row (QUORUM reads after QUORUM writes: must be 0);
* errors by class and latency per window: each fault's window (from its injection to the node's
  return, plus ``--grace`` s) and the time outside faults, by the time each request was sent;
* the process's RSS and the ops/s completed, every 5 s, and when the driver saw each node go
  down and come back (a ``HostStateListener``).

The load, all through one turbocql session (``ConstantReconnectionPolicy(1 s)``, request timeout
``--request-timeout`` s): ``--rate`` requests/s (default 200) through ``execute_async``, open loop,
alternately an idempotent prepared QUORUM write of a new key and a QUORUM read of a key whose write
was already acknowledged; and once a minute (30 s past each minute) an ``execute_concurrent_with_args``
batch of ``--batch`` writes of new keys (their acknowledged keys are checked at the end too) and an
asyncio reader (``turbocql.aio.Session`` on a fresh event loop: ``--aio-reads`` reads of
acknowledged keys, 50 at a time).

The faults, every ``--fault-every`` minutes (default 4; the first at that minute), cycling through
(``--faults``, default ``kill,freeze,stop``): ``kill``: kill -9 of node2, ``--down-s`` s (10) down,
restart; ``freeze``: SIGSTOP of node2 for ``--freeze-s`` s (20), then SIGCONT; ``stop``: clean stop
(SIGTERM) of node3, ``--down-s`` s down, restart. A fault starts only once the one before is
over; the load runs until ``--minutes`` have passed and no fault is under way. Whatever happens
(an exception, Ctrl-C, SIGTERM), the nodes are restored before the script exits, and it exits
only once all three answer CQL.

The script's own bookkeeping stays bounded apart from one byte per acknowledged-write flag (about
0.35 MB over 30 minutes at 200 requests/s), so RSS growth is the driver's.

Run (the cluster must be running, every node UP; the default run takes about 32 minutes)::

    turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11     # if it is not running
    .venv/bin/python benchmarks/run_soak.py                            # 30 minutes, a fault every 4
    .venv/bin/python benchmarks/run_soak.py --minutes 3 --fault-every 1   # a smoke test

Writes benchmarks/results/soak-<date>.json, .md and .png (RSS in MiB and ops/s over time, fault
windows shaded, each node's return dashed; ``--out PATH``: the JSON's path, the others beside it) and, when
``$TURBOCQL_RELIABILITY_OUT`` names a file, one record in the reliability report's format (row "14").
Exit status 1 if a write was lost, a request never resolved or a read missed an acknowledged row.

This module is the runner (options, the keyspace, the run's course, its JSON and record);
the load is ``soak_load``, the faults ``soak_faults``, the outcome and the report
``soak_report``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import platform
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks.soak_faults import FAULT_NODE, FAULT_TEXT, FAULTS, Faults, _stopped  # noqa: E402, F401
from benchmarks.soak_load import (  # noqa: E402, F401 - names of run_soak, moved
    LATE_S,
    NO_FAULT,
    RING,
    SAMPLE_S,
    Events,
    Histogram,
    Soak,
    aio_reader,
    minutely,
    peak_rss_mb,
    rss_mb,
    sampler,
)
from benchmarks.soak_report import (  # noqa: E402, F401 - names of run_soak, moved
    fmt_errors,
    markdown,
    plot,
    rss_slope_mb_per_h,
    verify,
    window_rows,
)

FIRST_ADDRESS = "127.0.0.11"
TABLE = "t"
DRAIN_MARGIN_S = 30.0

log = logging.getLogger("run_soak")


def setup_keyspace(keyspace: str) -> None:
    from turbocql.cluster import Cluster

    cluster = Cluster([FIRST_ADDRESS])
    try:
        s = cluster.connect()
        s.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}",
            timeout=60,
        )
        s.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{TABLE} (k text PRIMARY KEY, v int)", timeout=60)
    finally:
        cluster.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="minutes of load (default 30)")
    ap.add_argument("--fault-every", type=float, default=4.0, help="minutes between faults (default 4)")
    ap.add_argument("--rate", type=float, default=200.0, help="execute_async requests/s (default 200)")
    ap.add_argument("--batch", type=int, default=500, help="writes of each minute's execute_concurrent batch")
    ap.add_argument("--aio-reads", type=int, default=200, help="reads of each minute's asyncio reader")
    ap.add_argument("--request-timeout", type=float, default=5.0, help="each request's timeout, s (default 5)")
    ap.add_argument("--down-s", type=float, default=10.0, help="kill / stop: seconds down before restarting")
    ap.add_argument("--freeze-s", type=float, default=20.0, help="freeze: seconds between SIGSTOP and SIGCONT")
    ap.add_argument("--grace", type=float, default=10.0, help="seconds after a restore still in its window")
    ap.add_argument(
        "--faults", default=",".join(FAULTS), help="the faults' cycle, comma-separated (default kill,freeze,stop)"
    )
    ap.add_argument("--keyspace", default="turbocql_soak")
    ap.add_argument("--keep-keyspace", action="store_true", help="do not drop the keyspace at the end")
    ap.add_argument("--out", default=None, metavar="PATH", help="the JSON (default results/soak-<date>.json)")
    args = ap.parse_args(argv)
    cycle = [f for f in args.faults.split(",") if f]
    if not cycle or any(f not in FAULTS for f in cycle):
        ap.error(f"--faults: a comma-separated list of {', '.join(FAULTS)}")
    if args.minutes <= 0 or args.fault_every <= 0 or args.rate <= 0:
        ap.error("--minutes, --fault-every and --rate are positive")

    import turbocql_localdb as localdb
    from turbocql import ConsistencyLevel
    from turbocql.aio import Session as AioSession
    from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from turbocql.policies import ConstantReconnectionPolicy

    logging.getLogger("turbocql.cluster").setLevel(logging.ERROR)  # no LBP warning; faults are expected
    cluster = localdb.find_cluster(first_address=FIRST_ADDRESS)
    if cluster is None or not cluster.is_up():
        print(f"the 3-node cluster at {FIRST_ADDRESS} is not running with every node UP", file=sys.stderr)
        print("  (start it with: turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11)", file=sys.stderr)
        return 2

    def on_term(_sig, _frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_term)
    setup_keyspace(args.keyspace)
    tc = Cluster(
        [FIRST_ADDRESS],
        reconnection_policy=ConstantReconnectionPolicy(1.0, max_attempts=None),
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(
                consistency_level=ConsistencyLevel.QUORUM, request_timeout=args.request_timeout
            )
        },
    )
    session = tc.connect(args.keyspace)
    insert = session.prepare(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)")
    insert.is_idempotent = True
    select = session.prepare(f"SELECT v FROM {TABLE} WHERE k = ?")
    select.is_idempotent = True
    run_id = uuid.uuid4().hex[:8]
    soak = Soak(session, insert, select, run_id, args.request_timeout)
    events = Events(soak)
    tc.register_listener(events.listener)
    faults = Faults(cluster, args, soak, events)
    samples: list[dict] = []
    minutely_runs: list[dict] = []
    load_start = os.getloadavg()[0]
    threads = [
        threading.Thread(target=soak.steady_load, args=(args.rate,), name="soak-load", daemon=True),
        threading.Thread(target=sampler, args=(soak, samples), name="soak-rss", daemon=True),
        threading.Thread(
            target=minutely,
            args=(soak, AioSession(session), args.batch, args.aio_reads, minutely_runs),
            name="soak-minutely",
            daemon=True,
        ),
    ]
    interrupted = None
    end_s = args.minutes * 60
    print(f"soak {run_id}: {args.minutes:g} min, a fault every {args.fault_every:g} min", file=sys.stderr)
    try:
        for th in threads:
            th.start()
        k = 1
        while True:
            next_fault = k * args.fault_every * 60
            if next_fault >= end_s:
                time.sleep(max(0.0, end_s - soak.now()))
                break
            time.sleep(max(0.0, next_fault - soak.now()))
            faults.inject(cycle[(k - 1) % len(cycle)])
            k += 1
            if soak.now() >= end_s:
                break
    except BaseException as e:  # KeyboardInterrupt, SIGTERM, a failed fault: restore, then report
        interrupted = f"{type(e).__name__}: {e}"
        print(f"interrupted ({interrupted}); restoring the cluster", file=sys.stderr)
    finally:
        soak.window = NO_FAULT
        whole = faults.ensure_whole()
    t_load_end = soak.now()
    soak.stop.set()
    threads[0].join(10)
    hung = soak.wait_drained(args.request_timeout + DRAIN_MARGIN_S)
    threads[2].join(args.request_timeout + DRAIN_MARGIN_S + 60)
    minutely_stuck = threads[2].is_alive()
    threads[1].join(10)
    print(f"[{soak.now():7.1f} s] load stopped; reading back the acknowledged writes ...", file=sys.stderr)
    verification = verify(soak, minutely_runs)
    peak = peak_rss_mb()
    tc.shutdown()
    if not args.keep_keyspace:
        with contextlib.suppress(Exception):
            c2 = Cluster([FIRST_ADDRESS])
            try:
                c2.connect().execute(f"DROP KEYSPACE IF EXISTS {args.keyspace}", timeout=120)
            finally:
                c2.shutdown()
    whole = faults.ensure_whole() and whole

    import turbocql

    stuck_batches = sum(1 for r in minutely_runs for part in ("batch", "aio") if r.get(part, {}).get("state"))
    for r in minutely_runs:
        r.get("batch", {}).pop("_acked", None)
    totals = soak.totals
    aio_never = sum(r.get("aio", {}).get("outcomes", {}).get("NeverResolved", 0) for r in minutely_runs)
    aio_missing = sum(r.get("aio", {}).get("outcomes", {}).get("ReadMissing", 0) for r in minutely_runs)
    summary = {
        "requests": totals["requests"],
        "succeeded": totals["succeeded"],
        "failed": totals["failed"],
        "failed_by_class": dict(
            sum((Counter({k: n for k, n in c.items() if k != "ok"}) for c in soak.outcomes.values()), Counter())
        ),
        "acked": verification["acked"],
        "lost": verification["lost"],
        "unverifiable": verification["unverifiable"],
        "hung": hung + aio_never + stuck_batches,
        "hung_execute_async": hung,
        "hung_aio": aio_never,
        "stuck_minutely_runs": stuck_batches,
        "late": totals["late"],
        "read_missing": totals["read_missing"] + aio_missing,
        "rss_start_mb": samples[0]["rss_mb"] if samples else None,
        "rss_end_mb": samples[-1]["rss_mb"] if samples else None,
        "peak_rss_mb": round(peak, 1),
        "rss_slope_mb_per_h": rss_slope_mb_per_h(samples),
        "batches": sum(1 for r in minutely_runs if "writes" in r.get("batch", {})),
        "aio_readers": sum(1 for r in minutely_runs if "reads" in r.get("aio", {})),
        "cluster_whole_at_exit": whole,
        "interrupted": interrupted,
    }
    date = dt.datetime.now()
    command = "python benchmarks/run_soak.py " + " ".join(sys.argv[1:] if argv is None else argv)
    heading = (
        f"turbocql {turbocql.__version__}, {t_load_end / 60:.1f} min of load (asked {args.minutes:g}), "
        f"{args.rate:g} requests/s through execute_async (QUORUM idempotent writes of new keys and QUORUM reads "
        f"of acknowledged keys, alternately), each minute an execute_concurrent batch of {args.batch} writes "
        f"and an asyncio reader of {args.aio_reads} keys; request timeout {args.request_timeout:g} s, "
        f"ConstantReconnectionPolicy(1 s); a fault every {args.fault_every:g} min ({', '.join(cycle)} in turn); "
        f"keyspace replicated dc1: 2, dc2: 1 on the local 3-node cluster; {os.cpu_count()} CPUs shared with the "
        f"three nodes; 1-min load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."
        + (f" INTERRUPTED: {interrupted}." if interrupted else "")
        + ("" if not minutely_stuck else " The minutely thread was still running at the end.")
    )
    report = {
        "meta": {
            "date": date.isoformat(timespec="seconds"),
            "command": command.strip(),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "turbocql": turbocql.__version__,
            "run_id": run_id,
            "minutes": args.minutes,
            "fault_every_min": args.fault_every,
            "rate": args.rate,
            "request_timeout_s": args.request_timeout,
            "grace_s": args.grace,
            "heading": heading,
        },
        "summary": summary,
        "verification": verification,
        "windows": window_rows(soak, faults.done, t_load_end),
        "faults": faults.done,
        "host_events": [{"t_s": round(t, 2), "address": a, "event": w} for t, a, w in events.seen],
        "minutely": minutely_runs,
        "samples": samples,
    }
    path = Path(args.out) if args.out else HERE / "results" / f"soak-{date:%Y-%m-%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    png = path.with_suffix(".png")
    try:
        plot(png, samples, faults.done, f"soak: turbocql, {args.rate:g} req/s, a fault every {args.fault_every:g} min")
        report["plot"] = str(png)
    except Exception as e:  # noqa: BLE001 (the figures matter more than the picture)
        print(f"no plot: {e}", file=sys.stderr)
    path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    print(f"results: {path}, {path.with_suffix('.md')}" + (f", {png}" if "plot" in report else ""), file=sys.stderr)
    print(
        f"requests {summary['requests']:,}, failed {summary['failed']:,} {summary['failed_by_class']}, "
        f"lost {summary['lost']} of {summary['acked']:,} acked, never resolved {summary['hung']}, "
        f"late {summary['late']}, reads missing a row {summary['read_missing']}, RSS {summary['rss_start_mb']} -> "
        f"{summary['rss_end_mb']} MiB (peak {summary['peak_rss_mb']}), cluster whole: {whole}",
        file=sys.stderr,
    )

    from benchmarks.harness import reliability

    reliability.record(
        "14",
        f"soak {t_load_end / 60:.0f} min, a node fault every {args.fault_every:g} min",
        injected="; ".join(f["injected"] for f in faults.done) or "no fault (too short a run)",
        requests=summary["requests"],
        succeeded=summary["succeeded"],
        failed=summary["failed_by_class"],
        lost=summary["lost"],
        hung=summary["hung"],
        peak_rss_mb=summary["peak_rss_mb"],
        notes=(
            f"{args.rate:g} req/s execute_async + a batch of {args.batch} and {args.aio_reads} asyncio reads a minute; "
            f"{summary['acked']:,} acknowledged writes read back; RSS {summary['rss_start_mb']} -> "
            f"{summary['rss_end_mb']} MiB, slope {summary['rss_slope_mb_per_h']} MiB/h over the second half; "
            f"late {summary['late']}, reads missing a row {summary['read_missing']}"
        ),
    )
    bad = summary["lost"] or summary["hung"] or summary["read_missing"] or not whole or interrupted
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
