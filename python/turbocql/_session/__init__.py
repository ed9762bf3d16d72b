"""A connected session and what its requests give back, under the classic
``cassandra.cluster`` names (``turbocql.cluster`` re-exports them and is their
``__module__``), each module importing only those before it:

``future``: ``ResponseFuture``, ``NoHostAvailable``, ``QueryExhausted``, query tracing.
``results``: ``ResultSet``, its pages. ``dispatcher``: the callback thread
(``turbocql-dispatcher``). ``session``: ``Session`` (``execute``, ``execute_async``,
``prepare``; its execution profiles as the engine reads them).

Nothing is imported here: each module is imported by its own name.
"""
