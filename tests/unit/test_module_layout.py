"""The public modules keep every public name, and each name the same object by
``__module__`` and ``__qualname__``, whatever private module holds the code (no server).

``public_modules.json`` beside this file is a snapshot of every public module of turbocql
(no component of its dotted name starts with ``_``): each public name (no leading
underscore) and what it is bound to, as

* ``"M:Q"`` for a class or function: its ``__module__`` and ``__qualname__``, what reprs,
  pickles and the docs name it by;
* ``"module M"`` for a module (its ``__name__``);
* ``"a M:Q"`` for any other value: its class's ``__module__`` and ``__qualname__``.

A name may be added, never lost; a class or function keeps its ``__module__`` and
``__qualname__``. A name whose object lives in a private module that has since moved
(``MOVED``: old module -> new module) is compared under its new module name.

After a deliberate change to the public API, take the snapshot again:
``python tests/unit/test_module_layout.py --write``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import pkgutil
import sys
import types
from pathlib import Path

import pytest

import turbocql

SNAPSHOT = Path(__file__).with_name("public_modules.json")

# Private modules moved since the snapshot was taken (old -> new): a public name defined in
# one of them has the new module as its __module__. Only private modules move: a public
# module keeps its name.
MOVED: dict[str, str] = {
    # the CQL types and type names (turbocql._types) and util's pieces (turbocql._util)
    "turbocql._cqltypes_base": "turbocql._types.base",
    "turbocql._cqltypes_scalar": "turbocql._types.scalar",
    "turbocql._cqltypes_params": "turbocql._types.params",
    "turbocql._cqltypes_dse": "turbocql._types.dse",
    "turbocql._casstype_parse": "turbocql._types.casstype_parse",
    "turbocql._cqltype_parse": "turbocql._types.cqltype_parse",
    "turbocql._udt": "turbocql._types.udt",
    "turbocql._util_values": "turbocql._util.values",
    "turbocql._util_collections": "turbocql._util.containers",
    "turbocql._util_time": "turbocql._util.times",
    "turbocql._util_geo": "turbocql._util.geo",
    # cluster.metadata's pieces (turbocql._metadata)
    "turbocql._schema_model": "turbocql._metadata.schema_model",
    "turbocql._schema_read": "turbocql._metadata.schema_read",
    "turbocql._schema_cql": "turbocql._metadata.schema_cql",
    "turbocql._schema_change": "turbocql._metadata.schema_change",
    "turbocql._replication": "turbocql._metadata.replication",
    "turbocql._topology": "turbocql._metadata.topology",
    # statements, row factories, Arrow results, protocol messages (turbocql._query)
    "turbocql._statement": "turbocql._query.statement",
    "turbocql._prepared": "turbocql._query.prepared",
    "turbocql._batch": "turbocql._query.batch",
    "turbocql._trace": "turbocql._query.trace",
    "turbocql._row_factories": "turbocql._query.row_factories",
    "turbocql._arrow": "turbocql._query.arrow",
    "turbocql._protocol_messages": "turbocql._query.messages",
    # a session and its requests (turbocql._session), a Cluster's pieces (turbocql._cluster),
    # the failure policies and execution profiles (turbocql._policies)
    "turbocql._future": "turbocql._session.future",
    "turbocql._results": "turbocql._session.results",
    "turbocql._session": "turbocql._session.session",
    "turbocql._dispatcher": "turbocql._session.dispatcher",
    "turbocql._cluster_args": "turbocql._cluster.arguments",
    "turbocql._cluster_names": "turbocql._cluster.classic_names",
    "turbocql._cluster_pool": "turbocql._cluster.pool_size",
    "turbocql._cluster_profiles": "turbocql._cluster.request_settings",
    "turbocql._connect": "turbocql._cluster.connect",
    "turbocql._tls": "turbocql._cluster.tls",
    "turbocql._control": "turbocql._cluster.control",
    "turbocql._bootstrap": "turbocql._cluster.bootstrap",
    "turbocql._failure_policies": "turbocql._policies.failure",
    "turbocql._profiles": "turbocql._policies.profiles",
}


def is_public(module_name: str) -> bool:
    """Whether ``turbocql[.X...]`` is a public module: no component starts with ``_``."""
    return not any(part.startswith("_") for part in module_name.split(".")[1:])


def public_module_names() -> list[str]:
    """Every public module of the package, ``turbocql`` first."""
    names = [turbocql.__name__]
    names += [m.name for m in pkgutil.walk_packages(turbocql.__path__, turbocql.__name__ + ".") if is_public(m.name)]
    return names


# What a name bound to None is recorded as (see test_public_names_kept).
SETTING = "a builtins:NoneType"


def describe(value: object) -> str:
    """What a public name is bound to, as the snapshot records it."""
    if isinstance(value, types.ModuleType):
        return "module %s" % value.__name__
    if inspect.isclass(value) or inspect.isroutine(value):
        return "%s:%s" % (getattr(value, "__module__", None), getattr(value, "__qualname__", None))
    return "a %s:%s" % (type(value).__module__, type(value).__qualname__)


def public_names(module: types.ModuleType) -> dict[str, str]:
    """The public names of ``module`` (its ``__all__`` too) and what each is bound to."""
    names = {n for n in dir(module) if not n.startswith("_")} | set(getattr(module, "__all__", ()))
    out = {}
    for name in sorted(names):
        value = getattr(module, name)
        if type(value).__module__ == "__future__":  # from __future__ import annotations
            continue
        out[name] = describe(value)
    return out


def import_available(name: str) -> types.ModuleType | None:
    """Module ``name``, or None when it needs an optional dependency that is not installed
    (pyspark, pyarrow, dask: the test requirements of the other Pythons' runs have none)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        # A module's own ImportError naming what to install carries the missing one as cause.
        missing = exc if isinstance(exc, ModuleNotFoundError) else exc.__cause__
        if isinstance(missing, ModuleNotFoundError) and (missing.name or "turbocql").split(".")[0] != "turbocql":
            return None
        raise


def take_snapshot() -> dict[str, dict[str, str]]:
    """Every public module's public names. All modules are imported before any is read, so
    a package's submodules are its attributes whatever the order."""
    modules = {name: import_available(name) for name in public_module_names()}
    return {name: public_names(module) for name, module in modules.items() if module is not None}


def _moved(entry: str) -> str:
    """A snapshot entry with a private module that moved named by its new name."""
    kind, _, path = entry.rpartition(" ")
    module, sep, qualname = path.partition(":")
    module = MOVED.get(module, module)
    return "%s%s%s%s" % (kind + " " if kind else "", module, sep, qualname)


def _is_turbocql(entry: str) -> bool:
    """Whether a snapshot entry names something of turbocql (a module, class or function of
    the package, or a value of one of its classes)."""
    path = entry.rpartition(" ")[2]
    return path.split(":")[0].split(".")[0] == "turbocql"


def _snapshot() -> dict[str, dict[str, str]]:
    return json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}


