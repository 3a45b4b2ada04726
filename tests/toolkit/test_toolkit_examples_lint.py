"""The project's own example tools pass its own linter (``toolscript tools --lint``),
run as a real process on every tool file under ``examples/``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A tool file defines tools (imports toolscript); the others are scripts run against them.
TOOL_FILES = sorted(p for p in (ROOT / "examples").glob("*.py")
                    if "from toolscript import" in p.read_text("utf-8"))


def test_there_are_example_tool_files() -> None:
    assert any(p.name == "store_tools.py" for p in TOOL_FILES)


@pytest.mark.parametrize("path", TOOL_FILES, ids=[p.name for p in TOOL_FILES])
def test_example_tools_have_no_lint_findings(path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolscript", "tools", str(path), "--lint"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("no findings")
