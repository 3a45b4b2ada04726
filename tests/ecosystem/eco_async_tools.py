"""An ``async def`` tool for the MCP server tests (``toolscript mcp serve --tools``)."""

from __future__ import annotations

import asyncio
import threading

from toolscript.tools import tool

_BARRIERS: dict[asyncio.AbstractEventLoop, asyncio.Barrier] = {}


@tool(read_only=True)
async def meet(n: int) -> dict[str, object]:
    """Return once two calls are in flight at once, and say where this one ran.

    Args:
        n: echoed back.
    """
    loop = asyncio.get_running_loop()
    barrier = _BARRIERS.setdefault(loop, asyncio.Barrier(2))
    async with asyncio.timeout(60):  # a bound, so that a failing test fails instead of hanging
        await barrier.wait()
    return {"n": n, "main_thread": threading.current_thread() is threading.main_thread()}
