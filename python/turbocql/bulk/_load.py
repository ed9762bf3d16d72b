"""``load``: rows from files (CSV, JSON lines, Parquet, Arrow IPC) or Arrow data into a table.

Each input is read into Arrow record batches (pyarrow's readers, in C++), and each batch is
written by the engine's ``execute_concurrent`` path straight from the Arrow buffers
(``codec::from_arrow``): no Python object per value. A record whose values do not fit
its columns is *rejected*, a write that fails after the retry policy is *failed*; both go
to the bad-rows file (JSON lines: source, record number, line, reason, the record's values)
and count against ``max_errors``. Loaded + rejected + failed = records read."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from turbocql.bulk import _formats, _table
from turbocql.bulk._progress import Progress


class BulkError(Exception):
    """A bulk operation stopped: too many bad rows (``max_errors``), or bad input. Its
    ``result`` holds the counts so far."""

    def __init__(self, message: str, result: Any = None):
        super().__init__(message)
        self.result = result


@dataclass
class LoadResult:
    records: int = 0
    loaded: int = 0
    rejected: int = 0
    failed: int = 0
    seconds: float = 0.0
    bad_rows_file: str | None = None
    dry_run: bool = False
    stopped: str | None = None
    errors: list[str] = field(default_factory=list)  # the first few reasons

    @property
    def rows_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["rows_per_second"] = round(self.rows_per_second, 1)
        return d

    def __str__(self) -> str:
        verb = "checked" if self.dry_run else "loaded"
        text = "%s %d of %d records in %.2f s (%.0f rows/s); %d rejected, %d failed" % (
            verb,
            self.loaded,
            self.records,
            self.seconds,
            self.rows_per_second,
            self.rejected,
            self.failed,
        )
        if self.bad_rows_file and (self.rejected or self.failed):
            text += "; bad rows in %s" % self.bad_rows_file
        if self.stopped:
            text += "; stopped: %s" % self.stopped
        return text


def parse_mapping(mapping: str | dict[str, str] | None) -> dict[str, str] | None:
    """``"csv_col=table_col,..."`` (or a dict) as {input column: table column}."""
    if mapping is None or isinstance(mapping, dict):
        return mapping
    out = {}
    for part in mapping.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError("a column mapping is input_column=table_column, got %r" % part)
        src, dst = (x.strip() for x in part.split("=", 1))
        out[src] = dst
    return out


def _arrow_chunks(data: Any) -> Iterator[_formats.Chunk]:
    """Arrow data given directly: a table, a record batch, anything with
    ``__arrow_c_stream__`` (a polars DataFrame), or an iterable of record batches."""
    pa = _formats.pyarrow()
    if isinstance(data, pa.RecordBatch):
        batches: Iterable[Any] = [data]
    elif isinstance(data, pa.Table):
        batches = data.to_batches()
    elif hasattr(data, "__arrow_c_stream__"):
        batches = pa.RecordBatchReader.from_stream(data)
    else:
        batches = data
    record = 1
    for batch in batches:
        yield _formats.Chunk("<arrow>", record, record, batch)
        record += batch.num_rows


class _BadRows:
    """The bad-rows file, opened at the first bad row."""

    def __init__(self, path: str | None):
        self.path = path
        self._f: Any = None

    def write(self, kind: str, chunk: _formats.Chunk, index: int, reason: str) -> None:
        if self.path is None:
            return
        if self._f is None:
            self._f = open(self.path, "w", encoding="utf-8")
        try:
            row = chunk.batch.slice(index, 1).to_pylist()[0]
        except Exception:  # a record pyarrow cannot turn into Python values: the reason says enough
            row = None
        rec = {
            "source": chunk.source,
            "record": chunk.first_record + index,
            "line": chunk.first_line + index,
            "kind": kind,
            "error": reason,
            "row": row,
        }
        self._f.write(json.dumps(rec, default=str, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._f is not None:
            self._f.close()


def load(
    session,
    keyspace: str,
    table: str,
    source: Any,
    *,
    format: str | None = None,
    header: bool = True,
    delimiter: str = ",",
    quote: str = '"',
    escape: str | None = None,
    null: str = "",
    skip_rows: int = 0,
    mapping: str | dict[str, str] | None = None,
    concurrency: int = 256,
    consistency_level: int | None = None,
    ttl: int | None = None,
    timestamp: int | None = None,
    max_errors: int = 100,
    bad_rows: str | None = None,
    dry_run: bool = False,
    progress: bool | None = None,
    batch_rows: int | None = 32,
    batch_bytes: int = 3584,
    chunk_rows: int = 20_000,
) -> LoadResult:
    """Loads ``source`` into ``keyspace.table`` and returns the counts.

    ``source``: a file, a directory, a glob or ``"-"`` (stdin), in ``format`` (``csv``,
    ``json`` lines, ``parquet``, ``arrow`` IPC; by default from the file name, else CSV); or
    Arrow data (a pyarrow ``Table`` or ``RecordBatch``, an iterable of batches, a polars
    ``DataFrame``). Input columns are table columns by name, or as ``mapping`` says
    (``"input_col=table_col,..."``: the other input columns are ignored); a CSV file
    without a header (``header=False``) has the table's columns in order, or the mapping's.
    ``max_errors``: rejected and failed rows allowed before the load stops with
    :class:`BulkError` (a negative number: no limit). ``dry_run``: every value converted,
    nothing written. ``batch_rows``: rows whose partitions have the same replicas are
    written together, in UNLOGGED batches of up to ``batch_rows`` rows and about
    ``batch_bytes`` bytes as the server counts a batch's size (it logs a warning per batch
    past 5 KiB), one request each, sent to a replica of every row (None or 1: one request
    per row). A batch the server refuses as invalid is sent again a row at a time, so only
    the bad row fails; one that fails for the cluster's state (a timeout) fails each of its
    rows. ``chunk_rows``: rows read from the input at a time."""
    t0 = time.monotonic()
    meta = _table.lookup(session, keyspace, table)
    columns_map = parse_mapping(mapping)
    csv_opts = _formats.CsvOptions(
        header=header, delimiter=delimiter, quote=quote, escape=escape, null=null, skip_rows=skip_rows
    )
    if isinstance(source, str):
        fmt = _formats.format_of(source, format)
        files = _formats.expand(source)
        sizes = [0 if f == "-" else _file_size(f) for f in files]
        names = list(columns_map) if (columns_map and not header) else list(meta.columns)

        def chunks() -> Iterator[_formats.Chunk]:
            for f in files:
                yield from _formats.read_chunks(f, fmt, csv_opts, names, chunk_rows)

        total = float(sum(sizes)) or None
    else:
        chunks, total = (lambda: _arrow_chunks(source)), None  # noqa: E731
    result = LoadResult(bad_rows_file=bad_rows, dry_run=dry_run)
    bad = _BadRows(bad_rows)
    bar = Progress("dry run" if dry_run else "load %s.%s" % (keyspace, table), total, "bytes", progress)
    statements: dict[tuple[str, ...], Any] = {}
    read_bytes = 0
    try:
        for chunk in chunks():
            if chunk.batch.num_rows == 0 and not chunk.unparsable:
                continue  # an empty batch (a Dask partition with no rows): nothing to write
            batch = _select(chunk.batch, columns_map, meta)
            key = tuple(batch.schema.names)
            if key not in statements:
                statements[key] = session.prepare(_table.insert_cql(meta, list(key), ttl, timestamp))
                if consistency_level is not None:
                    statements[key].consistency_level = consistency_level
            n = chunk.batch.num_rows
            skip = dict(chunk.unparsable)
            failures = dict(_write(session, statements[key], batch, concurrency, dry_run, batch_rows, batch_bytes))
            rejected = failed = 0
            for i in sorted(set(failures) | set(skip)):
                if i in skip:
                    rejected += 1
                    _note(result, bad, "rejected", chunk, i, skip[i])
                    continue
                exc = failures[i]
                kind = "rejected" if isinstance(exc, (ValueError, TypeError)) else "failed"
                if kind == "rejected":
                    rejected += 1
                else:
                    failed += 1
                _note(result, bad, kind, chunk, i, "%s: %s" % (type(exc).__name__, exc))
            result.records += n
            result.rejected += rejected
            result.failed += failed
            result.loaded += n - rejected - failed
            if chunk.source not in ("<arrow>", "-"):
                read_bytes = _done_bytes(files, sizes, chunk)
            bar.update(rows=n, errors=rejected + failed, nbytes=read_bytes or None)
            if 0 <= max_errors < result.rejected + result.failed:
                result.stopped = "%d rejected or failed rows exceed max_errors=%d" % (
                    result.rejected + result.failed,
                    max_errors,
                )
                break
    finally:
        bad.close()
        bar.close()
        result.seconds = time.monotonic() - t0
    if result.stopped:
        raise BulkError(
            "load of %s.%s stopped: %s (first: %s)%s"
            % (
                keyspace,
                table,
                result.stopped,
                result.errors[0] if result.errors else "?",
                "; bad rows in %s" % bad_rows if bad_rows else "",
            ),
            result,
        )
    return result


def _file_size(path: str) -> int:
    import os

    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _done_bytes(files, sizes, chunk) -> int:
    """Bytes of input read: the files before the chunk's, and as far as its reader got."""
    done = 0
    for f, s in zip(files, sizes, strict=True):
        if f == chunk.source:
            return done + (chunk.position or 0)
        done += s
    return done


