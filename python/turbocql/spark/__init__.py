"""Cassandra tables as a Spark data source (``format("turbocql")``), read and written by
turbocql's engine in the executors' Python workers, on Spark 4's Python Data Source API
(``pyspark.sql.datasource``; needs ``pip install 'turbocql[spark]'``: pyspark 4, pyarrow)::

    from turbocql import spark as tspark

    tspark.register(spark)
    df = spark.read.format("turbocql").option("keyspace", "ks").option("table", "t").load()
    df.write.format("turbocql").option("keyspace", "ks").option("table", "t2").mode("append").save()

**Reading**: the schema is the table's (below); one input partition per share of the token
ring (``split`` shares, each cut into ``ranges_per_split`` token ranges read in turn, a page
at a time), each read by the engine into Arrow and handed to Spark as Arrow record batches.
A user schema (``.schema("a INT, b STRING")``) of some of the table's columns reads those
only: the API gives no other column pruning (Spark 4.3's Python scan builder takes filters,
never the required columns). Filters Spark pushes (``pushFilters``, which Spark calls only
while ``spark.sql.python.filterPushdown.enabled`` is on: :func:`register` turns it on) go
into the SELECT where the server gives the same answer as Spark: the whole partition key
``=`` values makes one input partition reading that partition (no ring scan); clustering
columns in order (``=``, then one range) in that read; in a ring scan, and for other
columns, only with ``allow_filtering=true`` (the source then adds ALLOW FILTERING, never
otherwise). The rest Spark applies to the rows read. ``pushdown=false`` reads without
``pushFilters`` (for a session where the switch is off). Each input partition records
its SELECT (``TokenShare.cql``).

**Writing**: ``mode("append")`` writes each task's Arrow batches through
:func:`turbocql.bulk.load` (replica-grouped batches); a row that cannot be written fails
its task with :class:`turbocql.bulk.BulkError` naming the first cause and the counts, and
the job with it. ``mode("overwrite")`` is refused unless ``confirm_truncate=true``: then
the table is TRUNCATEd once, on the driver, when Spark asks the source for its writer
(before any task runs); it is not transactional: a job failing after it leaves the table
empty or partly written. Spark 4.3 gives a Python source append and overwrite only
(``errorifexists`` and ``ignore`` are refused by Spark). **Streaming**
(``df.writeStream.format("turbocql")``): each micro-batch's tasks write the same way; commit
and abort do nothing (the rows are written by then; a micro-batch run again upserts the
same rows). Complete output mode (an overwrite per micro-batch) is refused.

Each executor's Python worker opens one ``Cluster`` per set of connection options and
reuses it for every task. Options (all strings, keys in any case): ``keyspace``, ``table``
(required); ``contact_points`` (comma-separated, default 127.0.0.1), ``port`` (9042),
``local_dc``, ``consistency`` (a ``ConsistencyLevel`` name), ``username``/``password``,
``ssl_ca``, ``ssl_cert``/``ssl_key``, ``ssl_check_hostname``; reads: ``split`` (16),
``ranges_per_split`` (4), ``page_size`` (5000), ``allow_filtering`` (false), ``pushdown``
(true); writes: ``confirm_truncate`` (false), ``concurrency`` (256). An unknown option or a
bad value raises ``ValueError`` naming it.

CQL type -> Spark type (lossless for every value; written back from the same type):

* ascii, text, varchar -> string; tinyint, smallint, int, bigint -> byte, short, int, long;
  counter -> long (read only: a counter table cannot be written with INSERT); float,
  double -> float, double; boolean -> boolean; blob -> binary; date -> date;
* timestamp -> timestamp (microseconds; the server's milliseconds fit);
* time -> long, nanoseconds since midnight (Spark's time type stops at microseconds);
* uuid, timeuuid -> string (canonical lowercase text); inet -> string (its text);
* decimal, varint -> string, their CQL text: the only lossless form (Spark's decimal
  stops at 38 digits and one scale per column). Inside a collection, tuple or UDT a
  decimal's text has the widest scale of its page (``1.5`` may read ``1.50``: the same
  number);
* duration -> struct<months: int, days: int, nanoseconds: long> (Spark's intervals cannot
  hold all three);
* list, set, vector -> array; map -> map; tuple -> struct<_1, _2, ...>; user type ->
  struct of its fields, nested types mapped the same way.

Refused (a clear error naming the column): custom types (``'org.apache...'``). Writing
also takes the engine's other forms (e.g. a decimal column from Spark's decimal, a uuid or
duration from its CQL text).

What the API does not offer (Spark 4.3): preferred locations (a Python input partition has
none, so tasks are not placed next to the replicas of their share), column pruning
(above), aggregate, limit or join pushdown, and ``IN`` / ``OR`` filters are pushed only
where Spark splits them into the simple ones above.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSource

from turbocql.spark._options import parse as _parse_options

__all__ = ["TurbocqlDataSource", "register"]

_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


class TurbocqlDataSource(DataSource):
    """The ``turbocql`` data source (see the module for its options and types)."""

    @classmethod
    def name(cls) -> str:
        """``format("turbocql")``."""
        return "turbocql"

    def _info(self, mode: str):
        from turbocql.spark._read import describe

        opts = _parse_options(self.options, mode)
        return opts, describe(opts.connection.session(), opts.keyspace, opts.table)

    def schema(self):
        """The table's columns as a Spark schema (the module's type mapping)."""
        from turbocql.spark._read import spark_schema

        return spark_schema(self._info("read")[1])

    def reader(self, schema):
        """The reader of ``schema``'s columns: one input partition per ring share, or one
        partition's read when the partition key's values are pushed."""
        from turbocql.spark._read import PushdownReader, TableReader

        opts, info = self._info("read")
        return (PushdownReader if opts.pushdown else TableReader)(opts, info, schema)

    def writer(self, schema, overwrite: bool):
        """The batch writer; ``overwrite`` TRUNCATEs the table here, only with
        ``confirm_truncate=true``."""
        from turbocql.spark._write import TableWriter, check_columns

        opts, info = self._info("write")
        check_columns(info, schema)
        if overwrite:
            if not opts.confirm_truncate:
                raise ValueError(
                    "mode('overwrite') would TRUNCATE %s first: set option confirm_truncate=true to allow it"
                    % info.table.qualified
                )
            # Here: once, on the driver, before any task writes.
            opts.connection.session().execute("TRUNCATE %s" % info.table.qualified)
        return TableWriter(opts)

    def streamWriter(self, schema, overwrite: bool):
        """The streaming writer (append output mode only)."""
        from turbocql.spark._write import TableStreamWriter, check_columns

        if overwrite:
            raise ValueError("the turbocql streaming sink does not overwrite (complete output mode): use append")
        # Spark calls this for every micro-batch's commit too: no TRUNCATE or other work here
        # beyond checking the columns.
        opts, info = self._info("write")
        check_columns(info, schema)
        return TableStreamWriter(opts)


def register(spark: Any) -> None:
    """Registers :class:`TurbocqlDataSource` with ``spark`` (a ``SparkSession``) as
    ``format("turbocql")``, and turns on Spark's switch for Python sources' filter pushdown
    (``spark.sql.python.filterPushdown.enabled``; off, Spark refuses to plan a read by a
    source that pushes filters)."""
    spark.dataSource.register(TurbocqlDataSource)
    spark.conf.set(_PUSHDOWN_CONF, "true")
