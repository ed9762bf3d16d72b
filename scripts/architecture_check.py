"""docs/ARCHITECTURE.md held to the code: prints each finding and exits 1 if there is one
(run by scripts/lint.sh, so CI gates it). Standard library only; the engine is not imported.

- **The engine's files**: every file of src/ is named by the layer diagram, and the diagram
  names no file that does not exist. Top-level files and directories are named at the
  diagram's first indent (``lib.rs``, ``api/``); a directory's modules are its entries
  (``results``, ``values, scalars``), a nested one as ``tls/verify``; ``mod.rs`` is its
  directory's own.
- **api's order**: the entries of ``api/`` are in the order of dependence (a file imports
  only the ``api`` files listed before it), as the doc says (the graph is
  scripts/engine_layers.py's).
- **The Python package**: every module and sub-package of python/turbocql is mentioned
  (``cluster.py``, ``_cluster/``, ``turbocql.tracing``, ``_session.future``,
  ``_policies/profiles.py``, or a module's bare name in the diagram's entry of the
  sub-package it belongs to), and each ``X.py`` or ``pkg/`` the diagram's Python part names
  exists.
- **Paths**: every path of the checkout the doc names (``src/...``, ``tests/...``,
  ``scripts/...``, ``python/...``, ``docs/...``, ``benchmarks/...``, ``localdb/...``) exists.
- **References** in backticks: a Rust path (``exec::run::attempt``, ``api::future``,
  ``crate::sync::Condvar``, ``Watched::on_request_failure``) names a module of the crate, an
  item defined in it (or in its submodules) and a member of that item; a Python dotted
  name (``turbocql.encoder.bind_params``, ``_cluster.tls.load_lazy_cas``,
  ``aio.Session.execute``, ``_engine.connect``) names a module of the package, a name
  defined or imported there, and an attribute of that class. Informal references are
  listed in ``EXCEPTIONS`` below, each with its reason.
- **unsafe**: section ``## unsafe: the inventory`` lists every ``unsafe`` of src/, file by
  file, kind by kind (blocks, fns, impls, ...): the counting rule and the entries' form are
  scripts/unsafe_inventory.py's, which this runs.

    python scripts/architecture_check.py [doc]
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"

# Backticked references deliberately not resolved, each with the reason.
EXCEPTIONS: dict[str, str] = {
    "cluster.metadata": "a Cluster instance's attribute (the classic spelling), not module turbocql.cluster",
}
# First segments of Rust paths outside the crate: not checked.
EXTERNAL_RUST = {
    "std": "the standard library",
    "tokio": "the tokio crate",
    "rustls": "the rustls crate",
    "scylla": "the scylla crate",
    "pyo3": "the pyo3 crate",
    "Python": "pyo3's Python token (Python::try_attach, Python::assume_attached)",
    "libc": "the libc crate",
    "arrow_array": "the arrow-array crate",
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
RUST_REF = re.compile(r"^(%s)(::%s)+$" % (IDENT, IDENT))
PY_REF = re.compile(r"^(%s)(\.%s)+$" % (IDENT, IDENT))
BACKTICKED = re.compile(r"`([^`\n]+)`")
# A path of the checkout: a top directory, then at least one more segment.
CHECKOUT_PATH = re.compile(r"(?<![\w/.-])((?:src|tests|scripts|python|docs|benchmarks|localdb)/[\w./-]*[\w/])")
ENTRY_NAMES = re.compile(r"^([a-z_][\w/]*(?:, [a-z_][\w/]*)*)(?=\s|$)")
PY_FILE_WORD = re.compile(r"(?<![\w/.])(%s)\.py\b" % IDENT)
PKG_WORD = re.compile(r"(?<![\w/.])(%s)/(?![\w])" % IDENT)


@dataclass
class Diagram:
    """The layer diagram of the doc, split at its ``src/`` line."""

    python: list[str] = field(default_factory=list)
    rust: list[str] = field(default_factory=list)


def diagram_of(doc: str) -> Diagram:
    """The first code block after the ``## The layers`` heading."""
    at = doc.find("## The layers")
    start = doc.find("```", at if at >= 0 else 0)
    if start < 0:
        return Diagram()
    start = doc.index("\n", start) + 1
    end = doc.find("```", start)
    lines = doc[start : end if end >= 0 else len(doc)].split("\n")
    split = next((i for i, line in enumerate(lines) if line.startswith(" src/")), len(lines))
    return Diagram(python=lines[:split], rust=lines[split:])


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def blocks(lines: list[str], top: int = 3) -> list[list[str]]:
    """The entries at indent ``top``, each with the lines indented further below it."""
    out: list[list[str]] = []
    for line in lines:
        if not line.strip():
            continue
        if indent(line) == top:
            out.append([line])
        elif indent(line) > top and out:
            out[-1].append(line)
    return out


