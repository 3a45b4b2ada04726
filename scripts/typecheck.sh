#!/usr/bin/env bash
# Type-check the installed layout with mypy.
#
# The repository keeps runtime/, sandbox/ and tools/ at the top level and
# maps them to toolscript.runtime, toolscript.sandbox and toolscript.tools
# (setuptools package-dir). mypy cannot follow that mapping, so this script
# builds the package shape from symlinks in a temporary folder and checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/toolscript"
for f in toolscript/*.py toolscript/py.typed; do ln -s "$root/$f" "$tree/toolscript/$(basename "$f")"; done
for pkg in runtime sandbox tools; do ln -s "$root/$pkg" "$tree/toolscript/$pkg"; done
ln -s "$root/toolscript/integrations" "$tree/toolscript/integrations"  # toolscript/ subpackages
cd "$tree"
python3 -m mypy --config-file "$root/pyproject.toml" -p toolscript "$@"
