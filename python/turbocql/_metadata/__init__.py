"""The pieces of ``cluster.metadata`` (``turbocql.metadata`` re-exports their classic names
and is their ``__module__``):
the schema, read from ``system_schema``, and the topology, read from the engine.

``schema_model``: ``KeyspaceMetadata``, ``TableMetadata`` and the other schema objects.
``schema_read``: the ``system_schema`` rows turned into them, schema agreement.
``schema_cql``: names, values and the CQL that recreates each object (the pure half).
``schema_change``: which keyspace a DDL statement changes. ``replication``: the keyspaces'
replication strategies. ``topology``: hosts, the token ring and replicas from the engine's
view of the cluster, and the classic token classes.

Nothing is imported here: each module is imported by its own name.
"""
