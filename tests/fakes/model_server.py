"""A fake model endpoint for tests: a real HTTP server on 127.0.0.1.

It speaks four wire formats, chosen by the request path:

* ``POST .../chat/completions`` — OpenAI Chat Completions (and every
  OpenAI-compatible profile),
* ``POST .../responses`` — OpenAI Responses,
* ``POST .../messages`` — Anthropic Messages,
* ``POST .../models/MODEL:generateContent`` — the Gemini API
  (``:streamGenerateContent?alt=sse`` streams),
* ``POST .../embeddings`` — OpenAI embeddings: not scripted; each input's vector
  is a deterministic hashed bag of its words (:func:`fake_embedding`), so texts
  sharing words are close.

A test scripts the model's side as a list of :class:`Turn` objects (or
callables that receive the request body and return a ``Turn``); the server
replays them in order, rendering each in the dialect of the request — as a
server-sent-event stream when the request asks for one (``"stream": true``,
or Gemini's streaming path), the text cut into several deltas. Every
request is recorded (path, headers, parsed JSON body), error responses
(429/500/400/401 ...) and slow responses can be injected ahead of the scripted
turns. The real ``openai``, ``anthropic`` and ``google-genai`` SDK clients
point at it with ``base_url``; nothing is mocked.

Example::

    with FakeModelServer() as server:
        server.script(Turn(tool_calls=[Call("run_script", {"code": "1 + 1"})]),
                      Turn(text="2"))
        client = openai.OpenAI(api_key="test", base_url=server.openai_base_url)
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Call",
    "Failure",
    "FakeModelServer",
    "RecordedRequest",
    "Turn",
    "call",
    "say",
    "script",
]


@dataclass
class Call:
    """One tool call the fake model makes.

    ``arguments`` is a dict (serialised for the OpenAI dialects, sent as an
    object for Anthropic and Gemini) or a raw string (sent verbatim — e.g.
    invalid JSON). Gemini: an ``id`` starting with ``noid`` renders a
    ``functionCall`` without an id, as the Gemini API may send it.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Turn:
    """One scripted assistant turn.

    Args:
        text: assistant text (``None`` for none).
        tool_calls: the tool calls of the turn.
        usage: ``(input_tokens, output_tokens)``; default: estimated from the
            request size (about 4 bytes per token).
        extra: extra fields merged into the assistant message (Chat
            Completions: e.g. ``{"reasoning_content": "..."}``), into the
            response object (Responses), or into the message (Anthropic).
        extra_items: Responses only — output items placed before the others
            (e.g. a ``reasoning`` item); Anthropic — content blocks placed first
            (e.g. a ``thinking`` block).
        raw: a complete response body sent verbatim instead of a rendering.
        deltas: how a streamed answer cuts ``text`` (default: into words).
    """

    text: str | None = None
    tool_calls: list[Call] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    extra_items: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] | None = None
    deltas: list[str] | None = None

    def text_deltas(self) -> list[str]:
        """The pieces a stream sends ``text`` in."""
        if self.deltas is not None:
            return list(self.deltas)
        return re.findall(r"\S+\s*|\s+", self.text or "")


def say(text: str, **kwargs: Any) -> Turn:
    """A turn that answers with text only."""
    return Turn(text=text, **kwargs)


def call(name: str, arguments: dict[str, Any] | str | None = None, **kwargs: Any) -> Turn:
    """A turn with one tool call."""
    return Turn(tool_calls=[Call(name, {} if arguments is None else arguments)], **kwargs)


def script(code: str, **kwargs: Any) -> Turn:
    """A programmatic-mode turn: one ``run_script`` call with ``code``."""
    return Turn(tool_calls=[Call("run_script", {"code": code})], **kwargs)


