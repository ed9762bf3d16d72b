"""Query sets (the rows of a model a query selects, read lazily), BatchQuery, ContextQuery
and DMLQuery (which saves, updates and deletes one model instance): the classic
``cqlengine.query`` names, defined in ``_querybase``, ``_queryset`` and ``_dml``; and
turbocql's own ``bulk_save`` (``_bulk``), many new instances written through the engine's
``execute_concurrent``."""

from turbocql._util.homes import publish as _publish
from turbocql.cqlengine import connection  # noqa: F401
from turbocql.cqlengine._bulk import BulkSaveError, bulk_save  # noqa: F401 - turbocql's own
from turbocql.cqlengine._dml import DMLQuery, _execute_statement  # noqa: F401
from turbocql.cqlengine._modelqs import ModelQuerySet  # noqa: F401
from turbocql.cqlengine._querybase import (  # noqa: F401
    AbstractQueryableColumn,
    BatchQuery,
    BatchType,
    ContextQuery,
    DoesNotExist,
    IfExistsWithCounterColumn,
    IfNotExistsWithCounterColumn,
    LWTException,
    MultipleObjectsReturned,
    QueryException,
    check_applied,
)
from turbocql.cqlengine._queryset import AbstractQuerySet, ResultObject, SimpleQuerySet  # noqa: F401
from turbocql.cqlengine.functions import BaseQueryFunction, QueryValue, Token  # noqa: F401
from turbocql.cqlengine.statements import (  # noqa: F401
    BaseCQLStatement,
    ConditionalClause,
    DeleteStatement,
    InsertStatement,
    SelectStatement,
    UpdateStatement,
    WhereClause,
)

# This module is the home of the classic names of cqlengine.query that live in the private
# modules of turbocql.cqlengine (reprs, tracebacks, docs and pickles name
# turbocql.cqlengine.query), and of turbocql's own bulk_save and BulkSaveError.
_publish(
    __name__,
    [
        "AbstractQuerySet",
        "AbstractQueryableColumn",
        "BatchQuery",
        "BatchType",
        "BulkSaveError",
        "ContextQuery",
        "DMLQuery",
        "DoesNotExist",
        "IfExistsWithCounterColumn",
        "IfNotExistsWithCounterColumn",
        "LWTException",
        "ModelQuerySet",
        "MultipleObjectsReturned",
        "QueryException",
        "ResultObject",
        "SimpleQuerySet",
        "bulk_save",
        "check_applied",
    ],
)
