"""One source for names and defaults: the code, the docs and the sandbox agree with it."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime import prompts
from toolscript.runtime.cli.main import build_parser
from toolscript.runtime.config import load_config
from toolscript.runtime.limits import Limits
from toolscript.runtime.names import (
    APPROVAL_MODES,
    BACKEND_NAMES,
    DEFAULT_MODULES,
    RUN_ENDING_TOOL_ERRORS,
    RUN_ERROR_TYPES,
    SANDBOX_BUILTIN_NAMES,
    TOOL_ERROR_TYPES,
    TOOL_EXCEPTION_NAMES,
)
from toolscript.runtime.runtime import Runtime
from toolscript.sandbox import modules as sandbox_modules
from toolscript.sandbox.builtins import make_builtins
from toolscript.sandbox.defaults import DEFAULT_MAX_OUTPUT_CHARS, RUN_LIMIT_DEFAULTS
from toolscript.sandbox.guards import AbortState, Guards
from toolscript.sandbox.interpreter import Interpreter, RunLimits
from toolscript.sandbox.toolcalls import LIMIT_ERRORS, SCRIPT_EXCEPTIONS
from toolscript.tools import tool

from toolscript.errors import ConfigurationError, ToolDefinitionError

ROOT = Path(__file__).resolve().parents[2]

# ``outside_run`` ends script code a garbage collector runs in another thread after or
# beside its run: it is raised there and swallowed, never a run's error type.
INTERNAL_REASONS = frozenset({"idle", "killed", "aborted", "outside_run"})
"""Abort and death reasons that never reach a result: ``idle`` (between runs),
``killed`` (reported as ``sandbox_crashed`` or ``timeout``), ``aborted`` (the
default of an abort that a more specific one always replaces)."""


# -- error types -------------------------------------------------------------------


ERROR_TABLES = ROOT / "docs" / "guide" / "limits.md"
"""The guide page with the error-type tables (the README links to it)."""


def _readme_table(header: str) -> set[str]:
    """The backticked names in the first column of the docs table under ``header``
    (in :data:`ERROR_TABLES`)."""
    text = ERROR_TABLES.read_text(encoding="utf-8")
    start = text.index(f"| `{header}` | meaning |")
    names: set[str] = set()
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


def test_the_readme_lists_exactly_the_run_error_types() -> None:
    assert _readme_table("error.type") == RUN_ERROR_TYPES


def test_the_readme_lists_exactly_the_tool_error_types() -> None:
    assert _readme_table("tool_error_type") == TOOL_ERROR_TYPES


def test_run_ending_tool_errors_are_run_error_types_too() -> None:
    assert RUN_ENDING_TOOL_ERRORS <= RUN_ERROR_TYPES & TOOL_ERROR_TYPES
    assert LIMIT_ERRORS == RUN_ENDING_TOOL_ERRORS


_PRODUCERS = [
    re.compile(r'\b(?:_error|_failure|SandboxDied|SandboxAbort|abort\.set)\(\s*"([a-z_]+)"'),
    re.compile(r'"type":\s*"([a-z_]+)",\s*"message"'),
    re.compile(r'\btype="([a-z_]+)"'),
    re.compile(r'\breturn "([a-z]+_(?:limit|crashed|error))"'),
]
_SKIPPED_DIRS = ("batch", "providers", "integrations", "agent", "cli", "walls", "inbox")
"""Packages whose ``type`` strings name other things (batch item errors,
provider payloads, MCP content, agent events, CLI options, wall tests, the
approval inbox's HTML)."""


def _produced_types() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for package in ("runtime", "sandbox"):
        for path in (ROOT / package).rglob("*.py"):
            if set(path.relative_to(ROOT / package).parts[:-1]) & set(_SKIPPED_DIRS):
                continue
            text = path.read_text(encoding="utf-8")
            for pattern in _PRODUCERS:
                for name in pattern.findall(text):
                    found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_error_type_the_code_produces_is_a_known_one() -> None:
    produced = _produced_types()
    assert {"syntax_error", "output_limit", "invalid_arguments", "host_abort"} <= set(produced)
    unknown = {
        name: sorted(where) for name, where in produced.items()
        if name not in RUN_ERROR_TYPES | TOOL_ERROR_TYPES | INTERNAL_REASONS
    }
    assert unknown == {}


def test_a_refused_tool_call_reports_a_known_type(make_runtime: Any) -> None:
    @tool
    def double(x: int) -> int:
        return 2 * x

    rt = make_runtime([double])
    result = rt.run("double(x='a')")
    assert result.error is not None and result.error.type in RUN_ERROR_TYPES
    assert result.error.details["tool_error_type"] in TOOL_ERROR_TYPES
    caught = rt.run("try:\n    double(x='a')\nexcept ToolError as e:\n    r = e.type\nr")
    assert caught.ok and caught.value in TOOL_ERROR_TYPES


# -- sandbox builtins --------------------------------------------------------------


class _NoHost:
    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("no tool is called")

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise AssertionError("no tool is called")


def test_the_names_the_sandbox_adds_to_the_builtins_are_the_declared_ones() -> None:
    interpreter = Interpreter(_NoHost())
    added = set(interpreter.namespace["__builtins__"]) - set(
        make_builtins(Guards({}, AbortState()), print, __import__)
    )
    assert added == set(SANDBOX_BUILTIN_NAMES)
    assert tuple(SCRIPT_EXCEPTIONS) == TOOL_EXCEPTION_NAMES


@pytest.mark.parametrize("name", SANDBOX_BUILTIN_NAMES)
def test_a_tool_may_not_take_a_sandbox_builtin_name(name: str) -> None:
    @tool(name=name)
    def shadow() -> int:
        return 1

    with pytest.raises(ToolDefinitionError, match="reserved"):
        Runtime([shadow], backend="inprocess")


# -- default limits ----------------------------------------------------------------


def test_host_and_sandbox_take_their_limit_defaults_from_one_table() -> None:
    assert Limits().run_message() == RUN_LIMIT_DEFAULTS
    assert dataclasses.asdict(RunLimits()) == RUN_LIMIT_DEFAULTS
    assert RunLimits.from_message({}) == RunLimits()


def test_a_sandbox_without_a_limits_message_caps_output_like_the_host() -> None:
    interpreter = Interpreter(_NoHost())
    result = interpreter.run(f"print('x' * {DEFAULT_MAX_OUTPUT_CHARS + 10})")
    assert result["error"]["type"] == "output_limit"


def test_the_default_output_cap_holds_on_every_backend(make_runtime: Any) -> None:
    rt = make_runtime([])
    within = rt.run(f"print('x' * {DEFAULT_MAX_OUTPUT_CHARS - 1})")
    assert within.ok, within.error
    over = rt.run(f"print('x' * {DEFAULT_MAX_OUTPUT_CHARS + 1})")
    assert over.error is not None and over.error.type == "output_limit"


# -- default modules ---------------------------------------------------------------


def test_the_agent_offers_the_sandbox_default_modules() -> None:
    assert prompts.DEFAULT_MODULES is sandbox_modules.DEFAULT_MODULES is DEFAULT_MODULES
    assert "collections.abc" in DEFAULT_MODULES
    assert "collections.abc" in prompts.run_script_description("")


def test_a_default_runtime_imports_every_module_the_prompt_promises(make_runtime: Any) -> None:
    rt = make_runtime([])
    assert rt.modules == DEFAULT_MODULES
    result = rt.run("from collections.abc import Mapping\nisinstance({}, Mapping)")
    assert result.ok and result.value is True, result.error


# -- backend and approval names ----------------------------------------------------


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize("approve", APPROVAL_MODES)
def test_the_cli_accepts_every_declared_name(backend: str, approve: str) -> None:
    args = build_parser().parse_args(["run", "--backend", backend, "--approve", approve, "x.py"])
    assert (args.backend, args.approve) == (backend, approve)


@pytest.mark.parametrize("option", ["--backend", "--approve"])
def test_the_cli_refuses_other_names_and_lists_the_declared_ones(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", option, "firecracker", "x.py"])
    names = BACKEND_NAMES if option == "--backend" else APPROVAL_MODES
    err = capsys.readouterr().err
    assert all(repr(name) in err for name in names)


@pytest.mark.parametrize(("backend", "approve"), itertools.product(BACKEND_NAMES, APPROVAL_MODES))
def test_a_config_profile_accepts_every_declared_name(
    tmp_path: Path, backend: str, approve: str
) -> None:
    path = tmp_path / "toolscript.toml"
    path.write_text(f'[profiles.p]\nbackend = "{backend}"\napprove = "{approve}"\n')
    profile = load_config(path).profile("p")
    assert (profile.backend, profile.approve) == (backend, approve)


def test_a_config_profile_refuses_another_backend(tmp_path: Path) -> None:
    path = tmp_path / "toolscript.toml"
    path.write_text('[profiles.p]\nbackend = "firecracker"\n')
    with pytest.raises(ConfigurationError, match="inprocess"):
        load_config(path).profile("p")


def test_an_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Runtime([], backend="firecracker")
    for name in BACKEND_NAMES:
        assert name in str(caught.value)


def test_no_module_spells_the_name_lists_out_again() -> None:
    spelled = [
        re.compile(r'"inprocess",\s*"subprocess",\s*"docker"'),
        re.compile(r'"allow",\s*"ask",\s*"deny"'),
    ]
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("runtime", "tools", "toolscript")
        for path in (ROOT / package).rglob("*.py")
        if path.name != "names.py"
        and any(p.search(path.read_text(encoding="utf-8")) for p in spelled)
    ]
    assert offenders == []
