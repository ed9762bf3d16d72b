"""Real applications, unmodified from PyPI, run their own workflows on turbocql through the
shim and on the classic driver, against the same node, each driver in its own keyspace.

- django-cassandra-engine (a Django database backend over cqlengine): a project of ours
  (settings, an app with a model) synced by ``manage.py sync_cassandra``, then a script
  that saves, queries, updates and deletes through the app's Django-style manager.
- cstar-migrate (the maintained fork of cassandra-migrate, whose last release cannot be
  installed beside cassandra-driver 3.30.1: it pins cassandra-driver==3.24.0, click==7.1.2
  and a PyYAML 5 that does not build on Python 3.11): a migrations directory of ours (CQL
  and Python migrations) applied by ``cstar-migrate migrate`` and listed by ``status``.

Each workflow runs in subprocesses twice, with plain ``python`` (the classic driver) and
with ``python -m turbocql.compat --allow-shadow`` (the same command line after it); what
each produced (the script's output, the listed status, the rows and migration versions
in the node) must be the same.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import turbocql
from tests.conftest import HOST, PORT

DRIVERS = ("classic", "turbocql")

# The turbocql under test, for the subprocesses (a checkout's python/ or site-packages).
TURBOCQL_PATH = str(Path(turbocql.__file__).resolve().parent.parent)


def _run(argv, driver, cwd, env=None):
    shim = ["-m", "turbocql.compat", "--allow-shadow"] if driver == "turbocql" else []
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCQL_COMPAT")}
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(cwd), TURBOCQL_PATH, os.environ.get("PYTHONPATH")) if p)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, *shim, *argv],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, "%s %s\nstdout:\n%s\nstderr:\n%s" % (driver, argv, proc.stdout, proc.stderr[-4000:])
    return proc


@pytest.fixture
def fresh_keyspaces(cluster):
    """Names for the apps' keyspaces (each app creates its own), new to the node: a keyspace
    dropped and made again under the same name can fail the first reads of its tables
    ("Unknown CF"). Dropped at the end."""
    session = cluster.connect()
    names = []

    def make(app):
        run = uuid.uuid4().hex[:8]
        made = {driver: "turbocql_apps_%s_%s_%s" % (app, driver, run) for driver in DRIVERS}
        names.extend(made.values())
        return made

    yield make, session
    for name in names:
        session.execute("DROP KEYSPACE IF EXISTS %s" % name)
    session.shutdown()


SETTINGS = """\
import os

SECRET_KEY = "not-a-secret"
INSTALLED_APPS = ["django_cassandra_engine", "shop"]
DATABASES = {
    "default": {
        "ENGINE": "django_cassandra_engine",
        "NAME": os.environ["SHOP_KEYSPACE"],
        "HOST": %(host)r,
        "OPTIONS": {
            "replication": {"strategy_class": "SimpleStrategy", "replication_factor": 1},
            "connection": {"port": %(port)d},
        },
    }
}
USE_TZ = False
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
"""

MODELS = """\
import uuid

from cassandra.cqlengine import columns
from django_cassandra_engine.models import DjangoCassandraModel


class Item(DjangoCassandraModel):
    shelf = columns.Text(partition_key=True)
    sku = columns.Integer(primary_key=True, clustering_order="DESC")
    name = columns.Text()
    price = columns.Decimal()
    tags = columns.Set(columns.Text)
    uid = columns.UUID(default=uuid.uuid4)

    class Meta:
        get_pk_field = "shelf"
"""

MANAGE = """\
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
from django.core.management import execute_from_command_line

execute_from_command_line(sys.argv)
"""

# Prices have no trailing zeros: the classic driver inlines a Decimal through float (0.10
# is written 0.1), turbocql writes its exact digits.
SHOP = """\
import decimal
import json
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
import django

django.setup()
import cassandra
from django.core import serializers
from django.forms.models import model_to_dict

from shop.models import Item

out = {"driver": cassandra.__name__}
Item.objects.create(shelf="a", sku=1, name="bolt", price=decimal.Decimal("0.25"), tags={"metal"})
Item.objects.create(shelf="a", sku=2, name="nut", price=decimal.Decimal("0.1"), tags={"metal", "small"})
glue = Item(shelf="b", sku=7, name="glue", price=decimal.Decimal("3.5"))
glue.save()
out["all"] = sorted((i.shelf, i.sku) for i in Item.objects.all())
out["shelf_a"] = [(i.sku, i.name, str(i.price), sorted(i.tags)) for i in Item.objects.filter(shelf="a")]
got = Item.objects.get(shelf="b", sku=7)
out["get"] = [got.pk, got.name, str(got.price), sorted(got.tags)]
got.name = "epoxy"
got.save()
out["saved"] = Item.objects.get(shelf="b", sku=7).name
Item.objects.filter(shelf="a", sku=2).update(name="hexnut")
out["updated"] = Item.objects.get(shelf="a", sku=2).name
out["pk"] = sorted(i.sku for i in Item.objects.filter(pk="a"))
out["in"] = sorted(i.name for i in Item.objects.filter(shelf__in=["a", "b"]))
out["ordered"] = [i.sku for i in Item.objects.filter(shelf="a").order_by("sku")]
out["values"] = list(Item.objects.filter(shelf="a").values_list("sku", flat=True))
out["limit"] = [i.sku for i in Item.objects.filter(shelf="a").limit(1)]
out["only"] = [(i.sku, i.name) for i in Item.objects.filter(shelf="a").only(["sku", "name"])]
nut = model_to_dict(Item.objects.get(shelf="a", sku=2))
out["model_to_dict"] = sorted((k, str(sorted(v) if k == "tags" else v)) for k, v in nut.items() if k != "uid")
out["meta"] = [Item._meta.pk.name, Item._meta.label, [f.name for f in Item._meta.get_fields()]]
out["serialized"] = json.loads(serializers.serialize("json", Item.objects.filter(shelf="b")))
Item.objects.filter(shelf="a", sku=1).delete()
out["after_delete"] = Item.objects.filter(shelf="a").count()
out["exists"] = [Item.objects.filter(shelf="b").exists(), Item.objects.filter(shelf="zz").exists()]
try:
    Item.objects.get(shelf="zz", sku=0)