def test_moved_modules_are_private_and_gone():
    for old, new in MOVED.items():
        assert not is_public(old) and not is_public(new), (old, new)
        spec = importlib.util.find_spec(old)
        # gone, or a package now (turbocql._session: the module became its package's session)
        assert spec is None or spec.submodule_search_locations is not None, old
        assert importlib.util.find_spec(new) is not None, new
        import_available(new)


def test_every_public_module_is_in_the_snapshot():
    # A new public module is added to the snapshot (--write) with its names.
    assert set(public_module_names()) <= set(_snapshot()), "take the snapshot again (--write)"


@pytest.mark.parametrize("module_name", sorted(_snapshot()))
def test_public_names_kept(module_name):
    expected = _snapshot()[module_name]
    if import_available(module_name) is None:
        pytest.skip("%s needs an optional dependency that is not installed" % module_name)
    take_snapshot()  # every module imported, as when the snapshot was taken
    actual = public_names(sys.modules[module_name])
    # A sub-package that needs an optional dependency is an attribute only once imported.
    unavailable = {n for n, e in expected.items() if e.startswith("module ") and import_available(e[7:]) is None}
    lost = sorted(set(expected) - set(actual) - unavailable)
    assert not lost, "%s lost public names: %s" % (module_name, lost)
    # A name that was None is a setting the application may set (cqlengine's
    # models.DEFAULT_KEYSPACE once connection.setup has run, as other tests of the same run
    # do), and a name of another package (policies' threading.Lock: a function on 3.11, a
    # class on 3.13) is that package's, whatever the Python: only that each is still there
    # is checked.
    changed = {
        name: (_moved(entry), actual[name])
        for name, entry in expected.items()
        if name not in unavailable and entry != SETTING and _is_turbocql(entry) and _moved(entry) != actual[name]
    }
    assert not changed, "%s: names bound to another object (expected, actual): %s" % (module_name, changed)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/unit/test_module_layout.py --write")
    SNAPSHOT.write_text(json.dumps(take_snapshot(), indent=1, sort_keys=True) + "\n")
    print("wrote", SNAPSHOT)
