"""CQL text for schema metadata: names, values, type strings and the statements that
recreate schema objects.

The pure half of :mod:`turbocql.metadata`: the CQL keyword sets and name quoting
(``protect_name`` and friends, re-exported there), the parsing of CQL type strings (to strip
``frozen<>`` and to find the user types a type refers to), and the functions that render
``CREATE ...`` statements from metadata objects (keyspaces, tables, indexes, triggers,
materialized views, user types, functions, aggregates) in the classic driver's layout.
The renderers read the objects' attributes only, so they work on any object with the
classic fields. Standard library only.
"""

import re
from collections.abc import Mapping

# -- keywords ------------------------------------------------------------------------------

# CQL's keywords, as the classic driver lists them (from Cassandra's Cql.g, plus DSE's own):
# a name that is a reserved keyword must be quoted. The same sets as the classic driver's,
# so that names are quoted the same way.
_UNRESERVED = """
    aggregate all as ascii bigint blob boolean called clustering compact contains count counter
    custom date decimal deterministic distinct double exists filtering finalfunc float frozen
    function functions inet initcond input int json key keys keyspaces language list login map
    monotonic nologin nosuperuser options password permission permissions returns role roles
    sfunc smallint static storage stype superuser text time timestamp timeuuid tinyint trigger
    ttl tuple type user users uuid values varchar varint writetime
"""
_RESERVED = """
    add allow alter and apply asc authorize batch begin by columnfamily create default delete
    desc describe drop entries execute from full grant if in index infinity insert into is
    keyspace limit materialized mbean mbeans modify nan norecursive not null of on or order
    primary rename replace revoke schema select set table to token truncate unlogged unset
    update use using view where with
"""
# DSE's keywords, reserved in the classic driver's sets as well.
_DSE_RESERVED = """
    node nodes plan active application applications java executor executors std_out std_err
    renew delegation no redact lowercasestring cluster authentication schemes scheme internal
    ldap kerberos remote object method call calls search config rows columns profiles commit
    reload rebuild field workpool any submission indices restrict unrestrict
"""

cql_keywords_unreserved = set(_UNRESERVED.split())
"""CQL keywords that may be used as names without quotes."""

cql_keywords_reserved = set(_RESERVED.split()) | set(_DSE_RESERVED.split())
"""CQL keywords that must be quoted when used as names."""

cql_keywords = cql_keywords_unreserved | cql_keywords_reserved
"""All CQL keywords."""

# -- names and values ----------------------------------------------------------------------

_UNQUOTED_NAME = re.compile(r"^[a-z][0-9a-z_]*$")


def is_valid_name(name):
    """True if ``name`` can be written in CQL without quotes (lower case, not reserved)."""
    if name is None:
        return False
    if name.lower() in cql_keywords_reserved:
        return False
    return _UNQUOTED_NAME.match(name) is not None


def escape_name(name):
    """``name`` as a quoted CQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def maybe_escape_name(name):
    """``name`` as is if CQL accepts it unquoted, else quoted."""
    return name if is_valid_name(name) else escape_name(name)


def protect_name(name):
    """``name`` as a CQL identifier, quoted if needed."""
    return maybe_escape_name(name)


def protect_names(names):
    return [protect_name(n) for n in names]


def protect_value(value):
    """A table option's value as a CQL literal: numbers and booleans bare, strings quoted."""
    if value is None:
        return "NULL"
    if isinstance(value, (bool, int, float)):
        return str(value).lower()
    return "'" + value.replace("'", "''") + "'"


def _quote(text):
    return str(text).replace("'", "''")


def map_literal(mapping):
    """A map of strings as ``{'k': 'v', ...}`` (option maps: compaction, caching...)."""
    return "{" + ", ".join("'%s': '%s'" % (_quote(k), _quote(v)) for k, v in mapping.items()) + "}"


# -- type strings --------------------------------------------------------------------------

_TYPE_TOKEN = re.compile(
    r"""\s*(?:
        (?P<dq>"(?:[^"]|"")*")          # quoted name
      | (?P<sq>'(?:[^']|'')*')          # custom type class
      | (?P<word>[A-Za-z0-9_.:+-]+)     # name or number
      | (?P<punct>[<>,])
    )""",
    re.VERBOSE,
)


