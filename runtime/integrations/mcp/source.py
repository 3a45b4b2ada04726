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

From async code, ``async with source`` (or ``await source.aconnect()``) opens
the connection on the running loop, and the calls of ``await
runtime.run_async(...)`` / ``await agent.run_async(...)`` run there while the
script runs in a worker thread::

    async with MCPToolSource.stdio("python", ["weather_server.py"]) as source:
        rt = Runtime(tools=source.tools())
        result = await rt.run_async("weather_forecast(city='Paris')")

Sync use (``with source``, ``connect()``, ``tools()`` before any connection)
opens it on the fallback loop every async tool shares when there is no host
loop (:func:`~toolscript.tools.asynctools.fallback_loop`). Either way the
connection lives on one loop (:mod:`.connection`): calls from other threads
and loops are dispatched to it.

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
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from toolscript.runtime.integrations.mcp.connection import MCPConnection
from toolscript.runtime.integrations.selectors import (
    Selector,
    check_names,
    name_set,
    normalize,
    pinned,
    tightened,
)
from toolscript.tools import Tool, check_tool_name
from toolscript.tools.schematool import SchemaTool, python_identifier

from toolscript.errors import ConfigurationError, MCPToolError, ToolDefinitionError

__all__ = ["MCPToolError", "MCPToolSource"]

_CALL_TIMEOUT_S = 300.0
"""How long a call waits for the server when the source has no ``timeout_s``."""


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


