"""The report's parts for scenario ``connections`` (``report.py`` imports them): the tables of
document 002's ping-pong (``run_connections.markdown``) and of its CQL question
(``run_cql_connections.markdown``: through the Rust CQL responder, and, from a run with
``--server cassandra``, through a real Cassandra node, its own table), each with its method
line, and their plots: msgs/s and p95 latency against the connection count (log scale), one
line per (client, model)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import run_connections, run_cql_connections
from benchmarks.connections_figures import aggregate
from benchmarks.plotting import plain_log, pyplot


def _table(scen: dict, markdown, footer: str) -> str:
    """A connections table (``markdown`` of its runner) with its meta's counts, seconds,
    warm-up, repeats and CPUs (else the counts taken from the results), then ``footer``."""
    results, meta = scen.get("results", []), scen.get("meta", {})
    counts = meta.get("connections") or sorted(
        {r["connections"] for r in results if r.get("kind", "run") == "run" and "connections" in r}
    )
    pins = (meta.get("pin_client"), meta.get("pin_server"))
    kernel = {"sysctl": meta.get("sysctl"), "sysctls_set": meta.get("sysctls_set")} if "sysctl" in meta else None
    extra = {"server": meta.get("server")} if markdown is run_cql_connections.markdown else {}
    extra["kernel"] = kernel
    return (
        markdown(results, counts, meta.get("seconds"), meta.get("warmup"), meta.get("repeat"), pins, **extra) + footer
    )


def connections_table(connections: dict) -> str:
    """The ``connections`` scenario's table (``run_connections.markdown``)."""
    return _table(
        connections,
        run_connections.markdown,
        "\n\nLoopback, the Rust echo server (tokio) standing in for the document's C++ epoll server; "
        "the client opens the connections and measures (every round trip, from sending a message to "
        "having its whole echo); user % = user / (user + system) CPU time of the client over the "
        "window (getrusage). Method and deviations: `benchmarks/README.md`.",
    )


def is_cassandra_run(scen: dict) -> bool:
    """Whether a CQL connections run went through a real node (``--server cassandra``: its
    meta's ``server.kind``)."""
    return (scen.get("meta", {}).get("server") or {}).get("kind") == "cassandra"


def cql_connections_table(cql: dict) -> str:
    """The CQL table (``run_cql_connections.markdown``), through the responder or, if the run's
    meta says so, through a real Cassandra node."""
    if is_cassandra_run(cql):
        return _table(
            cql,
            run_cql_connections.markdown,
            "\n\nLoopback, a real Cassandra node (its JVM pinned to the server CPU, every thread); "
            "latency from submitting a request to having its row; CPU µs/req = client user + system CPU "
            "(getrusage, all its threads) per request. Method and deviations: `benchmarks/README.md`.",
        )
    return _table(
        cql,
        run_cql_connections.markdown,
        "\n\nLoopback, the Rust CQL responder (tokio, `benchmarks/pingpong`) standing in for Cassandra; "
        "latency from submitting a request to having its row; CPU µs/req = client user + system CPU "
        "(getrusage, all its threads) per request. Method and deviations: `benchmarks/README.md`.",
    )


CONNECTION_COLORS = {
    "asyncio": "#1f77b4",
    "uvloop": "#2ca02c",
    "selectors": "#ff7f0e",
    "threads": "#9467bd",
    "gevent": "#8c564b",
    "tokio": "#d62728",
}
CONNECTION_LINES = {"streams": "-", "protocol": "--", "sock": ":"}


def plot_connections(scen: dict, path: Path) -> bool:
    """Two panels against the connection count (log x): mean msgs/s (bars: the runs' min-max)
    and the median p95 round trip (ms, log y); one line per (client, model)."""
    agg = [a for a in aggregate(scen.get("connections", {}).get("results", [])) if "msgs_per_s" in a]
    rows = run_connections.ROWS + tuple(sorted({(a["client"], a["model"]) for a in agg} - set(run_connections.ROWS)))

    def style(client: str, model: str) -> dict:
        family, _, flavour = model.partition("-")
        return {
            "color": CONNECTION_COLORS.get(family, "#7f7f7f"),
            "linestyle": CONNECTION_LINES.get(flavour, "-"),
            "marker": "s" if client == "rust" else "o",
            "label": f"{model} (Rust, the limit)" if client == "rust" else model,
        }

    return _plot_by_connections(
        agg,
        rows,
        style,
        path,
        "connections (one 64-byte message outstanding on each)",
        "Python's I/O models vs connection count (seed document 002), client on one core",
    )


CQL_COLORS = {"turbocql": "#d62728", "classic": "#1f77b4", "python-cql": "#2ca02c", "rust": "#000000"}
CQL_LINES = {
    "execute_concurrent": "-",
    "asyncio": "--",
    "futures": ":",
    "default": "-",
    "uvloop-protocol": "-",
    "asyncio-protocol": "--",
    "selectors": ":",
}


def plot_cql_connections(scen: dict, path: Path, key: str = "connections_cql") -> bool:
    """The CQL table's plot: msgs/s and p95 (the mean, N / rate, where a client gives no
    percentiles) against the connection count, one line per (client, model); ``key`` the
    scenario (``connections_cql_cassandra``: the real node's run)."""
    agg = [a for a in aggregate(scen.get(key, {}).get("results", [])) if "msgs_per_s" in a]
    for a in agg:
        if a.get("p95_us") is None and a["msgs_per_s"]:
            a["p95_us"] = a["connections"] / a["msgs_per_s"] * 1e6

    def style(client: str, model: str) -> dict:
        name = run_cql_connections.CLIENT_NAMES.get(client, client)
        return {
            "color": CQL_COLORS.get(client, "#7f7f7f"),
            "linestyle": CQL_LINES.get(model, "-"),
            "marker": "s" if client == "rust" else "o",
            "label": f"{name}: {model}",
        }

    return _plot_by_connections(
        agg,
        run_cql_connections.ROWS,
        style,
        path,
        "connections (one request in flight per connection)",
        "CQL drivers vs connection count ("
        + ("a real Cassandra node" if is_cassandra_run(scen.get(key, {})) else "Rust CQL responder")
        + "), client on one core",
    )


def _plot_by_connections(agg: list[dict], rows, style, path: Path, xlabel: str, title: str) -> bool:
    if not agg:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.8), squeeze=False)
    counts = sorted({a["connections"] for a in agg})
    for client, model in rows:
        pts = sorted((a["connections"], a) for a in agg if a["client"] == client and a["model"] == model)
        if not pts:
            continue
        st = style(client, model)
        xs = [n for n, _ in pts]
        ys = [a["msgs_per_s"] for _, a in pts]
        err = [
            [y - a["msgs_per_s_min"] for y, (_, a) in zip(ys, pts)],
            [a["msgs_per_s_max"] - y for y, (_, a) in zip(ys, pts)],
        ]
        axes[0][0].errorbar(xs, ys, yerr=err, capsize=3, **st)
        lat = [(n, a["p95_us"] / 1000) for n, a in pts if a.get("p95_us")]
        if lat:
            axes[0][1].plot([p[0] for p in lat], [p[1] for p in lat], **st)
    for ax, ylabel, sub in (
        (axes[0][0], "messages/s", "throughput (mean of the runs, bars: min-max)"),
        (axes[0][1], "p95 round trip, ms", "95th-percentile latency (median of the runs)"),
    ):
        if len(counts) > 1:
            ax.set_xscale("log")
        ax.set_xticks(counts, [f"{n:,}" for n in counts])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylim(bottom=0)
    axes[0][1].set_yscale("log")
    plain_log(axes[0][1].yaxis)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
