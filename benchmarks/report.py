"""The suite's report: one Markdown table per seed document, and PNG plots, from a run's JSON.

``turbocql bench`` writes ``<name>.json`` (machine description, versions and every result)
and calls :func:`write_report`, which writes ``<name>.md`` and ``<name>-*.png`` beside it.
The same can be done again from a saved JSON::

    python3 benchmarks/report.py benchmarks/results/bench-2026-01-01-120000.json

Tables (every figure comes from the JSON; ratios are computed within the run):

* document 000: sync execute with 1, 2, 4, 8, 16 threads, then the request patterns (writes);
* document 001: sync with 1 thread, the patterns and the pipelines, writes then reads, and the
  ``pipeline_tuning`` result;
* document 002: Python's I/O models (asyncio, uvloop, selectors, threads, gevent; a Rust tokio
  client as the limit) against the number of connections, 64-byte ping-pong: msgs/s, p50/p95,
  user share, system calls per message (``run_connections.markdown``); and the same question
  for CQL drivers (turbocql, the classic driver, the I/O models speaking CQL, the ``scylla``
  crate) against the Rust CQL responder (``run_cql_connections.markdown``), and through a real
  Cassandra node, its own table, when the data holds such a run;
* document 003: ingestion (geo rows, then element rows with two SELECTs per chunk) by threads,
  gevent, asyncio and turbocql's bulk path, per pool size, with the answer to its question
  (CPU-bound or not, fastest model) computed from the figures (``run_ingest.markdown``);
* document 004: vector ingestion, best / average / worst rows/s;
* TLS: ``execute_concurrent`` and asyncio, writes and reads, each client against the plain
  node and against the TLS node, with the TLS overhead (``run_tls.markdown_table``);
* Spark: ``turbocql.spark`` beside the Spark Cassandra Connector, writes and reads
  (``run_spark.markdown``), when the data holds the optional ``spark`` scenario or is a
  ``run_spark.py`` JSON.

turbocql and the Rust reference are rows beside the classic driver; the table functions are
the runners' own (``run_patterns.markdown_table``, ``run_patterns.row_line``,
``run_vectors.markdown_table``, ``run_tuning.markdown_tables``, ``run_tls.markdown_table``).

Plots (matplotlib, Agg backend; skipped with a message if matplotlib is missing):
``-patterns-write.png`` / ``-patterns-read.png`` (ops/s and client CPU µs/op per pattern and
client, grouped bars), ``-sync-threads.png`` (ops/s and CPU µs/op against the number of
threads), ``-vectors.png``, ``-tuning.png`` (ops/s over the grid), ``-tls.png`` (client CPU
µs/op and ops/s, plain text and TLS side by side), ``-bulk.png``, ``-spark.png`` (rows/s and
client and server CPU µs/row per phase, turbocql.spark and the connector), ``-ingest.png`` (records/s
against the pool size per driver and model, one panel per phase), ``-connections.png``
(msgs/s and p95 round trip against the connection count, one line per model) and
``-connections-cql.png`` (the same for the CQL table, one line per client and model) and
``-connections-cql-cassandra.png`` (the CQL table through a real node, from a
``run_cql_connections.py --server cassandra --out`` JSON, which this script also takes).

This module holds the Markdown and the entry points (:func:`write_report`, ``main``); the
plots are ``report_plots``'s, the connections tables and plots ``report_connections``'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script: the checkout's root, for the benchmarks package
from benchmarks import (  # noqa: E402
    run_bulk,
    run_ingest,
    run_patterns,
    run_spark,
    run_sync,
    run_tls,
    run_tuning,
    run_vectors,
)
from benchmarks.report_connections import (  # noqa: E402, F401 - plot_*: names of report, kept
    connections_table,
    cql_connections_table,
    plot_connections,
    plot_cql_connections,
)
from benchmarks.report_plots import (  # noqa: E402, F401 - names of report, moved (the plots)
    CLIENT_COLORS,
    CLIENT_NAMES,
    CLIENT_ORDER,
    INGEST_LINES,
    INGEST_MARKERS,
    make_plots,
    plot_bulk,
    plot_ingest,
    plot_patterns,
    plot_sync,
    plot_tls,
    plot_tuning,
    plot_vectors,
)


def _split_table(md: str) -> tuple[list[str], list[str], list[str]]:
    """(header lines, row lines, footnote lines) of a runner's Markdown table."""
    lines = md.splitlines()
    rows = [ln for ln in lines[2:] if ln.startswith("|")]
    notes = [ln for ln in lines[2:] if ln.strip() and not ln.startswith("|")]
    return lines[:2], rows, notes


