"""``unload`` and ``count``: a table read (or its rows counted) token range by token range, in
parallel.

The ring (or the ``split`` share of it) is cut into ranges; ``concurrency`` threads each
read whole ranges, a page at a time, with the GIL released while they wait; each page
comes decoded by the engine as one Arrow record batch (CQL text columns for CSV and JSON
lines, typed columns for Parquet and Arrow IPC, with decimal and varint as their text, the
only lossless Arrow form of a per-value scale and unbounded digits) and is written to the
output as it arrives. Every row of the table is read exactly once: by the range holding
its partition's token."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from turbocql.bulk import _formats, _ring, _table
from turbocql.bulk._progress import Progress

# Columns written as JSON numbers or booleans by `unload --format json`.
_JSON_RAW_TYPES = {"int", "bigint", "smallint", "tinyint", "varint", "counter", "float", "double", "boolean"}


@dataclass
class UnloadResult:
    rows: int = 0
    ranges: int = 0
    bytes: int = 0
    seconds: float = 0.0
    output: str = ""

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["rows_per_second"] = round(self.rows_per_second, 1)
        return d

    def __str__(self) -> str:
        return "unloaded %d rows from %d token ranges in %.2f s (%.0f rows/s) to %s" % (
            self.rows,
            self.ranges,
            self.seconds,
            self.rows_per_second,
            self.output,
        )


def _profile(session, row_factory, consistency_level):
    """The session's default execution profile (in legacy mode too) with the row factory
    the format needs."""
    kwargs: dict[str, Any] = {"row_factory": row_factory}
    if consistency_level is not None:
        kwargs["consistency_level"] = consistency_level
    return session._derived_profile(**kwargs)


def _ranges(parts: int | None, split: str | tuple[int, int] | None, concurrency: int):
    share = split if isinstance(split, tuple) else _ring.parse_split(split)
    return _ring.token_ranges(parts or max(64, 8 * concurrency), share)


def unload(
    session,
    keyspace: str,
    table: str,
    output: str = "-",
    *,
    format: str | None = None,
    columns: list[str] | None = None,
    where: str | None = None,
    query: str | None = None,
    split: str | tuple[int, int] | None = None,
    ranges: int | None = None,
    concurrency: int = 4,
    page_size: int = 5000,
    consistency_level: int | None = None,
    header: bool = True,
    delimiter: str = ",",
    progress: bool | None = None,
) -> UnloadResult:
    """Writes the rows of ``keyspace.table`` to ``output`` (a file, or ``"-"``: stdout) in
    ``format`` (``csv``, ``json`` lines, ``parquet``, ``arrow`` IPC; by default from the
    file name, else CSV).

    ``columns``: which (default all, in the table's order); ``where``: more conditions of
    the SELECT (``"v > 3 ALLOW FILTERING"``); ``split``: ``"I/N"``, share I of N of the token
    ring (so that N processes unload one table together); ``ranges``: how many token ranges
    to cut it (or the share) into; ``concurrency``: ranges read at once. ``query``: a
    SELECT of your own instead, read as one paged query (no ring split)."""
    from turbocql.query import SimpleStatement, arrow_factory, cql_text_factory

    t0 = time.monotonic()
    fmt = _formats.format_of(output, format)
    meta = _table.lookup(session, keyspace, table)
    cols = _table.columns_of(meta, columns)
    text = fmt in ("csv", "json")
    profile = _profile(session, cql_text_factory if text else arrow_factory, consistency_level)
    if query is not None:
        work: list[Any] = [None]
        select = SimpleStatement(query, fetch_size=page_size)
    else:
        work = _ranges(ranges, split, concurrency)
        cql = _table.range_select_cql(meta, cols, where, numbers_as_text=not text)
        select = session.prepare(cql)
        select.fetch_size = page_size
    json_raw = frozenset(c for c in cols if _base_type(meta.columns[c]) in _JSON_RAW_TYPES)
    writer = _formats.Writer(output, fmt, header=header, delimiter=delimiter, json_raw=json_raw)
    result = UnloadResult(ranges=len(work), output=output)
    bar = Progress("unload %s.%s" % (keyspace, table), float(len(work)), "ranges", progress)
    pages: queue.Queue = queue.Queue(maxsize=4 * concurrency)
    todo: queue.Queue = queue.Queue()
    for w in work:
        todo.put(w)
    stop = threading.Event()

    def read_ranges():
        while not stop.is_set():
            try:
                rng = todo.get_nowait()
            except queue.Empty:
                return
            try:
                rs = session.execute(select, rng, execution_profile=profile)
                while True:
                    for batch in rs.current_rows:
                        pages.put(("page", batch))
                    if not rs.has_more_pages or stop.is_set():
                        break
                    rs.fetch_next_page()
                pages.put(("done", None))
            except BaseException as e:  # handed to the writing thread, which raises it
                pages.put(("error", e))
                return

    threads = [threading.Thread(target=read_ranges, daemon=True) for _ in range(min(concurrency, len(work)))]
    for th in threads:
        th.start()
    finished = 0
    try:
        while finished < len(work):
            kind, item = pages.get()
            if kind == "error":
                raise item
            if kind == "done":
                finished += 1
                bar.update(done=1)
                continue
            if item.num_rows:
                if fmt == "parquet":
                    item = _parquet_ready(item)
                writer.write(item)
                result.rows += item.num_rows
                bar.update(rows=item.num_rows, nbytes=writer.bytes)
    finally:
        stop.set()
        while any(th.is_alive() for th in threads):
            try:
                pages.get(timeout=0.05)
            except queue.Empty:
                pass
        writer.close()
        bar.close()
        result.bytes = writer.bytes
        result.seconds = time.monotonic() - t0
    return result


def count(
    session,
    keyspace: str,
    table: str,
    *,
    where: str | None = None,
    split: str | tuple[int, int] | None = None,
    ranges: int | None = None,
    concurrency: int = 16,
    consistency_level: int | None = None,
) -> int:
    """The rows of ``keyspace.table`` (or of the ``split`` share of its token ring), counted
    by token range in parallel: ``SELECT count(*)`` of each range, summed."""
    from turbocql.concurrent import execute_concurrent_with_args
    from turbocql.query import tuple_factory

    meta = _table.lookup(session, keyspace, table)
    select = session.prepare(_table.range_select_cql(meta, [], where, count=True))
    if consistency_level is not None:
        select.consistency_level = consistency_level
    work = _ranges(ranges, split, concurrency)
    profile = _profile(session, tuple_factory, None)
    total = 0
    for r in execute_concurrent_with_args(session, select, work, concurrency=concurrency, execution_profile=profile):
        total += r.result_or_exc.one()[0]
    return total


def _parquet_ready(batch):
    """Parquet has no month-day-nano interval: duration columns as their CQL text, written
    by the engine's own formatter."""
    import pyarrow as pa

    from turbocql import _engine
    from turbocql.util import Duration

    def text(v):
        return _engine.decode_text("duration", _engine.encode("duration", Duration(v.months, v.days, v.nanoseconds)))

    for i, f in enumerate(batch.schema):
        if f.type == pa.month_day_nano_interval():
            values = [None if v is None else text(v) for v in batch.column(i).to_pylist()]
            batch = batch.set_column(i, f.name, pa.array(values, pa.string()))
    return batch


def _base_type(cql_type: str) -> str:
    return cql_type.strip().lower()
