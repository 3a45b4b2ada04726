"""What a benchmark task is: tools, a prompt, and scripted model decisions per mode."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakes.model_server import Call, Turn

__all__ = ["Task", "answer", "calls", "script"]


@dataclass
class Task:
    """One task of the token-economy benchmark.

    Attributes:
        name: short id.
        prompt: what the user asks.
        tools: the tools (``@tool`` functions).
        data_heavy: counted in the ≥ 90 % target (large payloads or fan-out).
        classic: the scripted model turns in classic mode.
        programmatic: the scripted model turns in programmatic mode.
        expected: the correct result, computed directly in Python.
        check: ``check(agent_result, expected) -> bool`` for the programmatic run:
            did the scripts really compute the expected result?
    """

    name: str
    prompt: str
    tools: list[Any]
    data_heavy: bool
    classic: list[Turn]
    programmatic: list[Turn]
    expected: Any
    check: Callable[[Any, Any], bool] = field(default=lambda result, expected: True)


def calls(*pairs: tuple[str, dict[str, Any]], text: str | None = None) -> Turn:
    """A classic turn with several tool calls."""
    return Turn(text=text, tool_calls=[Call(name, args) for name, args in pairs])


def script(code: str, text: str | None = None) -> Turn:
    """A programmatic turn: one run_script call."""
    return Turn(text=text, tool_calls=[Call("run_script", {"code": code})])


def answer(text: str) -> Turn:
    """The final answer."""
    return Turn(text=text)
