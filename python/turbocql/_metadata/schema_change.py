"""Which keyspace a CQL statement changes the schema of (the engine reports no more than
that a statement starting with CREATE, ALTER or DROP returned no rows; see
``Metadata._own_schema_change``).

:func:`changed_keyspace` reads the statement's first words as CQL writes them: ``CREATE
[OR REPLACE] [CUSTOM] [MATERIALIZED] <kind> [IF [NOT] EXISTS] [ks.]name``, with an
index's and a trigger's keyspace the one of their table (``... ON [ks.]table``).
"""

import re

NOT_SCHEMA = object()
"""What :func:`changed_keyspace` returns for a statement that changes no schema (roles,
users, permissions...)."""

# Keyspace-level kinds and the kinds that live in a keyspace (one or two words).
_KEYSPACE_KINDS = ("KEYSPACE", "SCHEMA")
_OBJECT_KINDS = ("TABLE", "COLUMNFAMILY", "TYPE", "FUNCTION", "AGGREGATE", "VIEW", "INDEX", "TRIGGER")

_TOKEN = re.compile(
    r"""\s+|--[^\n]*|//[^\n]*|/\*.*?\*/   # blanks and comments: skipped
    |(?P<quoted>"(?:[^"]|"")*")          # a quoted name
    |(?P<word>[A-Za-z0-9_$]+)            # a word or an unquoted name
    |(?P<other>.)""",
    re.S | re.X,
)


def _tokens(text):
    """The statement's words and names in order: a word as ``(True, WORD)``, a quoted name
    as ``(False, name)``, punctuation as ``(False, char)``."""
    for m in _TOKEN.finditer(text):
        if m.group("word") is not None:
            yield True, m.group("word")
        elif m.group("quoted") is not None:
            yield False, m.group("quoted")[1:-1].replace('""', '"')
        elif m.group("other") is not None:
            yield False, m.group("other")
        if m.group("other") == ";":
            return


def _name(tokens, i):
    """``(keyspace or None, index after the name)`` for a ``[ks.]name`` at ``tokens[i]``."""

    def ident(j):
        is_word, value = tokens[j]
        return value.lower() if is_word else value

    if i + 2 < len(tokens) and tokens[i + 1] == (False, "."):
        return ident(i), i + 3
    return None, i + 1


def changed_keyspace(text, session_keyspace):
    """The keyspace whose schema ``text`` changes (its own keyspace for ``CREATE KEYSPACE``
    and the like); None when it cannot be told (then: all of them); :data:`NOT_SCHEMA` for a
    statement that changes none."""
    tokens = list(_tokens(text))
    words = [value.upper() if is_word else None for is_word, value in tokens]
    if not words or words[0] not in ("CREATE", "ALTER", "DROP"):
        return NOT_SCHEMA
    i = 1
    while i < len(words) and words[i] in ("OR", "REPLACE", "CUSTOM", "MATERIALIZED"):
        i += 1
    if i >= len(words):
        return None
    kind = words[i]
    if kind not in _KEYSPACE_KINDS and kind not in _OBJECT_KINDS:
        return NOT_SCHEMA
    i += 1
    while i < len(words) and words[i] in ("IF", "NOT", "EXISTS"):
        i += 1
    if i >= len(tokens):
        return None
    if kind in _KEYSPACE_KINDS:
        is_word, name = tokens[i]
        return name.lower() if is_word else name
    keyspace, after = _name(tokens, i)
    if kind in ("INDEX", "TRIGGER") and words[0] == "CREATE":
        # CREATE INDEX [name] ON [ks.]table: the table's keyspace.
        on = next((j for j in range(i, len(words)) if words[j] == "ON"), None)
        if on is None or on + 1 >= len(tokens):
            return None
        keyspace, _ = _name(tokens, on + 1)
    elif kind == "TRIGGER" and keyspace is None:
        # DROP TRIGGER name ON [ks.]table.
        on = next((j for j in range(after, len(words)) if words[j] == "ON"), None)
        if on is not None and on + 1 < len(tokens):
            keyspace, _ = _name(tokens, on + 1)
    return keyspace if keyspace is not None else session_keyspace
