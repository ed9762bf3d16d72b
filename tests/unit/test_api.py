"""The classic API surface without a server: names, exceptions, statements, row
factories, value types, Cluster argument checks."""

import datetime
import pickle

import pytest

import turbocql
from turbocql import (
    AlreadyExists,
    ConsistencyLevel,
    OperationTimedOut,
    Unavailable,
    WriteTimeout,
    WriteType,
)
from turbocql.cluster import Cluster, NoHostAvailable, UnsupportedOperation
from turbocql.query import (
    UNSET_VALUE,
    BatchStatement,
    BatchType,
    SimpleStatement,
    dict_factory,
    named_tuple_factory,
    ordered_dict_factory,
    tuple_factory,
)
from turbocql.util import Date, Duration, OrderedMap, SortedSet, Time


def test_consistency_levels_match_the_protocol():
    assert ConsistencyLevel.ONE == 1 and ConsistencyLevel.LOCAL_ONE == 10
    assert ConsistencyLevel.value_to_name[4] == "QUORUM"
    assert ConsistencyLevel.name_to_value["LOCAL_SERIAL"] == 9


def test_exception_hierarchy_and_fields():
    assert issubclass(turbocql.InvalidRequest, turbocql.RequestValidationException)
    assert issubclass(turbocql.ReadTimeout, turbocql.Timeout)
    from turbocql.protocol import SyntaxException

    assert issubclass(SyntaxException, turbocql.RequestValidationException)
    e = Unavailable("msg", consistency=4, required_replicas=2, alive_replicas=1)
    assert (e.consistency, e.required_replicas, e.alive_replicas) == (4, 2, 1)
    assert "QUORUM" in str(e)
    w = WriteTimeout("msg", consistency=1, required_responses=1, received_responses=0, write_type="BATCH_LOG")
    assert w.write_type == WriteType.BATCH_LOG
    a = AlreadyExists(keyspace="ks", table="t")
    assert "ks.t" in str(a) and a.table == "t"
    o = OperationTimedOut(errors="x", last_host="h")
    assert o.errors == "x" and o.last_host == "h"
    n = NoHostAvailable("none", {"h": ValueError("x")})
    assert list(n.errors) == ["h"]


def test_row_factories():
    cols, rows = ("a", "b"), [(1, 2), (3, 4)]
    assert tuple_factory(cols, rows) == rows
    nt = named_tuple_factory(cols, rows)
    assert nt[0].a == 1 and nt[1].b == 4
    assert type(nt[0]) is type(named_tuple_factory(cols, rows)[0]), "class is cached"
    assert dict_factory(cols, rows) == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert list(ordered_dict_factory(cols, rows)[0]) == ["a", "b"]
    odd = named_tuple_factory(("count(*)", "[applied]", "1x"), [(1, True, 2)])[0]
    assert tuple(odd) == (1, True, 2)


def test_unset_value_is_a_singleton():
    assert pickle.loads(pickle.dumps(UNSET_VALUE)) is UNSET_VALUE
    assert repr(UNSET_VALUE) == "UNSET_VALUE"


def test_statements():
    s = SimpleStatement("SELECT 1", consistency_level=ConsistencyLevel.QUORUM, fetch_size=10)
    assert s.query_string == "SELECT 1" and s.fetch_size == 10 and s.consistency_level == 4
    with pytest.raises(ValueError):
        SimpleStatement("x", serial_consistency_level=ConsistencyLevel.ONE)
    b = BatchStatement(BatchType.UNLOGGED)
    b.add("INSERT INTO t (a) VALUES (%s)", ("it's",))
    assert b._statements_and_parameters == [(False, "INSERT INTO t (a) VALUES ('it''s')", ())]
    with pytest.raises(TypeError):
        b.add(42)
    assert str(BatchType.COUNTER) == "COUNTER"


def test_cluster_argument_checks():
    assert Cluster().contact_points == ["127.0.0.1"]
    assert Cluster(compression=False).compression is None
    assert Cluster(compression=True).compression == "lz4"
    with pytest.raises(ValueError):
        Cluster(compression="zstd")
    with pytest.raises(TypeError, match="ssl_context must be an ssl.SSLContext"):
        Cluster(ssl_context=object())
    with pytest.raises(ValueError, match="unknown ssl_options"):
        Cluster(ssl_options={"ca_cert": "typo.pem"})
    with pytest.raises(ValueError):
        Cluster(protocol_version="4")


