"""turbocql.spark's option checks and CQL <-> Spark conversions, without Spark running or a
node: options parsed or refused by name, CQL type strings parsed, and Arrow columns
converted to Spark's form and back (uuid text, duration structs, time nanoseconds, tuples)."""

import uuid

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from turbocql.spark import _options, _types  # noqa: E402


def test_options_defaults_and_refusals():
    opts = {"Keyspace": "ks", "TABLE": "t", "contact_points": "a, b", "consistency": "local_quorum"}
    o = _options.parse(opts, "read")
    assert (o.keyspace, o.table, o.split, o.page_size, o.allow_filtering) == ("ks", "t", 16, 5000, False)
    assert o.connection.contact_points == ("a", "b") and o.consistency == 6
    with pytest.raises(ValueError, match="unknown turbocql option confirm_truncate .*only for a write"):
        _options.parse({"keyspace": "ks", "table": "t", "confirm_truncate": "true"}, "read")
    with pytest.raises(ValueError, match="option table is required"):
        _options.parse({"keyspace": "ks"}, "write")
    with pytest.raises(ValueError, match="page_size must be at least 1"):
        _options.parse({"keyspace": "ks", "table": "t", "page_size": "0"}, "read")
    with pytest.raises(ValueError, match="allow_filtering must be true or false"):
        _options.parse({"keyspace": "ks", "table": "t", "allow_filtering": "maybe"}, "read")
    with pytest.raises(ValueError, match="ssl_cert and ssl_key go together"):
        _options.parse({"keyspace": "ks", "table": "t", "ssl_cert": "c.pem"}, "read")
    tls = _options.parse({"keyspace": "ks", "table": "t", "ssl_ca": "ca.pem", "ssl_check_hostname": "false"}, "write")
    assert dict(tls.connection.ssl_options)["ca_certs"] == "ca.pem"
    assert dict(tls.connection.ssl_options)["check_hostname"] is False


def test_types_parse_and_spark_types():
    udts = {"addr": (["street", "no"], ["text", "int"])}
    t = _types.parse("map<text, frozen<list<frozen<tuple<uuid, duration, frozen<addr>>>>>>", udts.get)
    assert _types.spark_type(t).simpleString() == (
        "map<string,array<struct<_1:string,_2:struct<months:int,days:int,nanoseconds:bigint>,"
        "_3:struct<street:string,no:int>>>>"
    )
    assert _types.spark_type(_types.parse("vector<float, 3>", udts.get)).simpleString() == "array<float>"
    with pytest.raises(ValueError, match="custom CQL type"):
        _types.parse("'org.apache.cassandra.db.marshal.BytesType'", udts.get)
    with pytest.raises(ValueError, match="not a user type"):
        _types.parse("frozen<nothere>", udts.get)


def test_arrow_conversions_round_trip():
    u = uuid.uuid4()
    storage = pa.array([u.bytes, None, uuid.UUID(int=0).bytes], pa.binary(16))
    ids = _types.to_spark(pa.ExtensionArray.from_storage(pa.uuid(), storage).slice(0), _types.CqlType("uuid"))
    assert ids.to_pylist() == [str(u), None, "00000000-0000-0000-0000-000000000000"]

    durations = pa.array([(1, 2, 3), None, (-1, -2, -3)], pa.month_day_nano_interval())
    as_struct = _types.to_spark(durations.slice(1), _types.CqlType("duration"))
    assert as_struct.to_pylist() == [None, {"months": -1, "days": -2, "nanoseconds": -3}]
    back = _types.from_spark(as_struct, _types.CqlType("duration"))
    assert back.equals(durations.slice(1))

    time = _types.CqlType("time")
    nested = _types.CqlType("list", (_types.CqlType("tuple", (time, _types.CqlType("text"))),))
    values = pa.array([[(5, "a")], None, []], pa.list_(pa.struct([("0", pa.time64("ns")), ("1", pa.string())])))
    spark_side = _types.to_spark(values, nested)
    assert spark_side.to_pylist() == [[{"_1": 5, "_2": "a"}], None, []]
    engine_side = _types.from_spark(spark_side, nested)
    assert engine_side.type.value_type.field(0).type == pa.time64("ns")
    assert engine_side.to_pylist()[1:] == [None, []]
