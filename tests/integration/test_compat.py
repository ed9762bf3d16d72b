"""An unmodified classic-driver script (`import cassandra`) run on turbocql through
`python -m turbocql.compat`, against the local Cassandra, in a subprocess (the import hook
never enters the test process)."""

import os
import subprocess
import sys
import textwrap

import turbocql
from tests.conftest import HOST, PORT

CLASSIC_SCRIPT = """\
import sys
import uuid

import cassandra
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, SimpleStatement, dict_factory

host, port = sys.argv[1], int(sys.argv[2])
keyspace = "compat_" + uuid.uuid4().hex[:8]

cluster = Cluster([host], port=port)
session = cluster.connect()
print("driver", cassandra.__name__, cassandra.__turbocql_version__, cassandra.__version__)
print("session", type(session).__module__, type(session).__name__)
session.execute(
    "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % keyspace
)
try:
    session.set_keyspace(keyspace)
    session.execute("CREATE TABLE users (id int PRIMARY KEY, name text, emails set<text>)")

    insert = session.prepare("INSERT INTO users (id, name, emails) VALUES (?, ?, ?)")
    session.execute(insert, (1, "Ada", {"ada@example.com"}))
    batch = BatchStatement(consistency_level=ConsistencyLevel.ONE)
    batch.add(insert, (2, "Grace", None))
    batch.add(SimpleStatement("INSERT INTO users (id, name) VALUES (%s, %s)"), (3, "Linus"))
    session.execute(batch)

    query = SimpleStatement("SELECT id, name, emails FROM users", consistency_level=ConsistencyLevel.ONE)
    for row in sorted(session.execute(query), key=lambda r: r.id):
        print("row", row.id, row.name, sorted(row.emails or ()))

    session.row_factory = dict_factory
    print("dict", session.execute("SELECT name FROM users WHERE id = %s", (2,)).one())

    future = session.execute_async("SELECT count(*) FROM users")
    print("count", future.result().one()["count"])

    try:
        session.execute("SELECT * FROM no_such_table")
    except InvalidRequest as exc:
        print("error", type(exc).__module__, type(exc).__name__)
finally:
    session.execute("DROP KEYSPACE %s" % keyspace)
    cluster.shutdown()
print("done")
"""


def test_an_unmodified_classic_script_runs_on_turbocql(cassandra, tmp_path):
    script = tmp_path / "classic_app.py"
    script.write_text(CLASSIC_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCQL_COMPAT")}
    proc = subprocess.run(
        [sys.executable, "-m", "turbocql.compat", "--allow-shadow", str(script), HOST, str(PORT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr)
    expected = textwrap.dedent(
        """\
        driver turbocql %s 3.30.1
        session turbocql.cluster Session
        row 1 Ada ['ada@example.com']
        row 2 Grace []
        row 3 Linus []
        dict {'name': 'Grace'}
        count 3
        error turbocql InvalidRequest
        done"""
        % turbocql.__version__
    )
    assert proc.stdout.splitlines() == expected.splitlines()
