"""OpenAI Responses API.

Wire shapes: flat function tools ``{"type": "function", "name", "description",
"parameters", "strict"}`` (``strict`` is always sent: the endpoint defaults it
to true); the model's output items (``message``, ``function_call``,
``reasoning`` ...) are appended to ``input`` as received; each call is answered
by a ``{"type": "function_call_output", "call_id", "output"}`` item. The system
text travels in ``instructions``. Requests are stateless (the whole input is
sent each turn; ``previous_response_id`` is not used), so any store setting works.
A streamed answer's text comes from ``response.output_text.delta`` events, the
turn from the final ``response.completed`` event.
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
from .schema import StrictSchemaUnsupported, strict_schema

__all__ = ["ResponsesProvider"]

log = logging.getLogger("toolscript.agent")


class ResponsesProvider(CreateEndpointProvider):
    """The Responses API over an ``openai.OpenAI`` client."""

    name = "openai-responses"

    def build_body(self, messages: list[Message], request: Request) -> dict[str, Any]:
        """The ``/responses`` body: ``instructions``, ``input``, flat tools."""
        body: dict[str, Any] = {"model": request.model, "input": list(messages)}
        if request.system:
            body["instructions"] = request.system
        kind, named = normalize_tool_choice(request.tool_choice)
        if request.tools:
            body["tools"] = [self._tool(spec, request.strict) for spec in request.tools]
            body["tool_choice"] = (
                {"type": "function", "name": named} if kind == "named" and named else kind
            )
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        body.update(request.extra_body)
        return body

    def _tool(self, spec: ToolSpec, strict: bool) -> dict[str, Any]:
        tool: dict[str, Any] = {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
            "strict": False,
        }
        if strict:
            try:
                tool["parameters"] = strict_schema(spec.parameters)
                tool["strict"] = True
            except StrictSchemaUnsupported as exc:
                log.warning("responses: tool %s sent without strict: %s", spec.name, exc)
        return tool

    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """Text from ``message`` items, calls from ``function_call`` items."""
        output: list[dict[str, Any]] = list(data.get("output") or [])
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in output:
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content") or []:
                    if part.get("type") == "output_text":
                        texts.append(str(part.get("text", "")))
            elif kind == "function_call":
                calls.append(
                    ToolCall(
                        id=str(item["call_id"]),
                        name=str(item["name"]),
                        arguments=item.get("arguments") or "",
                    )
                )
        usage = data.get("usage") or {}
        details = usage.get("input_tokens_details") or {}
        return ModelTurn(
            text="".join(texts),
            tool_calls=calls,
            usage=Usage(
                input_tokens=int(usage.get("input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                cache_read_tokens=int(details.get("cached_tokens") or 0),
            ),
            stop_reason=data.get("status"),
            history=output,
            raw=data,
        )

    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """One ``function_call_output`` item per call, by ``call_id``, in call order."""
        items: list[Message] = [
            {"type": "function_call_output", "call_id": o.call_id, "output": o.content}
            for o in outcomes
        ]
        if followup:
            items.extend(self.user_message(followup))
        return items

    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """A ``function_call`` item as a call."""
        if message.get("type") != "function_call":
            return []
        return [ToolCall(str(message.get("call_id", "")), str(message.get("name", "")),
                         message.get("arguments") or "")]

    # ----------------------------------------------------------- transport
    def _make_async_client(self) -> Any:
        from .clients import openai_async_client

        return openai_async_client(self.client)

    def _endpoint(self, client: Any) -> Any:
        return client.responses

    def _assembler(self) -> StreamAssembler:
        return ResponsesStreamAssembler()


_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


class ResponsesStreamAssembler(StreamAssembler):
    """Responses stream events -> the final response object."""

    def __init__(self) -> None:
        self.response: dict[str, Any] | None = None

    def add(self, event: dict[str, Any]) -> str:
        """Take one event; return its ``output_text`` delta."""
        kind = event.get("type")
        if kind in _FINAL_EVENTS:
            self.response = event["response"]
        if kind == "response.output_text.delta":
            return str(event.get("delta") or "")
        return ""

    def body(self) -> dict[str, Any]:
        """The response of the final event."""
        if self.response is None:
            raise ModelResponseError("the endpoint's stream ended before response.completed")
        return self.response
