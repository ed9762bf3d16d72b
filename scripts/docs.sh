#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html with warnings as errors: a broken
# link, a reference to a name without an entry or a docstring Sphinx cannot read fails it.
# `bash scripts/docs.sh doctest` runs every page's examples instead (needs the local node);
# serve the built site with `python -m http.server -d docs/_build/html 8000`.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
BUILDER="${1:-html}"
"$PY" -m sphinx -b "$BUILDER" -E -W -n --keep-going -q docs "docs/_build/$BUILDER"
echo "==> docs/_build/$BUILDER"
