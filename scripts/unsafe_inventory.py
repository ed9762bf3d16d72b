"""The ``unsafe`` inventory of docs/ARCHITECTURE.md held to src/ (a part of
scripts/architecture_check.py, which runs it). Standard library only.

**What is counted.** Every ``unsafe`` keyword in the Rust sources of src/, outside comments
(``//``, ``/* */``, doc comments) and string and character literals (``"..."``, ``r#"..."#``,
``b"..."``, ``'x'``), by what follows it:

- ``unsafe {`` a **block**;
- ``unsafe fn name`` an **fn** (a free function, a method, a trait's method);
- ``unsafe extern "C" fn name`` an **extern fn** (one item, not an fn and an extern);
- ``unsafe impl`` an **impl**; ``unsafe trait`` a **trait**;
- ``unsafe extern "C" {`` an **extern block**; ``#[unsafe(no_mangle)]`` an **attribute**.

Not counted: a function-pointer type (``unsafe fn(u8)``, ``unsafe extern "C" fn(Ptr) -> c_int``
as a field's, a parameter's or a ``transmute``'s type), which is a type, not unsafe code. An
``unsafe`` the rules above do not classify is a finding of its own. An ``unsafe`` in a
``macro_rules!`` body counts once, as written, however often the macro expands; code under
``#[cfg(test)]`` counts like any other.

**What the inventory lists.** The section ``## unsafe: the inventory`` of the doc (up to the
next ``## `` heading): each ``### `` heading naming a file (``### src/alloc.rs``) opens that
file's entries, and each of its top-level bullets is one entry whose tally comes first, in
bold: ``- **fn + 2 blocks** `EngineAlloc::alloc` ...``, ``- **2 impls** ...``,
``- **extern fn + 3 blocks** ...``. A tally is parts joined by `` + ``, each a kind above with
an optional count (``2 blocks``, ``block``). Bullets under a heading that names no file are
not entries.

**The check.** For each file of src/: the kinds and counts of its ``unsafe`` equal the sum of
its entries' tallies, kind by kind; a file with ``unsafe`` has a heading; a heading names an
existing file, once; every entry's tally parses. A finding names the file and both counts.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

SECTION = "## unsafe: the inventory"
KINDS = ("block", "fn", "extern fn", "impl", "trait", "extern block", "attribute")

_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")
_RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')
_STRING = re.compile(r'(?:b|c)?"')
_CHAR = re.compile(r"b?'(?:[^'\\\n]|\\(?:[nrt\\0'\"]|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,6}\}))'")
_UNSAFE = re.compile(r"\bunsafe\b")
# The kind of an `unsafe` by what follows it, tried in order (literals are blanked by then:
# `extern "C" fn` reads `extern     fn`). A function-pointer type is found, then not counted.
POINTER_TYPE = "function-pointer type"
_FOLLOWS = [
    ("block", re.compile(r"\s*\{")),
    ("extern block", re.compile(r"\s*extern\s*\{")),
    (POINTER_TYPE, re.compile(r"\s*(?:extern\s*)?fn\s*\(")),
    ("extern fn", re.compile(r"\s*extern\s*fn\s+[A-Za-z_]")),
    ("fn", re.compile(r"\s*fn\s+[A-Za-z_]")),
    ("impl", re.compile(r"\s*impl\b")),
    ("trait", re.compile(r"\s*(?:auto\s+)?trait\b")),
    ("attribute", re.compile(r"\s*\(")),  # only right after `#[` (checked apart)
]

_ENTRY = re.compile(r"^- \*\*([^*]+)\*\*")
_PART = re.compile(r"^(?:(\d+) )?(%s)s?$" % "|".join(re.escape(k) for k in sorted(KINDS, key=len, reverse=True)))
_HEADING_FILE = re.compile(r"(?<![\w/.-])(src/[\w/.-]+\.rs)\b")


# --- the code -----------------------------------------------------------------------------


def _blank(text: str) -> str:
    """``text`` as spaces, its newlines kept (so lines and columns stay where they were)."""
    return re.sub(r"[^\n]", " ", text)


def code_only(source: str) -> str:
    """``source`` with its comments and string and character literals blanked."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        at_word_start = i == 0 or not _IDENT_CHAR.match(source[i - 1])
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
        elif source.startswith("/*", i):
            depth, end = 1, i + 2
            while end < n and depth:
                if source.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif source.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
        elif at_word_start and (m := _RAW_STRING.match(source, i)):
            close = source.find('"' + m.group(1), m.end())
            end = n if close < 0 else close + 1 + len(m.group(1))
        elif at_word_start and (m := _STRING.match(source, i)):
            end = m.end()
            while end < n and source[end] != '"':
                end += 2 if source[end] == "\\" else 1
            end = min(end + 1, n)
        elif at_word_start and (m := _CHAR.match(source, i)):
            end = m.end()
        else:  # code, a lifetime's quote included
            out.append(source[i])
            i += 1
            continue
        out.append(_blank(source[i:end]))
        i = end
    return "".join(out)