@pytest.mark.parametrize("version", [3, 5])
def test_a_protocol_version_the_engine_does_not_speak_is_refused(version):
    """The engine speaks v4 only: another version raises, at construction and when set
    later, rather than be accepted and ignored."""
    with pytest.raises(UnsupportedOperation, match="protocol_version=%d is not supported" % version):
        Cluster(protocol_version=version)
    cluster = Cluster()
    with pytest.raises(UnsupportedOperation, match="speaks native protocol v4 only"):
        cluster.protocol_version = version
    assert cluster.protocol_version == 4


def test_protocol_version_4_and_unset_are_v4():
    assert Cluster(protocol_version=4).protocol_version == 4
    assert Cluster().protocol_version == 4


def test_a_cql_version_is_refused():
    with pytest.raises(UnsupportedOperation, match="cql_version='3.4.5' is not supported"):
        Cluster(cql_version="3.4.5")
    cluster = Cluster(cql_version=None)
    assert cluster.cql_version is None
    with pytest.raises(UnsupportedOperation, match="cql_version"):
        cluster.cql_version = "3.4.0"


def test_util_types():
    d = Date(datetime.date(2024, 2, 29))
    assert d == Date(d.days_from_epoch) and d.date() == datetime.date(2024, 2, 29)
    assert str(Date(-(2**31))) == str(-(2**31))
    t = Time("12:34:56.123456789")
    assert (t.hour, t.minute, t.second, t.nanosecond) == (12, 34, 56, 123456789)
    assert Time(datetime.time(1, 2, 3)) == 3723 * 10**9
    with pytest.raises(ValueError):
        Time(86400 * 10**9)
    assert Duration(1, 2, 3) == Duration(1, 2, 3) != Duration(1, 2, 4)
    s = SortedSet([3, 1, 2, 1])
    assert list(s) == [1, 2, 3] and s == {1, 2, 3} and 2 in s and 5 not in s
    unhashable = SortedSet([[2], [1]])
    assert list(unhashable) == [[1], [2]]
    assert OrderedMap([(1, "a")]) == {1: "a"}
    assert OrderedMap([([1, 2], "a")]) == {(1, 2): "a"}


@pytest.mark.parametrize("version", [1, 2, 6, 65, 66, 99])
def test_a_version_no_current_server_speaks_fails_at_connect_as_classic(version):
    """1 and 2 (refused by Cassandra 3.0+ and ScyllaDB), the v6 beta, DSE's versions and
    unknown numbers: kept by Cluster() and refused at connect with NoHostAvailable (where
    the classic driver fails against Cassandra), each contact point's error naming the
    cause; no connection is tried."""
    from turbocql.cluster import NoHostAvailable

    cluster = Cluster(["127.0.0.1", "127.0.0.2"], port=1, protocol_version=version)
    assert cluster.protocol_version == version
    with pytest.raises(NoHostAvailable) as raised:
        cluster.connect()
    errors = raised.value.errors
    assert sorted(errors) == ["127.0.0.1:1", "127.0.0.2:1"]
    for error in errors.values():
        assert isinstance(error, UnsupportedOperation) and "protocol_version=%d" % version in str(error)
    cluster.protocol_version = 4
    assert cluster.protocol_version == 4


def test_auth_provider_is_checked_when_set_as_classic():
    """An auth_provider that is no AuthProvider raises TypeError, at Cluster() and when
    assigned later; under protocol v1 (which fails at connect) it must be callable."""
    from turbocql.auth import PlainTextAuthProvider

    with pytest.raises(TypeError, match="AuthProvider interface when protocol_version >= 2"):
        Cluster(auth_provider=lambda host: {"username": "u"})
    cluster = Cluster()
    with pytest.raises(TypeError, match="AuthProvider interface"):
        cluster.auth_provider = 1
    with pytest.raises(TypeError, match="must be callable when protocol_version == 1"):
        Cluster(auth_provider=1, protocol_version=1)
    provider = PlainTextAuthProvider("u", "p")
    cluster.auth_provider = provider
    assert cluster.auth_provider is provider
    cluster.auth_provider = None
    assert cluster.auth_provider is None


def test_contact_points_none_is_the_default_as_classic(caplog):
    """``Cluster(None)`` (cqlengine's ``connection.setup(hosts=None)``) is the default
    contact point, not an explicit one (no warning about a missing load-balancing policy);
    a None among them raises ValueError."""
    cluster = Cluster(None)
    assert cluster.contact_points == ["127.0.0.1"]
    assert "contact_points specified" not in caplog.text
    with pytest.raises(ValueError, match="should not contain None"):
        Cluster(["127.0.0.1", None])