# --- the engine's files -------------------------------------------------------------------


def rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Every module of the crate (its path from the crate root -> its file)."""
    modules: dict[tuple[str, ...], Path] = {}
    for path in sorted(src.rglob("*.rs")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts == ["lib"]:
            parts = []
        elif parts[-1] == "mod":
            parts.pop()
        modules[tuple(parts)] = path
    return modules


def rust_diagram(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The top-level names (``lib.rs``, ``api/``) and each directory's entries, in order."""
    top: list[str] = []
    entries: dict[str, list[str]] = {}
    for block in blocks(lines):
        m = re.match(r"^   (%s(?:\.rs|/))(\s+|$)" % IDENT, block[0])
        if not m:
            continue
        name = m.group(1)
        top.append(name)
        if not name.endswith("/"):
            continue
        described_at = m.end() if m.group(2) else len(block[0])
        deeper = [line for line in block[1:] if indent(line) > described_at]
        if not deeper:
            entries[name[:-1]] = []
            continue
        at = min(indent(line) for line in deeper)
        names: list[str] = []
        for line in deeper:
            if indent(line) == at:
                found = ENTRY_NAMES.match(line.strip())
                if found:
                    names.extend(found.group(1).split(", "))
        entries[name[:-1]] = names
    return top, entries


def check_rust_files(diagram: Diagram, src: Path) -> list[str]:
    findings = []
    top, entries = rust_diagram(diagram.rust)
    actual_top = sorted(p.name + ("/" if p.is_dir() else "") for p in src.iterdir() if p.suffix == ".rs" or p.is_dir())
    for name in actual_top:
        if name not in top:
            findings.append("diagram: src/%s is not in the layer diagram" % name)
    for name in top:
        if name not in actual_top:
            findings.append("diagram: src/%s is in the layer diagram but does not exist" % name)
    for directory, names in entries.items():
        base = src / directory
        if not base.is_dir():
            continue
        actual = set()
        for path in base.rglob("*.rs"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "mod":
                parts.pop()
            if parts:
                actual.add("/".join(parts))
        for name in sorted(actual - set(names)):
            findings.append("diagram: src/%s/%s is not among %s/'s entries" % (directory, name, directory))
        for name in names:
            if name not in actual:
                findings.append("diagram: %s/ entry %r names no file of src/%s/" % (directory, name, directory))
    return findings


def _sibling(name: str):
    """Module ``name`` of scripts/ (scripts/ put on sys.path first: this file may be loaded
    by path, as its tests do)."""
    scripts = str(Path(__file__).resolve().parent)
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module(name)


def check_api_order(diagram: Diagram, src: Path) -> list[str]:
    """``api``'s entries in the order of dependence, by scripts/engine_layers.py's graph."""
    _, entries = rust_diagram(diagram.rust)
    order = entries.get("api")
    if not order or not (Path(__file__).resolve().parent / "engine_layers.py").exists():
        return []
    # The engine layers' own edge reading.
    _, counted, _ = _sibling("engine_layers").graph(src)
    position = {"crate::api::" + name.replace("/", "::"): i for i, name in enumerate(order)}
    findings = []
    for module, i in position.items():
        for target in counted.get(module, {}):
            j = position.get(target)
            if j is not None and j > i:
                findings.append(
                    "diagram: api/ entry %s uses %s, listed after it (the order is the order of dependence)"
                    % (order[i], order[j])
                )
    return findings


# --- the Python package -------------------------------------------------------------------


def python_modules(package: Path) -> list[tuple[str, ...]]:
    """Every module and sub-package of the package, as its parts under it (``("_cluster",
    "tls")``, ``("_cluster",)``); ``__init__`` left out, the engine (``_engine``) in."""
    out: list[tuple[str, ...]] = []
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package)
        if "__pycache__" in rel.parts:
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            out.append(rel.parts)
        elif path.suffix == ".py" and path.stem != "__init__":
            out.append(rel.with_suffix("").parts)
    if (package / "_engine.pyi").exists() or any(package.glob("_engine.*.so")):
        out.append(("_engine",))
    return sorted(set(out))


