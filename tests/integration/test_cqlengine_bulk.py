"""Where turbocql's engine helps cqlengine, against the real node: ``bulk_save`` writes the
rows ``save()`` writes (defaults, UDTs, collections, nulls left unset, static-only rows),
refuses what it cannot honour before sending anything, and reports the rows that failed
while keeping the rest; a read builds each model instance in one pass, the same instance
``Model(**row)`` then ``_set_persisted`` gives (the classic construction)."""

import uuid
import warnings

import pytest

from tests.integration.conftest import cqlengine_in_keyspace

KS = "turbocql_cqlengine_bulk"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cqle(cassandra):
    yield from cqlengine_in_keyspace(KS)


def _models(suffix):
    from turbocql.cqlengine import columns, models, usertype

    class Place(usertype.UserType):
        __type_name__ = "bulk_place"
        city = columns.Text()
        zipcode = columns.Integer(db_field="zip")

    class Event(models.Model):
        __table_name__ = f"event_{suffix}"
        day = columns.Integer(partition_key=True)
        seq = columns.Integer(primary_key=True)
        note = columns.Text()
        count = columns.Integer(default=7)
        tags = columns.Set(columns.Text)
        scores = columns.List(columns.Double)
        where = columns.UserDefinedType(Place)
        owner = columns.UUID(default=uuid.uuid4)
        title = columns.Text(static=True)

    return Place, Event


def _instances(Place, Event, n):
    out = []
    for i in range(n):
        out.append(
            Event(
                day=i % 7,
                seq=i,
                note=None if i % 3 == 0 else f"note {i}",
                tags={f"t{i % 4}"} if i % 2 else set(),
                scores=[i * 0.5, 1.0] if i % 5 else None,
                where=Place(city=f"c{i}", zipcode=i) if i % 4 else None,
                title=f"day {i % 7}",
            )
        )
    return out


def _rows(session, table):
    rows = session.execute(f"SELECT * FROM {KS}.{table}")
    return sorted((dict(r) for r in rows), key=lambda r: (r["day"], r["seq"]))


