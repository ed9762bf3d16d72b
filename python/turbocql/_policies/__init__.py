"""What requests run under, beside the load-balancing policies of ``turbocql.policies``:

``failure``: the retry, speculative-execution, reconnection and conviction policies
(``turbocql.policies`` re-exports them). ``profiles``: ``ExecutionProfile`` and
``ProfileManager``, the policies and defaults a request runs with (``turbocql.cluster``
re-exports them). The module that re-exports a classic name is its ``__module__``.

Nothing is imported here: each module is imported by its own name.
"""
