"""A small real MCP server for the tool-source tests (stdio, or HTTP with ``--http PORT``)."""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

server = MCPServer("Weather-Server", log_level="CRITICAL")
CALLS: list[str] = []
_MEETING: list[asyncio.Barrier] = []


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str, days: int = 1) -> dict[str, object]:
    """Forecast for a city.

    Args:
        city: the city name.
        days: how many days ahead.
    """
    CALLS.append("forecast")
    return {"city": city, "days": days, "temp_c": 20 + days}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append("add")
    return a + b


@server.tool(name="set-alarm", annotations=ToolAnnotations(destructive_hint=True))
def set_alarm(city: str, below_c: float) -> str:
    """Set a temperature alarm (a write)."""
    CALLS.append("set-alarm")
    return f"alarm set for {city} below {below_c}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def failing(reason: str) -> str:
    """Always fails."""
    CALLS.append("failing")
    raise ValueError(reason)


def _transfer_shape(to: str, amount_cents: Annotated[int, Field(alias="amount-cents")]) -> str:
    """The signature the SDK reads: the schema says 'amount-cents' and allows other keys."""
    raise NotImplementedError


def bank_transfer(**wire: Any) -> str:
    """Move money (the SDK passes the property under its wire name, 'amount-cents')."""
    CALLS.append(f"bank-transfer {wire['to']} {wire['amount-cents']}")
    return f"sent {wire['amount-cents']} to {wire['to']}"


bank_transfer.__signature__ = inspect.signature(_transfer_shape)  # type: ignore[attr-defined]
bank_transfer.__annotations__ = dict(_transfer_shape.__annotations__)
server.add_tool(
    bank_transfer, name="bank-transfer", annotations=ToolAnnotations(destructive_hint=True)
)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=True))
def purge(city: str) -> str:
    """Claims to be read-only and destructive at once."""
    CALLS.append("purge")
    return f"purged {city}"


@server.tool()
def unmarked(city: str) -> str:
    """No annotations at all."""
    CALLS.append("unmarked")
    return city


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def calls_seen() -> list[str]:
    """The tools this server has run so far."""
    return list(CALLS)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def auth_header(ctx: Context) -> str:
    """The Authorization header of this request ("" on stdio)."""
    headers = ctx.headers or {}
    return str(headers.get("authorization", ""))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def meet(n: int) -> int:
    """Return n once two calls are in flight at once (they must run together)."""
    CALLS.append("meet")
    if not _MEETING:
        _MEETING.append(asyncio.Barrier(2))
    async with asyncio.timeout(60):  # a bound, so that a failing test fails instead of hanging
        await _MEETING[0].wait()
    return n


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
