"""MCP servers as a tool source: :class:`MCPToolSource`.

Connects to an MCP server (a command over stdio, a Streamable HTTP URL, or an
in-process ``MCPServer`` in tests), lists its tools and turns each into a
:class:`~toolscript.tools.schematool.SchemaTool` with the server's JSON
Schema, namespaced ``{prefix}_{tool}``. Calls from scripts and from classic
mode go through the runtime's usual validation, approval, timeouts and audit,
then to the server over the open connection::

    from toolscript import Runtime
    from toolscript.runtime.integrations.mcp import MCPToolSource

    with MCPToolSource.stdio("python", ["weather_server.py"], prefix="weather") as source:
        with Runtime(tools=source.tools()) as rt:
            rt.run("weather_forecast(city='Paris')")

Results: structured content when the server sends it (a lone ``{"result": x}``
wrapper is unwrapped to ``x``), else the text of a single text block, else a
list of content blocks as dicts. A single text block holding a JSON object
or array (what many servers send) is parsed into data. A tool result flagged ``isError`` raises
:class:`MCPToolError` in the host, which the script sees as a ``ToolError``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

from toolscript.runtime.integrations.mcp._loop import LoopThread
from toolscript.tools import Tool, check_tool_name
from toolscript.tools.schematool import SchemaTool, python_identifier

from toolscript.errors import ConfigurationError, ToolDefinitionError

__all__ = ["MCPToolError", "MCPToolSource"]

Selector = bool | Iterable[str] | Callable[[Any], bool] | None


class MCPToolError(Exception):
    """The MCP server answered a tool call with ``isError``."""


def _selected(selector: Selector, tool: Any, default: bool) -> bool:
    if selector is None:
        return default
    if isinstance(selector, bool):
        return selector
    if callable(selector):
        return bool(selector(tool))
    return tool.name in set(selector)


@asynccontextmanager
async def _http_transport(url: str, headers: Mapping[str, str]) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=dict(headers)) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def hinted_read_only(hints: Any) -> bool:
    """What a tool's MCP annotations say: read-only only when marked
    ``readOnlyHint`` and not ``destructiveHint`` (destructive wins)."""
    if hints is None:
        return False
    return hints.read_only_hint is True and hints.destructive_hint is not True


def _is_result_wrapper(schema: Mapping[str, Any] | None) -> bool:
    if not isinstance(schema, Mapping):
        return False
    properties = schema.get("properties")
    return isinstance(properties, Mapping) and list(properties) == ["result"]


def convert_result(result: Any, unwrap: bool) -> Any:
    """A ``CallToolResult`` as JSON data (see the module docs).

    Raises:
        MCPToolError: the result is flagged ``isError``.
    """
    blocks = list(result.content or [])
    texts = [getattr(b, "text", None) for b in blocks]
    if result.is_error:
        message = "\n".join(t for t in texts if t) or "the MCP tool reported an error"
        raise MCPToolError(message)
    structured = result.structured_content
    if structured is not None:
        if unwrap and isinstance(structured, dict) and list(structured) == ["result"]:
            return structured["result"]
        return structured
    if len(blocks) == 1 and texts[0] is not None:
        text = texts[0]
        if text.lstrip()[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text
    return [b.model_dump(mode="json", exclude_none=True) for b in blocks]


class MCPToolSource:
    """The tools of one MCP server, callable as toolscript tools.

    Args:
        server: what ``mcp.Client`` accepts: a Streamable HTTP URL, a
            ``StdioServerParameters``, a ``Transport``, or an in-process
            ``MCPServer``/``Server``. See :meth:`stdio` and :meth:`http`.
        prefix: namespace of the tool names (``{prefix}_{tool}``); default:
            the server's name; ``""`` for none.
        include / exclude: MCP tool names to keep / drop.
        read_only: which tools are read-only (run in parallel, allowed by the
            ``deny`` policy): True/False for all, names, a predicate on the MCP
            tool, or None (default): the tools the server marks
            ``readOnlyHint`` and not ``destructiveHint`` (a tool marked both
            is a write: destructive wins).
        requires_approval: likewise; None (default) means every tool that is
            not read-only (writes ask the approval hook first).
        timeout_s: per-call timeout of every tool (else the runtime default).
        connect_timeout_s: how long connecting and listing may take.
        mode: the SDK's protocol negotiation (``"auto"`` or ``"legacy"``).
    """

    def __init__(
        self,
        server: Any,
        *,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        read_only: Selector = None,
        requires_approval: Selector = None,
        timeout_s: float | None = None,
        connect_timeout_s: float = 30.0,
        mode: str = "auto",
    ) -> None:
        self._server = server
        self._prefix = prefix
        self._include = set(include) if include is not None else None
        self._exclude = set(exclude)
        self._read_only = read_only
        self._requires_approval = requires_approval
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._mode = mode
        self._loop: LoopThread | None = None
        self._client: Any = None
        self._closing: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._listing: list[Any] = []
        self._tools: list[Tool] | None = None
        self.server_name = ""

    # --- constructors ------------------------------------------------------------
    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> MCPToolSource:
        """A server started as ``command args...``, speaking MCP on its stdin/stdout.

        ``env`` is the server's whole environment (the SDK passes a safe
        minimum when None); nothing else of the host's environment is inherited.
        """
        from mcp import StdioServerParameters

        params = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
        )
        return cls(params, **options)

    @classmethod
    def http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPToolSource:
        """A server at a Streamable HTTP ``url``; ``headers`` go with every request
        (e.g. ``{"Authorization": f"Bearer {token}"}``)."""
        if headers:
            return cls(_http_transport(url, headers), **options)
        return cls(url, **options)

    # --- lifecycle ---------------------------------------------------------------
    def connect(self) -> MCPToolSource:
        """Open the connection and list the tools (idempotent).

        Raises:
            ConfigurationError: the server could not be reached or listed.
        """
        if self._loop is not None:
            return self
        self._loop = LoopThread()
        try:
            self._loop.call(self._start(), timeout=self._connect_timeout_s)
        except BaseException as exc:
            self.close()
            raise ConfigurationError(
                f"cannot connect to the MCP server {self._label()}: {type(exc).__name__}: {exc}"
            ) from exc
        return self

    async def _start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready))
        await ready

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        """Keep the connection open in one task (the SDK's scopes need that)."""
        from mcp import Client

        assert self._closing is not None
        try:
            async with Client(self._server, mode=self._mode) as client:
                self._client = client
                info = client.server_info
                self.server_name = info.name if info is not None else ""
                self._listing = await self._list_tools(client)
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    @staticmethod
    async def _list_tools(client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(1000):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def close(self) -> None:
        """Close the connection (stops a stdio server). Idempotent."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if self._holder is not None and self._closing is not None:
            closing, holder = self._closing, self._holder

            async def finish() -> None:
                closing.set()
                await asyncio.wait({holder}, timeout=10)

            with suppress(Exception):
                loop.call(finish(), timeout=15)
        loop.stop()

    def __enter__(self) -> MCPToolSource:
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _label(self) -> str:
        server = self._server
        command = getattr(server, "command", None)
        if command:
            return repr(" ".join([command, *getattr(server, "args", [])]))
        return repr(server) if isinstance(server, str) else type(server).__name__

    # --- tools -------------------------------------------------------------------
    @property
    def prefix(self) -> str:
        """The namespace of this source's tool names."""
        if self._prefix is not None:
            return self._prefix
        return python_identifier(self.server_name.lower()) if self.server_name else "mcp"

    def tools(self) -> list[Tool]:
        """The server's tools as toolscript tools (connects first if needed).

        Raises:
            ToolDefinitionError: a tool name cannot be made valid (e.g. too long).
            SchemaError: a tool's input schema is not a valid JSON Schema.
        """
        self.connect()
        if self._tools is None:
            self._tools = [
                self._make_tool(t)
                for t in self._listing
                if (self._include is None or t.name in self._include)
                and t.name not in self._exclude
            ]
        return list(self._tools)

    def _make_tool(self, remote: Any) -> Tool:
        base = python_identifier(remote.name)
        name = f"{self.prefix}_{base}" if self.prefix else base
        try:
            check_tool_name(name)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(
                f"MCP tool {remote.name!r} of {self._label()}: {exc} (choose a shorter prefix=)"
            ) from exc
        read_only = _selected(self._read_only, remote, hinted_read_only(remote.annotations))
        output_schema = remote.output_schema
        unwrap = _is_result_wrapper(output_schema)
        if unwrap and output_schema is not None:
            output_schema = output_schema["properties"]["result"]
        remote_name = remote.name

        def call(**args: Any) -> Any:
            return self.call(remote_name, args, unwrap=unwrap)

        return SchemaTool(
            call,
            name=name,
            description=inspect.cleandoc(remote.description or remote.title or ""),
            input_schema=remote.input_schema or {"type": "object"},
            output_schema=output_schema,
            read_only=read_only,
            requires_approval=_selected(self._requires_approval, remote, not read_only),
            timeout_s=self._timeout_s,
        )

    def call(self, name: str, args: Mapping[str, Any], unwrap: bool = False) -> Any:
        """Call the MCP tool ``name`` (its server-side name) and convert the result.

        Raises:
            MCPToolError: the server flagged the result as an error.
            ConnectionError: the source is closed or the connection was lost.
        """
        loop, client = self._loop, self._client
        if loop is None or client is None:
            raise ConnectionError(f"the MCP server {self._label()} is not connected")
        result = loop.call(client.call_tool(name, dict(args)), timeout=self._timeout_s or 300.0)
        return convert_result(result, unwrap)