except Item.DoesNotExist as exc:
    out["missing"] = type(exc).__name__
print(json.dumps(out))
"""


def _django_project(root):
    (root / "shop").mkdir(parents=True)
    (root / "settings.py").write_text(SETTINGS % {"host": HOST, "port": PORT})
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "models.py").write_text(MODELS)
    (root / "manage.py").write_text(MANAGE)
    (root / "shop_workflow.py").write_text(SHOP)


@pytest.mark.timeout(90)
def test_django_cassandra_engine_model_synced_saved_and_queried(tmp_path, fresh_keyspaces):
    make, session = fresh_keyspaces
    keyspaces = make("django")
    # The keyspaces are made here, not by sync_cassandra: on a loaded node the classic
    # driver's metadata, refreshed by the command right after its CREATE KEYSPACE, at times
    # still lacks the keyspace, and the sync stops there ("Keyspace ... does not exist").
    # The command still runs its keyspace step (which finds it there) and makes the table.
    for keyspace in keyspaces.values():
        session.execute(
            "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace
        )
    _django_project(tmp_path)
    synced, outputs, tables = {}, {}, {}
    for driver, keyspace in keyspaces.items():
        env = {"SHOP_KEYSPACE": keyspace, "CQLENG_ALLOW_SCHEMA_MANAGEMENT": "1"}
        # The second sync finds the table there: the path that compares it with the model.
        runs = [_run(["manage.py", "sync_cassandra"], driver, tmp_path, env) for _ in range(2)]
        synced[driver] = [(run.stdout.replace(keyspace, "KS"), run.stderr) for run in runs]
        outputs[driver] = json.loads(_run(["shop_workflow.py"], driver, tmp_path, env).stdout.splitlines()[-1])
        tables[driver] = (
            sorted(
                (c.column_name, c.kind, c.type)
                for c in session.execute(
                    "SELECT column_name, kind, type FROM system_schema.columns "
                    "WHERE keyspace_name = %s AND table_name = 'item'",
                    (keyspace,),
                )
            ),
            sorted(tuple(r) for r in session.execute("SELECT shelf, sku, name, price FROM %s.item" % keyspace)),
        )

    # Same output, and no warnings: the copy of the model sync_table makes for the keyspace
    # is not registered with Django as a second shop.Item.
    assert synced["turbocql"] == synced["classic"]
    assert synced["turbocql"][0] == ("Creating keyspace KS [CONNECTION default] ..\nSyncing shop.models.Item\n", "")
    assert outputs["classic"].pop("driver") == "cassandra"
    assert outputs["turbocql"].pop("driver") == "turbocql"
    assert outputs["turbocql"] == outputs["classic"]
    out = outputs["turbocql"]
    assert out["all"] == [["a", 1], ["a", 2], ["b", 7]]
    assert out["shelf_a"] == [[2, "nut", "0.1", ["metal", "small"]], [1, "bolt", "0.25", ["metal"]]]
    assert out["get"] == ["b", "glue", "3.5", []]
    assert (out["saved"], out["updated"]) == ("epoxy", "hexnut")
    assert out["pk"] == [1, 2] and out["in"] == ["bolt", "epoxy", "hexnut"]
    assert out["ordered"] == [1, 2] and out["values"] == [2, 1] and out["limit"] == [2]
    assert out["only"] == [[2, "hexnut"], [1, "bolt"]]
    assert dict(out["model_to_dict"]) == {
        "shelf": "a",
        "sku": "2",
        "name": "hexnut",
        "price": "0.1",
        "tags": "['metal', 'small']",
    }
    assert out["meta"] == ["shelf", "shop.Item", ["shelf", "sku", "name", "price", "tags", "uid"]]
    assert [(o["model"], o["pk"]) for o in out["serialized"]] == [("shop.item", "b")]
    assert out["after_delete"] == 1 and out["exists"] == [True, False]
    assert out["missing"] == "DoesNotExist"

    assert tables["turbocql"] == tables["classic"]
    columns, rows = tables["turbocql"]
    assert columns == [
        ("name", "regular", "text"),
        ("price", "regular", "decimal"),
        ("shelf", "partition_key", "text"),
        ("sku", "clustering", "int"),
        ("tags", "regular", "set<text>"),
        ("uid", "regular", "uuid"),
    ]
    assert [r[:3] for r in rows] == [("a", 2, "hexnut"), ("b", 7, "epoxy")]


MIGRATIONS = {
    "001_create_users.cql": """\
        CREATE TABLE users (id int PRIMARY KEY, name text);
        INSERT INTO users (id, name) VALUES (1, 'ada');
        """,
    "002_add_email.cql": """\
        /* Two statements, a comment and a string with a semicolon; */
        ALTER TABLE users ADD email text;
        UPDATE users SET email = 'ada@example.com; primary' WHERE id = 1;
        """,
    # A Python migration gets the tool's session; it records which driver's that was.
    "003_backfill.py": """\
        def execute(session):
            for i, name in enumerate(["grace", "linus"], start=2):
                session.execute(
                    "INSERT INTO users (id, name, email) VALUES (%s, %s, %s)",
                    (i, name, name + "@example.com"),
                )
            session.execute("INSERT INTO users (id, name) VALUES (0, %s)", (type(session).__module__,))
        """,
}

_APPLIED_AT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00")


def _migrations_project(root, keyspaces):
    (root / "migrations").mkdir(parents=True)
    for name, text in MIGRATIONS.items():
        (root / "migrations" / name).write_text(textwrap.dedent(text))
    for driver, keyspace in keyspaces.items():
        (root / ("%s.yml" % driver)).write_text(
            "keyspace: %s\nmigrations_path: ./migrations\nprofiles:\n"
            "  dev:\n    replication: {class: SimpleStrategy, replication_factor: 1}\n" % keyspace
        )


@pytest.mark.timeout(90)
def test_cstar_migrate_migrations_applied_and_listed(tmp_path, fresh_keyspaces):
    make, session = fresh_keyspaces
    keyspaces = make("migrate")
    _migrations_project(tmp_path, keyspaces)
    tool = str(Path(sys.executable).with_name("cstar-migrate"))
    statuses, logs, node = {}, {}, {}
    for driver, keyspace in keyspaces.items():

        def cli(*args, driver=driver, keyspace=keyspace):
            common = [tool, "-H", HOST, "-p", str(PORT), "-c", "%s.yml" % driver, "-y"]
            proc = _run([*common, *args], driver, tmp_path)
            return _APPLIED_AT.sub("DATE", proc.stdout.replace(keyspace, "KS")), proc.stderr

        # Up to version 2, the status, then the rest, the status, and a migrate with nothing to do.
        steps = [cli("migrate", "2"), cli("status"), cli("migrate"), cli("status"), cli("migrate")]
        statuses[driver] = [steps[1][0], steps[3][0]]
        logs[driver] = [[line for line in err.splitlines() if line.startswith("INFO:Migrator:")] for _, err in steps]
        node[driver] = (
            sorted(
                (r.version, r.name, r.state)
                for r in session.execute("SELECT version, name, state FROM %s.database_migrations" % keyspace)
            ),
            sorted(tuple(r) for r in session.execute("SELECT id, name, email FROM %s.users" % keyspace)),
        )

    assert statuses["turbocql"] == statuses["classic"]
    assert logs["turbocql"] == [
        [line.replace(keyspaces["classic"], keyspaces["turbocql"]) for line in step] for step in logs["classic"]
    ]
    partial, full = statuses["turbocql"]
    assert "Current DB version:  2\nLatest DB version:   3" in partial
    assert "Current DB version:  3\nLatest DB version:   3" in full
    assert re.findall(r"^\s+(\d)\s+(\S+)\s+(\w+)\s+DATE\s+[0-9a-f]{64}$", full, re.M) == [
        ("1", "001_create_users.cql", "SUCCEEDED"),
        ("2", "002_add_email.cql", "SUCCEEDED"),
        ("3", "003_backfill.py", "SUCCEEDED"),
    ]
    assert "## Pending migrations" in partial and "003_backfill.py" in partial.split("## Pending migrations")[1]
    assert logs["turbocql"][-1] == ["INFO:Migrator:Database is already up-to-date"]

    assert node["turbocql"][0] == node["classic"][0]
    assert node["turbocql"][0] == [
        (1, "001_create_users.cql", "SUCCEEDED"),
        (2, "002_add_email.cql", "SUCCEEDED"),
        (3, "003_backfill.py", "SUCCEEDED"),
    ]
    classic_users, turbocql_users = node["classic"][1], node["turbocql"][1]
    assert classic_users[0] == (0, "cassandra.cluster", None)
    assert turbocql_users[0] == (0, "turbocql.cluster", None)
    assert (
        turbocql_users[1:]
        == classic_users[1:]
        == [
            (1, "ada", "ada@example.com; primary"),
            (2, "grace", "grace@example.com"),
            (3, "linus", "linus@example.com"),
        ]
    )
