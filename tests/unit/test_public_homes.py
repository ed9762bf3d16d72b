"""Every class and function the classic driver defines in ``cassandra.X`` has ``turbocql.X`` as
its ``__module__`` in turbocql, whatever private module holds its code (no server).

The classic driver (cassandra-driver, in the venv) is the oracle: for each public module
``turbocql.X`` with a classic ``cassandra.X``, each public class or function whose
``__module__`` is ``cassandra.X`` and that turbocql has, ``turbocql.X.N.__module__`` is
``turbocql.X``, so reprs, tracebacks, the docs and pickles name the public path (the public
modules call ``turbocql._util.homes.publish`` at their end). ``ELSEWHERE`` lists the names
turbocql defines in another module, with the reason.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import sys
import types
import warnings

import pytest

from tests.unit.test_module_layout import import_available, public_module_names
from turbocql._util.homes import is_private, publish

pytest.importorskip("cassandra.cluster")

# Classic names of cassandra.X that turbocql.X has from another module ("turbocql.X:N": why).
ELSEWHERE = {
    "turbocql.cluster:default_lbp_factory": "turbocql.policies's, beside the policies it builds "
    "(turbocql._policies.profiles takes it from there); turbocql.cluster passes it on",
    "turbocql.cmurmur3:murmur3": "turbocql.murmur3's: turbocql has one murmur3, under both names",
    "turbocql.metadata:trim_if_startswith": "turbocql.cqltypes's: the classic driver has a copy in "
    "each module, turbocql one function, homed where the classic one is defined first",
    "turbocql.protocol:RequestExecutionException": "turbocql's own exception, the base of the error "
    "messages of turbocql.protocol (the classic module has a class of the same name)",
    "turbocql.protocol:RequestValidationException": "turbocql's own exception, as RequestExecutionException",
    "turbocql.query:bind_params": "turbocql.encoder's, which documents it; turbocql.query passes it on",
    "turbocql.query:named_tuple_factory": "the compiled engine's function (turbocql._engine.named_rows): "
    "its module and name are the extension's, and turbocql.query has no named_rows for a pickle to find",
}


def _classic_pairs() -> list[tuple[str, str]]:
    """Each public module of turbocql with its classic counterpart, both importable."""
    pairs = []
    for name in public_module_names():
        classic = "cassandra" + name[len("turbocql") :]
        if name == "turbocql" or import_available(name) is None:
            continue
        try:
            with warnings.catch_warnings():  # the classic asyncorereactor imports asyncore
                warnings.simplefilter("ignore", DeprecationWarning)
                importlib.import_module(classic)
        except ImportError:  # no such classic module, or one needing eventlet, gevent, twisted...
            continue
        except Exception as e:  # the classic asyncorereactor on 3.12+: DependencyException (no asyncore)
            if type(e).__name__ != "DependencyException":
                raise
            continue
        pairs.append((name, classic))
    return pairs


def _classic_names(classic: str) -> list[str]:
    """The public classes and functions module ``classic`` defines itself."""
    module = sys.modules[classic]
    assert module.__name__ == classic, "%s is not the classic driver's module (turbocql.compat?)" % classic
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isroutine(value))
        and getattr(value, "__module__", None) == classic
    )


PAIRS = _classic_pairs()


def test_the_oracle_covers_the_moved_modules():
    names = {name for name, _ in PAIRS}
    for public in ("turbocql.cluster", "turbocql.cqltypes", "turbocql.metadata", "turbocql.policies"):
        assert public in names
    for public in ("turbocql.protocol", "turbocql.query", "turbocql.util", "turbocql.cqlengine.query"):
        assert public in names


@pytest.mark.parametrize(("public", "classic"), PAIRS, ids=[name for name, _ in PAIRS])
def test_classic_names_have_the_public_module(public, classic):
    module = sys.modules[public]
    wrong = {}
    for name in _classic_names(classic):
        value = getattr(module, name, None)
        if value is None or "%s:%s" % (public, name) in ELSEWHERE:
            continue
        if getattr(value, "__module__", None) != public:
            wrong[name] = getattr(value, "__module__", None)
        elif getattr(value, "__qualname__", None) == name:
            assert getattr(module, value.__qualname__) is value  # module.qualname finds it
    assert not wrong, "%s: names homed elsewhere (name: __module__): %s" % (public, wrong)


def test_the_listed_exceptions_still_differ():
    for key in ELSEWHERE:
        public, name = key.split(":")
        classic = "cassandra" + public[len("turbocql") :]
        assert name in _classic_names(classic), key
        value = getattr(importlib.import_module(public), name)
        assert value.__module__ != public, "%s is homed in %s now: drop it from ELSEWHERE" % (key, public)
        assert not is_private(value.__module__) or value.__module__ == "turbocql._engine", key


def _round_trip(value):
    data = pickle.dumps(value)
    assert b"turbocql._" not in data, data  # the public path, not the private module's
    return pickle.loads(data)


@pytest.mark.parametrize(
    ("module", "name", "args"),
    [
        ("turbocql.cluster", "NoHostAvailable", ("Unable to connect", {"127.0.0.1:9042": "refused"})),
        ("turbocql.cluster", "QueryExhausted", ()),
        ("turbocql.cluster", "UserTypeDoesNotExist", ("no such type",)),
        ("turbocql.query", "TraceUnavailable", ("not yet",)),
        ("turbocql.cqlengine.query", "DoesNotExist", ("no row",)),
        ("turbocql.cqlengine.query", "LWTException", ({"[applied]": False},)),
        ("turbocql.cqlengine.models", "ModelDefinitionException", ("bad model",)),
    ],
)
def test_exceptions_pickle_by_their_public_module(module, name, args):
    cls = getattr(importlib.import_module(module), name)
    assert cls.__module__ == module
    exc = cls(*args)
    back = _round_trip(exc)
    assert type(back) is cls
    assert back.args == exc.args
    assert str(back) == str(exc)
    assert repr(back) == repr(exc)


def test_policies_pickle_by_their_public_module():
    from turbocql import policies

    values = [
        policies.RetryPolicy(),
        policies.DowngradingConsistencyRetryPolicy(),
        policies.FallthroughRetryPolicy(),
        policies.ExponentialReconnectionPolicy(1.0, 60.0, max_attempts=5),
        policies.ConstantReconnectionPolicy(2.0, max_attempts=3),
        policies.ConstantSpeculativeExecutionPolicy(0.1, 3),
    ]
    for value in values:
        assert type(value).__module__ == "turbocql.policies"
        back = _round_trip(value)
        assert type(back) is type(value)
        assert vars(back) == vars(value)
    schedule = list(_round_trip(values[3]).new_schedule())
    assert schedule == list(values[3].new_schedule())


def test_schema_values_pickle_by_their_public_module():
    from turbocql import metadata, util

    token = metadata.Murmur3Token(-42)
    assert _round_trip(token) == token
    strategy = metadata.SimpleStrategy({"replication_factor": "3"})
    assert _round_trip(strategy) == strategy
    for value in (util.Date(19000), util.SortedSet([3, 1, 2]), util.OrderedMap([({1}, 2)])):
        assert _round_trip(value) == value


def test_reprs_name_the_public_module():
    from turbocql import cluster, policies

    assert repr(policies.RetryPolicy) == "<class 'turbocql.policies.RetryPolicy'>"
    assert repr(cluster.ExecutionProfile) == "<class 'turbocql.cluster.ExecutionProfile'>"
    assert repr(cluster.NoHostAvailable("x", {})).startswith("NoHostAvailable(")


@pytest.fixture
def fake_modules(monkeypatch):
    """A private module holding a class and a function, and a public module re-exporting them."""
    private = types.ModuleType("turbocql._fake_private")
    exec("class Thing:\n    pass\n\ndef make():\n    return Thing()\n", private.__dict__)
    public = types.ModuleType("turbocql.fake_public")
    public.Thing = private.Thing
    public.make = private.make
    public.Alias = private.Thing
    public.OrderedDict = dict
    monkeypatch.setitem(sys.modules, private.__name__, private)
    monkeypatch.setitem(sys.modules, public.__name__, public)
    return private, public


def test_publish_names_the_public_module(fake_modules):
    private, public = fake_modules
    assert private.Thing.__module__ == "turbocql._fake_private"
    publish(public.__name__, ["Thing", "make"])
    assert private.Thing.__module__ == private.make.__module__ == "turbocql.fake_public"
    publish(public.__name__, ["Thing"])  # the module run again: nothing to do
    assert private.Thing.__module__ == "turbocql.fake_public"


def test_publish_refuses_what_is_not_a_private_turbocql_object(fake_modules, monkeypatch):
    private, public = fake_modules
    with pytest.raises(ValueError, match="not to a private turbocql module"):
        publish(public.__name__, ["OrderedDict"])  # another package's (here builtins')
    with pytest.raises(ValueError, match="would not find it"):
        publish(public.__name__, ["Alias"])  # turbocql.fake_public.Thing is its path
    publish(public.__name__, ["Thing"])
    other = types.ModuleType("turbocql.other_public")
    other.Thing = private.Thing
    monkeypatch.setitem(sys.modules, other.__name__, other)
    with pytest.raises(ValueError, match="belongs to turbocql.fake_public"):
        publish(other.__name__, ["Thing"])  # one home per object
    assert private.Thing.__module__ == "turbocql.fake_public"


def test_is_private():
    assert is_private("turbocql._policies.failure")
    assert is_private("turbocql.cqlengine._querybase")
    assert is_private("turbocql._engine")
    assert not is_private("turbocql.policies")
    assert not is_private("turbocql")
    assert not is_private("_thread")
    assert not is_private("cassandra._x")
