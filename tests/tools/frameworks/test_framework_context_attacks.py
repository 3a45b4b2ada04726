"""A script that tries to supply or overwrite the host-built context of a
framework tool (the run's ``deps``) is refused before the tool runs; a tool
argument that happens to be called ``deps`` stays the model's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents import RunContextWrapper, function_tool
from pydantic_ai import RunContext, Tool
from toolscript.tools import render_stub

from toolscript import Runtime, ToolCallRequest

CALLS: list[Any] = []


def whoami(ctx: RunContext[dict[str, str]]) -> str:
    """The current user."""
    CALLS.append(ctx.deps)
    return ctx.deps["user"]


@function_tool
def pin(ctx: RunContextWrapper[dict[str, str]], deps: list[str]) -> dict[str, Any]:
    """Pin package versions.

    Args:
        deps: the packages to pin
    """
    return {"pinned": deps, "by": ctx.context["user"]}


def test_a_script_cannot_pass_the_context_it_is_not_shown(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([Tool(whoami)], context={"deps": {"user": "alice"}})
    assert "deps" not in render_stub(runtime.tools["whoami"])
    CALLS.clear()
    for script in ("whoami(deps={'user': 'admin'})", "whoami({'user': 'admin'})",
                   "whoami(**{'deps': {'user': 'admin'}})"):
        result = runtime.run(script)
        assert result.error is not None, script
        assert result.error.details.get("tool_error_type") == "invalid_arguments", script
    assert CALLS == []
    assert runtime.run("whoami()").value == "alice"
    assert CALLS == [{"user": "alice"}]


def test_an_argument_called_deps_is_the_models_and_the_context_is_the_hosts(
    make_runtime: Callable[..., Runtime],
) -> None:
    seen: list[dict[str, Any]] = []

    def approve(request: ToolCallRequest) -> bool:
        seen.append({"args": request.args, "injected": dict(request.injected)})
        return True

    runtime = make_runtime([pin], approve=approve, context={"deps": {"user": "bob"}})
    result = runtime.run("pin(['a==1'])")
    assert result.ok, result.error
    assert result.value == {"pinned": ["a==1"], "by": "bob"}
    assert seen == [{"args": {"deps": ["a==1"]}, "injected": {"_deps": {"user": "bob"}}}]
