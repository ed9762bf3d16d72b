"""Writing Spark partitions into a table: each task's Arrow batches, converted where Spark's
Arrow form differs from what the engine writes (durations, times), go through
:func:`turbocql.bulk.load` (replica-grouped UNLOGGED batches); a task with a row that could
not be written fails with :class:`turbocql.bulk.BulkError` naming the first cause and the
counts, which Spark reports to the driver program."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage

from turbocql.spark import _types
from turbocql.spark._options import Options


@dataclass
class Written(WriterCommitMessage):
    """A task's commit message: the rows it wrote."""

    partition: int
    rows: int


def check_columns(info, schema) -> None:
    """The DataFrame's columns are the table's, with its whole partition key."""
    t = info.table
    names = [f.name for f in schema.fields]
    unknown = [c for c in names if c not in t.columns]
    if unknown:
        raise ValueError(
            "%s has no column %s (its columns: %s)" % (t.qualified, ", ".join(unknown), ", ".join(t.columns))
        )
    missing = [c for c in (*t.partition_key, *t.clustering_key) if c not in names]
    if missing:
        raise ValueError("a write to %s needs its primary key column %s" % (t.qualified, ", ".join(missing)))


def write_partition(opts: Options, batches: Iterator[Any]) -> Written:
    """One task's batches into the table (the session is the worker process's own)."""
    import pyarrow as pa

    from turbocql import bulk
    from turbocql.spark._read import describe

    session = opts.connection.session()
    info = describe(session, opts.keyspace, opts.table)
    partition = _partition_id()

    def converted():
        for batch in batches:
            arrays = [_types.from_spark(batch.column(i), info.types[name]) for i, name in enumerate(batch.schema.names)]
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)

    try:
        result = bulk.load(
            session,
            opts.keyspace,
            opts.table,
            converted(),
            concurrency=opts.concurrency,
            consistency_level=opts.consistency,
            max_errors=0,
            progress=False,
            bad_rows=None,
        )
    except bulk.BulkError as e:
        counts = e.result
        first = counts.errors[0] if counts is not None and counts.errors else str(e)
        raise bulk.BulkError(
            "turbocql write of %s.%s, Spark partition %s: %s; first: %s"
            % (opts.keyspace, opts.table, partition, counts if counts is not None else "stopped", first),
            counts,
        ) from None
    return Written(partition, result.loaded)


def _partition_id() -> int:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else -1


class TableWriter(DataSourceArrowWriter):
    """A batch write (``df.write``): each task writes as it goes, so there is nothing to
    commit, and an aborted job leaves the rows its tasks wrote (writes are upserts: running
    the job again writes the same rows)."""

    def __init__(self, opts: Options):
        self.opts = opts

    def write(self, iterator):
        return write_partition(self.opts, iterator)

    def commit(self, messages) -> None:
        pass

    def abort(self, messages) -> None:
        pass


class TableStreamWriter(DataSourceStreamArrowWriter):
    """A streaming sink (``df.writeStream``): each micro-batch's tasks write as a batch
    write's do. ``commit`` and ``abort`` have nothing to do: the rows are written by then,
    and a micro-batch Spark runs again (after a failure) writes the same rows again, which
    upserts leave as they were."""

    def __init__(self, opts: Options):
        self.opts = opts

    def write(self, iterator):
        return write_partition(self.opts, iterator)

    def commit(self, messages, batchId) -> None:
        pass

    def abort(self, messages, batchId) -> None:
        pass
