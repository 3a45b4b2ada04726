"""``run_script`` over Streamable HTTP: a bearer token, transport sessions, cleanup.

:func:`http_app` wraps the SDK's Streamable HTTP app (stateful: every client
gets a transport session, ``Mcp-Session-Id``) in a gate that

* refuses every request without ``Authorization: Bearer <token>`` (401,
  compared in constant time; the token is read from an environment variable
  by ``toolscript mcp serve --transport http``);
* closes a client's ``run_script`` sessions, and so their sandboxes, when the
  client ends its transport session (``DELETE``).

The server also declines the 2026 protocol's ``server/discover`` probe
(``-32022``, naming the handshake versions), so the SDK's default client
(``mode="auto"``) falls back to the handshake protocol and gets a transport
session its ``run_script`` sessions are bound to. A client pinned to the
stateless protocol still works, with a fresh session for every run.

Idle transport sessions expire after the same ``idle_ttl_s`` as the script
sessions, which the :class:`~.sessions.ScriptSessions` reaper closes.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from toolscript.errors import ConfigurationError

if TYPE_CHECKING:
    from toolscript.runtime.integrations.mcp.server import ToolscriptMCPServer

__all__ = ["MIN_TOKEN_CHARS", "TOKEN_ENV", "http_app", "serve_http", "transport_owner"]

TOKEN_ENV = "TOOLSCRIPT_MCP_TOKEN"
"""The environment variable ``toolscript mcp serve --transport http`` reads the token from."""
MIN_TOKEN_CHARS = 16

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def transport_owner(session_id: str) -> str:
    """The owner key of the script sessions of HTTP transport session ``session_id``."""
    return f"http:{session_id}"


def check_token(token: str | None, env: str = TOKEN_ENV) -> str:
    """``token`` (read from environment variable ``env``) if it is long enough
    to be a bearer secret.

    Raises:
        ConfigurationError: no token, or a short one.
    """
    if not token or len(token) < MIN_TOKEN_CHARS:
        raise ConfigurationError(
            f"serving over HTTP needs a bearer token of at least {MIN_TOKEN_CHARS} characters "
            f"in ${env} (e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
            "); clients send it as 'Authorization: Bearer <token>'"
        )
    return token


async def prefer_handshake(ctx: Any, call_next: Any) -> Any:
    """Server middleware: decline the stateless protocol's discovery probe, so
    ``mode="auto"`` clients use the handshake protocol and its transport sessions."""
    if getattr(ctx, "method", None) == "server/discover":
        raise MCPError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "run_script keeps per-connection sessions: use the initialize handshake",
            {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS)},
        )
    return await call_next(ctx)


class _Gate:
    """ASGI middleware: bearer token in front, session cleanup behind."""

    def __init__(self, app: ASGIApp, token: str, on_end: Callable[[str], object]) -> None:
        self.app = app
        self.token = token.encode()
        self.on_end = on_end

    def authorized(self, value: bytes) -> bool:
        """``value`` (an Authorization header) is ``Bearer <token>`` (scheme in any case)."""
        scheme, _, credential = value.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credential, self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if not self.authorized(headers.get(b"authorization", b"")):
            await _unauthorized(send)
            return
        ending = headers.get(b"mcp-session-id") if scope.get("method") == "DELETE" else None
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, receive, watch if ending else send)
        if ending and 200 <= status < 300:
            owner = transport_owner(ending.decode("latin-1"))
            await anyio.to_thread.run_sync(self.on_end, owner)


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None,
         "error": {"code": -32001, "message": "missing or wrong bearer token"}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="toolscript"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(
    server: ToolscriptMCPServer, *, token: str, host: str = "127.0.0.1", path: str = "/mcp"
) -> ASGIApp:
    """The ASGI app serving ``server`` over Streamable HTTP behind a bearer token.

    Raises:
        ConfigurationError: the token is missing or shorter than 16 characters.
    """
    check_token(token)
    sessions = server.sessions
    if prefer_handshake not in server.middleware:
        server.middleware.append(prefer_handshake)
    app = server.streamable_http_app(
        streamable_http_path=path,
        session_idle_timeout=sessions.idle_ttl_s,
        host=host,
    )
    return _Gate(app, token, sessions.close_owner)


def serve_http(
    server: ToolscriptMCPServer, *, token: str, host: str = "127.0.0.1", port: int = 8000
) -> None:
    """Serve ``server`` on ``http://host:port/mcp`` until interrupted.

    Raises:
        ConfigurationError: the token is missing or too short.
    """
    import uvicorn

    app = http_app(server, token=token, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    uvicorn.Server(config).run()
