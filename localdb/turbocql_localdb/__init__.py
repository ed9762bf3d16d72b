"""Run a real local Apache Cassandra 5.0.x node, or a cluster of several, for development and tests.

This package, the turbocql-localdb distribution (``localdb/`` in turbocql's repository; pure
standard library, apart from the driver and its Rust engine: ``pip install turbocql-localdb``,
or ``pip install ./localdb`` from a checkout), holds the ``turbocql localdb
start|stop|status|kill`` command (also ``python -m turbocql_localdb``) and the small Python API
that test fixtures use.  Cassandra itself is not bundled: ``cassandra-all``
and its dependencies are resolved from Maven Central with ``mvn`` once, the
resulting classpath is cached, and the daemon runs straight from the jars in
``~/.m2`` with ``java`` (Java 11 or 17).

Python API, one node::

    import turbocql_localdb as localdb

    node = localdb.start(dir=None, port=9042, heap="2G", auth=False, timeout=180)
    node.pid, node.port, node.address, node.log_path, node.dir
    node = localdb.start(port=9046, tls=True, require_client_auth=False)  # TLS on the CQL port
    files = node.tls_files()   # localdb.TLSFiles (None without TLS), all in <node dir>/tls/:
    files.ca                   #   ca.pem: the CA certificate, the truststore of clients
    files.client_cert          #   client.pem: CN turbocql-client, signed by the CA (+ the CA)
    files.client_key           #   client-key.pem: its key (PKCS#8)
    files.node_keystore        #   node.pem: the node's PKCS#8 key + certificate + CA
    files.ca_key               #   ca-key.pem
    files.ssl_context()        # an ssl.SSLContext trusting ca (+ the client certificate)
    localdb.is_running(dir=None, port=9042)        # -> bool
    localdb.stop(dir=None, port=9042, timeout=30)  # -> bool (True if it stopped one)
    localdb.wait_for_cql(host, port, timeout)       # -> bool
    localdb.cql_answers(host, port)                 # one probe -> bool

A cluster of several nodes on consecutive loopback addresses::

    cluster = localdb.start_cluster(nodes=3, dcs=2, racks=1, first_address="127.0.0.11",
                                    heap="768M", dir=None, timeout=180)  # timeout per node
    cluster.nodes                  # [Node]: .name ("node1"), .address, .datacenter, .rack, .pid
    cluster.contact_points         # ["127.0.0.11", "127.0.0.12", "127.0.0.13"]
    cluster.status()               # [NodeStatus(name, address, datacenter, rack, pid, state)]
    cluster.state(2)               # "UP" (runs, answers CQL) | "DOWN" (runs, no CQL) | "STOPPED"
    cluster.stop_node(2); cluster.start_node(2); cluster.kill_node(3)   # k = 1..N or "node2"
    cluster.wait_for_state(2, "UP", timeout=60)
    cluster.stop()                 # every node at once; -> names of the nodes that ran
    cluster.started                # the nodes this start_cluster call started ([] if all ran)
    cluster.tls_files()            # start_cluster(..., tls=True): one CA, one cert per node
    localdb.find_cluster(dir=None, first_address="127.0.0.11")   # -> LocalCluster | None
    localdb.cluster_status(dir=None, first_address=None)         # -> [NodeStatus]
    localdb.stop_cluster(dir=None, first_address=None)           # -> [names]

``start_cluster`` is idempotent: it starts the nodes that do not run, one after the other,
each once the one before answers CQL, and if one fails it stops those it started.  An
option left at None is the one saved in the directory's ``cluster.json`` (else the
default: 3 nodes, 1 DC, 1 rack, 127.0.0.1, 768M per node); a directory keeps its layout.
``find_cluster`` looks in ``dir``, else the default directory for ``first_address``, else
among the running daemons for a cluster whose first node is at ``first_address``.

Failures raise ``localdb.LocalDBError`` whose ``exit_code`` is what the CLI
exits with (2: a missing tool, a taken port or a bad option; 1: the daemon
died or did not answer in time; 3: nothing runs / no cluster there).

TLS (``start --tls [--require-client-auth]``; ``tls=True`` / ``require_client_auth=True``,
which implies TLS): ``client_encryption_options`` with ``enabled: true``, ``optional: false``
(no clear text on the native port), ``PEMBasedSslContextFactory`` with ``keystore: tls/node.pem``
and ``truststore: tls/ca.pem`` (no passwords: the key is unencrypted PKCS#8) and
``require_client_auth``; internode encryption stays off. The certificates (EC P-256, 10
years; see ``localdb.tls``) are made with the ``cryptography`` package the first time and
kept; the node certificate names the node's IP address and DNS ``localhost`` (so hostname
checks pass). A cluster's nodes share the CA of ``<base>/tls/``. Left at None, ``tls`` and
``require_client_auth`` are as the directory's ``node.json``/``cluster.json`` has them (off
for a new node; ``--no-tls`` turns TLS off). The readiness probe then speaks TLS with the
client certificate. Measured here: a 768 MB TLS node answered in 12-13 s from an empty
directory, as fast as a clear-text one.

Settings (``start --setting NAME=VALUE``, repeatable; ``yaml_settings={NAME: VALUE}``, a
single node only): a top-level ``cassandra.yaml`` key replacing localdb's own value, or
added, written as a YAML scalar. localdb's yaml differs from Cassandra 5.0's stock
``conf/cassandra.yaml`` so that every kind of schema object can be made
(``materialized_views_enabled``, ``user_defined_functions_enabled``,
``sasi_indexes_enabled`` true; ``storage_compatibility_mode: NONE``). A node with the
stock values, which the integration tests are run against to check that they skip what such
a node refuses (naming the setting) rather than fail::

    turbocql localdb start --port 9050 --heap 768M --setting materialized_views_enabled=false \
        --setting user_defined_functions_enabled=false --setting sasi_indexes_enabled=false \
        --setting storage_compatibility_mode=CASSANDRA_4

The keys localdb writes from its own options (addresses, ports, directories, ``--auth``,
``--tls``, ``--commitlog``: ``OWN_YAML_KEYS``) are refused. The settings are saved in
``node.json``; left at None (no ``--setting``), a start uses those the node was last started
with (none for a new node; ``--no-settings`` / ``yaml_settings={}`` drops them), and a start
of a running node with other settings is refused, as for TLS.

Command line: ``turbocql localdb start [--nodes N] [--dcs D] [--racks R]
[--first-address 127.0.0.X] [--heap 768M] [--commitlog batch] [--tls]
[--require-client-auth] [--dir BASE]``;
``status [--dir BASE | --first-address A]`` (a cluster: one line per node, exit 0 if all
are UP, 1 if some are not, 3 if none runs); ``stop [--node K]``; ``start --node K`` (node
K alone, with its saved settings: it rejoins the ring); ``kill --node K`` (SIGKILL).
Without ``--nodes``/``--dcs``/``--racks``/``--first-address``/``--node`` and without a
``cluster.json`` in ``--dir``, every action is about the single node, as before.

Layout: a node lives in one directory (``--dir``; by default
``$TURBOCQL_LOCALDB_DIR``, else ``$XDG_CACHE_HOME/turbocql/localdb/node1``
(``~/.cache`` when XDG_CACHE_HOME is unset), or ``.../node-<port>`` for a
native port other than 9042).  It holds ``conf/`` (the generated
``cassandra.yaml`` and ``logback.xml``), ``data/``, ``commitlog/`` ...,
``logs/system.log`` (Cassandra's log), ``logs/output.log`` (the JVM's
stdout/stderr), ``cassandra.pid``, ``node.json`` (the settings it was
started with) and, with TLS, ``tls/``.  The classpath is cached per Cassandra version in
``$XDG_CACHE_HOME/turbocql/localdb/classpath-<version>.txt``.

A cluster lives in a base directory (``--dir``; by default
``$XDG_CACHE_HOME/turbocql/localdb/cluster-<first address>``, ``...-<port>`` for a
native port other than 9042) holding ``cluster.json`` and one node directory per node
(``node1/``, ``node2/``, ...; each also has ``conf/cassandra-rackdc.properties``).  Node k
listens on the first address + k - 1 with the same native (9042) and storage (7000) ports,
runs ``GossipingPropertyFileSnitch`` (datacenters dc1..dcD in contiguous blocks, earlier
ones getting the extra nodes; racks rack1..rackR round-robin within a DC), ``num_tokens:
8`` with ``allocate_tokens_for_local_replication_factor: 1``, the first node as its only
seed, ``-Dcassandra.ring_delay_ms=1000``, and its JMX port on 127.0.0.1 at 7200 + the last
byte of its address (nodetool -p 7211 for 127.0.0.11).

Measured on this machine (2 cores; a single node idle on 127.0.0.1 meanwhile):
``turbocql localdb start --nodes 3 --dcs 2 --first-address 127.0.0.11`` brings three
768 MB nodes up in 32 s from empty directories (node1 8 s, node2 and node3 12 s each),
26-35 s again from a stopped cluster; ``stop`` takes about 12 s.  Each uses about 1.2 GB
of memory (RSS); with the single node (1G heap, 1.6 GB) beside them, 5.3 GB of the 24 GB.

Modules: ``node`` (settings, defaults, directory layout, file helpers), ``config``
(cassandra.yaml, logback.xml, cassandra-rackdc.properties, the java command line),
``classpath`` (java and the Maven classpath), ``probe`` (the CQL probe, port checks),
``process`` (start, stop, status of one node), ``cluster`` (several nodes: building, loading
and finding them; with ``cluster_layout``, their addresses, datacenters, racks and JMX ports,
and ``cluster_life``, :class:`LocalCluster` and its nodes' start, stop and state) and ``cli``
(``turbocql localdb``), ``tls`` (the CA and certificates of ``--tls``; needs ``cryptography``).
Everything is re-exported here: use ``localdb.X``. Apart: ``toxiproxy`` (a fault-injecting TCP
proxy for the fault tests, built with Go on first use; with ``toxiproxy_client``, the client of
its API, and ``toxiproxy_requests``, the requests' checks and JSON bodies), used as its own
namespace: ``from turbocql_localdb import toxiproxy``.
"""

