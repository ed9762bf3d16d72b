"""The engine's module graph (src/, the Rust crate) held to docs/ARCHITECTURE.md: prints each
finding and exits 1 if there is one (run by scripts/lint.sh, so CI gates it).

- **No circle**: no file imports one that imports it back, by any path (the same check as
  scripts/import_cycles.py makes of the Python package).
- **Layers**: ``api`` -> ``exec`` -> ``codec`` -> the base files (``pyrefs``, ``errors``,
  ``runtime``, ``sync``, ``alloc``): a file imports only from its own layer and those below.
  ``lib.rs`` (the module entry) is above them all.
- **Python imports go through pyrefs**: no file but ``src/pyrefs.rs`` imports a Python module
  (``.import(``), so the engine imports no module of turbocql and looks nothing up per
  request (pyrefs hands over what the package gives at import, and imports the few
  modules it needs once, at their first use).

An edge is any path that names a module of the crate: a ``use`` (braces expanded) or a path
in the code (``crate::x::y``, ``super::y``, ``self::y``), to the file of the longest module
path it names. A parent's ``mod`` declarations are not edges. Comments are left out.

    python scripts/engine_layers.py [--graph] [src_dir]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_cycles import cycles  # noqa: E402  (the same cycle search as the Python check)

ROOT = Path(__file__).resolve().parent.parent
# Layer of a module by its first path segment under the crate (higher imports lower).
LAYERS = {"api": 3, "exec": 2, "codec": 1}
BASE_LAYER = 0
ENTRY_LAYER = 4
PYREFS = "pyrefs"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*%s)+)" % IDENT)
USE_RE = re.compile(r"\buse\s+((?:crate|super|self)\s*::[^;]*);", re.S)
PY_IMPORT_RE = re.compile(r"\.import\(")


def module_files(src: Path) -> dict[tuple[str, ...], Path]:
    """Every module of the crate under ``src`` (its path from the crate root -> its file)."""
    modules: dict[tuple[str, ...], Path] = {}
    for path in sorted(src.rglob("*.rs")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts == ["lib"]:
            parts = []
        elif parts[-1] == "mod":
            parts.pop()
        modules[tuple(parts)] = path
    return modules


def strip_comments(source: str) -> str:
    """``source`` less its comments (line and block), strings kept."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def expand_use(tree: str) -> list[str]:
    """The paths of one ``use`` tree: ``a::{b, c::{d, e}}`` -> ``a::b``, ``a::c::d``, ``a::c::e``."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [tree.split(" as ")[0]]
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rindex("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    return [p for item in items if item for p in expand_use(prefix + item)]


def resolve(module: tuple[str, ...], path: str) -> tuple[str, ...]:
    """The crate path named by ``path`` (``crate::a::b``, ``super::b``, ``self::b``) in ``module``."""
    parts = [p for p in re.split(r"::", re.sub(r"\s+", "", path)) if p]
    head = parts.pop(0)
    base = [] if head == "crate" else list(module)
    if head == "super":
        base = base[:-1]
        while parts and parts[0] == "super":
            parts.pop(0)
            base = base[:-1]
    return tuple(base + parts)


def closest_module(target: tuple[str, ...], modules: dict[tuple[str, ...], Path]) -> tuple[str, ...] | None:
    while target not in modules:
        if not target:
            return None
        target = target[:-1]
    return target


def layer(module: tuple[str, ...]) -> int:
    if not module:
        return ENTRY_LAYER
    return LAYERS.get(module[0], BASE_LAYER)


def name_of(module: tuple[str, ...]) -> str:
    return "::".join(("crate",) + module)


def graph(src: Path):
    modules = module_files(src)
    counted: dict[str, dict[str, int]] = {name_of(m): {} for m in modules}
    py_imports: list[tuple[Path, int]] = []
    for module, path in modules.items():
        raw = path.read_text()
        source = strip_comments(raw)
        paths: list[tuple[str, int]] = []
        for m in USE_RE.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            paths.extend((p, line) for p in expand_use(m.group(1)))
        code = USE_RE.sub(lambda m: "\n" * m.group(0).count("\n"), source)
        for m in PATH_RE.finditer(code):
            paths.append((m.group(0), code.count("\n", 0, m.start()) + 1))
        for text, line in paths:
            target = closest_module(resolve(module, text), modules)
            if target is None or target == module or not target:
                continue
            counted[name_of(module)].setdefault(name_of(target), line)
        if module != (PYREFS,):
            for m in PY_IMPORT_RE.finditer(source):
                py_imports.append((path, source.count("\n", 0, m.start()) + 1))
    return modules, counted, py_imports


def main(argv: list[str]) -> int:
    show_graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    src = Path(args[0]) if args else ROOT / "src"
    modules, counted, py_imports = graph(src)
    files = {name_of(m): p for m, p in modules.items()}
    findings = 0
    if show_graph:
        for name in sorted(counted):
            if counted[name]:
                print("%s -> %s" % (name, ", ".join(sorted(counted[name]))))
    for path in cycles(counted):
        steps = " -> ".join(
            "%s (%s:%d)" % (m, files[m].relative_to(ROOT), counted[m][path[i + 1]]) if i + 1 < len(path) else m
            for i, m in enumerate(path)
        )
        print("module circle: %s" % steps)
        findings += 1
    by_name = {name_of(m): m for m in modules}
    for name, targets in sorted(counted.items()):
        for target, line in sorted(targets.items()):
            if layer(by_name[target]) > layer(by_name[name]):
                print(
                    "layer: %s:%d (%s) imports %s, a layer above it"
                    % (files[name].relative_to(ROOT), line, name, target)
                )
                findings += 1
    for path, line in py_imports:
        print("python import outside pyrefs: %s:%d (go through src/pyrefs.rs)" % (path.relative_to(ROOT), line))
        findings += 1
    if findings:
        print("engine layers: %d finding(s) among %d modules" % (findings, len(modules)), file=sys.stderr)
        return 1
    print("engine layers: no circle, no import up a layer, Python imports in pyrefs only (%d modules)" % len(modules))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
