"""The import graph of python/turbocql and its cycles: prints every cycle and exits 1 if
there is one (run by scripts/lint.sh, so CI gates it).

Every ``import`` and ``from ... import`` of a turbocql module counts, at module level and
inside functions alike (a late import still makes a circle, only a later one); what runs
under ``if TYPE_CHECKING:`` does not (it never runs). ``from P import N`` is an edge to the
module ``P.N`` when that is a module of the package, else to ``P``. Parent packages are not
counted: importing ``a.b`` runs ``a/__init__`` first, whatever ``a.b`` imports.

A late import that cannot be avoided may say so on its own line with a comment holding
``import-cycle:`` and the reason; its edge is then listed apart and not counted. Stubs
(``*.pyi``) are not read: they are read by type checkers only.

    python scripts/import_cycles.py [--graph] [package_dir]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOW_MARK = "import-cycle:"


def module_names(package_dir: Path) -> dict[str, Path]:
    """Every module of the package under ``package_dir`` (its dotted name -> its file)."""
    base = package_dir.parent
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """The import nodes of ``tree``, less those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def edges_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(imported module, line, allowed late import) of each import of a package module in
    module ``name``."""
    source = path.read_text()
    lines = source.splitlines()
    is_package = path.name == "__init__.py"
    out = []
    for node in _imports(ast.parse(source, str(path))):
        allowed = ALLOW_MARK in lines[node.lineno - 1]
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                parts = name.split(".")
                if not is_package:
                    parts.pop()
                if node.level > 1:
                    parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = base + "." + alias.name
                targets.append(sub if sub in modules else base)
        for target in targets:
            # `import a.b.c` of a module not in the package (a C extension such as
            # turbocql._engine): its closest module that is.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.append((target, node.lineno, allowed))
    return out


def graph(package_dir: Path):
    modules = module_names(package_dir)
    counted: dict[str, dict[str, int]] = {m: {} for m in modules}
    allowed: list[tuple[str, str, int]] = []
    for name, path in modules.items():
        for target, line, ok in edges_of(name, path, modules):
            if ok:
                allowed.append((name, target, line))
            else:
                counted[name].setdefault(target, line)
    return modules, counted, allowed


def cycles(counted: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), as a
    path through it found by a breadth-first search from its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:
        nonlocal counter
        work = [(v, iter(sorted(counted[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(counted[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        components.append(sorted(comp))

    for v in sorted(counted):
        if v not in index:
            strongconnect(v)

    found = []
    for comp in components:
        members = set(comp)
        start = comp[0]
        # The shortest way from start back to itself inside the component.
        previous: dict[str, str] = {}
        frontier = [start]
        end = None
        while frontier and end is None:
            nxt = []
            for node in frontier:
                for w in sorted(counted[node]):
                    if w not in members:
                        continue
                    if w == start:
                        end = node
                        break
                    if w not in previous:
                        previous[w] = node
                        nxt.append(w)
                if end is not None:
                    break
            frontier = nxt
        path = [end]
        while path[-1] != start:
            path.append(previous[path[-1]])
        path.reverse()
        found.append(path + [start])
    return found


def main(argv: list[str]) -> int:
    show_graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    package_dir = Path(args[0]) if args else ROOT / "python" / "turbocql"
    modules, counted, allowed = graph(package_dir)
    if show_graph:
        for name in sorted(counted):
            if counted[name]:
                print("%s -> %s" % (name, ", ".join(sorted(counted[name]))))
    for name, target, line in allowed:
        print("allowed late import: %s:%d imports %s" % (modules[name], line, target))
    found = cycles(counted)
    for path in found:
        steps = " -> ".join(
            "%s (line %d)" % (m, counted[m][path[i + 1]]) if i + 1 < len(path) else m for i, m in enumerate(path)
        )
        print("import cycle: %s" % steps)
    if found:
        print("%d import cycle(s) among %d modules" % (len(found), len(modules)), file=sys.stderr)
        return 1
    print("no import cycle among %d modules" % len(modules))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
