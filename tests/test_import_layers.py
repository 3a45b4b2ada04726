"""The import-layer contract: ``lint-imports`` against ``[tool.importlinter]`` in pyproject.

The contracts (read them in ``pyproject.toml``): the host runtime above tools above
the sandbox; inside ``runtime/`` the command line above agent, batch and
integrations, above the core; nothing but the command line imports
``toolscript.runtime.cli``; the sandbox imports only the standard library and
RestrictedPython; no import cycles between sibling modules or packages.
Function-level imports count (import-linter sees every ``import`` statement);
imports under ``if TYPE_CHECKING:`` do not, as they never run.

The check runs on the package as installed, without a copy:
``scripts/lint_imports.py`` tells import-linter's graph builder (grimp) where the
editable install maps ``toolscript.runtime``, ``toolscript.sandbox`` and
``toolscript.tools`` (grimp alone walks ``toolscript/`` only and takes no mapped
subpackage as a root), then runs ``lint-imports`` itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT = REPO / "scripts" / "lint_imports.py"


def _lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(LINT), *args, "--no-cache"], cwd=REPO,
                          capture_output=True, text=True, timeout=240)


def test_import_layer_contracts_hold() -> None:
    proc = _lint()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout


def test_the_graph_holds_the_mapped_subpackages(tmp_path: Path) -> None:
    """A contract on modules that live in ``sandbox/`` and ``runtime/`` (not inside
    ``toolscript/``) is checked against their real imports: one that holds is kept,
    one that cannot hold is reported broken with the importing module."""
    config = tmp_path / "contracts.toml"
    config.write_text("""
[tool.importlinter]
root_packages = ["toolscript"]
include_external_packages = true
exclude_type_checking_imports = true

[[tool.importlinter.contracts]]
name = "the sandbox without RestrictedPython (cannot hold)"
type = "forbidden"
source_modules = ["toolscript.sandbox.policy"]
forbidden_modules = ["RestrictedPython"]

[[tool.importlinter.contracts]]
name = "the sandbox never imports the host runtime (holds)"
type = "forbidden"
source_modules = ["toolscript.sandbox"]
forbidden_modules = ["toolscript.runtime"]
""")
    proc = _lint(str(config))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 kept, 1 broken" in proc.stdout, proc.stdout
    assert "toolscript.sandbox.policy -> RestrictedPython" in proc.stdout, proc.stdout
