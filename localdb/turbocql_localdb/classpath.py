"""The tools a localdb node needs: ``java``, and Cassandra's classpath from Maven.

``cassandra-all`` and its dependencies are resolved from Maven Central with ``mvn`` once per
version (:func:`resolve_classpath`); the classpath is cached in
``<cache>/classpath-<version>.txt`` and resolved again only when a jar in it disappeared.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

from .node import (
    DEFAULT_VERSION,
    EXIT_FAILED,
    EXIT_USAGE,
    LocalDBError,
    _locked,
    _tail,
    _write_atomic,
    cache_base,
)


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` if present, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    java = shutil.which("java")
    if not java:
        raise LocalDBError(
            "java not found: localdb needs a Java 11 or 17 runtime on PATH (or JAVA_HOME) "
            "to run Cassandra, e.g. `apt-get install openjdk-17-jre-headless`",
            EXIT_USAGE,
        )
    return java


def find_mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise LocalDBError(
            "mvn not found: localdb needs Maven on PATH to fetch Cassandra from Maven Central "
            "(needed once per version), e.g. `apt-get install maven`",
            EXIT_USAGE,
        )
    return mvn


def classpath_file(version: str = DEFAULT_VERSION) -> Path:
    return cache_base() / f"classpath-{version}.txt"


def _read_classpath(path: Path) -> str | None:
    """The cached classpath if every jar in it still exists."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    entries = [e for e in text.split(os.pathsep) if e]
    if not entries or not all(os.path.isfile(e) for e in entries):
        return None
    if not any("cassandra-all" in os.path.basename(e) for e in entries):
        return None
    return os.pathsep.join(entries)


def _pom(version: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>turbocql.localdb</groupId>
  <artifactId>cassandra-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def resolve_classpath(version: str = DEFAULT_VERSION, out=print) -> str:
    """The classpath of ``cassandra-all:<version>``, resolved with mvn once and cached."""
    cached_file = classpath_file(version)
    cp = _read_classpath(cached_file)
    if cp:
        return cp
    base = cache_base()
    base.mkdir(parents=True, exist_ok=True)
    with _locked(base / ".mvn.lock"):
        cp = _read_classpath(cached_file)  # another process may have resolved it meanwhile
        if cp:
            return cp
        mvn = find_mvn()
        work = base / f"maven-{version}"
        work.mkdir(parents=True, exist_ok=True)
        (work / "pom.xml").write_text(_pom(version))
        tmp_out = work / "classpath.txt"
        with contextlib.suppress(FileNotFoundError):
            tmp_out.unlink()
        out(f"resolving org.apache.cassandra:cassandra-all:{version} with Maven (once)...")
        log_file = work / "mvn.log"
        with open(log_file, "wb") as log:
            rc = subprocess.call(
                [
                    mvn,
                    "-B",
                    "-q",
                    "-f",
                    str(work / "pom.xml"),
                    "dependency:build-classpath",
                    f"-Dmdep.outputFile={tmp_out}",
                    "-Dmdep.includeScope=runtime",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work,
            )
        cp = _read_classpath(tmp_out) if rc == 0 else None
        if not cp:
            raise LocalDBError(
                f"mvn could not resolve org.apache.cassandra:cassandra-all:{version} "
                f"(exit {rc}); see {log_file}:\n{_tail(log_file, 20)}",
                EXIT_FAILED,
            )
        _write_atomic(cached_file, cp + "\n")
        return cp