def hinted_returns(remote: Any) -> str | None:
    """What a tool's MCP metadata says about its results' provenance (issue 27):
    ``_meta`` ``{"toolscript/returns": "trusted" | "untrusted"}`` (or ``"trust"``)
    first, then ``openWorldHint``: an open-world tool's results are untrusted; a
    tool marked ``openWorldHint: false`` is left to the runtime's config (None)."""
    meta = getattr(remote, "meta", None)
    if isinstance(meta, Mapping):
        for key in ("toolscript/returns", "trust", "returns"):
            value = meta.get(key)
            if value in ("trusted", "untrusted"):
                return str(value)
    hints = getattr(remote, "annotations", None)
    if hints is not None and getattr(hints, "open_world_hint", None) is True:
        return "untrusted"
    return None


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
            ``deny`` policy): True/False for all, a list of names or a
            predicate on the MCP tool (exactly those), a mapping
            ``{name: bool}`` (the others keep their hints), or None
            (default): the tools the server marks ``readOnlyHint`` and not
            ``destructiveHint`` (a tool marked both is a write: destructive
            wins).
        requires_approval: None (default): every tool that is not read-only
            (writes ask the approval hook first). A list of names or a
            predicate *adds* tools to that default, never removes one;
            ``False`` (all) or ``{name: False}`` releases explicitly.

        Every name (``include``, ``exclude``, ``read_only``,
        ``requires_approval``) is the tool's name as the server lists it, not
        the prefixed one; a name the server does not list is a
        ``ConfigurationError`` when the tools are built
        (:mod:`~toolscript.runtime.integrations.selectors`).
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
        self._include = name_set(include, "include") if include is not None else None
        self._exclude = name_set(exclude, "exclude")
        self._read_only = normalize(read_only, "read_only")
        self._requires_approval = normalize(requires_approval, "requires_approval")
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._mode = mode
        self._lock = threading.Lock()
        self._connection: MCPConnection | None = None
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
    def _current(self) -> MCPConnection:
        """The connection to open or use: a new one when none is open or it was lost."""
        with self._lock:
            lost = self._connection if self._connection and self._connection.lost else None
            if self._connection is None or lost is not None:
                self._connection = MCPConnection(self._server, mode=self._mode, label=self._label())
            connection = self._connection
        if lost is not None:
            lost.close()
        return connection

    def _opened(self, connection: MCPConnection) -> None:
        self.server_name = connection.server_name
        self._listing = connection.listing

    def _failed(self, connection: MCPConnection, exc: BaseException) -> ConfigurationError:
        with self._lock:
            if self._connection is connection:
                self._connection = None
        return ConfigurationError(
            f"cannot connect to the MCP server {self._label()}: {type(exc).__name__}: {exc}"
        )

    def connect(self) -> MCPToolSource:
        """Open the connection and list the tools (idempotent). From sync code it
        opens on the shared fallback loop; a source already opened with
        :meth:`aconnect` stays on its loop.

        Raises:
            ConfigurationError: the server could not be reached or listed.
        """
        connection = self._current()
        if connection.opening_here():
            raise RuntimeError(
                f"the MCP server {self._label()} is being connected on this thread's "
                "event loop: await source.aconnect() first"
            )
        try:
            connection.open(self._connect_timeout_s)
        except BaseException as exc:
            connection.close()
            failure = self._failed(connection, exc)
            if not isinstance(exc, Exception):
                raise
            raise failure from exc
        self._opened(connection)
        return self

    async def aconnect(self) -> MCPToolSource:
        """Open the connection on the running event loop and list the tools
        (idempotent): the tools' calls run on this loop.

        Raises:
            ConfigurationError: the server could not be reached or listed.
        """
        connection = self._current()
        try:
            await connection.aopen(self._connect_timeout_s)
        except BaseException as exc:
            await connection.aclose()
            failure = self._failed(connection, exc)
            if not isinstance(exc, Exception):  # cancelled: stay cancelled
                raise
            raise failure from exc
        self._opened(connection)
        return self

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the connection lives on (None when not connected)."""
        connection = self._connection
        return connection.loop if connection is not None else None

    def close(self) -> None:
        """Close the connection (stops a stdio server) and wait for it, unless called
        on the loop the connection lives on: then it only starts the closing
        (``await aclose()`` waits). Idempotent; :meth:`connect` opens a new one."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    async def aclose(self) -> None:
        """Close the connection (stops a stdio server) and wait for it, from any loop.
        Idempotent."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()

    def __enter__(self) -> MCPToolSource:
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPToolSource:
        return await self.aconnect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

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
        return self._build_tools()

    async def atools(self) -> list[Tool]:
        """:meth:`tools` for async code: connects on the running loop if needed."""
        await self.aconnect()
        return self._build_tools()

    def _build_tools(self) -> list[Tool]:
        if self._tools is None:
            self._check_names()
            include, exclude = self._include, self._exclude
            self._tools = [
                self._make_tool(t)
                for t in self._listing
                if (include is None or t.name in include) and t.name not in exclude
            ]
        return list(self._tools)

    def _check_names(self) -> None:
        """Refuse a selector naming a tool the server does not list."""
        known = {t.name for t in self._listing}
        exposed = {form: t.name for t in self._listing
                   for form in (python_identifier(t.name), self._exposed_name(t.name))}
        label = f"MCP server {self._label()}"
        for argument, selector in (("include", self._include), ("exclude", self._exclude),
                                   ("read_only", self._read_only),
                                   ("requires_approval", self._requires_approval)):
            check_names(selector, argument, known, exposed, label)

    def _exposed_name(self, remote_name: str) -> str:
        base = python_identifier(remote_name)
        return f"{self.prefix}_{base}" if self.prefix else base

    def _make_tool(self, remote: Any) -> Tool:
        name = self._exposed_name(remote.name)
        try:
            check_tool_name(name)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(
                f"MCP tool {remote.name!r} of {self._label()}: {exc} (choose a shorter prefix=)"
            ) from exc
        names = (remote.name,)

        def ask(predicate: Callable[..., bool]) -> bool:
            return bool(predicate(remote))

        read_only = pinned(self._read_only, names, hinted_read_only(remote.annotations), ask)
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
            requires_approval=tightened(self._requires_approval, names, not read_only, ask),
            timeout_s=self._timeout_s,
            blocking=True,  # a request to another process: a hung server must not end the run
            returns=hinted_returns(remote),  # type: ignore[arg-type]
        )

    def _connected(self) -> MCPConnection:
        connection = self._connection
        if connection is None:
            raise ConnectionError(f"the MCP server {self._label()} is not connected")
        return connection

    def call(self, name: str, args: Mapping[str, Any], unwrap: bool = False) -> Any:
        """Call the MCP tool ``name`` (its server-side name) and convert the result,
        from sync code: the request runs on the connection's loop.

        Raises:
            MCPToolError: the server flagged the result as an error.
            ConnectionError: the source is closed or the connection was lost.
            RuntimeError: called on the thread running the connection's loop
                (from async code, use ``run_async`` or :meth:`acall`).
            TimeoutError: no answer within ``timeout_s`` (default 300 s).
        """
        result = self._connected().call(name, dict(args), self._timeout_s or _CALL_TIMEOUT_S)
        return convert_result(result, unwrap)

    async def acall(self, name: str, args: Mapping[str, Any], unwrap: bool = False) -> Any:
        """:meth:`call` for async code, from any loop.

        Raises:
            MCPToolError: the server flagged the result as an error.
            ConnectionError: the source is closed or the connection was lost.
            TimeoutError: no answer within ``timeout_s`` (default 300 s).
        """
        connection = self._connected()
        result = await connection.acall(name, dict(args), self._timeout_s or _CALL_TIMEOUT_S)
        return convert_result(result, unwrap)
