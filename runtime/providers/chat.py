"""OpenAI Chat Completions, the dialect of OpenAI and every compatible endpoint.

Wire shapes: tools as ``{"type": "function", "function": {...}}``; the
assistant message with its ``tool_calls`` (arguments as a JSON *string*) stays
in history, followed by one ``{"role": "tool", "tool_call_id", "content"}``
message per call, in call order. Endpoint quirks come from a
:class:`~.profiles.Profile`. Streamed answers (``stream: true`` with usage in
the last chunk) are reassembled into the same message.
"""

from __future__ import annotations

import logging
from typing import Any

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
from .profiles import Profile
from .retry import RetryPolicy
from .schema import StrictSchemaUnsupported, inline_defs, strict_schema

__all__ = ["ChatCompletionsProvider"]

log = logging.getLogger("toolscript.agent")


class ChatCompletionsProvider(CreateEndpointProvider):
    """Chat Completions over an ``openai.OpenAI`` client, with a profile's quirks."""

    def __init__(
        self,
        client: Any,
        *,
        profile: Profile,
        retry: RetryPolicy | None = None,
        base_url: str | None = None,
        async_client: Any = None,
    ) -> None:
        super().__init__(client, retry=retry, async_client=async_client)
        self.profile = profile
        self.name = profile.name
        self.base_url = base_url if base_url is not None else str(getattr(client, "base_url", ""))
        self._real_names: dict[str, str] = {}

    # ------------------------------------------------------------- request
    def build_body(self, messages: list[Message], request: Request) -> dict[str, Any]:
        """The ``/chat/completions`` body: system message first, then the history."""
        profile = self.profile
        system = [{"role": "system", "content": request.system}] if request.system else []
        body: dict[str, Any] = {"model": request.model, "messages": system + messages}
        kind, named = normalize_tool_choice(request.tool_choice)
        if kind not in profile.tool_choices:
            if kind == "none":
                kind = "omit-tools"
            else:
                log.info("%s does not accept tool_choice=%r; sending 'auto'", self.name, kind)
                kind, named = "auto", None
        if request.tools and kind != "omit-tools":
            body["tools"] = [self._tool(spec, request.strict) for spec in request.tools]
            body["tool_choice"] = (
                {"type": "function", "function": {"name": profile.wire_name(named)}}
                if kind == "named" and named
                else kind
            )
            if request.parallel_tool_calls is not None and profile.supports_parallel_switch:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        temperature = profile.clamp_temperature(request.temperature)
        if temperature is not None:
            body["temperature"] = temperature
        if request.max_tokens is not None:
            body[profile.max_tokens_field] = request.max_tokens
        body.update(request.extra_body)
        return body

    def _tool(self, spec: ToolSpec, strict: bool) -> dict[str, Any]:
        profile = self.profile
        parameters = spec.parameters
        if profile.inline_schema_defs:
            try:
                parameters = inline_defs(parameters)
            except ValueError as exc:
                log.warning("%s: tool %s keeps $defs: %s", self.name, spec.name, exc)
        wire_name = profile.wire_name(spec.name)
        previous = self._real_names.setdefault(wire_name, spec.name)
        if previous != spec.name:
            raise ValueError(f"tools {previous!r} and {spec.name!r} map to one wire name")
        function: dict[str, Any] = {
            "name": wire_name,
            "description": spec.description,
            "parameters": parameters,
        }
        if strict and profile.strict_allowed(self.base_url):
            try:
                function["parameters"] = strict_schema(parameters)
                function["strict"] = True
            except StrictSchemaUnsupported as exc:
                log.warning("%s: tool %s sent without strict: %s", self.name, spec.name, exc)
        elif strict:
            log.info("%s at %s does not support strict mode", self.name, self.base_url)
        return {"type": "function", "function": function}

    # ------------------------------------------------------------ response
    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """The first choice's message, its tool calls (names mapped back) and usage."""
        choice = data["choices"][0]
        message: dict[str, Any] = choice["message"]
        calls = [
            ToolCall(
                id=str(tc["id"]),
                name=self._real_names.get(tc["function"]["name"], tc["function"]["name"]),
                arguments=tc["function"].get("arguments") or "",
            )
            for tc in message.get("tool_calls") or []
        ]
        return ModelTurn(
            text=_text_of(message.get("content")),
            tool_calls=calls,
            usage=_usage(data.get("usage") or {}),
            stop_reason=choice.get("finish_reason"),
            history=[self._echo(message, has_calls=bool(calls))],
            raw=data,
        )

    def _echo(self, message: dict[str, Any], *, has_calls: bool) -> Message:
        """The assistant message as it goes back: unknown fields kept unchanged."""
        profile = self.profile
        echoed: Message = {}
        for key, value in message.items():
            if key in profile.drop_assistant_fields:
                continue
            if key in profile.drop_assistant_fields_if_null and value is None:
                continue
            if key == "tool_calls" and not value:
                continue
            if (
                key == profile.reasoning_field
                and profile.reasoning_on_tool_turns_only
                and not has_calls
            ):
                continue
            echoed[key] = value
        echoed.setdefault("role", "assistant")
        echoed.setdefault("content", None)
        return echoed

    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """One ``role: "tool"`` message per call, in call order; then the follow-up."""
        items: list[Message] = [
            {"role": "tool", "tool_call_id": o.call_id, "content": o.content} for o in outcomes
        ]
        if followup:
            items.extend(self.user_message(followup))
        return items

    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """The calls of an assistant message (names mapped back)."""
        if message.get("role") != "assistant":
            return []
        return [
            ToolCall(
                id=str(tc.get("id", "")),
                name=self._real_names.get(tc["function"]["name"], tc["function"]["name"]),
                arguments=tc["function"].get("arguments") or "",
            )
            for tc in message.get("tool_calls") or []
        ]

    # ----------------------------------------------------------- transport
    def _make_async_client(self) -> Any:
        from .clients import openai_async_client

        return openai_async_client(self.client)

    def _endpoint(self, client: Any) -> Any:
        return client.chat.completions

    def _assembler(self) -> StreamAssembler:
        return ChatStreamAssembler()

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        return _streaming(body)


