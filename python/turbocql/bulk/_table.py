"""What the bulk operations need to know of a table (its columns, their CQL types, its
partition key), read from ``cluster.metadata``, and the CQL they run on it."""

from __future__ import annotations

from dataclasses import dataclass

from turbocql.metadata import protect_name


@dataclass(frozen=True)
class Table:
    keyspace: str
    name: str
    columns: dict[str, str]  # column name -> CQL type, in the table's order
    partition_key: tuple[str, ...]
    clustering_key: tuple[str, ...] = ()

    @property
    def qualified(self) -> str:
        return "%s.%s" % (protect_name(self.keyspace), protect_name(self.name))

    def token_of_key(self) -> str:
        return "token(%s)" % ", ".join(protect_name(c) for c in self.partition_key)


def lookup(session, keyspace: str, table: str) -> Table:
    """The table ``keyspace.table`` as the session's cluster knows it; a clear error if it
    does not exist."""
    meta = session.cluster.metadata
    ks = meta.keyspaces.get(keyspace)
    if ks is None or table not in ks.tables:
        # Made since the metadata was read (by another client, say): read it again.
        session.cluster.refresh_schema_metadata()
        ks = meta.keyspaces.get(keyspace)
    if ks is None:
        raise ValueError("keyspace %r does not exist" % keyspace)
    t = ks.tables.get(table)
    if t is None:
        raise ValueError(
            "table %s.%s does not exist (tables: %s)" % (keyspace, table, ", ".join(sorted(ks.tables)) or "none")
        )
    return Table(
        keyspace=keyspace,
        name=table,
        columns={name: col.cql_type for name, col in t.columns.items()},
        partition_key=tuple(c.name for c in t.partition_key),
        clustering_key=tuple(c.name for c in t.clustering_key),
    )


def insert_cql(table: Table, columns: list[str], ttl: int | None = None, timestamp: int | None = None) -> str:
    using = []
    if ttl is not None:
        using.append("TTL %d" % int(ttl))
    if timestamp is not None:
        using.append("TIMESTAMP %d" % int(timestamp))
    return "INSERT INTO %s (%s) VALUES (%s)%s" % (
        table.qualified,
        ", ".join(protect_name(c) for c in columns),
        ", ".join("?" * len(columns)),
        (" USING " + " AND ".join(using)) if using else "",
    )


# Read as their CQL text into Arrow: the one Arrow type that holds every value of them the
# same way in every page (their precision varies row to row).
AS_TEXT_TYPES = frozenset({"decimal", "varint"})


def columns_of(table: Table, columns: list[str] | None) -> list[str]:
    """``columns`` (default: every column, in the table's order), each checked to exist."""
    cols = list(columns or table.columns)
    unknown = [c for c in cols if c not in table.columns]
    if unknown:
        raise ValueError(
            "%s has no column %s (its columns: %s)" % (table.qualified, ", ".join(unknown), ", ".join(table.columns))
        )
    return cols


def select_list(table: Table, columns: list[str], numbers_as_text: bool = False) -> str:
    """The SELECT's column list; ``numbers_as_text``: decimal and varint columns read as
    ``CAST(c AS text)`` under their own names (see AS_TEXT_TYPES)."""

    def column(c: str) -> str:
        if numbers_as_text and table.columns[c].strip().lower() in AS_TEXT_TYPES:
            return "CAST(%s AS text) AS %s" % (protect_name(c), protect_name(c))
        return protect_name(c)

    return ", ".join(column(c) for c in columns)


def range_select_cql(
    table: Table, columns: list[str], where: str | None = None, count: bool = False, numbers_as_text: bool = False
) -> str:
    """The SELECT of one token range ``(?, ?]``; ``where``: more conditions (needs ALLOW
    FILTERING where the server says so: the user writes it). ``numbers_as_text``: as in
    :func:`select_list`."""
    what = "count(*)" if count else select_list(table, columns, numbers_as_text)
    token = table.token_of_key()
    cql = "SELECT %s FROM %s WHERE %s > ? AND %s <= ?" % (what, table.qualified, token, token)
    if where:
        cql += " AND " + where
    return cql


def select_cql(table: Table, columns: list[str], where: str, numbers_as_text: bool = False) -> str:
    """A SELECT of ``columns`` under the conditions ``where`` alone (no token range: a read
    of the partitions ``where`` names)."""
    return "SELECT %s FROM %s WHERE %s" % (select_list(table, columns, numbers_as_text), table.qualified, where)
