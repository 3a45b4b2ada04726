"""One MCP client connection, held open by a task on the event loop it was opened on.

The SDK's ``Client`` keeps task groups and cancel scopes that belong to the
task that entered it, so a connection is one long-lived task (the *holder*)
on one event loop, its *home*:

* :meth:`MCPConnection.aopen` (async code) makes the running loop the home:
  ``async with MCPToolSource(...)`` inside ``asyncio.run(...)`` connects on
  the caller's loop, and the tools' calls run there.
* :meth:`MCPConnection.open` (sync code) makes the home asynctools'
  :func:`~toolscript.tools.asynctools.fallback_loop`: the one private loop
  every coroutine of the process runs on when there is no host loop (no
  thread of its own per connection).

A call made on the home loop is awaited there; a call from a thread (a tool
running in the runtime's worker thread) or from another loop is dispatched to
the home loop with ``asyncio.run_coroutine_threadsafe`` and waited for. A
blocking call on the home loop's own thread is refused (it would wait for the
loop it blocks). Closing ends the holder, which leaves the SDK's context: a
stdio server is stopped and reaped before :meth:`MCPConnection.aclose` (or
:meth:`MCPConnection.close` from another thread) returns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from contextlib import suppress
from typing import Any

from toolscript.tools.asynctools import fallback_loop, run_coroutine, running_loop

__all__ = ["MCPConnection"]

_CLOSE_WAIT_S = 15.0
"""How long closing waits for the holder to leave the SDK's context before cancelling it."""

_CLOSERS: set[asyncio.Task[None]] = set()
"""Closings started by a sync ``close()`` on the connection's own loop, until they end."""


