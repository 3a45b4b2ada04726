#!/usr/bin/env bash
# Type-check the installed package with mypy --strict (the AGENTS.md command).
#
# scripts/typecheck.py asks the import system (the editable install's finder)
# where each toolscript.* module lives and gives mypy the repository's files
# under their installed names: no copy of the tree, no symlinks.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/typecheck.py "$@"
