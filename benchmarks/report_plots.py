"""The PNG plots of the suite's report (``report.py``; matplotlib, Agg backend): one per
scenario the data holds (patterns, sync threads, tuning, vectors, TLS, bulk, Spark, ingest,
connections), each client in its colour and name (``CLIENT_COLORS``, ``CLIENT_NAMES``, in
``CLIENT_ORDER``, which the report's tables follow too), and :func:`make_plots`, which writes
every plot the data allows.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks import run_ingest, run_patterns, run_spark, run_sync, run_tls, run_tuning
from benchmarks.plotting import plain_log, pyplot
from benchmarks.report_connections import plot_connections, plot_cql_connections

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
    rust = next((r for r in results if r["label"] == "rust" and r["spec"] != run_patterns.RUST_ALL_SPEC), None)
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
