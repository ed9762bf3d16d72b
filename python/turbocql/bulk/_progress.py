"""Progress of a bulk operation on a terminal (rows, rows/s, bytes, errors, ETA, with
``rich`` when it is installed), and quiet otherwise; the summary at the end."""

from __future__ import annotations

import sys
import time
from typing import Any


def _rich_progress(description: str, total: float | None, unit: str):
    try:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
    except ImportError:
        return None
    columns: list[Any] = [TextColumn("[bold]{task.description}")]
    if total is not None:
        columns += [BarColumn(), TaskProgressColumn() if unit == "bytes" else MofNCompleteColumn()]
    columns += [
        TextColumn("{task.fields[rows]:,} rows"),
        TextColumn("{task.fields[rate]:,.0f} rows/s"),
        TextColumn("{task.fields[size]}"),
        TextColumn("[red]{task.fields[errors]:,} errors"),
        TimeElapsedColumn(),
    ]
    if total is not None:
        columns.append(TimeRemainingColumn())
    return Progress(*columns, transient=False, redirect_stdout=False, redirect_stderr=False)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024  # type: ignore[assignment]
    return str(n)


class Progress:
    """``enabled=None``: shown when stderr is a terminal and rich is installed. ``total``:
    the work in ``unit`` (``"bytes"`` of input, or ``"ranges"`` of the ring), for the ETA."""

    def __init__(self, description: str, total: float | None = None, unit: str = "bytes", enabled: bool | None = None):
        self.start = time.monotonic()
        self.rows = self.errors = self.bytes = 0
        self.done = 0.0
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = _rich_progress(description, total, unit) if enabled else None
        self._task = None
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(description, total=total, rows=0, rate=0.0, size="", errors=0)

    def update(self, rows: int = 0, errors: int = 0, nbytes: int | None = None, done: float = 0.0) -> None:
        """Adds ``rows`` and ``errors``, sets the byte count (read or written so far) and
        adds ``done`` units of the total."""
        self.rows += rows
        self.errors += errors
        self.done += done
        if nbytes is not None:
            self.bytes = nbytes
        if self._bar is not None:
            elapsed = max(time.monotonic() - self.start, 1e-9)
            self._bar.update(
                self._task,
                advance=done,
                rows=self.rows,
                rate=self.rows / elapsed,
                size=_size(self.bytes) if self.bytes else "",
                errors=self.errors,
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
