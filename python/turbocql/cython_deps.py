"""``cassandra.cython_deps``: whether the compiled row decoders and numpy are available.

In the classic driver, ``HAVE_CYTHON`` says its Cython extensions (compiled row parsing,
``NumpyProtocolHandler``, ``LazyProtocolHandler``) were built. turbocql always decodes rows
in compiled code (its Rust engine) and always has those handlers, so ``HAVE_CYTHON`` is
True; ``HAVE_NUMPY`` says whether numpy can be imported (``NumpyProtocolHandler`` and
``numpy_factory`` need it).
"""

import importlib.util

HAVE_CYTHON = True
HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
