"""cqlengine's connections: named clusters and sessions, and ``execute``, which runs every
statement cqlengine makes (a cqlengine statement, a str or a driver statement)."""

import functools
import logging
import threading

from turbocql import ConsistencyLevel
from turbocql._policies.profiles import _ConfigMode
from turbocql.cluster import _NOT_SET, Cluster, NoHostAvailable
from turbocql.cqlengine import CQLEngineException, columns
from turbocql.cqlengine.statements import BaseCQLStatement
from turbocql.query import SimpleStatement, dict_factory

log = logging.getLogger("cassandra.cqlengine.connection")

NOT_SET = _NOT_SET
DEFAULT_CONNECTION = object()

_connections: dict = {}
udt_by_keyspace: dict[str, dict] = {}
# the keyspace of models that name none; models.DEFAULT_KEYSPACE follows it (through
# _keyspace_hooks, which models fills: connection does not import models)
_default_keyspace = None
_keyspace_hooks: list = []

cluster = None
session = None


def _set_default_keyspace(name):
    global _default_keyspace
    _default_keyspace = name
    for hook in _keyspace_hooks:
        hook(name)


def format_log_context(msg, connection=None, keyspace=None):
    """``msg`` prefixed with the connection's and keyspace's names, when given."""
    prefix = ""
    if keyspace:
        prefix += f"[Keyspace: {keyspace}]"
    if connection:
        prefix += f"[Connection: {connection}]"
    return f"{prefix} {msg}" if prefix else msg


class UndefinedKeyspaceException(CQLEngineException):
    pass


class Connection:
    """One registered connection: its hosts, options, and the cluster and session made."""

    def __init__(self, name, hosts, consistency=None, lazy_connect=False, retry_connect=False, cluster_options=None):
        self.name = name
        self.hosts = hosts
        self.consistency = consistency
        self.lazy_connect = lazy_connect
        self.retry_connect = retry_connect
        self.cluster_options = cluster_options or {}
        self.lazy_connect_lock = threading.RLock()
        self.cluster = None
        self.session = None

    @classmethod
    def from_session(cls, name, session):
        conn = cls(name=name, hosts=getattr(session, "hosts", None))
        conn.cluster, conn.session = session.cluster, session
        conn.setup_session()
        return conn

    def setup(self):
        global cluster, session
        if "username" in self.cluster_options or "password" in self.cluster_options:
            raise CQLEngineException("Username & Password are now handled by using the native driver's auth_provider")
        if self.lazy_connect:
            return
        self.cluster = Cluster(self.hosts, **self.cluster_options)
        try:
            self.session = self.cluster.connect()
        except NoHostAvailable:
            if self.retry_connect:
                log.warning(format_log_context("connect failed, will try again on first use", connection=self.name))
                self.lazy_connect = True
            raise
        if _connections.get(DEFAULT_CONNECTION) is self:
            cluster, session = self.cluster, self.session
        self.setup_session()

    def setup_session(self):
        c = self.cluster
        if getattr(c, "_config_mode", None) == _ConfigMode.PROFILES:
            c.profile_manager.default.row_factory = dict_factory
            if self.consistency is not None:
                c.profile_manager.default.consistency_level = self.consistency
        else:
            self.session.row_factory = dict_factory
            if self.consistency is not None:
                self.session.default_consistency_level = self.consistency
        enc = self.session.encoder
        enc.mapping[tuple] = enc.cql_encode_tuple
        _register_known_types(self.session.cluster)

    def handle_lazy_connect(self):
        if not self.lazy_connect:
            return
        with self.lazy_connect_lock:
            if self.lazy_connect:
                self.lazy_connect = False
                self.setup()


def register_connection(
    name,
    hosts=None,
    consistency=None,
    lazy_connect=False,
    retry_connect=False,
    cluster_options=None,
    default=False,
    session=None,
):
    """Registers connection ``name``: made from ``hosts`` (a new Cluster) or an existing
    ``session``, not both; ``default`` makes it the one models use unless told otherwise."""
    if name in _connections:
        log.warning("Registering connection '%s' when it already exists.", name)
    if session is not None:
        if any((hosts, consistency, lazy_connect, retry_connect, cluster_options)):
            raise CQLEngineException("Session configuration arguments and 'session' argument are mutually exclusive")
        conn = Connection.from_session(name, session)
    else:
        conn = Connection(name, hosts, consistency, lazy_connect, retry_connect, cluster_options)
        conn.setup()
    _connections[name] = conn
    if default:
        set_default_connection(name)
    return conn


