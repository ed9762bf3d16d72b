"""The soak's outcome (``run_soak.py``): every acknowledged write read back, the figures per
fault window, the RSS slope, the plot of RSS and ops/s, and the Markdown report.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.soak_load import Histogram, Soak


def verify(soak: Soak, runs: list[dict], chunk: int = 5000) -> dict:
    """Every acknowledged write read back at QUORUM: found, lost (no row), unverifiable (the read
    failed three times)."""
    from turbocql.concurrent import execute_concurrent_with_args

    keys = [soak.key(w) for w, a in enumerate(soak.acked) if a]
    for r in runs:
        flags = r.get("batch", {}).get("_acked")
        if flags:
            keys += [f"{soak.run_id}-c{r['minute']}-{j}" for j, a in enumerate(flags) if a]
    found = lost = 0
    lost_keys: list[str] = []
    todo = keys
    for _attempt in range(3):
        retry = []
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            results = execute_concurrent_with_args(
                soak.session, soak.select, [(k,) for k in part], concurrency=100, raise_on_first_error=False
            )
            for k, (success, value) in zip(part, results):
                if not success:
                    retry.append(k)
                elif value.one() is None:
                    lost += 1
                    lost_keys.append(k)
                else:
                    found += 1
        todo = retry
        if not todo:
            break
    return {"acked": len(keys), "found": found, "lost": lost, "lost_keys": lost_keys[:20], "unverifiable": len(todo)}


def window_rows(soak: Soak, faults: list[dict], t_end: float) -> list[dict]:
    rows = []
    spans = {0: ("no fault", None, None)}
    for f in faults:
        spans[f["window"]] = (f"{f['window']}: {f['kind']} {f['node']}", f["at_s"], f.get("window_end_s", t_end))
    for w in sorted(set(soak.outcomes) | set(spans)):
        c = soak.outcomes.get(w, Counter())
        name, start, end = spans.get(w, (str(w), None, None))
        rows.append(
            {
                "window": w,
                "name": name,
                "from_s": start,
                "to_s": end,
                "requests": sum(n for k, n in c.items() if not k.startswith("batch ")),
                "ok": c.get("ok", 0),
                "errors": {k: n for k, n in sorted(c.items()) if k != "ok"},
                "latency_ms": soak.latency.get(w, Histogram()).summary(),
            }
        )
    return rows


def rss_slope_mb_per_h(samples: list[dict]) -> float | None:
    """Least-squares slope of RSS over the second half of the samples, MiB per hour."""
    half = samples[len(samples) // 2 :]
    if len(half) < 3:
        return None
    xs = [s["t_s"] for s in half]
    ys = [s["rss_mb"] for s in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var * 3600, 1) if var else None


def plot(path: Path, samples: list[dict], faults: list[dict], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t_s"] / 60 for s in samples]
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(11, 6.5))
    ax1.plot(t, [s["rss_mb"] for s in samples], color="tab:blue")
    ax1.set_ylabel("RSS (MiB)")
    ax2.plot(t, [s["ops_per_s"] for s in samples], color="tab:green", label="ops/s (succeeded)")
    ax2.plot(t, [s["errors_per_s"] for s in samples], color="tab:red", label="errors/s")
    ax2.set_ylabel("requests/s")
    ax2.set_xlabel("minutes")
    ax2.legend(loc="lower left", fontsize=8)
    colors = {"kill": "tab:red", "freeze": "tab:purple", "stop": "tab:orange"}
    for f in faults:
        start, end = f["at_s"] / 60, f.get("window_end_s", samples[-1]["t_s"] if samples else f["at_s"]) / 60
        for ax in (ax1, ax2):
            ax.axvspan(start, end, color=colors[f["kind"]], alpha=0.15, lw=0)
            if f.get("restored_s") is not None:
                ax.axvline(f["restored_s"] / 60, color=colors[f["kind"]], lw=0.8, ls="--")
        ax1.text(start, 1.0, f" {f['kind']} {f['node']}", transform=ax1.get_xaxis_transform(), fontsize=8, va="top")
    ax1.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
    ax1.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt_errors(errors: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "0"


def markdown(report: dict) -> str:
    s, meta = report["summary"], report["meta"]
    lines = [
        "# Row 14: soak under mixed load with node faults (turbocql)",
        "",
        f"{meta['date']}, `{meta['command']}`",
        "",
        meta["heading"],
        "",
        "| requests | succeeded | failed | lost acknowledged writes | never resolved | late (> timeout + 2 s) "
        "| reads missing an acknowledged row | RSS start / end / peak MiB | RSS slope, 2nd half | "
        "batches | asyncio readers |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {s['requests']:,} | {s['succeeded']:,} | {s['failed']:,} | **{s['lost']}** of {s['acked']:,} "
        f"| **{s['hung']}** | {s['late']} | {s['read_missing']} | {s['rss_start_mb']} / {s['rss_end_mb']} / "
        f"{s['peak_rss_mb']} | {s['rss_slope_mb_per_h']} MiB/h | {s['batches']} | {s['aio_readers']} |",
        "",
        "Per window (requests by the time they were sent; errors of the execute_concurrent batches marked `batch`):",
        "",
        "| window | from s | to s | requests | ok | errors | p50 ms | p99 ms | max ms | driver saw down after s "
        "| driver saw up, s after restore |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    faults = {f["window"]: f for f in report["faults"]}
    for w in report["windows"]:
        f = faults.get(w["window"], {})
        lat = w["latency_ms"]
        lines.append(
            f"| {w['name']} | {'' if w['from_s'] is None else w['from_s']} | {'' if w['to_s'] is None else w['to_s']} "
            f"| {w['requests']:,} | {w['ok']:,} | {fmt_errors(w['errors'])} | {lat['p50']} | {lat['p99']} "
            f"| {lat['max']} | {f.get('driver_saw_down_after_s', '')} | {f.get('driver_saw_up_after_restore_s', '')} |"
        )
    lines += ["", "Faults:", ""]
    for f in report["faults"]:
        lines.append(
            f"* {f['window']}. at {f['at_s']} s: {f['injected']}; node back (answering CQL) at "
            f"{f.get('restored_s')} s; window to {f.get('window_end_s')} s (restore + {meta['grace_s']:g} s)"
        )
    lines += ["", "Each minute's execute_concurrent batch and asyncio reader:", ""]
    lines += ["| minute | at s | window | batch acked / writes | batch errors | batch s | aio reads | aio outcomes |"]
    lines += ["| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in report["minutely"]:
        b, a = r.get("batch", {}), r.get("aio", {})
        window = r["window"] or "no fault"
        lines.append(
            f"| {r['minute']} | {r['at_s']} | {window} | {b.get('acked', '')} / {b.get('writes', '')} "
            f"| {fmt_errors(b.get('failed', {}))} | {b.get('seconds', b.get('state', ''))} | {a.get('reads', '')} "
            f"| {fmt_errors(a.get('outcomes', {})) if 'outcomes' in a else a.get('state', '')} |"
        )
    if report.get("plot"):
        lines += ["", f"![RSS and ops/s]({Path(report['plot']).name})"]
    return "\n".join(lines) + "\n"
