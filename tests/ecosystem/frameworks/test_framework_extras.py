"""Each adapter imports its framework only when it is used, and a missing
framework gives the install hint every other missing extra gives."""

from __future__ import annotations

import subprocess
import sys

import pytest

ADAPTERS = [
    ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("openai_agents", "agents", "openai-agents"),
    ("langchain", "langchain_core", "langchain"),
    ("smolagents", "smolagents", "smolagents"),
]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize(("module", "package", "extra"), ADAPTERS)
def test_a_missing_framework_names_its_extra(module, package, extra):
    code = (
        "import sys\n"
        f"sys.modules[{package!r}] = None  # as if it were not installed\n"
        "from toolscript import ConfigurationError\n"
        "try:\n"
        f"    import toolscript.integrations.{module}\n"
        "except ConfigurationError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert f"pip install 'toolscript[{extra}]'" in done.stdout, done.stdout


def test_the_package_and_its_shared_part_import_no_framework():
    frameworks = [package for _module, package, _extra in ADAPTERS]
    code = (
        "import sys\n"
        "import toolscript.integrations as integrations\n"
        "spec = integrations.script_tool_spec\n"
        f"print([p for p in {frameworks!r} if p in sys.modules])\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