def _note(result: LoadResult, bad: _BadRows, kind: str, chunk, index: int, reason: str) -> None:
    if len(result.errors) < 5:
        result.errors.append("%s record %d: %s" % (chunk.source, chunk.first_record + index, reason))
    bad.write(kind, chunk, index, reason)


def _select(batch, mapping: dict[str, str] | None, meta: _table.Table):
    """The batch's columns that go to the table, named as the table's columns."""
    names = batch.schema.names
    if mapping:
        missing = [c for c in mapping if c not in names]
        if missing:
            raise BulkError("input has no column %s (its columns: %s)" % (", ".join(missing), ", ".join(names)))
        batch = batch.select(list(mapping)).rename_columns(list(mapping.values()))
        names = batch.schema.names
    unknown = [c for c in names if c not in meta.columns and c != ""]
    if unknown:
        raise BulkError(
            "%s has no column %s (its columns: %s); map input columns with mapping='input=column,...'"
            % (meta.qualified, ", ".join(unknown), ", ".join(meta.columns))
        )
    if "" in names:
        batch = batch.drop_columns([""])
    missing_key = [c for c in meta.partition_key if c not in batch.schema.names]
    if missing_key:
        raise BulkError(
            "input has no value for partition key column %s of %s" % (", ".join(missing_key), meta.qualified)
        )
    return batch


def _write(
    session, insert, batch, concurrency: int, dry_run: bool, batch_rows: int | None, batch_bytes: int
) -> list[tuple[int, BaseException]]:
    """Every row of ``batch`` written (or, ``dry_run``, converted): the failures, by index."""
    from turbocql.cluster import EXEC_PROFILE_DEFAULT
    from turbocql.concurrent import _run

    run = _run(
        session,
        insert,
        batch,
        concurrency,
        False,
        True,
        EXEC_PROFILE_DEFAULT,
        check_only=dry_run,
        batch_rows=batch_rows,
        batch_bytes=batch_bytes,
    )
    return run.failures()
