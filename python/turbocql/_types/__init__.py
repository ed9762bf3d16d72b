"""The CQL types, by concern: the classes of ``turbocql.cqltypes`` (which re-exports them and
names itself their ``__module__``) and the reading of type names.

``base``: the metaclass and registry, ``CassandraType``, the empty value, the engine's
codec the classes convert through. ``scalar``: the single-value types (and the hand-over of
the codec's value classes to the engine). ``params``: list, set, map, tuple, user types,
frozen, vector and the marshal-only composite types. ``dse``: the DSE types.
``casstype_parse``: Cassandra's marshal type strings read into classes. ``cqltype_parse``:
CQL type strings (``map<text, int>``) and the classes the schema metadata holds for them.
``udt``: the classes UDT values are made of (``Cluster.register_user_type``).

Nothing is imported here: each module is imported by its own name.
"""
