"""Anthropic Messages.

Wire shapes: tools carry ``input_schema``; the assistant's content blocks
(``text``, ``tool_use``, ``thinking`` ...) go back unchanged; every
``tool_use`` gets a ``tool_result`` (``is_error: true`` on failures), all of
them in ONE user message, placed before any text of that message;
``max_tokens`` is always sent. The last tool carries a ``cache_control``
breakpoint so the stable tool definitions and system text are cached. Tools
with examples carry ``input_examples`` (with the beta header that enables them).
"""

from __future__ import annotations

import logging
from typing import Any

from .base import (
    Message,
    ModelTurn,
    Provider,
    Request,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    Usage,
    call_sdk,
    normalize_tool_choice,
)
from .retry import RetryPolicy
from .schema import StrictSchemaUnsupported, strict_schema

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

log = logging.getLogger("toolscript.agent")

_CHOICE_TYPES = {"auto": "auto", "none": "none", "required": "any", "named": "tool"}

#: The beta that enables ``input_examples`` on tools (sent only when a tool has examples).
INPUT_EXAMPLES_BETA = "advanced-tool-use-2025-11-20"

#: ``max_tokens`` sent when the caller gives none (the endpoint requires one).
DEFAULT_MAX_TOKENS = 4096


class AnthropicProvider(Provider):
    """The Messages API over an ``anthropic.Anthropic`` client."""

    name = "anthropic"

    def __init__(
        self, client: Any, *, retry: RetryPolicy | None = None, prompt_cache: bool = True
    ) -> None:
        super().__init__(client, retry=retry)
        self.prompt_cache = prompt_cache

    def build_body(self, messages: list[Message], request: Request) -> dict[str, Any]:
        """The ``/v1/messages`` body: ``system``, ``messages``, ``tools``, ``max_tokens``."""
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": list(messages),
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            tools = [self._tool(spec, request.strict) for spec in request.tools]
            if self.prompt_cache:
                tools[-1]["cache_control"] = {"type": "ephemeral"}
            body["tools"] = tools
            if any("input_examples" in t for t in tools):
                body["extra_headers"] = {"anthropic-beta": INPUT_EXAMPLES_BETA}
            kind, named = normalize_tool_choice(request.tool_choice)
            choice: dict[str, Any] = {"type": _CHOICE_TYPES[kind]}
            if kind == "named":
                choice["name"] = named
            if request.parallel_tool_calls is False and kind != "none":
                choice["disable_parallel_tool_use"] = True
            body["tool_choice"] = choice
        if request.temperature is not None:
            body["temperature"] = request.temperature
        body.update(request.extra_body)
        return body

    def _tool(self, spec: ToolSpec, strict: bool) -> dict[str, Any]:
        tool: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.parameters,
        }
        if spec.examples:
            tool["input_examples"] = [dict(e) for e in spec.examples]
        if strict:
            try:
                tool["input_schema"] = strict_schema(spec.parameters)
                tool["strict"] = True
            except StrictSchemaUnsupported as exc:
                log.warning("anthropic: tool %s sent without strict: %s", spec.name, exc)
        return tool

    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """Text blocks joined, ``tool_use`` blocks as calls, the content echoed as received."""
        content: list[dict[str, Any]] = list(data["content"])
        texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
        calls = [
            ToolCall(id=str(b["id"]), name=str(b["name"]), arguments=dict(b.get("input") or {}))
            for b in content
            if b.get("type") == "tool_use"
        ]
        usage = data.get("usage") or {}
        cache_read = int(usage.get("cache_read_input_tokens") or 0)
        cache_write = int(usage.get("cache_creation_input_tokens") or 0)
        history: list[Message] = []
        if content:
            history.append({"role": "assistant", "content": content})
        return ModelTurn(
            text="".join(texts),
            tool_calls=calls,
            usage=Usage(
                input_tokens=int(usage.get("input_tokens") or 0) + cache_read + cache_write,
                output_tokens=int(usage.get("output_tokens") or 0),
                cache_read_tokens=cache_read,
                cache_write_tokens=cache_write,
            ),
            stop_reason=data.get("stop_reason"),
            history=history,
            raw=data,
        )

    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """ONE user message: every ``tool_result`` in call order, then the follow-up text."""
        blocks: list[dict[str, Any]] = []
        for o in outcomes:
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": o.call_id,
                "content": o.content,
            }
            if o.is_error:
                block["is_error"] = True
            blocks.append(block)
        if followup:
            blocks.append({"type": "text", "text": followup})
        return [{"role": "user", "content": blocks}] if blocks else []

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        return call_sdk(self.client.messages.with_raw_response.create, body)
