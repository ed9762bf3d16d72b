"""cqlengine, the object mapper: client CPU per model saved and per model read.

The same model and the same workload run through the classic driver's ``cassandra.cqlengine``
and turbocql's ``turbocql.cqlengine``, one after the other against the local node, each in
its own process (so one's imports and threads do not weigh on the other):

* ``save``: ``Model.create(...)`` one at a time, the way applications write;
* ``batch``: many new instances saved in ``BatchQuery`` blocks of 100, cqlengine's own way
  to save many (both drivers send the same logged batches);
* ``bulk save``: the same instances through one prepared INSERT and ``execute_concurrent``
  (100 in flight). turbocql: ``turbocql.cqlengine.query.bulk_save``; the classic cqlengine
  has no such call, so its side is that call written by hand on its session: the INSERT
  prepared, each instance validated and its values read, ``execute_concurrent_with_args``
  (the same requests);
* ``read``: ``list(Model.objects.all())`` over the saved rows, every row a model instance.

Client CPU (process time) per model and models/s are reported. Usage::

    python benchmarks/run_cqlengine.py [--rows 20000] [--out]   # node on 127.0.0.1:9042
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
KEYSPACE = "bench_cqlengine"


def _workload(driver: str, rows: int, host: str, port: int) -> dict:
    if driver == "classic":
        from cassandra.cqlengine import columns, connection, management, models
        from cassandra.cqlengine.query import BatchQuery

        bulk_save = None
    else:
        from turbocql.cqlengine import columns, connection, management, models
        from turbocql.cqlengine.query import BatchQuery, bulk_save

    class Reading(models.Model):
        __keyspace__ = KEYSPACE
        __table_name__ = f"reading_{driver}"
        sensor = columns.UUID(partition_key=True)
        at = columns.Integer(primary_key=True)
        kind = columns.Text()
        value = columns.Double()
        ok = columns.Boolean()
        note = columns.Text()

    connection.setup([host], KEYSPACE, port=port, protocol_version=4)
    management.create_keyspace_simple(KEYSPACE, 1)
    management.drop_table(Reading)
    management.sync_table(Reading)
    sensors = [uuid.uuid4() for _ in range(rows // 100 or 1)]

    def values(i):
        return dict(sensor=sensors[i % len(sensors)], at=i, kind="temp", value=i * 0.5, ok=bool(i & 1), note="n" * 20)

    out = {}

    def timed(name, fn, n):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        out[name] = {"models": n, "wall_s": wall, "cpu_us_per_model": cpu / n * 1e6, "models_per_s": n / wall}

    single = min(rows, 5000)
    timed("save", lambda: [Reading.create(**values(i)) for i in range(single)], single)

    def fresh():
        management.drop_table(Reading)
        management.sync_table(Reading)
        return [Reading(**values(i)) for i in range(rows)]

    instances = fresh()

    def batches():
        for start in range(0, rows, 100):
            with BatchQuery() as b:
                for inst in instances[start : start + 100]:
                    inst.batch(b).save()

    timed("batch", batches, rows)
    instances = fresh()
    if bulk_save is not None:
        timed("bulk save", lambda: bulk_save(instances, concurrency=100), rows)
    else:
        timed("bulk save", lambda: _classic_bulk_save(connection.get_session(), Reading, instances), rows)
    got = []
    timed("read", lambda: got.extend(Reading.objects.all().limit(rows + 1)), rows)
    assert len(got) == rows, (driver, len(got))
    assert {m.at for m in got} == set(range(rows))
    management.drop_table(Reading)
    connection.unregister_connection("default")
    if driver == "classic":
        from benchmarks.clients.sync_threads import classic_driver_state

        out["classic_driver"] = classic_driver_state("cassandra")
    return out


def _classic_bulk_save(session, model, instances):
    """What ``turbocql.cqlengine.query.bulk_save`` does, written on the classic driver's
    session: one prepared INSERT, every instance validated, ``execute_concurrent_with_args``."""
    from cassandra.concurrent import execute_concurrent_with_args

    cols = list(model._columns.items())
    names = ", ".join(col.db_field_name for _, col in cols)
    prepared = session.prepare(
        f"INSERT INTO {model.column_family_name()} ({names}) VALUES ({', '.join('?' * len(cols))})"
    )
    params = []
    for inst in instances:
        inst.validate()
        params.append([col.to_database(getattr(inst, name)) for name, col in cols])
    results = execute_concurrent_with_args(session, prepared, params, concurrency=100)
    assert all(ok for ok, _ in results)
    for inst in instances:
        inst._set_persisted()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--driver", choices=["classic", "turbocql"], help=argparse.SUPPRESS)
    ap.add_argument("--out", action="store_true", help="write benchmarks/results/cqlengine-<date>.json and -latest.md")
    args = ap.parse_args()
    if args.driver:
        os.environ.setdefault("CQLENG_ALLOW_SCHEMA_MANAGEMENT", "1")
        print(json.dumps(_workload(args.driver, args.rows, args.host, args.port)))
        return
    results = {}
    for driver in ("classic", "turbocql"):
        cmd = [sys.executable, __file__, "--driver", driver, "--rows", str(args.rows)]
        cmd += ["--host", args.host, "--port", str(args.port)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode:
            sys.exit(f"{driver} failed:\n{proc.stderr}")
        results[driver] = json.loads(proc.stdout.strip().splitlines()[-1])
    md = render(results, args.rows)
    state = results["classic"].get("classic_driver") or {}
    md += (
        f"\nclassic driver: reactor {state.get('reactor')}, Cython extensions "
        f"{'loaded' if state.get('cython_extensions') else 'not loaded'}.\n"
    )
    print(md)
    if args.out:
        day = dt.date.today().isoformat()
        meta = {"date": day, "rows": args.rows, "python": platform.python_version(), "machine": platform.machine()}
        doc = {"meta": meta, "results": results}
        (HERE / "results" / f"cqlengine-{day}.json").write_text(json.dumps(doc, indent=2))
        (HERE / "results" / "cqlengine-latest.md").write_text(md)


def render(results: dict, rows: int) -> str:
    lines = [
        f"cqlengine, {rows} models (save: min({rows}, 5000) one at a time), one node on this machine",
        "",
        "| workload | classic CPU µs/model | turbocql CPU µs/model | ratio | classic models/s | turbocql models/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ("save", "batch", "bulk save", "read"):
        c, t = results["classic"][name], results["turbocql"][name]
        ratio = c["cpu_us_per_model"] / t["cpu_us_per_model"]
        lines.append(
            f"| {name} | {c['cpu_us_per_model']:.1f} | {t['cpu_us_per_model']:.1f} | {ratio:.1f}× "
            f"| {c['models_per_s']:,.0f} | {t['models_per_s']:,.0f} |"
        )
    lines.append("")
    lines.append(
        "save: Model.create one at a time; batch: BatchQuery of 100 models; bulk save: one prepared INSERT through "
        "execute_concurrent, 100 in flight (turbocql: bulk_save; classic: the same written on its session). "
        "Both drivers make the same requests in every row."
    )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
