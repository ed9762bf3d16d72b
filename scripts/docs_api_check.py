"""Checks that the API reference has an entry for every public name classic code imports.

``scripts/public_names.md`` (written by ``scripts/public_names.py``) lists, for each module
of the classic driver, the names ``turbocql.<same module>`` has ("Present"). Each must have
an entry in the built site's Sphinx inventory (``objects.inv``, the objects the site
documents) at its public path, ``turbocql.<module>.<name>``, or be a re-export of an
object documented under the same name at another public path (not ``turbocql._xxx``):
``turbocql.cluster.SimpleStatement`` is ``turbocql.query.SimpleStatement``, whose entry
describes it. Re-exports are resolved by importing both paths and comparing identity.

Usage: ``python scripts/docs_api_check.py [docs/_build/html/objects.inv]`` prints the names
without an entry and exits with status 1 if there are any. The integration test that builds
the site calls :func:`check_inventory`.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_NAMES_MD = ROOT / "scripts" / "public_names.md"
DEFAULT_INVENTORY = ROOT / "docs" / "_build" / "html" / "objects.inv"

_HEADING = re.compile(r"^## `cassandra[\w.]*` → `(turbocql[\w.]*)`")
_PRESENT = re.compile(r"^Present \((\d+)\):")
_NAME = re.compile(r"`(\w+)`")
_MISSING = object()


@dataclass
class InventoryReport:
    """The result of :func:`check_inventory`: every Present name, and those without entry."""

    names: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def documented(self) -> int:
        return len(self.names) - len(self.missing)


def present_names(md_path: Path = PUBLIC_NAMES_MD) -> dict[str, list[str]]:
    """The Present names of ``public_names.md``, by turbocql module."""
    out: dict[str, list[str]] = {}
    module = None
    for line in Path(md_path).read_text().splitlines():
        heading = _HEADING.match(line)
        if heading:
            module = heading.group(1)
            continue
        present = _PRESENT.match(line)
        if present and module is not None:
            names = _NAME.findall(line[present.end() :])
            if len(names) != int(present.group(1)):
                raise ValueError(f"{md_path}: {module}: {len(names)} names, header says {present.group(1)}")
            out[module] = names
            module = None
    if not out:
        raise ValueError(f"{md_path}: no Present names found")
    return out


def load_inventory(inv_path: Path) -> set[str]:
    """The names of the Python objects (``py:*`` entries) of a Sphinx ``objects.inv``."""
    from sphinx.util.inventory import InventoryFile

    inventory = InventoryFile.loads(Path(inv_path).read_bytes(), uri="")
    return {name for kind, entries in inventory.data.items() if kind.startswith("py:") for name in entries}


def _is_public(dotted: str) -> bool:
    return not any(part.startswith("_") for part in dotted.split("."))


def _resolve(dotted: str) -> object:
    """The object at a dotted path: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            try:
                obj = getattr(obj, attr)
            except Exception:  # noqa: BLE001 - a descriptor may raise anything on class access
                return _MISSING
        return obj
    return _MISSING


def check_inventory(inv_path: Path | str = DEFAULT_INVENTORY, md_path: Path | str = PUBLIC_NAMES_MD) -> InventoryReport:
    """Asserts every Present name of ``md_path`` has an entry in the inventory ``inv_path``.

    Prints the names without an entry (one a line) before failing. Returns the report.
    """
    entries = load_inventory(Path(inv_path))
    # Entries under a public path, by their last component, for re-exports.
    by_name: dict[str, list[str]] = {}
    for entry in entries:
        if _is_public(entry):
            by_name.setdefault(entry.rsplit(".", 1)[-1], []).append(entry)
    resolved: dict[str, object] = {}

    def entry_object(entry: str) -> object:
        if entry not in resolved:
            resolved[entry] = _resolve(entry)
        return resolved[entry]

    report = InventoryReport()
    for module_name, names in present_names(Path(md_path)).items():
        module = importlib.import_module(module_name)
        for name in names:
            dotted = f"{module_name}.{name}"
            report.names.append(dotted)
            if dotted in entries:
                continue
            obj = getattr(module, name, _MISSING)
            if obj is _MISSING or not any(entry_object(e) is obj for e in by_name.get(name, ())):
                report.missing.append(dotted)
    for dotted in report.missing:
        print(f"no API entry: {dotted}")
    assert not report.missing, (
        f"{len(report.missing)} of {len(report.names)} public names have no entry in {inv_path}: "
        + ", ".join(report.missing)
    )
    return report


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    inv_path = Path(args[0]) if args else DEFAULT_INVENTORY
    try:
        report = check_inventory(inv_path)
    except AssertionError:
        return 1
    print(f"{report.documented} of {len(report.names)} public names have an API entry ({inv_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
