"""Unit tests of turbocql_localdb.classpath: java, mvn and the cached classpath."""

from __future__ import annotations

import os
import sys

from .helpers import classpath_mod, cli, localdb, start_args


def test_missing_java(env, cached_classpath, monkeypatch, capsys):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    real_which = classpath_mod.shutil.which
    monkeypatch.setattr(
        classpath_mod.shutil, "which", lambda name, *a, **k: None if name == "java" else real_which(name, *a, **k)
    )
    assert cli(*start_args(env / "node")) == 2
    err = capsys.readouterr().err
    assert "java not found" in err


def test_missing_mvn(env, monkeypatch, capsys, tmp_path):
    # a java exists, no cached classpath, and no mvn on PATH
    monkeypatch.delenv("JAVA_HOME", raising=False)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "java").write_text("#!/bin/sh\nexit 1\n")
    (bindir / "java").chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    assert cli(*start_args(env / "node")) == 2
    err = capsys.readouterr().err
    assert "mvn not found" in err and "Maven" in err


def test_classpath_is_resolved_once_and_cached(env, monkeypatch, tmp_path):
    jar = tmp_path / "repo" / "cassandra-all-5.0.6.jar"
    jar.parent.mkdir()
    jar.write_bytes(b"")
    calls = tmp_path / "mvn-calls"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    mvn = bindir / "mvn"
    mvn.write_text(f"""#!{sys.executable}
import sys
with open({str(calls)!r}, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("-Dmdep.outputFile="))
open(out, "w").write({str(jar)!r})
""")
    mvn.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    messages = []
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    invocations = calls.read_text().splitlines()
    assert len(invocations) == 1
    assert "dependency:build-classpath" in invocations[0]
    assert localdb.classpath_file("5.0.6").read_text().strip() == str(jar)
    pom = (localdb.cache_base() / "maven-5.0.6" / "pom.xml").read_text()
    assert "<artifactId>cassandra-all</artifactId>" in pom and "<version>5.0.6</version>" in pom
    # a jar that disappeared from ~/.m2 makes it resolve again
    jar.unlink()
    jar.write_bytes(b"")
    assert localdb.resolve_classpath("5.0.6", out=messages.append) == str(jar)
    assert len(calls.read_text().splitlines()) == 1
    localdb.classpath_file("5.0.6").write_text("/nonexistent/cassandra-all-5.0.6.jar\n")
    localdb.resolve_classpath("5.0.6", out=messages.append)
    assert len(calls.read_text().splitlines()) == 2


def test_read_classpath_needs_every_jar_and_cassandra_all(tmp_path):
    jar = tmp_path / "cassandra-all-5.0.6.jar"
    other = tmp_path / "jamm-0.4.0.jar"
    jar.write_bytes(b"")
    other.write_bytes(b"")
    cp = tmp_path / "cp.txt"
    assert classpath_mod._read_classpath(cp) is None  # no file
    cp.write_text(f"{jar}{os.pathsep}{other}{os.pathsep}\n")
    assert classpath_mod._read_classpath(cp) == f"{jar}{os.pathsep}{other}"
    cp.write_text(f"{other}\n")
    assert classpath_mod._read_classpath(cp) is None  # no cassandra-all
    cp.write_text(f"{jar}{os.pathsep}{tmp_path / 'gone.jar'}\n")
    assert classpath_mod._read_classpath(cp) is None  # a jar is missing
    pom = classpath_mod._pom("5.0.6")
    assert "<artifactId>cassandra-all</artifactId>" in pom and "<version>5.0.6</version>" in pom
