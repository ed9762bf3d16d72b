"""WHERE clause operators: the ``__op`` suffix of a filter keyword and its CQL symbol."""

from turbocql.cqlengine import UnicodeMixin


class QueryOperatorException(Exception):
    pass


class BaseQueryOperator(UnicodeMixin):
    symbol: str | None = None
    cql_symbol: str | None = None

    def __unicode__(self):
        if self.cql_symbol is None:
            raise QueryOperatorException("cql symbol is None")
        return self.cql_symbol


class OpMapMeta(type):
    def __init__(cls, name, bases, dct):
        if not hasattr(cls, "opmap"):
            cls.opmap = {}
        elif cls.symbol:
            cls.opmap[cls.symbol.upper()] = cls
        super().__init__(name, bases, dct)


class BaseWhereOperator(BaseQueryOperator, metaclass=OpMapMeta):
    @classmethod
    def get_operator(cls, symbol):
        try:
            return cls.opmap[symbol.upper()]
        except KeyError:
            raise QueryOperatorException(f"{symbol} doesn't map to a QueryOperator") from None


class EqualsOperator(BaseWhereOperator):
    symbol = "EQ"
    cql_symbol = "="


class NotEqualsOperator(BaseWhereOperator):
    symbol = "NE"
    cql_symbol = "!="


class InOperator(EqualsOperator):
    symbol = "IN"
    cql_symbol = "IN"


class GreaterThanOperator(BaseWhereOperator):
    symbol = "GT"
    cql_symbol = ">"


class GreaterThanOrEqualOperator(BaseWhereOperator):
    symbol = "GTE"
    cql_symbol = ">="


class LessThanOperator(BaseWhereOperator):
    symbol = "LT"
    cql_symbol = "<"


class LessThanOrEqualOperator(BaseWhereOperator):
    symbol = "LTE"
    cql_symbol = "<="


class ContainsOperator(EqualsOperator):
    symbol = "CONTAINS"
    cql_symbol = "CONTAINS"


class LikeOperator(EqualsOperator):
    symbol = "LIKE"
    cql_symbol = "LIKE"


class BaseAssignmentOperator(BaseQueryOperator, metaclass=OpMapMeta):
    pass


class AssignmentOperator(BaseAssignmentOperator):
    symbol = "="
    cql_symbol = "="


class AddSymbol(BaseAssignmentOperator):
    symbol = "+"
    cql_symbol = "+"


class SubtractSymbol(BaseAssignmentOperator):
    symbol = "-"
    cql_symbol = "-"


class IsNotNullOperator(EqualsOperator):
    """``IS NOT NULL`` (materialized view definitions)."""

    symbol = "IS NOT NULL"
    cql_symbol = "IS NOT NULL"
