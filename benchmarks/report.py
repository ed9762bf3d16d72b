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
from benchmarks.plotting import plain_log, pyplot  # noqa: E402
from benchmarks.report_connections import (  # noqa: E402
    connections_table,
    cql_connections_table,
    plot_connections,
    plot_cql_connections,
)

CLIENT_COLORS = {
    "classic": "#9e9e9e",
    "scylla": "#8c564b",
    "turbocql": "#1f77b4",
    "acsylla": "#2ca02c",
    "rust": "#d62728",
}
CLIENT_NAMES = {
    "classic": "classic driver",
    "scylla": "scylla-driver",
    "turbocql": "turbocql",
    "acsylla": "acsylla",
    "rust": "Rust reference",
}
CLIENT_ORDER = ("classic", "scylla", "turbocql", "acsylla", "rust")


# ---------------------------------------------------------------------------------------------
# Markdown


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


# ---------------------------------------------------------------------------------------------
# Plots


def plot_patterns(scen: dict, workload: str, path: Path) -> bool:
    """Grouped horizontal bars: ops/s and client CPU µs/op per pattern and client."""
    results = [
        r for r in scen.get("patterns", {}).get("results", []) if r["workload"] == workload and "failed" not in r
    ]
    if not results:
        return False
    order = []
    for wl, names in run_patterns.DOC_000 + run_patterns.DOC_001:
        order += [n for n in names if wl == workload and n not in order]
    cats: list[tuple[str, dict]] = []  # (label, {client: result})
    rust = next((r for r in results if r["label"] == "rust"), None)
    if rust:
        cats.append((run_patterns.RUST_LABEL + " (reference)", {"rust": rust}))
    for name in order:
        got = {r["label"]: r for r in results if r["spec"] == name}
        if got:
            cats.append((run_patterns.SPEC_BY_NAME[name].label, got))
    plt = pyplot()
    clients = [c for c in CLIENT_ORDER if any(c in g for _, g in cats)]
    # Each category's bars are centred on its label: only the clients it has take a slot.
    height = 0.8 / max(len(got) for _, got in cats)
    fig, axes = plt.subplots(
        1, 2, figsize=(14, 0.2 * sum(len(g) for _, g in cats) + 0.25 * len(cats) + 2.0), sharey=True
    )
    for ax, metric, title, log in (
        (axes[0], "ops_per_s", "ops/s (higher is better)", False),
        (axes[1], "cpu_us_per_op", "client CPU µs per request (lower is better, log scale)", True),
    ):
        for client in clients:
            ys, xs = [], []
            for i, (_, got) in enumerate(cats):
                present = [c for c in clients if c in got]
                if client in got:
                    k = present.index(client)
                    ys.append(i + (k - (len(present) - 1) / 2) * height)
                    xs.append(got[client][metric])
            bars = ax.barh(ys, xs, height=height, color=CLIENT_COLORS[client], label=CLIENT_NAMES[client])
            ax.bar_label(bars, labels=[f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" for x in xs], padding=2, fontsize=7)
        ax.set_title(title, fontsize=10)
        if log:
            ax.set_xscale("log")
            plain_log(ax.xaxis)
        ax.grid(axis="x", alpha=0.3)
        ax.margins(x=0.15)
    axes[0].set_yticks(range(len(cats)), [c for c, _ in cats], fontsize=8)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(clients), fontsize=8, frameon=False)
    fig.suptitle(f"Request patterns, {workload} workload (seed documents 000 and 001)")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_sync(scen: dict, path: Path) -> bool:
    """ops/s and client CPU µs/op against the number of threads, per client and workload."""
    results = [r for r in scen.get("sync", {}).get("results", []) if "failed" not in r]
    workloads = [w for w in ("write", "read") if any(r["workload"] == w for r in results)]
    if not workloads:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(len(workloads), 2, figsize=(12, 4.2 * len(workloads)), squeeze=False)
    for row, wl in enumerate(workloads):
        for col, (metric, title) in enumerate((("ops_per_s", "ops/s"), ("cpu_us_per_op", "client CPU µs per request"))):
            ax = axes[row][col]
            for client in CLIENT_ORDER:
                pts = sorted((r["threads"], r[metric]) for r in results if r["label"] == client and r["workload"] == wl)
                if pts:
                    ax.plot(
                        [p[0] for p in pts],
                        [p[1] for p in pts],
                        marker="o",
                        color=CLIENT_COLORS[client],
                        label=CLIENT_NAMES[client] + (" (tokio tasks)" if client == "rust" else ""),
                    )
            pts = sorted(
                (r["threads"], r[metric])
                for r in results
                if r["label"] == run_sync.RUST_OS_LABEL and r["workload"] == wl
            )
            if pts:
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    marker="s",
                    linestyle=":",
                    color=CLIENT_COLORS["rust"],
                    label="Rust reference (OS threads)",
                )
            ref = next((r for r in results if r["label"] == "rust, 120 in flight" and r["workload"] == wl), None)
            if ref and metric == "ops_per_s":
                ax.axhline(
                    ref[metric],
                    color=CLIENT_COLORS["rust"],
                    linestyle="--",
                    linewidth=1,
                    label="Rust reference, 120 in flight",
                )
            ax.set_xscale("log", base=2)
            threads = sorted({r["threads"] for r in results if r["label"] != "rust, 120 in flight"})
            ax.set_xticks(threads, [str(t) for t in threads])
            if metric == "cpu_us_per_op":
                ax.set_yscale("log")
                plain_log(ax.yaxis)
            ax.set_xlabel("threads")
            ax.set_title(f"sync execute, {wl}: {title}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("Sync execute against the number of threads (seed document 000)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_vectors(scen: dict, path: Path) -> bool:
    results = [r for r in scen.get("vectors", {}).get("results", []) if "failed" not in r]
    if not results:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(max(12, 2.0 * len(results)), 4.8))
    short = {"list": "lists", "numpy": "numpy", "vec": "Vec<f32>"}
    labels = [f"{CLIENT_NAMES[r['label']]}\n{short.get(r['input'], r['input'])}" for r in results]
    colors = [CLIENT_COLORS[r["label"]] for r in results]
    avg = [r["avg_ops_per_s"] for r in results]
    err = [
        [a - r["worst_ops_per_s"] for a, r in zip(avg, results)],
        [r["best_ops_per_s"] - a for a, r in zip(avg, results)],
    ]
    axes[0].bar(range(len(results)), avg, yerr=err, capsize=4, color=colors)
    top = max(r["best_ops_per_s"] for r in results)
    for i, (a, r) in enumerate(zip(avg, results)):  # above the best run's whisker
        axes[0].text(i, r["best_ops_per_s"] + 0.015 * top, f"{a:,.0f}", ha="center", va="bottom", fontsize=8)
    axes[0].set_title("rows/s: average of the runs, bars from worst to best", fontsize=10)
    cpu = [r["cpu_us_per_op"] for r in results]
    bars = axes[1].bar(range(len(results)), cpu, color=colors)
    axes[1].bar_label(bars, labels=[f"{c:,.0f}" for c in cpu], padding=2, fontsize=8)
    axes[1].set_title("client CPU µs per row (log scale)", fontsize=10)
    axes[1].set_yscale("log")
    plain_log(axes[1].yaxis)
    for ax in axes:
        ax.set_xticks(range(len(results)), labels, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.15)
    r0 = results[0]
    fig.suptitle(
        f"Vector ingestion (seed document 004): {r0['rows']:,} rows of "
        f"vector<float, {r0['dim']}> in one execute_concurrent_with_args call"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_bulk(scen: dict, path: Path) -> bool:
    """Rows/s and client CPU per row of every load, unload and read of the bulk scenario."""
    results = [r for r in scen.get("bulk", {}).get("results", []) if "failed" not in r]
    if not results:
        return False
    plt = pyplot()
    kinds = [k for k in ("load", "unload", "read") if any(r["kind"] == k for r in results)]
    fig, axes = plt.subplots(2, len(kinds), figsize=(5.2 * len(kinds), 8), squeeze=False)
    for j, kind in enumerate(kinds):
        rs = [r for r in results if r["kind"] == kind]
        labels = [f"{r['client']}\n{r['what']}" for r in rs]
        colors = [
            "#1f77b4" if "turbocql" in r["client"] else "#7f7f7f" if "Rust" in r["client"] else "#d62728" for r in rs
        ]
        for i, (key, title, log) in enumerate(
            (("rows_per_s", "rows/s", False), ("cpu_us_per_row", "client CPU µs per row (log scale)", True))
        ):
            ax = axes[i][j]
            bars = ax.bar(range(len(rs)), [r[key] for r in rs], color=colors)
            ax.bar_label(bars, labels=[f"{r[key]:,.1f}" if r[key] < 100 else f"{r[key]:,.0f}" for r in rs], fontsize=7)
            ax.set_title(f"{kind}: {title}", fontsize=10)
            ax.set_xticks(range(len(rs)), labels, fontsize=7, rotation=20, ha="right")
            ax.grid(axis="y", alpha=0.3)
            if log:
                ax.set_yscale("log")
                plain_log(ax.yaxis)
            ax.margins(y=0.15)
    fig.suptitle(f"Bulk data: {results[0]['rows']:,} rows of int, bigint, text, timestamp, uuid, double, set, map")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


INGEST_MARKERS = {"threads": "o", "gevent": "^", "asyncio": "s", "bulk": "D"}
INGEST_LINES = {"threads": "-", "gevent": "--", "asyncio": "-.", "bulk": ":"}


def plot_ingest(scen: dict, path: Path) -> bool:
    """Records/s against the pool size, one line per (driver, model), one panel per phase."""
    results = [r for r in scen.get("ingest", {}).get("results", []) if "phases" in r and "failed" not in r]
    if not results:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), squeeze=False)
    pools = sorted({r["pool"] for r in results})
    for col, (phase, title) in enumerate((("geo", "phase 1: geo records"), ("elements", "phase 2: element records"))):
        ax = axes[0][col]
        for client, model in run_ingest.ROWS:
            pts = sorted(
                (r["pool"], r["phases"][phase]["records_per_s"])
                for r in results
                if r["client"] == client and r["model"] == model and r["phases"][phase].get("records_per_s")
            )
            if pts:
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    marker=INGEST_MARKERS.get(model, "o"),
                    linestyle=INGEST_LINES.get(model, "-"),
                    color=CLIENT_COLORS.get(client, "#7f7f7f"),
                    label=f"{CLIENT_NAMES.get(client, client)}, {model}",
                )
        if len(pools) > 1:
            ax.set_xscale("log")
        ax.set_xticks(pools, [str(p) for p in pools])
        ax.minorticks_off()  # the log scale's minor labels (2x10^1, ...) crowd the pool sizes
        ax.set_xlabel("pool size (threads, greenlets, coroutines; bulk: requests in flight)")
        ax.set_ylabel("records/s")
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Ingestion by pool size (seed document 003)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_tuning(scen: dict, path: Path) -> bool:
    results = [r for r in scen.get("tuning", {}).get("results", []) if "failed" not in r and r.get("points")]
    if not results:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, len(results), figsize=(6.5 * len(results), 5), squeeze=False)
    for ax, r in zip(axes[0], results):
        fs, bs = r["in_flight_grid"], r["buffer_grid"]
        grid = [[float("nan")] * len(bs) for _ in fs]
        for p in r["points"]:
            grid[fs.index(p["in_flight"])][bs.index(p["buffer"])] = (
                p["ops_per_s"] if not p.get("errors") else float("nan")
            )
        im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
        fig.colorbar(im, ax=ax, label="ops/s")
        ax.set_xticks(range(len(bs)), [f"{b:,}" for b in bs], rotation=45, fontsize=7)
        ax.set_yticks(range(len(fs)), [f"{f:,}" for f in fs], fontsize=7)
        ax.set_xlabel(run_tuning.BUFFER_NAMES[r["pipeline"]])
        ax.set_ylabel("max_in_flight_requests")
        if len(fs) * len(bs) <= 64:
            lo, hi = im.get_clim()
            for i in range(len(fs)):
                for j in range(len(bs)):
                    v = grid[i][j]
                    if v == v:  # not NaN
                        bright = hi > lo and (v - lo) / (hi - lo) > 0.6
                        ax.text(
                            j,
                            i,
                            f"{v / 1000:.1f}k",
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="black" if bright else "white",
                        )
        s = r.get("summary") or run_tuning.summarize(r)
        title = f"{run_tuning.NAMES[r['pipeline']]} (turbocql)"
        if s:
            title += (
                f"\nbest (average of the {s['top']} fastest): in-flight "
                f"{s['best_in_flight']:,}, buffer {s['best_buffer']:,}"
            )
        ax.set_title(title, fontsize=10)
    fig.suptitle("pipeline_tuning (seed document 001): ops/s over the grid")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_tls(scen: dict, path: Path) -> bool:
    """Client CPU µs/op and ops/s per (client, pattern), plain text and TLS side by side
    (TLS hatched), one row of plots per workload."""
    results = [r for r in scen.get("tls", {}).get("results", []) if "failed" not in r]
    workloads = [w for w in ("write", "read") if any(r["workload"] == w for r in results)]
    if not workloads:
        return False
    by = {run_tls.key(r): r for r in results}
    plt = pyplot()
    fig, axes = plt.subplots(len(workloads), 2, figsize=(13, 2.6 + 0.9 * len(results) / len(workloads)), squeeze=False)
    groups = [("rust", run_tls.RUST_PATTERN, "Rust reference, 120 in flight")] + [
        (c, p, f"{CLIENT_NAMES[c]}, {p}") for p in run_tls.PATTERNS for c in CLIENT_ORDER if c != "rust"
    ]
    from matplotlib.patches import Patch

    legend = [
        Patch(facecolor="#9e9e9e", label=run_tls.TRANSPORT_NAMES["plain"]),
        Patch(facecolor="#9e9e9e", hatch="//", edgecolor="white", label=run_tls.TRANSPORT_NAMES["tls"]),
    ]
    for row, wl in enumerate(workloads):
        # (label, client, [plain run, TLS run]) of every group with a run on this workload
        cats = [
            (label, c, runs)
            for c, p, label in groups
            if any(runs := [by.get((c, p, wl, t)) for t in run_tls.TRANSPORTS])
        ]
        for col, (metric, title) in enumerate((("cpu_us_per_op", "client CPU µs per request"), ("ops_per_s", "ops/s"))):
            ax = axes[row][col]
            for k, t in enumerate(run_tls.TRANSPORTS):
                shown = [(i, c, runs[k]) for i, (_, c, runs) in enumerate(cats) if runs[k] is not None]
                ys = [i + (k - 0.5) * 0.4 for i, _, _ in shown]
                xs = [r[metric] for _, _, r in shown]
                colors = [CLIENT_COLORS[c] for _, c, _ in shown]
                bars = ax.barh(
                    ys,
                    xs,
                    height=0.4,
                    color=colors,
                    hatch="//" if t == "tls" else None,
                    edgecolor="white",
                    label=run_tls.TRANSPORT_NAMES[t],
                )
                ax.bar_label(bars, labels=[f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" for x in xs], padding=2, fontsize=7)
            ax.set_yticks(range(len(cats)), [label for label, _, _ in cats], fontsize=8)
            ax.invert_yaxis()
            ax.set_title(f"{wl}: {title}", fontsize=10)
            ax.grid(axis="x", alpha=0.3)
            ax.margins(x=0.15)
            ax.legend(handles=legend, fontsize=8)
    fig.suptitle("Plain text and TLS (hatched), execute_concurrent and asyncio")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def make_plots(data: dict, out_dir: Path, name: str) -> list[Path]:
    """Write every plot the data allows; returns their paths (none without matplotlib)."""
    try:
        pyplot()
    except ImportError:
        print("matplotlib is not installed: no plots (pip install matplotlib)", file=sys.stderr)
        return []
    scen = data.get("scenarios", {})
    made = []
    for suffix, fn in (
        ("patterns-write", lambda p: plot_patterns(scen, "write", p)),
        ("patterns-read", lambda p: plot_patterns(scen, "read", p)),
        ("sync-threads", lambda p: plot_sync(scen, p)),
        ("tuning", lambda p: plot_tuning(scen, p)),
        ("vectors", lambda p: plot_vectors(scen, p)),
        ("tls", lambda p: plot_tls(scen, p)),
        ("bulk", lambda p: plot_bulk(scen, p)),
        ("spark", lambda p: run_spark.plot(scen.get("spark", {}).get("results", []), p)),
        ("ingest", lambda p: plot_ingest(scen, p)),
        ("connections", lambda p: plot_connections(scen, p)),
        ("connections-cql", lambda p: plot_cql_connections(scen, p)),
        ("connections-cql-cassandra", lambda p: plot_cql_connections(scen, p, "connections_cql_cassandra")),
    ):
        path = out_dir / f"{name}-{suffix}.png"
        try:
            if fn(path):
                made.append(path)
        except Exception as e:  # a broken plot must not lose the run's report
            print(f"plot {path.name} failed: {type(e).__name__}: {e}", file=sys.stderr)
    return made


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
