"""Statements and what their requests are sent as and give back, by concern
(``turbocql.query`` re-exports the classic names and is the ``__module__`` of its classes;
``turbocql.protocol`` re-exports the messages).

``statement``: ``Statement``, ``SimpleStatement`` and the markers. ``prepared``:
``PreparedStatement``, ``BoundStatement`` and their classic constructor forms. ``batch``:
``BatchStatement``, ``BatchType``. ``trace``: ``QueryTrace``. ``row_factories``: the row
factories. ``arrow``: the engine's Arrow buffers as pyarrow arrays, results as tables
(pyarrow is optional). ``messages``: the classic protocol message classes a future's
``message`` is made of.

Nothing is imported here: each module is imported by its own name.
"""
