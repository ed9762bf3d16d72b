"""``bulk_save``: many new model instances written at once, each row as its ``save()`` would
write it, through one prepared INSERT per model and ``execute_concurrent`` (turbocql's own:
the classic cqlengine saves one instance per request, or batches them in ``BatchQuery``)."""

from turbocql.concurrent import execute_concurrent_with_args
from turbocql.cqlengine import CQLEngineException
from turbocql.cqlengine import connection as _connection
from turbocql.query import UNSET_VALUE


class BulkSaveError(CQLEngineException):
    """Some instances of a ``bulk_save`` were not written. ``failures`` holds each one
    with the exception its INSERT raised; every other instance was written and is
    persisted. The first failure's exception is the ``__cause__``."""

    def __init__(self, message, failures):
        super().__init__(message)
        self.failures = failures


# per-instance settings a bulk INSERT cannot carry (set with .ttl(), .timestamp(),
# .if_not_exists(), .if_exists(), .iff(), .batch() before save())
_INSTANCE_OPTIONS = ("_ttl", "_timestamp", "_if_not_exists", "_if_exists", "_conditional", "_batch")


def bulk_save(instances, concurrency=100, consistency_level=None, ttl=None):
    """Writes new model instances, ``concurrency`` INSERTs in flight at a time.

    Each instance is validated first (a ValidationError leaves every row unwritten) and
    written as its ``save()`` writes a new instance: its non-null columns, defaults
    included, and no tombstone for a null (an unset value). An instance already
    persisted, of a model with counter columns or a polymorphic base, or with its own
    ``ttl`` / ``timestamp`` / ``if_not_exists`` / ``if_exists`` / ``iff`` / ``batch``
    raises ValueError before anything is sent. ``ttl`` applies to every row;
    ``consistency_level`` defaults to each model's ``__consistency__``. Returns the
    instances, every one persisted; if some INSERTs fail, the others are still written
    and :class:`BulkSaveError` lists the failed ones.
    """
    instances = list(instances)
    groups = {}
    for inst in instances:
        _check_new(inst)
        inst._set_discriminator("save")
        inst.validate()
        model = type(inst)
        static_only = _static_only(inst)
        key = (model, _table_of(inst), static_only, inst._get_connection())
        group = groups.get(key)
        if group is None:
            group = groups[key] = (_insert_columns(model, static_only), [], [])
        cols, members, params = group
        members.append(inst)
        row = []
        for name, col in cols:
            val = getattr(inst, name, None)
            if col._val_is_null(val):
                row.append(UNSET_VALUE)
                continue
            if col.has_default and not inst._values[name].changed:
                inst._values[name].explicit = True
            row.append(col.to_database(val))
        if ttl is not None:
            row.append(ttl)
        params.append(row)
    failures = []
    for (model, table, _, conn_name), (cols, members, params) in groups.items():
        session = _connection.get_session(conn_name)
        if session is None:
            raise CQLEngineException("It is required to setup() cqlengine before executing queries")
        names = ", ".join('"%s"' % col.db_field_name.replace('"', '""') for _, col in cols)
        marks = ", ".join("?" * len(cols))
        cql = f"INSERT INTO {table} ({names}) VALUES ({marks})"
        if ttl is not None:
            cql += " USING TTL ?"
        prepared = session.prepare(cql)
        level = consistency_level if consistency_level is not None else model.__consistency__
        if level is not None:
            prepared.consistency_level = level
        results = execute_concurrent_with_args(
            session, prepared, params, concurrency=concurrency, raise_on_first_error=False
        )
        for inst, (ok, outcome) in zip(members, results):
            if ok:
                inst._set_persisted()
            else:
                failures.append((inst, outcome))
    if failures:
        first = failures[0][1]
        raise BulkSaveError(
            f"{len(failures)} of {len(instances)} instances were not written; the first failed with "
            f"{type(first).__name__}: {first}",
            failures,
        ) from first
    return instances


def _check_new(inst):
    # A model instance is known by what it has (as BatchQuery knows one): models imports
    # query, which imports this module, so it cannot import models back.
    if not (hasattr(type(inst), "_columns") and hasattr(inst, "_values") and hasattr(inst, "_set_persisted")):
        raise ValueError(f"bulk_save takes model instances, not {type(inst).__name__}")
    model = type(inst)
    if inst._is_persisted:
        raise ValueError(f"bulk_save writes new instances; {inst} is already persisted (save() updates it)")
    if model._has_counter:
        raise ValueError(f"bulk_save cannot write {model.__name__}: a counter column is written by UPDATE")
    if model._is_polymorphic_base:
        raise ValueError(f"bulk_save cannot write {model.__name__}: a polymorphic base model is not saved")
    for option in _INSTANCE_OPTIONS:
        if getattr(inst, option, None) not in (None, False):
            raise ValueError(
                f"bulk_save cannot honour {inst}'s own {option.lstrip('_')} setting: save() it on its own, "
                "or pass ttl= to bulk_save for every row"
            )


def _table_of(inst):
    """The table the instance's save() writes: its own ``__keyspace__`` (an instance made
    with ``using(keyspace=...)``, or set by hand) before its model's, as DMLQuery does."""
    model = type(inst)
    own = getattr(inst, "__keyspace__", None)
    if own and own != model.__keyspace__:
        return f"{own}.{model.column_family_name(include_keyspace=False)}"
    return model.column_family_name()


def _static_only(inst):
    """True when the instance's clustering keys are all null: save() then writes only its
    partition key and static columns."""
    keys = inst._clustering_keys
    return bool(keys) and all(col._val_is_null(getattr(inst, name, None)) for name, col in keys.items())


def _insert_columns(model, static_only):
    return tuple(
        (name, col) for name, col in model._columns.items() if not static_only or col.static or col.partition_key
    )
