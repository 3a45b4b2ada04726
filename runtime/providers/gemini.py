"""The Gemini API's own dialect (``generateContent``), through the ``google-genai`` SDK.

Wire shapes: the functions are ``functionDeclarations`` of one tool, each with
its JSON Schema as ``parametersJsonSchema``; ``toolConfig.functionCallingConfig``
carries the choice (``AUTO``, ``ANY``, ``NONE``; a named tool is ``ANY`` with
``allowedFunctionNames``); the system text is ``systemInstruction``. The
model's turn (``role: "model"``, its ``parts`` with ``functionCall`` s and any
``thoughtSignature``) goes back as received, and every ``functionResponse``
of a turn travels in ONE ``role: "user"`` content, in call order, with the
call's ``id`` (when the model gave one) and ``name``; a failed call answers
``{"error": text}``, a successful one ``{"output": text}``. A follow-up text
is a last part of that same content. Usage comes from ``usageMetadata``
(thinking tokens count as output, cached tokens as cache reads).

The conversation is kept as REST JSON (camelCase); each request validates it
into the SDK's ``types.Content`` in JSON mode, so bytes fields such as
``thoughtSignature`` round-trip exactly. The raw response body is read with
``should_return_http_response`` (streams: each chunk's typed response, dumped
back to JSON).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from .base import (
    Message,
    ModelTurn,
    Request,
    SDKProvider,
    StreamAssembler,
    ToolCall,
    ToolOutcome,
    Usage,
    normalize_tool_choice,
    raw_json,
)
from .errors import ModelRequestError, ModelResponseError
from .retry import RetryPolicy

__all__ = ["GeminiProvider", "GeminiStreamAssembler"]

log = logging.getLogger("toolscript.agent")

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "named": "ANY"}

#: Body keys that become ``GenerateContentConfig`` fields (everything else in a
#: body, ``extra_body`` included, is sent as extra top-level request fields).
_CONFIG_KEYS = ("systemInstruction", "tools", "toolConfig", "generationConfig")


class GeminiProvider(SDKProvider):
    """``generateContent`` over a ``google.genai.Client``.

    Args:
        client: a ``genai.Client`` (its ``aio`` side serves async runs).
        retry: endpoint retry policy.
        timeout_s: per-request timeout.
    """

    name = "gemini"

    def __init__(
        self, client: Any, *, retry: RetryPolicy | None = None, timeout_s: float | None = None
    ) -> None:
        super().__init__(client, retry=retry, async_client=getattr(client, "aio", None))
        self.timeout_s = timeout_s

    # ------------------------------------------------------------- request
    def user_message(self, text: str) -> list[Message]:
        """A ``role: "user"`` content with one text part."""
        return [{"role": "user", "parts": [{"text": text}]}]

    def build_body(self, messages: list[Message], request: Request) -> dict[str, Any]:
        """The REST body of ``models/{model}:generateContent``."""
        body: dict[str, Any] = {"model": request.model, "contents": list(messages)}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        kind, named = normalize_tool_choice(request.tool_choice)
        if request.tools:
            body["tools"] = [{"functionDeclarations": [
                {"name": s.name, "description": s.description, "parametersJsonSchema": s.parameters}
                for s in request.tools
            ]}]
            calling: dict[str, Any] = {"mode": _MODES[kind]}
            if kind == "named" and named:
                calling["allowedFunctionNames"] = [named]
            body["toolConfig"] = {"functionCallingConfig": calling}
        if request.strict:
            log.info("gemini: strict mode has no counterpart in generateContent; not sent")
        generation: dict[str, Any] = {}
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        if request.max_tokens is not None:
            generation["maxOutputTokens"] = request.max_tokens
        if generation:
            body["generationConfig"] = generation
        body.update(request.extra_body)
        return body

    # ------------------------------------------------------------ response
    def parse(self, data: dict[str, Any]) -> ModelTurn:
        """The first candidate: text parts (thoughts aside), ``functionCall`` parts."""
        candidates = data.get("candidates") or []
        if not candidates:
            feedback = data.get("promptFeedback") or {}
            reason = feedback.get("blockReason")
            if reason:
                return ModelTurn(text="", usage=_usage(data), stop_reason=str(reason), raw=data)
            raise ModelResponseError(
                f"gemini answered without a candidate: {json.dumps(data)[:300]}",
                provider=self.name,
            )
        candidate = candidates[0]
        content: dict[str, Any] = dict(candidate.get("content") or {})
        parts: list[dict[str, Any]] = list(content.get("parts") or [])
        content.setdefault("role", "model")
        return ModelTurn(
            text="".join(str(p["text"]) for p in parts if "text" in p and not p.get("thought")),
            tool_calls=_calls(parts),
            usage=_usage(data),
            stop_reason=candidate.get("finishReason"),
            history=[content] if parts else [],
            raw=data,
        )

    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """ONE user content: a ``functionResponse`` per call in call order, then the text."""
        by_id = {call.id: call for call in turn.tool_calls}
        with_ids = _ids_given(turn.history)
        parts: list[dict[str, Any]] = []
        for outcome in outcomes:
            call = by_id.get(outcome.call_id)
            response: dict[str, Any] = {
                "name": call.name if call is not None else "",
                "response": {"error" if outcome.is_error else "output": outcome.content},
            }
            if outcome.call_id in with_ids:
                response = {"id": outcome.call_id, **response}
            parts.append({"functionResponse": response})
        if followup:
            parts.append({"text": followup})
        return [{"role": "user", "parts": parts}] if parts else []

    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """The ``functionCall`` parts of a model content."""
        if message.get("role") != "model":
            return []
        return _calls(list(message.get("parts") or []))

    # ----------------------------------------------------------- transport
    def _call_options(self, body: dict[str, Any], *, raw: bool) -> dict[str, Any]:
        """``generate_content`` keyword arguments for a REST ``body``."""
        from google.genai import types

        config: dict[str, Any] = {
            key: body[key] for key in _CONFIG_KEYS if key in body and key != "generationConfig"
        }
        config.update(body.get("generationConfig") or {})
        extra = {k: v for k, v in body.items()
                 if k not in _CONFIG_KEYS and k not in ("model", "contents")}
        http: dict[str, Any] = {}
        if self.timeout_s is not None:
            http["timeout"] = int(self.timeout_s * 1000)
        if extra:
            http["extraBody"] = extra
        if http:
            config["httpOptions"] = http
        try:
            parsed = types.GenerateContentConfig.model_validate_json(json.dumps(config))
            contents = [types.Content.model_validate_json(json.dumps(c))
                        for c in body["contents"]]
        except ValueError as exc:  # pydantic's ValidationError: not the Gemini format
            raise ModelRequestError(
                f"gemini: the request does not fit the SDK's types (a conversation from "
                f"another provider?): {exc}", provider=self.name,
            ) from exc
        parsed.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
        if raw:
            parsed.should_return_http_response = True
        return {"model": body["model"], "contents": contents, "config": parsed}

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.models.generate_content(**self._call_options(body, raw=True))
        return _raw_body(response)

    async def _send_async(self, body: dict[str, Any]) -> dict[str, Any]:
        models = self.async_client.models
        response = await models.generate_content(**self._call_options(body, raw=True))
        return _raw_body(response)

    def _assembler(self) -> StreamAssembler:
        return GeminiStreamAssembler()

    def _open_stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        chunks = self.client.models.generate_content_stream(**self._call_options(body, raw=False))
        return (_chunk_json(chunk) for chunk in chunks)

    async def _open_stream_async(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        models = self.async_client.models
        chunks = await models.generate_content_stream(**self._call_options(body, raw=False))
        async for chunk in chunks:
            yield _chunk_json(chunk)


def _calls(parts: list[dict[str, Any]]) -> list[ToolCall]:
    calls = []
    for index, part in enumerate(parts):
        call = part.get("functionCall")
        if isinstance(call, dict):
            calls.append(ToolCall(
                id=str(call.get("id") or f"gemini-call-{index}"),
                name=str(call["name"]),
                arguments=dict(call.get("args") or {}),
            ))
    return calls


def _ids_given(history: list[Message]) -> set[str]:
    """The call ids the model itself sent (synthesised ones are not sent back)."""
    return {
        str(p["functionCall"]["id"])
        for message in history
        for p in message.get("parts") or []
        if isinstance(p.get("functionCall"), dict) and p["functionCall"].get("id")
    }


def _usage(data: dict[str, Any]) -> Usage:
    meta = data.get("usageMetadata") or {}
    return Usage(
        input_tokens=int(meta.get("promptTokenCount") or 0)
        + int(meta.get("toolUsePromptTokenCount") or 0),
        output_tokens=int(meta.get("candidatesTokenCount") or 0)
        + int(meta.get("thoughtsTokenCount") or 0),
        cache_read_tokens=int(meta.get("cachedContentTokenCount") or 0),
    )


def _raw_body(response: Any) -> dict[str, Any]:
    http = getattr(response, "sdk_http_response", None)
    body = getattr(http, "body", None)
    if body is None:
        raise ModelResponseError("gemini: the SDK returned no response body", provider="gemini")
    return raw_json(body)


def _chunk_json(chunk: Any) -> dict[str, Any]:
    data: dict[str, Any] = chunk.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("sdkHttpResponse", None)
    return data


class GeminiStreamAssembler(StreamAssembler):
    """``streamGenerateContent`` chunks -> one response: the first candidate's parts
    in order (a plain text part continues the text part before it), the last
    ``finishReason`` and ``usageMetadata``."""

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.parts: list[dict[str, Any]] = []
        self.role = "model"
        self.finish_reason: str | None = None

    def add(self, event: dict[str, Any]) -> str:
        """Take one chunk; return its (non-thought) text."""
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in event:
                self.head[key] = event[key]
        text = ""
        for candidate in event.get("candidates") or []:
            if candidate.get("index", 0) != 0:
                continue
            if candidate.get("finishReason"):
                self.finish_reason = candidate["finishReason"]
            content = candidate.get("content") or {}
            self.role = content.get("role", self.role)
            for part in content.get("parts") or []:
                self._part(part)
                if "text" in part and not part.get("thought"):
                    text += str(part["text"])
        return text

    def _part(self, part: dict[str, Any]) -> None:
        last = self.parts[-1] if self.parts else None
        if (
            last is not None and set(part) == {"text"} and "text" in last
            and not last.get("thought") and "functionCall" not in last
        ):
            last["text"] = str(last["text"]) + str(part["text"])
        else:
            self.parts.append(dict(part))

    def body(self) -> dict[str, Any]:
        """The assembled ``GenerateContentResponse`` body."""
        if not self.parts and not self.head:
            raise ModelResponseError("the endpoint's stream ended without a chunk")
        candidate: dict[str, Any] = {"content": {"role": self.role, "parts": self.parts},
                                     "index": 0}
        if self.finish_reason:
            candidate["finishReason"] = self.finish_reason
        return {**self.head, "candidates": [candidate]}
