"""DMLQuery: the INSERT, UPDATE or DELETE of one model instance, with its TTL, timestamp,
conditions and batch."""

from turbocql.cqlengine import CQLEngineException, columns, connection
from turbocql.cqlengine._querybase import IfExistsWithCounterColumn, IfNotExistsWithCounterColumn, check_applied
from turbocql.cqlengine.operators import BaseWhereOperator, EqualsOperator
from turbocql.cqlengine.statements import (
    AssignmentClause,
    ConditionalClause,
    DeleteStatement,
    InsertStatement,
    UpdateStatement,
    WhereClause,
)


def _execute_statement(model, statement, consistency_level, timeout, connection=None):
    """Runs ``statement`` of ``model`` on its connection."""
    return _conn_module.execute(statement, consistency_level=consistency_level, timeout=timeout, connection=connection)


_conn_module = connection


class DMLQuery:
    """One instance's write; ``batch`` queues it instead of running it."""

    def __init__(
        self,
        model,
        instance=None,
        batch=None,
        ttl=None,
        consistency=None,
        timestamp=None,
        if_not_exists=False,
        conditional=None,
        timeout=connection.NOT_SET,
        if_exists=False,
    ):
        self.model = model
        self.column_family_name = self.model.column_family_name()
        self.instance = instance
        self._batch = batch
        self._ttl = ttl
        self._consistency = consistency
        self._timestamp = timestamp
        self._if_not_exists = if_not_exists
        self._if_exists = if_exists
        self._timeout = timeout
        self._conditional = []
        for key, value in (conditional or {}).items():
            name, op = (key.rsplit("__", 1) + ["EQ"])[:2] if "__" in key else (key, "EQ")
            col = model._columns[name]
            self._conditional.append(
                ConditionalClause(col.db_field_name, col.to_database(value), BaseWhereOperator.get_operator(op)())
            )
        if (
            instance is not None
            and getattr(instance, "__keyspace__", None)
            and instance.__keyspace__ != model.__keyspace__
        ):
            self.column_family_name = f"{instance.__keyspace__}.{model.column_family_name(include_keyspace=False)}"

    def _execute(self, statement):
        conn = self.instance._get_connection() if self.instance is not None else self.model._get_connection()
        if self._batch:
            if self._batch._connection:
                if not self._batch._connection_explicit and conn and conn != self._batch._connection:
                    raise CQLEngineException("BatchQuery queries must be executed on the same connection")
            else:
                self._batch._connection = conn
            return self._batch.add_query(statement)
        result = _execute_statement(self.model, statement, self._consistency, self._timeout, connection=conn)
        if self._if_not_exists or self._if_exists or self._conditional:
            check_applied(result)
        return result

    def _where_pk(self, statement):
        for name, col in self.model._primary_keys.items():
            statement.add_where(col, EqualsOperator(), getattr(self.instance, name))

    def batch(self, batch_obj):
        self._batch = batch_obj
        return self

    def _delete_null_columns(self, conditionals=None):
        ds = DeleteStatement(
            self.column_family_name, timestamp=self._timestamp, conditionals=conditionals, if_exists=self._if_exists
        )
        deleted = False
        static_only = True
        for v in self.instance._values.values():
            col = v.column
            if v.deleted:
                ds.add_field(col.db_field_name)
                deleted = True
                static_only &= col.static
            elif isinstance(col, columns.Map):
                removed = set(v.previous_value or {}) - set(v.value or {})
                if removed:
                    ds.add_field(col.db_field_name, keys=[col.key_col.to_database(k) for k in removed])
                    deleted = True
                    static_only &= col.static
        if deleted:
            keys = self.model._partition_keys if static_only else self.model._primary_keys
            for name, col in keys.items():
                ds.add_where(col, EqualsOperator(), getattr(self.instance, name))
            self._execute(ds)

    def update(self):
        """Writes the changed columns of a persisted instance (an UPDATE, then a DELETE of
        the columns set to None)."""
        if self.instance is None:
            raise CQLEngineException("DML Query intance attribute is None")
        assert type(self.instance) is self.model
        # a static-only write: the model has clustering keys and the instance none of them
        null_clustering_key = bool(self.instance._clustering_keys)
        static_changed_only = True
        statement = UpdateStatement(
            self.column_family_name,
            ttl=self._ttl,
            timestamp=self._timestamp,
            conditionals=self._conditional,
            if_exists=self._if_exists,
        )
        for name, col in self.instance._clustering_keys.items():
            null_clustering_key = null_clustering_key and col._val_is_null(getattr(self.instance, name, None))
        for name, col in self.model._columns.items():
            if col.is_primary_key:
                continue
            vm = self.instance._values[name]
            val = getattr(self.instance, name, None)
            if isinstance(col, columns.Counter):
                # a new row's counters are written even at 0 (the row then exists)
                if val == vm.previous_value and self.instance._is_persisted:
                    continue
                static_changed_only = False
                statement.add_update(col, val, previous=vm.previous_value)
                continue
            if not vm.changed:
                continue
            if col._val_is_null(val):
                if self._conditional and vm.deleted:
                    # under IF, a separate DELETE would see the row the UPDATE changed
                    statement._add_assignment_clause(AssignmentClause(col.db_field_name, None))
                    static_changed_only = static_changed_only and col.static
                continue
            static_changed_only = static_changed_only and col.static
            if isinstance(col, columns.List) and vm.previous_value and not vm.explicit:
                prev = list(vm.previous_value)
                if val[len(val) - len(prev) :] == prev and len(val) > len(prev):
                    statement.add_update(col, val[: len(val) - len(prev)], operation="prepend")
                    continue
                if val[: len(prev)] == prev and len(val) > len(prev):
                    statement.add_update(col, val[len(prev) :], operation="append")
                    continue
            if isinstance(col, columns.Set) and vm.previous_value and not vm.explicit:
                added = set(val) - set(vm.previous_value)
                removed = set(vm.previous_value) - set(val)
                if added:
                    statement.add_update(col, added, operation="append")
                if removed:
                    statement.add_update(col, removed, operation="remove")
                if added or removed:
                    continue
            if isinstance(col, columns.Map) and vm.previous_value is not None and not vm.explicit:
                changed = {k: v for k, v in val.items() if k not in vm.previous_value or vm.previous_value[k] != v}
                if changed:
                    statement.add_update(col, changed, operation="append")
                continue
            statement.add_update(col, val)
        if statement.assignments:
            keys = self.model._partition_keys if static_changed_only else self.model._primary_keys
            for name, col in keys.items():
                statement.add_where(col, EqualsOperator(), getattr(self.instance, name))
            self._execute(statement)
        if not null_clustering_key and not (self._conditional and statement.assignments):
            self._delete_null_columns()

    def save(self):
        """An INSERT of a new instance (None values left out), an update of a persisted one."""
        if self.instance is None:
            raise CQLEngineException("DML Query intance attribute is None")
        assert type(self.instance) is self.model
        nulled_fields = set()
        if self.instance._has_counter or self.instance._can_update():
            if self.instance._has_counter and (self._if_not_exists):
                raise IfNotExistsWithCounterColumn(
                    "if_not_exists cannot be used with tables containing counter columns"
                )
            if self.instance._has_counter and self._if_exists:
                raise IfExistsWithCounterColumn("if_exists cannot be used with tables containing counter columns")
            return self.update()
        insert = InsertStatement(
            self.column_family_name, ttl=self._ttl, timestamp=self._timestamp, if_not_exists=self._if_not_exists
        )
        static_save_only = False if len(self.instance._clustering_keys) == 0 else True
        for name, col in self.instance._clustering_keys.items():
            static_save_only = static_save_only and col._val_is_null(getattr(self.instance, name, None))
        for name, col in self.instance._columns.items():
            if static_save_only and not col.static and not col.partition_key:
                continue
            val = getattr(self.instance, name, None)
            if col._val_is_null(val):
                if self.instance._values[name].changed:
                    nulled_fields.add(col.db_field_name)
                continue
            if col.has_default and not self.instance._values[name].changed:
                self.instance._values[name].explicit = True
            insert.add_assignment(col, val)
        if not insert.is_empty:
            self._execute(insert)
        if not static_save_only:
            self._delete_null_columns()

    def delete(self):
        """Deletes the instance's row (``IF`` conditions and timestamp kept)."""
        if self.instance is None:
            raise CQLEngineException("DML Query instance attribute is None")
        ds = DeleteStatement(
            self.column_family_name,
            timestamp=self._timestamp,
            conditionals=self._conditional,
            if_exists=self._if_exists,
        )
        for name, col in self.model._primary_keys.items():
            val = getattr(self.instance, name)
            if val is None and not col.partition_key:
                continue
            ds.add_where(col, EqualsOperator(), val)
        self._execute(ds)


__all__ = ["WhereClause"]
