"""An opt-in shim that runs unmodified ``import cassandra`` code on turbocql.

This sub-package holds the import hook that makes the classic driver's module names
(``cassandra``, ``cassandra.cluster``, ``cassandra.query``, ...) resolve to turbocql's
modules, and the ``python -m turbocql.compat`` launcher (``__main__.py``) that runs a script
or module with the hook installed. Nothing here runs unless asked: importing turbocql does
not install it.

How it is turned on (pick one):

* in code, before anything imports ``cassandra``::

      import turbocql.compat
      turbocql.compat.install()

* from the command line, like ``python`` itself::

      python -m turbocql.compat app.py arg...
      python -m turbocql.compat -m some.module arg...
      python -m turbocql.compat --allow-shadow -m pytest tests/

* from the environment, through a site hook you add: Python runs no code at start-up on
  an environment variable alone (only ``.pth`` files, ``sitecustomize`` and
  ``usercustomize`` run, and turbocql installs none of them), so ``TURBOCQL_COMPAT=1`` has
  an effect only where a ``sitecustomize.py`` (or ``usercustomize.py``) on the path calls
  :func:`install_from_env`::

      # sitecustomize.py
      import turbocql.compat
      turbocql.compat.install_from_env()

What the hook does:

* ``cassandra`` and every ``cassandra.X.Y`` resolve to ``turbocql`` / ``turbocql.X.Y``,
  the SAME module objects (the top level aside, see the versions below):
  ``sys.modules["cassandra.cluster"] is sys.modules["turbocql.cluster"]``, so
  ``isinstance`` checks, exception classes and module-level state
  (``Cluster.connection_class = ...``) agree whichever name was used.
  The modules keep their own ``__name__`` and ``__spec__`` (``turbocql...``).
* A module turbocql does not have raises :class:`ModuleNotFoundError` naming both names
  (``cassandra.io`` -> ``turbocql.io``), with ``name`` set to the ``cassandra`` name, so
  ``try: import cassandra.X except ImportError:`` fallbacks behave as with a classic
  driver that lacks an optional module.
* Version checks follow the classic driver whose behaviour turbocql mirrors:
  ``cassandra.__version__`` is :data:`CLASSIC_API_VERSION` (``"3.30.1"``) and
  ``cassandra.__version_info__`` ``(3, 30, 1)``, so that a library branching on the classic
  version (ddtrace, django-cassandra-engine) takes the branch for the API it gets. Which
  driver runs is told by ``cassandra.__turbocql_version__`` (turbocql's own version, also
  ``turbocql.__version__``) and ``cassandra.__name__ == "turbocql"``. For this, the top-level
  ``cassandra`` is a thin module over ``turbocql`` (every other name is read from and written
  to ``turbocql`` itself); every ``cassandra.X`` below it is the ``turbocql.X`` module object.
* It refuses to shadow a real ``cassandra`` package (the ``cassandra-driver`` or
  ``scylla-driver`` distribution, or any ``cassandra`` package found on ``sys.path``)
  unless ``allow_shadow=True`` (``--allow-shadow``) or ``TURBOCQL_COMPAT_SHADOW=1``:
  :class:`ShadowError` names what was found and how to override. The check does not import
  the real package.
* If ``cassandra`` is already imported (the real one, or any module under that name), it is
  too late: :class:`AlreadyImportedError`.
* turbocql's records are logged under the classic driver's logger names
  (``cassandra.cluster``, ``cassandra.pool``, ``cassandra.connection``,
  ``cassandra.policies``, ``cassandra.metadata``, ``cassandra.query``,
  ``cassandra.protocol``, ``cassandra.auth``, ``cassandra.timestamps``) instead of
  ``turbocql.*``, so a logging configuration written for the classic driver (handlers,
  levels, filters on those names) applies; as the classic package does, a
  ``logging.NullHandler`` is added to the ``cassandra`` logger, so a program that configures
  no logging prints nothing. :func:`uninstall` puts the ``turbocql.*`` names back (see
  ``turbocql._loggers``).

Limits: the hook lives in one interpreter. A child process (``subprocess``, or
``multiprocessing`` with the ``spawn`` start method) starts without it unless it is
started through ``python -m turbocql.compat`` or a ``sitecustomize`` calling
:func:`install_from_env`; the launcher sets ``TURBOCQL_COMPAT=1`` (and
``TURBOCQL_COMPAT_SHADOW=1`` when shadowing was allowed) in ``os.environ`` so such a hook
in a child turns the shim on too.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import logging
import os
import sys
import threading
import types
from collections.abc import Sequence

__all__ = [
    "CLASSIC_API_VERSION",
    "ALIAS",
    "TARGET",
    "AlreadyImportedError",
    "CompatError",
    "ShadowError",
    "install",
    "install_from_env",
    "installed",
    "uninstall",
]

#: The package name the shim serves, and the package it serves it from.
ALIAS = "cassandra"
TARGET = "turbocql"

#: The version of the classic driver (``cassandra-driver``) whose API turbocql mirrors.
CLASSIC_API_VERSION = "3.30.1"

#: Distributions that install a top-level ``cassandra`` package.
_CLASSIC_DISTRIBUTIONS = ("cassandra-driver", "scylla-driver")

_TRUE = frozenset({"1", "true", "yes", "on"})

_lock = threading.Lock()


class CompatError(ImportError):
    """The shim could not be installed (base class of the errors below)."""


class ShadowError(CompatError):
    """A real ``cassandra`` package is installed and shadowing it was not allowed."""


class AlreadyImportedError(CompatError):
    """``cassandra`` was imported before :func:`install` ran."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _target_name(fullname: str) -> str:
    return TARGET + fullname[len(ALIAS) :]


