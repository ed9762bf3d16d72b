"""The matplotlib set-up every plot of the report shares (``report.py`` and
``report_connections.py``): pyplot on the file-only Agg backend, imported on first use so that
a run without plots needs no matplotlib, and log-scale axes labelled with plain numbers."""

from __future__ import annotations


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain_log(axis) -> None:
    """Plain numbers (50, 100, 200) instead of powers of ten on a log-scale axis."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