def _sync_lines(sync: list[dict], workload: str, threads: list[int]) -> list[str]:
    """Rows of the sync runs for one workload, in the patterns table's columns."""
    by = {(r["label"], r["workload"], r["threads"]): r for r in sync}
    out = []
    for th in threads:
        classic = by.get(("classic", workload, th))
        rust = by.get(("rust", workload, th))
        if rust is not None and "failed" in rust:
            rust = None
        pattern = f"sync, {th} thread{'s' if th != 1 else ''}"
        for label in (*CLIENT_ORDER, run_sync.RUST_OS_LABEL):
            r = by.get((label, workload, th))
            if r is not None:
                out.append(run_patterns.row_line(workload, pattern, r, classic, rust, ""))
    return out


def document_table(scen: dict, doc: list[tuple[str, list[str]]], sync_threads: dict[str, list[int]]) -> str:
    """One table: per workload of ``doc``, its sync rows, then its pattern rows."""
    patterns = scen.get("patterns", {}).get("results", [])
    sync = scen.get("sync", {}).get("results", [])
    header = (
        "| workload | pattern | client | ops/s | client CPU µs/op | server CPU µs/op "
        "| p50 µs | p95 µs | p99 µs | peak RSS MB | ops/s vs classic | CPU vs rust |"
    )
    lines = [header, "| " + " | ".join(["---"] * 12) + " |"]
    notes: list[str] = []
    chosen = {r["spec"] for r in patterns}
    for wl, names in doc:
        lines += _sync_lines(sync, wl, sync_threads.get(wl, []))
        rows = [(wl, n) for n in names if n in chosen]
        if rows:
            _, body, foot = _split_table(run_patterns.markdown_table(rows, patterns))
            lines += body
            notes += [n for n in foot if n not in notes]
    if len(lines) == 2:
        return ""
    if sync:
        notes.append(
            "Sync rows: ops/s vs classic at the same thread count, CPU vs the Rust "
            "reference at the same count (its threads are tokio tasks on one worker "
            f"thread; the row `{run_sync.RUST_OS_LABEL}` is the same reference with "
            "blocking OS threads, as Python threads are). Pattern rows: CPU vs the "
            "Rust reference with 120 in flight."
        )
    return "\n".join(lines) + ("\n\n" + "\n\n".join(notes) if notes else "")