class MCPConnection:
    """An MCP ``Client`` session on its home loop (single use: open once, close once).

    Args:
        server: what ``mcp.Client`` accepts (URL, stdio parameters, transport, server).
        mode: the SDK's protocol negotiation (``"auto"`` or ``"legacy"``).
        label: how error messages name the server.
    """

    def __init__(self, server: Any, *, mode: str, label: str) -> None:
        self._server = server
        self._mode = mode
        self.label = label
        self._lock = threading.Lock()
        self._home: asyncio.AbstractEventLoop | None = None
        self._opened: concurrent.futures.Future[None] | None = None
        self._closed = False
        self._holder: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._scope: Any = None  # the holder's anyio.CancelScope
        self._client: Any = None
        self.server_name = ""
        """The name the server gave in its handshake ("" before)."""
        self.listing: list[Any] = []
        """The server's tools (``mcp`` ``Tool`` objects), listed when the connection opened."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop this connection lives on (None before it is opened)."""
        return self._home

    @property
    def lost(self) -> bool:
        """It was open and is no more: the server went away, or the loop it lived on
        stopped (e.g. ``asyncio.run`` returned without closing it)."""
        opened, home = self._opened, self._home
        if opened is None or not opened.done() or opened.exception() is not None:
            return False
        return self._client is None or home is None or not home.is_running()

    # --- opening ---------------------------------------------------------------------
    def _claim(
        self, loop: asyncio.AbstractEventLoop
    ) -> tuple[concurrent.futures.Future[None], bool]:
        """The future of the opening, and whether this caller must start it on ``loop``."""
        with self._lock:
            if self._closed:
                raise ConnectionError(f"the connection to the MCP server {self.label} is closed")
            if self._opened is not None:
                return self._opened, False
            self._home = loop
            self._opened = concurrent.futures.Future()
            self._opened.set_running_or_notify_cancel()  # a waiter's cancel must not cancel it
            return self._opened, True

    def _spawn(self) -> None:
        """Start the holder task (runs on the home loop)."""
        assert self._opened is not None
        self._closing = asyncio.Event()
        self._holder = asyncio.get_running_loop().create_task(
            self._hold(self._opened, self._closing), name=f"mcp-connection {self.label}"
        )

    async def _hold(self, opened: concurrent.futures.Future[None], closing: asyncio.Event) -> None:
        """Enter the SDK's client, list the tools, and stay inside until closing."""
        import anyio
        from mcp import Client

        try:
            with anyio.CancelScope() as scope:  # cancelled by _finish while still connecting
                self._scope = scope
                async with Client(self._server, mode=self._mode) as client:
                    info = client.server_info
                    self.server_name = info.name if info is not None else ""
                    self.listing = await _list_tools(client)
                    self._client = client
                    opened.set_result(None)
                    await closing.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc if isinstance(exc, Exception) else _ended(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            if not opened.done():
                opened.set_exception(ConnectionError("the connection was closed while opening"))

    def open(self, timeout: float) -> None:
        """Open the connection from sync code, on the fallback loop unless it is
        opened already (or being opened) elsewhere; wait until the tools are listed.

        Raises:
            TimeoutError: not open within ``timeout`` seconds.
            RuntimeError: it is being opened on the loop this thread runs.
            Exception: what the SDK raised while connecting.
        """
        if self.opening_here():
            raise RuntimeError(
                f"the MCP server {self.label} is being connected on this thread's event "
                "loop: await its aopen() instead"
            )
        opened, started = self._claim(fallback_loop())
        home = self._home
        assert home is not None
        if started:
            home.call_soon_threadsafe(self._spawn)
        _wait(opened, timeout)

    def opening_here(self) -> bool:
        """The connection is being opened on the loop this thread runs (a sync
        caller here cannot wait for it)."""
        opened = self._opened
        home = self._home
        return opened is not None and not opened.done() and home is running_loop()

    async def aopen(self, timeout: float) -> None:
        """Open the connection on the running loop (unless it is opened already, or
        being opened, elsewhere) and wait until the tools are listed.

        Raises:
            TimeoutError: not open within ``timeout`` seconds.
            Exception: what the SDK raised while connecting.
        """
        opened, started = self._claim(asyncio.get_running_loop())
        if started:
            self._spawn()
        waiting = asyncio.wrap_future(opened)
        done, _ = await asyncio.wait({waiting}, timeout=timeout)
        if not done:
            waiting.add_done_callback(_consume)
            raise TimeoutError(f"no connection within {timeout:g} s")
        waiting.result()

    # --- calls -------------------------------------------------------------------------
    def _live_home(self) -> asyncio.AbstractEventLoop:
        home = self._home
        if home is None or self._client is None or self._closed or not home.is_running():
            raise ConnectionError(f"the MCP server {self.label} is not connected")
        return home

    async def _call_here(self, name: str, args: dict[str, Any]) -> Any:
        client = self._client
        if client is None:
            raise ConnectionError(f"the MCP server {self.label} is not connected")
        return await client.call_tool(name, args)

    def call(self, name: str, args: dict[str, Any], timeout: float) -> Any:
        """Call tool ``name`` on the home loop from sync code (any thread but the
        home loop's) and wait for the ``CallToolResult``.

        Raises:
            ConnectionError: not connected (closed, lost, or its loop has stopped).
            RuntimeError: called on the home loop's own thread (it would block it).
            TimeoutError: no answer within ``timeout`` seconds (the call is cancelled).
        """
        home = self._live_home()
        return run_coroutine(self._call_here(name, args), loop=home, timeout=timeout)

    async def acall(self, name: str, args: dict[str, Any], timeout: float) -> Any:
        """Call tool ``name`` from async code on any loop; the request itself runs on
        the home loop.

        Raises:
            ConnectionError: not connected (closed, lost, or its loop has stopped).
            TimeoutError: no answer within ``timeout`` seconds (the call is cancelled).
        """
        home = self._live_home()
        if home is asyncio.get_running_loop():
            return await asyncio.wait_for(self._call_here(name, args), timeout)
        future = asyncio.run_coroutine_threadsafe(self._call_here(name, args), home)
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)

    # --- closing -----------------------------------------------------------------------
    def _shut(self) -> asyncio.AbstractEventLoop | None:
        """Mark closed; the home loop if a holder may still need finishing."""
        with self._lock:
            self._closed = True
            home = self._home
        return home if home is not None and home.is_running() else None

    async def _finish(self) -> None:
        """End the holder (runs on the home loop)."""
        if self._closing is not None:
            self._closing.set()
        holder = self._holder
        if holder is None:
            return
        if self._client is None:  # still connecting: leave the SDK's context by its rules
            if self._scope is not None:
                self._scope.cancel()
            else:  # not started: nothing entered yet
                holder.cancel()
        done, _ = await asyncio.wait({holder}, timeout=_CLOSE_WAIT_S)
        if not done:
            holder.cancel()
            await asyncio.wait({holder}, timeout=_CLOSE_WAIT_S)

    def close(self) -> None:
        """Close from sync code and wait until the holder has left the SDK's context.
        On the home loop's own thread it cannot wait: it starts the closing and
        returns (``await aclose()`` waits). Idempotent."""
        home = self._shut()
        if home is None:
            return
        if home is running_loop():
            closer = home.create_task(self._finish())
            _CLOSERS.add(closer)  # the loop keeps only weak references to tasks
            closer.add_done_callback(_CLOSERS.discard)
            return
        with suppress(Exception):
            run_coroutine(self._finish(), loop=home, timeout=3 * _CLOSE_WAIT_S)

    async def aclose(self) -> None:
        """Close and wait until the holder has left the SDK's context (a stdio server
        has exited). Idempotent; from any loop."""
        home = self._shut()
        if home is None:
            return
        if home is asyncio.get_running_loop():
            await self._finish()
        else:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._finish(), home))


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


def _ended(exc: BaseException) -> ConnectionError:
    return ConnectionError(f"the connection ended while opening ({type(exc).__name__})")


def _wait(future: concurrent.futures.Future[None], timeout: float) -> None:
    try:
        future.result(timeout)
    except TimeoutError:
        if future.done():  # the SDK's own TimeoutError
            raise
        raise TimeoutError(f"no connection within {timeout:g} s") from None


def _consume(future: asyncio.Future[None]) -> None:
    """Retrieve the outcome of an opening nobody waits for any more (no warning)."""
    if not future.cancelled():
        future.exception()
