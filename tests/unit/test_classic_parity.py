"""Behaviour compared with the classic driver (cassandra-driver, in the venv), no server:
statements (routing keys, serial consistency, repr, batch limits), SortedSet, the
protocol's primitive codecs and message classes, cython_deps."""

import io
import pickle

import pytest

cassandra_query = pytest.importorskip("cassandra.query")
import cassandra.protocol as c_protocol  # noqa: E402
import cassandra.util as c_util  # noqa: E402

import turbocql.protocol as t_protocol  # noqa: E402
import turbocql.query as t_query  # noqa: E402
import turbocql.util as t_util  # noqa: E402
from turbocql import ConsistencyLevel  # noqa: E402

BOTH = pytest.mark.parametrize("q", [cassandra_query, t_query], ids=["classic", "turbocql"])


def _outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the kind is what is compared
        return ("raises", type(exc).__name__)


def test_simple_statement_routing_key_as_classic():
    parts = [b"\x00\x00\x00\x01", b"ab"]
    for value in (b"key", [b"one"], (b"one",), parts, tuple(parts)):
        c = cassandra_query.SimpleStatement("q", routing_key=value)
        t = t_query.SimpleStatement("q", routing_key=value)
        assert t.routing_key == c.routing_key
        c2, t2 = cassandra_query.SimpleStatement("q"), t_query.SimpleStatement("q")
        c2.routing_key = value
        t2.routing_key = value
        assert t2.routing_key == c2.routing_key
        del c2.routing_key
        del t2.routing_key
        assert t2.routing_key is c2.routing_key is None


