"""Helpers of the tests that move whole tables (Arrow, bulk): a table's rows as the classic
driver reads them (the oracle), and an empty copy of a table's columns."""

from tests.conftest import HOST, PORT


def classic_rows(keyspace, table, as_dict=False):
    """Every row of ``keyspace.table`` read by the classic driver, by key ``k`` (named tuples,
    or dicts with ``as_dict``)."""
    from cassandra.cluster import Cluster as ClassicCluster

    classic = ClassicCluster([HOST], port=PORT)
    try:
        s = classic.connect(keyspace)
        return {r.k: (r._asdict() if as_dict else r) for r in s.execute("SELECT * FROM %s" % table)}
    finally:
        classic.shutdown()


def empty_copy(session, keyspace, table, suffix="copy"):
    """A new empty table ``<table>_<suffix>`` with ``table``'s columns and types (key ``k int``)."""
    cols = session.execute(
        "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, table),
    )
    name = "%s_%s" % (table, suffix)
    body = ", ".join("%s %s" % (c.column_name, c.type) for c in cols if c.column_name != "k")
    session.execute("CREATE TABLE %s (k int PRIMARY KEY, %s)" % (name, body))
    return name
