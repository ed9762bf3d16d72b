"""ModelQuerySet: a query set whose rows are model instances, with the model's checks
(keys and indexes in WHERE, clustering order) and the UPDATE of the rows it selects."""

import copy

from turbocql.cqlengine import CQLEngineException, ValidationError, columns
from turbocql.cqlengine._querybase import IfExistsWithCounterColumn, IfNotExistsWithCounterColumn, QueryException
from turbocql.cqlengine._queryset import AbstractQuerySet
from turbocql.cqlengine.functions import Token
from turbocql.cqlengine.operators import EqualsOperator, InOperator
from turbocql.cqlengine.statements import AssignmentClause, UpdateStatement


class ModelQuerySet(AbstractQuerySet):
    """The query set of ``Model.objects``."""

    def _validate_select_where(self):
        """Refuses, before the server does, a WHERE with no equality on a key or an indexed
        column (unless ``allow_filtering()``)."""
        if self._allow_filtering:
            return
        if any(isinstance(w.value, Token) for w in self._where):
            return
        eq_cols = []
        for w in self._where:
            col = self.model._get_column_by_db_name(w.field)
            if col is not None and (isinstance(w.operator, EqualsOperator) or col.custom_index):
                eq_cols.append(col)
        if not any(c.primary_key or c.has_index for c in eq_cols):
            raise QueryException(
                "Where clauses require either  =, a IN or a CONTAINS (collection) comparison with either a "
                "primary key or indexed field. You might want to consider setting allow_filtering()."
            )
        if not any(c.has_index for c in eq_cols) and not any(c.partition_key for c in eq_cols):
            raise QueryException(
                "Filtering on a clustering key without a partition key is not allowed unless "
                "allow_filtering() is called on the queryset. You might want to consider setting allow_filtering()."
            )

    def _select_fields(self):
        if self._defer_fields or self._only_fields:
            fields = [c.db_field_name for c in self.model._columns.values()]
            if self._defer_fields:
                fields = [f for f in fields if f not in self._defer_fields]
                if not fields:
                    fields = [c.db_field_name for c in self.model._partition_keys.values()]
            if self._only_fields:
                fields = [f for f in fields if f in self._only_fields]
            if not fields:
                raise QueryException(
                    "No fields in select query. Only fields: '{}', defer fields: '{}'".format(
                        ",".join(self._only_fields), ",".join(self._defer_fields)
                    )
                )
            return fields
        return super()._select_fields()

    def _get_result_constructor(self):
        if not self._values_list:
            if not self._keyspace:
                return self.model._construct_instance
            keyspace = self._keyspace

            def in_keyspace(row):
                # An instance read through using(keyspace=...) is saved there too, as classic.
                instance = self.model._construct_instance(row)
                instance.__keyspace__ = keyspace
                return instance

            return in_keyspace
        db_map = self.model._db_map
        cols = self.model._columns
        if self._flat_values_list:
            key = self._only_fields[0]
            return lambda row: cols[db_map.get(key, key)].to_python(row[key])
        return lambda row: [cols[db_map.get(k, k)].to_python(row[k]) for k in self._only_fields]

    def _get_ordering_condition(self, colname):
        colname, order_type = super()._get_ordering_condition(colname)
        column = self.model._columns.get(colname)
        if column is None:
            raise QueryException(f"Can't resolve the column name: '{colname}'")
        if not column.primary_key:
            raise QueryException(f"Can't order on '{colname}', can only order on (clustered) primary keys")
        pks = [v for k, v in self.model._columns.items() if v.primary_key]
        if column == pks[0]:
            raise QueryException(
                "Can't order by the first primary key (partition key), clustering (secondary) keys only"
            )
        return column.db_field_name, order_type

    def values_list(self, *fields, **kwargs):
        """Rows as lists of ``fields`` (``flat=True`` with one field: its values)."""
        flat = kwargs.pop("flat", False)
        if kwargs:
            raise TypeError("Unexpected keyword arguments to values_list: %s" % (kwargs.keys(),))
        if flat and len(fields) > 1:
            raise TypeError("'flat' is not valid when values_list is called with more than one field.")
        clone = self.only(fields)
        clone._values_list = True
        clone._flat_values_list = flat
        return clone

    def ttl(self, ttl):
        clone = copy.deepcopy(self)
        clone._ttl = ttl
        return clone

    def timestamp(self, timestamp):
        clone = copy.deepcopy(self)
        clone._timestamp = timestamp
        return clone

    def if_not_exists(self, value=True):
        if self.model._has_counter:
            raise IfNotExistsWithCounterColumn("if_not_exists cannot be used with tables containing counter columns")
        clone = copy.deepcopy(self)
        clone._if_not_exists = value
        return clone

    def if_exists(self, value=True):
        if self.model._has_counter:
            raise IfExistsWithCounterColumn("if_exists cannot be used with tables containing counter columns")
        clone = copy.deepcopy(self)
        clone._if_exists = value
        return clone

    def update(self, **values):
        """Updates the selected rows: ``col=v``, ``col__append``/``__prepend`` (list),
        ``col__add``/``__remove`` (set), ``col__update``/``__remove`` (map); None deletes."""
        if not values:
            return
        nulled_columns = set()
        updated_columns = set()
        us = UpdateStatement(
            self.column_family_name,
            where=self._where,
            ttl=self._ttl,
            timestamp=self._timestamp,
            conditionals=self._conditional,
            if_exists=self._if_exists,
        )
        for name, val in values.items():
            col_name, col_op = self._parse_filter_arg(name) if "__" in name else (name, None)
            if "__" in name:
                col_name, col_op = name.rsplit("__", 1)
            col = self.model._columns.get(col_name)
            if col is None:
                raise ValidationError(f"{self.__module__}.{self.model.__name__} has no column named: {col_name}")
            if col.is_primary_key:
                raise ValidationError(
                    f"Cannot apply update to primary key '{col_name}' for {self.__module__}.{self.model.__name__}"
                )
            if col_op == "remove" and isinstance(col, columns.Map):
                if not isinstance(val, set):
                    raise ValidationError(
                        f"Cannot apply update operation '{col_op}' on column '{col_name}' with value '{val}'. A set "
                        f"is required."
                    )
                val = {v: None for v in val}
            else:
                val = col.validate(val)
            if val is None:
                if self._conditional:
                    # under IF, in the same UPDATE (a DELETE after it would see the change)
                    us._add_assignment_clause(AssignmentClause(col.db_field_name, None))
                else:
                    nulled_columns.add(col_name)
                continue
            if col_op in ("append", "prepend", "add", "update"):
                us.add_update(col, val, operation="prepend" if col_op == "prepend" else "append")
            elif col_op == "remove":
                # A map's keys too: ``"m" = "m" - {keys}``, in the same UPDATE as the rest.
                us.add_update(col, val, operation="remove")
            elif isinstance(col, columns.Counter):
                us.add_update(col, val, previous=0)
            else:
                us.add_update(col, val)
            updated_columns.add(col_name)
        if us.assignments:
            self._execute(us)
        if nulled_columns:
            from turbocql.cqlengine.statements import DeleteStatement

            ds = DeleteStatement(
                self.column_family_name,
                fields=[self.model._columns[c].db_field_name for c in nulled_columns],
                where=self._where,
                timestamp=self._timestamp,
                conditionals=self._conditional,
                if_exists=self._if_exists,
            )
            self._execute(ds)


__all__ = ["CQLEngineException", "InOperator"]