def _type_tokens(type_string):
    pos, end = 0, len(type_string)
    while pos < end:
        m = _TYPE_TOKEN.match(type_string, pos)
        if m is None:
            if type_string[pos:].strip() == "":
                return
            raise ValueError("cannot parse CQL type %r at %d" % (type_string, pos))
        pos = m.end()
        yield m.group(m.lastgroup)


def parse_type(type_string):
    """A CQL type string as a tree ``(name, [parameters...])``: ``map<text, frozen<list<int>>>``
    is ``("map", [("text", []), ("frozen", [("list", [("int", [])])])])``."""
    tokens = list(_type_tokens(type_string))
    pos = 0

    def node():
        nonlocal pos
        if pos >= len(tokens) or tokens[pos] in "<>,":
            raise ValueError("cannot parse CQL type %r" % type_string)
        name = tokens[pos]
        pos += 1
        params = []
        if pos < len(tokens) and tokens[pos] == "<":
            pos += 1
            while True:
                params.append(node())
                if pos >= len(tokens):
                    raise ValueError("cannot parse CQL type %r" % type_string)
                tok = tokens[pos]
                pos += 1
                if tok == ">":
                    break
                if tok != ",":
                    raise ValueError("cannot parse CQL type %r" % type_string)
        return name, params

    tree = node()
    if pos != len(tokens):
        raise ValueError("cannot parse CQL type %r" % type_string)
    return tree


def _render_type(tree):
    name, params = tree
    if not params:
        return name
    return "%s<%s>" % (name, ", ".join(_render_type(p) for p in params))


def _unfrozen(tree):
    name, params = tree
    while name == "frozen" and len(params) == 1:
        name, params = params[0]
    return name, [_unfrozen(p) for p in params]


def strip_frozen(type_string):
    """``type_string`` without its ``frozen<>`` wrappers: ``frozen<tuple<int, text>>`` is
    ``tuple<int, text>`` (the form functions and aggregates are declared with)."""
    try:
        return _render_type(_unfrozen(parse_type(type_string)))
    except ValueError:
        return type_string


def type_names(type_string):
    """Every name in a type string, unquoted: ``map<text, frozen<"Addr">>`` gives
    ``["map", "text", "frozen", "Addr"]`` (the user types it refers to are among them)."""
    names = []

    def walk(tree):
        name, params = tree
        if name.startswith('"'):
            names.append(name[1:-1].replace('""', '"'))
        elif not name.startswith("'"):
            names.append(name)
        for p in params:
            walk(p)

    try:
        walk(parse_type(type_string))
    except ValueError:
        return []
    return names


# -- statements ----------------------------------------------------------------------------


def _qualified(keyspace, name):
    return "%s.%s" % (protect_name(keyspace), protect_name(name))


def keyspace_cql(ks):
    """``CREATE KEYSPACE`` for ``ks`` alone (no types or tables)."""
    if ks.virtual:
        return "// VIRTUAL KEYSPACE %s" % protect_name(ks.name)
    strategy = ks.replication_strategy
    replication = strategy.export_for_schema() if strategy is not None else "{}"
    ret = "CREATE KEYSPACE %s WITH replication = %s  AND durable_writes = %s" % (
        protect_name(ks.name),
        replication,
        "true" if ks.durable_writes else "false",
    )
    if ks.graph_engine is not None:
        ret += " AND graph_engine = '%s'" % ks.graph_engine
    return ret


def user_types_in_order(user_types):
    """The user types of a keyspace, sorted by name except that a type comes after the
    types it uses."""
    remaining = dict(user_types)
    ordered = []

    def take(name):
        udt = remaining.pop(name)
        for field_type in udt.field_types:
            for dep in type_names(field_type):
                if dep in remaining:
                    take(dep)
        ordered.append(udt)

    for name in sorted(remaining):
        if name in remaining:
            take(name)
    return ordered


def _failure_note(what, exc_info, cql):
    import traceback

    ret = "/*\nWarning: %s is incomplete because of an error processing metadata.\n" % what
    ret += "".join(traceback.format_exception(*exc_info))
    ret += "\nApproximate structure, for reference:\n(this should not be used to reproduce this schema)\n\n"
    return ret + cql + "\n*/"


