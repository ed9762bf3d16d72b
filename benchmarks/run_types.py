"""Per-type serialization and decoding cost: turbocql's engine vs the classic driver.

For every CQL type, a list of sample values is serialized (Python value -> CQL bytes) and
decoded (CQL bytes -> Python value), and the best of ``--rounds`` rounds gives the cost in
ns per value:

* turbocql: ``turbocql._engine.time_encode`` / ``time_decode``, the encoders and decoders
  the engine uses for bound values and result rows, looping over the values inside Rust;
* classic: ``cassandra.cqltypes`` ``serialize`` / ``deserialize`` (protocol v4) in a Python
  loop, which is how the classic driver's ``BoundStatement.bind`` calls them (its Cython
  row parser only works on whole result messages, so decoding here is its pure-Python path).

Each type is checked first: both drivers must produce the same bytes for the same values
(``same bytes`` column). Nothing talks to a server. Usage::

    python benchmarks/run_types.py                     # Markdown table on stdout
    python benchmarks/run_types.py --out               # + benchmarks/results/types-<date>.json
                                                       #   and types-latest.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import ipaddress
import json
import platform
import sys
import time
import uuid
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTOCOL = 4


def samples(n: int):
    """(CQL type, classic type name, turbocql values, classic values), ``n`` values each."""
    import random

    from cassandra import util as cutil

    from turbocql import util as tutil

    rnd = random.Random(7)
    ints = [rnd.randint(-(2**31), 2**31 - 1) for _ in range(n)]
    floats = [rnd.random() * 1000 for _ in range(n)]
    uuids1 = [uuid.uuid1(node=i, clock_seq=i) for i in range(n)]
    durations = [(rnd.randint(0, 20), rnd.randint(0, 30), rnd.randint(0, 10**12)) for _ in range(n)]
    vec = [[rnd.random() for _ in range(768)] for _ in range(min(n, 50))]
    t0 = dt.datetime(2024, 1, 1)

    def same(v):
        return v, v

    rows = [
        ("ascii", "AsciiType", *same(["key-%06d" % i for i in range(n)])),
        ("text", "UTF8Type", *same(["héllo wörld %d" % i for i in range(n)])),
        ("int", "Int32Type", *same(ints)),
        ("bigint", "LongType", *same([i * 2**20 for i in ints])),
        ("smallint", "ShortType", *same([i % 32768 for i in ints])),
        ("tinyint", "ByteType", *same([i % 128 for i in ints])),
        ("varint", "IntegerType", *same([i * 2**40 for i in ints])),
        ("float", "FloatType", *same([float(int(f * 64)) / 64 for f in floats])),
        ("double", "DoubleType", *same(floats)),
        ("decimal", "DecimalType", *same([decimal.Decimal("%d.%03d" % (i, abs(i) % 1000)) for i in ints])),
        ("boolean", "BooleanType", *same([i % 2 == 0 for i in ints])),
        ("blob", "BytesType", *same([i.to_bytes(8, "big", signed=True) * 2 for i in ints])),
        ("uuid", "UUIDType", *same([uuid.UUID(int=abs(i) * 2**64 + 17) for i in ints])),
        ("timeuuid", "TimeUUIDType", *same(uuids1)),
        ("timestamp", "DateType", *same([t0 + dt.timedelta(milliseconds=abs(i)) for i in ints])),
        ("date", "SimpleDateType", *same([dt.date(2024, 1, 1) + dt.timedelta(days=abs(i) % 9000) for i in ints])),
        ("time", "TimeType", *same([dt.time(abs(i) % 24, abs(i) % 60, abs(i) % 60, abs(i) % 10**6) for i in ints])),
        ("duration", "DurationType", [tutil.Duration(*d) for d in durations], [cutil.Duration(*d) for d in durations]),
        ("inet", "InetAddressType", *same([str(ipaddress.IPv4Address(abs(i))) for i in ints])),
        ("list<int>", "ListType(Int32Type)", *same([ints[i : i + 10] for i in range(n)])),
        ("set<text>", "SetType(UTF8Type)", *same([["a%d" % i, "b%d" % i, "c%d" % i] for i in range(n)])),
        ("map<text, int>", "MapType(UTF8Type, Int32Type)", *same([{"a%d" % i: i, "b": 2, "c": 3} for i in range(n)])),
        ("tuple<int, text>", "TupleType(Int32Type, UTF8Type)", *same([(i, "t%d" % i) for i in range(n)])),
        ("udt<ks.point, x int, label text>", None, *same([(i, "p%d" % i) for i in range(n)])),
        ("vector<float, 768>", "VectorType(FloatType, 768)", *same(vec)),
    ]
    return rows


def classic_type(name: str | None):
    from cassandra import cqltypes

    if name is None:  # the UDT
        return cqltypes.UserType.make_udt_class("ks", "point", ("x", "label"), (cqltypes.Int32Type, cqltypes.UTF8Type))
    return cqltypes.lookup_casstype(name)


def best(fn, rounds: int) -> float:
    return min(fn() for _ in range(rounds))


def classic_loop(fn, values, repeat: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(repeat):
        for v in values:
            fn(v, PROTOCOL)
    return (time.perf_counter_ns() - t0) / (repeat * len(values))


def measure(n: int, rounds: int, only: set[str] | None) -> list[dict]:
    import numpy as np

    import turbocql.cluster  # noqa: F401 - registers the classes decoded values are made of
    from turbocql import _engine

    out = []
    cases = samples(n)
    # The same vectors as numpy float32 rows: turbocql reads them from the array's memory.
    vname, vclassic, vvals, _ = cases[-1]
    arr = np.array(vvals, dtype=np.float32)
    rows32 = [row.tolist() for row in arr]
    cases[-1] = (vname, vclassic, rows32, rows32)
    cases.append(("vector<float, 768> (numpy rows)", vclassic, list(arr), list(arr)))
    for label, cname, tvals, cvals in cases:
        cql = label.split(" (")[0]
        if only and cql not in only and label not in only:
            continue
        ct = classic_type(cname)
        repeat = max(1, 20000 // (len(tvals) * (100 if "768" in cql else 1)))
        t_bytes = [_engine.encode(cql, v) for v in tvals]
        c_bytes = [ct.serialize(v, PROTOCOL) for v in cvals]
        row = {
            "type": label,
            "values": len(tvals),
            "same_bytes": t_bytes == c_bytes,
            "turbocql_serialize_ns": round(best(partial(_engine.time_encode, cql, tvals, repeat), rounds), 1),
            "classic_serialize_ns": round(best(partial(classic_loop, ct.serialize, cvals, repeat), rounds), 1),
            "turbocql_decode_ns": round(best(partial(_engine.time_decode, cql, t_bytes, repeat), rounds), 1),
            "classic_decode_ns": round(best(partial(classic_loop, ct.deserialize, c_bytes, repeat), rounds), 1),
        }
        row["serialize_speedup"] = round(row["classic_serialize_ns"] / row["turbocql_serialize_ns"], 1)
        row["decode_speedup"] = round(row["classic_decode_ns"] / row["turbocql_decode_ns"], 1)
        print(
            f"{label}: {row['turbocql_serialize_ns']} / {row['classic_serialize_ns']} ns serialize, "
            f"{row['turbocql_decode_ns']} / {row['classic_decode_ns']} ns decode",
            file=sys.stderr,
            flush=True,
        )
        out.append(row)
    return out


def fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        "# Per-type serialization and decoding: turbocql engine vs classic driver",
        "",
        f"{meta['date']}, `{meta['command']}`",
        "",
        f"ns per value, best of {meta['rounds']} rounds; classic driver {meta['classic_version']} "
        f"(`cassandra.cqltypes`, protocol v{PROTOCOL}, pure-Python path); {meta['cpus']} CPUs, "
        f"Python {meta['python']}. × = classic ns / turbocql ns.",
        "",
        "| CQL type | serialize turbocql | serialize classic | × | decode turbocql | decode classic | × | same bytes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r['type']} | {fmt(r['turbocql_serialize_ns'])} | {fmt(r['classic_serialize_ns'])} | "
            f"{r['serialize_speedup']}× | {fmt(r['turbocql_decode_ns'])} | {fmt(r['classic_decode_ns'])} | "
            f"{r['decode_speedup']}× | {'yes' if r['same_bytes'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--values", type=int, default=200, help="sample values per type")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per measurement (best is kept)")
    ap.add_argument("--types", default=None, help="comma-separated CQL types to run (default all)")
    ap.add_argument(
        "--out",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="write JSON (default benchmarks/results/types-<date>.json) and types-latest.md",
    )
    args = ap.parse_args(argv)
    import os

    import cassandra

    only = set(t.strip() for t in args.types.split(",")) if args.types else None
    results = measure(args.values, args.rounds, only)
    now = dt.datetime.now()
    meta = {
        "date": now.strftime("%Y-%m-%d %H:%M"),
        "command": "python benchmarks/run_types.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "rounds": args.rounds,
        "classic_version": cassandra.__version__,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    md = markdown(results, meta)
    print(md)
    if args.out is not None:
        path = Path(args.out) if args.out else HERE / "results" / f"types-{now.strftime('%Y-%m-%d-%H%M%S')}.json"
        path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        (HERE / "results" / "types-latest.md").write_text(md)
        print(f"raw results: {path}", file=sys.stderr)
    return 0 if all(r["same_bytes"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