@dataclass(frozen=True)
class Unsafe:
    """One ``unsafe`` of a file: its kind (None when unclassified) and its line."""

    kind: str | None
    line: int


def occurrences(source: str) -> list[Unsafe]:
    """The counted ``unsafe`` of a Rust source, in order (function-pointer types left out)."""
    code = code_only(source)
    found = []
    for m in _UNSAFE.finditer(code):
        in_attribute = code[max(0, m.start() - 100) : m.start()].rstrip().endswith(("#[", "#!["))
        kind = next(
            (
                name
                for name, follows in _FOLLOWS
                if follows.match(code, m.end()) and (name == "attribute") == in_attribute
            ),
            None,
        )
        if kind != POINTER_TYPE:
            found.append(Unsafe(kind, code.count("\n", 0, m.start()) + 1))
    return found


def in_code(src: Path) -> dict[str, list[Unsafe]]:
    """``src/...rs`` -> its counted ``unsafe``, for every file that has any."""
    out = {}
    for path in sorted(src.rglob("*.rs")):
        found = occurrences(path.read_text())
        if found:
            out["src/" + path.relative_to(src).as_posix()] = found
    return out


# --- the doc ------------------------------------------------------------------------------


def tally(text: str) -> Counter[str] | None:
    """``"fn + 2 blocks"`` -> ``{fn: 1, block: 2}``; None if it does not parse."""
    counts: Counter[str] = Counter()
    for part in text.split(" + "):
        m = _PART.match(part.strip())
        if not m:
            return None
        counts[m.group(2)] += int(m.group(1) or 1)
    return counts


@dataclass
class Inventory:
    """The section as read: each file's summed tallies, and what could not be read."""

    found: bool
    files: dict[str, Counter[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def inventory(doc: str) -> Inventory:
    """The inventory section of ``doc``, read (``found`` False when there is none)."""
    heading = re.search(r"^%s$" % re.escape(SECTION), doc, re.M)
    if heading is None:
        return Inventory(found=False)
    body = doc[heading.end() :]
    end = re.search(r"^## ", body, re.M)
    body = body[: end.start()] if end else body
    listed = Inventory(found=True)
    files, problems = listed.files, listed.problems
    current: str | None = None
    for line in body.split("\n"):
        if line.startswith("### "):
            m = _HEADING_FILE.search(line)
            current = m.group(1) if m else None
            if current is not None:
                if current in files:
                    problems.append("unsafe: %s has two headings in the inventory" % current)
                files.setdefault(current, Counter())
            continue
        if current is None or not line.startswith("- "):
            continue
        m = _ENTRY.match(line)
        counts = tally(m.group(1)) if m else None
        if counts is None:
            problems.append(
                "unsafe: an entry of %s has no tally of kinds (**fn + 2 blocks**, **impl**): %s" % (current, line[:80])
            )
            continue
        files[current].update(counts)
    return listed


# --- the check ----------------------------------------------------------------------------


def describe(counts: Counter[str]) -> str:
    """``{block: 15, fn: 10, impl: 1}`` -> ``26 (15 blocks, 10 fns, 1 impl)``."""
    total = sum(counts.values())
    parts = ["%d %s%s" % (counts[k], k, "" if counts[k] == 1 else "s") for k in KINDS if counts[k]]
    return "%d (%s)" % (total, ", ".join(parts)) if parts else "0"


def check(doc: str, src: Path) -> list[str]:
    """Every finding of the inventory in ``doc`` against the sources under ``src``."""
    code = in_code(src)
    listed = inventory(doc)
    findings: list[str] = []
    if not listed.found:
        if code:
            findings.append("unsafe: no '%s' section, and src/ has unsafe code" % SECTION)
        return findings
    findings += listed.problems
    files = listed.files
    for name, found in code.items():
        for u in found:
            if u.kind is None:
                findings.append("unsafe: %s:%d: an unsafe the check cannot classify" % (name, u.line))
        counts = Counter(u.kind for u in found if u.kind is not None)
        lines = ", ".join(str(u.line) for u in found)
        if name not in files:
            findings.append(
                "unsafe: %s has %s unsafe (lines %s) and no heading in the inventory" % (name, describe(counts), lines)
            )
        elif files[name] != counts:
            findings.append(
                "unsafe: %s: %s in the code (lines %s), %s in the inventory"
                % (name, describe(counts), lines, describe(files[name]))
            )
    for name, counts in files.items():
        if name in code:
            continue
        root = src.parent
        if not (root / name).exists():
            findings.append("unsafe: the inventory lists %s, which does not exist" % name)
        elif counts:
            findings.append("unsafe: %s: 0 in the code, %s in the inventory" % (name, describe(counts)))
    return findings
