"""Row factories, under the classic driver's names (``cassandra.query``, which re-exports
them from here): :func:`named_tuple_factory` (the default, the engine's own),
:func:`dict_factory`, :func:`tuple_factory`, :func:`ordered_dict_factory`,
:func:`numpy_factory` (pages as numpy columns), :func:`arrow_factory` and
:func:`cql_text_factory` (pages as pyarrow record batches; turbocql's own); and
``_row_class``, the named-tuple class of a column list, which the engine builds its rows
with (src/codec/named_rows.rs).
"""

import keyword
import re
from collections import OrderedDict, namedtuple
from collections.abc import Callable
from typing import Any

from turbocql import _loggers
from turbocql._engine import named_rows as _named_rows

# The classic logger of these (``cassandra.query``'s).
log = _loggers.query

START_BADCHAR_REGEX = re.compile("^[^a-zA-Z0-9]*")
END_BADCHAR_REGEX = re.compile("[^a-zA-Z0-9_]*$")
NON_ALPHA_REGEX = re.compile("[^a-zA-Z0-9]")


def _clean_column_name(name):
    """As the classic driver: leading non-alphanumerics and trailing non-word characters
    dropped, other non-alphanumerics replaced by ``_``."""
    return NON_ALPHA_REGEX.sub("_", START_BADCHAR_REGEX.sub("", END_BADCHAR_REGEX.sub("", name)))


_ROW_CLASSES: dict[tuple[str, ...], type] = {}


def _row_class(colnames):
    """The named-tuple class for a column list (cached; at most 1024 lists are kept)."""
    cls = _ROW_CLASSES.get(colnames)
    if cls is None:
        try:
            cls = namedtuple("Row", colnames)
        except ValueError:
            cls = _cleaned_row_class(colnames)
        if len(_ROW_CLASSES) >= 1024:
            _ROW_CLASSES.clear()
        _ROW_CLASSES[colnames] = cls
    return cls


def _cleaned_row_class(colnames):
    """The classic named_tuple_factory's class for names namedtuple refuses: the names
    cleaned (``[applied]`` -> ``applied``); if still refused (duplicates, keywords),
    invalid ones become ``field_<i>_`` and duplicates get ``_`` appended (``duplicate``,
    ``duplicate_``, ``duplicate__``), with the classic warning."""
    clean = [_clean_column_name(c) for c in colnames]
    try:
        return namedtuple("Row", clean)
    except ValueError:
        log.warning(
            "Failed creating named tuple for results with column names %s (cleaned: %s) "
            "(see Python 'namedtuple' documentation for details on name rules). "
            "Results will be returned with positional names. "
            'Avoid this by choosing different names, using SELECT "<col name>" AS aliases, '
            "or specifying a different row_factory on your Session" % (list(colnames), clean)
        )
        return namedtuple("Row", _sanitize_identifiers(clean))


def _sanitize_identifiers(field_names):
    """As the classic cassandra.util._sanitize_identifiers."""
    names_out = list(field_names)
    for index, name in enumerate(field_names):
        if (
            not all(c.isalnum() or c == "_" for c in name)
            or keyword.iskeyword(name)
            or not name
            or name[0].isdigit()
            or name.startswith("_")
        ):
            names_out[index] = "field_%d_" % index
    if len(names_out) != len(set(names_out)):
        observed = set()
        for index in range(len(names_out)):
            while names_out[index] in observed:
                names_out[index] = "%s_" % (names_out[index],)
            observed.add(names_out[index])
    return names_out


def tuple_factory(colnames, rows):
    """Rows as plain tuples."""
    return rows


named_tuple_factory: Callable[..., list[Any]] = _named_rows
"""Rows as named tuples (the default): ``named_tuple_factory(colnames, rows)``. The class
is built once per column list (``_row_class``); rows are made in the engine."""


def dict_factory(colnames, rows):
    """Rows as dicts keyed by column name."""
    return [dict(zip(colnames, r)) for r in rows]


def ordered_dict_factory(colnames, rows):
    """Rows as OrderedDicts keyed by column name."""
    return [OrderedDict(zip(colnames, r)) for r in rows]


def numpy_factory(colnames, rows):
    """A page as ONE dict of column name -> numpy array (needs numpy).

    Set as ``session.row_factory``: the engine then decodes each page column by column,
    in Rust, with no Python object per value. Numbers become arrays of their dtype
    (``int32``, ``int64``, ``float32``, ``float64``, ``bool``, ``datetime64[ms]`` for
    timestamps); ``vector<float, n>`` (and the other numeric vectors) a 2-D array with a
    row per row; a column with nulls a ``numpy.ma.MaskedArray``; other types object
    arrays of the usual values. Iterating a ResultSet yields one such dict per page (as
    the classic driver's ``NumpyProtocolHandler``); an empty page gives none.
    """
    if isinstance(rows, dict):
        if not rows or len(next(iter(rows.values()))) == 0:
            return []
        return [rows]
    # Decoded as rows (a batch's result): build the columns here.
    import numpy as np

    if not rows:
        return []
    out = {}
    for i, name in enumerate(colnames):
        col = np.empty(len(rows), dtype=object)
        for j, r in enumerate(rows):
            col[j] = r[i]
        out[name] = col
    return [out]


def arrow_factory(colnames, rows):
    """A page as ONE ``pyarrow.RecordBatch`` (needs pyarrow; turbocql's own, not in the
    classic driver).

    Set as ``session.row_factory`` (or a profile's): the engine decodes each page column by
    column in Rust straight into Arrow buffers, with no Python object per value (the types
    are listed in ``turbocql._query.arrow``). Iterating a ResultSet yields one batch per page (an
    empty page gives none); ``ResultSet.to_arrow()`` gives every page as one table.
    """
    from turbocql._query import arrow as _arrow

    if isinstance(rows, _arrow.pa.RecordBatch):
        return [rows] if rows.num_rows else []
    # Decoded as rows (a batch's result): build the batch here.
    return [_arrow.rows_batch(colnames, rows)] if rows else []


def cql_text_factory(colnames, rows):
    """A page as ONE ``pyarrow.RecordBatch`` of strings: each value in its CQL text form, as
    cqlsh writes it and ``turbocql load`` reads it back (``2024-01-02 03:04:05.678+0000``,
    ``0x0aff``, ``{'a': 1}``); null stays null. Needs pyarrow; turbocql's own (what
    ``turbocql unload`` writes CSV from). The engine writes the text straight from each
    value's bytes, with no Python object per value.
    """
    from turbocql._query import arrow as _arrow

    if isinstance(rows, _arrow.pa.RecordBatch):
        return [rows] if rows.num_rows else []
    # Decoded as rows (a batch's result): Python's own text of each value.
    columns = {name: [None if r[i] is None else str(r[i]) for r in rows] for i, name in enumerate(colnames)}
    return [_arrow.pa.RecordBatch.from_pydict(columns)] if rows else []