from __future__ import annotations

from .classpath import (
    classpath_file,
    find_java,
    find_mvn,
    resolve_classpath,
)
from .cli import add_parser
from .cluster import (
    DEFAULT_CLUSTER_HEAP,
    DEFAULT_CLUSTER_NODES,
    DEFAULT_FIRST_ADDRESS,
    DOWN,
    JMX_PORT_BASE,
    STOPPED,
    UP,
    LocalCluster,
    NodeStatus,
    cluster_dir,
    cluster_status,
    find_cluster,
    jmx_port_for,
    load_cluster,
    make_cluster,
    node_addresses,
    split_datacenters,
    start_cluster,
    stop_cluster,
)
from .config import (
    GC_FLAGS,
    JPMS_FLAGS,
    java_command,
    render_logback,
    render_rackdc,
    render_yaml,
    write_config,
)
from .node import (
    CLUSTER_FILE,
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
    OWN_YAML_KEYS,
    STOP_TIMEOUT,
    LocalDBError,
    Node,
    TLSFiles,
    cache_base,
    check_yaml_settings,
    default_dir,
    derive_storage_port,
    make_node,
    parse_setting,
)
from .probe import (
    check_ports_free,
    cql_answers,
    cql_login_ok,
    port_in_use,
    wait_for_cql,
)
from .process import is_running, running_pid, settings_words, start, status, stop
from .tls import ensure_tls_files

