"""scripts/architecture_check.py, the lint gate that holds docs/ARCHITECTURE.md to the code:
the real page passes, and a page with a bogus reference, a missing or invented file, a
module left out, api's order broken or an ``unsafe`` not in the inventory is caught
(scripts/unsafe_inventory.py: its counting rule and its reading of the entries). No server,
no engine."""

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


# --- the unsafe inventory (scripts/unsafe_inventory.py, run by the check) -----------------


@pytest.fixture(scope="module")
def inventory():
    path = _ROOT / "scripts" / "unsafe_inventory.py"
    spec = importlib.util.spec_from_file_location("unsafe_inventory", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["unsafe_inventory"] = module
    spec.loader.exec_module(module)
    return module


_RUST = r"""// unsafe { in a comment }
/* unsafe fn a() {} /* nested: unsafe */ still a comment: unsafe */
/// unsafe in a doc comment
#![deny(unsafe_op_in_unsafe_fn)]
const S: &str = "unsafe { }";
const R: &str = r#"unsafe " fn x"#;
const C: char = '"';
const E: &str = "a \" unsafe";
struct F<'a> { f: unsafe extern "C" fn(u8) -> u8, g: unsafe fn(), h: &'a u8 }
unsafe fn one() {}
pub unsafe extern "C" fn two(x: unsafe extern "C" fn(*mut u8)) {}
unsafe impl Send for F<'_> {}
unsafe trait Marker {}
unsafe extern "C" { fn puts(); }
#[unsafe(no_mangle)]
fn three() { let _ = unsafe { one() }; let _ = unsafe
{ 1 }; }
"""


def test_unsafe_is_counted_by_kind_outside_comments_strings_and_pointer_types(inventory):
    found = [(u.kind, u.line) for u in inventory.occurrences(_RUST)]
    assert found == [
        ("fn", 10),
        ("extern fn", 11),
        ("impl", 12),
        ("trait", 13),
        ("extern block", 14),
        ("attribute", 15),
        ("block", 16),
        ("block", 16),
    ]


def test_an_unclassified_unsafe_is_a_finding(inventory, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("macro_rules! m { ($(unsafe)?) => {} }\n")
    doc = "## unsafe: the inventory\n\n### src/lib.rs\n"
    findings = inventory.check(doc, tmp_path / "src")
    assert "unsafe: src/lib.rs:1: an unsafe the check cannot classify" in findings


def test_tallies_are_parsed(inventory):
    assert inventory.tally("fn + 2 blocks") == {"fn": 1, "block": 2}
    assert inventory.tally("2 impls") == {"impl": 2}
    assert inventory.tally("extern fn + 3 blocks") == {"extern fn": 1, "block": 3}
    assert inventory.tally("3 fns + extern block") == {"fn": 3, "extern block": 1}
    assert inventory.tally("2 spoons") is None
    assert inventory.tally("fn +") is None


def _tree(tmp_path, files):
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


def test_the_inventory_is_held_to_the_code(inventory, tmp_path):
    src = _tree(
        tmp_path,
        {
            "lib.rs": "unsafe fn f() { unsafe { g() } }\nunsafe impl Send for X {}\n",
            "io/fd.rs": "fn r() { unsafe { read() } }\n",
            "plain.rs": "fn safe() {}\n",
        },
    )
    good = (
        "## unsafe: the inventory\n\nWhat is counted.\n\n"
        "### src/lib.rs\n\n- **fn + block** `f`: why.\n  continued, - not an entry\n- **impl** `Send`: why.\n\n"
        "### `src/io/fd.rs`\n\n- **block** `r`: why.\n\n"
        "### What a tool can check\n\n- **not** an entry: no file in the heading.\n\n"
        "## Next section\n\n### src/plain.rs\n\n- **block** after the section: not read.\n"
    )
    assert inventory.check(good, src) == []

    fewer = good.replace("- **impl** `Send`: why.\n", "")
    assert inventory.check(fewer, src) == [
        "unsafe: src/lib.rs: 3 (1 block, 1 fn, 1 impl) in the code (lines 1, 1, 2), 2 (1 block, 1 fn) in the inventory"
    ]
    no_heading = good.replace("### `src/io/fd.rs`\n\n- **block** `r`: why.\n\n", "")
    assert inventory.check(no_heading, src) == [
        "unsafe: src/io/fd.rs has 1 (1 block) unsafe (lines 1) and no heading in the inventory"
    ]
    extra = good.replace("## Next section", "### src/plain.rs\n\n- **block** none there.\n\n### src/gone.rs\n\n## Next")
    assert inventory.check(extra, src) == [
        "unsafe: src/plain.rs: 0 in the code, 1 (1 block) in the inventory",
        "unsafe: the inventory lists src/gone.rs, which does not exist",
    ]
    untallied = good.replace("- **block** `r`: why.", "- `r`: a block, why.")
    findings = inventory.check(untallied, src)
    assert findings[0].startswith("unsafe: an entry of src/io/fd.rs has no tally of kinds")
    assert findings[1] == "unsafe: src/io/fd.rs: 1 (1 block) in the code (lines 1), 0 in the inventory"
    assert inventory.check("# No inventory\n", src) == [
        "unsafe: no '## unsafe: the inventory' section, and src/ has unsafe code"
    ]


def test_an_entry_left_out_of_the_real_inventory_is_found(tool, doc):
    line = _line_of(doc, "- **block** `ProcessBound::drop`")
    findings = tool.check(doc.replace(line, ""))
    assert len(findings) == 1, findings
    assert findings[0].startswith("unsafe: src/runtime.rs: 5 (5 blocks) in the code (lines ")
    assert findings[0].endswith("), 4 (4 blocks) in the inventory")


def test_a_file_left_out_of_the_real_inventory_is_found(tool, doc):
    start = doc.index("\n### src/codec/arrow.rs\n") + 1
    end = doc.index("\n### ", start) + 1
    findings = tool.check(doc[:start] + doc[end:])
    assert len(findings) == 1, findings
    assert findings[0].startswith("unsafe: src/codec/arrow.rs has 1 (1 block) unsafe (lines ")