def test_bulk_save_writes_what_save_writes(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.query import bulk_save

    Place, Saved = _models("saved")
    _, Bulk = _models("bulk")
    management.sync_type(KS, Place)
    management.sync_table(Saved)
    management.sync_table(Bulk)
    one_by_one = _instances(Place, Saved, 300)
    for inst in one_by_one:
        inst.save()
    bulk = _instances(Place, Bulk, 300)
    # the same default-making values on both sides (owner is a fresh uuid per instance)
    for a, b in zip(one_by_one, bulk):
        b.owner = a.owner
    assert bulk_save(bulk, concurrency=32) is not None
    session = cqle.get_session()
    saved, written = _rows(session, "event_saved"), _rows(session, "event_bulk")
    assert len(written) == 300
    assert written == saved
    assert written[3]["count"] == 7  # a default is written as save() writes it
    # every instance is persisted: a later save() is an UPDATE of what changed
    inst = bulk[10]
    assert inst._is_persisted and not inst.get_changed_columns()
    inst.note = "changed"
    inst.save()
    got = Bulk.objects(day=inst.day, seq=inst.seq).get()
    assert got.note == "changed" and got.where == inst.where and got.owner == inst.owner
    # a null column is left unset, not written as a tombstone: nothing to read back as a cell
    traced = session.execute(f"SELECT WRITETIME(note) FROM {KS}.event_bulk WHERE day = 0 AND seq = 0").one()
    assert list(traced.values()) == [None]


def test_bulk_save_static_only_rows_and_ttl(cqle):
    from turbocql.cqlengine import management
    from turbocql.cqlengine.query import bulk_save

    Place, Event = _models("static")
    management.sync_type(KS, Place)
    management.sync_table(Event)
    # no clustering key: save() writes the partition key and the static column only
    bulk_save([Event(day=1, title="only static"), Event(day=2, title="also static")], ttl=600)
    session = cqle.get_session()
    rows = _rows(session, "event_static")
    assert [(r["day"], r["seq"], r["title"]) for r in rows] == [(1, None, "only static"), (2, None, "also static")]
    ttl = session.execute(f"SELECT TTL(title) FROM {KS}.event_static WHERE day = 1").one()
    assert 0 < list(ttl.values())[0] <= 600
    # an instance's own keyspace is where its row goes, as save() writes it
    other = KS + "_other"
    management.create_keyspace_simple(other, 1)
    try:
        with warnings.catch_warnings():
            # sync_table(keyspaces=...) syncs a copy of the model that keeps its exact table
            # name, which warns as the case-sensitive name option does.
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            management.sync_table(Event, keyspaces=[other])
        moved = Event(day=3, seq=1, title="elsewhere")
        moved.__keyspace__ = other
        bulk_save([moved])
        assert [r["seq"] for r in session.execute(f"SELECT seq FROM {other}.event_static")] == [1]
        assert [r["day"] for r in _rows(session, "event_static")] == [1, 2]
    finally:
        management.drop_keyspace(other)


def test_bulk_save_refuses_before_sending(cqle):
    from turbocql.cqlengine import ValidationError, columns, management, models
    from turbocql.cqlengine.query import bulk_save

    Place, Event = _models("refused")
    management.sync_type(KS, Place)
    management.sync_table(Event)
    session = cqle.get_session()

    class Hits(models.Model):
        __table_name__ = "bulk_hits"
        page = columns.Text(primary_key=True)
        n = columns.Counter()

    persisted = Event.create(day=0, seq=0)
    with_ttl = Event(day=0, seq=1).ttl(60)
    cases = [
        ([Event(day=0, seq=2), persisted], "already persisted"),
        ([Event(day=0, seq=3), with_ttl], "own ttl setting"),
        ([Hits(page="a")], "counter column"),
        (["not a model"], "model instances"),
    ]
    for instances, message in cases:
        with pytest.raises(ValueError, match=message):
            bulk_save(instances)
    # a value a column refuses: ValidationError, and no row of the call is written
    with pytest.raises(ValidationError):
        bulk_save([Event(day=0, seq=5), Event(day=0, seq="not an int")])
    assert [r["seq"] for r in _rows(session, "event_refused")] == [0]


def test_bulk_save_reports_failed_rows_and_keeps_the_rest(cqle):
    from turbocql import InvalidRequest
    from turbocql.cqlengine import columns, management, models
    from turbocql.cqlengine.query import BulkSaveError, bulk_save

    class Keyed(models.Model):
        __table_name__ = "bulk_keyed"
        pk = columns.Integer(partition_key=True)
        name = columns.Text(primary_key=True)

    management.sync_table(Keyed)
    # a clustering key past 65535 bytes is refused by the node, row by row
    instances = [Keyed(pk=i, name="x" * (70000 if i in (3, 8) else 5)) for i in range(12)]
    with pytest.raises(BulkSaveError, match="2 of 12 instances were not written") as err:
        bulk_save(instances)
    failed = [inst for inst, _exc in err.value.failures]
    assert [inst.pk for inst in failed] == [3, 8]
    assert all(isinstance(exc, InvalidRequest) for _inst, exc in err.value.failures)
    assert isinstance(err.value.__cause__, InvalidRequest)
    assert not any(inst._is_persisted for inst in failed)
    written = sorted(r["pk"] for r in cqle.get_session().execute(f"SELECT pk FROM {KS}.bulk_keyed"))
    assert written == [i for i in range(12) if i not in (3, 8)]
    assert all(inst._is_persisted for inst in instances if inst.pk not in (3, 8))


def _state(instance):
    return {
        name: (vm.value, vm.previous_value, vm.explicit, type(vm).__name__) for name, vm in instance._values.items()
    } | {k: getattr(instance, k) for k in ("_is_persisted", "_ttl", "_timestamp", "_batch", "_if_not_exists")}


def test_rows_become_the_instances_the_classic_construction_gives(cqle):
    from turbocql.cqlengine import columns, management, models

    Place, Event = _models("read")
    management.sync_type(KS, Place)
    management.sync_table(Event)
    for inst in _instances(Place, Event, 40):
        inst.save()
    read = sorted(Event.objects.all(), key=lambda m: (m.day, m.seq))
    assert len(read) == 40
    rows = _rows(cqle.get_session(), "event_read")
    for inst, row in zip(read, rows):
        # the classic construction, through __init__
        slow = Event(**row)
        slow._set_persisted(force=True)
        assert _state(inst) == _state(slow)
        assert inst.get_changed_columns() == []
    # a column not selected takes its default, as Model(**row) gives it
    partial = Event.objects(day=1).only(["day", "seq"]).first()
    assert partial.count == 7 and partial.note is None
    # a model that keeps its own __init__ is still built through it
    calls = []

    class Custom(models.Model):
        __table_name__ = "event_read"
        day = columns.Integer(partition_key=True)
        seq = columns.Integer(primary_key=True)
        note = columns.Text()

        def __init__(self, **values):
            calls.append(values.get("seq"))
            super().__init__(**values)

    got = Custom.objects(day=2).limit(3)
    assert [m.seq for m in got] == calls[-3:]
    # containers are copied for the saved value, so an in-place change is a change
    inst = next(m for m in read if m.tags)
    inst.tags.add("new")
    assert "tags" in inst.get_changed_columns()