@dataclass
class Failure:
    """An injected response: an HTTP error status and/or a delay."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    delay_s: float = 0.0
    message: str = "injected failure"


@dataclass
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int = 0

    @property
    def dialect(self) -> str:
        """``"chat"``, ``"responses"``, ``"anthropic"`` or ``"gemini"``."""
        return _dialect_of(self.path)

    @property
    def streamed(self) -> bool:
        """Whether the request asked for a stream."""
        return _streamed(self.path, self.body)


TurnSource = Turn | Callable[[dict[str, Any]], Turn]


def _dialect_of(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
        return "gemini"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/embeddings"):
        return "embeddings"
    return "unknown"


EMBEDDING_DIMENSIONS = 256


def fake_embedding(text: str) -> list[float]:
    """A deterministic vector for ``text``: each lower-cased word adds 1 at a
    position chosen by its SHA-256 (the same in every process)."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % EMBEDDING_DIMENSIONS] += 1.0
    return vector


def _embeddings_reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    inputs = body.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs or not all(
            isinstance(i, str) for i in inputs):
        return 400, _error_body("embeddings", 400, "input must be a string or strings")
    tokens = sum(len(i.split()) for i in inputs)
    return 200, {"object": "list", "model": body.get("model", ""),
                 "data": [{"object": "embedding", "index": n, "embedding": fake_embedding(i)}
                          for n, i in enumerate(inputs)],
                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _streamed(path: str, body: dict[str, Any]) -> bool:
    return ":streamGenerateContent" in path or body.get("stream") is True


class FakeModelServer:
    """A scripted model endpoint served over real HTTP on 127.0.0.1 (random port)."""

    def __init__(self) -> None:
        self._turns: deque[TurnSource] = deque()
        self._failures: deque[Failure] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------- lifecycle
    def start(self) -> FakeModelServer:
        """Serve in a daemon thread; returns ``self``."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ addresses
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's ``base_url``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI SDK's ``base_url``)."""
        return self.base_url + "/v1"

    def gemini_client(self, **http_options: Any) -> Any:
        """A real ``google.genai.Client`` pointed at this server."""
        from google import genai
        from google.genai import types

        return genai.Client(
            api_key="test-key",
            http_options=types.HttpOptions(base_url=self.base_url, **http_options),
        )

    # ------------------------------------------------------------ scripting
    def script(self, *turns: TurnSource) -> None:
        """Append scripted turns, replayed one per successful request."""
        with self._lock:
            self._turns.extend(turns)

    def fail(
        self,
        status: int = 500,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
        delay_s: float = 0.0,
        message: str = "injected failure",
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (after ``delay_s``)."""
        with self._lock:
            for _ in range(times):
                self._failures.append(
                    Failure(status, dict(headers or {}), body, delay_s, message)
                )

    def delay(self, seconds: float, *, times: int = 1) -> None:
        """Delay the next ``times`` responses by ``seconds`` (then serve normally)."""
        self.fail(0, times=times, delay_s=seconds)

    @property
    def remaining_turns(self) -> int:
        """Scripted turns not served yet."""
        with self._lock:
            return len(self._turns)

    def bodies(self, dialect: str | None = None) -> list[dict[str, Any]]:
        """The JSON bodies of the recorded requests (optionally of one dialect)."""
        with self._lock:
            return [r.body for r in self.requests if dialect in (None, r.dialect)]

    # ------------------------------------------------------------- serving
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsable": raw.decode("utf-8", "replace")}
                status, headers, payload = server._respond(self.path, dict(self.headers), body)
                if isinstance(payload, list):  # a stream: server-sent events
                    data = "".join(payload).encode()
                    content_type = "text/event-stream"
                else:
                    data = json.dumps(payload).encode()
                    content_type = "application/json"
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        return Handler

    def _respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any] | list[str]]:
        dialect = _dialect_of(path)
        record = RecordedRequest("POST", path, {k.lower(): v for k, v in headers.items()}, body)
        with self._lock:
            self.requests.append(record)
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            if failure.delay_s:
                time.sleep(failure.delay_s)
            if failure.status:
                record.status = failure.status
                payload = failure.body or _error_body(dialect, failure.status, failure.message)
                return failure.status, failure.headers, payload
        if dialect == "unknown":
            record.status = 404
            return 404, {}, _error_body("chat", 404, f"fake server: no route for {path}")
        if dialect == "embeddings":
            record.status, reply = _embeddings_reply(body)
            return record.status, {}, reply
        with self._lock:
            source = self._turns.popleft() if self._turns else None
        if source is None:
            record.status = 400
            return 400, {}, _error_body(dialect, 400, "fake server: no scripted turn left")
        turn = source(body) if callable(source) else source
        record.status = 200
        rendered = self._render(dialect, body, turn)
        if _streamed(path, body):
            return 200, {}, self._stream(dialect, rendered, turn)
        return 200, {}, rendered

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids):04d}"

    def _render(self, dialect: str, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
        if turn.raw is not None:
            return turn.raw
        estimated_input = max(1, len(json.dumps(body)) // 4)
        usage_in, usage_out = turn.usage or (estimated_input, 10 + 5 * len(turn.tool_calls))
        for c in turn.tool_calls:
            if c.id is None:
                c.id = self._next_id("toolu_" if dialect == "anthropic" else "call_")
        model = str(body.get("model", "fake-model"))
        if dialect == "gemini":
            return self._render_gemini(turn, usage_in, usage_out)
        if dialect == "chat":
            return self._render_chat(model, turn, usage_in, usage_out)
        if dialect == "responses":
            return self._render_responses(model, turn, usage_in, usage_out)
        return self._render_anthropic(model, turn, usage_in, usage_out)

    def _render_chat(self, model: str, turn: Turn, usage_in: int, usage_out: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _args_text(c.arguments)},
                }
                for c in turn.tool_calls
            ]
        message.update(turn.extra)
        return {
            "id": self._next_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if turn.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        }

    def _render_responses(
        self, model: str, turn: Turn, usage_in: int, usage_out: int
    ) -> dict[str, Any]:
        output: list[dict[str, Any]] = list(turn.extra_items)
        if turn.text is not None:
            output.append(
                {
                    "type": "message",
                    "id": self._next_id("msg_"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
                }
            )
        for c in turn.tool_calls:
            output.append(
                {
                    "type": "function_call",
                    "id": self._next_id("fc_"),
                    "call_id": c.id,
                    "name": c.name,
                    "arguments": _args_text(c.arguments),
                    "status": "completed",
                }
            )
        response: dict[str, Any] = {
            "id": self._next_id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": usage_in,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": usage_out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage_in + usage_out,
            },
        }
        response.update(turn.extra)
        return response

    def _render_anthropic(
        self, model: str, turn: Turn, usage_in: int, usage_out: int
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = list(turn.extra_items)
        if turn.text is not None:
            content.append({"type": "text", "text": turn.text})
        for c in turn.tool_calls:
            arguments = c.arguments
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments})
        message: dict[str, Any] = {
            "id": self._next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
        }
        message.update(turn.extra)
        return message


    def _render_gemini(self, turn: Turn, usage_in: int, usage_out: int) -> dict[str, Any]:
        parts: list[dict[str, Any]] = list(turn.extra_items)
        if turn.text is not None:
            parts.append({"text": turn.text})
        for c in turn.tool_calls:
            arguments = c.arguments
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            call: dict[str, Any] = {"name": c.name, "args": arguments}
            if not str(c.id).startswith("noid"):
                call = {"id": c.id, **call}
            parts.append({"functionCall": call})
        response: dict[str, Any] = {
            "candidates": [{
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }],
            "usageMetadata": {
                "promptTokenCount": usage_in,
                "candidatesTokenCount": usage_out,
                "totalTokenCount": usage_in + usage_out,
            },
            "modelVersion": "fake-gemini",
            "responseId": self._next_id("resp-"),
        }
        response.update(turn.extra)
        return response

    # ------------------------------------------------------------- streams
    def _stream(self, dialect: str, rendered: dict[str, Any], turn: Turn) -> list[str]:
        """The events of ``rendered`` (the whole answer) as a stream in ``dialect``."""
        if dialect == "gemini":
            return self._stream_gemini(rendered, turn)
        if dialect == "chat":
            return self._stream_chat(rendered, turn)
        if dialect == "responses":
            return self._stream_responses(rendered, turn)
        return self._stream_anthropic(rendered, turn)

    def _stream_gemini(self, rendered: dict[str, Any], turn: Turn) -> list[str]:
        candidate = rendered["candidates"][0]
        parts = candidate["content"]["parts"]
        chunks: list[dict[str, Any]] = []
        for part in parts:
            if set(part) == {"text"} and turn.text_deltas():
                chunks.extend({"text": piece} for piece in turn.text_deltas())
            else:
                chunks.append(part)
        events = []
        for i, part in enumerate(chunks):
            last = i == len(chunks) - 1
            event: dict[str, Any] = {"candidates": [{
                "content": {"role": "model", "parts": [part]}, "index": 0,
                **({"finishReason": "STOP"} if last else {}),
            }], "modelVersion": rendered["modelVersion"], "responseId": rendered["responseId"]}
            if last:
                event["usageMetadata"] = rendered["usageMetadata"]
            events.append(_sse(event))
        return events

    def _stream_chat(self, rendered: dict[str, Any], turn: Turn) -> list[str]:
        message = rendered["choices"][0]["message"]
        head = {k: rendered[k] for k in ("id", "created", "model")}
        head["object"] = "chat.completion.chunk"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            return _sse({**head, "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish}
            ]})

        events = [chunk({"role": "assistant", "content": ""})]
        for key, value in message.items():
            if key not in ("role", "content", "tool_calls") and value is not None:
                events.append(chunk({key: value}))
        events.extend(chunk({"content": piece}) for piece in turn.text_deltas())
        for index, call in enumerate(message.get("tool_calls") or []):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            events.append(chunk({"tool_calls": [{
                "index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
            }]}))
            events.append(chunk({"tool_calls": [{
                "index": index, "function": {"arguments": arguments[half:]},
            }]}))
        events.append(chunk({}, rendered["choices"][0]["finish_reason"]))
        events.append(_sse({**head, "choices": [], "usage": rendered["usage"]}))
        events.append("data: [DONE]\n\n")
        return events

    def _stream_responses(self, rendered: dict[str, Any], turn: Turn) -> list[str]:
        events = [_sse({"type": "response.created", "sequence_number": 0,
                        "response": {**rendered, "status": "in_progress", "output": []}})]
        for index, item in enumerate(rendered["output"]):
            if item.get("type") == "message":
                for piece in turn.text_deltas():
                    events.append(_sse({
                        "type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": index, "content_index": 0, "delta": piece,
                        "sequence_number": len(events), "logprobs": [],
                    }))
            events.append(_sse({"type": "response.output_item.done", "output_index": index,
                                "item": item, "sequence_number": len(events)}))
        events.append(_sse({"type": "response.completed", "response": rendered,
                            "sequence_number": len(events)}))
        return events

    def _stream_anthropic(self, rendered: dict[str, Any], turn: Turn) -> list[str]:
        usage = rendered["usage"]
        start = {**rendered, "content": [], "stop_reason": None,
                 "usage": {**usage, "output_tokens": 1}}
        events = [_sse({"type": "message_start", "message": start}, "message_start")]
        for index, block in enumerate(rendered["content"]):
            kind = block["type"]
            if kind == "text":
                events.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": {"type": "text", "text": ""}},
                                   "content_block_start"))
                for piece in turn.text_deltas():
                    events.append(_sse({"type": "content_block_delta", "index": index,
                                        "delta": {"type": "text_delta", "text": piece}},
                                       "content_block_delta"))
            elif kind == "tool_use":
                events.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": {**block, "input": {}}},
                                   "content_block_start"))
                arguments = json.dumps(block["input"])
                half = len(arguments) // 2
                for piece in (arguments[:half], arguments[half:]):
                    events.append(_sse({"type": "content_block_delta", "index": index,
                                        "delta": {"type": "input_json_delta",
                                                  "partial_json": piece}},
                                       "content_block_delta"))
            else:
                events.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": block}, "content_block_start"))
            events.append(_sse({"type": "content_block_stop", "index": index},
                               "content_block_stop"))
        events.append(_sse({"type": "message_delta",
                            "delta": {"stop_reason": rendered["stop_reason"],
                                      "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]}},
                           "message_delta"))
        events.append(_sse({"type": "message_stop"}, "message_stop"))
        return events


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def _args_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}


def _error_body(dialect: str, status: int, message: str) -> dict[str, Any]:
    if dialect == "gemini":
        kind = _GOOGLE_STATUS.get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": kind}}
    if dialect == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def iter_tool_messages(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Chat Completions helper: the ``role: "tool"`` messages of a request body."""
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            yield message
