"""Cassandra's marshal type strings (``MapType(UTF8Type, Int32Type)``, with or without
the ``org.apache.cassandra.db.marshal.`` package) read into type classes:
:func:`lookup_casstype`, :func:`lookup_casstype_simple`, :func:`parse_casstype_args`
(re-exported by ``turbocql.cqltypes``).
"""

from __future__ import annotations

import re
from typing import Any

from turbocql._types.base import (
    CassandraType,
    CassandraTypeType,
    _casstypes,
    apache_cassandra_type_prefix,
    mkUnrecognizedType,
    trim_if_startswith,
)

# A name is what Cassandra's marshal names are made of (Java identifiers, dotted
# packages, hex UDT names, ``=>`` of dynamic composites); any other character is an error.
_CASS_TOKEN = re.compile(r"\s*([(),:]|[A-Za-z0-9_.=>$]+)")


def _cass_tokens(typestring):
    tokens = []
    pos = 0
    while pos < len(typestring):
        m = _CASS_TOKEN.match(typestring, pos)
        if m is None:
            if typestring[pos:].strip():
                raise ValueError("Syntax error in %r at %d" % (typestring, pos))
            break
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def _is_int(token):
    return token.isdigit()


def parse_casstype_args(typestring):
    """The type class of a Cassandra type string with parameters
    (``MapType(UTF8Type, Int32Type)``)."""
    tokens = _cass_tokens(typestring)
    # stack of [type name, [(name, arg), ...]]
    stack: list[list[Any]] = [["", []]]
    pending_name = None
    last = None
    for token in tokens:
        if token == "(":
            stack.append([last, []])
            last = None
        elif token == ")":
            if last is not None:
                stack[-1][1].append((pending_name, last))
                pending_name = None
            name, args = stack.pop()
            last = _apply(name, args)
        elif token == ",":
            if last is not None:
                stack[-1][1].append((pending_name, last))
            pending_name = None
            last = None
        elif token == ":":
            pending_name = last.cassname if isinstance(last, type) else str(last)
            last = None
        else:
            last = int(token) if _is_int(token) else token
    if last is not None:
        stack[-1][1].append((pending_name, last))
    args = stack[0][1]
    result = args[0][1] if len(args) == 1 else last
    return lookup_casstype_simple(result) if isinstance(result, str) else result


def _apply(name, args):
    cls = lookup_casstype_simple(name)
    names = [n for n, _ in args]
    types = [lookup_casstype_simple(a) if isinstance(a, str) else a for _, a in args]
    return cls.apply_parameters(types, names)


def lookup_casstype_simple(casstype):
    """The type class of an unparameterized Cassandra type name (prefix optional);
    unknown names get an unrecognized type."""
    shortname = trim_if_startswith(casstype, apache_cassandra_type_prefix)
    try:
        return _casstypes[shortname]
    except KeyError:
        return mkUnrecognizedType(casstype)


def lookup_casstype(casstype):
    """The type class of a Cassandra type string, with parameters or not, or of a type
    class (returned as it is)."""
    if isinstance(casstype, (CassandraType, CassandraTypeType)):
        return casstype
    try:
        return parse_casstype_args(casstype)
    except (ValueError, AssertionError, IndexError) as exc:
        raise ValueError("Don't know how to parse type string %r: %s" % (casstype, exc)) from exc
