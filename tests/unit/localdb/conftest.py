"""Fixtures of the localdb unit tests: an isolated cache, a cached classpath, a fake java."""

from __future__ import annotations

import sys

import pytest

from .helpers import FAKE_JAVA, localdb


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated cache dir, no TURBOCQL_LOCALDB_DIR, a cached fake classpath."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TURBOCQL_LOCALDB_DIR", raising=False)
    return tmp_path


@pytest.fixture
def cached_classpath(env):
    jar = env / "jars" / f"cassandra-all-{localdb.DEFAULT_VERSION}.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    cp_file = localdb.classpath_file()
    cp_file.parent.mkdir(parents=True, exist_ok=True)
    cp_file.write_text(str(jar) + "\n")
    return str(jar)


@pytest.fixture
def fake_java(env, cached_classpath, monkeypatch):
    """A fake java as $JAVA_HOME/bin/java; set FAKE_JAVA_MODE to choose its behaviour."""
    home = env / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(FAKE_JAVA.format(python=sys.executable))
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("FAKE_JAVA_MODE", "serve")
    return java


@pytest.fixture
def node_dir(env):
    d = env / "node"
    yield d
    # never leave a fake daemon behind
    localdb.stop(d, timeout=5)
