"""turbocql.cqlengine against the real node: models of every column type round-tripped,
query sets, TTL / timestamp / LWT, BatchQuery, UDT models, NamedTable, schema management
and the connection registry; rows written by turbocql's models read back by the classic
cqlengine's (cassandra-driver's, in the test venv) and the other way round."""

import datetime
import decimal
import ipaddress
import uuid

import pytest

from tests.conftest import HOST, PORT
from tests.integration.conftest import cqlengine_in_keyspace
from turbocql.util import Date, Duration, Time

KS = "turbocql_cqlengine"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cqle(cassandra):
    yield from cqlengine_in_keyspace(KS)


def _models():
    from turbocql.cqlengine import columns, models, usertype

    class Address(usertype.UserType):
        __type_name__ = "tq_address"
        street = columns.Text()
        zipcode = columns.Integer(db_field="zip")

    class AllTypes(models.Model):
        __table_name__ = "all_types"
        id = columns.UUID(primary_key=True, default=uuid.uuid4)
        ck = columns.Integer(primary_key=True, clustering_order="DESC")
        a_ascii = columns.Ascii()
        a_text = columns.Text(index=True)
        a_blob = columns.Blob()
        a_inet = columns.Inet()
        a_tiny = columns.TinyInt()
        a_small = columns.SmallInt()
        a_big = columns.BigInt()
        a_var = columns.VarInt()
        a_float = columns.Float()
        a_double = columns.Double()
        a_dec = columns.Decimal()
        a_bool = columns.Boolean()
        a_ts = columns.DateTime()
        a_date = columns.Date()
        a_time = columns.Time()
        a_dur = columns.Duration()
        a_tuuid = columns.TimeUUID()
        a_set = columns.Set(columns.Text)
        a_list = columns.List(columns.Integer)
        a_map = columns.Map(columns.Text, columns.Double)
        a_tuple = columns.Tuple(columns.Integer, columns.Text)
        a_udt = columns.UserDefinedType(Address)

    return Address, AllTypes


def _values():
    return dict(
        ck=1,
        a_ascii="abc",
        a_text="héllo",
        a_blob=b"\x00\x01",
        a_inet="10.1.2.3",
        a_tiny=7,
        a_small=300,
        a_big=2**40,
        a_var=2**70,
        a_float=1.5,
        a_double=2.25,
        a_dec=decimal.Decimal("3.125"),
        a_bool=True,
        a_ts=datetime.datetime(2021, 5, 6, 7, 8, 9, 123000),
        a_date=Date(datetime.date(2020, 2, 29)),
        a_time=Time(datetime.time(12, 30, 1)),
        a_dur=Duration(1, 2, 3),
        a_tuuid=uuid.uuid1(),
        a_set={"x", "y"},
        a_list=[3, 1, 2],
        a_map={"k": 0.5},
        a_tuple=(4, "four"),
    )


def test_every_column_type_round_trips(cqle):
    from turbocql.cqlengine import management

    Address, AllTypes = _models()
    management.sync_table(AllTypes)
    vals = _values()
    row = AllTypes.create(a_udt=Address(street="Main", zipcode=12345), **vals)
    got = AllTypes.get(id=row.id, ck=1)
    for k, v in vals.items():
        assert getattr(got, k) == v, k
    assert got.a_udt.street == "Main" and got.a_udt.zipcode == 12345
    assert ipaddress.ip_address(got.a_inet) == ipaddress.ip_address("10.1.2.3")
    # the same row as the classic cqlengine sees it, on its own connection
    session = cqle.get_session()
    raw = session.execute("SELECT a_udt, a_var FROM %s.all_types WHERE id = %%s AND ck = 1" % KS, [row.id]).one()
    assert raw["a_var"] == 2**70


