"""``Cluster(max_frame_length=...)`` against the local node: a result frame longer than the limit
fails its connection with a ConnectionException naming the length, the limit and the setting
(inside NoHostAvailable, the request having gone on by the retry policy), the session goes on
once the pool has reconnected; a compressed body that would decompress beyond the limit fails
its request (DriverException) and is never decompressed; and the limit is one per process:
Clusters connected at the same time must agree on it, or the later connect says why not.

Because the limit is one per process, the tests that set one run in a pytest of their own
(test_in_a_process_of_its_own): in the suite's process, the session fixtures of other modules
hold the default and, rightly, refuse any other."""

import os
import subprocess
import sys
import time

import pytest

from tests.conftest import HOST, PORT
from turbocql import DriverException
from turbocql.cluster import Cluster, NoHostAvailable

ALONE = "TURBOCQL_FRAME_LIMIT_ALONE"
ALONE_TESTS = (
    "test_a_frame_over_the_limit_fails_its_connection_and_the_session_goes_on",
    "test_a_body_that_would_decompress_over_the_limit_is_refused",
    "test_clusters_of_one_process_agree_on_the_limit",
)
alone = pytest.mark.skipif(not os.environ.get(ALONE), reason="runs in test_in_a_process_of_its_own")


BLOB = 200 * 1024  # the row's blob: its result frame is a little over 200 KiB
LIMIT = 128 * 1024


@pytest.fixture(scope="module")
def blob_table(cassandra):
    c = Cluster([HOST], port=PORT)
    s = c.connect()
    s.execute(
        "CREATE KEYSPACE IF NOT EXISTS frame_limit"
        " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    s.execute("CREATE TABLE IF NOT EXISTS frame_limit.t (k int PRIMARY KEY, v blob)")
    # Random bytes: the compressed frame (lz4, the default compression) is as long as the row.
    s.execute("INSERT INTO frame_limit.t (k, v) VALUES (1, %s)", (os.urandom(BLOB),))
    s.execute("INSERT INTO frame_limit.t (k, v) VALUES (2, %s)", (b"small",))
    # One byte repeated: a frame of a few KiB that decompresses to over 200 KiB.
    s.execute("INSERT INTO frame_limit.t (k, v) VALUES (3, %s)", (b"x" * BLOB,))
    c.shutdown()
    return "frame_limit.t"


def test_the_default_is_256_mib():
    assert Cluster([HOST], port=PORT).max_frame_length == 256 * 1024 * 1024


@alone
def test_a_frame_over_the_limit_fails_its_connection_and_the_session_goes_on(blob_table):
    c = Cluster([HOST], port=PORT, max_frame_length=LIMIT)
    s = c.connect()
    try:
        with pytest.raises(NoHostAvailable) as info:
            s.execute(f"SELECT v FROM {blob_table} WHERE k = 1")
        (error,) = info.value.errors.values()
        assert type(error).__name__ == "ConnectionException", repr(error)
        assert f"over the limit of {LIMIT} bytes" in str(error) and "max_frame_length" in str(error), str(error)
        # The pool reconnects; small results go on (within a deadline: the reconnection).
        deadline = time.monotonic() + 20
        while True:
            try:
                assert s.execute(f"SELECT v FROM {blob_table} WHERE k = 2").one().v == b"small"
                break
            except NoHostAvailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        c.shutdown()
    # The same row within the default limit.
    c = Cluster([HOST], port=PORT)
    try:
        assert len(c.connect().execute(f"SELECT v FROM {blob_table} WHERE k = 1").one().v) == BLOB
    finally:
        c.shutdown()


@alone
def test_a_body_that_would_decompress_over_the_limit_is_refused(blob_table):
    c = Cluster([HOST], port=PORT, max_frame_length=LIMIT)
    s = c.connect()
    try:
        assert c.compression  # lz4 was negotiated: the classic default
        with pytest.raises(DriverException, match=rf"over the limit of {LIMIT} bytes \(Cluster max_frame_length\)"):
            s.execute(f"SELECT v FROM {blob_table} WHERE k = 3")
        # Only that response failed: the connection goes on.
        assert s.execute(f"SELECT v FROM {blob_table} WHERE k = 2").one().v == b"small"
    finally:
        c.shutdown()


@alone
def test_clusters_of_one_process_agree_on_the_limit():
    a = Cluster([HOST], port=PORT, max_frame_length=LIMIT)
    a.connect()
    try:
        same = Cluster([HOST], port=PORT, max_frame_length=LIMIT)
        same.connect()
        same.shutdown()
        other = Cluster([HOST], port=PORT, max_frame_length=2 * LIMIT)
        with pytest.raises(ValueError, match=r"one for the whole process.*max_frame_length=131072"):
            other.connect()
        other.shutdown()
    finally:
        a.shutdown()
    # Once the others are shut down, another limit is taken.
    b = Cluster([HOST], port=PORT, max_frame_length=2 * LIMIT)
    try:
        b.connect()
    finally:
        b.shutdown()


def test_a_limit_of_zero_is_refused():
    c = Cluster([HOST], port=PORT, max_frame_length=0)
    with pytest.raises(ValueError, match="max_frame_length must be at least 1 byte"):
        c.connect()
    c.shutdown()


@pytest.mark.skipif(bool(os.environ.get(ALONE)), reason="this is the process of its own")
@pytest.mark.timeout(240)
def test_in_a_process_of_its_own(blob_table):
    """The tests that set a limit, in a pytest of their own; every one of them must pass."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", __file__, "-k", " or ".join(ALONE_TESTS)],
        env={**os.environ, ALONE: "1"},
        capture_output=True,
        text=True,
        timeout=230,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    for name in ALONE_TESTS:
        assert f"::{name} PASSED" in run.stdout, run.stdout[-3000:]