def _version_info(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


class _ClassicTopLevel(types.ModuleType):
    """The top-level ``cassandra`` module: ``turbocql`` with the classic version attributes.

    Only the module's own dunder attributes (``__spec__``, ``__version__``, ...) live here;
    every other attribute is read from the target package and written to it, so module-level
    state (``cassandra.X = ...``) is the target's whichever name set it."""

    def __init__(self, target: types.ModuleType) -> None:
        super().__init__(target.__name__, target.__doc__)
        own = self.__dict__
        own["_target"] = target
        for name in ("__file__", "__path__", "__package__"):
            if hasattr(target, name):
                own[name] = getattr(target, name)
        own["__version__"] = CLASSIC_API_VERSION
        own["__version_info__"] = _version_info(CLASSIC_API_VERSION)
        own["__turbocql_version__"] = getattr(target, "__version__", None)

    def __getattr__(self, name: str) -> object:
        return getattr(self.__dict__["_target"], name)

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("__") and name.endswith("__"):
            self.__dict__[name] = value
        else:
            setattr(self.__dict__["_target"], name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__:
            del self.__dict__[name]
        else:
            delattr(self.__dict__["_target"], name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self.__dict__["_target"])) | set(self.__dict__) - {"_target"})

    def __repr__(self) -> str:
        return "<module %r (turbocql.compat: %r as the classic driver %s)>" % (
            ALIAS,
            self.__dict__["_target"].__name__,
            CLASSIC_API_VERSION,
        )


class _AliasLoader(importlib.abc.Loader):
    """Loads ``cassandra.X`` as the already imported ``turbocql.X`` module object."""

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == ALIAS:
            return _ClassicTopLevel(self._module)
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system has just set module.__spec__ to the alias's spec (it always
        # does); give the module its own back, so it stays a turbocql module (reload,
        # pickling by reference, pkgutil and tracebacks see the real name).
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """``sys.meta_path`` finder: ``cassandra[.X...]`` -> the module ``turbocql[.X...]``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = _target_name(fullname)
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            # Only rewrite the error when it is the mapped module (or one of its parents)
            # that is missing; a module missing inside turbocql's own imports stays as is.
            if exc.name is not None and (real == exc.name or real.startswith(exc.name + ".")):
                missing = exc.name
                raise ModuleNotFoundError(
                    "No module named %r: turbocql.compat maps %r to %r, and turbocql has no module %r"
                    % (fullname, fullname, real, missing),
                    name=fullname,
                ) from None
            raise
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), origin=getattr(module, "__file__", None), is_package=is_package
        )

    def __repr__(self) -> str:
        return "<turbocql.compat finder: %s -> %s>" % (ALIAS, TARGET)


_finder: _AliasFinder | None = None


def installed() -> bool:
    """Whether the shim's finder is on ``sys.meta_path``."""
    return _finder is not None and _finder in sys.meta_path


def _real_cassandra() -> list[str]:
    """What real ``cassandra`` package this environment holds, without importing it.

    Returns descriptions: installed distributions that provide it (``cassandra-driver
    3.30.1``), or, if none is known, where a ``cassandra`` package was found on
    ``sys.path``. Empty if there is none.
    """
    found: list[str] = []
    names: set[str] = set(_CLASSIC_DISTRIBUTIONS)
    try:
        names.update(importlib.metadata.packages_distributions().get(ALIAS, ()))
    except Exception:  # a broken distribution's metadata must not break the check
        pass
    for name in sorted(names):
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found.append("%s %s" % (dist.metadata["Name"] or name, dist.version))
    if not found:
        # PathFinder directly: importlib.util.find_spec would consult every meta-path
        # finder (ours included, if installed) and never imports a top-level package.
        spec = importlib.machinery.PathFinder.find_spec(ALIAS)
        if spec is not None:
            where = spec.origin or ", ".join(spec.submodule_search_locations or ()) or "?"
            found.append("a %r package at %s" % (ALIAS, where))
    return found


