"""Looks at the built documentation site in a real browser: headless Chromium (Debian's
``chromium`` package) renders a page to a PNG and dumps its DOM, and ``check_page`` says what
a reader would miss (the title, the navigation, rendered code blocks).

tests/integration/test_docs.py uses it on the site it builds; run as a script, it builds the
site (scripts/docs.sh) and writes the committed preview, ``docs/_static/preview/*.png``.
"""

from __future__ import annotations

import argparse
import html.parser
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREVIEW_DIR = ROOT / "docs" / "_static" / "preview"
# The home page, a guide page and an API page: (page in the built site, preview file name,
# what the page must show: rendered code, or API entries).
PAGES = [
    ("index.html", "home.png", "code"),
    ("execution-paths.html", "guide.png", "code"),
    ("api/cluster.html", "api.png", "api"),
]
# Without the background-networking flags Chromium tries to reach Google's hosts at every
# start, which a closed network refuses; a fresh profile keeps runs independent.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def chromium() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run_chromium(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    binary = chromium()
    if binary is None:
        raise RuntimeError("chromium is not installed (Debian: apt-get install chromium; scripts/env.sh does it)")
    with tempfile.TemporaryDirectory(prefix="turbocql-chromium-") as profile:
        return subprocess.run(
            [binary, *CHROMIUM_FLAGS, "--user-data-dir=" + profile, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 1000) -> Path:
    """Renders ``page`` (a built HTML file) to the PNG ``out``."""
    _run_chromium(["--window-size=%d,%d" % (width, height), "--screenshot=" + str(out), page.as_uri()])
    if not out.exists():
        raise RuntimeError("chromium wrote no screenshot of %s" % page)
    return out


def dump_dom(page: Path) -> str:
    """The DOM of ``page`` after Chromium has loaded it (scripts run)."""
    return _run_chromium(["--dump-dom", page.as_uri()]).stdout


@dataclass
class PageReport:
    """What a reader needs on a page, as found in its rendered DOM."""

    title: str = ""
    heading: str = ""
    navigation_links: int = 0
    code_blocks: int = 0
    highlighted_tokens: int = 0
    api_signatures: int = 0

    def problems(self, want: str) -> list[str]:
        """What is missing; ``want`` is "code" (rendered code blocks) or "api" (entries)."""
        found = []
        if not self.title.strip():
            found.append("no <title>")
        if not self.heading.strip():
            found.append("no <h1>")
        if self.navigation_links < 5:
            found.append("navigation has %d links" % self.navigation_links)
        if want == "code" and (self.code_blocks == 0 or self.highlighted_tokens == 0):
            found.append("no rendered code block (%d blocks, %d tokens)" % (self.code_blocks, self.highlighted_tokens))
        if want == "api" and self.api_signatures < 5:
            found.append("%d API entries" % self.api_signatures)
        return found


class _Reader(html.parser.HTMLParser):
    """Reads furo's layout: the sidebar's tree of pages comes before the page's article."""

    def __init__(self) -> None:
        super().__init__()
        self.report = PageReport()
        self.in_sidebar = False
        self.inside: str | None = None  # "title", "h1" or "pre" while inside one
        self.h1_seen = False
        self.title_seen = False  # the head's <title>; furo's SVG icons have their own

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and "sidebar-tree" in classes:
            self.in_sidebar = True
        elif tag == "article":
            self.in_sidebar = False
        elif tag == "a" and self.in_sidebar:
            self.report.navigation_links += 1
        elif tag == "dt" and "sig" in classes:
            self.report.api_signatures += 1
        elif (tag == "title" and not self.title_seen) or (tag == "h1" and not self.h1_seen):
            self.inside = tag
        elif tag == "pre":
            self.report.code_blocks += 1
            self.inside = "pre"
        elif tag == "span" and self.inside == "pre" and classes:
            self.report.highlighted_tokens += 1

    def handle_endtag(self, tag):
        if tag == self.inside:
            self.h1_seen = self.h1_seen or tag == "h1"
            self.title_seen = self.title_seen or tag == "title"
            self.inside = None

    def handle_data(self, data):
        if self.inside == "title":
            self.report.title += data
        elif self.inside == "h1":
            self.report.heading += data


def check_page(page: Path) -> PageReport:
    """Loads ``page`` in Chromium and reports what it shows."""
    reader = _Reader()
    reader.feed(dump_dom(page))
    return reader.report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html")
    parser.add_argument("--no-build", action="store_true", help="use the site already built in --site")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(["bash", str(ROOT / "scripts" / "docs.sh")], check=True)
    PREVIEW_DIR.mkdir(parents=True, exist_ok=True)
    for page, name, want in PAGES:
        report = check_page(args.site / page)
        problems = report.problems(want)
        if problems:
            print("%s: %s" % (page, "; ".join(problems)), file=sys.stderr)
            return 1
        out = screenshot(args.site / page, PREVIEW_DIR / name)
        print("%s -> %s" % (page, out.relative_to(ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