def _word(text: str, word: str) -> bool:
    return re.search(r"(?<![\w.])%s(?![\w])" % re.escape(word), text) is not None


def mentioned(parts: tuple[str, ...], doc: str, diagram: Diagram, is_package: bool) -> bool:
    dotted = ".".join(parts)
    if _word(doc, "turbocql." + dotted):
        return True
    if len(parts) > 1 and _word(doc, dotted):
        return True
    slashed = "/".join(parts)
    if is_package:
        return re.search(r"(?<![\w.])%s/" % re.escape(slashed), "\n".join(diagram.python)) is not None
    if re.search(r"(?<![\w./])%s\.py\b" % re.escape(slashed), doc):  # not compat/__main__.py for __main__.py
        return True
    if len(parts) == 1:
        return False
    # A bare name in the diagram's entry that names the sub-package.
    parent = "/".join(parts[:-1]) + "/"
    for block in blocks(diagram.python):
        text = "\n".join(block)
        if re.search(r"(?<![\w.])%s" % re.escape(parent), text) and _word(text, parts[-1]):
            return True
    return False


def check_python_modules(doc: str, diagram: Diagram, package: Path) -> list[str]:
    findings = []
    modules = python_modules(package)
    for parts in modules:
        is_package = (package.joinpath(*parts) / "__init__.py").exists()
        if not mentioned(parts, doc, diagram, is_package):
            shown = "/".join(parts) + ("/" if is_package else ".py" if parts != ("_engine",) else "")
            findings.append("python: python/turbocql/%s is not mentioned in the doc" % shown)
    packages = {p[0] for p in modules if (package / p[0] / "__init__.py").exists()}
    files = {"/".join(p) for p in modules}
    for block in blocks(diagram.python):
        text = "\n".join(block)
        own = [p for p in packages if re.search(r"(?<![\w.])%s/" % re.escape(p), text)]
        for m in PY_FILE_WORD.finditer(text):
            name = m.group(1)
            if name not in files and not any("%s/%s" % (p, name) in files for p in own):
                findings.append("python: the diagram names %s.py, not a module of python/turbocql" % name)
        for m in PKG_WORD.finditer(text):
            if m.group(1) not in packages:
                findings.append("python: the diagram names %s/, not a sub-package of python/turbocql" % m.group(1))
    return findings


def check_paths(doc: str, root: Path) -> list[str]:
    findings = []
    for path in sorted(set(CHECKOUT_PATH.findall(doc))):
        path = path.rstrip(".")
        if not (root / path).exists():
            findings.append("path: %s does not exist" % path)
    return findings


# --- references ---------------------------------------------------------------------------


def _clean(ref: str) -> str:
    """``runtime::generation()`` -> ``runtime::generation``; ``Request.run(x)`` -> ``Request.run``."""
    return re.sub(r"\(.*\)$", "", ref.strip())


