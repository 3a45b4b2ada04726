"""Dialect-neutral types, the :class:`Provider` interface and :class:`SDKProvider`.

:class:`Provider` is what the agent loop talks to (one method is required,
:meth:`Provider.complete`); anyone can implement it for another model or a
test double. The built-in dialects are :class:`SDKProvider` subclasses: thin
adapters that turn neutral request options into one dialect's request body,
call the real SDK, and turn the response back into a neutral
:class:`ModelTurn`. Their conversation is kept in the dialect's own wire
format (a list of dicts), so what the model sent comes back to it unchanged,
unknown fields included.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ModelResponseError
from .retry import RetryPolicy, call_with_retry, call_with_retry_async

__all__ = [
    "CreateEndpointProvider",
    "Message",
    "ModelTurn",
    "Provider",
    "Request",
    "SDKProvider",
    "StreamAssembler",
    "ToolCall",
    "ToolChoice",
    "ToolOutcome",
    "ToolSpec",
    "Usage",
    "assistant_message",
    "normalize_tool_choice",
    "sdk_kwargs",
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
        raw: the response body (``{}`` when there is none).
    """

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    history: list[Message] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


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
    raw = method(**sdk_kwargs(method, body))
    return raw_json(raw.http_response.content)


def raw_json(content: bytes | str) -> dict[str, Any]:
    """A response body as a JSON object, or :class:`ModelResponseError`."""
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ModelResponseError(f"the endpoint's answer is not JSON: {content[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ModelResponseError(f"the endpoint's answer is not a JSON object: {data!r:.200}")
    return data


def sdk_kwargs(method: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as keyword arguments of an SDK method: keys it does not declare go
    into ``extra_body``."""
    known = set(inspect.signature(method).parameters)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def assistant_message(text: str, calls: Sequence[ToolCall] = ()) -> Message:
    """An assistant message in the neutral format of :class:`Provider` (for custom
    providers: what :attr:`ModelTurn.history` holds)."""
    message: Message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
        ]
    return message


class Provider(ABC):
    """The model interface the agent loop talks to; subclass it to plug in any model.

    Only :meth:`complete` is required: it receives the conversation so far and the
    neutral :class:`Request` (model name, system text, offered tools, tool choice,
    sampling options) and returns one :class:`ModelTurn` (the text, the tool calls
    in call order, usage, and ``history``: the message(s) to append for this turn).
    The other methods have defaults in a neutral message format::

        {"role": "user", "content": "..."}
        {"role": "assistant", "content": "...", "tool_calls": [{"id", "name", "arguments"}]}
        {"role": "tool", "tool_call_id": "...", "name": "...", "content": "...",
         "is_error": False}

    The built-in dialects (:class:`SDKProvider` subclasses) keep the conversation
    in their wire format instead. Conversations (``message_history=``) only go
    back to a provider of the same format.

    Override :meth:`complete_async` for a native async client (the default runs
    :meth:`complete` in a thread) and :meth:`stream` / :meth:`stream_async` to
    yield text as it arrives (the default yields the whole text once).
    """

    #: Reported in traces and used in error messages.
    name: str = "custom"

    @abstractmethod
    def complete(self, messages: list[Message], request: Request) -> ModelTurn:
        """One model turn for ``messages`` (the conversation so far) and ``request``."""

    async def complete_async(self, messages: list[Message], request: Request) -> ModelTurn:
        """:meth:`complete` for async callers (default: in a worker thread)."""
        return await asyncio.to_thread(self.complete, messages, request)

    def stream(self, messages: list[Message], request: Request) -> Iterator[str | ModelTurn]:
        """Text deltas (``str``) as they arrive, then the finished :class:`ModelTurn`."""
        turn = self.complete(messages, request)
        if turn.text:
            yield turn.text
        yield turn

    async def stream_async(
        self, messages: list[Message], request: Request
    ) -> AsyncIterator[str | ModelTurn]:
        """:meth:`stream` for async callers."""
        turn = await self.complete_async(messages, request)
        if turn.text:
            yield turn.text
        yield turn

    def user_message(self, text: str) -> list[Message]:
        """Wire items for a plain user message."""
        return [{"role": "user", "content": text}]

    def tool_results(
        self, turn: ModelTurn, outcomes: list[ToolOutcome], followup: str | None = None
    ) -> list[Message]:
        """Items carrying ``outcomes`` (one per call of ``turn``, in call order), then
        ``followup`` user text if given."""
        names = {c.id: c.name for c in turn.tool_calls}
        items: list[Message] = [
            {"role": "tool", "tool_call_id": o.call_id, "name": names.get(o.call_id, ""),
             "content": o.content, "is_error": o.is_error}
            for o in outcomes
        ]
        if followup:
            items.extend(self.user_message(followup))
        return items

    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """The tool calls an assistant item of the conversation made (to find the
        scripts of an earlier conversation); none for other items."""
        if message.get("role") != "assistant":
            return []
        return [
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), c.get("arguments") or {})
            for c in message.get("tool_calls") or []
            if isinstance(c, dict)
        ]


class SDKProvider(Provider):
    """A built-in dialect bound to one SDK client.

    Subclasses implement the pure parts (:meth:`build_body`, :meth:`parse`,
    :meth:`tool_results`, :meth:`user_message`) and the transport
    (:meth:`_send`, and for async and streaming :meth:`_send_async`,
    :meth:`_open_stream`, :meth:`_open_stream_async` with a
    :class:`StreamAssembler`); this class adds retries of transient endpoint
    failures (for streams: of opening them) and turns odd answers into
    :class:`ModelResponseError`.
    """

    def __init__(
        self, client: Any, *, retry: RetryPolicy | None = None, async_client: Any = None
    ) -> None:
        self.client = client
        self.retry = retry or RetryPolicy()
        self._async_client = async_client

    @property
    def async_client(self) -> Any:
        """The async SDK client (made from the sync one's settings on first use)."""
        if self._async_client is None:
            self._async_client = self._make_async_client()
        return self._async_client

    def _make_async_client(self) -> Any:
        raise NotImplementedError(f"{self.name}: no async client")

    # --- whole answers ---------------------------------------------------------------
    def complete(self, messages: list[Message], request: Request) -> ModelTurn:
        """Send one request (retrying transient failures) and parse the answer."""
        body = self.build_body(messages, request)
        data = call_with_retry(lambda: self._send(body), self.retry, self.name)
        return self.parse_checked(data)

    async def complete_async(self, messages: list[Message], request: Request) -> ModelTurn:
        """:meth:`complete` over the async SDK client."""
        body = self.build_body(messages, request)
        data = await call_with_retry_async(lambda: self._send_async(body), self.retry, self.name)
        return self.parse_checked(data)

    def parse_checked(self, data: dict[str, Any]) -> ModelTurn:
        """:meth:`parse`, with an unexpected shape reported as :class:`ModelResponseError`."""
        try:
            return self.parse(data)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelResponseError(
                f"{self.name}: unexpected response shape ({type(exc).__name__}: {exc}): "
                f"{json.dumps(data, default=str)[:300]}",
                provider=self.name,
            ) from exc

    # --- streams ---------------------------------------------------------------------
    def stream(self, messages: list[Message], request: Request) -> Iterator[str | ModelTurn]:
        """Text deltas as the endpoint streams them, then the assembled turn."""
        assembler = self._assembler()
        if assembler is None:
            yield from super().stream(messages, request)
            return
        body = self.build_body(messages, request)
        events = call_with_retry(lambda: _primed(self._open_stream(body)), self.retry, self.name)
        for event in events:
            delta = self._fed(assembler, event)
            if delta:
                yield delta
        yield self.parse_checked(assembler.body())

    async def stream_async(
        self, messages: list[Message], request: Request
    ) -> AsyncIterator[str | ModelTurn]:
        """:meth:`stream` over the async SDK client."""
        assembler = self._assembler()
        if assembler is None:
            async for item in super().stream_async(messages, request):
                yield item
            return
        body = self.build_body(messages, request)
        events = await call_with_retry_async(
            lambda: _primed_async(self._open_stream_async(body)), self.retry, self.name
        )
        async for event in events:
            delta = self._fed(assembler, event)
            if delta:
                yield delta
        yield self.parse_checked(assembler.body())

    def _fed(self, assembler: StreamAssembler, event: dict[str, Any]) -> str:
        try:
            return assembler.add(event)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise ModelResponseError(
                f"{self.name}: unexpected stream event ({type(exc).__name__}: {exc}): "
                f"{json.dumps(event, default=str)[:300]}",
                provider=self.name,
            ) from exc

    def _assembler(self) -> StreamAssembler | None:
        """A fresh assembler of this dialect's stream events, or None: no streaming."""
        return None

    def _open_stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def _open_stream_async(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    # --- the dialect -----------------------------------------------------------------
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
    def tool_calls_in(self, message: Message) -> list[ToolCall]:
        """The tool calls of one wire item of the conversation."""

    @abstractmethod
    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request through the SDK; returns the response JSON."""

    async def _send_async(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request through the async SDK client; returns the response JSON."""
        raise NotImplementedError(f"{self.name}: no async transport")


class CreateEndpointProvider(SDKProvider):
    """A dialect whose SDK answers through one resource's ``create`` method (OpenAI
    chat completions and responses, Anthropic messages): whole answers through its
    ``with_raw_response`` (the raw JSON, parsed here), streams through ``create``
    with ``stream=True``. Subclasses name the resource (:meth:`_endpoint`) and may
    add stream options (:meth:`_stream_body`)."""

    @abstractmethod
    def _endpoint(self, client: Any) -> Any:
        """The SDK resource with the ``create`` method, e.g. ``client.messages``."""

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request body of a stream."""
        return {**body, "stream": True}

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        return call_sdk(self._endpoint(self.client).with_raw_response.create, body)

    async def _send_async(self, body: dict[str, Any]) -> dict[str, Any]:
        method = self._endpoint(self.async_client).with_raw_response.create
        raw = await method(**sdk_kwargs(method, body))
        return raw_json(raw.http_response.content)

    def _open_stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        method = self._endpoint(self.client).create
        stream = method(**sdk_kwargs(method, self._stream_body(body)))
        return (event.to_dict() for event in stream)

    async def _open_stream_async(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        method = self._endpoint(self.async_client).create
        stream = await method(**sdk_kwargs(method, self._stream_body(body)))
        async for event in stream:
            yield event.to_dict()


class StreamAssembler(ABC):
    """Rebuilds a dialect's whole response body from its stream events."""

    @abstractmethod
    def add(self, event: dict[str, Any]) -> str:
        """Take one event; return the text delta it carries ("" for none)."""

    @abstractmethod
    def body(self) -> dict[str, Any]:
        """The response body the events amount to (what :meth:`SDKProvider.parse` reads)."""


_END = object()


def _primed(events: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``events`` with its first item fetched now (the request is made, errors raised)."""
    iterator = iter(events)
    first = next(iterator, _END)
    if first is _END:
        return iter(())
    return itertools.chain([first], iterator)  # type: ignore[list-item]


async def _primed_async(events: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    iterator = aiter(events)
    try:
        first = await anext(iterator)
    except StopAsyncIteration:
        return _empty_async()
    return _chain_async(first, iterator)


async def _empty_async() -> AsyncIterator[dict[str, Any]]:
    return
    yield  # pragma: no cover


async def _chain_async(
    first: dict[str, Any], rest: AsyncIterator[dict[str, Any]]
) -> AsyncIterator[dict[str, Any]]:
    yield first
    async for item in rest:
        yield item