# The aliases made at install (see install()).
_EAGER_ALIASES = (ALIAS, ALIAS + ".cluster")


def install(allow_shadow: bool = False) -> None:
    """Make ``cassandra`` and ``cassandra.X...`` import as ``turbocql`` / ``turbocql.X...``.

    Call it before anything imports ``cassandra``. Installing twice is a no-op.

    :param allow_shadow: install even though a real ``cassandra`` package (the classic
        driver) is installed in this environment; the environment variable
        ``TURBOCQL_COMPAT_SHADOW=1`` does the same.
    :raises AlreadyImportedError: ``cassandra`` (or a ``cassandra.X`` module) is already
        imported; the shim cannot replace modules that are in use.
    :raises ShadowError: a real ``cassandra`` package is installed and shadowing it was not
        allowed.
    """
    global _finder
    with _lock:
        if installed():
            return
        already = sorted(n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + "."))
        if already:
            module = sys.modules.get(already[0])
            where = getattr(module, "__file__", None) or "?"
            raise AlreadyImportedError(
                "turbocql.compat.install() was called too late: %r is already imported (%s, from %s); "
                "install the shim before anything imports cassandra (first thing in the program, or run it "
                "with `python -m turbocql.compat`)" % (already[0], ", ".join(already[:5]), where)
            )
        if not (allow_shadow or _env_flag("TURBOCQL_COMPAT_SHADOW")):
            real = _real_cassandra()
            if real:
                raise ShadowError(
                    "turbocql.compat refuses to shadow the real classic driver installed in this environment "
                    "(%s): `import cassandra` would silently run turbocql instead of it. Uninstall it, or "
                    "allow the shadowing with install(allow_shadow=True), `python -m turbocql.compat "
                    "--allow-shadow ...`, or the environment variable TURBOCQL_COMPAT_SHADOW=1" % "; ".join(real)
                )
        importlib.import_module(TARGET)
        _use_classic_loggers(True)
        _finder = _AliasFinder()
        sys.meta_path.insert(0, _finder)
        # `cassandra` and `cassandra.cluster` are in sys.modules from now on: a tool that acts
        # when one is imported, by name, acts at once when asked afterwards. (ddtrace's
        # patch(cassandra=True) hooks the import of `cassandra.cluster` by the module's
        # __name__, which stays "turbocql.cluster": it would never fire.)
        for name in _EAGER_ALIASES:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:  # the module's own missing import: not ours to hide
                    raise


_null_handler: logging.Handler | None = None


def _use_classic_loggers(on: bool) -> None:
    """turbocql's records under the ``cassandra.*`` logger names (``on``) or its own."""
    global _null_handler
    from turbocql import _loggers

    _loggers.use_prefix(_loggers.CLASSIC_PREFIX if on else _loggers.OWN_PREFIX)
    root = logging.getLogger(ALIAS)
    if on and _null_handler is None:
        _null_handler = logging.NullHandler()  # as `import cassandra` does
        root.addHandler(_null_handler)
    elif not on and _null_handler is not None:
        root.removeHandler(_null_handler)
        _null_handler = None


def install_from_env() -> bool:
    """Install the shim if the environment variable ``TURBOCQL_COMPAT`` is set (``1``).

    For a ``sitecustomize.py`` / ``usercustomize.py``. ``TURBOCQL_COMPAT_SHADOW=1`` allows
    shadowing a real classic driver. Returns whether the shim is installed.
    """
    if _env_flag("TURBOCQL_COMPAT"):
        install()
    return installed()


def uninstall() -> None:
    """Remove the finder and the ``cassandra`` names it put in ``sys.modules``.

    The turbocql modules stay imported under their own names; a module that kept a
    reference to ``cassandra`` keeps turbocql.
    """
    global _finder
    with _lock:
        if _finder is not None:
            while _finder in sys.meta_path:
                sys.meta_path.remove(_finder)
            _finder = None
            _use_classic_loggers(False)
        for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
            module = sys.modules[name]
            real_name = getattr(module, "__name__", "")
            if real_name == TARGET or real_name.startswith(TARGET + ".") or isinstance(module, _ClassicTopLevel):
                del sys.modules[name]