def test_update_save_delete_and_collections(cqle):
    from turbocql.cqlengine import management

    _, AllTypes = _models()
    management.sync_table(AllTypes)
    row = AllTypes.create(ck=2, a_list=[1], a_set={"a"}, a_map={"a": 1.0}, a_text="t")
    row.a_list = row.a_list + [2]
    row.a_text = None
    row.save()
    got = AllTypes.get(id=row.id, ck=2)
    assert got.a_list == [1, 2] and got.a_text is None
    AllTypes.objects(id=row.id, ck=2).update(a_list__prepend=[0], a_set__add={"b"}, a_map__update={"b": 2.0})
    got = AllTypes.get(id=row.id, ck=2)
    assert got.a_list == [0, 1, 2] and got.a_set == {"a", "b"} and got.a_map == {"a": 1.0, "b": 2.0}
    got.update(a_big=5)
    assert AllTypes.get(id=row.id, ck=2).a_big == 5
    got.delete()
    with pytest.raises(AllTypes.DoesNotExist):
        AllTypes.get(id=row.id, ck=2)


def _simple_model(name="simple_rows"):
    from turbocql.cqlengine import columns, models

    class Simple(models.Model):
        __table_name__ = name
        pk = columns.Integer(partition_key=True)
        ck = columns.Integer(primary_key=True)
        v = columns.Text()
        n = columns.Integer()

    return Simple


