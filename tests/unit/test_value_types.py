"""The classic behaviours of util's value types and of cqltypes' conversions that classic
code relies on: Date/Time parsing and ordering, Duration's CQL text, OrderedMap's
order-sensitive equality and classic insertion names, type-string syntax errors, vector
and date-range decoding errors."""

import datetime
import pickle

import pytest

from turbocql import cqltypes, util
from turbocql.cqltypes import DateRangeType, IntegerType, VectorType, lookup_casstype
from turbocql.util import Date, DateRange, Duration, OrderedMap, OrderedMapSerializedKey, Time


def test_date_from_datetime_and_signed_year_string():
    assert Date(datetime.datetime(2017, 1, 3, 23, 59)) == Date(datetime.date(2017, 1, 3))
    assert Date("+1492-10-12") == Date("1492-10-12") == datetime.date(1492, 10, 12)
    with pytest.raises(ValueError):
        Date("-1999-10-10")


def test_date_and_time_are_totally_ordered():
    assert Date(1) <= Date(1) < Date(2) and Date(2) >= Date(1) and Date(2) > Date(1)
    assert Time(1) <= Time(1) < Time(2) and Time(2) >= Time(1) and Time(2) > Time(1)
    assert Date(1) < datetime.date(1970, 1, 3)
    with pytest.raises(TypeError):
        _ = Date(1) < 1.5


def test_time_string_with_empty_fraction():
    assert Time("01:00:00.").nanosecond_time == 3_600_000_000_000


def test_duration_str_is_cql_literal():
    assert str(Duration(1, 2, 3)) == "1mo2d3ns"
    assert str(Duration(-1, 2, 3)) == "-1mo2d3ns"
    assert repr(Duration(1, 2, 3)) == "Duration(1, 2, 3)"


def test_ordered_map_equality_is_ordered_between_ordered_maps():
    ab, ba = OrderedMap([("a", 1), ("b", 2)]), OrderedMap([("b", 2), ("a", 1)])
    assert ab != ba and not ab == ba
    assert ab == {"b": 2, "a": 1} == ba
    unhashable_ab = OrderedMap([({1}, 1), ({2}, 2)])
    assert unhashable_ab != OrderedMap([({2}, 2), ({1}, 1)])
    assert unhashable_ab == OrderedMap([({1}, 1), ({2}, 2)])


def test_ordered_map_classic_insert_and_items():
    m = OrderedMapSerializedKey(cqltypes.UTF8Type, 4)
    m._insert("x", 1)
    m._insert("y", 2)
    m._insert("x", 3)
    assert m._items == [("x", 3), ("y", 2)]
    assert OrderedMap([([1], None)])._items == [([1], None)]


def test_lookup_casstype_rejects_foreign_characters():
    with pytest.raises(ValueError):
        lookup_casstype("AsciiType~")
    assert lookup_casstype("org.apache.cassandra.db.marshal.AsciiType") is cqltypes.AsciiType


def test_variable_size_vector_length_errors():
    four, five = (VectorType.apply_parameters([IntegerType, n]) for n in (4, 5))
    with pytest.raises(ValueError, match="after successfully adding 4 elements"):
        five.deserialize(four.serialize([1, 2, 3, 4], 4), 4)
    with pytest.raises(ValueError, match="Additional bytes remaining"):
        four.deserialize(five.serialize([1, 2, 3, 4, 5], 4), 4)
    assert four.deserialize(four.serialize([1, 2, 3, 4], 4), 4) == [1, 2, 3, 4]


def test_date_range_errors_are_value_errors():
    with pytest.raises(ValueError, match="precision int"):
        DateRangeType._decode_precision(7)
    with pytest.raises(ValueError, match="precision string"):
        DateRangeType._encode_precision("FORTNIGHT")
    with pytest.raises(ValueError, match="value attribute"):
        DateRangeType.serialize(object(), 4)

    class NoBounds:
        value = None

    with pytest.raises(ValueError, match="lower_bound and upper_bound"):
        DateRangeType.serialize(NoBounds(), 4)
    both_open = DateRange(lower_bound=util.OPEN_BOUND, upper_bound=util.OPEN_BOUND)
    assert DateRangeType.deserialize(DateRangeType.serialize(both_open, 4), 4) == both_open


def test_moved_classes_keep_the_public_modules():
    """util and cqltypes gather names from private modules by concern; the classes still
    name the public module, so pickles made before and after the move load alike."""
    for value in (
        Date(3),
        Time(4),
        Duration(1, 2, 3),
        util.SortedSet([2, 1]),
        OrderedMap([({1}, 2)]),
        util.Point(1, 2),
    ):
        data = pickle.dumps(value)
        assert b"turbocql.util" in data and b"turbocql._" not in data
        assert pickle.loads(data) == value
    assert type(OrderedMap([({1}, 2)])).__module__ == "turbocql.util"
    assert cqltypes.Int32Type.__module__ == "turbocql.cqltypes"
    assert cqltypes.MapType.apply_parameters([cqltypes.Int32Type, cqltypes.UTF8Type]).__module__ == "turbocql.cqltypes"
    assert cqltypes.lookup_casstype("Int32Type") is cqltypes.Int32Type
    assert cqltypes._cqltypes["int"] is cqltypes.Int32Type
