"""The slow-network run's results (``run_network.py``): repeated runs collapsed to the one
with the median p99, the Markdown report, and the reliability matrix's records (row 13).
"""

from __future__ import annotations

from collections import Counter

from benchmarks.network_faults import scenario_text


def unproxied(result: dict, proxy_port: int) -> list[str]:
    """The remote addresses of a client's connections that are not to a proxy."""
    return [a for a in result.get("connections", {}) if not a.endswith(f":{proxy_port}")]


def median_runs(runs: list[dict]) -> list[dict]:
    """Repeated runs (``--repeat``) collapsed per (scenario, driver), in first-seen order: the
    run with the median p99 (the lower middle one for an even count), carrying ``runs`` (each
    run's round, ops/s, latency, CPU, errors) and ``all_runs`` (requests, successes, errors by
    class and unresolved requests summed over every run); a pair whose runs all failed keeps its
    first failure. One run per pair: unchanged."""
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["scenario"], r["driver"]), []).append(r)
    out = []
    for group in groups.values():
        ok = sorted((r for r in group if "run_failed" not in r), key=lambda r: r["latency_ms"]["p99"] or 0.0)
        if not ok:
            out.append(group[0])
            continue
        chosen = dict(ok[(len(ok) - 1) // 2])
        if len(group) > 1:
            failed: Counter = Counter()
            for r in ok:
                failed.update(r["failed"])
            chosen["runs"] = [
                {k: r.get(k) for k in ("round", "ops_per_s", "latency_ms", "cpu_us_per_request", "failed", "hung")}
                for r in group
            ]
            chosen["all_runs"] = {
                "runs": len(group),
                "failed_runs": len(group) - len(ok),
                "requests": sum(r["requests"] for r in ok),
                "succeeded": sum(r["succeeded"] for r in ok),
                "failed": dict(failed),
                "hung": sum(r["hung"] for r in ok),
            }
        out.append(chosen)
    return out


def fmt(x, digits: int = 1) -> str:
    return "" if x is None else f"{x:,.{digits}f}"


def markdown(results: list[dict], meta: dict, args) -> str:
    lines = [
        "# Row 13: a slow network (toxiproxy), turbocql and the classic driver",
        "",
        f"{meta['date']}, `{meta['command']}`",
        "",
        meta["heading"],
        "",
        "| scenario | driver | requests | ops/s | p50 ms | p95 ms | p99 ms | max ms | errors | never resolved "
        "| client CPU µs/req | late sends max ms | peak RSS MiB | p99 ms of each run |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        name = r["driver"] + (f" {r['version']}" if r.get("version") else "")
        if "run_failed" in r:
            lines.append(f"| {r['scenario']} | {name} | failed: {r['run_failed'].replace('|', '/')} |" + " |" * 11)
            continue
        lat = r["latency_ms"]
        every = r.get("all_runs", r)  # errors and unresolved requests: every run's
        errors = ", ".join(f"{k} {v}" for k, v in sorted(every["failed"].items())) or "0"
        p99s = (
            ", ".join(fmt(x["latency_ms"]["p99"], 1) for x in r["runs"] if x.get("latency_ms")) if "runs" in r else ""
        )
        lines.append(
            f"| {r['scenario']} | {name} | {r['requests']:,} | {fmt(r['ops_per_s'])} | {fmt(lat['p50'], 2)} "
            f"| {fmt(lat['p95'], 2)} | {fmt(lat['p99'], 2)} | {fmt(lat['max'], 1)} | {errors} | {every['hung']} "
            f"| {fmt(r['cpu_us_per_request'])} | {fmt(r['issue_lag_max_ms'], 1)} | {fmt(r['peak_rss_mb'])} | {p99s} |"
        )
    lines += ["", "Scenarios:", ""]
    for name in meta["scenarios"]:
        lines.append(f"* `{name}`: {scenario_text(name, args)}.")
    stall_runs = [r for r in results if r.get("stalls")]
    if stall_runs:
        lines += ["", "Stalls injected during each `stalls` run:", ""]
        for r in stall_runs:
            s = r["stalls"]
            lines.append(
                f"* {r['driver']}: {s['stalls']} stalls, mean {fmt(s['stall_ms_mean'])} ms, "
                f"{fmt(s['stalled_ms_total'] / 1000, 2)} s in all over {args.duration:g} s of load "
                f"(by direction {s['by_direction']}, by node {s['by_node']})"
                + (f"; injector errors: {s['errors']}" if s["errors"] else "")
            )
    lines += ["", "Connections of each client after its warm-up (remote address: count):", ""]
    for r in results:
        if "connections" in r:
            bad = unproxied(r, args.proxy_port)
            flag = f" **NOT THROUGH A PROXY: {bad}**" if bad else ""
            lines.append(f"* {r['scenario']}, {r['driver']}: {r['connections']}{flag}")
    lines += [
        "",
        "Latency is from each request's scheduled send time to its callback, over the requests that "
        "succeeded; ops/s are successes over the time from the first scheduled send to the last callback. "
        "Client CPU is user + system time of the client process (all its threads) from the start of the "
        "load until every request resolved, divided by the requests issued. Late sends: how far behind "
        "its schedule the load's thread sent a request (the client itself falling behind).",
    ]
    return "\n".join(lines) + "\n"


def reliability_records(results: list[dict], args) -> None:
    from benchmarks.harness import reliability

    for r in results:
        figures: dict = {"injected": scenario_text(r["scenario"], args), "driver": r["driver"]}
        if "run_failed" in r:
            figures["notes"] = "the run failed: " + r["run_failed"]
        else:
            lat = r["latency_ms"]
            every = r.get("all_runs", r)  # the correctness figures of every run
            figures.update(
                requests=every["requests"],
                succeeded=every["succeeded"],
                failed=every["failed"],
                hung=every["hung"],
                peak_rss_mb=r["peak_rss_mb"],
                ops_per_s=r["ops_per_s"],
                latency_ms=lat,
                cpu_us_per_request=r["cpu_us_per_request"],
                notes=(
                    f"{r['driver']} {r.get('version', '')}: {args.rate:g} req/s open loop for {args.duration:g} s, "
                    f"LOCAL_QUORUM one-row writes and reads; {r['ops_per_s']} ops/s, p50 {lat['p50']} ms, "
                    f"p99 {lat['p99']} ms, max {lat['max']} ms, {r['cpu_us_per_request']} µs CPU/request"
                    + (
                        f" (the run with the median p99 of {len(r['runs'])}; p99 of each: "
                        f"{[x['latency_ms']['p99'] for x in r['runs'] if x.get('latency_ms')]} ms)"
                        if "runs" in r
                        else ""
                    )
                ),
            )
        reliability.record("13", f"slow network, {r['scenario']}: {r['driver']}", **figures)
