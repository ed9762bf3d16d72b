"""scripts/architecture_check.py, the lint gate that holds docs/ARCHITECTURE.md to the code:
the real page passes, and a page with a bogus reference, a missing or invented file, a
module left out or api's order broken is caught. No server, no engine."""

import importlib.util
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = _ROOT / "scripts" / "architecture_check.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("architecture_check", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["architecture_check"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def doc():
    return (_ROOT / "docs" / "ARCHITECTURE.md").read_text()


def _line_of(doc, start):
    """The whole line of ``doc`` that starts with ``start``."""
    at = doc.index("\n" + start) + 1
    return doc[at : doc.index("\n", at) + 1]


def test_the_real_doc_matches_the_code(tool, doc):
    assert tool.check(doc) == []


def test_main_exits_0_on_the_real_doc(tool, capsys):
    assert tool.main([]) == 0
    assert "matches the code" in capsys.readouterr().out


def test_bogus_references_are_found(tool, doc):
    bogus = (
        "\n\nSee `exec::run::no_such_item`, `api::nowhere`, `Watched::no_such_method`, "
        "`_cluster.tls.no_such_name`, `turbocql.no_such_module`, `aio.Session.no_such_attr` "
        "and tests/unit/no_such_test.py.\n"
    )
    findings = tool.check(doc + bogus)
    assert len(findings) == 7, findings
    for ref in (
        "`exec::run::no_such_item`: no_such_item is not defined in src/exec/run.rs",
        "`api::nowhere`: nowhere is not defined in src/api/mod.rs",
        "`Watched::no_such_method`: no_such_method is not a member of Watched",
        "`_cluster.tls.no_such_name`: no_such_name is not defined in python/turbocql/_cluster/tls.py",
        "`turbocql.no_such_module`: no_such_module is not defined in python/turbocql/__init__.py",
        "`aio.Session.no_such_attr`: no_such_attr is not an attribute of class Session",
    ):
        assert any(ref in f for f in findings), (ref, findings)
    assert "path: tests/unit/no_such_test.py does not exist" in findings


def test_good_references_and_exceptions_pass(tool, doc):
    fine = (
        "\n\n`crate::sync::Condvar`, `exec::run::Response::SchemaChangeApplied`, "
        "`runtime::generation()`, `tokio::task::unconstrained`, `RunError::PlanExhausted`, "
        "`turbocql.query.arrow_factory` (re-exported), `_engine.connect`, `cluster.metadata`, "
        "`concurrent.py`.\n"
    )
    assert tool.check(doc + fine) == []


def test_a_rust_file_left_out_of_the_diagram_is_found(tool, doc):
    line = _line_of(doc, "                  pool_log  ")
    findings = tool.check(doc.replace(line, ""))
    assert "diagram: src/api/pool_log is not among api/'s entries" in findings


def test_an_entry_naming_no_file_is_found(tool, doc):
    anchor = _line_of(doc, "                  page      ")
    findings = tool.check(doc.replace(anchor, anchor + "                  ghost     nothing at all\n"))
    assert "diagram: exec/ entry 'ghost' names no file of src/exec/" in findings


def test_api_out_of_order_is_found(tool, doc):
    results = _line_of(doc, "                  results   ")
    execute = _line_of(doc, "                  execute   ")
    moved = doc.replace(results, "").replace(execute, execute + results)
    findings = tool.check(moved)
    assert any(f.startswith("diagram: api/ entry aio uses results, listed after it") for f in findings), findings


def test_a_python_module_not_mentioned_is_found(tool, doc):
    line = _line_of(doc, "   cython_deps.py  ")
    findings = tool.check(doc.replace(line, ""))
    assert findings == ["python: python/turbocql/cython_deps.py is not mentioned in the doc"]


def test_rust_diagram_entries_are_parsed(tool):
    diagram = tool.diagram_of(
        "## The layers\n\n```\n python/turbocql/   the package\n src/\n"
        "   lib.rs       entry\n"
        "   codec/       values <-> bytes\n"
        "                  values, scalars   Python -> bytes\n"
        "                                    (continued)\n"
        "                  rows              bytes -> Python\n"
        "   api/         the objects\n"
        "                continued description\n"
        "                  tls       context\n"
        "                  tls/verify  checks\n"
        "                            more\n"
        "                  concurrent ConcurrentRun\n"
        "   sync.rs      locks\n"
        "```\n"
    )
    top, entries = tool.rust_diagram(diagram.rust)
    assert top == ["lib.rs", "codec/", "api/", "sync.rs"]
    assert entries == {"codec": ["values", "scalars", "rows"], "api": ["tls", "tls/verify", "concurrent"]}
    assert diagram.python == [" python/turbocql/   the package"]


def test_a_nested_module_of_the_same_name_does_not_count(tool, doc):
    start = doc.index("\n   __main__.py  ") + 1
    end = doc.index("\n   cluster.py   ", start) + 1
    findings = tool.check(doc[:start] + doc[end:])
    assert findings == ["python: python/turbocql/__main__.py is not mentioned in the doc"]