def keyspace_export(ks):
    """The keyspace, its user types, functions, aggregates and tables (each with its
    indexes, triggers and views), as CQL statements separated by blank lines."""
    parts = [keyspace_cql(ks) + ";"]
    parts += [t.export_as_string() for t in user_types_in_order(ks.user_types)]
    parts += [f.export_as_string() for f in ks.functions.values()]
    parts += [a.export_as_string() for a in ks.aggregates.values()]
    parts += [t.export_as_string() for t in ks.tables.values()]
    cql = "\n\n".join(parts)
    if getattr(ks, "_exc_info", None):
        return _failure_note("Keyspace %s" % ks.name, ks._exc_info, cql)
    if ks.virtual:
        return (
            "/*\nWarning: Keyspace %s is a virtual keyspace and cannot be recreated with CQL.\n"
            "Structure, for reference:*/\n%s\n" % (ks.name, cql)
        )
    return cql


def option_strings(options):
    """``name = value`` for each table option, sorted; maps (compaction, caching...) as map
    literals, the other values with :func:`protect_value`."""
    ret = []
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            ret.append("%s = %s" % (name, map_literal(value)))
            continue
        if name == "comment":
            value = value or ""
        ret.append("%s = %s" % (name, protect_value(value)))
    return sorted(ret)


def properties_cql(formatted, clustering_key, options, is_compact_storage=False):
    """The ``WITH`` clause's properties of a table or view, joined by ``AND``."""
    props = []
    if is_compact_storage:
        props.append("COMPACT STORAGE")
    if clustering_key:
        order = ", ".join("%s %s" % (protect_name(c.name), "DESC" if c.is_reversed else "ASC") for c in clustering_key)
        props.append("CLUSTERING ORDER BY (%s)" % order)
    props += option_strings(options)
    return ("\n    AND " if formatted else " AND ").join(props)


def table_cql(table, formatted=False):
    """``CREATE TABLE`` (``VIRTUAL TABLE`` for a virtual one) with its options."""
    nl, sep, pad = ("\n", ",\n", "    ") if formatted else ("", ", ", "")
    cols = [
        "%s %s%s" % (protect_name(c.name), c.cql_type, " static" if c.is_static else "") for c in table.columns.values()
    ]
    pk, ck = table.partition_key, table.clustering_key
    if len(pk) == 1 and not ck and cols:
        cols[0] += " PRIMARY KEY"
    kind = "VIRTUAL" if table.virtual else "CREATE"
    ret = "%s TABLE %s (%s" % (kind, _qualified(table.keyspace_name, table.name), nl)
    ret += sep.join(pad + c for c in cols)
    if len(pk) > 1 or ck:
        if len(pk) > 1:
            key = "(%s)" % ", ".join(protect_name(c.name) for c in pk)
        else:
            key = protect_name(pk[0].name) if pk else ""
        if ck:
            key += ", " + ", ".join(protect_name(c.name) for c in ck)
        ret += "%s%sPRIMARY KEY (%s)" % (sep, pad, key)
    ret += nl + ")"
    props = properties_cql(formatted, ck, table.options, table.is_compact_storage)
    if props:
        ret += " WITH " + props
    return ret


# Table extensions (keys of system_schema.tables' extensions map) that add CQL after a
# table's: filled by subclassing ``RegisteredTableExtension`` (turbocql._metadata.schema_model).
_table_extensions: dict = {}


def _extensions_cql(meta):
    ret = ""
    exts = meta.extensions
    if exts:
        for key, ext in _table_extensions.items():
            if key in exts:
                cql = ext.after_table_cql(meta, key, exts[key])
                if cql:
                    ret += "\n\n" + cql
    return ret


def _table_all_cql(table):
    ret = table_cql(table, formatted=True) + ";"
    for index in table.indexes.values():
        ret += "\n%s;" % index.as_cql_query()
    for trigger in table.triggers.values():
        ret += "\n%s;" % trigger.as_cql_query()
    for view in table.views.values():
        ret += "\n\n%s;" % view.as_cql_query(formatted=True)
    return ret + _extensions_cql(table)


def table_export(table):
    """The table, its indexes, triggers and views; a virtual table as a comment."""
    what = "Table %s.%s" % (table.keyspace_name, table.name)
    if getattr(table, "_exc_info", None):
        return _failure_note(what, table._exc_info, _table_all_cql(table))
    if table.virtual:
        note = "Warning: %s is a virtual table and cannot be recreated with CQL.\nStructure, for reference:" % what
        return "/*\n%s\n%s\n*/" % (note, _table_all_cql(table))
    return _table_all_cql(table)


