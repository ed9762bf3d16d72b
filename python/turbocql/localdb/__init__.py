"""Run a real local Apache Cassandra 5.0.x node for development and tests.

This sub-package (pure standard library, importable without the Rust engine) holds
the ``turbocql localdb start|stop|status`` command and the small Python API
that test fixtures use.  Cassandra itself is not bundled: ``cassandra-all``
and its dependencies are resolved from Maven Central with ``mvn`` once, the
resulting classpath is cached, and the daemon runs straight from the jars in
``~/.m2`` with ``java`` (Java 11 or 17).

Python API::

    from turbocql import localdb

    node = localdb.start(dir=None, port=9042, heap="2G", auth=False, timeout=180)
    node.pid, node.port, node.address, node.log_path, node.dir
    localdb.is_running(dir=None, port=9042)        # -> bool
    localdb.stop(dir=None, port=9042, timeout=30)  # -> bool (True if it stopped one)
    localdb.wait_for_cql(host, port, timeout)       # -> bool
    localdb.cql_answers(host, port)                 # one probe -> bool

Failures raise ``localdb.LocalDBError`` whose ``exit_code`` is what the CLI
exits with (2: a missing tool, a taken port or a bad option; 1: the daemon
died or did not answer in time).

Layout: a node lives in one directory (``--dir``; by default
``$TURBOCQL_LOCALDB_DIR``, else ``$XDG_CACHE_HOME/turbocql/localdb/node1``
(``~/.cache`` when XDG_CACHE_HOME is unset), or ``.../node-<port>`` for a
native port other than 9042).  It holds ``conf/`` (the generated
``cassandra.yaml`` and ``logback.xml``), ``data/``, ``commitlog/`` ...,
``logs/system.log`` (Cassandra's log), ``logs/output.log`` (the JVM's
stdout/stderr), ``cassandra.pid`` and ``node.json`` (the settings it was
started with).  The classpath is cached per Cassandra version in
``$XDG_CACHE_HOME/turbocql/localdb/classpath-<version>.txt``.

The code is organised around :class:`Node` so that a cluster of several nodes
(127.0.0.1-3) can later be a loop over nodes; only one node is supported now.

Modules: ``node`` (settings, defaults, directory layout, file helpers), ``config``
(cassandra.yaml, logback.xml, the java command line), ``classpath`` (java and the Maven
classpath), ``probe`` (the CQL probe, port checks), ``process`` (start, stop, status) and
``cli`` (``turbocql localdb``). Everything is re-exported here: use ``localdb.X``.
"""

from __future__ import annotations

from .classpath import (
    classpath_file,
    find_java,
    find_mvn,
    resolve_classpath,
)
from .cli import add_parser
from .config import (
    GC_FLAGS,
    JPMS_FLAGS,
    java_command,
    render_logback,
    render_yaml,
    write_config,
)
from .node import (
    CLUSTER_NAME,
    DAEMON_CLASS,
    DEFAULT_ADDRESS,
    DEFAULT_HEAP,
    DEFAULT_PORT,
    DEFAULT_STORAGE_PORT,
    DEFAULT_TIMEOUT,
    DEFAULT_VERSION,
    DIR_MARKER,
    EXIT_FAILED,
    EXIT_NOT_RUNNING,
    EXIT_USAGE,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    cache_base,
    default_dir,
    derive_storage_port,
    make_node,
)
from .probe import (
    check_ports_free,
    cql_answers,
    cql_login_ok,
    port_in_use,
    wait_for_cql,
)
from .process import is_running, running_pid, start, status, stop

# Every public name of the sub-package, whichever module holds it, is ``localdb.X``.
__all__ = [
    "CLUSTER_NAME",
    "DAEMON_CLASS",
    "DEFAULT_ADDRESS",
    "DEFAULT_HEAP",
    "DEFAULT_PORT",
    "DEFAULT_STORAGE_PORT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_VERSION",
    "DIR_MARKER",
    "EXIT_FAILED",
    "EXIT_NOT_RUNNING",
    "EXIT_USAGE",
    "GC_FLAGS",
    "JPMS_FLAGS",
    "LocalDBError",
    "Node",
    "STOP_TIMEOUT",
    "add_parser",
    "cache_base",
    "check_ports_free",
    "classpath_file",
    "cql_answers",
    "cql_login_ok",
    "default_dir",
    "derive_storage_port",
    "find_java",
    "find_mvn",
    "is_running",
    "java_command",
    "make_node",
    "port_in_use",
    "render_logback",
    "render_yaml",
    "resolve_classpath",
    "running_pid",
    "start",
    "status",
    "stop",
    "wait_for_cql",
    "write_config",
]
