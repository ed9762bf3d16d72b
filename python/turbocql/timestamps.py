"""Client-side timestamps, under the classic driver's names (``cassandra.timestamps``).

:class:`MonotonicTimestampGenerator` gives microseconds since the epoch, strictly
increasing across calls (from any thread): when the clock stands still or goes back, the
next value is the last one plus one, and a warning is logged if the clock is behind by
``warning_threshold`` seconds or more (at most once per ``warning_interval`` seconds).
"""

import threading
import time

from turbocql import _loggers

log = _loggers.timestamps


class MonotonicTimestampGenerator:
    """A callable returning monotonic client timestamps in microseconds
    (``Cluster(timestamp_generator=...)``)."""

    warn_on_drift = True
    """Whether to log a warning when the clock is behind the last timestamp."""

    warning_threshold = 1
    """How far behind (seconds) the clock must be for a warning."""

    warning_interval = 1
    """The least time (seconds) between two warnings."""

    def __init__(self, warn_on_drift=True, warning_threshold=1, warning_interval=1):
        self.lock = threading.Lock()
        with self.lock:
            self.last = 0
            self._last_warn = 0
        self.warn_on_drift = warn_on_drift
        self.warning_threshold = warning_threshold
        self.warning_interval = warning_interval

    def _next_timestamp(self, now, last):
        """The timestamp after ``last`` given the clock's ``now`` (both in
        microseconds); it becomes :attr:`last`."""
        if now > last:
            self.last = now
        else:
            self._maybe_warn(now=now)
            self.last = last + 1
        return self.last

    def __call__(self):
        """The next timestamp, in microseconds since the epoch."""
        with self.lock:
            return self._next_timestamp(now=int(time.time() * 1e6), last=self.last)

    def _maybe_warn(self, now):
        behind = self.last - now
        since_last_warning = now - self._last_warn
        if not self.warn_on_drift:
            return
        if behind >= self.warning_threshold * 1e6 and since_last_warning >= self.warning_interval * 1e6:
            # One preformatted argument, as the classic driver logs it (its tests read it).
            log.warning(
                "Clock skew detected: current tick (%d) was %d microseconds behind the last generated timestamp "
                "(%d), returned timestamps will be artificially incremented to guarantee monotonicity."
                % (now, behind, self.last)
            )
            self._last_warn = now
