"""A fake model endpoint for tests: a real HTTP server on 127.0.0.1.

It speaks three wire formats, chosen by the request path:

* ``POST .../chat/completions`` — OpenAI Chat Completions (and every
  OpenAI-compatible profile),
* ``POST .../responses`` — OpenAI Responses,
* ``POST .../messages`` — Anthropic Messages.

A test scripts the model's side as a list of :class:`Turn` objects (or
callables that receive the request body and return a ``Turn``); the server
replays them in order, rendering each in the dialect of the request. Every
request is recorded (path, headers, parsed JSON body), error responses
(429/500/400/401 ...) and slow responses can be injected ahead of the scripted
turns. The real ``openai`` and ``anthropic`` SDK clients point at it with
``base_url``; nothing is mocked.

Example::

    with FakeModelServer() as server:
        server.script(Turn(tool_calls=[Call("run_script", {"code": "1 + 1"})]),
                      Turn(text="2"))
        client = openai.OpenAI(api_key="test", base_url=server.openai_base_url)
"""

from __future__ import annotations

import contextlib
import itertools
import json
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
    object for Anthropic) or a raw string (sent verbatim — e.g. invalid JSON).
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
    """

    text: str | None = None
    tool_calls: list[Call] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    extra_items: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] | None = None


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
        """``"chat"``, ``"responses"`` or ``"anthropic"``."""
        return _dialect_of(self.path)


TurnSource = Turn | Callable[[dict[str, Any]], Turn]


def _dialect_of(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "anthropic"
    return "unknown"


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
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        return Handler

    def _respond(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
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
        with self._lock:
            source = self._turns.popleft() if self._turns else None
        if source is None:
            record.status = 400
            return 400, {}, _error_body(dialect, 400, "fake server: no scripted turn left")
        turn = source(body) if callable(source) else source
        record.status = 200
        return 200, {}, self._render(dialect, body, turn)

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


def _error_body(dialect: str, status: int, message: str) -> dict[str, Any]:
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
