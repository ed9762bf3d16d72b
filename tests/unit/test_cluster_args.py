"""Cluster(...) arguments of the classic driver: honoured, configuration only, or refused
with UnsupportedOperation naming the argument (python/turbocql/_cluster/arguments.py)."""

import socket

import pytest

from turbocql import UnsupportedOperation
from turbocql.cluster import Cluster
from turbocql.connection import Connection, DefaultEndPointFactory
from turbocql.io.asyncorereactor import AsyncoreConnection
from turbocql.io.libevreactor import LibevConnection
from turbocql.policies import AddressTranslator, ConvictionPolicy, IdentityTranslator, SimpleConvictionPolicy


def _cluster(**kwargs):
    return Cluster(["127.0.0.1"], **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prepare_on_all_hosts": True},
        {"reprepare_on_up": False},
        {"schema_event_refresh_window": 0},
        {"schema_event_refresh_window": 5},
        {"schema_event_refresh_window": -1},
        {"topology_event_refresh_window": 0},
        {"status_event_refresh_window": 5},
        {"status_event_refresh_window": -1},
        {"idle_heartbeat_interval": 0},
        {"idle_heartbeat_timeout": 60},
        {"executor_threads": 8},
        {"monitor_reporting_enabled": False},
        {"monitor_reporting_enabled": False, "monitor_reporting_interval": 60},
        {"monitor_reporting_interval": 30},
        {"allow_beta_protocol_version": True},
        {"no_compact": False},
        {"metrics_enabled": False},
        {"address_translator": IdentityTranslator()},
        {"conviction_policy_factory": SimpleConvictionPolicy},
        {"endpoint_factory": DefaultEndPointFactory()},
        {"sockopts": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]},
        {"connection_class": LibevConnection},
        {"connection_class": AsyncoreConnection},
        {"connection_class": Connection},
    ],
)
def test_configuration_only_arguments_are_kept(kwargs):
    cluster = _cluster(**kwargs)
    for name, value in kwargs.items():
        assert getattr(cluster, name) is value or getattr(cluster, name) == value


def test_defaults_are_the_classic_ones():
    import cassandra.cluster as classic

    c, t = classic.Cluster(["127.0.0.1"]), _cluster()
    for name in (
        "prepare_on_all_hosts",
        "reprepare_on_up",
        "schema_event_refresh_window",
        "topology_event_refresh_window",
        "status_event_refresh_window",
        "idle_heartbeat_interval",
        "idle_heartbeat_timeout",
        "cql_version",
        "allow_beta_protocol_version",
        "no_compact",
        "metrics_enabled",
        "sockopts",
        "column_encryption_policy",
    ):
        assert getattr(t, name) == getattr(c, name), name
    assert type(t.address_translator).__name__ == type(c.address_translator).__name__ == "IdentityTranslator"
    assert t.conviction_policy_factory.__name__ == c.conviction_policy_factory.__name__
    assert type(t.endpoint_factory).__name__ == type(c.endpoint_factory).__name__


class _Translator(AddressTranslator):
    def translate(self, addr):
        return "10.0.0.1"


class _Conviction(ConvictionPolicy):
    def add_failure(self, connection_exc):
        return True

    def reset(self):
        pass


class _EndPoints(DefaultEndPointFactory):
    pass


class _MyConnection(LibevConnection):
    def push(self, data):
        pass


class _NamedOnly(LibevConnection):
    in_flight_limit = 10  # a class attribute, no I/O


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"address_translator": _Translator()}, "address_translator"),
        ({"conviction_policy_factory": _Conviction}, "conviction_policy_factory"),
        ({"endpoint_factory": _EndPoints()}, "endpoint_factory"),
        ({"column_encryption_policy": object()}, "column_encryption_policy"),
        ({"no_compact": True}, "no_compact"),
        ({"sockopts": [(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)]}, "sockopts"),
        ({"sockopts": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)]}, "sockopts"),
        ({"connection_class": _MyConnection}, "connection_class"),
        ({"connection_class": object}, "connection_class"),
        ({"prepare_on_all_hosts": False}, "prepare_on_all_hosts"),
        ({"topology_event_refresh_window": -1}, "topology_event_refresh_window"),
        ({"monitor_reporting_interval": 60}, "monitor_reporting_interval"),
        ({"monitor_reporting_enabled": True, "monitor_reporting_interval": 5}, "monitor_reporting_interval"),
    ],
)
def test_behaviour_changing_values_raise(kwargs, argument):
    with pytest.raises(UnsupportedOperation, match="Cluster\\(%s=" % argument):
        _cluster(**kwargs)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("address_translator", _Translator()),
        ("conviction_policy_factory", _Conviction),
        ("metrics_enabled", True),
        ("endpoint_factory", _EndPoints()),
        ("column_encryption_policy", object()),
        ("no_compact", True),
        ("sockopts", [(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)]),
        ("connection_class", _MyConnection),
        ("prepare_on_all_hosts", False),
        ("topology_event_refresh_window", -1),
        ("monitor_reporting_interval", 60),
    ],
)
def test_refused_values_raise_when_assigned_later(argument, value):
    # The classic driver reads these attributes when it connects: assigning one after
    # Cluster() is the same request as the argument, refused the same way.
    cluster = _cluster()
    before = getattr(cluster, argument)
    with pytest.raises(UnsupportedOperation, match="Cluster\\(%s=" % argument):
        setattr(cluster, argument, value)
    assert getattr(cluster, argument) is before or getattr(cluster, argument) == before


def test_metrics_enabled_gives_metrics_and_is_given_to_the_constructor_only():
    assert _cluster().metrics is None
    cluster = _cluster(metrics_enabled=True)
    assert cluster.metrics is not None and cluster.metrics.request_timer["count"] == 0
    cluster.metrics_enabled = True  # the same value: nothing changes
    with pytest.raises(UnsupportedOperation, match="Cluster\\(metrics_enabled="):
        cluster.metrics_enabled = False
    with pytest.raises(TypeError):
        _cluster(metrics_enabled="yes")


def test_monitor_reporting_interval_is_free_once_reporting_is_off():
    cluster = _cluster()
    cluster.monitor_reporting_enabled = False
    cluster.monitor_reporting_interval = 60
    assert cluster.monitor_reporting_interval == 60
    with pytest.raises(UnsupportedOperation, match="monitor_reporting_interval"):
        cluster.monitor_reporting_enabled = True


def test_checked_attributes_read_as_the_classic_defaults_on_the_class():
    import cassandra.cluster as classic

    for name in (
        "prepare_on_all_hosts",
        "schema_event_refresh_window",
        "topology_event_refresh_window",
        "monitor_reporting_enabled",
        "monitor_reporting_interval",
        "metrics_enabled",
        "no_compact",
        "column_encryption_policy",
        "sockopts",
    ):
        assert getattr(Cluster, name) == getattr(classic.Cluster, name), name


def test_connection_subclass_without_io_is_accepted():
    assert _cluster(connection_class=_NamedOnly).connection_class is _NamedOnly


def test_classic_connection_class_is_refused():
    from cassandra.io.asyncioreactor import AsyncioConnection as ClassicAsyncio

    with pytest.raises(UnsupportedOperation, match="connection_class"):
        _cluster(connection_class=ClassicAsyncio)


def test_refresh_methods_exist_as_in_classic():
    import cassandra.cluster as classic

    names = [n for n in dir(classic.Cluster) if n.startswith("refresh_")]
    assert names
    for name in names:
        assert callable(getattr(Cluster, name, None)), name
    assert callable(classic.Session.get_pool_state)
    from turbocql.cluster import Session

    assert callable(Session.get_pool_state)
