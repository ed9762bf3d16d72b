"""turbocql.cqlengine: an object mapper for Cassandra tables (the classic cqlengine's API).

Models (``models``) declare tables with columns (``columns``); query sets (``query``) read
and write them through statements (``statements``, ``operators``, ``functions``) run on a
registered connection (``connection``); ``management`` creates and alters keyspaces, tables
and types, ``usertype`` maps user-defined types and ``named`` reaches tables no model
declares. This module holds the errors every part shares and the caching constants.
"""

CACHING_ALL = "ALL"
CACHING_KEYS_ONLY = "KEYS_ONLY"
CACHING_ROWS_ONLY = "ROWS_ONLY"
CACHING_NONE = "NONE"


class CQLEngineException(Exception):
    """The base of every cqlengine error."""


class ValidationError(CQLEngineException):
    """A value a column refuses (wrong type, missing required value, out of bounds)."""


class UnicodeMixin:
    """``str()`` of an instance is its ``__unicode__()``."""

    def __str__(self):
        return self.__unicode__()