def unregister_connection(name):
    """Forgets connection ``name`` and shuts down the cluster it made; an unknown name is
    nothing to forget (as classic)."""
    global cluster, session
    if name not in _connections:
        return
    conn = _connections[name]
    if _connections.get(DEFAULT_CONNECTION) is conn:
        del _connections[DEFAULT_CONNECTION]
        cluster = session = None
    del _connections[name]
    if conn.cluster is not None:
        conn.cluster.shutdown()


def set_default_connection(name):
    global cluster, session
    if name not in _connections:
        raise CQLEngineException(f"Connection '{name}' doesn't exist.")
    _connections[DEFAULT_CONNECTION] = _connections[name]
    cluster = _connections[name].cluster
    session = _connections[name].session


def get_connection(name=None):
    """The Connection named ``name`` (the default one when None), connected if it was lazy."""
    if not name:
        name = DEFAULT_CONNECTION
    if name not in _connections:
        raise CQLEngineException(f"Connection name '{name}' doesn't exist in the registry.")
    conn = _connections[name]
    conn.handle_lazy_connect()
    return conn


def default():
    """Registers a default connection to 127.0.0.1 with the cluster's default options."""
    register_connection("default", hosts=None, default=True)


def set_session(s):
    """Makes session ``s`` the default connection (its row factory becomes dict_factory)."""
    try:
        conn = get_connection()
    except CQLEngineException:
        register_connection("default", session=s, default=True)
        conn = get_connection()
    else:
        if conn.session is not s:
            conn = register_connection("default", session=s, default=True)
    if conn.session.keyspace:
        _set_default_keyspace(conn.session.keyspace)


def setup(hosts, default_keyspace, consistency=None, lazy_connect=False, retry_connect=False, **kwargs):
    """Registers the default connection to ``hosts`` (``kwargs`` go to ``Cluster``) and
    makes ``default_keyspace`` the keyspace of models that name none."""
    _set_default_keyspace(default_keyspace)
    register_connection(
        "default",
        hosts=hosts,
        consistency=consistency,
        lazy_connect=lazy_connect,
        retry_connect=retry_connect,
        cluster_options=kwargs,
        default=True,
    )


def execute(query, params=None, consistency_level=None, timeout=NOT_SET, connection=None):
    """Runs ``query`` on ``connection`` (the default one when None); returns its ResultSet."""
    conn = get_connection(connection)
    if not conn.session:
        raise CQLEngineException("It is required to setup() cqlengine before executing queries")
    if isinstance(query, SimpleStatement):
        pass
    elif isinstance(query, BaseCQLStatement):
        params = query.get_context()
        query = SimpleStatement(str(query), consistency_level=consistency_level, fetch_size=query.fetch_size)
    elif isinstance(query, str):
        query = SimpleStatement(query, consistency_level=consistency_level)
    enc = conn.session.encoder
    for klass in columns.UDT_VALUE_CLASSES:
        if klass not in enc.mapping:
            enc.mapping[klass] = functools.partial(columns.encode_udt_value, enc)
    log.debug(
        format_log_context(
            "Query: {}, Params: {}".format(getattr(query, "query_string", query), params), connection=connection
        )
    )
    return conn.session.execute(query, params, timeout=timeout)


def get_session(connection=None):
    return get_connection(connection).session


def get_cluster(connection=None):
    conn = get_connection(connection)
    if not conn.cluster:
        raise CQLEngineException(
            "%s.cluster is not configured. Call one of the setup or default functions first." % __name__
        )
    return conn.cluster


def register_udt(keyspace, type_name, klass, connection=None):
    """Remembers a UserType class, and registers it with the connection's cluster(s)."""
    udt_by_keyspace.setdefault(keyspace, {})[type_name] = klass
    try:
        c = get_cluster(connection)
    except CQLEngineException:
        return
    try:
        c.register_user_type(keyspace, type_name, klass)
    except Exception:
        log.debug("UDT %s.%s not registered (not in the schema yet)", keyspace, type_name)


def _register_known_types(c):
    for ks_name, types in udt_by_keyspace.items():
        for name, klass in types.items():
            try:
                c.register_user_type(ks_name or _default_keyspace, name, klass)
            except Exception:
                log.debug("UDT %s.%s not registered (not in the schema yet)", ks_name, name)


__all__ = ["ConsistencyLevel"]
