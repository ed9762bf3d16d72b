"""Every ``Ordering::Relaxed`` of the engine (src/) says why it is enough: a comment that
names ``Relaxed`` on its line or in the few lines above (``// Relaxed: see Counters.``,
pointing at the reasoning once written at the declaration). x86 forgives a memory ordering
too weak for what a value publishes; arm64 does not, and a ``Relaxed`` added without that
reasoning is how such a bug comes in. Prints each one without and exits 1 if there is one
(run by scripts/lint.sh, so CI gates it).

    python scripts/relaxed_check.py [src_dir]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# How far above a use its comment may be (a comment heading a few uses in a row).
REACH = 6
RELAXED = re.compile(r"\bRelaxed\b")


def unexplained(src: Path) -> list[str]:
    """``path:line: text`` of each ``Relaxed`` in code with no comment naming it near."""
    found = []
    for path in sorted(src.rglob("*.rs")):
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            if not RELAXED.search(line.split("//", 1)[0]):
                continue
            near = lines[max(0, i - REACH) : i + 1]
            if not any("//" in c and RELAXED.search(c.split("//", 1)[1]) for c in near):
                found.append("%s:%d: %s" % (path, i + 1, line.strip()))
    return found


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else ROOT / "src"
    found = unexplained(src)
    for f in found:
        print("Relaxed with no comment saying why it is enough: " + f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
