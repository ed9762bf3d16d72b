"""The network faults of the slow-network run (``run_network.py``): the scenarios, the
toxics each adds to every node's toxiproxy proxy, the injector of the ``stalls`` scenario
(:class:`Stalls`) and what each scenario injects, in words.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

SCENARIOS = ("baseline", "latency-20ms", "latency-50ms", "stalls")
LATENCY = {"latency-20ms": (20, 10), "latency-50ms": (50, 40)}  # ms, jitter ms (each direction)
STREAMS = ("upstream", "downstream")
STREAM_NAMES = {"upstream": "requests", "downstream": "responses"}


class Stalls:
    """The ``stalls`` scenario's injector: one stall at a time, an exponential gap between
    them; each holds one direction of one node's proxy for a uniform length (a ``latency``
    toxic of that length, added for that long). Keeps every stall's proxy, direction, planned
    length and measured window."""

    def __init__(self, proxies, gap_ms: float, stall_ms: tuple[int, int], seed: int):
        self.proxies, self.gap_ms, self.stall_ms = proxies, gap_ms, stall_ms
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.done: list[dict] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(self.rng.expovariate(1000.0 / self.gap_ms)):
            proxy = self.rng.choice(self.proxies)
            stream = self.rng.choice(STREAMS)
            length = self.rng.randint(*self.stall_ms)
            a0 = time.monotonic()
            try:
                proxy.add_toxic("latency", stream, 1.0, name="stall", latency=length, jitter=0)
            except Exception as e:  # noqa: BLE001 (reported, and the stalls stop)
                self.errors.append(f"add: {e}")
                return
            a1 = time.monotonic()
            time.sleep(max(0.0, length / 1000 - (a1 - a0)))
            r0 = time.monotonic()
            try:
                proxy.remove_toxic("stall", missing_ok=True)
            except Exception as e:  # noqa: BLE001
                self.errors.append(f"remove: {e}")
                return
            r1 = time.monotonic()
            self.done.append(
                {
                    "node": proxy.upstream.rsplit(":", 1)[0],
                    "direction": STREAM_NAMES[stream],
                    "at_s": round(a0 - t0, 3),
                    "planned_ms": length,
                    # The toxic took effect during the add call and ended during the remove call.
                    "window_ms": [round((r0 - a1) * 1000, 1), round((r1 - a0) * 1000, 1)],
                }
            )

    def finish(self) -> dict:
        self.stop.set()
        self.thread.join(30)
        n = len(self.done)
        span = sum((s["window_ms"][0] + s["window_ms"][1]) / 2 for s in self.done)
        return {
            "stalls": n,
            "stall_ms_mean": round(span / n, 1) if n else None,
            "stalled_ms_total": round(span, 1),
            "by_direction": dict(Counter(s["direction"] for s in self.done)),
            "by_node": dict(Counter(s["node"] for s in self.done)),
            "errors": self.errors,
            "each": self.done,
        }


def scenario_text(name: str, args) -> str:
    """What a scenario injects, in words (the report's and the records' ``injected``)."""
    if name == "baseline":
        return "no toxic: every connection through its node's toxiproxy proxy"
    if name in LATENCY:
        lat, jit = LATENCY[name]
        return (
            f"latency toxic {lat} ms ± {jit} ms (uniform) on both directions of every node's proxy "
            f"(round trip +{2 * lat} ms on average)"
        )
    lo, hi = args.stall_ms
    return (
        f"intermittent stalls as a TCP retransmission timeout after a lost segment causes them: one at a "
        f"time, exponential gaps of mean {args.stall_gap_ms:.0f} ms, each holding ALL data of one direction "
        f"of the proxy of node1 or node2 (dc1, the coordinators) for {lo}-{hi} ms (uniform) and then "
        f"delivering it at once, in order "
        f"(a latency toxic of that length added for that long); no packet is lost (no sch_netem here)"
    )


def apply_toxics(name: str, proxies) -> None:
    if name in LATENCY:
        lat, jit = LATENCY[name]
        for p in proxies:
            for stream in STREAMS:
                p.latency(lat, jitter=jit, stream=stream)
