"""cqlengine's routing key of a composite partition key: the bytes of each part, made by the
engine through the types' classes, are the classic cqlengine's (cassandra-driver, in the
venv). No server: models are declared, not synced."""

import datetime
import uuid
from decimal import Decimal

import pytest

c_columns = pytest.importorskip("cassandra.cqlengine.columns")
c_models = pytest.importorskip("cassandra.cqlengine.models")

import turbocql.cluster  # noqa: E402, F401 - the engine's classes (uuid, Decimal, ...)
from turbocql import util  # noqa: E402
from turbocql.cqlengine import columns as t_columns  # noqa: E402
from turbocql.cqlengine import models as t_models  # noqa: E402

KEY_COLUMNS = (
    ("k_uuid", "UUID", uuid.UUID("3d6f0a3e-1c2b-4e5f-9a8b-7c6d5e4f3a2b")),
    ("k_timeuuid", "TimeUUID", uuid.UUID("6b9e6a5c-8c3e-11ee-b9d1-0242ac120002")),
    ("k_text", "Text", "héllo ☃"),
    ("k_ascii", "Ascii", "plain"),
    ("k_int", "Integer", -(2**31)),
    ("k_bigint", "BigInt", 2**63 - 1),
    ("k_smallint", "SmallInt", -7),
    ("k_tinyint", "TinyInt", 127),
    ("k_varint", "VarInt", 2**70 + 1),
    ("k_boolean", "Boolean", True),
    ("k_float", "Float", 1.5),
    ("k_double", "Double", -2.25e300),
    ("k_decimal", "Decimal", Decimal("-12.345")),
    ("k_timestamp", "DateTime", datetime.datetime(1965, 3, 4, 5, 6, 7, 123456)),
    ("k_date", "Date", datetime.date(1901, 2, 3)),
    ("k_time", "Time", datetime.time(23, 59, 59, 999999)),
    ("k_inet", "Inet", "2001:db8::7"),
    ("k_blob", "Blob", b"\x00\xffkey"),
)


def _model(models, columns, name):
    attrs = {"__keyspace__": "routing_ks", "__table_name__": name, "v": columns.Text()}
    for col_name, kind, _ in KEY_COLUMNS:
        attrs[col_name] = getattr(columns, kind)(partition_key=True)
    return type(name, (models.Model,), attrs)


def test_composite_partition_key_as_classic():
    classic = _model(c_models, c_columns, "Classic")
    turbo = _model(t_models, t_columns, "Turbo")
    values = [v for _, _, v in KEY_COLUMNS]
    # The classic one takes the statement's values (already to_database'd); turbocql's
    # takes the model's own and converts them.
    db_values = [col.to_database(v) for col, v in zip(classic._partition_keys.values(), values)]
    for protocol_version in (3, 4, 5):
        want = classic._routing_key_from_values(db_values, protocol_version)
        got = turbo._routing_key_from_values(values, protocol_version)
        assert got == want
    assert len(got) == len(KEY_COLUMNS)
    assert got[KEY_COLUMNS.index(("k_date", "Date", datetime.date(1901, 2, 3)))] == (
        (util.Date(datetime.date(1901, 2, 3)).days_from_epoch + 2**31).to_bytes(4, "big")
    )
