"""``cluster.metrics`` (``Cluster(metrics_enabled=True)``): the classic driver's request
timer, error counters and host gauges, counted by the engine on every path
(src/exec/metrics.rs), and an optional Prometheus collector.

As the classic ``cassandra.metrics.Metrics``:

- ``request_timer``: a dict-like view of the request latencies, in seconds: ``count``,
  ``min``, ``max``, ``mean``, ``stddev``, ``median``, ``75percentile``, ``95percentile``,
  ``98percentile``, ``99percentile``, ``999percentile``. One entry per request (per page of
  a paged read), its final result or error, a client timeout included.
- ``connection_errors``, ``write_timeouts``, ``read_timeouts``, ``unavailables``,
  ``other_errors`` (overloaded, bootstrapping, truncate and server errors): failed attempts
  by the error the node sent; ``retries`` and ``ignores``: the retry policy's decisions.
- ``known_hosts``, ``connected_to``, ``open_connections``: gauges read when asked.
- ``stats`` (the same values as attributes), ``stats_name``, ``get_stats()`` and
  ``set_stats_name(name)``.

Differences: the counters are live values (the classic ``Metrics`` attributes other than
``request_timer`` are read once, at construction; ``stats.<name>`` is live in both); the
percentiles come from a histogram of every request since the cluster started (16 buckets
per power of two, within about 6%), where the classic timer samples the recent ones; the
classic driver's ``scales`` registry is not used (``get_stats`` returns a plain dict).
"""

import itertools
import threading
from collections.abc import Mapping

from turbocql import _engine

COUNTERS = (
    "connection_errors",
    "write_timeouts",
    "read_timeouts",
    "unavailables",
    "other_errors",
    "retries",
    "ignores",
)
GAUGES = ("known_hosts", "connected_to", "open_connections")
TIMER_KEYS = (
    "count",
    "min",
    "max",
    "mean",
    "stddev",
    "median",
    "75percentile",
    "95percentile",
    "98percentile",
    "99percentile",
    "999percentile",
)

_names_lock = threading.Lock()
_names: dict[str, "Metrics"] = {}  # stats name -> Metrics, as the classic scales registry holds them
_counter = itertools.count()


class RequestTimer(Mapping):
    """The request latencies (see the module doc), read from the engine at each access."""

    def __init__(self, engine):
        self._engine = engine

    def __getitem__(self, key):
        return self._engine.request_timer()[key]

    def __iter__(self):
        return iter(TIMER_KEYS)

    def __len__(self):
        return len(TIMER_KEYS)

    def __repr__(self):
        return repr(dict(self._engine.request_timer()))


class _Stats:
    """``metrics.stats``: every metric as an attribute, read when asked."""

    def __init__(self, metrics):
        self._metrics = metrics

    @property
    def request_timer(self):
        return self._metrics.request_timer

    def __getattr__(self, name):
        if name in COUNTERS or name in GAUGES:
            return getattr(self._metrics, name)
        raise AttributeError(name)


class Metrics:
    """A cluster's metrics (see the module doc). Made by ``Cluster(metrics_enabled=True)``;
    ``cluster_proxy`` is the cluster (weakly held by the cluster's own code)."""

    def __init__(self, cluster_proxy):
        self._cluster = cluster_proxy
        self._engine = _engine.RequestMetrics()
        self.request_timer = RequestTimer(self._engine)
        self.stats = _Stats(self)
        with _names_lock:
            self.stats_name = "cassandra-%d" % next(_counter)
            _names[self.stats_name] = self

    def __getattr__(self, name):
        if name in COUNTERS:
            return self._engine.counts()[name]
        if name in GAUGES:
            return self._gauges()[name]
        raise AttributeError(name)

    def _gauges(self):
        """Hosts known, hosts with an open pool, and connections open: each session's pools
        to the nodes it holds connections to (the classic gauges count the same)."""
        cluster = self._cluster
        known = len(cluster.metadata.all_hosts()) if cluster.metadata is not None else 0
        connected = set()
        connections = 0
        for session in list(getattr(cluster, "sessions", ())):
            if session.is_shutdown:
                continue
            for host in session._session.nodes():
                if host.is_up:
                    connected.add(host.host_id)
                    connections += cluster._connections_per_node(host)
        return {"known_hosts": known, "connected_to": len(connected), "open_connections": connections}

    def get_stats(self):
        """Every metric now, as a dict (``request_timer`` a dict of its keys)."""
        stats = dict(self._engine.counts())
        stats.update(self._gauges())
        stats["request_timer"] = dict(self._engine.request_timer())
        return stats

    def set_stats_name(self, stats_name):
        """Renames the metrics (classic: their key in the scales registry); a name another
        cluster's metrics hold raises ``ValueError``."""
        with _names_lock:
            if stats_name == self.stats_name:
                return
            if stats_name in _names:
                raise ValueError(f'"{stats_name}" already exists in stats.')
            del _names[self.stats_name]
            _names[stats_name] = self
            self.stats_name = stats_name


class PrometheusCollector:
    """A ``prometheus_client`` collector of one cluster's metrics (needs
    ``prometheus_client``, the ``turbocql[prometheus]`` extra)::

        from prometheus_client import REGISTRY
        REGISTRY.register(PrometheusCollector(cluster))

    Exposes ``cassandra_client_requests`` (a summary of the request latencies in seconds:
    count and sum), ``cassandra_client_request_latency_seconds`` (a gauge per percentile,
    labelled ``quantile``: 0.5, 0.75, 0.95, 0.98, 0.99, 0.999), one
    ``cassandra_client_<counter>`` counter per classic counter (``..._total`` when scraped)
    and one gauge per host gauge, each labelled ``cluster`` with ``metrics.stats_name``.
    """

    QUANTILES = (
        ("0.5", "median"),
        ("0.75", "75percentile"),
        ("0.95", "95percentile"),
        ("0.98", "98percentile"),
        ("0.99", "99percentile"),
        ("0.999", "999percentile"),
    )

    def __init__(self, cluster, prefix="cassandra_client"):
        if cluster.metrics is None:
            raise ValueError("the cluster has no metrics: make it with Cluster(metrics_enabled=True)")
        self._metrics = cluster.metrics
        self._prefix = prefix

    def describe(self):
        return list(self.collect())

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

        metrics = self._metrics
        label = [metrics.stats_name]
        stats = metrics.get_stats()
        timer = stats["request_timer"]
        summary = SummaryMetricFamily(
            self._prefix + "_requests", "Request latency, in seconds (classic request_timer)", labels=["cluster"]
        )
        summary.add_metric(label, count_value=timer["count"], sum_value=timer["mean"] * timer["count"])
        yield summary
        quantiles = GaugeMetricFamily(
            self._prefix + "_request_latency_seconds",
            "Request latency percentiles, in seconds",
            labels=["cluster", "quantile"],
        )
        for q, key in self.QUANTILES:
            quantiles.add_metric(label + [q], timer[key])
        yield quantiles
        for name in COUNTERS:
            counter = CounterMetricFamily(
                self._prefix + "_" + name, "Classic metrics counter %s" % name, labels=["cluster"]
            )
            counter.add_metric(label, stats[name])
            yield counter
        for name in GAUGES:
            gauge = GaugeMetricFamily(self._prefix + "_" + name, "Classic metrics gauge %s" % name, labels=["cluster"])
            gauge.add_metric(label, stats[name])
            yield gauge
