"""Packaging: the sandbox package imports only the stdlib and RestrictedPython,
and loading the sandbox server never loads the host runtime."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SANDBOX = Path(__file__).resolve().parents[2] / "sandbox"
SANDBOX_FILES = sorted(SANDBOX.glob("*.py"))
ALLOWED_THIRD_PARTY = {"RestrictedPython"}


def test_sandbox_files_exist() -> None:
    names = {p.name for p in SANDBOX_FILES}
    assert {"server.py", "protocol.py", "interpreter.py", "policy.py", "guards.py"} <= names


@pytest.mark.parametrize("path", SANDBOX_FILES, ids=lambda p: p.name)
def test_sandbox_imports_only_stdlib_and_restrictedpython(path: Path) -> None:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: the sandbox package itself
                continue
            tops = [(node.module or "").split(".")[0]]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)):
            tops = [str(node.args[0].value).split(".")[0]]
        else:
            continue
        for top in tops:
            if top not in sys.stdlib_module_names and top not in ALLOWED_THIRD_PARTY:
                bad.append(f"line {node.lineno}: {top}")
    assert not bad, f"{path.name} imports outside stdlib/RestrictedPython: {bad}"


def test_sandbox_server_does_not_load_the_host_runtime() -> None:
    code = (
        "import json, sys\n"
        "import toolscript.sandbox.server\n"
        "import toolscript.sandbox.interpreter\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                         check=True, env={}, timeout=60).stdout
    modules = set(json.loads(out))
    assert "toolscript.sandbox.server" in modules
    forbidden = [m for m in modules if m.startswith(("toolscript.runtime", "toolscript.tools",
                                                     "toolscript.errors", "jsonschema"))]
    assert not forbidden, forbidden


def test_public_api_imports() -> None:
    out = subprocess.run(
        [sys.executable, "-I", "-c",
         "from toolscript import Runtime, Limits, Decision, tool, RunResult, ToolCallRecord\n"
         "print(Runtime.__name__)"],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Runtime"
