#!/usr/bin/env bash
# Put wheels of the sandbox's Python dependencies (RestrictedPython, pinned to
# the version installed on this host) into DIR (default ./wheelhouse), for a
# `docker build .` from a checkout. `toolscript image build` does this by itself.
set -euo pipefail
DIR=${1:-wheelhouse}
PY=${PYTHON:-python3}
ver=$("$PY" -c 'import importlib.metadata as m; print(m.version("RestrictedPython"))')
mkdir -p "$DIR"
"$PY" -m pip wheel -q --disable-pip-version-check -w "$DIR" "RestrictedPython==$ver"
ls "$DIR"
