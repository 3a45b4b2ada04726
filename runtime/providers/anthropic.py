"""Anthropic Messages.

Wire shapes: tools carry ``input_schema``; the assistant's content blocks
(``text``, ``tool_use``, ``thinking`` ...) go back unchanged; every
``tool_use`` gets a ``tool_result`` (``is_error: true`` on failures), all of
them in ONE user message, placed before any text of that message;
``max_tokens`` is always sent. The last tool carries a ``cache_control``
breakpoint so the stable tool definitions and system text are cached. Tools
with examples carry ``input_examples`` (with the beta header that enables them).
A streamed answer is reassembled from its events into the same message.
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

from .base import (
    CreateEndpointProvider,
    Message,
    ModelTurn,
    Request,
    StreamAssembler,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    Usage,
    normalize_tool_choice,
)
from .errors import ModelResponseError
from .retry import RetryPolicy
from .schema import StrictSchemaUnsupported, strict_schema

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

log = logging.getLogger("toolscript.agent")

_CHOICE_TYPES = {"auto": "auto", "none": "none", "required": "any", "named": "tool"}

#: The beta that enables ``input_examples`` on tools (sent only when a tool has examples).
INPUT_EXAMPLES_BETA = "advanced-tool-use-2025-11-20"

#: ``max_tokens`` sent when the caller gives none (the endpoint requires one).
DEFAULT_MAX_TOKENS = 4096


class AnthropicProvider(CreateEndpointProvider):
    """The Messages API over an ``anthropic.Anthropic`` client."""

    name = "anthropic"

    def __init__(
        self,
        client: Any,
        *,
        retry: RetryPolicy | None = None,
        prompt_cache: bool = True,
        async_client: Any = None,
    ) -> None:
        super().__init__(client, retry=retry, async_client=async_client)
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

    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """The ``tool_use`` blocks of an assistant message."""
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            return []
        return [
            ToolCall(id=str(b.get("id", "")), name=str(b.get("name", "")),
                     arguments=dict(b.get("input") or {}))
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]

    # ----------------------------------------------------------- transport
    def _make_async_client(self) -> Any:
        from .clients import anthropic_async_client

        return anthropic_async_client(self.client)

    def _endpoint(self, client: Any) -> Any:
        return client.messages

    def _assembler(self) -> StreamAssembler:
        return AnthropicStreamAssembler()


class AnthropicStreamAssembler(StreamAssembler):
    """Messages stream events -> the message: blocks from ``content_block_start``,
    their deltas appended (``input_json_delta`` parsed at the block's end), usage
    and stop reason from ``message_delta``."""

    _DELTA_FIELDS: ClassVar[dict[str, str]] = {"text_delta": "text", "thinking_delta": "thinking",
                     "signature_delta": "signature", "citations_delta": "citations"}

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}

    def add(self, event: dict[str, Any]) -> str:
        """Take one event; return its text delta."""
        kind = event.get("type")
        if kind == "message_start":
            self.message = dict(event["message"])
        elif kind == "content_block_start":
            self.blocks[int(event["index"])] = dict(event["content_block"])
        elif kind == "content_block_delta":
            return self._delta(int(event["index"]), event["delta"])
        elif kind == "content_block_stop":
            index = int(event["index"])
            parts = self.json_parts.pop(index, None)
            if parts is not None:
                self.blocks[index]["input"] = json.loads("".join(parts) or "{}")
        elif kind == "message_delta" and self.message is not None:
            self.message.update(event.get("delta") or {})
            usage = dict(self.message.get("usage") or {})
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
            self.message["usage"] = usage
        return ""

    def _delta(self, index: int, delta: dict[str, Any]) -> str:
        block = self.blocks[index]
        kind = delta.get("type")
        if kind == "input_json_delta":
            self.json_parts.setdefault(index, []).append(str(delta.get("partial_json") or ""))
            return ""
        field = self._DELTA_FIELDS.get(str(kind))
        if field == "citations":
            block.setdefault("citations", []).append(delta.get("citation"))
        elif field is not None:
            block[field] = str(block.get(field) or "") + str(delta.get(field) or "")
        return str(delta.get("text") or "") if kind == "text_delta" else ""

    def body(self) -> dict[str, Any]:
        """The assembled message."""
        if self.message is None:
            raise ModelResponseError("the endpoint's stream ended before message_start")
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}
