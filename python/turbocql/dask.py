"""Cassandra tables as Dask DataFrames, read and written by turbocql's engine on the workers,
as the Spark Cassandra Connector does for Spark (needs ``dask[dataframe]``; optional).

* :func:`read_table`: one partition per share of the token ring (``split`` shares); each
  worker reads its share's token ranges with the engine into Arrow and hands pandas frames
  with Arrow-backed dtypes (nullable, the same in every partition) to Dask. A partition is a
  pure function of its share: a task that re-runs (a worker lost mid-read) reads the same
  rows again, so no row is read twice into the result, and none is missed.
* :func:`to_table`: each partition written through :func:`turbocql.bulk.load` (from Arrow,
  in the engine); a partition with a row that could not be written fails its task (Dask
  retries it; writes are idempotent upserts) and the computation raises.

Each worker process opens one ``Cluster`` per set of connection arguments and reuses it for
every task (shut down when the process exits). What it does not do: push anything to the
server beyond the ``columns`` and ``where`` of the SELECT (no aggregation or join pushdown),
or order rows; partitions follow the token ring, not the partition key's order.
"""

from __future__ import annotations

from turbocql.bulk._workers import Connection
from turbocql.bulk._workers import connection as _connection


def _select(session, keyspace: str, table: str, columns, where):
    """The prepared range SELECT and the column names (decimal and varint read as their
    text: the one Arrow type that holds every value of them the same in every partition)."""
    from turbocql.bulk import _table

    meta = _table.lookup(session, keyspace, table)
    cols = _table.columns_of(meta, columns)
    cql = _table.range_select_cql(meta, cols, where, numbers_as_text=True)
    return session.prepare(cql), cols


def _arrow_profile(session, consistency_level):
    from turbocql.bulk._unload import _profile
    from turbocql.query import arrow_factory

    return _profile(session, arrow_factory, consistency_level)


def _read(session, select, profile, ranges, page_size: int, schema=None):
    import pyarrow as pa

    select.fetch_size = page_size
    tables = [session.execute(select, rng, execution_profile=profile).to_arrow() for rng in ranges]
    table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    if schema is None:
        return table
    # Dask projects a frame's columns into its partitions' reads (ddf["a"] calls
    # _read_share with columns=["a"]) but hands over the whole table's schema.
    if table.schema.names != schema.names:
        schema = pa.schema([schema.field(name) for name in table.schema.names])
    return table.cast(schema)


def _read_share(
    share, conn: Connection, keyspace, table, columns, where, ranges_per_share, page_size, schema, consistency_level
):
    """One partition: share ``share`` = (i, n) of the ring, as a pandas DataFrame."""
    import pandas as pd

    from turbocql.bulk._ring import token_ranges

    session = conn.session()
    select, _ = _select(session, keyspace, table, columns, where)
    profile = _arrow_profile(session, consistency_level)
    t = _read(session, select, profile, token_ranges(ranges_per_share, share), page_size, schema)
    return t.to_pandas(types_mapper=pd.ArrowDtype)


def read_table(
    contact_points,
    keyspace: str,
    table: str,
    columns: list[str] | None = None,
    where: str | None = None,
    split: int = 16,
    *,
    port: int = 9042,
    username: str | None = None,
    password: str | None = None,
    local_dc: str | None = None,
    ranges_per_split: int = 4,
    page_size: int = 5000,
    consistency_level: int | None = None,
    cluster_kwargs: dict | None = None,
):
    """``keyspace.table`` as a ``dask.dataframe.DataFrame`` of ``split`` partitions, one a
    share of the token ring (each cut into ``ranges_per_split`` token ranges, read in turn).
    ``columns`` (default all) and ``where`` (more conditions of the SELECT, with ALLOW
    FILTERING where the server needs it) are the only pushdown. ``consistency_level`` (a
    :class:`turbocql.ConsistencyLevel`; default the session's, ``LOCAL_ONE``) is every
    read's: a read at ``ONE`` may miss rows written at ``ONE`` that have not reached the
    replica it asks yet."""
    import dask.dataframe as dd
    import pandas as pd

    conn = _connection(contact_points, port, username, password, local_dc, cluster_kwargs)
    session = conn.session()
    select, cols = _select(session, keyspace, table, columns, where)
    # An empty token range gives the columns' Arrow types without reading a row.
    schema = _read(session, select, _arrow_profile(session, consistency_level), [(0, 0)], page_size).schema
    meta = schema.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    shares = [(i, split) for i in range(1, split + 1)]
    return dd.from_map(
        _read_share,
        shares,
        conn=conn,
        keyspace=keyspace,
        table=table,
        columns=cols,
        where=where,
        ranges_per_share=ranges_per_split,
        page_size=page_size,
        schema=schema,
        consistency_level=consistency_level,
        meta=meta,
        label="turbocql-read-%s.%s" % (keyspace, table),
        enforce_metadata=False,
    )


def _write_partition(df, conn: Connection, keyspace, table, concurrency, consistency_level):
    import pandas as pd
    import pyarrow as pa

    from turbocql import bulk

    data = pa.Table.from_pandas(df, preserve_index=False)
    result = bulk.load(
        conn.session(),
        keyspace,
        table,
        data,
        concurrency=concurrency,
        max_errors=0,
        progress=False,
        bad_rows=None,
        consistency_level=consistency_level,
    )
    if result.rejected or result.failed:
        raise bulk.BulkError("partition write: %s (first: %s)" % (result, result.errors[:1]), result)
    return pd.Series([result.loaded])


def to_table(
    ddf,
    contact_points,
    keyspace: str,
    table: str,
    *,
    port: int = 9042,
    username: str | None = None,
    password: str | None = None,
    local_dc: str | None = None,
    concurrency: int = 256,
    consistency_level: int | None = None,
    cluster_kwargs: dict | None = None,
    compute: bool = True,
):
    """Writes every partition of ``ddf`` (its columns named as the table's) into
    ``keyspace.table``; returns the rows written (or, with ``compute=False``, the lazy
    Dask series of each partition's count). A partition with a row that cannot be written
    raises :class:`turbocql.bulk.BulkError`, naming the cause. ``consistency_level`` is
    every write's (default the session's, ``LOCAL_ONE``)."""
    conn = _connection(contact_points, port, username, password, local_dc, cluster_kwargs)
    counts = ddf.map_partitions(
        _write_partition,
        conn,
        keyspace,
        table,
        concurrency,
        consistency_level,
        meta=(None, "int64"),
        enforce_metadata=False,
    )
    return int(counts.sum().compute()) if compute else counts