# Every public name of the package, whichever module holds it, is ``localdb.X``.
__all__ = [
    "CLUSTER_FILE",
    "CLUSTER_NAME",
    "DAEMON_CLASS",
    "DEFAULT_ADDRESS",
    "DEFAULT_CLUSTER_HEAP",
    "DEFAULT_CLUSTER_NODES",
    "DEFAULT_FIRST_ADDRESS",
    "DEFAULT_HEAP",
    "DEFAULT_PORT",
    "DEFAULT_STORAGE_PORT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_VERSION",
    "DIR_MARKER",
    "DOWN",
    "EXIT_FAILED",
    "EXIT_NOT_RUNNING",
    "EXIT_USAGE",
    "GC_FLAGS",
    "JMX_PORT_BASE",
    "JPMS_FLAGS",
    "LocalCluster",
    "LocalDBError",
    "Node",
    "OWN_YAML_KEYS",
    "NodeStatus",
    "STOPPED",
    "STOP_TIMEOUT",
    "TLSFiles",
    "UP",
    "add_parser",
    "cache_base",
    "check_ports_free",
    "check_yaml_settings",
    "classpath_file",
    "cluster_dir",
    "cluster_status",
    "cql_answers",
    "cql_login_ok",
    "default_dir",
    "derive_storage_port",
    "ensure_tls_files",
    "find_cluster",
    "find_java",
    "find_mvn",
    "is_running",
    "java_command",
    "jmx_port_for",
    "load_cluster",
    "make_cluster",
    "make_node",
    "node_addresses",
    "parse_setting",
    "port_in_use",
    "render_logback",
    "render_rackdc",
    "render_yaml",
    "resolve_classpath",
    "running_pid",
    "settings_words",
    "split_datacenters",
    "start",
    "start_cluster",
    "status",
    "stop",
    "stop_cluster",
    "wait_for_cql",
    "write_config",
]