def _streaming(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "stream": True, "stream_options": {"include_usage": True}}


class ChatStreamAssembler(StreamAssembler):
    """Chat Completions chunks -> one ``chat.completion`` body (first choice).

    String fields of the deltas (``content``, ``reasoning_content`` ...) are
    concatenated, tool calls are gathered by their ``index`` (arguments
    concatenated), other fields keep their last value.
    """

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.message: dict[str, Any] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def add(self, event: dict[str, Any]) -> str:
        """Take one chunk; return its content delta."""
        for key in ("id", "model", "created", "system_fingerprint"):
            if event.get(key) is not None:
                self.head[key] = event[key]
        if event.get("usage"):
            self.usage = event["usage"]
        text = ""
        for choice in event.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            for key, value in delta.items():
                if key == "tool_calls":
                    for call in value or []:
                        self._call(call)
                elif isinstance(value, str) and isinstance(self.message.get(key), str):
                    self.message[key] += value
                elif value is not None or key not in self.message:
                    self.message[key] = value
            content = delta.get("content")
            text += content if isinstance(content, str) else ""
        return text

    def _call(self, delta: dict[str, Any]) -> None:
        call = self.calls.setdefault(int(delta.get("index", len(self.calls))), {})
        for key, value in delta.items():
            if key == "index" or value is None:
                continue
            if key == "function":
                function = call.setdefault("function", {"name": "", "arguments": ""})
                for part, text in value.items():
                    if isinstance(text, str):
                        function[part] = function.get(part, "") + text
            else:
                call[key] = value

    def body(self) -> dict[str, Any]:
        """The assembled ``chat.completion``."""
        if not self.head and not self.message:
            raise ModelResponseError("the endpoint's stream ended without a chunk")
        message = {"role": "assistant", "content": None, **self.message}
        if self.calls:
            message["tool_calls"] = [
                {"type": "function", **self.calls[i]} for i in sorted(self.calls)
            ]
        return {
            **self.head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        }


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        )
    return str(content)


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=int(cached),
    )
