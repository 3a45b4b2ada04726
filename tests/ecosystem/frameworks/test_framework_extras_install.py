"""The framework extras install into a clean virtualenv, and each adapter works there.

A wheel of this checkout goes into a new virtualenv that sees none of this
machine's packages, with ``[pydantic-ai,openai-agents,langchain,langgraph,smolagents]``
(pip resolves the frameworks from the configured index); then each adapter and
converter is used for real in that interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXTRAS = "pydantic-ai,openai-agents,langchain,langgraph,smolagents"

CHECK = r'''
from toolscript import Runtime, tool
from toolscript.integrations.langchain import RunScriptTool
from toolscript.integrations.openai_agents import run_script_tool
from toolscript.integrations.pydantic_ai import ToolscriptToolset
from toolscript.integrations.smolagents import ToolscriptExecutor
import langgraph.prebuilt
import smolagents


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Double(smolagents.Tool):
    name = "double"
    description = "Twice a number."
    inputs = {"n": {"type": "integer", "description": "the number"}}
    output_type = "integer"

    def forward(self, n):
        return 2 * n


with Runtime(tools=[add, Double()], backend="inprocess") as runtime:
    code_tool = RunScriptTool.over(runtime)
    print("langchain", code_tool.invoke({"code": "add(a=1, b=2) + double(n=3)"}))
    with runtime.session() as session:
        print("agents", run_script_tool(session).name)
    print("pydantic-ai", type(ToolscriptToolset(runtime)).__name__)
print("smolagents", type(ToolscriptExecutor(backend="inprocess")).__name__)
'''


@pytest.mark.slow
def test_the_framework_extras_install_into_a_clean_virtualenv(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = wheels.glob("toolscript-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[{EXTRAS}]"],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    run = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True,
                         timeout=300, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "langchain value:\n9" in run.stdout, run.stdout
    assert "agents run_script" in run.stdout
    assert "pydantic-ai ToolscriptToolset" in run.stdout
    assert "smolagents ToolscriptExecutor" in run.stdout
