"""The pieces of a ``Cluster`` (``turbocql.cluster`` holds the class, re-exports the classic
names and is the ``__module__`` of the classes defined here).

``classic_names``: the classic ``cassandra.cluster`` names that are not cluster.py's own.
``arguments``: the ``Cluster`` arguments checked, honoured or refused.
``request_settings``: legacy parameters against execution profiles, client timestamps (a
base class of ``Cluster``). ``pool_size``: ``connections_per_host`` / ``_shard`` and the
classic pool knobs (a base class of ``Cluster``). ``connect``: what ``connect()`` hands the
engine, with ``tls`` (``ssl_context`` / ``ssl_options``). ``control``: the control
connection's side (system-table reads for ``cluster.metadata``, ``refresh_*``, host events;
a base class of ``Cluster``). ``bootstrap``: the engine's Python objects, handed over at the
end of ``turbocql.cluster``'s import.

Nothing is imported here: each module is imported by its own name.
"""
