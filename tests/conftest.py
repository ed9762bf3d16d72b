"""Shared test settings: where the local Cassandra listens."""

import os

HOST = os.environ.get("TURBOCQL_TEST_HOST", "127.0.0.1")
PORT = int(os.environ.get("TURBOCQL_TEST_PORT", "9042"))