def test_filters_limits_and_allow_filtering(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.query import QueryException

    Simple = _simple_model()
    management.sync_table(Simple)
    for i in range(10):
        Simple.create(pk=1, ck=i, v="v%d" % i, n=i % 3)
    assert [r.ck for r in Simple.objects(pk=1).limit(3)] == [0, 1, 2]
    assert [r.ck for r in Simple.objects.filter(pk=1, ck__gte=7)] == [7, 8, 9]
    assert [r.ck for r in Simple.objects.filter(pk=1, ck__in=[2, 4])] == [2, 4]
    assert [r.ck for r in Simple.objects.filter(Simple.pk == 1, Simple.ck < 2)] == [0, 1]
    assert [r.ck for r in Simple.objects(pk=1).order_by("-ck").limit(2)] == [9, 8]
    assert Simple.objects(pk=1).count() == 10
    with pytest.raises(QueryException):
        list(Simple.objects.filter(n=0))
    assert sorted(r.ck for r in Simple.objects.filter(n=0).allow_filtering()) == [0, 3, 6, 9]
    assert Simple.objects(pk=1).values_list("ck", flat=True)[:3] == [0, 1, 2]
    assert Simple.objects(pk=1, ck=5).get().v == "v5"
    with pytest.raises(Simple.MultipleObjectsReturned):
        Simple.objects(pk=1).get()


def test_ttl_timestamp_if_not_exists_and_iff(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.query import LWTException

    Simple = _simple_model("lwt_rows")
    management.sync_table(Simple)
    Simple.ttl(3600).create(pk=2, ck=1, v="a")
    ttl = cqle.get_session().execute("SELECT TTL(v) FROM %s.lwt_rows WHERE pk = 2 AND ck = 1" % KS).one()
    assert 3000 < list(ttl.values())[0] <= 3600
    Simple.timestamp(datetime.timedelta(days=1)).create(pk=2, ck=2, v="future")
    Simple.create(pk=2, ck=2, v="now")  # older than the write above: lost
    assert Simple.get(pk=2, ck=2).v == "future"
    Simple.if_not_exists().create(pk=2, ck=3, v="first")
    with pytest.raises(LWTException) as e:
        Simple.if_not_exists().create(pk=2, ck=3, v="second")
    assert e.value.existing["v"] == "first"
    row = Simple.get(pk=2, ck=3)
    row.iff(v="first").update(v="third")
    with pytest.raises(LWTException):
        row.iff(v="first").update(v="fourth")
    assert Simple.get(pk=2, ck=3).v == "third"


def test_batch_query(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.query import BatchQuery

    Simple = _simple_model("batch_rows")
    management.sync_table(Simple)
    with BatchQuery() as b:
        for i in range(5):
            Simple.batch(b).create(pk=3, ck=i, v="b")
        assert Simple.objects(pk=3).count() == 0
    assert Simple.objects(pk=3).count() == 5
    with pytest.raises(RuntimeError):
        with BatchQuery() as b:
            Simple.batch(b).create(pk=3, ck=99)
            raise RuntimeError("not sent")
    assert Simple.objects(pk=3).count() == 5


def test_named_table(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.named import NamedKeyspace

    Simple = _simple_model("named_rows")
    management.sync_table(Simple)
    Simple.create(pk=4, ck=1, v="x")
    t = NamedKeyspace(KS).table("named_rows")
    rows = list(t.objects.filter(pk=4))
    assert rows[0]["v"] == "x" and rows[0].v == "x"
    assert t.get(pk=4, ck=1).v == "x"


def test_sync_table_adds_a_column(cqle):
    from turbocql.cqlengine import columns, management, models

    class Grows(models.Model):
        __table_name__ = "grows"
        id = columns.Integer(primary_key=True)

    management.sync_table(Grows)

    class Grows2(models.Model):
        __table_name__ = "grows"
        id = columns.Integer(primary_key=True)
        extra = columns.Text()

    management.sync_table(Grows2)
    Grows2.create(id=1, extra="new")
    assert Grows2.get(id=1).extra == "new"
    cols = cqle.get_cluster().metadata.keyspaces[KS].tables["grows"].columns
    assert "extra" in cols
    management.drop_table(Grows2)
    assert "grows" not in cqle.get_cluster().metadata.keyspaces[KS].tables


def test_keyspaces_and_registered_connections(cqle):
    from turbocql.cqlengine import CQLEngineException, connection, management

    connection.register_connection("second", hosts=[HOST], cluster_options={"port": PORT, "protocol_version": 4})
    try:
        management.create_keyspace_network_topology("tq_cqle_nts", {"datacenter1": 1}, connections=["second"])
        assert "tq_cqle_nts" in connection.get_cluster("second").metadata.keyspaces
        Simple = _simple_model("on_second")
        Simple.__keyspace__ = "tq_cqle_nts"
        management.sync_table(Simple, connections=["second"])
        Simple.objects.using(connection="second").create(pk=1, ck=1, v="2nd")
        assert Simple.objects.using(connection="second").get(pk=1, ck=1).v == "2nd"
        management.drop_keyspace("tq_cqle_nts", connections=["second"])
        assert "tq_cqle_nts" not in connection.get_cluster("second").metadata.keyspaces
    finally:
        connection.unregister_connection("second")
    with pytest.raises(CQLEngineException):
        connection.get_connection("second")


def test_rows_agree_with_the_classic_cqlengine(cqle):
    """A table written through turbocql's models, read through the classic cqlengine's
    models of the same table (and written by those, read by turbocql's)."""
    classic = pytest.importorskip("cassandra.cqlengine.connection")
    import cassandra

    if "turbocql" in getattr(cassandra, "__file__", "") or not hasattr(classic, "register_connection"):
        pytest.skip("the classic driver is not importable as cassandra here")
    from cassandra.cqlengine import columns as ccols
    from cassandra.cqlengine import models as cmodels

    from turbocql.cqlengine import management

    Simple = _simple_model("cross_rows")
    management.sync_table(Simple)

    class CSimple(cmodels.Model):
        __table_name__ = "cross_rows"
        __keyspace__ = KS
        __connection__ = "classic"
        pk = ccols.Integer(partition_key=True)
        ck = ccols.Integer(primary_key=True)
        v = ccols.Text()
        n = ccols.Integer()

    classic.register_connection("classic", hosts=[HOST], cluster_options={"port": PORT, "protocol_version": 4})
    try:
        Simple.create(pk=9, ck=1, v="from turbocql", n=1)
        CSimple.create(pk=9, ck=2, v="from classic", n=2)
        mine = [(r.ck, r.v, r.n) for r in Simple.objects(pk=9)]
        theirs = [(r.ck, r.v, r.n) for r in CSimple.objects(pk=9)]
        assert mine == theirs == [(1, "from turbocql", 1), (2, "from classic", 2)]
        assert Simple.objects(pk=9, ck__gt=1).count() == CSimple.objects(pk=9, ck__gt=1).count() == 1
    finally:
        classic.unregister_connection("classic")
