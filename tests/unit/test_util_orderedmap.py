"""util.OrderedMap with keys that are not hashable, compared with the classic driver's
OrderedMap / OrderedMapSerializedKey (cassandra.util), and cqltypes.cql_typename on the CQL
type strings turbocql's metadata holds."""

import collections
import copy
import pickle

import pytest

from turbocql import cqltypes
from turbocql.util import OrderedMap, OrderedMapSerializedKey, SortedSet

classic_util = pytest.importorskip("cassandra.util")
classic_cqltypes = pytest.importorskip("cassandra.cqltypes")

Udt = collections.namedtuple("Udt", "m t l s")


class Mapped:
    """A registered UDT class: compares by value, so not hashable."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, Mapped) and (self.a, self.b) == (other.a, other.b)


PAIRS = [
    pytest.param([({1: 1, 2: 2}, {3: 3}), ({5: 5, 6: 6}, {7: 7})], id="frozen-map-keys"),
    pytest.param([({1, 2}, {3, 4}), ({5, 6}, {7, 8})], id="set-keys"),
    pytest.param([([1, 2], [3, 4]), ([5, 6], [7, 8])], id="list-keys"),
    pytest.param([(bytearray(b"\x01"), 1), (bytearray(b"\x02\x03"), 2)], id="bytearray-keys"),
    pytest.param(
        [(Udt({1: "v1"}, (3, "v3"), [4, 5], {8, 9}), "x"), (Udt({3: "v3"}, (1, "a"), [], set()), "y")], id="udt"
    ),
    pytest.param([(SortedSet([{1: 2}, {3: 4}]), "a"), (SortedSet([]), "b")], id="sortedset-of-maps"),
    pytest.param([(Mapped({1: 2}, [3]), 1), (Mapped({}, []), 2)], id="mapped-class"),
    pytest.param([((1, {2: 3}), "a"), ((1, None), "b")], id="mixed-hashable"),
]


@pytest.mark.parametrize("pairs", PAIRS)
def test_unhashable_keys_as_classic(pairs):
    ours = OrderedMap(pairs)
    classic = classic_util.OrderedMap(pairs)
    assert isinstance(ours, OrderedMap) and isinstance(ours, dict)
    assert len(ours) == len(classic) == len(pairs)
    assert list(ours) == list(classic) == [k for k, _ in pairs]  # insertion (server) order, original keys
    assert list(ours.keys()) == list(classic.keys())
    assert list(ours.values()) == list(classic.values())
    assert list(ours.items()) == list(classic.items())
    for key, value in pairs:
        assert ours[key] == classic[key] == value
        assert key in ours and key in classic
        assert ours.get(key) == value
        assert (key, value) in ours.items()
    assert str(ours) == str(classic)
    assert repr(ours) == repr(classic)
    # equality with a map of the same items, built either way
    assert ours == OrderedMap(pairs) and not (ours != OrderedMap(pairs))
    assert classic == classic_util.OrderedMap(pairs)
    assert ours != OrderedMap(pairs[:1]) and classic != classic_util.OrderedMap(pairs[:1])
    # a plain dict cannot hold these keys: never equal, as in the classic driver
    assert (ours == {}) == (classic == {}) is False


def test_lookup_by_an_equal_key():
    m = OrderedMap([({1: 1, 2: 2}, "a"), ({1, 2}, "b"), ([1, 2], "c"), (bytearray(b"ab"), "d")])
    assert m[{2: 2, 1: 1}] == "a"  # a map key whatever the order of its items
    assert m[frozenset({1, 2})] == m[SortedSet([2, 1])] == "b"
    assert m[(1, 2)] == "c"  # a frozen list key found by an equal tuple, as CQL serializes both alike
    assert m[b"ab"] == "d"
    assert {3: 3} not in m and m.get({3: 3}, "none") == "none"
    with pytest.raises(KeyError):
        m[{3: 3}]


def test_decoded_map_equals_the_one_the_application_built():
    # test_udts.py's check: the value read back (classic: OrderedMapSerializedKey) equals
    # the OrderedMap that was inserted.
    written = OrderedMap([({1: 1, 2: 2}, {3: 3, 4: 4}), ({5: 5, 6: 6}, {7: 7, 8: 8})])
    read = OrderedMap([(OrderedMap([(1, 1), (2, 2)]), {3: 3, 4: 4}), (OrderedMap([(5, 5), (6, 6)]), {7: 7, 8: 8})])
    assert read == written and written == read
    sets = OrderedMap([(SortedSet([1, 2]), SortedSet([3, 4]))])
    assert sets == OrderedMap([({1, 2}, {3, 4})])
    ctype = classic_cqltypes.MapType.apply_parameters(
        [classic_cqltypes.SetType.apply_parameters([classic_cqltypes.Int32Type]), classic_cqltypes.Int32Type]
    )
    classic = classic_util.OrderedMapSerializedKey(ctype.subtypes[0], 4)
    classic._insert_unchecked(classic_util.SortedSet([1, 2]), None, 7)
    assert classic == classic_util.OrderedMap([({1, 2}, 7)])
    assert OrderedMap([(SortedSet([1, 2]), 7)]) == OrderedMap([({1, 2}, 7)])


def test_hashable_keys_stay_a_plain_dict():
    m = OrderedMap([(1, "a"), (2, "b")])
    assert type(m) is OrderedMap
    assert m == {1: "a", 2: "b"} and repr(m) == "{1: 'a', 2: 'b'}"
    assert "__getitem__" not in type(m).__dict__ and "__iter__" not in type(m).__dict__
    assert OrderedMap({1: 2}) == OrderedMap(x for x in [(1, 2)]) == {1: 2}
    assert OrderedMap(a=1) == {"a": 1}
    assert OrderedMap(iter([(1, 2), (3, 4)])) == {1: 2, 3: 4}


def test_mutation_and_turning_unhashable():
    m = OrderedMap([(1, "a")])
    m[[2]] = "b"  # an unhashable key on a map that had none
    assert list(m.items()) == [(1, "a"), ([2], "b")]
    m[(2,)] = "c"  # the same key: replaced in place
    assert list(m.items()) == [(1, "a"), ([2], "c")]
    m.update([({3: 4}, "d")])
    assert m.setdefault({3: 4}, "x") == "d" and m.setdefault({5: 6}, "e") == "e"
    assert m.pop([2]) == "c" and m.pop([2], None) is None
    del m[1]
    assert list(m) == [{3: 4}, {5: 6}]
    assert m.popitem() == ({5: 6}, "e")
    with pytest.raises(KeyError):
        del m[[9]]
    m.clear()
    assert len(m) == 0 and list(m) == []
    g = OrderedMap((k, v) for k, v in [(1, 2), ([3], 4)])  # a generator read once
    assert list(g.items()) == [(1, 2), ([3], 4)]


def test_copy_and_pickle():
    m = OrderedMap([({1: 2}, [3]), ({4: 5}, [6])])
    for other in (pickle.loads(pickle.dumps(m)), copy.copy(m), copy.deepcopy(m), m.copy()):
        assert isinstance(other, OrderedMap) and other == m and list(other) == list(m)
    assert (m | OrderedMap([({7: 8}, [9])]))[{7: 8}] == [9]


def test_serialized_key_map():
    key_type = cqltypes.SetType.apply_parameters([cqltypes.Int32Type])
    m = OrderedMapSerializedKey(key_type, 4)
    m._insert_unchecked(SortedSet([1, 2]), None, "a")
    m._insert_unchecked(SortedSet([3]), None, "b")
    assert isinstance(m, OrderedMapSerializedKey) and m.cass_key_type is key_type and m.protocol_version == 4
    assert m[{1, 2}] == "a" and list(m) == [SortedSet([1, 2]), SortedSet([3])]
    assert repr(m) == "OrderedMapSerializedKey([(SortedSet([1, 2]), 'a'), (SortedSet([3]), 'b')])"
    again = copy.copy(m)  # (its key type, a made class, does not pickle; the classic one neither)
    assert type(again).__name__ == "OrderedMapSerializedKey" and again.cass_key_type is key_type and again == m
    # the cqltypes decoder builds one too
    map_type = cqltypes.MapType.apply_parameters([key_type, cqltypes.Int32Type])
    data = map_type.serialize(OrderedMap([({1, 2}, 5)]), 4)
    assert map_type.deserialize(data, 4)[{1, 2}] == 5


def test_rows_decoder_path_is_cheap():
    # The decoder's call shape: one positional list of 2-tuples.
    pairs = [(i, str(i)) for i in range(5)]
    m = OrderedMap(pairs)
    assert type(m) is OrderedMap and dict(m) == dict(pairs)


RESULT_TYPES = [
    ("int", classic_cqltypes.Int32Type),
    ("text", classic_cqltypes.VarcharType),
    ("varchar", classic_cqltypes.VarcharType),
    ("ascii", classic_cqltypes.AsciiType),
    ("timestamp", classic_cqltypes.DateType),
    ("blob", classic_cqltypes.BytesType),
    ("counter", classic_cqltypes.CounterColumnType),
    ("varint", classic_cqltypes.IntegerType),
    ("map<int, text>", "MapType(Int32Type, UTF8Type)"),
    ("list<frozen<list<int>>>", "ListType(ListType(Int32Type))"),
    ("map<frozen<set<int>>, text>", "MapType(SetType(Int32Type), UTF8Type)"),
    ("frozen<tuple<int, text, boolean>>", "TupleType(Int32Type, UTF8Type, BooleanType)"),
    ("vector<float, 3>", "org.apache.cassandra.db.marshal.VectorType(FloatType, 3)"),
]


@pytest.mark.parametrize("cql, classic", RESULT_TYPES)
def test_cql_typename_of_result_types(cql, classic):
    expected = classic_cqltypes.cql_typename(classic)
    if isinstance(classic, str):
        # the classic result metadata reads text as VarcharType
        expected = expected.replace("text", "varchar")
    assert cqltypes.cql_typename(cql) == expected


def test_cql_typename_of_user_types_and_cassandra_names():
    assert cqltypes.cql_typename("ks.addr") == "frozen<addr>"
    assert cqltypes.cql_typename("map<ks.addr, int>") == "map<frozen<addr>, int>"
    assert cqltypes.cql_typename('ks."My Type"') == "frozen<My Type>"
    for name in ("Int32Type", "org.apache.cassandra.db.marshal.ListType(Int32Type)", "MapType(UTF8Type, Int32Type)"):
        assert cqltypes.cql_typename(name) == classic_cqltypes.cql_typename(name)
    assert cqltypes.cql_typename(cqltypes.Int32Type) == "int"
    udt = cqltypes._lookup_cql_type("ks.addr", lambda ks, name: (["a", "b"], ["int", "set<text>"]))
    assert issubclass(udt, cqltypes.UserType) and udt.fieldnames == ["a", "b"]
    assert [t.cql_parameterized_type() for t in udt.subtypes] == ["int", "set<varchar>"]