def references(doc: str) -> Iterator[str]:
    seen = set()
    for m in BACKTICKED.finditer(doc):
        ref = _clean(m.group(1))
        if ref not in seen:
            seen.add(ref)
            yield ref


class RustIndex:
    """The crate's modules and their sources (comments left out)."""

    def __init__(self, src: Path):
        self.modules = rust_modules(src)
        self.text: dict[tuple[str, ...], str] = {}
        for module, path in self.modules.items():
            source = re.sub(r"/\*.*?\*/", " ", path.read_text(), flags=re.S)
            self.text[module] = re.sub(r"//[^\n]*", "", source)

    def within(self, module: tuple[str, ...]) -> list[tuple[str, ...]]:
        """``module`` and its submodules."""
        return [m for m in self.modules if m[: len(module)] == module]

    def defining(self, name: str, modules: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        item = re.compile(
            r"\b(?:fn|struct|enum|trait|const|static|type|mod|union)\s+%s\b|\bmacro_rules!\s*%s\b|\bimpl\b[^{;]*\b%s\b"
            % ((re.escape(name),) * 3)
        )
        return [m for m in modules if item.search(self.text[m])]

    def has_member(self, name: str, modules: list[tuple[str, ...]]) -> bool:
        member = re.compile(
            r"\b(?:fn|const|type)\s+%s\b|^\s*(?:pub(?:\([^)]*\))?\s+)?%s\s*(?:[({,:]|$)"
            % (re.escape(name), re.escape(name)),
            re.M,
        )
        return any(member.search(self.text[m]) for m in modules)


def check_rust_ref(ref: str, index: RustIndex) -> str | None:
    """Why ``ref`` names nothing of the crate, or None."""
    parts = ref.split("::")
    if parts[0] == "crate":
        parts = parts[1:]
    if parts[0] in EXTERNAL_RUST:
        return None
    module: tuple[str, ...] = ()
    while parts and module + (parts[0],) in index.modules:
        module += (parts.pop(0),)
    if not parts:
        return None
    if module:
        where = index.defining(parts[0], index.within(module))
        if not where:
            return "%s is not defined in %s" % (parts[0], index.modules[module].relative_to(ROOT))
    else:
        where = index.defining(parts[0], list(index.modules))
        if not where or not parts[0][:1].isupper():
            return "%s is neither a module of the crate nor a type defined in it" % parts[0]
    for member in parts[1:]:
        if not index.has_member(member, where):
            return "%s is not a member of %s" % (member, parts[0])
    return None


class PythonIndex:
    """The package's modules, read with ``ast`` (not imported)."""

    def __init__(self, package: Path):
        self.package = package
        self.trees: dict[Path, ast.Module] = {}

    def tree(self, path: Path) -> ast.Module:
        if path not in self.trees:
            self.trees[path] = ast.parse(path.read_text(), str(path))
        return self.trees[path]

    def module_file(self, parts: list[str]) -> tuple[Path | None, list[str]]:
        """The file of the longest module path ``parts`` starts with, and the rest."""
        base, found, rest = self.package, None, list(parts)
        while rest:
            head = rest[0]
            if (base / head / "__init__.py").exists():
                base, found = base / head, base / head / "__init__.py"
            elif (base / (head + ".py")).exists():
                return base / (head + ".py"), rest[1:]
            elif head == "_engine" and base == self.package and (base / "_engine.pyi").exists():
                return base / "_engine.pyi", rest[1:]
            else:
                break
            rest.pop(0)
        return found, rest

    def is_module(self, name: str) -> bool:
        return self.module_file([name])[0] is not None

    def resolve(self, path: Path, names: list[str], depth: int = 0) -> str | None:
        """Why ``names`` is not found in module ``path``, or None."""
        body = _names(self.tree(path).body)
        node = body.get(names[0])
        if node is None:
            return "%s is not defined in %s" % (names[0], path.relative_to(ROOT))
        if isinstance(node, ast.ImportFrom) and depth < 5:
            source = self.imported_file(path, node)
            if source is not None:
                alias = next(a for a in node.names if (a.asname or a.name) == names[0])
                return self.resolve(source, [alias.name] + names[1:], depth + 1)
            return None
        for attr in names[1:]:
            if not isinstance(node, ast.ClassDef):
                return None
            found = _names(node.body).get(attr)
            if found is None:
                return "%s is not an attribute of class %s (%s)" % (attr, node.name, path.relative_to(ROOT))
            node = found
        return None

    def imported_file(self, path: Path, node: ast.ImportFrom) -> Path | None:
        """The package module a ``from ... import`` reads, if it is one of ours."""
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            parts = node.module.split(".") if node.module else []
        elif node.module and node.module.split(".")[0] == "turbocql":
            base, parts = self.package, node.module.split(".")[1:]
        else:
            return None
        target = base.joinpath(*parts) if parts else base
        if target.with_suffix(".py").exists() and parts:
            return target.with_suffix(".py")
        if (target / "__init__.py").exists():
            return target / "__init__.py"
        return None


def _names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body binds (under ``if`` / ``try`` too)."""
    out: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.setdefault(node.name, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out.setdefault(name.id, node)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], node)
        elif isinstance(node, ast.If | ast.Try):
            nested = list(node.body) + list(node.orelse)
            if isinstance(node, ast.Try):
                nested += list(node.finalbody) + [s for h in node.handlers for s in h.body]
            for name, found in _names(nested).items():
                out.setdefault(name, found)
    return out


def check_python_ref(ref: str, index: PythonIndex) -> str | None:
    parts = ref.split(".")
    package_level = parts[0] == "turbocql"
    if package_level:
        parts = parts[1:]
    path, rest = index.module_file(parts)
    if path is None and package_level:
        path, rest = index.package / "__init__.py", parts  # a name of the package itself
    if path is None:
        return "%s is not a module of python/turbocql" % parts[0]
    if not rest:
        return None
    return index.resolve(path, rest)


def check_references(doc: str, src: Path, package: Path) -> list[str]:
    rust, python = RustIndex(src), PythonIndex(package)
    findings = []
    for ref in references(doc):
        if ref in EXCEPTIONS:
            continue
        if RUST_REF.match(ref):
            why = check_rust_ref(ref, rust)
        elif PY_REF.match(ref) and (ref.split(".")[0] == "turbocql" or python.is_module(ref.split(".")[0])):
            if ref.split(".")[-1] in ("py", "pyi", "rs", "md"):
                continue  # a file name (concurrent.py), not a dotted name
            why = check_python_ref(ref, python)
        else:
            continue
        if why:
            findings.append("reference: `%s`: %s" % (ref, why))
    return findings


# --- the whole check ----------------------------------------------------------------------


def check(doc: str, root: Path = ROOT) -> list[str]:
    """Every finding of ``doc`` (the text of docs/ARCHITECTURE.md) against the checkout at ``root``."""
    src, package = root / "src", root / "python" / "turbocql"
    diagram = diagram_of(doc)
    findings = []
    if not diagram.rust:
        findings.append("diagram: no layer diagram (a code block under '## The layers' with a ' src/' line)")
    findings += check_rust_files(diagram, src)
    findings += check_api_order(diagram, src)
    findings += check_python_modules(doc, diagram, package)
    findings += check_paths(doc, root)
    findings += check_references(doc, src, package)
    findings += _sibling("unsafe_inventory").check(doc, src)
    return findings


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DOC
    findings = check(path.read_text())
    for finding in findings:
        print(finding)
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if findings:
        print("architecture doc: %d finding(s) in %s" % (len(findings), shown), file=sys.stderr)
        return 1
    print("architecture doc: %s matches the code (files, modules, paths, references, unsafe)" % shown)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
