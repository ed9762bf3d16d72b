"""User-defined type values the engine decodes: the class a UDT's values are made of (a
class given to ``Cluster.register_user_type``, else a namedtuple named after the type, as the
classic driver makes). ``_make_udt`` is handed to the engine by ``turbocql._cluster.bootstrap``.
"""

import keyword
from collections import namedtuple

from turbocql import _loggers

log = _loggers.cluster

_UDT_CLASSES: dict[tuple, type] = {}


def _make_udt(keyspace, name, field_names, values):
    cls = _UDT_CLASSES.get((keyspace, name))
    if cls is not None:
        return cls(**dict(zip(field_names, values)))
    key = (keyspace, name, field_names)
    cls = _UDT_CLASSES.get(key)
    if cls is None:
        cls = _udt_tuple_type(name, field_names)
        _UDT_CLASSES[key] = cls
    if cls is tuple:
        return tuple(values)
    return cls(*values)


def _udt_tuple_type(name, field_names):
    """The classic driver's class for an unregistered UDT: a namedtuple named after the
    type; invalid field names made positional (``field_0_``); a plain tuple when the type
    name itself is not a Python identifier."""
    try:
        return namedtuple(name, field_names)
    except ValueError:
        pass
    positional = [
        "field_%d_" % i
        if not name_ok.isidentifier() or keyword.iskeyword(name_ok) or name_ok.startswith("_")
        else name_ok
        for i, name_ok in enumerate(field_names)
    ]
    try:
        cls = namedtuple(name, positional)
    except ValueError:
        log.warning(
            "could not create a namedtuple for '%s' because the name is not a valid Python identifier; "
            "will return tuples in its place",
            name,
        )
        return tuple
    log.warning(
        "could not create a namedtuple for '%s' because one or more field names are not valid Python "
        "identifiers (%s); returning positionally-named fields",
        name,
        field_names,
    )
    return cls