def _fmt_machine(data: dict) -> str:
    m, s, meta = data.get("machine", {}), data.get("server", {}), data.get("meta", {})
    opts = meta.get("options", {})
    rows = [
        ("date", meta.get("date")),
        ("command", f"`{meta.get('command')}`" if meta.get("command") else None),
        ("CPU", f"{m.get('cpu_model')}, {m.get('cpus')} logical CPUs ({m.get('cpus_usable')} usable)"),
        ("memory", f"{m.get('memory_gb')} GB" if m.get("memory_gb") else None),
        ("OS / kernel", f"{m.get('os')} / Linux {m.get('kernel')} ({m.get('arch')})"),
        ("load average (1 min) at start / end", f"{meta.get('loadavg_start')} / {meta.get('loadavg_end')}"),
        (
            "server warm-up",
            f"{opts.get('server_warmup_ops'):,} Rust writes and reads (120 in flight), once, before every scenario"
            if opts.get("server_warmup_ops")
            else "none",
        ),
        ("client pinning", f"taskset -c {meta['pin_client']}" if meta.get("pin_client") else "none"),
        ("server pinning", f"taskset -a -p -c {meta['pin_server']}" if meta.get("pin_server") else "none"),
        ("Python (turbocql clients)", m.get("client_python")),
        ("turbocql", m.get("turbocql")),
        ("classic driver (cassandra-driver)", m.get("cassandra_driver")),
        *_client_rows(m.get("clients") or {}),
        ("numpy / uvloop / matplotlib", f"{m.get('numpy')} / {m.get('uvloop')} / {m.get('matplotlib')}"),
        ("Rust", m.get("rustc")),
        ("Java (server)", s.get("java") or m.get("java")),
        (
            "Cassandra",
            f"{s.get('release_version')} (CQL {s.get('cql_version')}, protocol "
            f"v{s.get('native_protocol_version')}), cluster "
            f"{s.get('cluster_name')!r}, {s.get('host')}:{s.get('port')}, pid "
            f"{s.get('pid')}",
        ),
        (
            "server settings",
            ", ".join(
                f"{k} {v}" for k, v in (("heap", s.get("heap")), ("commitlog_sync", s.get("commitlog_sync"))) if v
            )
            or None,
        ),
        (
            "source",
            f"{m.get('git_commit')}{' (modified)' if m.get('git_dirty') else ''}" if m.get("git_commit") else None,
        ),
    ]
    out = ["| | |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in rows if v not in (None, "", "None")]
    return "\n".join(out)


def _client_rows(clients: dict) -> list[tuple[str, str]]:
    """One row per Python client: its interpreter and versions, or why it did not run."""
    rows = []
    for name in CLIENT_ORDER:
        c = clients.get(name)
        if c is None:
            continue
        if not c.get("available", True):
            rows.append((f"client {name}", f"not available: {c.get('reason')}"))
            continue
        v = c.get("versions") or {}
        pk = ", ".join(f"{k} {x}" for k, x in (v.get("packages") or {}).items() if x)
        rows.append((f"client {name}", f"{v.get('python_version')}, {pk} (`{c.get('python')}`)"))
    return rows


def build_markdown(data: dict, plots: list[Path] | None = None) -> str:
    scen = data.get("scenarios", {})
    opts = data.get("meta", {}).get("options", {})
    parts = [
        "# turbocql benchmark report: the seed documents' tables, side by side",
        "",
        "Every client runs in its own process, one after the other, in this one run, against "
        "a server warmed up first; compare ratios within the run, not absolute figures "
        "across runs. Method and every deviation from the original benchmarks: "
        "`benchmarks/README.md`.",
        "",
        "## Machine and versions",
        "",
        _fmt_machine(data),
    ]
    for name, s in scen.items():
        if s.get("failed"):
            parts += ["", f"**Scenario {name} failed:** {s['failed']}"]

    sync_threads = sorted(
        {r["threads"] for r in scen.get("sync", {}).get("results", []) if r.get("label") != "rust, 120 in flight"}
    )
    # Document 000: writes, sync 1..16 threads, then the patterns.
    t000 = document_table(scen, run_patterns.DOC_000, {"write": sync_threads})
    if t000:
        parts += [
            "",
            "## Document 000: the classic driver's Performance Notes (writes)",
            "",
            _scenario_heading(scen, ("sync", "patterns")),
            "",
            t000,
        ]
    # Document 001: sync with one thread (its "Synchronous Requests"), patterns, pipelines.
    one = [t for t in sync_threads if t == 1]
    t001 = document_table(scen, run_patterns.DOC_001, {"write": one, "read": one})
    tuning = scen.get("tuning", {}).get("results", [])
    if t001 or tuning:
        parts += ["", "## Document 001: writes and reads, the pipeline objects, pipeline_tuning"]
        if t001:
            parts += ["", _scenario_heading(scen, ("sync", "patterns")), "", t001]
        if tuning:
            parts += [
                "",
                "### pipeline_tuning (turbocql; the classic driver has no pipelines)",
                "",
                _scenario_heading(scen, ("tuning",)),
                "",
                run_tuning.markdown_tables(tuning),
            ]
    connections = scen.get("connections", {})
    if connections.get("results"):
        parts += ["", "## Document 002: Python's I/O models vs connection count (64-byte ping-pong)", ""]
        parts += [_scenario_heading(scen, ("connections",)), "", connections_table(connections)]
    cql = scen.get("connections_cql", {})
    if cql.get("results"):
        parts += ["", "## Document 002's question for CQL drivers (issue 17 §2)", ""]
        parts += [_scenario_heading(scen, ("connections_cql",)), "", cql_connections_table(cql)]
    node_cql = scen.get("connections_cql_cassandra", {})
    if node_cql.get("results"):
        parts += ["", "## Connections over CQL, a real Cassandra node (issue 17 §2)", ""]
        parts += [_scenario_heading(scen, ("connections_cql_cassandra",)), "", cql_connections_table(node_cql)]
    ingest = scen.get("ingest", {})
    if ingest.get("results"):
        parts += ["", "## Document 003: ingestion, threads vs gevent vs asyncio by pool size", ""]
        parts += [_scenario_heading(scen, ("ingest",)), "", ingest_table(ingest)]
    vectors = scen.get("vectors", {}).get("results", [])
    if vectors:
        parts += [
            "",
            "## Document 004: vector ingestion",
            "",
            _scenario_heading(scen, ("vectors",)),
            "",
            run_vectors.markdown_table(vectors),
        ]
    tls = scen.get("tls", {})
    tls_table = run_tls.markdown_table(tls.get("results", []))
    if tls_table:
        parts += [
            "",
            "## TLS: execute_concurrent and asyncio over TLS beside plain text",
            "",
            _scenario_heading(scen, ("tls",)),
            "",
        ]
        node = tls_node_line(tls.get("tls_node") or {})
        if node:
            parts += [node, ""]
        parts += [
            tls_table,
            "",
            "Each client runs against the plain-text node and against the TLS node (a second "
            "node, same Cassandra, 768 MB heap unless it was already running); server CPU is each "
            "row's own node. TLS/plain: the TLS row over the same client's plain row "
            "(client CPU µs/op, and ops/s); TLS − plain: the extra client CPU µs per request.",
        ]
    bulk = scen.get("bulk", {}).get("results", [])
    if bulk:
        rows = next((r["rows"] for r in bulk if "rows" in r), 0)
        parts += [
            "",
            "## Bulk load and unload, full-table reads (issue: bulk data)",
            "",
            _scenario_heading(scen, ("bulk",)),
            "",
            run_bulk.markdown(bulk, rows, scen["bulk"].get("meta", {}).get("unavailable")),
            "Loads and unloads are whole processes (interpreter start included); CPU = user + "
            "system of the process and of the worker processes it waited for (cqlsh COPY's); reads "
            "are timed inside the client around one paged `SELECT *`.",
        ]
    spark = scen.get("spark", {}).get("results", [])
    if spark:
        spark_meta = scen["spark"].get("meta", {})
        rows = spark_meta.get("rows") or next((r["rows"] for r in spark if "rows" in r), 0)
        parts += [
            "",
            "## Spark: turbocql.spark and the Spark Cassandra Connector (issue 31)",
            "",
            _scenario_heading(scen, ("spark",)),
            "",
            run_spark.markdown(spark, rows, spark_meta.get("unavailable")),
        ]
    if plots:
        parts += ["", "## Plots", ""]
        parts += [f"![{p.stem}]({p.name})" for p in plots]
    parts += [
        "",
        "Columns: ops/s = requests / wall seconds of the timed section; client CPU = "
        "user + system of the client process over the timed section (getrusage); server "
        "CPU = the Cassandra process over the same section (/proc), an upper bound since "
        "it includes anything else the server did; p50/p99 = per-request latency where the "
        "pattern exposes one; peak RSS = VmHWM of the client process over its whole life. "
        f"Options: `{json.dumps(opts)}`.",
        "",
    ]
    return "\n".join(parts)


def ingest_table(ingest: dict) -> str:
    """The ``ingest`` scenario's table and answer (``run_ingest.markdown``), with its meta's
    pool sizes, record count and CPU count (else taken from the results)."""
    results, meta = ingest.get("results", []), ingest.get("meta", {})
    pools = meta.get("pools") or sorted({r["pool"] for r in results})
    records = meta.get("records") or next((r["records"] for r in results if "records" in r), 0)
    return run_ingest.markdown(results, pools, records, meta.get("cpus")) + (
        "\n\nPhase 1 inserts the geo records (one INSERT each, a table with two SAI indexes); "
        "phase 2 the element records, per chunk of about 200 two SELECTs then one INSERT per record. "
        "Work is queued before timing; client CPU = user + system of the client process per phase "
        "(getrusage); cores = client CPU seconds per wall second."
    )


def tls_node_line(node: dict) -> str:
    """The TLS node of the ``tls`` scenario in one sentence (empty if unknown)."""
    if not node:
        return ""
    s = node.get("server") or {}
    bits = [f"TLS node: {node.get('host')}:{node.get('port')}"]
    if s.get("release_version"):
        bits.append(f"Cassandra {s['release_version']}")
    if s.get("pid"):
        bits.append(f"pid {s['pid']}")
    if s.get("heap"):
        bits.append(f"heap {s['heap']}")
    if s.get("commitlog_sync"):
        bits.append(f"commitlog_sync {s['commitlog_sync']}")
    if s.get("tls_protocol"):
        bits.append(f"{s['tls_protocol']} with {s.get('tls_cipher')}")
    bits.append("started for this run and stopped after it" if node.get("started") else "already running, left running")
    return ", ".join(bits) + "."


def _scenario_heading(scen: dict, names: tuple[str, ...]) -> str:
    return " ".join(scen[n]["heading"] for n in names if scen.get(n, {}).get("heading"))


def as_report_data(data: dict) -> dict:
    """A ``turbocql bench`` JSON as it is; a single runner's (``meta`` and ``results``, no
    ``scenarios``) whose meta names its ``scenario`` (``run_cql_connections.py --out``, e.g. a
    ``--server cassandra`` run) as a report of that one scenario."""
    if "scenarios" in data or not data.get("meta", {}).get("scenario"):
        return data
    meta = data["meta"]
    scen = {"meta": meta, "heading": meta.get("heading"), "results": data.get("results", [])}
    return {"meta": {}, "machine": {}, "server": {}, "scenarios": {meta["scenario"]: scen}}


def write_report(data: dict, out_dir: Path, name: str, plots: bool = True) -> dict[str, object]:
    """``<name>.md`` and the plots in ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pngs = make_plots(data, out_dir, name) if plots else []
    md = out_dir / f"{name}.md"
    md.write_text(build_markdown(data, pngs))
    return {"markdown": md, "plots": pngs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Rebuild the Markdown report and plots of a `turbocql bench` run from its JSON."
    )
    ap.add_argument("json", type=Path)
    ap.add_argument("--out-dir", type=Path, default=None, help="default: beside the JSON")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    data = as_report_data(json.loads(args.json.read_text()))
    paths = write_report(data, args.out_dir or args.json.parent, args.json.stem, not args.no_plots)
    print(paths["markdown"])
    for p in paths["plots"]:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
