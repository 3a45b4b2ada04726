"""Dialect-neutral types and the :class:`Provider` base class.

A provider is a thin adapter: it turns neutral request options into one
dialect's request body, calls the real SDK, and turns the response back into a
neutral :class:`ModelTurn`. The conversation itself is kept in the dialect's
own wire format (a list of dicts), so what the model sent comes back to it
unchanged, unknown fields included.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import ModelResponseError
from .retry import RetryPolicy, call_with_retry

__all__ = [
    "ModelTurn",
    "Provider",
    "Request",
    "ToolCall",
    "ToolChoice",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "normalize_tool_choice",
]

Message = dict[str, Any]

#: ``"auto"``, ``"none"``, ``"required"``, or ``{"name": TOOL}`` for one named tool.
ToolChoice = str | dict[str, str]


@dataclass(frozen=True)
class ToolSpec:
    """A function offered to the model: name, description, JSON Schema of the arguments,
    and example argument objects (sent by dialects that accept them)."""

    name: str
    description: str
    parameters: dict[str, Any]
    examples: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for. ``arguments`` is the raw JSON text or an object."""

    id: str
    name: str
    arguments: str | dict[str, Any]

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a dict, or ``None`` when they are not a JSON object."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class ToolOutcome:
    """The reply to one tool call, as text for the model."""

    call_id: str
    content: str
    is_error: bool = False


@dataclass
class Usage:
    """Token counts summed from the endpoint's usage fields.

    ``input_tokens`` counts every input token the endpoint processed, cached
    ones included; ``cache_read_tokens`` says how many of them were cache hits.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add ``other`` into this object."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens


@dataclass
class ModelTurn:
    """One parsed model response.

    Attributes:
        text: the assistant's text (parts joined).
        tool_calls: the calls it asked for, in its order, names decoded.
        usage: tokens of this request.
        stop_reason: the dialect's finish/stop reason.
        history: wire items to append to the conversation (the assistant's
            message or output items, echoed as received).
        raw: the response body.
    """

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str | None
    history: list[Message]
    raw: dict[str, Any] = field(repr=False)


@dataclass
class Request:
    """Neutral options of one model request.

    Attributes:
        model: model name.
        system: system text (sent as the dialect's system slot), or ``None``.
        tools: the functions offered.
        tool_choice: see :data:`ToolChoice`.
        parallel_tool_calls: allow several calls per turn (``None``: dialect default).
        strict: ask for strict-mode schemas where the dialect and profile support it.
        temperature: sampling temperature, or ``None`` for the endpoint's default.
        max_tokens: output cap (Anthropic always sends one).
        extra_body: extra top-level body fields, sent verbatim.
    """

    model: str
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    strict: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


def normalize_tool_choice(choice: ToolChoice) -> tuple[str, str | None]:
    """``("auto"|"none"|"required"|"named", tool name or None)``."""
    if isinstance(choice, dict):
        name = choice.get("name")
        if not name:
            raise ValueError(f"a named tool_choice needs a 'name': {choice!r}")
        return "named", name
    if choice in ("auto", "none", "required"):
        return choice, None
    raise ValueError(
        f"tool_choice must be 'auto', 'none', 'required' or {{'name': TOOL}}, not {choice!r}"
    )


def call_sdk(method: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """Call an SDK ``create`` through ``with_raw_response`` and return the JSON body.

    Keys the SDK method does not declare go into ``extra_body`` (profile extras,
    newer fields), so any SDK version sends the same bytes.
    """
    known = set(inspect.signature(method).parameters)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    raw = method(**kwargs)
    content: bytes = raw.http_response.content
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ModelResponseError(f"the endpoint's answer is not JSON: {content[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ModelResponseError(f"the endpoint's answer is not a JSON object: {data!r:.200}")
    return data


class Provider(ABC):
    """One dialect bound to one SDK client.

    Subclasses implement the pure parts (:meth:`build_body`, :meth:`parse`,
    :meth:`tool_results`, :meth:`user_message`) and :meth:`_send`; the base
    class adds retries.
    """

    #: Dialect name as accepted by ``Agent(provider=...)``.
    name: str = ""

    def __init__(self, client: Any, *, retry: RetryPolicy | None = None) -> None:
        self.client = client
        self.retry = retry or RetryPolicy()

    def complete(self, messages: list[Message], request: Request) -> ModelTurn:
        """Send one request (retrying transient failures) and parse the answer."""
        body = self.build_body(messages, request)
        data = call_with_retry(lambda: self._send(body), self.retry, self.name)
        try:
            return self.parse(data)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelResponseError(
                f"{self.name}: unexpected response shape ({type(exc).__name__}: {exc}): "
                f"{json.dumps(data)[:300]}",
                provider=self.name,
            ) from exc

    def user_message(self, text: str) -> list[Message]:
        """Wire items for a plain user message."""
        return [{"role": "user", "content": text}]

    @abstractmethod
    def build_body(self, messages: list[Message], request: Request) -> dict[str, Any]:
        """The request body for ``messages`` (the conversation so far) and ``request``."""

    @abstractmethod
    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """A neutral :class:`ModelTurn` from a response body."""

    @abstractmethod
    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """Wire items carrying ``outcomes`` (one per call of ``turn``, in call order),
        then ``followup`` user text if given."""

    @abstractmethod
    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request through the SDK; returns the response JSON."""
