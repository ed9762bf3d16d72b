"""Autodoc adjustments for the API reference (docs/api/).

* The compiled engine (``turbocql._engine``): PyO3 gives each function and method a
  ``__text_signature__`` (names and defaults, no types). The types are in the stub
  ``python/turbocql/_engine.pyi``, read here with :mod:`ast`: each signature of an engine
  object keeps the names and defaults of its text signature and takes the annotations and
  the return type from the stub (the stub's private aliases such as ``_Query`` expanded,
  names it imports written in full). This covers the engine's members documented under
  Python subclasses too (``turbocql.cluster.ResultSet.one`` is ``ResultCore.one``).
* Dataclass fields with a ``default_factory`` show ``<factory>`` as their default, which
  is not Python: the signature would not parse. Shown as ``...`` instead.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

ENGINE = "turbocql._engine"
STUB = Path(__file__).resolve().parents[2] / "python" / "turbocql" / "_engine.pyi"


class _Stub:
    """The stub's functions and methods by qualified name (a list: overloads)."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text())
        self.defs: dict[str, list[ast.FunctionDef]] = {}
        self.imports: dict[str, str] = {}  # local name -> dotted path
        self.aliases: dict[str, ast.expr] = {}  # private type aliases, expanded
        self.typevars: set[str] = set()
        self.classes: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                call = node.value
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id in ("TypeVar", "ParamSpec")
                ):
                    self.typevars.add(name)
                else:
                    self.aliases[name] = node.value
            elif isinstance(node, ast.FunctionDef):
                self.defs.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes.add(node.name)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        self.defs.setdefault(f"{node.name}.{item.name}", []).append(item)

    def _qualify(self, expr: ast.expr) -> ast.expr:
        stub = self

        class Qualify(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.AST:
                name = node.id
                if name in stub.aliases:
                    return stub._qualify(stub.aliases[name])
                if name in stub.classes or name in stub.typevars:
                    return ast.Name(f"~{ENGINE}.{name}")
                if name in stub.imports:
                    return ast.Name(f"~{stub.imports[name]}")
                return node

        return Qualify().visit(ast.parse(ast.unparse(expr), mode="eval").body)

    def annotation(self, expr: ast.expr | None) -> str | None:
        if expr is None:
            return None
        return ast.unparse(self._qualify(expr))

    def parameters(self, func: ast.FunctionDef) -> dict[str, str]:
        """The annotation of each parameter of ``func`` (first one, self / cls, left out)."""
        args = func.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if args.vararg:
            every.append(args.vararg)
        if args.kwarg:
            every.append(args.kwarg)
        out = {}
        for arg in every:
            text = self.annotation(arg.annotation)
            if text is not None:
                out[arg.arg] = text
        return out


_stub: _Stub | None = None


def _engine_qualname(name: str, obj: Any) -> str | None:
    """The qualified name of ``obj`` in the stub, if it is an engine object."""
    if name.startswith(ENGINE + "."):  # static methods have neither module nor owner
        return name[len(ENGINE) + 1 :]
    owner = getattr(obj, "__objclass__", None)
    module = getattr(owner if owner is not None else obj, "__module__", None)
    if module != ENGINE:
        return None
    return getattr(obj, "__qualname__", None) or None


def _format(sig: inspect.Signature, annotations: dict[str, str], returns: str | None) -> tuple[str, str | None]:
    parts = []
    seen_kwonly = False
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):  # an unbound method's receiver
        params = params[1:]
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        if p.kind is p.VAR_POSITIONAL:
            seen_kwonly = True
        text = prefix + p.name
        ann = annotations.get(p.name)
        if ann is not None:
            text += f": {ann}"
        if p.default is not p.empty:
            text += (" = " if ann is not None else "=") + repr(p.default)
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    return "(" + ", ".join(parts) + ")", returns


def _engine_signature(what: str, name: str, obj: Any, signature: str | None):
    global _stub
    qualname = _engine_qualname(name, obj)
    if qualname is None or signature is None:
        return None
    if _stub is None:
        _stub = _Stub(STUB)
    if what in ("class", "exception"):
        funcs = _stub.defs.get(f"{qualname}.__new__") or _stub.defs.get(f"{qualname}.__init__")
    else:
        funcs = _stub.defs.get(qualname)
    if not funcs:
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    func = funcs[0]  # an engine object has one text signature: the stub's first form
    returns = None if what in ("class", "exception") else _stub.annotation(func.returns)
    text, returns = _format(sig, _stub.parameters(func), returns)
    return text, returns


def process_signature(app, what, name, obj, options, signature, return_annotation):
    if signature and "<factory>" in signature:
        signature = signature.replace("<factory>", "...")
        result = (signature, return_annotation)
    else:
        result = None
    engine = _engine_signature(what, name, obj, signature)
    return engine or result


def setup(app):
    app.connect("autodoc-process-signature", process_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