def test_serial_consistency_level_checked_as_classic():
    for level in (ConsistencyLevel.ONE, ConsistencyLevel.QUORUM, ConsistencyLevel.SERIAL, None):
        c = _outcome(cassandra_query.SimpleStatement, "q", serial_consistency_level=level)
        t = _outcome(t_query.SimpleStatement, "q", serial_consistency_level=level)
        assert c[0] == t[0]
        c = _outcome(setattr, cassandra_query.SimpleStatement("q"), "serial_consistency_level", level)
        t = _outcome(setattr, t_query.SimpleStatement("q"), "serial_consistency_level", level)
        assert c == t
    s = t_query.SimpleStatement("q", serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert s.serial_consistency_level == ConsistencyLevel.LOCAL_SERIAL
    # Read without a Python call (the engine reads it per request): a plain instance value.
    assert s.__dict__["serial_consistency_level"] == ConsistencyLevel.LOCAL_SERIAL
    del s.serial_consistency_level
    assert s.serial_consistency_level is None


def test_statement_repr_as_classic():
    for level in (None, ConsistencyLevel.ONE, ConsistencyLevel.LOCAL_QUORUM):
        c = cassandra_query.SimpleStatement("SELECT * FROM t", consistency_level=level)
        t = t_query.SimpleStatement("SELECT * FROM t", consistency_level=level)
        assert repr(t) == repr(c) == str(c)
        cb = cassandra_query.BatchStatement(consistency_level=level)
        tb = t_query.BatchStatement(consistency_level=level)
        cb.add(c)
        tb.add(t)
        assert repr(tb) == repr(cb)


def test_batch_statement_limit_as_classic():
    for q in (cassandra_query, t_query):
        b = q.BatchStatement()
        b.add_all(["INSERT INTO t (k) VALUES (0)"] * 0xFFFF, [None] * 0xFFFF)
        assert len(b) == 0xFFFF
        with pytest.raises(ValueError, match="cannot contain more than 65535 statements"):
            b.add("INSERT INTO t (k) VALUES (0)")


def test_batch_inherits_routing_key_of_simple_statement_as_classic():
    for q in (cassandra_query, t_query):
        b = q.BatchStatement()
        b.add(q.SimpleStatement("q1"))  # no keyspace, no key
        b.add(q.SimpleStatement("q2", routing_key=b"rk", keyspace="ks"))
        b.add(q.SimpleStatement("q3", routing_key=b"other", keyspace="ks2"))
        assert (b.routing_key, b.keyspace) == (b"rk", "ks")
        b.clear()
        assert b.routing_key is None and b.keyspace is None


def test_sorted_set_as_classic():
    c_set, t_set = c_util.SortedSet, t_util.SortedSet
    samples = [[3, 1, 2], [2, 5], [], [1, 2, 3], [[1, 2], [0]]]
    for a in samples:
        ca, ta = c_set(a), t_set(a)
        assert list(ta) == list(ca)
        assert repr(ta) == repr(ca)
        assert list(ta.copy()) == list(ca.copy()) and type(ta.copy()) is t_set
        assert list(pickle.loads(pickle.dumps(ta))) == list(ca)
        for b in samples:
            if any(isinstance(x, list) for x in a + b) and not all(isinstance(x, list) for x in a + b):
                continue
            cb, tb = c_set(b), t_set(b)
            for op in ("union", "intersection", "difference", "symmetric_difference"):
                assert list(getattr(ta, op)(tb)) == list(getattr(ca, op)(cb)), op
            for op in ("__or__", "__and__", "__sub__", "__xor__", "__le__", "__lt__", "__ge__", "__gt__", "__eq__"):
                assert _outcome(getattr(ta, op), tb) == _outcome(getattr(ca, op), cb), op
            for op in ("isdisjoint", "issubset", "issuperset"):
                assert getattr(ta, op)(tb) == getattr(ca, op)(cb), op
            assert (ta == b) == (ca == b)
            assert (ta != b) == (ca != b)
    ca, ta = c_set([1, 2, 3]), t_set([1, 2, 3])
    for s in (ca, ta):
        s |= [5]
        s -= [1]
        s &= [2, 5]
        s ^= c_set([7]) if s is ca else t_set([7])
    assert list(ta) == list(ca)
    assert ta.pop() == ca.pop()
    assert _outcome(ta.remove, 99) == _outcome(ca.remove, 99)
    ta.clear()
    ca.clear()
    assert len(ta) == len(ca) == 0
    assert _outcome(ta.pop) == _outcome(ca.pop)
    assert t_util.sortedset is t_set


def test_protocol_codecs_as_classic():
    cases = [
        ("write_byte", "read_byte", 7),
        ("write_short", "read_short", 65000),
        ("write_int", "read_int", -5),
        ("write_string", "read_string", "héllo"),
        ("write_longstring", "read_longstring", "x" * 300),
        ("write_stringlist", "read_stringlist", ["a", "bc"]),
        ("write_stringmap", "read_stringmap", {"a": "b"}),
        ("write_stringmultimap", "read_stringmultimap", {"a": ["b", "c"]}),
        ("write_bytesmap", "read_bytesmap", {"a": b"\x01", "n": None}),
        ("write_value", "read_value", b"abc"),
        ("write_value", "read_value", None),
        ("write_inet", "read_inet", ("10.0.0.1", 9042)),
        ("write_inet", "read_inet", ("::1", 9042)),
        ("write_consistency_level", "read_consistency_level", 6),
    ]
    for writer, reader, value in cases:
        c_buf, t_buf = io.BytesIO(), io.BytesIO()
        getattr(c_protocol, writer)(c_buf, value)
        getattr(t_protocol, writer)(t_buf, value)
        assert t_buf.getvalue() == c_buf.getvalue(), writer
        assert getattr(t_protocol, reader)(io.BytesIO(c_buf.getvalue())) == getattr(c_protocol, reader)(
            io.BytesIO(c_buf.getvalue())
        )
    c_buf, t_buf = io.BytesIO(), io.BytesIO()
    c_protocol.write_long(c_buf, 2**40)
    t_protocol.write_long(t_buf, 2**40)
    assert t_buf.getvalue() == c_buf.getvalue()
    assert t_protocol.read_binary_string(io.BytesIO(b"\x00\x02ab")) == b"ab"


def test_protocol_message_classes_as_classic():
    c_codes = {code: getattr(cls, "__name__", None) for code, cls in c_protocol.ResultMessage.type_codes.items()}
    t_codes = {code: getattr(cls, "__name__", None) for code, cls in t_protocol.ResultMessage.type_codes.items()}
    assert t_codes == c_codes
    args = dict(query="SELECT 1", consistency_level=1, serial_consistency_level=8, fetch_size=10, timestamp=5)
    c_msg, t_msg = c_protocol.QueryMessage(**args), t_protocol.QueryMessage(**args)
    for name in ("query", "consistency_level", "serial_consistency_level", "fetch_size", "timestamp", "keyspace"):
        assert getattr(t_msg, name) == getattr(c_msg, name)
    assert (t_msg.opcode, t_msg.name) == (c_msg.opcode, c_msg.name)
    assert (t_protocol.ResultMessage.opcode, t_protocol.RESULT_KIND_ROWS) == (0x08, c_protocol.RESULT_KIND_ROWS)


def test_custom_protocol_handler_refused():
    from turbocql.cluster import Session
    from turbocql.protocol import LazyProtocolHandler, NumpyProtocolHandler, ProtocolHandler

    session = Session.__new__(Session)
    for handler in (ProtocolHandler, LazyProtocolHandler, NumpyProtocolHandler):
        session.client_protocol_handler = handler

    class SameOpcodes(ProtocolHandler):
        message_types_by_opcode = dict(ProtocolHandler.message_types_by_opcode)

    session.client_protocol_handler = SameOpcodes  # nothing changed: accepted

    class Custom(ProtocolHandler):
        my_opcodes = dict(ProtocolHandler.message_types_by_opcode)
        my_opcodes[0x08] = object
        message_types_by_opcode = my_opcodes

    from turbocql import UnsupportedOperation

    with pytest.raises(UnsupportedOperation, match="message_types_by_opcode"):
        session.client_protocol_handler = Custom

    class Decoding(ProtocolHandler):
        @classmethod
        def decode_message(cls, *args):
            return None

    with pytest.raises(UnsupportedOperation, match="decode_message"):
        session.client_protocol_handler = Decoding


def test_cython_deps_and_pool_names():
    from turbocql import cython_deps
    from turbocql.pool import HostConnectionPool

    assert cython_deps.HAVE_CYTHON is True
    assert isinstance(cython_deps.HAVE_NUMPY, bool)
    from turbocql import UnsupportedOperation

    with pytest.raises(UnsupportedOperation):
        HostConnectionPool(None, None, None)


def test_protocol_version_predicates_as_classic():
    import cassandra

    import turbocql

    for name in (
        "uses_int_query_flags",
        "uses_prepare_flags",
        "uses_prepared_metadata",
        "uses_error_code_map",
        "uses_keyspace_flag",
        "has_continuous_paging_support",
        "has_continuous_paging_next_pages",
        "has_checksumming_support",
    ):
        for version in (1, 2, 3, 4, 5, 6, 0x41, 0x42):
            classic = getattr(cassandra.ProtocolVersion, name)(version)
            assert getattr(turbocql.ProtocolVersion, name)(version) == classic, (name, version)
    # Below v4 nothing is supported by the engine (classic: its own supported list).
    assert turbocql.ProtocolVersion.get_lower_supported(5) == 4
    assert turbocql.ProtocolVersion.get_lower_supported(4) == 0


def test_named_tuple_rows_with_duplicate_names_as_classic():
    columns = ("duplicate", "duplicate", "duplicate")
    c_row = cassandra_query.named_tuple_factory(columns, [(1, 2, 3)])[0]
    t_cls = t_query._row_class(columns)
    assert t_cls._fields == type(c_row)._fields == ("duplicate", "duplicate_", "duplicate__")
    for columns in (("[applied]", "k"), ("a", "class", "1x"), ("x y", "x_y")):
        c_row = cassandra_query.named_tuple_factory(columns, [tuple(range(len(columns)))])[0]
        assert t_query._row_class(columns)._fields == type(c_row)._fields, columns


def test_conviction_policy_factory_not_callable_as_classic():
    import cassandra.cluster as c_cluster

    import turbocql.cluster as t_cluster

    for module in (c_cluster, t_cluster):
        with pytest.raises(ValueError, match="conviction_policy_factory must be callable"):
            module.Cluster(conviction_policy_factory=1)


def test_cluster_set_meta_refresh_enabled_as_classic():
    import warnings

    import turbocql.cluster as t_cluster

    c = t_cluster.Cluster()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c.set_meta_refresh_enabled(False)
    assert len(w) == 1 and "set_meta_refresh_enabled is deprecated" in str(w[0].message)
    assert c.schema_metadata_enabled is False and c.token_metadata_enabled is False


def test_prepared_routing_key_indexes_are_the_servers_and_cannot_be_changed():
    """The engine routes by the partition key the server reported: assigning other indexes
    (or None, no routing key) raises rather than changing only ``routing_key``."""
    from turbocql import UnsupportedOperation

    class _Prepared:
        param_types = ()
        routing_key_indexes = (0,)

        def check_values(self, values):
            pass

    ps = t_query.PreparedStatement.__new__(t_query.PreparedStatement)
    ps.__dict__.update(_prepared=_Prepared(), _routing_key_indexes=[0])
    ps.routing_key_indexes = [0]  # the same: accepted
    assert ps.routing_key_indexes == [0]
    for other in (None, [1], [0, 1]):
        with pytest.raises(UnsupportedOperation, match="routing_key_indexes"):
            ps.routing_key_indexes = other
    assert ps.routing_key_indexes == [0]


def test_unregistered_udt_classes_as_classic():
    import cassandra.cqltypes as c_cqltypes

    import turbocql.cluster as t_cluster

    for name, fields in (
        ("address", ("street", "zip")),
        ("type2", ("test.field@#$%@%#!",)),
        ("test.field@#$%@%#!", ("test.field@#$%@%#!",)),
        ("kw", ("class", "_x", "ok")),
    ):
        c_cls = c_cqltypes.UserType._make_udt_tuple_type(name, fields)
        t_value = t_cluster._make_udt("parity_ks", name, fields, tuple(range(len(fields))))
        if c_cls is None:
            assert type(t_value) is tuple
        else:
            assert type(t_value)._fields == c_cls._fields and type(t_value).__name__ == c_cls.__name__
