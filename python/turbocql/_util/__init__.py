"""The values and helpers of ``turbocql.util``, by concern (``turbocql.util`` re-exports every
name and names itself their ``__module__``).

``values``: ``Date``, ``Time``, ``Duration``, ``DateRange``.
``containers``: ``SortedSet``, ``OrderedMap`` (set and map columns).
``times``: timestamps and time UUIDs. ``geo``: the DSE geometric values (``Point``,
``LineString``, ``Polygon``).
``homes``: ``publish``, with which each public module names itself
the ``__module__`` of the classes and functions it re-exports from private modules.

Nothing is imported here: each module is imported by its own name.
"""
