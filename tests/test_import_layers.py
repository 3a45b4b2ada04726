"""The import-layer contract: ``lint-imports`` against ``[tool.importlinter]`` in pyproject.

The contracts (read them in ``pyproject.toml``): the host runtime above tools above
the sandbox; inside ``runtime/`` the command line above agent, batch and
integrations, above the core; nothing but the command line imports
``toolscript.runtime.cli``; the sandbox imports only the standard library and
RestrictedPython; no import cycles between sibling modules or packages.
Function-level imports count (import-linter sees every ``import`` statement);
imports under ``if TYPE_CHECKING:`` do not, as they never run.

import-linter analyses a package from its files, so the test copies the
repository's ``toolscript/``, ``runtime/``, ``sandbox/`` and ``tools/`` into the
``toolscript.*`` shape the installed package has (the ``package-dir`` mapping in
pyproject) and runs the checker there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUBPACKAGES = ("runtime", "sandbox", "tools")


def _lint_imports() -> str:
    beside = Path(sys.executable).parent / "lint-imports"
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is missing: python3 -m pip install -e '.[dev]' installs it"
    return found


def _package_shape(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    package = dest / "toolscript"
    shutil.copytree(REPO / "toolscript", package, ignore=ignore)
    for name in SUBPACKAGES:
        shutil.copytree(REPO / name, package / name, ignore=ignore)
    return dest


def test_import_layer_contracts_hold(tmp_path: Path) -> None:
    tree = _package_shape(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [_lint_imports(), str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout

