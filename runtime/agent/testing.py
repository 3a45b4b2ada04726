"""Scripted models for testing tools and prompts without a model or an HTTP fake.

:class:`TestModel` replays scripted turns; :class:`FunctionModel` asks a
function for each turn. Both are :class:`~toolscript.runtime.providers.Provider`
s: the agent drives them exactly as it drives a real endpoint — the same
loop, the same sandbox, validation, approval and records — and they record
what the model would have been sent (:attr:`FunctionModel.requests`)::

    from toolscript import Agent
    from toolscript.testing import TestModel, run_script

    model = TestModel(
        run_script("sum(get_daily_revenue(s, '2026-08-24')['revenue_yuan'] "
                   "for s in list_stores())"),
        "The total is 15050.",
    )
    with Agent(model, tools=[list_stores, get_daily_revenue]) as agent:
        result = agent.run("Total revenue on 2026-08-24?")
    assert result.steps[0].output == "value:\\n15050.0"
    assert "def list_stores(" in model.requests[0].tool("run_script").description

A scripted turn is a ``str`` (the model answers with that text), a
:class:`~toolscript.runtime.providers.ToolCall` (:func:`call`,
:func:`run_script`, :func:`final_answer`) or a list of them (several calls in
one turn), a :class:`ModelReply` (text and calls), a ready
:class:`~toolscript.runtime.providers.ModelTurn`, or a function of the
:class:`TurnInfo` returning any of these. The conversation uses the neutral
message format of :class:`~toolscript.runtime.providers.Provider`.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..providers.base import (
    Message,
    ModelTurn,
    Provider,
    Request,
    ToolCall,
    ToolSpec,
    Usage,
    assistant_message,
)
from ..providers.errors import ModelRequestError

__all__ = [
    "FunctionModel",
    "ModelReply",
    "TestModel",
    "ToolResult",
    "TurnInfo",
    "call",
    "final_answer",
    "run_script",
]

_ids = itertools.count(1)


def call(name: str, arguments: dict[str, Any] | str | None = None, /, **kwargs: Any) -> ToolCall:
    """A call of tool ``name`` with ``arguments`` (a dict, raw JSON text, or keywords)."""
    if arguments is None:
        arguments = dict(kwargs)
    elif kwargs:
        raise TypeError("give the arguments as a dict or as keywords, not both")
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=arguments)


def run_script(code: str) -> ToolCall:
    """A ``run_script`` call with ``code``."""
    return call(prompts.RUN_SCRIPT_NAME, {"code": code})


def final_answer(arguments: dict[str, Any] | None = None, /, **fields: Any) -> ToolCall:
    """A ``final_answer`` call (the structured answer of ``output_type``)."""
    return call(prompts.FINAL_ANSWER_NAME, arguments, **fields)


@dataclass(frozen=True)
class ModelReply:
    """A scripted turn with text and calls."""

    text: str = ""
    calls: Sequence[ToolCall] = ()


@dataclass(frozen=True)
class ToolResult:
    """A reply the model got for one of its calls (from :attr:`TurnInfo.tool_results`)."""

    call_id: str
    name: str
    content: str
    is_error: bool


@dataclass
class TurnInfo:
    """What the model is sent for one turn.

    Attributes:
        number: 1 for the model's first request, then 2, 3 ... (across runs).
        messages: the conversation so far (a copy), neutral format.
        request: the request options: ``system``, ``tools``, ``tool_choice`` ...
    """

    number: int
    messages: list[Message]
    request: Request

    @property
    def system(self) -> str:
        """The system text."""
        return self.request.system or ""

    @property
    def tool_names(self) -> list[str]:
        """The names of the functions offered."""
        return [spec.name for spec in self.request.tools]

    def tool(self, name: str) -> ToolSpec:
        """The offered function ``name`` (its description and parameter schema)."""
        for spec in self.request.tools:
            if spec.name == name:
                return spec
        raise KeyError(f"{name!r} is not offered; offered: {', '.join(self.tool_names)}")

    @property
    def prompt(self) -> str:
        """The text of the last user message."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content", ""))
        return ""

    @property
    def tool_results(self) -> list[ToolResult]:
        """The replies to the previous turn's calls, in call order."""
        results: list[ToolResult] = []
        for message in reversed(self.messages):
            if message.get("role") == "tool":
                results.append(ToolResult(str(message.get("tool_call_id", "")),
                                          str(message.get("name", "")),
                                          str(message.get("content", "")),
                                          bool(message.get("is_error"))))
            elif results or message.get("role") == "assistant":
                break
        return results[::-1]

    @property
    def forced_answer(self) -> bool:
        """Whether this is the run's last turn (tool use is over)."""
        choice = self.request.tool_choice
        return choice == "none" or (
            isinstance(choice, dict) and choice.get("name") == prompts.FINAL_ANSWER_NAME
        )