def index_cql(index):
    """``CREATE INDEX`` (or ``CREATE CUSTOM INDEX ... USING``) for ``index``."""
    options = dict(index.index_options or {})
    target = options.pop("target", "")
    name = protect_name(index.name)
    on = _qualified(index.keyspace_name, index.table_name)
    if index.kind != "CUSTOM":
        return "CREATE INDEX %s ON %s (%s)" % (name, on, target)
    ret = "CREATE CUSTOM INDEX %s ON %s (%s) USING '%s'" % (name, on, target, _quote(options.pop("class_name", "")))
    if options:
        ret += " WITH OPTIONS = %s" % map_literal(options)
    return ret


def trigger_cql(trigger):
    table = trigger.table
    return "CREATE TRIGGER %s ON %s USING %s" % (
        protect_name(trigger.name),
        _qualified(table.keyspace_name, table.name),
        protect_value(trigger.options["class"]),
    )


def view_cql(view, formatted=False):
    """``CREATE MATERIALIZED VIEW`` with its select, key and options."""
    sep = "\n    " if formatted else " "
    if view.include_all_columns:
        selected = "*"
    else:
        selected = ", ".join(protect_name(c.name) for c in view.columns.values())
    pk = ", ".join(protect_name(c.name) for c in view.partition_key)
    key = "((%s)" % pk if len(view.partition_key) > 1 else "(%s" % pk
    if view.clustering_key:
        key += ", " + ", ".join(protect_name(c.name) for c in view.clustering_key)
    key += ")"
    ret = "CREATE MATERIALIZED VIEW %s AS%sSELECT %s%sFROM %s%sWHERE %s%sPRIMARY KEY %s" % (
        _qualified(view.keyspace_name, view.name),
        sep,
        selected,
        sep,
        _qualified(view.keyspace_name, view.base_table_name),
        sep,
        view.where_clause,
        sep,
        key,
    )
    props = properties_cql(formatted, view.clustering_key, view.options)
    if props:
        ret += sep + "WITH " + props
    return ret + _extensions_cql(view)


def user_type_cql(udt, formatted=False):
    nl, sep, pad = ("\n", ",\n", "    ") if formatted else ("", ", ", "")
    fields = sep.join("%s%s %s" % (pad, protect_name(name), typ) for name, typ in zip(udt.field_names, udt.field_types))
    return "CREATE TYPE %s (%s%s%s)" % (_qualified(udt.keyspace, udt.name), nl, fields, nl)


def _function_body(body):
    if "$$" not in body:
        return "$$%s$$" % body
    return "'%s'" % _quote(body)


def function_cql(fn, formatted=False):
    sep = "\n    " if formatted else " "
    args = ", ".join("%s %s" % (protect_name(n), strip_frozen(t)) for n, t in zip(fn.argument_names, fn.argument_types))
    ret = "CREATE FUNCTION %s(%s)%s" % (_qualified(fn.keyspace, fn.name), args, sep)
    ret += "%s ON NULL INPUT%s" % ("CALLED" if fn.called_on_null_input else "RETURNS NULL", sep)
    ret += "RETURNS %s%s" % (fn.return_type, sep)
    if fn.deterministic:
        ret += "DETERMINISTIC" + sep
    if fn.monotonic:
        ret += "MONOTONIC" + sep
    elif fn.monotonic_on:
        ret += "MONOTONIC ON %s%s" % (fn.monotonic_on[0], sep)
    return ret + "LANGUAGE %s%sAS %s" % (fn.language, sep, _function_body(fn.body))


def aggregate_cql(agg, formatted=False):
    sep = "\n    " if formatted else " "
    ret = "CREATE AGGREGATE %s(%s)%sSFUNC %s%sSTYPE %s" % (
        _qualified(agg.keyspace, agg.name),
        ", ".join(strip_frozen(t) for t in agg.argument_types),
        sep,
        protect_name(agg.state_func),
        sep,
        strip_frozen(agg.state_type),
    )
    if agg.final_func:
        ret += "%sFINALFUNC %s" % (sep, protect_name(agg.final_func))
    if agg.initial_condition is not None:
        ret += "%sINITCOND %s" % (sep, agg.initial_condition)
    if agg.deterministic:
        ret += sep + "DETERMINISTIC"
    return ret
