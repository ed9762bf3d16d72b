"""Bulk data in and out of a table, from Python and from the command line (``turbocql load``,
``unload``, ``count``):

* :func:`load`: rows from CSV, JSON lines, Parquet or Arrow IPC files (or Arrow data: a
  pyarrow table, record batches, a polars DataFrame) into a table, written by the engine
  straight from Arrow buffers; bad rows go to a bad-rows file, never silently dropped;
* :func:`unload`: a table (or a share of its token ring, ``split="I/N"``) to CSV, JSON
  lines, Parquet or Arrow IPC, token ranges read in parallel;
* :func:`count`: a table's rows counted by token range in parallel.

CSV and JSON hold each value in its CQL text form (what cqlsh writes), so that ``unload``
then ``load`` gives back the same rows for every CQL type. Needs pyarrow (``pip install
'turbocql[bulk]'``, which also brings rich for progress bars). The names are imported on
first use, so that ``turbocql.bulk.cli`` loads without the engine."""

from typing import Any

__all__ = ["BulkError", "LoadResult", "UnloadResult", "count", "load", "parse_split", "token_ranges", "unload"]

_WHERE = {
    "BulkError": "_load",
    "LoadResult": "_load",
    "load": "_load",
    "UnloadResult": "_unload",
    "count": "_unload",
    "unload": "_unload",
    "parse_split": "_ring",
    "token_ranges": "_ring",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError("module 'turbocql.bulk' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module("turbocql.bulk." + _WHERE[name]), name)
    globals()[name] = value
    return value