TurnSpec = str | ToolCall | Sequence[ToolCall] | ModelReply | ModelTurn
"""A scripted turn (see the module docstring)."""


class FunctionModel(Provider):
    """A model whose every turn comes from ``function(info: TurnInfo)``.

    Args:
        function: returns the turn: a ``str``, a ``ToolCall``, a list of them, a
            :class:`ModelReply` or a :class:`ModelTurn`.
        name: the provider name reported in results and traces.
        model: the model name reported (``Agent`` needs none with a Provider).
        chunk: how a streamed turn cuts its text (default: into words).
    """

    def __init__(
        self,
        function: Callable[[TurnInfo], TurnSpec],
        *,
        name: str = "function",
        model: str = "function-model",
        chunk: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.function = function
        self.name = name
        self.model = model
        self.chunk = chunk or _words
        self.requests: list[TurnInfo] = []
        """What was sent, turn by turn (all runs)."""
        self._lock = threading.Lock()

    def complete(self, messages: list[Message], request: Request) -> ModelTurn:
        """Ask the function for the turn."""
        with self._lock:
            info = TurnInfo(len(self.requests) + 1, copy.deepcopy(messages), request)
            self.requests.append(info)
        return _as_turn(self.function(info), messages)

    def stream(self, messages: list[Message], request: Request) -> Iterator[str | ModelTurn]:
        """The turn's text in pieces, then the turn."""
        turn = self.complete(messages, request)
        yield from self.chunk(turn.text)
        yield turn


class TestModel(FunctionModel):
    """A model that replays ``turns`` in order, one per request.

    Raises ``ModelRequestError`` when the agent asks for more turns than were
    scripted (the error names the turn), like an endpoint refusing the request.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *turns: TurnSpec | Callable[[TurnInfo], TurnSpec],
                 name: str = "test", model: str = "test-model") -> None:
        self._turns: deque[TurnSpec | Callable[[TurnInfo], TurnSpec]] = deque(turns)
        super().__init__(self._next, name=name, model=model)

    def script(self, *turns: TurnSpec | Callable[[TurnInfo], TurnSpec]) -> None:
        """Append more scripted turns."""
        self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        """Scripted turns not replayed yet."""
        return len(self._turns)

    def _next(self, info: TurnInfo) -> TurnSpec:
        try:
            spec = self._turns.popleft()
        except IndexError:
            raise ModelRequestError(
                f"TestModel: no scripted turn left for request {info.number}; "
                "script more turns",
                provider=self.name,
            ) from None
        return spec(info) if callable(spec) else spec


def _as_turn(spec: TurnSpec, messages: list[Message]) -> ModelTurn:
    if isinstance(spec, ModelTurn):
        return spec
    if isinstance(spec, str):
        text, calls = spec, []
    elif isinstance(spec, ToolCall):
        text, calls = "", [spec]
    elif isinstance(spec, ModelReply):
        text, calls = spec.text, list(spec.calls)
    elif isinstance(spec, Sequence) and all(isinstance(c, ToolCall) for c in spec):
        text, calls = "", [c for c in spec if isinstance(c, ToolCall)]
    else:
        raise TypeError(f"a scripted turn cannot be {type(spec).__name__}: {spec!r}")
    size = len(json.dumps(messages, default=str))
    output = len(text) + sum(len(json.dumps(c.arguments)) for c in calls)
    return ModelTurn(
        text=text,
        tool_calls=calls,
        usage=Usage(input_tokens=max(1, size // 4), output_tokens=max(1, output // 4)),
        stop_reason="tool_calls" if calls else "stop",
        history=[assistant_message(text, calls)],
    )


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)
