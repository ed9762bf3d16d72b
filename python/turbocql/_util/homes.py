"""The public home of the classes and functions whose code lives in a private module.

A public module that re-exports names from private ones (``turbocql.policies`` passes on
``RetryPolicy`` of ``turbocql._policies.failure``) calls :func:`publish` at its end with the
names it is the home of. Each of them gets the public module as its ``__module__``, as in the
classic driver (``cassandra.policies.RetryPolicy.__module__ == "cassandra.policies"``), so
reprs, tracebacks, the docs and pickles name ``turbocql.policies.RetryPolicy``, a path that
stays valid wherever the code moves among the private modules (and a pickle of the classic
driver's, naming ``cassandra.policies.RetryPolicy``, finds the same class under
turbocql.compat, where ``cassandra.policies`` is ``turbocql.policies``).

An object has one home: the module where the classic driver defines the name (else, for a
name of turbocql's own, the module that documents it). A module that only passes a name along
(``turbocql.cluster`` re-exports ``RetryPolicy`` too) does not list it. Only objects of a
private turbocql module move: a name of the standard library or of another package, or one
already homed in another public module, is refused, as is a name that is not the object's
``__qualname__`` (``module.qualname`` would not find it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable


def is_private(module_name: str) -> bool:
    """Whether ``module_name`` is a private module of turbocql (a component after
    ``turbocql`` starts with ``_``: ``turbocql._policies.failure``, ``turbocql.bulk._load``)."""
    parts = module_name.split(".")
    return parts[0] == "turbocql" and any(part.startswith("_") for part in parts[1:])


def publish(module_name: str, names: Iterable[str]) -> None:
    """Make module ``module_name`` (being imported, so in ``sys.modules``) the ``__module__``
    of each of its ``names``: classes or functions defined in a private turbocql module.

    A name already homed there is left as it is (the module run again, as
    ``importlib.reload`` does); any other is a mistake of the caller and raises ValueError."""
    module = sys.modules[module_name]
    for name in names:
        obj = getattr(module, name)
        current = getattr(obj, "__module__", None)
        if current == module_name:
            continue
        if not isinstance(current, str) or not is_private(current):
            raise ValueError("%s.%s belongs to %s, not to a private turbocql module" % (module_name, name, current))
        if getattr(obj, "__qualname__", None) != name:
            raise ValueError(
                "%s.%s is %s.%s: the public path would not find it"
                % (module_name, name, current, getattr(obj, "__qualname__", None))
            )
        obj.__module__ = module_name
