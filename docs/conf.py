"""Sphinx configuration of the turbocql documentation site (built by scripts/docs.sh).

Sphinx rather than MkDocs: the package's docstrings are already reStructuredText with
cross-reference roles, autodoc imports the compiled engine and reads its docstrings and
text signatures, the doctest builder runs every page's examples against the local node, and
nitpicky mode turns a reference to a name without an entry into a build error.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchmarks.* and scripts.* for the pages that read result files

import turbocql  # noqa: E402

# The compiled engine, imported before autodoc: on a build that re-read only the engine's page,
# autodoc imported python/turbocql/_engine.pyi in its place (seen with Sphinx 9.0.4).
import turbocql._engine  # noqa: E402, F401

project = "turbocql"
author = "the turbocql authors"
copyright = "2026, the turbocql authors"
release = turbocql.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
]
# docs/_ext/turbocql_autodoc.py: the engine's signatures typed from python/turbocql/_engine.pyi.
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
extensions.append("turbocql_autodoc")
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_screenshots"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# A reference to a name without an entry is a build error (scripts/docs.sh passes -W -n).
nitpicky = True
# Third-party types in signatures and docstrings: documented by their own projects.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(numpy|np|pyarrow|pa|pandas|pd|polars|pl|dask|asyncio|concurrent\.futures|ssl|socket|typing"
        r"|collections\.abc|opentelemetry|prometheus_client|datetime|decimal|uuid|ipaddress|enum|logging"
        r"|threading|types|pyspark)\..*",
    ),
    (
        r"py:class",
        r"(optional|callable|iterable|sequence|mapping|any|default.*|Any|Optional|Callable|Iterable|Iterator"
        r"|Sequence|Mapping|Union|TypeVar|T)",
    ),
    (
        r"py:class",
        r"(int|float|str|bytes|bool|dict|list|tuple|set|frozenset|object|type|None|NoneType|Exception"
        r"|BaseException|memoryview|bytearray)",
    ),
    # API reference (docs/api/): more of the standard library in signatures and docstrings.
    (r"py:.*", r"(pathlib|os|argparse|time|collections|contextvars|struct|re|_socket)\..*"),
    # Private classes (turbocql._xxx.Name, turbocql.xxx._Name) named in "Bases:" by
    # show-inheritance, and the engine stub's type variables (turbocql._engine._T):
    # implementation details without an entry. The public classes that inherit public
    # members from a private base are documented with :inherited-members:.
    (r"py:class", r"turbocql\.(\w+\.)*_\w+(\.\w+)*"),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

# Examples: testcode blocks run by `sphinx-build -b doctest` against the local nodes
# (tests/integration/test_docs.py); plain ">>>" paragraphs are not examples here.
doctest_test_doctest_blocks = ""

html_theme = "furo"
html_title = f"turbocql {release}"
html_static_path = ["_static"]
html_css_files = ["turbocql.css"]
html_show_sourcelink = False
